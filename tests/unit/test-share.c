/* SPDX-License-Identifier: MIT */
/*
 * Memory another process owns, over the fakes: gdr_export() describes
 * and exports as the registration paths do; the descriptor survives the
 * wire with every field and refuses every field wrong; gdr_export_send/
 * recv hand it over a unix socket and leave nothing behind on a bad
 * message; gdr_import_register() takes Data Direct with the PCIe-mapped
 * fd, else DMA-BUF, asks no CUDA, and says why when the NIC refuses; a
 * bare fd from any exporter registers; CUDA IPC and imported VMM memory
 * get words that fit them. Fault injection over the whole exchange.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fakes.h"

#include "share-calls.h"

static struct fixture fx;
static struct fake_nic dd_nic, plain_nic, old_nic;
/* The plain DMA-BUF NIC's PD: fake_pd, or plain_nic's beside others. */
static struct ibv_pd *plain;

enum nic_set {
	ONE_NIC = 0,  /* the default mlx5-like NIC, DMA-BUF MRs */
	WITH_DD = 1,  /* plus a NIC with a Data Direct function */
	WITH_OLD = 2, /* plus a NIC that refuses DMA-BUF MRs */
};

/* A fresh node: the fakes, the boot id, @set's NICs. */
static void node(enum nic_set set)
{
	struct gdr_model_nic *m;

	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fixture_write(fx.proc, "sys/kernel/random/boot_id", BOOT_ID);
	plain = &fake_pd;
	if (set) { /* the first NIC added takes the default one's place */
		fake_add_nic(&plain_nic, "fake_plain", 1);
		plain = &plain_nic.pd;
	}
	if (set & WITH_DD) {
		m = fake_add_nic(&dd_nic, "fake_dd", 1);
		m->data_direct_errno = 0;
	}
	if (set & WITH_OLD) {
		m = fake_add_nic(&old_nic, "fake_old", 1);
		m->dmabuf_probe_errno = EOPNOTSUPP;
		m->mlx5 = 0;
	}
	fakes_install(&fx, NULL, NULL, NULL);
}

static void done(void)
{
	fixture_remove(&fx);
}

/* Socket pairs never hang a test: a receive waits 5 s at most. */
static void pair(int type, int sv[2])
{
	struct timeval tv = { .tv_sec = 5 };

	CHECK_INT(socketpair(AF_UNIX, type, 0, sv), 0);
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static int cloexec(int fd)
{
	return (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0;
}

/* --- the owner's export ------------------------------------------------ */
/* GPU 0's bus id as the driver says @driver: the descriptor's is @want
 * (NULL: the export is refused, naming it). */
static void bus_id_as(const char *driver, const char *want)
{
	struct gdr_export_desc d;
	int fds[2], before;
	char *p;

	check_scope = "export: the bus id in the descriptor's form";
	node(ONE_NIC);
	snprintf(fake_model.gpu[0].pci_bus_id,
		 sizeof(fake_model.gpu[0].pci_bus_id), "%s", driver);
	fakes_install(&fx, NULL, NULL, NULL);
	p = fake_alloc_device(0, 1 << 20);
	before = count_fds();
	if (!want) {
		CHECK_INT(gdr_export(p, 4096, 0, &d, fds), -1);
		CHECK_INT(errno, EIO);
		SAID("GPU 0's PCI bus id is not known");
		CHECK_HAS(gdr_last_error(), driver);
		CHECK_INT(fds[0], -1);
		CHECK_INT(count_fds(), before);
		done();
		return;
	}
	CHECK_INT(gdr_export(p, 4096, 0, &d, fds), 0);
	CHECK_STR(d.gpu_bus_id, want);
	if (d.num_fds)
		close(fds[0]);
	done();
}

/*
 * The mappings the kernel empties in a child ("wf" in smaps) that were not
 * there in @before (the C library may keep one of its own): how many.
 * With @before NULL, record the present ones there instead.
 */
#define WF_MAX 64
static unsigned long wf_at_start[WF_MAX + 1];

static int wipe_on_fork_new(const unsigned long *before, unsigned long *record)
{
	char line[512];
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long start = 0;
	int n = 0, k = 0, i;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (sscanf(line, "%lx-%lx ", &a, &b) == 2) {
			start = a;
			continue;
		}
		if (strncmp(line, "VmFlags:", 8) || !strstr(line, " wf"))
			continue;
		if (record && k < WF_MAX)
			record[k++] = start;
		for (i = 0; before && before[i]; i++)
			if (before[i] == start)
				break;
		if (before && !before[i])
			n++;
	}
	fclose(f);
	if (record)
		record[k] = 0;
	return n;
}

/*
 * The owner's pid is remembered once a process: a child of fork() (which
 * the fake driver lets export) names itself, and its parent still does.
 */
static void owner_pid_after_fork(char *p)
{
	struct gdr_export_desc d;
	uint32_t said[2] = { 0, 0 };
	int fds[2], pipefd[2], status = -1;
	pid_t child;

	check_scope = "export: the owner's pid in a forked child";
	CHECK_INT(pipe(pipefd), 0);
	child = fork();
	if (child == 0) {
		said[0] = gdr_export(p, 4096, 0, &d, fds) ? 0 : d.owner_pid;
		said[1] = (uint32_t)getpid();
		_exit(write(pipefd[1], said, sizeof(said)) == sizeof(said) ? 0
									   : 1);
	}
	close(pipefd[1]);
	CHECK_INT(read(pipefd[0], said, sizeof(said)), sizeof(said));
	close(pipefd[0]);
	CHECK_INT(waitpid(child, &status, 0), child);
	CHECK_INT(status, 0);
	CHECK_INT(said[0], child);
	CHECK_INT(said[1], child);
	CHECK_INT(gdr_export(p, 4096, 0, &d, fds), 0);
	CHECK_INT(d.owner_pid, getpid());
	close(fds[0]);
	/* Kept in a page the kernel empties in a child ("wf" in smaps). */
	CHECK(wipe_on_fork_new(wf_at_start, NULL) >= 1);
}

/*
 * Where the kernel refuses MADV_WIPEONFORK (before 4.14, or a seccomp
 * policy, as here in a child made before any export), the pid is asked
 * each time: right in the process and in its child, and no page is kept.
 * 0, 77 where seccomp cannot be set, else the failures.
 */
static int pid_without_wipeonfork(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_madvise, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_WIPEONFORK, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]),
				   .filter = f };
	unsigned long before[WF_MAX + 1];
	struct gdr_export_desc d;
	int fds[2], status = -1;
	pid_t child;
	char *p;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		printf("SKIP pid without MADV_WIPEONFORK: no seccomp here "
		       "(%s)\n",
		       strerror(errno));
		return 77;
	}
	check_scope = "export: the owner's pid without MADV_WIPEONFORK";
	node(ONE_NIC);
	p = fake_alloc_device(0, 1 << 20);
	/* After the fixture: the C library may map a wiped page of its own
	 * at its first getrandom (glibc 2.41's vDSO state). */
	wipe_on_fork_new(NULL, before);
	CHECK_INT(gdr_export(p, 4096, 0, &d, fds), 0);
	CHECK_INT(d.owner_pid, getpid());
	close(fds[0]);
	child = fork();
	if (child == 0)
		_exit(gdr_export(p, 4096, 0, &d, fds) ||
		      d.owner_pid != (uint32_t)getpid());
	CHECK_INT(waitpid(child, &status, 0), child);
	CHECK_INT(status, 0);
	CHECK_INT(gdr_export(p, 4096, 0, &d, fds), 0);
	CHECK_INT(d.owner_pid, getpid());
	close(fds[0]);
	CHECK_INT(wipe_on_fork_new(before, NULL), 0);
	done();
	return check_summary("share (no MADV_WIPEONFORK)");
}

