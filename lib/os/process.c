/* SPDX-License-Identifier: MIT */
/*
 * The calling process's limits that registrations run into: the
 * locked-memory limit (host registrations pin pages against it unless the
 * process holds CAP_IPC_LOCK) and the open-files limit (each dma-buf
 * registration holds an fd while it is made; a transport may keep one per
 * MR). In a container these are the container's, not the host's.
 */
#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os.h"

static unsigned long long limit_of(rlim_t v)
{
	return v == RLIM_INFINITY ? GDR_LIMIT_INFINITY : (unsigned long long)v;
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
	return 0;
}
