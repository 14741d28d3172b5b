/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for libibverbs.so.1 (soname and symbol versions alike), for
 * running unmodified verbs programs where there is no RDMA device: one
 * device, "standin0", whose ibv_reg_mr refuses memory the kernel could not
 * pin (EFAULT, as a kernel without nvidia-peermem answers for GPU memory)
 * and whose ibv_reg_dmabuf_mr takes any dma-buf. Each registration is
 * logged to $STANDIN_LOG: what a test checks. Each MR gets keys of its own
 * (lkey 0x5a000000 + n, rkey 0xa5000000 + n for the n-th MR of the
 * process); with $STANDIN_KEYS set they are logged on a line of their own
 * ("mr lkey=... rkey=...") after the registration's, so that a test can
 * tell which keys reached it (the Python tests do; the others read the log
 * line by line as it was); with it, each ibv_open_device and
 * ibv_close_device is logged too ("ibv_open_device standin0 0x..."), so
 * that a test can tell a context closed from one left open.
 *
 * $STANDIN_FAIL=CALL=ERRNO[,CALL=ERRNO...] makes a call fail with that
 * errno (ibv_reg_dmabuf_mr=95 is a kernel without DMA-BUF MRs, as rxe;
 * ibv_dereg_mr=16 an MR still bound to a memory window), logged too.
 * $STANDIN_SLOW_US=N makes each registration and ibv_query_device take N
 * microseconds more (a long call, for the tests that show who waits).
 * $STANDIN_DEVICES=2 lists a second device, "standin1", after it (a
 * program that should take the first one); $STANDIN_DEVICES=0 lists none
 * (a node without RDMA devices), and $STANDIN_DEVICES=none gives no list
 * at all (NULL, errno ENOSYS: rdma-core on a kernel without RDMA).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "reg-mr-ex.h"

#define STANDIN __attribute__((visibility("default")))

static struct ibv_device dev = { .node_type = IBV_NODE_CA,
				 .transport_type = IBV_TRANSPORT_IB,
				 .name = "standin0",
				 .dev_name = "uverbs0" };
static struct ibv_device dev1 = { .node_type = IBV_NODE_CA,
				  .transport_type = IBV_TRANSPORT_IB,
				  .name = "standin1",
				  .dev_name = "uverbs1" };
static struct ibv_device *list[3] = { &dev, &dev1, NULL };

struct standin_mr {
	struct ibv_mr mr;
	int fd; /* a dma-buf MR's own reference, as the kernel keeps one */
};

/* Read once: a benchmark's loop should not scan the environment. */
static const char *log_path, *fail_spec;
static unsigned int slow_us;
static int log_keys, num_devices = 1;

__attribute__((constructor)) static void standin_env(void)
{
	const char *slow = getenv("STANDIN_SLOW_US");
	const char *n = getenv("STANDIN_DEVICES");

	log_path = getenv("STANDIN_LOG");
	fail_spec = getenv("STANDIN_FAIL");
	log_keys = getenv("STANDIN_KEYS") != NULL;
	slow_us = slow ? (unsigned int)strtoul(slow, NULL, 10) : 0;
	if (n && !strcmp(n, "2"))
		num_devices = 2;
	else if (n && !strcmp(n, "0"))
		num_devices = 0;
	else if (n && !strcmp(n, "none"))
		num_devices = -1;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;
	FILE *f;

	if (!log_path || !(f = fopen(log_path, "a")))
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

STANDIN struct ibv_device **ibv_get_device_list(int *num)
{
	struct ibv_device **l;

	if (num_devices < 0) {
		if (num)
			*num = 0;
		errno = ENOSYS;
		return NULL;
	}
	l = calloc((size_t)num_devices + 1, sizeof(*l));

	if (num)
		*num = l ? num_devices : 0;
	if (l)
		memcpy(l, list, (size_t)num_devices * sizeof(*l));
	return l;
}

STANDIN void ibv_free_device_list(struct ibv_device **l)
{
	free(l);
}

STANDIN const char *ibv_get_device_name(struct ibv_device *d)
{
	return d ? d->name : NULL;
}

STANDIN int ibv_get_device_index(struct ibv_device *d)
{
	return d == &dev ? 0 : d == &dev1 ? 1 : -1;
}

STANDIN struct ibv_context *ibv_open_device(struct ibv_device *d)
{
	struct ibv_context *c = calloc(1, sizeof(*c));

	if (c) {
		c->device = d;
		c->cmd_fd = -1;
		c->async_fd = -1;
		if (log_keys)
			logf_("ibv_open_device %s %p\n", d ? d->name : "?",
			      (void *)c);
	}
	return c;
}

STANDIN int ibv_close_device(struct ibv_context *c)
{
	if (log_keys && c)
		logf_("ibv_close_device %s %p\n",
		      c->device ? c->device->name : "?", (void *)c);
	free(c);
	return 0;
}

STANDIN struct ibv_pd *ibv_alloc_pd(struct ibv_context *c)
{
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	if (pd)
		pd->context = c;
	return pd;
}

STANDIN int ibv_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	return 0;
}

