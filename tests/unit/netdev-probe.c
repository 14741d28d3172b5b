/* SPDX-License-Identifier: MIT */
/*
 * lib/os/netdev.c called directly, for test-netdev.sh (which sets up the
 * namespaces and interfaces):
 *   netdev-probe addrs DEV   prints gdr_if_addrs' errno and addresses
 *   netdev-probe host ROOT   prints 1 or 0: gdr_host_network() under
 *                            --host-root ROOT
 *   netdev-probe nofd DEV    gdr_if_addrs with no fd left to open (its
 *                            getifaddrs fails): prints its errno
 *   netdev-probe leak DEV    prints the bytes in use that 100 more calls
 *                            of gdr_if_addrs left (0: nothing kept)
 */
#include <malloc.h>
#include <stdio.h>
#include <sys/resource.h>
#include <string.h>

#include "os.h"

int main(int argc, char **argv)
{
	char out[256];
	int err;

	if (argc == 3 && !strcmp(argv[1], "addrs")) {
		err = gdr_if_addrs(argv[2], out, sizeof(out));
		printf("%d %s\n", err, err ? "" : out);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "nofd")) {
		struct rlimit was, three;

		/* The soft limit only, and put back after: a sanitizer's
		 * exit still opens files. */
		if (getrlimit(RLIMIT_NOFILE, &was))
			return 2;
		three = was;
		three.rlim_cur = 3;
		if (setrlimit(RLIMIT_NOFILE, &three))
			return 2;
		err = gdr_if_addrs(argv[2], out, sizeof(out));
		if (setrlimit(RLIMIT_NOFILE, &was))
			return 2;
		printf("%d\n", err);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "leak")) {
		size_t before;
		int i;

		gdr_if_addrs(argv[2], out, sizeof(out)); /* first-use state */
		before = mallinfo2().uordblks;
		for (i = 0; i < 100; i++)
			gdr_if_addrs(argv[2], out, sizeof(out));
		printf("%zd\n", (ssize_t)(mallinfo2().uordblks - before));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "host")) {
		err = gdr_open_root_set(argv[2]);
		if (err) {
			fprintf(stderr, "gdr_open_root_set(%s): %s\n", argv[2],
				strerror(err));
			return 2;
		}
		printf("%d\n", gdr_host_network() ? 1 : 0);
		return 0;
	}
	fprintf(stderr,
		"usage: netdev-probe addrs|nofd|leak DEV | host ROOT\n");
	return 2;
}