/* In a child made before this process exported anything. */
static void pid_fallback(void)
{
	int status = -1;
	pid_t child = fork();

	if (child == 0) {
		int rc = pid_without_wipeonfork();

		fflush(stdout);
		_exit(rc);
	}
	check_scope = "export: the owner's pid without MADV_WIPEONFORK";
	CHECK_INT(waitpid(child, &status, 0), child);
	CHECK(WIFEXITED(status) &&
	      (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 77));
}

static void export_describes(void)
{
	struct gdr_export_desc d;
	uint64_t ino;
	int fds[2], before;
	struct stat st;
	char *p;

	check_scope =
		"export: descriptor of a cuMemAlloc buffer at an odd offset";
	node(ONE_NIC);
	p = fake_alloc_device(0, 4 << 20);
	before = count_fds();
	memset(&d, 0xa5, sizeof(d));
	CHECK_INT(gdr_export(p + 0x1234, 5000, 0, &d, fds), 0);
	CHECK_STR(gdr_last_error(), "");
	CHECK_INT(d.version, GDR_EXPORT_DESC_VERSION);
	CHECK_INT(d.num_fds, 1);
	CHECK_INT(d.mapping[0], GDR_DMABUF_MAPPING_DEFAULT);
	CHECK(fds[0] >= 0);
	CHECK_INT(fds[1], -1);
	CHECK_INT(cloexec(fds[0]), 1);
	/* The span the registration paths export: pages around it. */
	CHECK_INT(fake_cu.last_export_base, (uintptr_t)p + 0x1000);
	CHECK_INT(d.dmabuf_size, 0x2000);
	CHECK_INT(d.offset, 0x234);
	CHECK_INT(d.length, 5000);
	CHECK_INT(d.iova, (uintptr_t)p + 0x1234);
	CHECK(d.buffer_id != 0);
	CHECK_INT(d.mem_type, GDR_MEM_CUDA_DEVICE);
	CHECK_INT(d.owner_pid, getpid());
	CHECK_INT(d.lib_version, GPUDIRECT_VERSION_MAJOR << 16 |
					 GPUDIRECT_VERSION_MINOR << 8 |
					 GPUDIRECT_VERSION_MICRO);
	CHECK_STR(d.gpu_bus_id, "0000:06:00.0");
	CHECK_INT(d.gpu_uuid[0], 0xd0);
	CHECK_INT(d.gpu_uuid[15], 0xd0);
	CHECK_INT(d.boot_id[0], 0x1b);
	CHECK_INT(d.boot_id[15], 0x27);
	CHECK_INT(fstat(fds[0], &st), 0);
	ino = (uint64_t)st.st_ino;
	CHECK_INT(d.dmabuf_ino[0], ino);
	CHECK_INT(d.dmabuf_ino[1], 0);
	CHECK_INT(count_fds(), before + 1);
	close(fds[0]);
	owner_pid_after_fork(p);

	check_scope = "export: the second GPU's bus id and UUID";
	fake_model.num_gpus = 2;
	done();
	node(ONE_NIC);
	fake_model.num_gpus = 2;
	fakes_install(&fx, NULL, NULL, NULL);
	p = fake_alloc_device(1, 1 << 20);
	CHECK_INT(gdr_export(p, 1 << 20, 0, &d, fds), 0);
	CHECK_STR(d.gpu_bus_id, "0000:07:00.0");
	CHECK_INT(d.gpu_uuid[3], 0xd1);
	CHECK_INT(d.offset, 0);
	CHECK_INT(d.dmabuf_size, 1 << 20);
	close(fds[0]);
	done();

	/* CUDA writes hex digits in upper case, NVML's form has an 8-digit
	 * domain: the descriptor has one form. */
	bus_id_as("00000000:6A:1F.7", "0000:6a:1f.7");
	bus_id_as("0000:BC:00.0", "0000:bc:00.0");
	bus_id_as("0001:0a:00.1", "0001:0a:00.1");
	/* No bus id, or one of a VMD domain: refused at the export, not at
	 * the send. */
	bus_id_as("unknown", NULL);
	bus_id_as("10000:e1:00.0", NULL);
}

static void export_refuses(void)
{
	struct gdr_export_desc d;
	int fds[2], before, err;
	unsigned int bit;
	char host[64], *p;

	node(ONE_NIC);
	p = fake_alloc_device(0, 1 << 20);
	before = count_fds();

	check_scope = "export: host memory";
	CHECK_INT(gdr_export(host, sizeof(host), 0, &d, fds), -1);
	CHECK_INT(errno, EINVAL);
	SAID("is host memory");
	SAID("memfd");
	CHECK_INT(fds[0], -1);
	CHECK_INT(fds[1], -1);
	CHECK_INT(d.version, 0);

	check_scope = "export: arguments";
	CHECK_INT(gdr_export(p, 4096, 0x8, &d, fds), -1);
	CHECK_INT(errno, EINVAL);
	SAID("unknown bits 0x8");
	/* every bit but GDR_EXPORT_PCIE_MAPPING, each alone */
	for (bit = 0; bit < 32; bit++) {
		if ((1u << bit) == GDR_EXPORT_PCIE_MAPPING)
			continue;
		CHECK_INT(gdr_export(p, 4096, 1u << bit, &d, fds), -1);
		CHECK_INT(errno, EINVAL);
		CHECK_INT(fds[0], -1);
	}
	CHECK_INT(gdr_export(p, 0, 0, &d, fds), -1);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(gdr_export(NULL, 4096, 0, &d, fds), -1);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(gdr_export(p, 4096, 0, NULL, fds), -1);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(gdr_export(p, 4096, 0, &d, NULL), -1);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(gdr_export((void *)(UINTPTR_MAX - 10), 4096, 0, &d, fds), -1);
	CHECK_INT(errno, EINVAL);

	check_scope = "export: past the allocation";
	CHECK_INT(gdr_export(p + 4096, 1 << 20, 0, &d, fds), -1);
	CHECK_INT(errno, EINVAL);
	SAID("runs past the end of its CUDA allocation");

	check_scope = "export: the driver refuses";
	{
		static const struct {
			CUresult r;
			int err;
		} m[] = {
			{ CUDA_ERROR_OUT_OF_MEMORY, ENOMEM },
			{ CUDA_ERROR_NOT_PERMITTED, EPERM },
			{ CUDA_ERROR_NO_DEVICE, ENODEV },
			{ CUDA_ERROR_UNKNOWN, EIO },
		};
		unsigned int i;

		for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
			fake_cu.export_result = m[i].r;
			CHECK_INT(gdr_export(p, 4096, 0, &d, fds), -1);
			CHECK_INT(errno, m[i].err);
			SAID("cuMemGetHandleForAddressRange");
			CHECK_INT(fds[0], -1);
		}
	}
	fake_cu.export_result = 0;

	check_scope = "export: no boot id";
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id",
			 fx.proc);
		CHECK_INT(unlink(path), 0);
	}
	fakes_install(&fx, NULL, NULL, NULL); /* the boot id is read again */
	CHECK_INT(gdr_export(p, 4096, 0, &d, fds), -1);
	err = errno;
	CHECK_INT(err, EIO);
	SAID("boot id");
	CHECK_INT(count_fds(), before);
	CHECK_INT(fake_cu.exports, 4); /* only the refused ones above */
	done();
}