STANDIN int ibv_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
	if (slow_us)
		usleep(slow_us);
	memset(a, 0, sizeof(*a));
	a->max_mr_size = ~0ULL;
	snprintf(a->fw_ver, sizeof(a->fw_ver), "standin");
	return 0;
}

/* ibv_query_port is a macro over an inline in verbs.h; this is the
 * exported function the inline falls back to (verbs_get_ctx is NULL for
 * this context). */
STANDIN int(ibv_query_port)(struct ibv_context *c, uint8_t port,
			    struct _compat_ibv_port_attr *compat)
{
	struct ibv_port_attr *a = (struct ibv_port_attr *)compat;

	memset(a, 0, sizeof(*a));
	a->state = IBV_PORT_ACTIVE;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	return port == 1 ? 0 : EINVAL;
}

/* rdma-core's words (libibverbs 1.14.44 here answers these). */
STANDIN const char *ibv_port_state_str(enum ibv_port_state s)
{
	static const char *const words[] = {
		"no state change (NOP)", "down", "init", "armed", "active",
		"active defer"
	};

	return (unsigned int)s < sizeof(words) / sizeof(words[0]) ? words[s]
								  : "unknown";
}

/*
 * The queue verbs gdr-info's self-test links: the stand-in has no queues
 * (the self-test says so). They must be here all the same: where every
 * symbol is bound at load (Ubuntu builds with -z now), one missing is a
 * program that does not start.
 */
STANDIN struct ibv_cq *ibv_create_cq(struct ibv_context *c, int cqe, void *ctx,
				     struct ibv_comp_channel *ch, int vec)
{
	errno = EOPNOTSUPP;
	return NULL;
}

STANDIN int ibv_destroy_cq(struct ibv_cq *cq)
{
	return EINVAL;
}

STANDIN struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
				     struct ibv_qp_init_attr *attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

STANDIN int ibv_destroy_qp(struct ibv_qp *qp)
{
	return EINVAL;
}

STANDIN int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	return EOPNOTSUPP;
}

STANDIN int ibv_query_gid(struct ibv_context *c, uint8_t port, int index,
			  union ibv_gid *gid)
{
	errno = EOPNOTSUPP;
	return -1;
}

STANDIN const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	return "stand-in: no completions";
}

STANDIN enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

/* The errno $STANDIN_FAIL gives @call (logged), or 0. */
static int failing(const char *call)
{
	size_t n = strlen(call);
	const char *p;

	for (p = fail_spec; p && *p;
	     p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, call, n) && p[n] == '=') {
			logf_("%s: failing with errno %d\n", call,
			      atoi(p + n + 1));
			return atoi(p + n + 1);
		}
	return 0;
}

struct ibv_mr *standin_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			      int access);
struct ibv_mr *standin_reg_mr_1_0(struct ibv_pd *pd, void *addr, size_t len,
				  int access);
int standin_dereg_mr(struct ibv_mr *mr);
int standin_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
		     void *addr, size_t len, int access);

static unsigned int num_mrs;

static struct ibv_mr *new_mr(struct ibv_pd *pd, void *addr, size_t len, int fd)
{
	struct standin_mr *m = calloc(1, sizeof(*m));
	unsigned int n;

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = len;
	n = __atomic_add_fetch(&num_mrs, 1, __ATOMIC_RELAXED);
	m->mr.lkey = 0x5a000000u + (n & 0xffffffu);
	m->mr.rkey = 0xa5000000u + (n & 0xffffffu);
	m->fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (log_keys)
		logf_("mr lkey=0x%x rkey=0x%x\n", m->mr.lkey, m->mr.rkey);
	return &m->mr;
}

/* Whether the kernel could pin [@addr, +1): a byte readable through
 * process_vm_readv, as get_user_pages needs (GPU memory is not). */
static int pinnable(void *addr)
{
	char b;
	struct iovec local = { &b, 1 }, remote = { addr, 1 };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1;
}

static struct ibv_mr *reg_va(const char *call, struct ibv_pd *pd, void *addr,
			     size_t len, uint64_t iova, int access)
{
	int err = failing(call);

	if (err) {
		errno = err;
		return NULL;
	}
	if (slow_us)
		usleep(slow_us);
	if (!pinnable(addr)) {
		logf_("%s %p %zu iova=0x%llx access=0x%x: EFAULT\n", call, addr,
		      len, (unsigned long long)iova, access);
		errno = EFAULT;
		return NULL;
	}
	logf_("%s %p %zu iova=0x%llx access=0x%x: ok\n", call, addr, len,
	      (unsigned long long)iova, access);
	return new_mr(pd, addr, len, -1);
}

