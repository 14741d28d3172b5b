/* SPDX-License-Identifier: MIT */
/*
 * The process's limits as the real seam reads them (os/process.c): what
 * getrlimit(2) and the capability set say, after this test changes them,
 * and what the doctor's items make of them; and a netdev's addresses as
 * the process sees them (os/netdev.c).
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "fakes.h"

/*
 * The library (linked in statically) calls getrlimit64 and syscall; this
 * program's definitions come first, so a test can make them fail. Off,
 * they pass the call on to the C library's.
 */
static int fail_getrlimit, fail_capget;

int getrlimit64(__rlimit_resource_t res, struct rlimit64 *r)
{
	int (*real)(__rlimit_resource_t, struct rlimit64 *);

	if (fail_getrlimit) {
		errno = fail_getrlimit;
		return -1;
	}
	*(void **)&real = dlsym(RTLD_NEXT, "getrlimit64");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	return real(res, r);
}

long syscall(long nr, ...)
{
	long (*real)(long, ...);
	long a[6];
	va_list ap;
	int i;

	if (nr == SYS_capget && fail_capget) {
		errno = fail_capget;
		return -1;
	}
	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	*(void **)&real = dlsym(RTLD_NEXT, "syscall");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Whether /proc/net/if_inet6 lists ::1 on lo (IPv6 may be off). */
static bool lo_has_ipv6(void)
{
	FILE *f = fopen("/proc/net/if_inet6", "r");
	char addr[40], dev[32];
	bool yes = false;

	if (!f)
		return false;
	while (fscanf(f, "%39s %*s %*s %*s %*s %31s", addr, dev) == 2)
		if (!strcmp(dev, "lo") &&
		    !strcmp(addr, "00000000000000000000000000000001"))
			yes = true;
	fclose(f);
	return yes;
}

/* Addresses one space apart, each one that inet_pton(3) takes whole. */
static bool addr_list_ok(const char *s)
{
	unsigned char bin[sizeof(struct in6_addr)];
	char w[INET6_ADDRSTRLEN];
	size_t k;

	if (!*s)
		return false;
	for (;;) {
		k = strcspn(s, " ");
		if (!k || k >= sizeof(w))
			return false;
		memcpy(w, s, k);
		w[k] = '\0';
		if (inet_pton(AF_INET, w, bin) != 1 &&
		    inet_pton(AF_INET6, w, bin) != 1)
			return false;
		if (!s[k])
			return true;
		s += k + 1;
	}
}

static int count_words(const char *s)
{
	int words = 0;

	for (; *s; s += strcspn(s, " "), s += *s == ' ')
		words++;
	return words;
}

/* How many IPv4 and IPv6 addresses getifaddrs(3) lists for lo, or -1. */
static int lo_ip_count(void)
{
	struct ifaddrs *all, *a;
	int count = 0;

	if (getifaddrs(&all))
		return -1;
	for (a = all; a; a = a->ifa_next)
		if (a->ifa_name && !strcmp(a->ifa_name, "lo") && a->ifa_addr &&
		    (a->ifa_addr->sa_family == AF_INET ||
		     a->ifa_addr->sa_family == AF_INET6))
			count++;
	freeifaddrs(all);
	return count;
}

static bool has_word(const char *s, const char *w)
{
	size_t k = strlen(w);

	for (; *s; s += strcspn(s, " "), s += *s == ' ')
		if (!strncmp(s, w, k) && (s[k] == ' ' || !s[k]))
			return true;
	return false;
}

/* The leading words of @full that gdr_if_addrs() keeps in @n bytes: a
 * word goes in while the bytes used so far, the word and two more (a
 * separator or the one kept for it, and the NUL) fit; a word that does
 * not fit ends the list, it is never cut. */
static void whole_prefix(const char *full, size_t n, char *out)
{
	size_t used = 0, k;

	out[0] = '\0';
	for (; *full; full += k, full += *full == ' ') {
		k = strcspn(full, " ");
		if (used + k + 2 > n)
			break;
		if (used)
			out[used++] = ' ';
		memcpy(out + used, full, k);
		out[used += k] = '\0';
	}
}

/* CapEff's CAP_IPC_LOCK bit (14) from /proc/self/status, or -1. */
static int status_ipc_lock(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long eff;
	char line[256];
	int v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			v = (int)((eff >> 14) & 1);
	fclose(f);
	return v;
}

/*
 * A host root whose proc is this machine's procfs (bind-mounted, in a
 * mount namespace of a child): the addresses are read when this process
 * is in the network namespace of that proc's init (a hostNetwork pod),
 * EXDEV otherwise. Skipped where a mount namespace cannot be made.
 */
static void host_network_case(void)
{
	char dir[] = "/tmp/gdr-hostnet-XXXXXX", proc[64];
	struct stat a, b, p;
	int status = 0, want;
	pid_t pid;

	if (stat("/proc/self/ns/net", &a) || stat("/proc/1/ns/net", &b) ||
	    stat("/proc/self/ns/pid", &p)) {
		printf("SKIP host network: /proc/1/ns/net unreadable\n");
		return;
	}
	/* This process's own procfs: its pid 1 is the host's init only in
	 * the initial pid namespace. */
	want = a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
			       p.st_ino == 0xEFFFFFFCU
		       ? 0
		       : EXDEV;
	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	CHECK_INT(mkdir(proc, 0700), 0);
	pid = fork();
	if (pid == 0) {
		char buf[256];

		if (unshare(CLONE_NEWNS) ||
		    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("/proc", proc, NULL, MS_BIND | MS_REC, NULL))
			_exit(77);
		if (gdr_open_root_set(dir))
			_exit(101);
		_exit(gdr_if_addrs("lo", buf, sizeof(buf)) == want ? 0 : 102);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	rmdir(proc);
	rmdir(dir);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		printf("SKIP host network: no mount namespace here\n");
	else
		CHECK_(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		       "host network (want %s): status %d",
		       want ? "EXDEV" : "0",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/*
 * A host root whose proc is a pid namespace's procfs, in the same network
 * namespace, read from a pid namespace that is not the initial one: @own
 * 1, the reader's own (a container's /proc under DIR: its pid 1 is the
 * container's init, so the network proves nothing: EXDEV); @own 0, a
 * child pid namespace's procfs seen from its parent (another pid
 * namespace's init in this network: the addresses are read). Skipped
 * where pid and mount namespaces cannot be made.
 */
/* The route to 127.0.0.1 (through lo): 0, or gdr_route_get's errno. */
static int route_to_lo(void)
{
	char dev[IF_NAMESIZE], src[64];
	int err =
		gdr_route_get("127.0.0.1", dev, sizeof(dev), src, sizeof(src));

	return err ? err : strcmp(dev, "lo") ? EIO : 0;
}

static int pidns_answer[2]; /* the code, through a pipe (see below) */

/* The code the case ends with, said through the pipe before the exit:
 * under valgrind a child's exit status counts its leaks, not its answer. */
static int pidns_say(int code)
{
	unsigned char c = (unsigned char)code;

	return write(pidns_answer[1], &c, 1) == 1 ? code : 106;
}

static int pidns_reader(int own, const char *dir, const char *proc)
{
	char buf[256], c = 0;
	int fds[2], st = 0;
	pid_t init;

	if (pipe(fds) || unshare(CLONE_NEWNS | CLONE_NEWPID) ||
	    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return pidns_say(77);
	init = fork(); /* pid 1 of the new pid namespace */
	if (init == 0) {
		if (mount("proc", proc, "proc", 0, NULL))
			_exit(pidns_say(77));
		if (own)
			_exit(pidns_say(gdr_open_root_set(dir) ? 101
					: gdr_if_addrs("lo", buf,
						       sizeof(buf)) == EXDEV &&
							route_to_lo() == EXDEV
						? 0
						: 102));
		if (write(fds[1], "m", 1) != 1)
			_exit(103);
		pause();
		_exit(0);
	}
	if (init < 0)
		return pidns_say(77);
	if (own) {
		waitpid(init, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 104;
	}
	/* Here, in the parent pid namespace, the child's procfs is mounted
	 * in the mount namespace both share. */
	if (read(fds[0], &c, 1) != 1) {
		kill(init, SIGKILL);
		return pidns_say(77);
	}
	st = gdr_open_root_set(dir) ? 101
	     : gdr_if_addrs("lo", buf, sizeof(buf)) == 0 &&
			     strstr(buf, "127.0.0.1") && route_to_lo() == 0
		     ? 0
		     : 102;
	kill(init, SIGKILL);
	waitpid(init, NULL, 0);
	return pidns_say(st);
}

static void host_network_pidns_case(int own)
{
	char dir[] = "/tmp/gdr-pidns-XXXXXX", proc[64];
	unsigned char said = 105;
	int status = 0;
	pid_t pid;

	if (pipe(pidns_answer)) {
		CHECK(0);
		return;
	}
	if (!mkdtemp(dir)) {
		CHECK(0);
		close(pidns_answer[0]);
		close(pidns_answer[1]);
		return;
	}
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	CHECK_INT(mkdir(proc, 0700), 0);
	pid = fork();
	if (pid == 0) {
		int st = 0;
		pid_t reader;

		/* The reader is pid 1 of a pid namespace of its own, which is
		 * not the initial one. */
		if (unshare(CLONE_NEWPID))
			_exit(pidns_say(77));
		reader = fork();
		if (reader == 0)
			_exit(pidns_reader(own, dir, proc));
		if (reader < 0)
			_exit(pidns_say(77));
		waitpid(reader, &st, 0);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 105);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	/* Every writer has ended: the first code said, else 105. */
	close(pidns_answer[1]);
	if (read(pidns_answer[0], &said, 1) != 1)
		said = 105;
	close(pidns_answer[0]);
	rmdir(proc);
	rmdir(dir);
	/* The answer said, not the exit status (valgrind's under it). */
	if (said == 77)
		printf("SKIP host network (%s pid namespace): no pid or mount "
		       "namespace here\n",
		       own ? "own" : "a child");
	else
		CHECK_(said == 0, "host network, %s: code %d (exit status %d)",
		       own ? "the root's proc is this pid namespace's (want "
			     "EXDEV)"
			   : "the root's proc is a child pid namespace's, same "
			     "network (want the addresses)",
		       said, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/*
 * A host root whose proc is a plain tree with proc/1/ns/net a link to
 * /proc/self/ns/net: the link is a file of DIR like any other, not the
 * kernel's namespace link, and is never followed from the real root (it
 * would make this namespace pass for the host's): EXDEV. Likewise a
 * relative link to ../../self/ns/net, and a plain file.
 */
static void host_network_fake_case(void)
{
	const char *targets[] = { "/proc/self/ns/net", "../../self/ns/net",
				  NULL };
	char dir[] = "/tmp/gdr-fakenet-XXXXXX", p[128], buf[256];
	struct stat st;
	unsigned int i;

	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	for (i = 0; i < 3; i++) {
		snprintf(p, sizeof(p),
			 "mkdir -p '%s/proc/1/ns' '%s/proc/self/ns'", dir, dir);
		CHECK_INT(system(p), 0);
		snprintf(p, sizeof(p), "%s/proc/1/ns/net", dir);
		unlink(p);
		if (targets[i])
			CHECK_INT(symlink(targets[i], p), 0);
		else
			CHECK_INT(close(open(p, O_CREAT | O_WRONLY, 0600)), 0);
		CHECK_INT(gdr_open_root_set(dir), 0);
		CHECK_INT(gdr_root_ns_stat("1/ns/net", &st), EXDEV);
		CHECK_INT(gdr_if_addrs("lo", buf, sizeof(buf)), EXDEV);
		CHECK_INT(gdr_open_root_set(NULL), 0);
	}
	/* Without a root the live addresses are read. */
	CHECK_INT(gdr_root_ns_stat("1/ns/net", &st), ENOENT);
	CHECK_INT(gdr_if_addrs("lo", buf, sizeof(buf)), 0);
	CHECK_HAS(buf, "127.0.0.1");
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	CHECK_INT(system(p), 0);
}

/*
 * Where /proc/self/ns/user cannot be read, the uid map tells (process.c's
 * fallback): a child in a mount namespace of its own puts a tmpfs on
 * /proc holding only self/uid_map (@map; NULL: none), and reports
 * user_ns + 1 as its exit status (@close_stdin: with fd 0 closed).
 * 77 where no mount namespace can be made.
 */
static int user_ns_from_map(const char *map, bool close_stdin)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct gdr_limits l;
		char why[128];
		FILE *f;

		if (unshare(CLONE_NEWNS) ||
		    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", "/proc", "tmpfs", 0, NULL) ||
		    mkdir("/proc/self", 0755))
			_exit(77);
		if (map) {
			f = fopen("/proc/self/uid_map", "w");
			if (!f || fputs(map, f) < 0 || fclose(f))
				_exit(99);
		}
		if (close_stdin)
			close(0);
		if (gdr_process_limits(&l, why, sizeof(why)))
			_exit(98);
		_exit(l.user_ns + 1);
	}
	if (pid < 0)
		return -1;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void uid_map_fallback(void)
{
	static const struct {
		const char *map;
		bool close_stdin;
		int user_ns;
	} cases[] = {
		{ "         0          0 4294967295\n", false, 0 },
		{ "         0          0 4294967295\n", true, 0 },
		{ "         0       1000          1\n", false, 1 },
		{ "         0          0 4294967294\n", false, 1 },
		{ "         0          0 4294967295\n"
		  "4294967295 4294967295          1\n",
		  false, 1 },
		{ "", false, -1 },
		{ "not a map\n", false, -1 },
		{ NULL, false, -1 },
	};
	const char *preload = getenv("LD_PRELOAD");
	unsigned int i;
	int got;

	/* Valgrind answers for /proc/self itself, not from the tmpfs put
	 * there: the plain and ASan runs check this. */
	if (preload && strstr(preload, "vgpreload")) {
		printf("SKIP the uid map fallback: under valgrind, which "
		       "answers for /proc/self itself\n");
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = user_ns_from_map(cases[i].map, cases[i].close_stdin);
		if (got == 77) {
			printf("SKIP the uid map fallback: no mount namespace "
			       "here\n");
			return;
		}
		CHECK_(got == cases[i].user_ns + 1,
		       "uid map %d (%s%s): user_ns %d, want %d", i,
		       cases[i].map ? "given" : "none",
		       cases[i].close_stdin ? ", stdin closed" : "", got - 1,
		       cases[i].user_ns);
	}
}

/* The other way to tell: the initial namespace's uid map is one line
 * mapping all 4294967295 ids from 0 to 0. */
static int uid_map_says_user_ns(void)
{
	unsigned long long a, b, n;
	char line[256];
	int lines = 0, init = 0;
	FILE *f = fopen("/proc/self/uid_map", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		lines++;
		init = sscanf(line, "%llu %llu %llu", &a, &b, &n) == 3 && !a &&
		       !b && n == 4294967295ULL;
	}
	fclose(f);
	return !(lines == 1 && init);
}

/* mlock(2) as the kernel answers it: ASan intercepts mlock() and makes
 * it a no-op that succeeds, which would hide the answer being tested. */
static long kernel_mlock(void *p, size_t len)
{
	return syscall(SYS_mlock, p, len);
}

/*
 * In a child in a new user namespace (where it holds every capability,
 * CAP_IPC_LOCK included) with a 64 KiB locked-memory limit: what the
 * library says, and what the kernel does with a 1 MiB mlock. In the
 * initial namespace, with CAP_IPC_LOCK (@cap: root here), the same mlock
 * goes through. Skipped where user namespaces cannot be made.
 */
static void in_user_namespace(bool cap)
{
	const size_t big = 1 << 20;
	struct rlimit low = { 65536, 65536 };
	void *buf = mmap(NULL, big, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int status = 0;
	pid_t pid;

	CHECK(buf != MAP_FAILED);
	if (buf == MAP_FAILED)
		return;
	pid = fork();
	if (pid == 0) {
		struct gdr_limits l;
		struct gdr_limits_view v;
		struct gdr_subject s = { 0 };
		struct gdr_eval e;
		char why[256];
		int bits = 0;

		if (setrlimit(RLIMIT_MEMLOCK, &low))
			_exit(100);
		if (unshare(CLONE_NEWUSER))
			_exit(77);
		if (gdr_process_limits(&l, why, sizeof(why)))
			_exit(101);
		bits |= (l.cap_ipc_lock == 1) << 0;
		bits |= (l.user_ns == 1) << 1;
		/* The kernel ignores the namespace's CAP_IPC_LOCK. */
		bits |= (kernel_mlock(buf, big) != 0) << 2;
		gdr_seam_install(NULL);
		gdr_limits_read(&v);
		s.limits = &v;
		gdr_check_eval(&gdr_check_memlock, &s, &e, false);
		bits |= (e.verdict == GDR_VERDICT_WRONG &&
			 strstr(e.value, "user namespace") &&
			 strstr(gdr_check_remedy(&gdr_check_memlock, &e),
				"does not lift it"))
			<< 3;
		_exit(bits == 15 ? 0 : 110 + bits);
	}
	CHECK(pid > 0);
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("SKIP in a user namespace: unshare(CLONE_NEWUSER) "
		       "failed here\n");
	} else {
		CHECK_(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		       "in a user namespace: status %d (110 + bits: 1 cap, 2 "
		       "user_ns, 4 mlock refused, 8 the doctor's words)",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	if (cap) {
		/* Here, in the initial namespace: the same limit, lifted. */
		struct rlimit old;

		CHECK_INT(getrlimit(RLIMIT_MEMLOCK, &old), 0);
		CHECK_INT(setrlimit(RLIMIT_MEMLOCK, &low), 0);
		CHECK_INT(kernel_mlock(buf, big), 0);
		syscall(SYS_munlock, buf, big);
		setrlimit(RLIMIT_MEMLOCK, &old);
	}
	munmap(buf, big);
}

/* In a network namespace of its own: lo up, and a unicast route to
 * 10.0.0.0/8 through it (as "ip link set lo up; ip route add 10.0.0.0/8
 * dev lo"). 0, or the errno of the step that failed. */
static int lo_with_a_route(void)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
		char attrs[64];
	} req = { 0 };
	union {
		struct nlmsghdr nh;
		char buf[1024];
	} ack;
	struct ifreq ifr = { 0 };
	struct rtattr *a;
	unsigned char dst[4] = { 10, 0, 0, 0 };
	int oif = (int)if_nametoindex("lo"), s, fd;
	ssize_t got;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || !oif)
		return errno ? errno : ENODEV;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) ||
	    (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr))) {
		close(s);
		return errno;
	}
	close(s);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return errno;
	req.nh.nlmsg_type = RTM_NEWROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK;
	req.rt.rtm_family = AF_INET;
	req.rt.rtm_dst_len = 8;
	req.rt.rtm_table = RT_TABLE_MAIN;
	req.rt.rtm_protocol = RTPROT_STATIC;
	req.rt.rtm_scope = RT_SCOPE_LINK;
	req.rt.rtm_type = RTN_UNICAST;
	a = (struct rtattr *)((char *)&req +
			      NLMSG_ALIGN(NLMSG_LENGTH(sizeof(req.rt))));
	a->rta_type = RTA_DST;
	a->rta_len = RTA_LENGTH(sizeof(dst));
	memcpy(RTA_DATA(a), dst, sizeof(dst));
	a = (struct rtattr *)((char *)a + RTA_ALIGN(a->rta_len));
	a->rta_type = RTA_OIF;
	a->rta_len = RTA_LENGTH(sizeof(oif));
	memcpy(RTA_DATA(a), &oif, sizeof(oif));
	req.nh.nlmsg_len = (unsigned int)((char *)a - (char *)&req) +
			   RTA_ALIGN(a->rta_len);
	if (send(fd, &req, req.nh.nlmsg_len, 0) != (ssize_t)req.nh.nlmsg_len) {
		close(fd);
		return EIO;
	}
	got = recv(fd, &ack, sizeof(ack), 0);
	close(fd);
	if (got < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)) ||
	    ack.nh.nlmsg_type != NLMSG_ERROR)
		return EIO;
	return -((const struct nlmsgerr *)NLMSG_DATA(&ack.nh))->error;
}

/*
 * The kernel's route to each of this namespace's own addresses is a local
 * one, through lo, from that address: IPv6 as IPv4 (a link-local address
 * needs a scope and is left out). Not an address: EINVAL. Under
 * --host-root, in a network namespace that is not the host's: EXDEV.
 */
static void route_cases(void)
{
	char dev[IF_NAMESIZE], src[INET6_ADDRSTRLEN], ip[INET6_ADDRSTRLEN];
	struct ifaddrs *all, *a;
	int v4 = 0, v6 = 0;

	if (getifaddrs(&all)) {
		CHECK(0);
		return;
	}
	for (a = all; a; a = a->ifa_next) {
		const void *where;
		/* (an interface that is down may have no local route) */
		int fam = a->ifa_addr && (a->ifa_flags & IFF_UP)
				  ? a->ifa_addr->sa_family
				  : AF_UNSPEC;

		if (fam == AF_INET) {
			where = &((struct sockaddr_in *)(void *)a->ifa_addr)
					 ->sin_addr;
		} else if (fam == AF_INET6) {
			const struct in6_addr *x =
				&((struct sockaddr_in6 *)(void *)a->ifa_addr)
					 ->sin6_addr;

			if (IN6_IS_ADDR_LINKLOCAL(x))
				continue;
			where = x;
		} else {
			continue;
		}
		if (!inet_ntop(fam, where, ip, sizeof(ip)))
			continue;
		dev[0] = src[0] = '\0';
		CHECK_(gdr_route_get(ip, dev, sizeof(dev), src, sizeof(src)) ==
				       0 &&
			       !strcmp(dev, "lo") && !strcmp(src, ip),
		       "the route to %s (on %s): through %s from %s", ip,
		       a->ifa_name, dev, src);
		if (fam == AF_INET)
			v4++;
		else
			v6++;
	}
	freeifaddrs(all);
	CHECK(v4 > 0);
	if (!v6)
		printf("no IPv6 address here: its route not checked\n");
	CHECK_INT(gdr_route_get("storage.example", dev, sizeof(dev), src,
				sizeof(src)),
		  EINVAL);
	/* In a network namespace of its own (only lo, down) the kernel
	 * has no route at all: its ENETUNREACH, positive as every errno. */
	{
		int fds[2], got[4] = { -1, -1, -1, -1 };
		pid_t pid;

		CHECK_INT(pipe(fds), 0);
		pid = fork();
		if (pid == 0) {
			/* -77: no namespace; -78: lo not set up. */
			int r[4] = { -77, -77, -77, -77 };

			if (!unshare(CLONE_NEWNET)) {
				r[0] = gdr_route_get("192.0.2.1", dev,
						     sizeof(dev), src,
						     sizeof(src));
				r[1] = r[2] = r[3] = -78;
				if (!lo_with_a_route()) {
					/* a broadcast route: not a way to a
					 * server */
					r[1] = gdr_route_get("127.255.255.255",
							     dev, sizeof(dev),
							     src, sizeof(src));
					/* a unicast route, through lo */
					r[2] = gdr_route_get("10.1.2.3", dev,
							     sizeof(dev), src,
							     sizeof(src));
					/* (no source: the kernel names none
					 * for this one) */
					r[3] = strcmp(dev, "lo") || src[0];
				}
			}
			_exit(write(fds[1], r, sizeof(r)) == sizeof(r) ? 0 : 1);
		}
		close(fds[1]);
		if (read(fds[0], got, sizeof(got)) != sizeof(got))
			got[0] = -1;
		close(fds[0]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		if (got[0] == -77) {
			printf("SKIP the route in an empty network namespace: "
			       "none can be made here\n");
		} else {
			/* the kernel's refusal, as a positive errno */
			CHECK_INT(got[0], ENETUNREACH);
			CHECK_INT(got[1], EHOSTUNREACH);
			CHECK_INT(got[2], 0);
			CHECK_INT(got[3], 0); /* through lo, no source */
		}
	}
	CHECK_INT(gdr_open_root_set("/tmp"), 0); /* no proc: not the host's */
	CHECK_INT(gdr_route_get("127.0.0.1", dev, sizeof(dev), src,
				sizeof(src)),
		  EXDEV);
	CHECK_INT(gdr_open_root_set(NULL), 0);
}

int main(void)
{
	struct rlimit nofile, memlock, lower;
	struct gdr_limits l;
	char why[96] = "";

	check_scope = "the real limits";
	CHECK_INT(getrlimit(RLIMIT_NOFILE, &nofile), 0);
	CHECK_INT(getrlimit(RLIMIT_MEMLOCK, &memlock), 0);
	/* Lower both soft limits (always allowed) to values the test
	 * knows. */
	lower = nofile;
	lower.rlim_cur = 1000 < nofile.rlim_cur ? 1000 : nofile.rlim_cur;
	CHECK_INT(setrlimit(RLIMIT_NOFILE, &lower), 0);
	lower = memlock;
	lower.rlim_cur = 65536 < memlock.rlim_cur ? 65536 : memlock.rlim_cur;
	CHECK_INT(setrlimit(RLIMIT_MEMLOCK, &lower), 0);
	CHECK_INT(gdr_process_limits(&l, why, sizeof(why)), 0);
	CHECK_INT(l.nofile_soft,
		  1000 < nofile.rlim_cur ? 1000 : nofile.rlim_cur);
	CHECK_INT(l.memlock_soft,
		  65536 < memlock.rlim_cur ? 65536 : memlock.rlim_cur);
	CHECK(l.nofile_hard == (nofile.rlim_max == RLIM_INFINITY
					? GDR_LIMIT_INFINITY
					: nofile.rlim_max));
	CHECK(l.memlock_hard == (memlock.rlim_max == RLIM_INFINITY
					 ? GDR_LIMIT_INFINITY
					 : memlock.rlim_max));
	CHECK_INT(l.cap_ipc_lock, status_ipc_lock());
	CHECK_INT(l.user_ns, uid_map_says_user_ns());
	printf("nofile %llu/%llu, memlock %llu/%llu, CAP_IPC_LOCK %d\n",
	       l.nofile_soft, l.nofile_hard, l.memlock_soft, l.memlock_hard,
	       l.cap_ipc_lock);

	check_scope = "the doctor's items from the real seam";
	{
		struct gdr_limits_view v;
		struct gdr_subject s = { 0 };
		struct gdr_eval e;

		gdr_seam_install(NULL);
		gdr_limits_read(&v);
		CHECK_INT(v.err, 0);
		s.limits = &v;
		gdr_check_eval(&gdr_check_nofile, &s, &e, false);
		CHECK_INT(e.verdict, GDR_VERDICT_WRONG); /* 1000 < 65536 */
		CHECK_HAS(e.value, "1000 (hard ");
		gdr_check_eval(&gdr_check_memlock, &s, &e, false);
		if (l.cap_ipc_lock == 1) {
			CHECK_INT(e.verdict, GDR_VERDICT_OK);
			CHECK_HAS(e.value, "not applied: the process has "
					   "CAP_IPC_LOCK");
		} else {
			CHECK_INT(e.verdict, GDR_VERDICT_WRONG);
			CHECK_HAS(e.value, "64 KiB (hard ");
		}
	}

	check_scope = "the user namespace from the uid map (no ns/user)";
	uid_map_fallback();

	check_scope =
		"CAP_IPC_LOCK in a user namespace (the kernel's own answer)";
	in_user_namespace(l.cap_ipc_lock == 1 && l.user_ns == 0);

	check_scope = "netdev addresses (os/netdev.c)";
	{
		/* Under --host-root this network namespace is the
		 * container's: even lo, which every namespace has, is not
		 * the host's interface of that name. */
		char buf[256];

		CHECK_INT(gdr_open_root_set("/"), 0); /* "/" is no root */
		CHECK_INT(gdr_if_addrs("lo", buf, sizeof(buf)), 0);
		CHECK_INT(gdr_open_root_set("/tmp"), 0);
		CHECK_INT(gdr_if_addrs("lo", buf, sizeof(buf)), EXDEV);
		CHECK_STR(buf, "");
		/* readlink under a root says what readlink(2) says: EINVAL
		 * for what is not a link, ENOENT for nothing, EXDEV for a
		 * path outside the root. */
		{
			char f[] = "/tmp/gdr-readlink-XXXXXX";
			int fd = mkstemp(f);

			CHECK(fd >= 0);
			errno = 0;
			CHECK(gdr_readlink_node(f, buf, sizeof(buf)) < 0 &&
			      errno == EINVAL);
			errno = 0;
			CHECK(gdr_readlink_node("/tmp/gdr-no-such-name", buf,
						sizeof(buf)) < 0 &&
			      errno == ENOENT);
			errno = 0;
			CHECK(gdr_readlink_node("/etc/hostname", buf,
						sizeof(buf)) < 0 &&
			      errno == EXDEV);
			if (fd >= 0) {
				close(fd);
				unlink(f);
			}
		}
		CHECK_INT(gdr_open_root_set(NULL), 0);
		host_network_case();
		host_network_fake_case();
		host_network_pidns_case(1);
		host_network_pidns_case(0);
	}
	check_scope = "the route to an address (os/route.c)";
	route_cases();
	{
		char addrs[4096], want[sizeof(addrs)], got[sizeof(addrs)];
		size_t n;

		/* lo may carry more than its two standard addresses (an
		 * administrator's 127.0.0.2): the list is checked by its form,
		 * its length and the two it always has, not as one string. */
		CHECK_INT(gdr_if_addrs("lo", addrs, sizeof(addrs)), 0);
		CHECK(addr_list_ok(addrs));
		CHECK_INT(count_words(addrs), lo_ip_count());
		CHECK(has_word(addrs, "127.0.0.1"));
		if (lo_has_ipv6())
			CHECK(has_word(addrs, "::1"));
		else
			printf("no ::1 on lo here: IPv6 not checked\n");
		/* Small buffers: whole addresses only, each written where it
		 * and its NUL fit with room for the separator the next would
		 * need (12: "127.0.0.1" and no room for " ::1"; 11: exactly
		 * one; 10: none, when 127.0.0.1 comes first). */
		for (n = 1; n <= strlen(addrs) + 2; n++) {
			whole_prefix(addrs, n, want);
			/* Not all of them: ENOBUFS, never a silent cut. */
			CHECK_INT(gdr_if_addrs("lo", got, n),
				  n > strlen(addrs) ? 0 : ENOBUFS);
			CHECK_STR(got, want);
		}
		/* Not in this network namespace: not "no addresses". */
		CHECK_INT(gdr_if_addrs("gdr-no-such0", addrs, sizeof(addrs)),
			  ENODEV);
		CHECK_STR(addrs, "");
	}

	check_scope = "getrlimit fails";
	memset(&l, 0x5a, sizeof(l));
	fail_getrlimit = EPERM;
	CHECK_INT(gdr_process_limits(&l, why, sizeof(why)), EPERM);
	fail_getrlimit = 0;
	CHECK_STR(why, "getrlimit failed: EPERM");
	CHECK_INT(l.memlock_soft, 0); /* nothing half-read */

	check_scope = "capget fails: the capability is unknown, not absent";
	fail_capget = EPERM;
	CHECK_INT(gdr_process_limits(&l, why, sizeof(why)), 0);
	fail_capget = 0;
	CHECK_INT(l.cap_ipc_lock, -1);
	CHECK_INT(l.nofile_soft,
		  1000 < nofile.rlim_cur ? 1000 : nofile.rlim_cur);

	check_scope = "restored";
	CHECK_INT(setrlimit(RLIMIT_NOFILE, &nofile) == 0 || errno == EPERM, 1);
	return check_summary("limits");
}
