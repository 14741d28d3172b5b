/* SPDX-License-Identifier: MIT */
/*
 * gdr-share: one process owns GPU memory, another registers it on an RDMA
 * device. The owner exports the buffer as dma-buf fds with gdr_export() and
 * hands them over a unix socket; the importer receives them and registers
 * them with gdr_import_register(), without touching CUDA.
 *
 *   gdr-share owner SOCKET [--mem cuda[:N]] [-s BYTES] [--pcie]
 *                   [--fill=SIZE] [--check=SIZE]
 *       allocate, export, and hand the export to every importer that
 *       connects to SOCKET, until interrupted; --fill first writes the
 *       bytes gdr-write-bw -s SIZE sends, --check at the end checks that
 *       they arrived (gdr-write-bw --mem=import:SOCKET on either side)
 *   gdr-share import SOCKET [-d DEVICE]
 *       connect, receive, register on DEVICE (the first one by default),
 *       print what was chosen and why, release
 *   gdr-share demo [-d DEVICE] [--mem cuda[:N]] [-s BYTES] [--pcie]
 *       both on this node: the owner in a child process
 *
 * Exit status: 0 registered (import, demo) or served (owner), 1 failed,
 * 2 a usage error, 77 no RDMA device here, or none of that name (the
 * descriptor was received and checked, not registered).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gpudirect.h>

#include "count.h"
#include "devmem.h"
#include "unixsock.h"

static volatile sig_atomic_t stop;

/* @s as a byte count into *@v, or a usage error (exit 2). */
static void bytes_of(const char *s, size_t *v)
{
	unsigned long long n;

	if (count_parse(s, SIZE_MAX, &n)) {
		fprintf(stderr,
			"gdr-share: %s is not a byte count (decimal digits, "
			"more than 0)\n",
			s);
		exit(2);
	}
	*v = (size_t)n;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct opts {
	const char *dev, *mem, *path;
	size_t len, fill, check;
	int pcie;
};

/*
 * gdr-write-bw's bytes for a @size-byte message: written (@how 'f'), their
 * complement written so that nothing left over passes a check ('p'), or
 * checked ('c'). 0, or -1 with the reason said.
 */
static int pattern_io(struct devmem *buf, size_t size, char how)
{
	long long bad;

	if (how != 'c') {
		if (!devmem_fill(buf, size, how == 'p'))
			return 0;
		fprintf(stderr, "gdr-share owner: cannot write the buffer\n");
		return -1;
	}
	bad = devmem_check(buf, size);
	if (bad < 0)
		fprintf(stderr, "gdr-share owner: cannot read the buffer\n");
	else if (bad)
		fprintf(stderr,
			"gdr-share owner: data check FAILED at byte %lld of "
			"%zu\n",
			bad - 1, size);
	return bad ? -1 : 0;
}

/* Export the buffer once; serve it to every importer that connects. */
static int owner(const struct opts *o, int one_sock)
{
	struct gdr_export_desc d;
	struct unixsock ls = { .fd = -1 };
	struct devmem buf;
	int fds[GDR_EXPORT_MAX_FDS], s, i, rc = 1, cuda, gpu;
	char err[512];

	/* The words first, then the path, before any CUDA work: a path that
	 * is not ours to take is refused at once, and left as it was. */
	if (devmem_parse(o->mem, &cuda, &gpu, err, sizeof(err))) {
		fprintf(stderr, "gdr-share owner: %s\n", err);
		return 1;
	}
	if (one_sock < 0 && unixsock_listen(o->path, &ls, err, sizeof(err))) {
		fprintf(stderr, "gdr-share owner: %s\n", err);
		return 1;
	}
	if (devmem_alloc(o->mem, o->len, &buf, err, sizeof(err))) {
		fprintf(stderr, "gdr-share owner: %s\n", err);
		unixsock_close(&ls);
		return 1;
	}
	/* --check: what is there must come from the writer, not be left
	 * over (cuMemAlloc promises no contents). */
	if ((o->fill && pattern_io(&buf, o->fill, 'f')) ||
	    (o->check && pattern_io(&buf, o->check, 'p'))) {
		devmem_free(&buf);
		unixsock_close(&ls);
		return 1;
	}
	if (gdr_export(buf.ptr, o->len, o->pcie ? GDR_EXPORT_PCIE_MAPPING : 0,
		       &d, fds)) {
		fprintf(stderr, "gdr-share owner: %s\n", gdr_last_error());
		devmem_free(&buf);
		unixsock_close(&ls);
		return 1;
	}
	printf("owner: exported %zu bytes at %p (GPU %s) as %u dma-buf%s\n",
	       o->len, buf.ptr, d.gpu_bus_id, d.num_fds,
	       d.num_fds > 1 ? "s (plain, PCIe-mapped)" : "");
	fflush(stdout);
	if (one_sock >= 0) {
		rc = gdr_export_send(one_sock, &d, fds) ? 1 : 0;
		if (rc)
			fprintf(stderr, "gdr-share owner: %s\n",
				gdr_last_error());
		/* Wait for the importer before freeing: it says when. */
		if (!rc && read(one_sock, err, 1) < 0)
			rc = 1;
		goto out;
	}
	printf("owner: serving on %s (Ctrl-C to stop)\n", o->path);
	fflush(stdout);
	while (!stop) {
		struct pollfd pfd = { .fd = ls.fd, .events = POLLIN };

		/* Woken every 200 ms: a signal between the test of stop and
		 * a blocking accept would otherwise be missed. */
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		s = accept4(ls.fd, NULL, NULL, SOCK_CLOEXEC);
		if (s < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			break;
		}
		if (gdr_export_send(s, &d, fds))
			fprintf(stderr, "gdr-share owner: %s\n",
				gdr_last_error());
		else
			printf("owner: handed the export to an importer\n");
		fflush(stdout);
		close(s);
	}
	rc = 0;
	if (o->check) {
		rc = pattern_io(&buf, o->check, 'c') ? 1 : 0;
		if (!rc)
			printf("owner: data check passed: the %zu bytes "
			       "gdr-write-bw -s %zu writes\n",
			       o->check, o->check);
	}
out:
	unixsock_close(&ls);
	for (i = 0; i < GDR_EXPORT_MAX_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	devmem_free(&buf);
	return rc;
}

/* Receive an export on @s and register it on the chosen RDMA device. */
static int importer(const struct opts *o, int s)
{
	struct gdr_export_desc d;
	struct gdr_reg_info info;
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd = NULL;
	struct ibv_mr *mr;
	int fds[GDR_EXPORT_MAX_FDS], n = 0, i, rc = 1;

	if (gdr_export_recv(s, &d, fds)) {
		fprintf(stderr, "gdr-share import: %s\n", gdr_last_error());
		return 1;
	}
	printf("import: received %llu bytes of GPU %s from pid %u (buffer id "
	       "%llu), %u dma-buf%s of %llu bytes\n",
	       (unsigned long long)d.length, d.gpu_bus_id, d.owner_pid,
	       (unsigned long long)d.buffer_id, d.num_fds,
	       d.num_fds > 1 ? "s" : "", (unsigned long long)d.dmabuf_size);
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n && !ctx; i++)
		if (!o->dev || !strcmp(ibv_get_device_name(list[i]), o->dev))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		printf("import: no RDMA device%s%s here: received and checked, "
		       "not registered\n",
		       o->dev ? " " : "", o->dev ? o->dev : "");
		rc = 77;
		goto out;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fprintf(stderr, "gdr-share import: ibv_alloc_pd: %s\n",
			strerror(errno));
		goto out;
	}
	mr = gdr_import_register(pd, &d, fds, NULL, &info, sizeof(info));
	if (!mr) {
		fprintf(stderr, "gdr-share import: %s\n", gdr_last_error());
		goto out;
	}
	printf("import: registered on %s through %s: lkey 0x%x rkey 0x%x, "
	       "iova %p (the owner's address)\n",
	       ibv_get_device_name(ctx->device), gdr_path_str(info.path),
	       mr->lkey, mr->rkey, mr->addr);
	rc = gdr_deregister(mr) ? 1 : 0;
out:
	for (i = 0; i < GDR_EXPORT_MAX_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	return rc;
}

static int connect_to(const char *path)
{
	char err[512];
	int s = unixsock_connect(path, err, sizeof(err));

	if (s < 0)
		fprintf(stderr, "gdr-share import: %s\n", err);
	return s;
}

/* Both halves on this node: the owner is a child, forked before CUDA. */
static int demo(const struct opts *o)
{
	int sv[2], rc, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		perror("gdr-share: socketpair");
		return 1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("gdr-share: fork");
		return 1;
	}
	if (pid == 0) {
		close(sv[1]);
		_exit(owner(o, sv[0]));
	}
	close(sv[0]);
	rc = importer(o, sv[1]);
	if (write(sv[1], "k", 1) != 1) /* the owner may free now */
		rc = rc ? rc : 1;
	close(sv[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 1;
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "mem", required_argument, NULL, 'm' },
		{ "size", required_argument, NULL, 's' },
		{ "pcie", no_argument, NULL, 'p' },
		{ "fill", required_argument, NULL, 'f' },
		{ "check", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct opts o = { .mem = "cuda", .len = 1 << 20 };
	const char *mode;
	int c, s, rc;

	while ((c = getopt_long(argc, argv, "d:m:s:ph", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'm': o.mem = optarg; break;
		case 's': bytes_of(optarg, &o.len); break;
		case 'p': o.pcie = 1; break;
		case 'f': bytes_of(optarg, &o.fill); break;
		case 'c': bytes_of(optarg, &o.check); break;
		default: goto usage;
		}
	}
	if (optind >= argc)
		goto usage;
	if (o.fill > o.len || o.check > o.len) {
		fprintf(stderr,
			"gdr-share: --fill and --check take at most "
			"the buffer's size (-s %zu)\n",
			o.len);
		return 2;
	}
	mode = argv[optind];
	/* The owner would read back what it wrote: a check of nothing. */
	if ((o.fill && o.check) ||
	    ((o.fill || o.check) && strcmp(mode, "owner"))) {
		fprintf(stderr,
			"gdr-share: --fill or --check (one of them) is for "
			"the owner, beside a gdr-write-bw that writes or "
			"reads its buffer\n");
		return 2;
	}
	o.path = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (!strcmp(mode, "demo"))
		return demo(&o);
	if (!o.path)
		goto usage;
	if (!strcmp(mode, "owner")) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal; /* no SA_RESTART: accept returns */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
		return owner(&o, -1);
	}
	if (!strcmp(mode, "import")) {
		s = connect_to(o.path);
		if (s < 0)
			return 1;
		rc = importer(&o, s);
		close(s);
		return rc;
	}
usage:
	fprintf(stderr,
		"usage: %s owner SOCKET [--mem cuda[:N]] [-s BYTES] [--pcie] "
		"[--fill=SIZE] [--check=SIZE]\n"
		"       %s import SOCKET [-d DEVICE]\n"
		"       %s demo [-d DEVICE] [--mem cuda[:N]] [-s BYTES] "
		"[--pcie]\n",
		argv[0], argv[0], argv[0]);
	return 2;
}
