/* SPDX-License-Identifier: MIT */
/*
 * gdr-info: the GPUDirect doctor. Is GPUDirect RDMA usable on this node,
 * and if not, what to change. Prints libgpudirect's report for every RDMA
 * device (every prerequisite with its observed value, verdict and remedy),
 * optionally proves it with a loopback RDMA write, and captures or replays
 * snapshots of a node for support.
 *
 *   gdr-info [--json] [-d DEV] [--self-test] [--storage PATH]...
 *            [--capture FILE] [--host-root DIR]
 *            [--nfd FILE [--nfd-expiry SECONDS]]
 *   gdr-info [--json] [-d DEV] [--nfd FILE] --root DIR | --from FILE
 *
 * Exit status: 0 usable on at least one GPU x RDMA device pair (and the
 * self-test, when asked, passed, and each --storage path proved read and
 * written directly), 1 not, 2 internal error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gpudirect.h>
#include <gpudirect-private.h>

#include "count.h"
#include "devmem.h"
#include "items.h"
#include "loopback.h"
#include "nfd.h"
#include "replace.h"
#include "snapshot.h"
#include "storage.h"

#define SELFTEST_LEN (1u << 20)

/* The self-tests run, for the labels. */
/*
 * A message to stderr. Its words may come from input (device names, a
 * snapshot's, the environment): no control byte reaches the terminal (an
 * escape sequence in a name: C0, DEL, C1 raw or UTF-8-encoded): every
 * byte outside printable ASCII is written as \xNN, the line's own
 * newlines kept.
 */