static void export_pcie(void)
{
	struct gdr_export_desc d;
	int fds[2], before;
	char *p;

	check_scope = "export: GDR_EXPORT_PCIE_MAPPING";
	node(ONE_NIC);
	p = fake_alloc_device(0, 1 << 20);
	before = count_fds();
	CHECK_INT(gdr_export(p, 1 << 20, GDR_EXPORT_PCIE_MAPPING, &d, fds), 0);
	CHECK_INT(d.num_fds, 2);
	CHECK_INT(d.mapping[0], GDR_DMABUF_MAPPING_DEFAULT);
	CHECK_INT(d.mapping[1], GDR_DMABUF_MAPPING_PCIE);
	CHECK(fds[0] >= 0 && fds[1] >= 0 && fds[0] != fds[1]);
	CHECK(d.dmabuf_ino[0] != d.dmabuf_ino[1]);
	CHECK_INT(fake_cu.flagged_exports, 1);
	CHECK_INT(fake_cu.exports, 2);
	CHECK_INT(count_fds(), before + 2);
	close(fds[0]);
	close(fds[1]);

	check_scope = "export: PCIe mapping asked, the GPU cannot";
	fake_model.gpu[0].pcie_mapping = CUDA_ERROR_NOT_SUPPORTED;
	CHECK_INT(gdr_export(p, 1 << 20, GDR_EXPORT_PCIE_MAPPING, &d, fds), -1);
	CHECK_INT(errno, EOPNOTSUPP);
	CHECK_INT(count_fds(), before);
	CHECK_INT(fds[0], -1);
	done();

	check_scope =
		"export: PCIe mapping asked, the driver is older than 12.8";
	node(ONE_NIC);
	fake_model.driver_version = 12040;
	fakes_install(&fx, NULL, NULL, NULL);
	p = fake_alloc_device(0, 1 << 20);
	CHECK_INT(gdr_export(p, 1 << 20, GDR_EXPORT_PCIE_MAPPING, &d, fds), -1);
	CHECK_INT(errno, EOPNOTSUPP);
	SAID("12.8");
	CHECK_INT(count_fds(), before);
	done();

	check_scope = "export: a C2C-attached GPU gets the PCIe-mapped one too";
	node(ONE_NIC);
	fake_model.gpu[0].c2c = 1;
	fakes_install(&fx, NULL, NULL, NULL);
	p = fake_alloc_device(0, 1 << 20);
	CHECK_INT(gdr_export(p, 1 << 20, 0, &d, fds), 0);
	CHECK_INT(d.num_fds, 2);
	CHECK_INT(d.mapping[1], GDR_DMABUF_MAPPING_PCIE);
	close(fds[0]);
	close(fds[1]);
	/* Only a NOT_SUPPORTED answer is remembered: after a PCIe-mapped
	 * export that worked, the next one asks again. */
	CHECK_INT(gdr_export(p, 1 << 20, 0, &d, fds), 0);
	CHECK_INT(d.num_fds, 2);
	close(fds[0]);
	close(fds[1]);

	check_scope = "export: a C2C GPU that cannot: the plain one serves";
	fake_model.gpu[0].pcie_mapping = CUDA_ERROR_NOT_SUPPORTED;
	fakes_install(&fx, NULL, NULL, "1"); /* GPUDIRECT_DEBUG=1 */
	p = fake_alloc_device(0, 1 << 20);
	{
		char said[4096] = "";
		int err_fd = dup(2), log = memfd_create("stderr", 0);
		ssize_t got;

		fflush(stderr);
		dup2(log, 2);
		CHECK_INT(gdr_export(p, 1 << 20, 0, &d, fds), 0);
		fflush(stderr);
		dup2(err_fd, 2);
		close(err_fd);
		got = pread(log, said, sizeof(said) - 1, 0);
		said[got > 0 ? got : 0] = '\0';
		close(log);
		CHECK_HAS(said, "no PCIe-mapped dma-buf");
	}
	CHECK_INT(d.num_fds, 1);
	CHECK_INT(fds[1], -1);
	close(fds[0]);
	/* Remembered: the next export does not ask the GPU again. */
	fake_cu.flagged_exports = 0;
	CHECK_INT(gdr_export(p, 1 << 20, 0, &d, fds), 0);
	CHECK_INT(fake_cu.flagged_exports, 0);
	CHECK_INT(d.num_fds, 1);
	close(fds[0]);
	CHECK_INT(count_fds(), before);
	done();
}

