/* SPDX-License-Identifier: MIT */
/*
 * The calling process's limits that registrations run into: the
 * locked-memory limit (host registrations pin pages against it unless the
 * process holds CAP_IPC_LOCK) and the open-files limit (each dma-buf
 * registration holds an fd while it is made; a transport may keep one per
 * MR). In a container these are the container's, not the host's.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os.h"

static unsigned long long limit_of(rlim_t v)
{
	return v == RLIM_INFINITY ? GDR_LIMIT_INFINITY : (unsigned long long)v;
}

/* The inode of the initial user namespace (PROC_USER_INIT_INO), the same
 * on every kernel since 3.8. */
#define USER_NS_INIT_INO 0xEFFFFFFDUL

/*
 * Whether this process is in a user namespace other than the initial one:
 * the kernel checks CAP_IPC_LOCK against the initial namespace when it
 * pins memory (capable(), not ns_capable()), so a capability granted
 * inside another namespace lifts no limit. The namespace's inode, else
 * the uid map (the initial namespace maps all 4294967295 ids from 0 to
 * 0). 1, 0, or -1 when neither can be read.
 */
static int in_user_ns(void)
{
	unsigned long long inside, outside, count;
	char text[128], *nl;
	struct stat st;
	ssize_t r;
	int fd;

	if (!stat("/proc/self/ns/user", &st))
		return st.st_ino != USER_NS_INIT_INO;
	fd = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (r <= 0)
		return -1;
	text[r] = '\0';
	if (sscanf(text, "%llu %llu %llu", &inside, &outside, &count) != 3)
		return -1;
	nl = strchr(text, '\n');
	/* One line mapping everything: the initial namespace. */
	return !(inside == 0 && outside == 0 && count == 4294967295ULL &&
		 (!nl || !nl[1]));
}

int gdr_process_limits(struct gdr_limits *l, char *why, size_t n)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	struct rlimit memlock, nofile;

	memset(l, 0, sizeof(*l));
	if (getrlimit(RLIMIT_MEMLOCK, &memlock) ||
	    getrlimit(RLIMIT_NOFILE, &nofile)) {
		int err = errno;

		gdr_fmt(why, n, "getrlimit failed: %s", gdr_errno_name(err));
		return err;
	}
	l->memlock_soft = limit_of(memlock.rlim_cur);
	l->memlock_hard = limit_of(memlock.rlim_max);
	l->nofile_soft = limit_of(nofile.rlim_cur);
	l->nofile_hard = limit_of(nofile.rlim_max);
	/* The effective set of this thread (threads normally share it). */
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		l->cap_ipc_lock = -1;
	else
		l->cap_ipc_lock = (data[CAP_IPC_LOCK / 32].effective >>
				   (CAP_IPC_LOCK % 32)) &
				  1;
	l->user_ns = in_user_ns();
	return 0;
}
