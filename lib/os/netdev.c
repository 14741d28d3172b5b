/* SPDX-License-Identifier: MIT */
/*
 * The IP addresses of a network device (an RDMA device's, for RoCE or
 * rxe), for checking GPUDirect Storage's rdma_dev_addr_list against the
 * node. sysfs does not hold IPv4 addresses: getifaddrs(3) does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/stat.h>

#include "os.h"

/* The initial pid namespace's inode number (include/linux/proc_ns.h). */
#define PROC_PID_INIT_INO 0xEFFFFFFCU

static bool same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * This process's network namespace is the one the host's init is in: the
 * root's proc/1. That pid 1 is the host's init only where the root's proc
 * is not this process's own pid namespace's procfs (whose pid 1 is this
 * container's init, in this network by construction), unless that pid
 * namespace is the initial one (a hostPID pod: then it is the host's).
 */
bool gdr_host_network(void)
{
	struct stat my_net, my_pid, net, pid;

	if (stat("/proc/self/ns/net", &my_net) ||
	    stat("/proc/self/ns/pid", &my_pid) ||
	    gdr_root_ns_stat("1/ns/net", &net) ||
	    gdr_root_ns_stat("1/ns/pid", &pid) || !same(&my_net, &net))
		return false;
	return !same(&my_pid, &pid) || my_pid.st_ino == PROC_PID_INIT_INO;
}

int gdr_if_addrs(const char *dev, char *out, size_t n)
{
	struct ifaddrs *all, *a;
	char ip[INET6_ADDRSTRLEN];
	size_t used = 0;
	bool seen = false, cut = false;

	if (n)
		out[0] = '\0';
	/* Under --host-root this network namespace is the container's (an
	 * interface of the host's name here is not the host's), unless it is
	 * the host's own (hostNetwork: the same namespace as the host's
	 * init). */
	if (gdr_open_root()[0] && !gdr_host_network())
		return EXDEV;
	if (getifaddrs(&all))
		return errno ? errno : EIO;
	for (a = all; a; a = a->ifa_next) {
		const void *where;

		if (!a->ifa_name || strcmp(a->ifa_name, dev))
			continue;
		seen = true; /* the interface is in this network namespace */
		if (!a->ifa_addr)
			continue;
		if (a->ifa_addr->sa_family == AF_INET)
			where = &((struct sockaddr_in *)(void *)a->ifa_addr)
					 ->sin_addr;
		else if (a->ifa_addr->sa_family == AF_INET6)
			where = &((struct sockaddr_in6 *)(void *)a->ifa_addr)
					 ->sin6_addr;
		else
			continue;
		if (!inet_ntop(a->ifa_addr->sa_family, where, ip, sizeof(ip)))
			continue;
		if (used + strlen(ip) + 2 > n) {
			cut = true; /* whole leading addresses only */
			break;
		}
		gdr_fmt(out + used, n - used, "%s%s", used ? " " : "", ip);
		used = strlen(out);
	}
	freeifaddrs(all);
	/* Not here: another network namespace (a container), or gone. */
	return !seen ? ENODEV : cut ? ENOBUFS : 0;
}