static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
	char msg[4096], out[4 * sizeof(msg)];
	size_t o = 0, i;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (i = 0; msg[i] && o + 5 < sizeof(out); i++) {
		unsigned char c = (unsigned char)msg[i];

		if ((c < 0x20 && c != '\n') || c >= 0x7f)
			o += (size_t)snprintf(out + o, sizeof(out) - o,
					      "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	fputs(out, stderr);
}

static struct nfd_selftest tests[NFD_MAX_NICS * 4];
static unsigned int num_tests;

static void remember(const char *nic, int gpu, int ok)
{
	if (num_tests >= sizeof(tests) / sizeof(tests[0]))
		return;
	snprintf(tests[num_tests].nic, sizeof(tests[num_tests].nic), "%s", nic);
	tests[num_tests].gpu = gpu;
	tests[num_tests++].ok = ok;
}

/* Register two buffers in @mem on @ctx, write one to the other, compare. */
static int self_test_one(struct ibv_context *ctx, const char *mem)
{
	const char *name = ibv_get_device_name(ctx->device);
	struct gdr_reg_info info;
	struct devmem a = { 0 }, b = { 0 };
	struct ibv_mr *ma = NULL, *mb = NULL;
	unsigned char *pat = malloc(SELFTEST_LEN), *back = malloc(SELFTEST_LEN);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char err[256] = "";
	size_t i, wrong = 0;
	int ok = 0;

	if (!pat || !back || !pd) {
		snprintf(err, sizeof(err),
			 "out of memory or ibv_alloc_pd failed");
		goto out;
	}
	if (devmem_alloc(mem, SELFTEST_LEN, &a, err, sizeof(err)) ||
	    devmem_alloc(mem, SELFTEST_LEN, &b, err, sizeof(err)))
		goto out;
	for (i = 0; i < SELFTEST_LEN; i++) {
		pat[i] = (unsigned char)(i * 131 + 17);
		back[i] = 0;
	}
	if (devmem_write(&a, 0, pat, SELFTEST_LEN) ||
	    devmem_write(&b, 0, back, SELFTEST_LEN)) {
		snprintf(err, sizeof(err), "cannot fill the buffers");
		goto out;
	}
	memset(&info, 0, sizeof(info));
	ma = gdr_register_ex(pd, a.ptr, SELFTEST_LEN, NULL, &info,
			     sizeof(info));
	mb = ma ? gdr_register(pd, b.ptr, SELFTEST_LEN) : NULL;
	if (!ma || !mb) {
		snprintf(err, sizeof(err), "%s", gdr_last_error());
		goto out;
	}
	if (loopback_write(pd, ma, mb, SELFTEST_LEN, err, sizeof(err)))
		goto out;
	if (devmem_read(&b, 0, back, SELFTEST_LEN)) {
		snprintf(err, sizeof(err),
			 "cannot read the target buffer back");
		goto out;
	}
	for (i = 0; i < SELFTEST_LEN; i++)
		wrong += back[i] != pat[i];
	if (wrong)
		snprintf(err, sizeof(err), "%zu of %u bytes differ", wrong,
			 SELFTEST_LEN);
	ok = !wrong;
out:
	printf("self-test %s x %s: %s", name, mem, ok ? "ok" : "FAILED");
	if (ma)
		printf(", %s path", gdr_path_str(info.path));
	if (ok)
		printf(", %u bytes written by RDMA and checked\n",
		       SELFTEST_LEN);
	else
		printf(": %s\n", err);
	if (ma)
		gdr_deregister(ma);
	if (mb)
		gdr_deregister(mb);
	devmem_free(&a);
	devmem_free(&b);
	if (pd)
		ibv_dealloc_pd(pd);
	free(pat);
	free(back);
	return ok;
}

/* Each usable GPU x device pair; host memory where there is no GPU. */
static int self_test(const struct gdr_report *r, struct ibv_context **ctxs,
		     unsigned int n)
{
	int num_gpus = report_gpus(r);
	unsigned int i, tried = 0, passed = 0;
	char key[32], mem[32];
	int g;

	printf("\n");
	for (i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(ctxs[i]->device);

		if (num_gpus == 0) {
			int ok = self_test_one(ctxs[i], "host");

			tried++;
			passed += ok;
			remember(name, -1, ok);
			continue;
		}
		for (g = 0; g < num_gpus; g++) {
			const char *path;
			int ok;

			snprintf(key, sizeof(key), "path_gpu%d", g);
			path = report_value(r, GDR_REPORT_SCOPE_RDMA_DEVICE,
					    name, key, NULL);
			if (!path || !strcmp(path, "none")) {
				printf("self-test %s x gpu%d: skipped, no path "
				       "(see the report)\n",
				       name, g);
				continue;
			}
			snprintf(mem, sizeof(mem), "cuda:%d", g);
			tried++;
			ok = self_test_one(ctxs[i], mem);
			passed += ok;
			remember(name, g, ok);
		}
	}
	if (!tried)
		printf("self-test: nothing to test (no usable pair)\n");
	return tried && passed == tried;
}

/* After the @nctx devices of the report in @ctxs (room for @nall), the
 * other devices of @all. */
static void capture_order(struct ibv_context **ctxs, unsigned int nctx,
			  struct ibv_context **all, unsigned int nall)
{
	unsigned int i, j, n = nctx;

	for (i = 0; i < nall; i++) {
		for (j = 0; j < nctx && ctxs[j] != all[i]; j++)
			;
		if (j == nctx)
			ctxs[n++] = all[i];
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "self-test", no_argument, NULL, 's' },
		{ "capture", required_argument, NULL, 'c' },
		{ "root", required_argument, NULL, 'r' },
		{ "from", required_argument, NULL, 'f' },
		{ "host-root", required_argument, NULL, 'H' },
		{ "nfd", required_argument, NULL, 'N' },
		{ "nfd-expiry", required_argument, NULL, 'E' },
		{ "storage", required_argument, NULL, 'S' },
		{ "storage-timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *want = NULL, *capture = NULL, *root = NULL, *from = NULL;
	const char *host_root = NULL, *nfd = NULL;
	const char *storage[GDR_STORAGE_MAX_PATHS];
	static struct gdr_storage checked;
	const struct gdr_storage *st = NULL;
	unsigned int nstorage = 0, step_s = 0;
	long expiry = 3600;
	unsigned long long v;
	enum gdr_report_format fmt = GDR_REPORT_TEXT;
	struct ibv_context **ctxs = NULL, **all = NULL;
	struct ibv_device **list = NULL;
	struct gdr_report *report;
	unsigned int nctx = 0, nall = 0, i;
	char err[512] = "";
	int n = 0, c, ret, selftest = 0, usable;

	while ((c = getopt_long(argc, argv, "jd:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': fmt = GDR_REPORT_JSON; break;
		case 'd': want = optarg; break;
		case 's': selftest = 1; break;
		case 'c': capture = optarg; break;
		case 'r': root = optarg; break;
		case 'f': from = optarg; break;
		case 'H': host_root = optarg; break;
		case 'N': nfd = optarg; break;
		case 'S':
			if (nstorage == GDR_STORAGE_MAX_PATHS) {
				warn("gdr-info: --storage: at most %d paths\n",
				     GDR_STORAGE_MAX_PATHS);
				return 2;
			}
			storage[nstorage++] = optarg;
			break;
		case 'T':
			if (number_parse(optarg, 1, 3600, &v)) {
				warn("gdr-info: --storage-timeout takes seconds, "
				     "1 to 3600\n");
				return 2;
			}
			step_s = (unsigned int)v;
			break;
		case 'E':
			if (number_parse(optarg, 60, 366ULL * 24 * 3600, &v)) {
				warn("gdr-info: --nfd-expiry takes seconds, "
				     "60 to 31622400\n");
				return 2;
			}
			expiry = (long)v;
			break;
		default:
			warn("usage: %s [--json] [-d DEVICE] [--self-test] "
			     "[--storage PATH]... [--storage-timeout S]\n"
			     "       [--capture FILE] [--host-root DIR]\n"
			     "       [--nfd FILE [--nfd-expiry SECONDS]] "
			     "[--root DIR | --from FILE]\n",
			     argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if ((root || from) && (selftest || capture || host_root || nstorage)) {
		warn("gdr-info: --root/--from replay a snapshot; "
		     "--self-test, --storage, --capture and --host-root need "
		     "the live node\n");
		return 2;
	}
	/* cuFile writes its log to the working directory unless told
	 * otherwise: nothing may be written outside the paths checked. */
	if (nstorage && !getenv("CUFILE_LOGFILE_PATH") &&
	    setenv("CUFILE_LOGFILE_PATH", "/dev/null", 1)) {
		perror("gdr-info: setenv");
		return 2;
	}
	/* An output that is not a regular file or a new name is refused
	 * before anything is read or written. */
	{
		const char *outs[] = { capture, nfd };
		const char *opt[] = { "--capture", "--nfd" };
		int exists;

		for (i = 0; i < 2; i++)
			if (outs[i] &&
			    replace_check(outs[i], &exists, err, sizeof(err))) {
				warn("gdr-info: %s: %s\n", opt[i], err);
				return 2;
			}
	}
	if (host_root &&
	    gdr_private_host_root(host_root, err, sizeof(err)) != 0) {
		warn("gdr-info: --host-root: %s\n", err);
		return 2;
	}

	if (root && from) {
		warn("gdr-info: --root and --from: one snapshot at "
		     "a time\n");
		return 2;
	}
	if (root || from) {
		/* Read into memory; nothing is extracted or written. */
		if (snapshot_replay(from ? from : root, !from, &all, &nall, err,
				    sizeof(err))) {
			warn("gdr-info: %s\n", err);
			snapshot_end();
			return 2;
		}
		root = from ? from : root;
	} else {
		if (capture)
			snapshot_record();
		list = ibv_get_device_list(&n);
		all = n > 0 ? calloc((size_t)n, sizeof(*all)) : NULL;
		for (c = 0; c < n && all; c++) {
			all[nall] = ibv_open_device(list[c]);
			if (!all[nall])
				warn("gdr-info: cannot open %s: %s\n",
				     ibv_get_device_name(list[c]),
				     strerror(errno));
			else
				nall++;
		}
	}
	ctxs = calloc(nall + 1, sizeof(*ctxs));
	if (!ctxs) {
		perror("gdr-info");
		ret = 2;
		goto out;
	}
	for (i = 0; i < nall; i++)
		if (!want || !strcmp(ibv_get_device_name(all[i]->device), want))
			ctxs[nctx++] = all[i];
	if (want && !nctx)
		warn("gdr-info: RDMA device %s not found\n", want);

	/* With -d the report shows that device; its GPUs' nearest are
	 * still ranked among every device. */
	report = want ? gdr_private_report_create(ctxs, nctx, all, nall)
		      : gdr_report_create(ctxs, nctx, 0);
	if (!report) {
		warn("gdr-info: %s\n", gdr_last_error());
		ret = 2;
		goto out;
	}
	if (nstorage) {
		if (storage_check(&checked, storage, nstorage, step_s * 1000,
				  err, sizeof(err))) {
			warn("gdr-info: --storage: %s\n", err);
			gdr_report_destroy(report);
			ret = 2;
			goto out;
		}
		st = &checked;
	} else if (root) {
		st = snapshot_storage();
	}
	if (st && st->num_paths &&
	    gdr_private_storage_report(report, st, all, nall)) {
		warn("gdr-info: --storage: out of memory\n");
		gdr_report_destroy(report);
		ret = 2;
		goto out;
	}
	usable = gdr_report_usable(report);
	if (st && st->num_paths && !storage_proved(report))
		usable = 0;
	ret = gdr_report_print(report, stdout, fmt) ? 2 : usable ? 0 : 1;
	if (ret != 2 && capture) {
		/* Every device, as the ranking of the GPUs' nearest saw
		 * them (a replay with the same -d gives the same report), the
		 * -d device first: a snapshot keeps the first
		 * GDR_MODEL_MAX_NICS. */
		capture_order(ctxs, nctx, all, nall);
		if (snapshot_capture(capture, ctxs, nall, host_root, st, err,
				     sizeof(err))) {
			warn("gdr-info: %s\n", err);
			ret = 2;
		} else {
			warn("gdr-info: snapshot written to %s (%s)\n", capture,
			     err);
		}
	}
	if (ret != 2 && selftest && !self_test(report, ctxs, nctx) && ret == 0)
		ret = 1;
	if (ret != 2 && nfd) {
		char *text;
		size_t len;

		if (nfd_render(report, tests, num_tests, selftest, expiry,
			       &text, &len)) {
			warn("gdr-info: --nfd: out of memory\n");
			ret = 2;
		} else {
			if (nfd_write(nfd, text, len, err, sizeof(err))) {
				warn("gdr-info: --nfd: %s\n", err);
				ret = 2;
			}
			free(text);
		}
	}
	gdr_report_destroy(report);
out:
	if (root) {
		gdr_private_replay_end(); /* frees the replayed devices */
		snapshot_end();
	} else
		for (i = 0; i < nall; i++)
			ibv_close_device(all[i]);
	free(ctxs);
	if (!root)
		free(all);
	if (list)
		ibv_free_device_list(list);
	if (gdr_private_storage_stuck()) {
		/* A thread is still inside a storage step: leave without the
		 * exit handlers (CUDA's, cuFile's), which could meet it. */
		fflush(stdout);
		fflush(stderr);
		_exit(ret);
	}
	return ret;
}