/*
 * As rdma-core 33 and later: ibv_reg_mr@IBVERBS_1.1 and ibv_reg_mr_iova are
 * ibv_reg_mr_iova2 with the address (or the iova) filled in, called through
 * this object's PLT, so that a preload that interposes ibv_reg_mr_iova2 is
 * entered again from inside its own ibv_reg_mr (rdma-core 29-32 nested the
 * other way: ibv_reg_mr_iova2 called ibv_reg_mr_iova). The entry is logged
 * first, with the call it makes.
 */
STANDIN struct ibv_mr *standin_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				      int access)
{
	int err = failing("ibv_reg_mr");

	if (err) {
		errno = err;
		return NULL;
	}
	logf_("ibv_reg_mr %p %zu access=0x%x: calls ibv_reg_mr_iova2\n", addr,
	      len, access);
	return ibv_reg_mr_iova2(pd, addr, len, (uintptr_t)addr,
				(unsigned int)access);
}

STANDIN struct ibv_mr *standin_reg_mr_1_0(struct ibv_pd *pd, void *addr,
					  size_t len, int access)
{
	return reg_va("ibv_reg_mr@1.0", pd, addr, len, (uintptr_t)addr, access);
}

STANDIN struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
					size_t len, uint64_t iova,
					unsigned int access)
{
	return reg_va("ibv_reg_mr_iova2", pd, addr, len, iova, (int)access);
}

STANDIN struct ibv_mr *(ibv_reg_mr_iova)(struct ibv_pd *pd, void *addr,
					 size_t len, uint64_t iova, int access)
{
	int err = failing("ibv_reg_mr_iova");

	if (err) {
		errno = err;
		return NULL;
	}
	logf_("ibv_reg_mr_iova %p %zu iova=0x%llx access=0x%x: calls "
	      "ibv_reg_mr_iova2\n",
	      addr, len, (unsigned long long)iova, access);
	return ibv_reg_mr_iova2(pd, addr, len, iova, (unsigned int)access);
}

STANDIN struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					 size_t len, uint64_t iova, int fd,
					 int access)
{
	char path[64], line[128], exp[64] = "?";
	struct stat st;
	FILE *f;
	int err;

	if (fd < 0) {
		errno = EBADF; /* the probe: a kernel that takes dma-bufs */
		return NULL;
	}
	err = failing("ibv_reg_dmabuf_mr");
	if (err) {
		errno = err;
		return NULL;
	}
	if (slow_us)
		usleep(slow_us);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "exp_name: %63s", exp);
	if (f)
		fclose(f);
	if (fstat(fd, &st))
		st.st_size = -1;
	logf_("ibv_reg_dmabuf_mr fd offset=%llu len=%zu iova=0x%llx "
	      "access=0x%x exp_name=%s size=%lld\n",
	      (unsigned long long)offset, len, (unsigned long long)iova, access,
	      exp, (long long)st.st_size);
	return new_mr(pd, (void *)(uintptr_t)offset, len, fd);
}

STANDIN int standin_dereg_mr(struct ibv_mr *mr)
{
	struct standin_mr *m = (struct standin_mr *)mr;
	int err = failing("ibv_dereg_mr");

	if (err)
		return err; /* libibverbs answers an errno, not -1 */
	logf_("ibv_dereg_mr %p %zu\n", mr->addr, mr->length);
	if (m->fd >= 0)
		close(m->fd);
	free(m);
	return 0;
}

STANDIN int standin_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			     void *addr, size_t len, int access)
{
	logf_("ibv_rereg_mr flags=0x%x access=0x%x\n", flags, access);
	return 0;
}

struct ibv_mr *ibv_reg_mr_ex(struct ibv_pd *pd, struct mr_init_attr *a);
STANDIN struct ibv_mr *ibv_reg_mr_ex(struct ibv_pd *pd, struct mr_init_attr *a)
{
	uint64_t iova =
		a->comp_mask & MR_MASK_IOVA ? a->iova : (uintptr_t)a->addr;

	logf_("ibv_reg_mr_ex mask=0x%llx\n", (unsigned long long)a->comp_mask);
	if (a->comp_mask & MR_MASK_FD)
		return ibv_reg_dmabuf_mr(pd, a->fd_offset, a->length, iova,
					 a->fd, a->access);
	return reg_va("ibv_reg_mr_ex", pd, a->addr, a->length, iova, a->access);
}

__asm__(".symver standin_reg_mr, ibv_reg_mr@@IBVERBS_1.1");
__asm__(".symver standin_reg_mr_1_0, ibv_reg_mr@IBVERBS_1.0");
__asm__(".symver standin_dereg_mr, ibv_dereg_mr@@IBVERBS_1.1");
__asm__(".symver standin_rereg_mr, ibv_rereg_mr@@IBVERBS_1.1");
