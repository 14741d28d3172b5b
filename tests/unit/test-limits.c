/* SPDX-License-Identifier: MIT */
/*
 * The process's limits as the real seam reads them (os/process.c): what
 * getrlimit(2) and the capability set say, after this test changes them,
 * and what the doctor's items make of them; and a netdev's addresses as
 * the process sees them (os/netdev.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "check.h"
#include "fakes.h"

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

	check_scope = "netdev addresses (os/netdev.c)";
	{
		char addrs[256];

		CHECK_INT(gdr_if_addrs("lo", addrs, sizeof(addrs)), 0);
		CHECK_HAS(addrs, "127.0.0.1");
		/* Not in this network namespace: not "no addresses". */
		CHECK_INT(gdr_if_addrs("gdr-no-such0", addrs, sizeof(addrs)),
			  ENODEV);
		CHECK_STR(addrs, "");
	}

	check_scope = "restored";
	CHECK_INT(setrlimit(RLIMIT_NOFILE, &nofile) == 0 || errno == EPERM, 1);
	return check_summary("limits");
}
