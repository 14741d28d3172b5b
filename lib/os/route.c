/* SPDX-License-Identifier: MIT */
/*
 * Which network device the kernel sends to an address through, and from
 * which local address ("ip route get ADDR"): one RTM_GETROUTE request on
 * a netlink socket. The doctor asks it for a storage server (the NFS
 * server's addr=, an NVMe-oF target's traddr=) to name the RDMA device
 * that carries the mount.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "os.h"

struct request {
	struct nlmsghdr nh;
	struct rtmsg rt;
	char attrs[64];
};

/* The answer's device and source address from its attributes. */
static int answer(const struct nlmsghdr *nh, size_t len, int family, char *dev,
		  size_t n, char *src, size_t sn)
{
	for (; NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len)) {
		const struct rtmsg *rt;
		const struct rtattr *a;
		int alen, oif = 0;
		char name[IF_NAMESIZE];

		if (nh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return EIO;
			return e->error ? -e->error : EIO;
		}
		if (nh->nlmsg_type != RTM_NEWROUTE ||
		    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)))
			continue;
		rt = NLMSG_DATA(nh);
		alen = (int)RTM_PAYLOAD(nh);
		for (a = RTM_RTA(rt); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
			if (a->rta_type == RTA_OIF &&
			    RTA_PAYLOAD(a) >= sizeof(int))
				memcpy(&oif, RTA_DATA(a), sizeof(int));
			else if (a->rta_type == RTA_PREFSRC &&
				 RTA_PAYLOAD(a) ==
					 (family == AF_INET ? 4u : 16u))
				inet_ntop(family, RTA_DATA(a), src,
					  (socklen_t)sn);
		}
		if (rt->rtm_type != RTN_UNICAST && rt->rtm_type != RTN_LOCAL)
			return EHOSTUNREACH;
		if (!oif || !if_indextoname((unsigned int)oif, name))
			return ENODEV;
		gdr_fmt(dev, n, "%s", name);
		return 0;
	}
	return EIO;
}

int gdr_route_get(const char *addr, char *dev, size_t n, char *src, size_t sn)
{
	struct request req;
	unsigned char dst[16];
	union {
		struct nlmsghdr nh;
		char buf[8192];
	} reply;
	struct timeval tv = { .tv_sec = 2 };
	struct rtattr *a;
	int family, fd, err;
	ssize_t got;

	dev[0] = '\0';
	if (sn)
		src[0] = '\0';
	family = inet_pton(AF_INET, addr, dst) == 1    ? AF_INET
		 : inet_pton(AF_INET6, addr, dst) == 1 ? AF_INET6
						       : 0;
	if (!family)
		return EINVAL;
	/* Under --host-root the routes here are the container's unless it
	 * shares the host's network namespace. */
	if (gdr_open_root()[0] && !gdr_host_network())
		return EXDEV;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = 1;
	req.rt.rtm_family = (unsigned char)family;
	req.rt.rtm_dst_len = family == AF_INET ? 32 : 128;
	a = (struct rtattr *)((char *)&req +
			      NLMSG_ALIGN(NLMSG_LENGTH(sizeof(req.rt))));
	a->rta_type = RTA_DST;
	a->rta_len = (unsigned short)RTA_LENGTH(family == AF_INET ? 4 : 16);
	memcpy(RTA_DATA(a), dst, family == AF_INET ? 4 : 16);
	req.nh.nlmsg_len = NLMSG_ALIGN(NLMSG_LENGTH(sizeof(req.rt))) +
			   RTA_ALIGN(a->rta_len);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return errno ? errno : EIO;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    send(fd, &req, req.nh.nlmsg_len, 0) != (ssize_t)req.nh.nlmsg_len) {
		err = errno ? errno : EIO;
		close(fd);
		return err;
	}
	do
		got = recv(fd, &reply, sizeof(reply), 0);
	while (got < 0 && errno == EINTR);
	err = got < 0 ? (errno == EAGAIN ? ETIMEDOUT : errno) : 0;
	close(fd);
	if (err)
		return err;
	return answer(&reply.nh, (size_t)got, family, dev, n, src, sn);
}