/* --- the descriptor on the wire ---------------------------------------- */
static void sample(struct gdr_export_desc *d)
{
	unsigned int i;

	memset(d, 0, sizeof(*d));
	d->version = 1;
	d->num_fds = 2;
	d->mapping[0] = 1;
	d->mapping[1] = 0;
	d->dmabuf_size = 0x123456000ULL;
	d->offset = 0x10203;
	d->length = 0x7000001ULL;
	d->iova = 0x7f1122334455ULL;
	d->buffer_id = 0xfedcba9876543210ULL;
	d->dmabuf_ino[0] = 0x1111222233334444ULL;
	d->dmabuf_ino[1] = 77;
	d->mem_type = GDR_MEM_CUDA_POOL;
	d->owner_pid = 0x89abcdef;
	d->lib_version = 0x000400;
	strcpy(d->gpu_bus_id, "0000:9a:00.1");
	for (i = 0; i < 16; i++) {
		d->gpu_uuid[i] = (uint8_t)(0x40 + i);
		d->boot_id[i] = (uint8_t)(0x1b + 0 * i);
	}
	/* The fixture's boot id. */
	gdr_parse_uuid(BOOT_ID, d->boot_id);
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void wire_round_trip(void)
{
	struct gdr_export_desc d, back;
	uint8_t w[GDR_EXPORT_WIRE_LEN + 8];

	check_scope = "wire: every field back, little-endian at its offset";
	node(ONE_NIC);
	sample(&d);
	memset(w, 0xee, sizeof(w));
	CHECK_INT(gdr_export_pack(&d, w, sizeof(w)), 0);
	CHECK(!memcmp(w, "GDRXDESC", 8));
	CHECK_INT(w[8], 1);
	CHECK_INT(w[9], 0);
	CHECK_INT(w[10], GDR_EXPORT_WIRE_LEN);
	CHECK_INT(le64(w + 24), d.dmabuf_size);
	CHECK_INT(le64(w + 32), d.offset);
	CHECK_INT(le64(w + 40), d.length);
	CHECK_INT(le64(w + 48), d.iova);
	CHECK_INT(le64(w + 56), d.buffer_id);
	CHECK_INT(le64(w + 64), d.dmabuf_ino[0]);
	CHECK_INT(w[GDR_EXPORT_WIRE_LEN], 0xee); /* nothing past it */
	memset(&back, 0x5a, sizeof(back));
	CHECK_INT(gdr_export_unpack(w, GDR_EXPORT_WIRE_LEN, &back), 0);
	CHECK(!memcmp(&d, &back, sizeof(d)));

	check_scope = "wire: pack refuses";
	CHECK_INT(gdr_export_pack(&d, w, GDR_EXPORT_WIRE_LEN - 1), -1);
	CHECK_INT(errno, EINVAL);
	d.num_fds = 3;
	CHECK_INT(gdr_export_pack(&d, w, sizeof(w)), -1);
	CHECK_INT(errno, EINVAL);
	SAID("num_fds 3");
	done();
}

/* Unpack @w after @edit: the errno, and the message must name @what. */
static void bad(const char *scope, void (*edit)(uint8_t *w), int want,
		const char *what)
{
	struct gdr_export_desc d, out;
	uint8_t w[GDR_EXPORT_WIRE_LEN];

	check_scope = scope;
	sample(&d);
	CHECK_INT(gdr_export_pack(&d, w, sizeof(w)), 0);
	edit(w);
	memset(&out, 0x5a, sizeof(out));
	CHECK_INT(gdr_export_unpack(w, sizeof(w), &out), -1);
	CHECK_INT(errno, want);
	SAID(what);
	CHECK_INT(out.version, 0);
	CHECK_INT(out.length, 0);
}

static void e_magic(uint8_t *w)
{
	w[3] = 'Y';
}
static void e_version(uint8_t *w)
{
	w[8] = 2;
	w[88] = 9;
	w[89] = 0;
	w[90] = 0;
}
static void e_len(uint8_t *w)
{
	w[10] = 159;
}
static void e_nfds0(uint8_t *w)
{
	w[12] = 0;
}
static void e_nfds3(uint8_t *w)
{
	w[12] = 3;
}
static void e_map2(uint8_t *w)
{
	w[16] = 2;
}
static void e_mapdup(uint8_t *w)
{
	w[20] = w[16];
}
static void e_ino0(uint8_t *w)
{
	memset(w + 72, 0, 8);
}
static void e_inopast(uint8_t *w)
{
	w[12] = 1;
}
static void e_size0(uint8_t *w)
{
	memset(w + 24, 0, 8);
}
static void e_sizepage(uint8_t *w)
{
	w[24] = 1;
}
static void e_offset(uint8_t *w)
{
	memcpy(w + 32, w + 24, 8);
}
static void e_len0(uint8_t *w)
{
	memset(w + 40, 0, 8);
}
static void e_lenbig(uint8_t *w)
{
	memcpy(w + 40, w + 24, 8);
}
static void e_iova(uint8_t *w)
{
	memset(w + 48, 0xff, 8);
}
static void e_type(uint8_t *w)
{
	w[80] = GDR_MEM_HOST;
}
static void e_bus(uint8_t *w)
{
	w[100] = 'x';
}
static void e_busnul(uint8_t *w)
{
	memset(w + 96, 'a', 16);
}
static void e_res1(uint8_t *w)
{
	w[92] = 1;
}
static void e_res2(uint8_t *w)
{
	w[159] = 1;
}
static void e_boot(uint8_t *w)
{
	w[130] ^= 1;
}

static void wire_refuses(void)
{
	struct gdr_export_desc out;
	uint8_t w[GDR_EXPORT_WIRE_LEN + 1];
	struct gdr_export_desc d;

	node(ONE_NIC);
	bad("wire: magic", e_magic, EPROTO, "not a libgpudirect export");
	bad("wire: version", e_version, EPROTO,
	    "version 2, from libgpudirect 0.0.9");
	bad("wire: length field", e_len, EPROTO, "cut or padded");
	bad("wire: num_fds 0", e_nfds0, EPROTO, "num_fds 0");
	bad("wire: num_fds 3", e_nfds3, EPROTO, "num_fds 3");
	bad("wire: mapping 2", e_map2, EPROTO, "mapping[0] is 2");
	bad("wire: mapping twice", e_mapdup, EPROTO, "repeats mapping[0]");
	bad("wire: inode 0", e_ino0, EPROTO, "dmabuf_ino[1] is 0");
	bad("wire: inode past num_fds", e_inopast, EPROTO, "past num_fds");
	bad("wire: size 0", e_size0, EPROTO, "dmabuf_size 0");
	bad("wire: size not pages", e_sizepage, EPROTO, "4 KiB pages");
	bad("wire: offset past", e_offset, EPROTO, "does not fit");
	bad("wire: length 0", e_len0, EPROTO, "does not fit");
	bad("wire: length past", e_lenbig, EPROTO, "does not fit");
	bad("wire: iova wraps", e_iova, EPROTO, "wraps");
	bad("wire: host memory", e_type, EPROTO, "not device memory");
	bad("wire: bus id", e_bus, EPROTO, "gpu_bus_id");
	bad("wire: bus id unterminated", e_busnul, EPROTO, "gpu_bus_id");
	bad("wire: reserved word", e_res1, EPROTO, "reserved");
	bad("wire: reserved tail", e_res2, EPROTO, "reserved");
	bad("wire: another node", e_boot, EXDEV, "another node");

	check_scope = "wire: sizes";
	sample(&d);
	CHECK_INT(gdr_export_pack(&d, w, sizeof(w)), 0);
	CHECK_INT(gdr_export_unpack(w, GDR_EXPORT_WIRE_LEN - 1, &out), -1);
	CHECK_INT(errno, EPROTO);
	CHECK_INT(gdr_export_unpack(w, GDR_EXPORT_WIRE_LEN + 1, &out), -1);
	CHECK_INT(errno, EPROTO);
	CHECK_INT(gdr_export_unpack(w, 3, &out), -1);
	CHECK_INT(errno, EPROTO);
	CHECK_INT(gdr_export_unpack(w, 0, &out), -1);
	CHECK_INT(errno, EPROTO);
	CHECK_INT(gdr_export_unpack(NULL, 160, &out), -1);
	CHECK_INT(errno, EINVAL);
	done();
}

/* --- over a unix socket -------------------------------------------------- */
static void socket_round_trip(int type, const char *scope)
{
	struct gdr_export_desc d, got;
	int fds[2], rfds[2], sv[2], before;
	char *p;

	check_scope = scope;
	node(ONE_NIC);
	p = fake_alloc_device(0, 1 << 20);
	CHECK_INT(gdr_export(p + 4096, 8192, GDR_EXPORT_PCIE_MAPPING, &d, fds),
		  0);
	pair(type, sv);
	before = count_fds();
	CHECK_INT(gdr_export_send(sv[0], &d, fds), 0);
	CHECK_INT(gdr_export_recv(sv[1], &got, rfds), 0);
	CHECK_STR(gdr_last_error(), "");
	CHECK(!memcmp(&d, &got, sizeof(d)));
	CHECK_INT(count_fds(), before + 2);
	CHECK(rfds[0] >= 0 && rfds[1] >= 0);
	CHECK_INT(cloexec(rfds[0]), 1);
	CHECK_INT(cloexec(rfds[1]), 1);
	close(rfds[0]);
	close(rfds[1]);
	close(fds[0]);
	close(fds[1]);
	close(sv[0]);
	close(sv[1]);
	done();
}

/* What arrives is refused with @want naming @what, and nothing stays. */
static void recv_refuses(int sv1, int want, const char *what)
{
	struct gdr_export_desc got;
	int rfds[2], before = count_fds();

	CHECK_INT(gdr_export_recv(sv1, &got, rfds), -1);
	CHECK_INT(errno, want);
	SAID(what);
	CHECK_INT(rfds[0], -1);
	CHECK_INT(rfds[1], -1);
	CHECK_INT(got.version, 0);
	CHECK_INT(count_fds(), before);
}

static int send_raw(int sock, const void *buf, size_t len, const int *fds,
		    unsigned int n)
{
	char ctl[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	memset(ctl, 0, sizeof(ctl));
	if (n) {
		m.msg_control = ctl;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	return sendmsg(sock, &m, 0) == (ssize_t)len ? 0 : -1;
}

static void socket_refuses(void)
{
	struct gdr_export_desc d, other;
	uint8_t w[GDR_EXPORT_WIRE_LEN + 16];
	int fds[2], ofds[2], many[4], sv[2], pipefd[2], before;
	void (*old_pipe)(int);
	char *p, *q;

	node(ONE_NIC);
	p = fake_alloc_device(0, 1 << 20);
	q = fake_alloc_device(0, 1 << 20);
	CHECK_INT(gdr_export(p, 4096, GDR_EXPORT_PCIE_MAPPING, &d, fds), 0);
	CHECK_INT(gdr_export(q, 4096, 0, &other, ofds), 0);
	CHECK_INT(pipe(pipefd), 0);
	before = count_fds();

	check_scope = "recv: the peer closed";
	pair(SOCK_SEQPACKET, sv);
	close(sv[0]);
	recv_refuses(sv[1], ECONNRESET, "closed the socket");
	close(sv[1]);

	check_scope = "recv: a short message with its fds";
	memset(w, 0, sizeof(w));
	pair(SOCK_SEQPACKET, sv);
	CHECK_INT(gdr_export_pack(&d, w, sizeof(w)), 0);
	CHECK_INT(send_raw(sv[0], w, 100, fds, 2), 0);
	recv_refuses(sv[1], EPROTO, "cut or padded");

	check_scope = "recv: a long message (SOCK_SEQPACKET)";
	CHECK_INT(send_raw(sv[0], w, sizeof(w), fds, 2), 0);
	recv_refuses(sv[1], EPROTO, "longer than a descriptor");

	check_scope = "recv: three fds";
	many[0] = fds[0];
	many[1] = fds[1];
	many[2] = ofds[0];
	CHECK_INT(send_raw(sv[0], w, GDR_EXPORT_WIRE_LEN, many, 3), 0);
	recv_refuses(sv[1], EPROTO, "more than 2 fds");

	check_scope = "recv: one fd for two";
	CHECK_INT(send_raw(sv[0], w, GDR_EXPORT_WIRE_LEN, fds, 1), 0);
	recv_refuses(sv[1], EPROTO, "carried 1 fds");

	check_scope = "recv: no fds";
	CHECK_INT(send_raw(sv[0], w, GDR_EXPORT_WIRE_LEN, NULL, 0), 0);
	recv_refuses(sv[1], EPROTO, "carried 0 fds");

	check_scope = "recv: a pipe for a dma-buf";
	many[0] = fds[0];
	many[1] = pipefd[0];
	CHECK_INT(send_raw(sv[0], w, GDR_EXPORT_WIRE_LEN, many, 2), 0);
	recv_refuses(sv[1], EPROTO, "not a dma-buf");

	check_scope = "recv: another export's fd";
	many[0] = fds[0];
	many[1] = ofds[0];
	CHECK_INT(send_raw(sv[0], w, GDR_EXPORT_WIRE_LEN, many, 2), 0);
	recv_refuses(sv[1], EPROTO, "not the dma-buf the descriptor names");

	check_scope = "recv: the fds swapped";
	many[0] = fds[1];
	many[1] = fds[0];
	CHECK_INT(send_raw(sv[0], w, GDR_EXPORT_WIRE_LEN, many, 2), 0);
	recv_refuses(sv[1], EPROTO, "not the dma-buf the descriptor names");

	check_scope = "recv: garbage";
	memset(w, 0x41, sizeof(w));
	CHECK_INT(send_raw(sv[0], w, GDR_EXPORT_WIRE_LEN, fds, 2), 0);
	recv_refuses(sv[1], EPROTO, "no magic");

	check_scope = "recv: a descriptor from another node";
	{
		struct gdr_export_desc far = d;

		far.boot_id[0] ^= 0xff;
		CHECK_INT(gdr_export_pack(&far, w, sizeof(w)), 0);
		CHECK_INT(send_raw(sv[0], w, GDR_EXPORT_WIRE_LEN, fds, 2), 0);
		recv_refuses(sv[1], EXDEV, "another node");
	}

	check_scope = "recv and unpack: this node's boot id unreadable";
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id",
			 fx.proc);
		CHECK_INT(unlink(path), 0);
		fakes_install(&fx, NULL, NULL, NULL);
		CHECK_INT(gdr_export_pack(&d, w, sizeof(w)), 0);
		CHECK_INT(gdr_export_unpack(w, GDR_EXPORT_WIRE_LEN, &other),
			  -1);
		CHECK_INT(errno, EIO);
		SAID("boot id");
		CHECK_INT(send_raw(sv[0], w, GDR_EXPORT_WIRE_LEN, fds, 2), 0);
		recv_refuses(sv[1], EIO, "boot id");
		fixture_write(fx.proc, "sys/kernel/random/boot_id", BOOT_ID);
		fakes_install(&fx, NULL, NULL, NULL);
	}

	check_scope = "recv: arguments";
	CHECK_INT(gdr_export_recv(sv[1], NULL, many), -1);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(gdr_export_recv(sv[1], &other, NULL), -1);
	CHECK_INT(errno, EINVAL);

	check_scope = "recv: a socket that is not one";
	recv_refuses(pipefd[0] + 100, EBADF, "recvmsg");
	close(sv[0]);
	close(sv[1]);

	check_scope = "send: refuses";
	pair(SOCK_SEQPACKET, sv);
	CHECK_INT(gdr_export_send(sv[0], NULL, fds), -1);
	CHECK_INT(errno, EINVAL);
	many[0] = fds[0];
	many[1] = -1;
	CHECK_INT(gdr_export_send(sv[0], &d, many), -1);
	CHECK_INT(errno, EBADF);
	close(sv[1]);
	CHECK_INT(gdr_export_send(sv[0], &d, fds), -1);
	CHECK_INT(errno, EPIPE);
	SAID("sendmsg on socket");
	close(sv[0]);

	/* A stream socket whose peer is gone, with SIGPIPE's default action
	 * (whatever the runner left): an error, not a signal that ends the
	 * caller (a SOCK_SEQPACKET socket raises none). */
	check_scope = "send: a stream socket's peer closed";
	pair(SOCK_STREAM, sv);
	close(sv[1]);
	old_pipe = signal(SIGPIPE, SIG_DFL);
	CHECK_INT(gdr_export_send(sv[0], &d, fds), -1);
	CHECK_INT(errno, EPIPE);
	signal(SIGPIPE, old_pipe);
	SAID("sendmsg on socket");
	close(sv[0]);

	CHECK_INT(count_fds(), before);
	close(fds[0]);
	close(fds[1]);
	close(ofds[0]);
	close(pipefd[0]);
	close(pipefd[1]);
	done();
}

/* --- the importer -------------------------------------------------------- */
/* Export @len bytes at @off of a fresh 4 MiB buffer (@flags). */
static char *export_one(size_t off, size_t len, uint32_t flags,
			struct gdr_export_desc *d, int *fds)
{
	char *p = fake_alloc_device(0, 4 << 20);

	CHECK_INT(gdr_export(p + off, len, flags, d, fds), 0);
	return p + off;
}

static void import_dmabuf(void)
{
	struct gdr_export_desc d;
	struct gdr_reg_info info;
	struct ibv_mr *mr;
	int fds[2], attrs, exports, loads;
	char *p;

	check_scope = "import: DMA-BUF, the owner's address and offset";
	node(ONE_NIC);
	p = export_one(0x12345, 100000, 0, &d, fds);
	attrs = fake_cu.ptr_attrs_calls;
	exports = fake_cu.exports;
	loads = fake_cu.loads;
	memset(&info, 0xa5, sizeof(info));
	mr = gdr_import_register(&fake_pd, &d, fds, NULL, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_STR(gdr_last_error(), "");
	CHECK_INT(fake_ibv.last_fd, fds[0]);
	CHECK_INT(fake_ibv.last_offset, 0x345);
	CHECK_INT(fake_ibv.last_len, 100000);
	CHECK_INT(fake_ibv.last_iova, (uintptr_t)p);
	CHECK_INT(fake_ibv.last_access & IBV_ACCESS_RELAXED_ORDERING,
		  IBV_ACCESS_RELAXED_ORDERING);
	CHECK(mr && mr->addr == p);
	CHECK(mr && mr->length == 100000);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(info.mem_type, GDR_MEM_DMABUF);
	CHECK_INT(info.device, -1);
	CHECK_INT(info.export_index, 0);
	/* No CUDA asked: the GPU's side was the exporter's. */
	CHECK_INT(fake_cu.ptr_attrs_calls, attrs);
	CHECK_INT(fake_cu.exports, exports);
	CHECK_INT(fake_cu.loads, loads);
	/* The fds stay the caller's: closing them keeps the MR. */
	CHECK_INT(fcntl(fds[0], F_GETFD) >= 0, 1);
	close(fds[0]);
	if (mr)
		CHECK_INT(gdr_deregister(mr), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	CHECK_STR(gdr_mem_type_str(GDR_MEM_DMABUF), "dma-buf");

	check_scope = "import: another iova, set in the descriptor";
	p = export_one(0, 4096, 0, &d, fds);
	d.iova = 0;
	mr = gdr_import_register(&fake_pd, &d, fds, NULL, NULL, 0);
	CHECK(mr != NULL);
	CHECK_INT(fake_ibv.last_iova, 0);
	CHECK(mr && mr->addr == NULL);
	if (mr)
		gdr_deregister(mr);
	close(fds[0]);

	check_scope = "import: the NIC refuses";
	p = export_one(0, 4096, 0, &d, fds);
	fake_ibv.dmabuf_errno = EINVAL;
	memset(&info, 0, sizeof(info));
	mr = gdr_import_register(&fake_pd, &d, fds, NULL, &info, sizeof(info));
	CHECK(mr == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("(dma-buf fd");
	SAID("ibv_reg_dmabuf_mr(offset 0, 4096 bytes)");
	CHECK(!strstr(gdr_last_error(), "BAR1"));
	CHECK_INT(info.path, GDR_PATH_NONE);
	CHECK_INT(info.export_index, -1);
	fake_ibv.dmabuf_errno = 0;

	check_scope = "import: the NIC's ENOMEM and EIO passed on";
	fake_ibv.dmabuf_errno = ENOMEM;
	CHECK(gdr_import_register(&fake_pd, &d, fds, NULL, NULL, 0) == NULL);
	CHECK_INT(errno, ENOMEM);
	SAID("Cannot allocate memory");
	fake_ibv.dmabuf_errno = EIO;
	CHECK(gdr_register_dmabuf(&fake_pd, fds[0], 0, 4096, 0, NULL, NULL,
				  0) == NULL);
	CHECK_INT(errno, EIO);
	fake_ibv.dmabuf_errno = 0;

	check_scope = "import: GPUDIRECT_PATH=peermem leaves nothing";
	fakes_install(&fx, NULL, "peermem", NULL);
	mr = gdr_import_register(&fake_pd, &d, fds, NULL, &info, sizeof(info));
	CHECK(mr == NULL);
	CHECK_INT(errno, EOPNOTSUPP);
	SAID("GPUDIRECT_PATH");
	fakes_install(&fx, NULL, NULL, NULL);
	close(fds[0]);
	(void)p;
	done();
}

static void import_paths(void)
{
	struct gdr_export_desc d;
	struct gdr_reg_attr attr = { .comp_mask = GDR_REG_ATTR_FLAGS };
	struct gdr_reg_info info;
	struct ibv_mr *mr;
	int fds[2];

	check_scope = "import: Data Direct with the PCIe-mapped fd";
	node(WITH_DD);
	export_one(0, 1 << 20, GDR_EXPORT_PCIE_MAPPING, &d, fds);
	mr = gdr_import_register(&dd_nic.pd, &d, fds, NULL, &info,
				 sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_DATA_DIRECT);
	CHECK_INT(info.export_index, 1);
	CHECK_INT(fake_ibv.mlx5_reg_calls, 1);
	CHECK_INT(fake_ibv.last_fd, fds[1]);
	if (mr)
		gdr_deregister(mr);

	check_scope = "import: PCIe-mapped fd on DMA-BUF when asked";
	attr.flags = GDR_REG_PCIE_MAPPING;
	mr = gdr_import_register(plain, &d, fds, &attr, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(fake_ibv.last_fd, fds[1]);
	CHECK_INT(info.export_index, 1);
	if (mr)
		gdr_deregister(mr);
	close(fds[0]);
	close(fds[1]);

	check_scope = "import: a Data Direct NIC, no PCIe-mapped fd";
	export_one(0, 1 << 20, 0, &d, fds);
	mr = gdr_import_register(&dd_nic.pd, &d, fds, NULL, &info,
				 sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(info.attempts[0].path, GDR_PATH_DATA_DIRECT);
	CHECK_INT(info.attempts[0].result, GDR_ATTEMPT_FAILED);
	CHECK_HAS(info.attempts[0].reason, "GDR_EXPORT_PCIE_MAPPING");
	if (mr)
		gdr_deregister(mr);

	check_scope = "import: forced Data Direct without the PCIe fd";
	attr.comp_mask = GDR_REG_ATTR_PATH_MASK;
	attr.path_mask = GDR_PATH_BIT(GDR_PATH_DATA_DIRECT);
	mr = gdr_import_register(&dd_nic.pd, &d, fds, &attr, &info,
				 sizeof(info));
	CHECK(mr == NULL);
	CHECK_INT(errno, EOPNOTSUPP);
	SAID("no PCIe-mapped dma-buf");

	check_scope = "import: options that do not apply";
	attr.comp_mask = GDR_REG_ATTR_PATH_MASK;
	attr.path_mask = GDR_PATH_BIT(GDR_PATH_PEERMEM);
	CHECK(gdr_import_register(plain, &d, fds, &attr, &info, sizeof(info)) ==
	      NULL);
	CHECK_INT(errno, EINVAL);
	SAID("need an address");
	CHECK_INT(info.path, GDR_PATH_NONE);
	attr.comp_mask = GDR_REG_ATTR_FLAGS;
	attr.flags = GDR_REG_SYNC_MEMOPS;
	CHECK(gdr_import_register(plain, &d, fds, &attr, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	attr.flags = GDR_REG_OWNER_RDMA_CAPABLE;
	CHECK(gdr_import_register(plain, &d, fds, &attr, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK(gdr_import_register(plain, &d, fds, NULL, &info, 4) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK(gdr_import_register(NULL, &d, fds, NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK(gdr_import_register(plain, NULL, fds, NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK(gdr_import_register(plain, &d, NULL, NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	close(fds[0]);
	done();
}

static void import_fd_checks(void)
{
	struct gdr_export_desc d, e;
	struct ibv_mr *mr;
	int fds[2], efds[2], other[2], bfds[2], memfd;

	node(ONE_NIC);
	export_one(0, 4096, GDR_EXPORT_PCIE_MAPPING, &d, fds);
	export_one(0, 4096, 0, &e, efds);

	check_scope = "import: a closed fd";
	other[0] = 999;
	other[1] = fds[1];
	CHECK(gdr_import_register(&fake_pd, &d, other, NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EBADF);
	SAID("fds[0] (999)");

	check_scope = "import: a file that is not a dma-buf";
	memfd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
	other[0] = memfd;
	CHECK(gdr_import_register(&fake_pd, &d, other, NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("not a dma-buf");

	check_scope = "import: another export's fd";
	other[0] = efds[0];
	CHECK(gdr_import_register(&fake_pd, &d, other, NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("not the dma-buf the descriptor names");
	CHECK_INT(fake_ibv.dmabuf_calls, 0);

	/* The fd's size is the descriptor's, exactly: one page more or less
	 * in the descriptor (still a valid one) names another dma-buf. */
	check_scope = "import: the descriptor says a page less than the fd";
	export_one(0, 3 * 4096, 0, &e, bfds);
	CHECK(e.offset == 0 && e.dmabuf_size == 3 * 4096);
	e.length = 4096;
	e.dmabuf_size -= 4096;
	CHECK(gdr_import_register(&fake_pd, &e, bfds, NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("not the dma-buf the descriptor names");
	CHECK_INT(fake_ibv.dmabuf_calls, 0);
	check_scope = "import: the descriptor says a page more than the fd";
	e.dmabuf_size += 2 * 4096;
	CHECK(gdr_import_register(&fake_pd, &e, bfds, NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("not the dma-buf the descriptor names");
	CHECK_INT(fake_ibv.dmabuf_calls, 0);
	close(bfds[0]); /* its own size is taken: every import above */

	check_scope = "import: a descriptor edited out of shape";
	d.length = d.dmabuf_size + 1;
	CHECK(gdr_import_register(&fake_pd, &d, fds, NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("desc is not a valid export descriptor");

	check_scope = "import: a dma-buf longer than the NIC's max_mr_size";
	d.length = 4096;
	fake_model.nic[0].max_mr_size = 2048;
	fakes_install(&fx, NULL, NULL, NULL);
	mr = gdr_import_register(&fake_pd, &d, fds, NULL, NULL, 0);
	CHECK(mr == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("max_mr_size");
	CHECK_INT(fake_ibv.dmabuf_calls, 0);

	close(memfd);
	close(fds[0]);
	close(fds[1]);
	close(efds[0]);
	done();
}

static void import_multi(void)
{
	struct ibv_pd *pds[3];
	struct gdr_export_desc d;
	struct gdr_reg_info infos[3];
	struct ibv_mr *mrs[3];
	int fds[2], before;

	check_scope = "import multi: a plain and a Data Direct NIC";
	node(WITH_DD | WITH_OLD);
	export_one(0, 1 << 20, GDR_EXPORT_PCIE_MAPPING, &d, fds);
	before = count_fds();
	pds[0] = plain;
	pds[1] = &dd_nic.pd;
	CHECK_INT(gdr_import_register_multi(pds, 2, &d, fds, NULL, mrs, infos,
					    sizeof(infos[0])),
		  0);
	CHECK_INT(infos[0].path, GDR_PATH_DMABUF);
	CHECK_INT(infos[0].export_index, 0);
	CHECK_INT(infos[1].path, GDR_PATH_DATA_DIRECT);
	CHECK_INT(infos[1].export_index, 1);
	CHECK_INT(count_fds(), before + 2); /* each MR's own reference */
	CHECK_INT(gdr_deregister_multi(mrs, 2), 0);
	CHECK_INT(count_fds(), before);

	check_scope = "import multi: a NIC without DMA-BUF MRs: all or nothing";
	pds[2] = &old_nic.pd;
	CHECK_INT(gdr_import_register_multi(pds, 3, &d, fds, NULL, mrs, infos,
					    sizeof(infos[0])),
		  -1);
	CHECK_INT(errno, EOPNOTSUPP);
	SAID("pds[2] (fake_old) of 3");
	SAID("released");
	CHECK(mrs[0] == NULL && mrs[1] == NULL && mrs[2] == NULL);
	CHECK_INT(fake_ibv.live_mrs, 0);
	CHECK_INT(count_fds(), before);

	check_scope = "import multi: a bad descriptor fails the call";
	d.num_fds = 0;
	CHECK_INT(gdr_import_register_multi(pds, 2, &d, fds, NULL, mrs, infos,
					    sizeof(infos[0])),
		  -1);
	CHECK_INT(errno, EINVAL);
	CHECK(mrs[0] == NULL && mrs[1] == NULL);
	CHECK_INT(infos[0].path, GDR_PATH_NONE);
	close(fds[0]);
	close(fds[1]);
	done();
}

static void bare_fd(void)
{
	struct gdr_reg_attr attr = { .comp_mask = GDR_REG_ATTR_FLAGS,
				     .flags = GDR_REG_PCIE_MAPPING };
	struct gdr_export_desc d;
	struct gdr_reg_info info;
	struct ibv_mr *mr;
	int fds[2], memfd;
	char name[64];

	check_scope = "bare fd: another exporter's dma-buf";
	node(WITH_DD);
	export_one(0, 1 << 20, 0, &d, fds);
	mr = gdr_register_dmabuf(plain, fds[0], 8192, 4096, 0x10000, NULL,
				 &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(fake_ibv.last_offset, 8192);
	CHECK_INT(fake_ibv.last_iova, 0x10000);
	CHECK(mr && mr->addr == (void *)0x10000);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_INT(info.mem_type, GDR_MEM_DMABUF);
	if (mr)
		gdr_deregister(mr);

	check_scope = "bare fd: declared PCIe-mapped takes Data Direct";
	mr = gdr_register_dmabuf(&dd_nic.pd, fds[0], 0, 4096, 0, &attr, &info,
				 sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_DATA_DIRECT);
	if (mr)
		gdr_deregister(mr);

	check_scope = "bare fd: a plain one on a Data Direct NIC";
	mr = gdr_register_dmabuf(&dd_nic.pd, fds[0], 0, 4096, 0, NULL, &info,
				 sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	CHECK_HAS(info.attempts[0].reason, "GDR_REG_PCIE_MAPPING");
	if (mr)
		gdr_deregister(mr);

	check_scope = "bare fd: options for a pointer";
	attr.flags = GDR_REG_SYNC_MEMOPS;
	CHECK(gdr_register_dmabuf(plain, fds[0], 0, 4096, 0, &attr, NULL, 0) ==
	      NULL);
	CHECK_INT(errno, EINVAL);
	SAID("do not apply to a dma-buf");
	attr.flags = GDR_REG_PCIE_MAPPING;

	check_scope = "bare fd: refused";
	CHECK(gdr_register_dmabuf(plain, fds[0], 1 << 20, 1, 0, NULL, NULL,
				  0) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("does not fit");
	CHECK(gdr_register_dmabuf(plain, fds[0], 4096, (1 << 20) - 4095, 0,
				  NULL, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK(gdr_register_dmabuf(plain, fds[0], 0, 0, 0, NULL, NULL, 0) ==
	      NULL);
	CHECK_INT(errno, EINVAL);
	SAID("offset 0 + len 0 does not fit in the dma-buf's");
	SAID("register at least one byte");
	CHECK(gdr_register_dmabuf(plain, fds[0], 0, 4096, UINT64_MAX - 10, NULL,
				  NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("wraps");
	CHECK(gdr_register_dmabuf(plain, -1, 0, 4096, 0, NULL, NULL, 0) ==
	      NULL);
	CHECK_INT(errno, EBADF);
	/* A bare fd is named "fd" (a descriptor's are "fds[i] (n)"). */
	SAID("fd: fd -1 is not open");
	memfd = memfd_create("plain", MFD_CLOEXEC);
	CHECK(gdr_register_dmabuf(plain, memfd, 0, 4096, 0, NULL, NULL, 0) ==
	      NULL);
	CHECK_INT(errno, EINVAL);
	SAID("not a dma-buf");
	snprintf(name, sizeof(name), "fd: fd %d is not a dma-buf", memfd);
	CHECK_HAS(gdr_last_error(), name);
	CHECK_INT(fake_ibv.live_mrs, 0);
	close(memfd);
	close(fds[0]);
	done();
}

/* --- the truth about imported memory in gdr_register and the cache ------ */
static void imported_memory_words(void)
{
	struct gdr_reg_attr vouch = { .comp_mask = GDR_REG_ATTR_FLAGS,
				      .flags = GDR_REG_OWNER_RDMA_CAPABLE };
	struct gdr_cache_attr ca;
	struct gdr_reg_info info;
	struct gdr_cache *c;
	struct fake_alloc *a;
	struct ibv_mr *mr;
	char *p;

	node(ONE_NIC);
	check_scope = "CUDA IPC memory: only its owner can export it";
	p = fake_alloc_device(0, 1 << 20);
	a = &fake_cu.allocs[fake_cu.num_allocs - 1];
	a->not_rdma = 1;
	a->ipc_imported = 1;
	CHECK(gdr_register(&fake_pd, p, 4096) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("CUDA IPC memory another process owns");
	SAID("gdr_export()");
	CHECK_INT(fake_cu.exports, 0);
	/* Vouching does not apply to memory of a context. */
	CHECK(gdr_register_ex(&fake_pd, p, 4096, &vouch, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("CUDA IPC memory");
	c = gdr_cache_create(&fake_pd, NULL);
	CHECK(gdr_cache_get(c, p, 4096) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("CUDA IPC memory");

	check_scope = "cuMemAlloc on a GPU without GPUDirect RDMA";
	a->ipc_imported = 0;
	CHECK(gdr_register(&fake_pd, p, 4096) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("allocate it on a GPU that supports");
	CHECK(!strstr(gdr_last_error(), "IPC"));

	check_scope =
		"VMM memory not marked capable: refused, then vouched for";
	p = fake_vmm(0, 2, 2 << 20, 1);
	CHECK(gdr_register(&fake_pd, p, 4096) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("cuMemImportFromShareableHandle");
	SAID("GDR_REG_OWNER_RDMA_CAPABLE");
	CHECK(gdr_cache_get(c, p, 4096) == NULL);
	CHECK_INT(errno, EINVAL);
	mr = gdr_register_ex(&fake_pd, p, 4 << 20, &vouch, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_DMABUF);
	if (mr)
		gdr_deregister(mr);
	gdr_cache_destroy(c);
	memset(&ca, 0, sizeof(ca));
	ca.comp_mask = GDR_CACHE_ATTR_REG;
	ca.reg = vouch;
	c = gdr_cache_create(&fake_pd, &ca);
	CHECK(c != NULL);
	mr = c ? gdr_cache_get(c, p, 4096) : NULL;
	CHECK(mr != NULL);
	if (mr)
		CHECK_INT(gdr_cache_put(c, mr), 0);
	if (c)
		gdr_cache_destroy(c);

	check_scope = "pool memory not marked capable: vouching does not apply";
	a = &fake_cu.allocs[fake_cu.num_allocs];
	p = fake_alloc_device(0, 1 << 20);
	a->pool = 1;
	a->not_rdma = 1;
	CHECK(gdr_register_ex(&fake_pd, p, 4096, &vouch, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	SAID("stream-ordered memory pool");
	done();
}

/* --- every outside call failing in turn ---------------------------------- */
static void faults(void)
{
	struct gdr_export_desc d, got;
	struct ibv_mr *mr;
	int fds[2], rfds[2], sv[2], before, live, n = 0, step;
	char *p;

	check_scope = "faults: export, send, recv, import, each call failing";
	node(WITH_DD);
	p = fake_alloc_device(0, 1 << 20);
	before = count_fds();
	for (step = 1; step < 400; step++) {
		pair(SOCK_SEQPACKET, sv);
		live = fake_ibv.live_mrs;
		fault_calls = 0;
		fault_at = step;
		fds[0] = fds[1] = rfds[0] = rfds[1] = -1;
		mr = NULL;
		if (gdr_export(p, 1 << 20, GDR_EXPORT_PCIE_MAPPING, &d, fds) ||
		    gdr_export_send(sv[0], &d, fds) ||
		    gdr_export_recv(sv[1], &got, rfds)) {
			CHECK(errno != 0);
			CHECK(gdr_last_error()[0] != '\0');
		} else {
			mr = gdr_import_register(&dd_nic.pd, &got, rfds, NULL,
						 NULL, 0);
			if (!mr)
				CHECK(errno != 0 && gdr_last_error()[0]);
		}
		fault_at = 0;
		if (mr)
			CHECK_INT(gdr_deregister(mr), 0);
		CHECK_INT(fake_ibv.live_mrs, live);
		close(fds[0]);
		close(fds[1]);
		close(rfds[0]);
		close(rfds[1]);
		close(sv[0]);
		close(sv[1]);
		CHECK_INT(count_fds(), before);
		if (fault_calls < step) /* nothing failed: all done */
			break;
		n++;
	}
	CHECK(n > 5);
	printf("faults: %d calls failed in turn\n", n);
	done();
}

/* The node's boot id as the kernel writes it, and what is not one. */
static void boot_ids(void)
{
	static const char *const bad_ids[] = {
		"1b4e28ba-2fa1-11d2-883f-0016d3cca42",	 /* 31 digits */
		"1b4e28ba-2fa1-11d2-883f-0016d3cca4270", /* 33 */
		"zb4e28ba-2fa1-11d2-883f-0016d3cca427",	 /* not hex */
		"1b4e28ba-2fa1-11d2-883f-0016d3cca42z",	 "",
	};
	struct gdr_export_desc d;
	uint8_t id[16];
	unsigned int i;
	int fds[2];
	char *p;

	check_scope = "boot ids";
	CHECK_INT(gdr_parse_uuid("1b4e28ba-2fa1-11d2-883f-0016d3cca427", id),
		  0);
	CHECK_INT(id[0], 0x1b);
	CHECK_INT(id[15], 0x27);
	CHECK_INT(gdr_parse_uuid("1B4E28BA2FA111D2883F0016D3CCA427", id), 0);
	CHECK_INT(id[1], 0x4e);
	for (i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++)
		CHECK_INT(gdr_parse_uuid(bad_ids[i], id), EINVAL);

	check_scope = "export: a boot id that is not one";
	node(ONE_NIC);
	fixture_write(fx.proc, "sys/kernel/random/boot_id",
		      "zb4e28ba-2fa1-11d2-883f-0016d3cca427\n");
	fakes_install(&fx, NULL, NULL, NULL);
	p = fake_alloc_device(0, 1 << 20);
	CHECK_INT(gdr_export(p, 4096, 0, &d, fds), -1);
	CHECK_INT(errno, EIO);
	SAID("boot id");
	done();
}

/* EOF with errno left at EINTR by an earlier call: never retried. */
static void eof_after_eintr(void)
{
	struct gdr_export_desc d;
	int sv[2], rfds[2];

	check_scope = "recv: the peer gone while errno says EINTR";
	node(ONE_NIC);
	pair(SOCK_SEQPACKET, sv);
	close(sv[0]);
	alarm(10); /* a retry on EOF would spin: fail, never hang */
	errno = EINTR;
	CHECK_INT(gdr_export_recv(sv[1], &d, rfds), -1);
	CHECK_INT(errno, ECONNRESET);
	alarm(0);
	close(sv[1]);
	done();
}

/* The production check of an fd, on what this machine has (no dma-bufs:
 * the GPU and vm suites give it real ones). */
static void real_facts(void)
{
	struct gdr_dmabuf_facts f;
	char why[256], said[64];
	int fd = memfd_create("plain", MFD_CLOEXEC);

	check_scope = "the real dma-buf check";
	CHECK_INT(gdr_dmabuf_facts_real(fd, &f, why, sizeof(why)),
		  GDR_ENOTDMABUF);
	CHECK_HAS(why, "is not a dma-buf (its file system has magic 0x1021994");
	snprintf(said, sizeof(said), "fd %d is not a dma-buf", fd);
	CHECK_HAS(why, said);
	CHECK_INT(gdr_dmabuf_facts_real(-1, &f, why, sizeof(why)), EBADF);
	CHECK_HAS(why, "fd -1 is not open");
	close(fd);
	memset(why, 0, sizeof(why));
	CHECK_INT(gdr_dmabuf_facts_real(fd, &f, why, sizeof(why)), EBADF);
	CHECK_HAS(why, "is not open"); /* fstat said so: no fstatfs */
}

int main(void)
{
	wipe_on_fork_new(NULL, wf_at_start);
	pid_fallback(); /* first: this process has made no export yet */
	real_facts();
	boot_ids();
	eof_after_eintr();
	export_describes();
	export_refuses();
	export_pcie();
	wire_round_trip();
	wire_refuses();
	socket_round_trip(SOCK_SEQPACKET, "socket: SOCK_SEQPACKET round trip");
	socket_round_trip(SOCK_STREAM, "socket: SOCK_STREAM round trip");
	socket_refuses();
	import_dmabuf();
	import_paths();
	import_fd_checks();
	import_multi();
	bare_fd();
	imported_memory_words();
	faults();
	return check_summary("share");
}
