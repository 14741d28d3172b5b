/* SPDX-License-Identifier: MIT */
/*
 * The live half of gdr-info --storage: look at each path, load cuFile and
 * open its driver, read its properties, then write and read each path
 * through cuFile out of and into GPU memory, check the bytes, ask cuFile
 * which mode served them, and time a plain pread(2) of the same bytes
 * into host memory beside it.
 *
 * Bounded: a read from a hard NFS mount whose server is gone never
 * returns, and cuFile's own calls have been seen to spin (1.20's
 * cuFileDriverOpen without a CUDA driver). So all of it runs on a thread
 * of its own, which names each step as it begins; the caller waits for
 * each step at most the step's limit and then goes on without it, saying
 * which step did not answer. The thread is left behind (the process is
 * expected to end soon: gdr_storage_stuck()). Its results reach the
 * caller only through a copy made under the job's lock after each step,
 * so a step that never ends commits nothing. No lock is held across a
 * call into CUDA, cuFile or the dynamic loader.
 *
 * Nothing is written outside the path: a directory gets an unnamed
 * temporary file (O_TMPFILE), or where the file system has none a new
 * name (O_CREAT|O_EXCL|O_NOFOLLOW) removed right after it is created;
 * a regular file is opened read-only and only read.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "doctor.h"
#include "thresholds.h"

#define ALIGN 4096ULL /* O_DIRECT's, and cuFile's for direct I/O */

struct job {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int refs;
	bool done;
	char step[96];
	unsigned long long started; /* ns, CLOCK_MONOTONIC */
	int cur;		    /* the path being measured, -1 none */
	struct gdr_storage st;	    /* what the finished steps found */
	/* what to do */
	unsigned long long bytes;
	int gpu;
};

static bool stuck; /* atomic: a thread is still inside a step */

bool gdr_storage_stuck(void)
{
	return __atomic_load_n(&stuck, __ATOMIC_ACQUIRE);
}

static unsigned long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long long)t.tv_sec * 1000000000ULL +
	       (unsigned long long)t.tv_nsec;
}

static void put(struct job *j)
{
	bool last;

	pthread_mutex_lock(&j->lock);
	last = --j->refs == 0;
	pthread_mutex_unlock(&j->lock);
	if (last) {
		pthread_cond_destroy(&j->cond);
		pthread_mutex_destroy(&j->lock);
		free(j);
	}
}

/* What is known so far, for the caller; then the next step begins. */
static void step(struct job *j, const struct gdr_storage *w, const char *fmt,
		 ...) __attribute__((format(printf, 3, 4)));
static void step(struct job *j, const struct gdr_storage *w, const char *fmt,
		 ...)
{
	va_list ap;

	pthread_mutex_lock(&j->lock);
	j->st = *w;
	va_start(ap, fmt);
	gdr_vfmt(j->step, sizeof(j->step), fmt, ap);
	va_end(ap);
	j->started = now_ns();
	pthread_cond_signal(&j->cond);
	pthread_mutex_unlock(&j->lock);
}

/* --- looking at a path -------------------------------------------------- */

static int kind_of(unsigned int mode)
{
	return S_ISREG(mode)	? GDR_STORAGE_KIND_FILE
	       : S_ISDIR(mode)	? GDR_STORAGE_KIND_DIR
	       : S_ISFIFO(mode) ? GDR_STORAGE_KIND_FIFO
	       : S_ISCHR(mode)	? GDR_STORAGE_KIND_CHAR
	       : S_ISBLK(mode)	? GDR_STORAGE_KIND_BLOCK
	       : S_ISSOCK(mode) ? GDR_STORAGE_KIND_SOCKET
				: GDR_STORAGE_KIND_UNKNOWN;
}

static void look(struct gdr_storage_path *p, struct gdr_path_facts *f)
{
	struct gdr_storage_mount *sm;

	p->err = gdr_path_look(p->path, f);
	if (p->err)
		return;
	p->kind = kind_of(f->mode);
	gdr_fmt(p->real, sizeof(p->real), "%s", f->real);
	p->dev_major = f->dev_major;
	p->dev_minor = f->dev_minor;
	p->mnt_id = f->mnt_id;
	p->size = f->size;
	/* Where the bytes come from, to ask the route to it. */
	sm = malloc(sizeof(*sm));
	if (!sm)
		return;
	gdr_storage_mount_look(p, sm);
	if (!sm->err && sm->server[0]) {
		gdr_fmt(p->server, sizeof(p->server), "%s", sm->server);
		p->route_err = gdr_route_get(p->server, p->route_dev,
					     sizeof(p->route_dev), p->route_src,
					     sizeof(p->route_src));
	}
	free(sm);
}

/* The mount is read-only (its per-mount "ro"). */
static bool read_only_mount(const struct gdr_storage_path *p)
{
	struct gdr_storage_mount *sm = malloc(sizeof(*sm));
	char v[8];
	bool ro = false;

	if (!sm)
		return false;
	gdr_storage_mount_look(p, sm);
	ro = !sm->err && !gdr_mount_option(sm->m.options, "ro", v, sizeof(v));
	free(sm);
	return ro;
}

/* --- the file to read and write ------------------------------------------ */

/* A file under directory @dir for writing: unnamed where the file system
 * can (O_TMPFILE), else a new name removed at once. O_DIRECT where the
 * file system takes it (*@direct). The fd, or -1 with errno. */
static int scratch(int dir, int *direct)
{
	unsigned int r =
		(unsigned int)(now_ns() ^ (unsigned long long)getpid());
	char name[64];
	int d, fd, err;

	for (d = 1; d >= 0; d--) {
		int flags = O_RDWR | O_CLOEXEC | (d ? O_DIRECT : 0);

		*direct = d;
		fd = openat(dir, ".", O_TMPFILE | flags, 0600);
		if (fd >= 0)
			return fd;
		if (errno == EINVAL && d)
			continue; /* O_DIRECT refused: once more without */
		if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
			return -1;
		gdr_fmt(name, sizeof(name), ".gdr-info-storage-%d-%08x",
			(int)getpid(), r);
		fd = openat(dir, name, O_CREAT | O_EXCL | O_NOFOLLOW | flags,
			    0600);
		if (fd < 0 && errno == EINVAL && d)
			continue;
		if (fd < 0)
			return -1;
		if (unlinkat(dir, name, 0)) {
			err = errno;
			close(fd);
			errno = err;
			return -2; /* created and not removed: said so */
		}
		return fd;
	}
	return -1;
}

/*
 * The same file, opened afresh for cuFile with nothing but the access mode
 * and O_DIRECT (@direct): cuFileHandleRegister refuses an fd whose status
 * flags carry more (CU_FILE_INVALID_FILE_OPEN_FLAG, seen on cuFile 1.15
 * with the O_TMPFILE and O_NONBLOCK fds this check opens first). Through
 * /proc/self/fd: the very inode, whatever its name now. The fd, or -1
 * with errno (the caller then hands cuFile @fd as it is).
 */
static int cufile_fd(int fd, bool readonly, int direct)
{
	struct stat a, b;
	char self[64];
	int c, err;

	gdr_fmt(self, sizeof(self), "/proc/self/fd/%d", fd);
	c = open(self, (readonly ? O_RDONLY : O_RDWR) |
			       (direct ? O_DIRECT : 0) | O_CLOEXEC);
	if (c < 0)
		return -1;
	if (fstat(fd, &a) || fstat(c, &b) || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino) {
		err = errno ? errno : EXDEV;
		close(c);
		errno = err;
		return -1;
	}
	return c;
}

/* --- cuFile's own accounting --------------------------------------------- */

/*
 * The per-GPU counters of cuFile's level 3 statistics. Their place moved
 * between releases (cufile-abi.h), so each known layout is read and the
 * one whose GPU entry counts exactly this check's reads and writes is
 * taken; none matching is said, never guessed at.
 */
static void stats_read(const struct gdr_cufile_ops *ops,
		       struct gdr_storage_io *io, unsigned long long rbytes,
		       unsigned long long wbytes)
{
	static const size_t l1[] = { GDR_CUFILE_L1_BYTES_1_15,
				     GDR_CUFILE_L1_BYTES_1_20 };
	struct gdr_cufile_error e;
	unsigned char *buf;
	size_t k;

	if (!ops->cuFileGetStatsL3)
		return; /* stats_why says why already */
	buf = calloc(1, GDR_CUFILE_L3_ROOM);
	if (!buf) {
		gdr_fmt(io->stats_why, sizeof(io->stats_why), "out of memory");
		return;
	}
	e = ops->cuFileGetStatsL3(buf);
	if (e.err) {
		gdr_fmt(io->stats_why, sizeof(io->stats_why),
			"cuFileGetStatsL3 answered %d", e.err);
		free(buf);
		return;
	}
	for (k = 0; k < sizeof(l1) / sizeof(l1[0]); k++) {
		size_t at = l1[k] + GDR_CUFILE_L2_HIST_BYTES;
		uint32_t num, g;

		memcpy(&num, buf + at, sizeof(num));
		if (!num || num > GDR_CUFILE_STATS_GPUS)
			continue;
		for (g = 0; g < num; g++) {
			struct gdr_cufile_gpu_stats s;

			memcpy(&s, buf + at + 8 + g * sizeof(s), sizeof(s));
			if (s.read_bytes != rbytes || s.write_bytes != wbytes ||
			    s.n_nvfs_reads + s.n_p2p_reads + s.n_posix_reads ==
				    0)
				continue;
			io->nvfs_reads = s.n_nvfs_reads;
			io->p2p_reads = s.n_p2p_reads;
			io->posix_reads = s.n_posix_reads;
			io->nvfs_writes = s.n_nvfs_writes;
			io->p2p_writes = s.n_p2p_writes;
			io->posix_writes = s.n_posix_writes;
			io->stats = 1;
			free(buf);
			return;
		}
	}
	gdr_fmt(io->stats_why, sizeof(io->stats_why),
		"no GPU entry of cuFile's statistics counts this check's %llu "
		"bytes read and %llu written, in either layout known here",
		rbytes, wbytes);
	free(buf);
}

/* Count from now on, where this libcufile can. */
static void stats_start(const struct gdr_cufile_ops *ops,
			struct gdr_storage_io *io)
{
	struct gdr_cufile_error e = { 0, 0 };

	if (!ops->cuFileSetStatsLevel || !ops->cuFileStatsStart ||
	    !ops->cuFileStatsReset || !ops->cuFileGetStatsL3) {
		gdr_fmt(io->stats_why, sizeof(io->stats_why),
			"this libcufile has no statistics calls (they came "
			"with cuFile 1.15)");
		return;
	}
	e = ops->cuFileSetStatsLevel(3);
	if (!e.err)
		e = ops->cuFileStatsStart();
	if (!e.err)
		e = ops->cuFileStatsReset();
	if (e.err)
		gdr_fmt(io->stats_why, sizeof(io->stats_why),
			"starting cuFile's statistics answered %d", e.err);
}

/* --- the measurement ----------------------------------------------------- */

struct cuda_bufs {
	const struct gdr_cuda_ops *cu;
	CUcontext ctx;
	CUdevice dev;
	bool retained, pushed;
	CUdeviceptr dptr;
};

static void cuda_end(struct cuda_bufs *c)
{
	CUcontext popped;

	if (c->dptr && c->cu->cuMemFree(c->dptr) != CUDA_SUCCESS)
		gdr_debug("storage: cuMemFree failed");
	if (c->pushed && c->cu->cuCtxPopCurrent(&popped) != CUDA_SUCCESS)
		gdr_debug("storage: cuCtxPopCurrent failed");
	if (c->retained && c->cu->cuDevicePrimaryCtxRelease &&
	    c->cu->cuDevicePrimaryCtxRelease(c->dev) != CUDA_SUCCESS)
		gdr_debug("storage: cuDevicePrimaryCtxRelease failed");
}

/* GPU @gpu's primary context current, @bytes of its memory. 0, or
 * non-zero with why. */
static int cuda_begin(struct cuda_bufs *c, int gpu, unsigned long long bytes,
		      char *why, size_t n)
{
	const struct gdr_cuda *cuda = gdr_cuda_get(true);
	const struct gdr_dev *d = gdr_dev_get(gpu);
	CUresult r;
	char name[64];

	memset(c, 0, sizeof(*c));
	c->cu = &cuda->cu;
	if (!d || !c->cu->cuMemAlloc || !c->cu->cuMemFree ||
	    !c->cu->cuMemcpyHtoD || !c->cu->cuMemcpyDtoH) {
		gdr_fmt(why, n,
			"CUDA device %d or the driver's cuMemAlloc/cuMemcpy "
			"is not there",
			gpu);
		return -1;
	}
	c->dev = d->dev;
	r = c->cu->cuDevicePrimaryCtxRetain(&c->ctx, c->dev);
	c->retained = r == CUDA_SUCCESS;
	if (r == CUDA_SUCCESS) {
		r = c->cu->cuCtxPushCurrent(c->ctx);
		c->pushed = r == CUDA_SUCCESS;
	}
	if (r == CUDA_SUCCESS)
		r = c->cu->cuMemAlloc(&c->dptr, (size_t)bytes);
	if (r != CUDA_SUCCESS) {
		c->dptr = 0;
		gdr_fmt(why, n, "GPU %d: %s", gpu,
			gdr_cu_errname(c->cu, r, name, sizeof(name)));
		return -1;
	}
	return 0;
}

/* @fn over all @bytes: cuFileWrite or cuFileRead, piece after piece as
 * it answers. The bytes done, or its negative answer (errno in *@e). */
static long long all_io(const struct gdr_cufile_ops *ops, void *fh,
			CUdeviceptr dptr, unsigned long long bytes,
			bool writing, int *e)
{
	unsigned long long done = 0;

	*e = 0;
	while (done < bytes) {
		ssize_t r;

		errno = 0;
		r = writing ? ops->cuFileWrite(fh, (const void *)dptr,
					       bytes - done, (off_t)done,
					       (off_t)done)
			    : ops->cuFileRead(fh, (void *)dptr, bytes - done,
					      (off_t)done, (off_t)done);
		if (r < 0) {
			*e = r == -1 ? errno : 0;
			return r;
		}
		if (r == 0)
			break; /* the end of the file, or nothing moved */
		done += (unsigned long long)r;
	}
	return (long long)done;
}

/* pread(2) of @bytes into @buf: the bytes read, or -1 with errno. */
static long long all_pread(int fd, unsigned char *buf, unsigned long long bytes)
{
	unsigned long long done = 0;

	while (done < bytes) {
		ssize_t r = pread(fd, buf + done, bytes - done, (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		done += (unsigned long long)r;
	}
	return (long long)done;
}

static void fill(unsigned char *p, unsigned long long n)
{
	uint64_t x = now_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15;
	unsigned long long i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

static void compare(struct gdr_storage_io *io, const unsigned char *a,
		    const unsigned char *b, unsigned long long n)
{
	unsigned long long i;

	io->first_differ = -1;
	io->differ = 0;
	for (i = 0; i < n; i++) {
		if (a[i] == b[i])
			continue;
		if (io->first_differ < 0)
			io->first_differ = (long long)i;
		io->differ++;
	}
}

static void measure(struct job *j, struct gdr_storage *w, unsigned int i,
		    const struct gdr_cufile_ops *ops,
		    const struct gdr_path_facts *f)
{
	struct gdr_storage_path *p = &w->path[i];
	struct gdr_storage_io *io = &p->io;
	struct gdr_cufile_descr descr;
	struct gdr_cufile_error e;
	struct cuda_bufs c;
	unsigned char *ref = NULL, *back = NULL, *host = NULL;
	unsigned long long t0;
	void *fh = NULL;
	bool bufreg = false;
	int fd = -1, cfd = -1, dir = -1, err;

	io->gpu = j->gpu;
	io->readonly = p->kind == GDR_STORAGE_KIND_FILE;
	io->bytes = j->bytes;
	if (io->readonly) {
		io->bytes = p->size & ~(ALIGN - 1);
		if (io->bytes > j->bytes)
			io->bytes = j->bytes;
		if (!io->bytes) {
			gdr_fmt(io->why, sizeof(io->why),
				"the file is shorter than 4 KiB, the least "
				"one direct read takes");
			return;
		}
	} else if (read_only_mount(p)) {
		gdr_fmt(io->why, sizeof(io->why),
			"the mount is read-only (ro): nothing can be written "
			"there");
		return;
	}
	step(j, w, "opening a file under %s", p->path);
	if (io->readonly) {
		io->odirect = 1;
		fd = gdr_path_reopen(f, O_RDONLY | O_DIRECT);
		if (fd < 0 && errno == EINVAL) {
			io->odirect = 0;
			fd = gdr_path_reopen(f, O_RDONLY);
		}
	} else {
		dir = gdr_path_reopen(f, O_RDONLY);
		fd = dir < 0 ? -1 : scratch(dir, &io->odirect);
	}
	if (fd < 0) {
		err = errno ? errno : EIO;
		gdr_fmt(io->why, sizeof(io->why),
			fd == -2 ? "the temporary file under %s could not be "
				   "removed (%s): remove .gdr-info-storage-* "
				   "there"
			: io->readonly ? "%s cannot be opened for reading (%s)"
				       : "no file can be created under %s (%s)",
			p->path, gdr_errno_name(err));
		if (dir >= 0)
			close(dir);
		return;
	}
	if (posix_memalign((void **)&ref, ALIGN, io->bytes) ||
	    posix_memalign((void **)&back, ALIGN, io->bytes) ||
	    (!io->readonly &&
	     posix_memalign((void **)&host, ALIGN, io->bytes))) {
		gdr_fmt(io->why, sizeof(io->why),
			"out of host memory for %llu bytes", io->bytes);
		goto out;
	}
	if (cuda_begin(&c, j->gpu, io->bytes, io->why, sizeof(io->why))) {
		cuda_end(&c);
		goto out;
	}
	if (!io->readonly) {
		fill(ref, io->bytes);
		if (c.cu->cuMemcpyHtoD(c.dptr, ref, io->bytes) !=
		    CUDA_SUCCESS) {
			gdr_fmt(io->why, sizeof(io->why),
				"cuMemcpyHtoD of the pattern failed");
			goto cuda;
		}
	}
	step(j, w, "cuFileHandleRegister of %s", p->path);
	cfd = cufile_fd(fd, io->readonly, io->odirect);
	memset(&descr, 0, sizeof(descr));
	descr.type = GDR_CUFILE_HANDLE_FD;
	descr.handle.fd = cfd >= 0 ? cfd : fd;
	e = ops->cuFileHandleRegister(&fh, &descr);
	io->reg_err = e.err;
	io->state = 1; /* cuFile has answered: a result, whatever it is */
	if (e.err)
		goto cuda;
	if (ops->cuFileBufRegister && ops->cuFileBufDeregister)
		bufreg = !ops->cuFileBufRegister((const void *)c.dptr,
						 io->bytes, 0)
				  .err;
	stats_start(ops, io);
	if (!io->readonly) {
		step(j, w, "cuFileWrite of %llu bytes to %s", io->bytes,
		     p->path);
		t0 = now_ns();
		io->write_ret = all_io(ops, fh, c.dptr, io->bytes, true,
				       &io->write_errno);
		io->write_ns = now_ns() - t0;
		if (io->write_ret != (long long)io->bytes)
			goto handle;
	}
	/* The GPU buffer cleared, so that the read must bring every byte. */
	memset(back, 0, io->bytes);
	if (c.cu->cuMemcpyHtoD(c.dptr, back, io->bytes) != CUDA_SUCCESS) {
		gdr_fmt(io->why, sizeof(io->why),
			"cuMemcpyHtoD of zeros failed");
		goto handle;
	}
	step(j, w, "cuFileRead of %llu bytes from %s", io->bytes, p->path);
	t0 = now_ns();
	io->read_ret =
		all_io(ops, fh, c.dptr, io->bytes, false, &io->read_errno);
	io->read_ns = now_ns() - t0;
	if (io->read_ret == (long long)io->bytes)
		stats_read(ops, io, io->bytes, io->readonly ? 0 : io->bytes);
	if (c.cu->cuMemcpyDtoH(back, c.dptr, io->bytes) != CUDA_SUCCESS) {
		gdr_fmt(io->why, sizeof(io->why),
			"cuMemcpyDtoH of what was read failed");
		goto handle;
	}
	step(j, w, "pread of %llu bytes from %s", io->bytes, p->path);
	t0 = now_ns();
	io->pread_ret = all_pread(fd, io->readonly ? ref : host, io->bytes);
	io->pread_errno = io->pread_ret < 0 ? errno : 0;
	io->pread_ns = now_ns() - t0;
	/* A named file: what cuFile read against what pread read. */
	if (io->read_ret == (long long)io->bytes &&
	    (!io->readonly || io->pread_ret == (long long)io->bytes)) {
		compare(io, ref, back, io->bytes);
		io->checked = 1;
	} else if (io->read_ret == (long long)io->bytes) {
		gdr_fmt(io->why, sizeof(io->why),
			"pread failed, so the bytes cuFile read cannot be "
			"checked");
	}
handle:
	if (ops->cuFileStatsStop)
		ops->cuFileStatsStop();
	if (bufreg)
		ops->cuFileBufDeregister((const void *)c.dptr);
	ops->cuFileHandleDeregister(fh);
cuda:
	cuda_end(&c);
out:
	free(ref);
	free(back);
	free(host);
	if (cfd >= 0)
		close(cfd);
	close(fd);
	if (dir >= 0)
		close(dir);
}

/* --- cuFile itself ------------------------------------------------------- */

static void cufile_open(struct job *j, struct gdr_storage *w,
			struct gdr_cufile_lib *lib)
{
	struct gdr_storage_cufile *cf = &w->cufile;
	const struct gdr_cufile_ops *ops = &lib->ops;
	struct gdr_cufile_props props;
	struct gdr_cufile_error e;
	bool b;

	step(j, w, "loading libcufile");
	cf->load_err = gdr_seam()->cufile_load(lib, gdr_env_cufile_lib(),
					       cf->why, sizeof(cf->why));
	if (cf->load_err)
		return;
	gdr_fmt(cf->library, sizeof(cf->library), "%s", lib->file);
	gdr_fmt(cf->how, sizeof(cf->how), "%s", lib->how);
	if (ops->cuFileGetVersion && ops->cuFileGetVersion(&cf->version).err)
		cf->version = -1;
	step(j, w, "cuFileDriverOpen");
	e = ops->cuFileDriverOpen();
	cf->open_err = e.err;
	cf->open_cu_err = e.cu_err;
	if (e.err)
		return;
	step(j, w, "cuFileDriverGetProperties");
	memset(&props, 0, sizeof(props));
	e = ops->cuFileDriverGetProperties(&props);
	cf->props_err = e.err;
	if (!e.err) {
		cf->nvfs_major = props.nvfs.major_version;
		cf->nvfs_minor = props.nvfs.minor_version;
		cf->dstatusflags = props.nvfs.dstatusflags;
		cf->dcontrolflags = props.nvfs.dcontrolflags;
		cf->fflags = props.fflags;
	}
	/* The settings in force, after cufile.json was read. */
	if (ops->cuFileGetParameterBool) {
		cf->allow_compat = ops->cuFileGetParameterBool(
					      GDR_CUFILE_PARAM_ALLOW_COMPAT, &b)
						   .err
					   ? -1
					   : b;
		cf->force_compat = ops->cuFileGetParameterBool(
					      GDR_CUFILE_PARAM_FORCE_COMPAT, &b)
						   .err
					   ? -1
					   : b;
		cf->use_p2pdma = ops->cuFileGetParameterBool(
					    GDR_CUFILE_PARAM_USE_P2PDMA, &b)
						 .err
					 ? -1
					 : b;
	}
}

static void run(struct job *j, struct gdr_storage *w)
{
	struct gdr_path_facts f[GDR_STORAGE_MAX_PATHS];
	const struct gdr_cuda *cuda;
	struct gdr_cufile_lib *lib;
	struct gdr_cufile_error e;
	unsigned int i;

	for (i = 0; i < (unsigned int)w->num_paths; i++) {
		step(j, w, "looking at %s", w->path[i].path);
		look(&w->path[i], &f[i]);
	}
	cuda = gdr_cuda_get(true);
	if (cuda->state != GDR_CUDA_READY || j->gpu >= cuda->num_devices) {
		/* Not even loaded: cuFile needs the CUDA driver (1.20's
		 * cuFileDriverOpen spins without one). */
		gdr_fmt(w->cufile.why, sizeof(w->cufile.why),
			"not asked: no CUDA device %d to read into", j->gpu);
		goto out;
	}
	lib = calloc(1, sizeof(*lib));
	if (!lib) {
		gdr_fmt(w->cufile.why, sizeof(w->cufile.why), "out of memory");
		goto out;
	}
	cufile_open(j, w, lib);
	for (i = 0; i < (unsigned int)w->num_paths && !w->cufile.load_err;
	     i++) {
		struct gdr_storage_path *p = &w->path[i];

		if (w->cufile.open_err)
			gdr_fmt(p->io.why, sizeof(p->io.why),
				"cuFile's driver did not open");
		else if (p->err || (p->kind != GDR_STORAGE_KIND_FILE &&
				    p->kind != GDR_STORAGE_KIND_DIR))
			gdr_fmt(p->io.why, sizeof(p->io.why),
				"the path is not a directory or a regular "
				"file");
		else {
			pthread_mutex_lock(&j->lock);
			j->cur = (int)i;
			pthread_mutex_unlock(&j->lock);
			measure(j, w, i, &lib->ops, &f[i]);
			pthread_mutex_lock(&j->lock);
			j->cur = -1;
			pthread_mutex_unlock(&j->lock);
		}
	}
	if (!w->cufile.load_err && !w->cufile.open_err) {
		step(j, w, "cuFileDriverClose");
		e = lib->ops.cuFileDriverClose_v2
			    ? lib->ops.cuFileDriverClose_v2()
		    : lib->ops.cuFileDriverClose
			    ? lib->ops.cuFileDriverClose()
			    : (struct gdr_cufile_error){ 0, 0 };
		if (e.err)
			gdr_debug("storage: cuFileDriverClose answered %d",
				  e.err);
	}
	free(lib);
out:
	for (i = 0; i < (unsigned int)w->num_paths; i++) {
		if (!w->path[i].err && f[i].fd >= 0)
			close(f[i].fd);
		if (!w->path[i].io.state && !w->path[i].io.why[0])
			gdr_fmt(w->path[i].io.why, sizeof(w->path[i].io.why),
				"%s",
				w->cufile.load_err > 0 ? w->cufile.why
				: w->cufile.why[0]     ? w->cufile.why
						       : "not measured");
	}
}

static void *worker(void *arg)
{
	struct job *j = arg;
	struct gdr_storage *w = malloc(sizeof(*w));

	if (w) {
		pthread_mutex_lock(&j->lock);
		*w = j->st;
		pthread_mutex_unlock(&j->lock);
		run(j, w);
	}
	pthread_mutex_lock(&j->lock);
	if (w)
		j->st = *w;
	else
		gdr_fmt(j->st.cufile.why, sizeof(j->st.cufile.why),
			"out of memory");
	j->done = true;
	pthread_cond_signal(&j->cond);
	pthread_mutex_unlock(&j->lock);
	free(w);
	put(j);
	return NULL;
}

static void init(struct gdr_storage *st, const char *const *paths,
		 unsigned int num)
{
	unsigned int i;

	memset(st, 0, sizeof(*st));
	st->num_paths =
		num < GDR_STORAGE_MAX_PATHS ? (int)num : GDR_STORAGE_MAX_PATHS;
	st->cufile.load_err = -1;
	st->cufile.version = -1;
	st->cufile.open_err = -1;
	st->cufile.props_err = -1;
	st->cufile.allow_compat = -1;
	st->cufile.force_compat = -1;
	st->cufile.use_p2pdma = -1;
	for (i = 0; i < (unsigned int)st->num_paths; i++) {
		struct gdr_storage_path *p = &st->path[i];

		gdr_fmt(p->path, sizeof(p->path), "%s", paths[i]);
		p->mnt_id = -1;
		p->route_err = -1;
		p->io.gpu = -1;
		p->io.reg_err = -1;
		p->io.first_differ = -1;
	}
}

int gdr_storage_check(struct gdr_storage *st, const char *const *paths,
		      unsigned int num, unsigned long long bytes,
		      unsigned int timeout_ms, int gpu)
{
	unsigned long long limit =
		timeout_ms ? timeout_ms * 1000000ULL
			   : GDS_IO_STEP_TIMEOUT_S * 1000000000ULL;
	pthread_condattr_t ca;
	struct job *j;
	pthread_t t;
	bool late = false;
	unsigned int i;

	init(st, paths, num);
	if (gdr_storage_stuck()) {
		gdr_fmt(st->cufile.why, sizeof(st->cufile.why),
			"not asked: an earlier storage check is still inside "
			"a step that did not return");
		return 0;
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return ENOMEM;
	j->st = *st;
	j->bytes = bytes ? (bytes + ALIGN - 1) & ~(ALIGN - 1) : GDS_IO_BYTES;
	j->gpu = gpu;
	j->refs = 2;
	j->cur = -1;
	j->started = now_ns();
	gdr_fmt(j->step, sizeof(j->step), "starting");
	pthread_mutex_init(&j->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&t, NULL, worker, j)) {
		gdr_fmt(st->cufile.why, sizeof(st->cufile.why),
			"no thread could be started for the check");
		j->refs = 1;
		put(j);
		return 0;
	}
	pthread_mutex_lock(&j->lock);
	while (!j->done) {
		unsigned long long end = j->started + limit, now = now_ns();
		struct timespec ts;

		if (now >= end) {
			late = true;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)((end - now) / 1000000000ULL);
		ts.tv_nsec += (long)((end - now) % 1000000000ULL);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&j->cond, &j->lock, &ts);
	}
	*st = j->st;
	if (late) {
		__atomic_store_n(&stuck, true, __ATOMIC_RELEASE);
		gdr_fmt(st->cufile.stuck, sizeof(st->cufile.stuck), "%s",
			j->step);
		/* Stuck before cuFile was even loaded: say at what. */
		if (st->cufile.load_err < 0 && !st->cufile.why[0])
			gdr_fmt(st->cufile.why, sizeof(st->cufile.why),
				"not asked: %s did not return within %llu ms",
				j->step, limit / 1000000ULL);
		for (i = 0; i < (unsigned int)st->num_paths; i++) {
			struct gdr_storage_io *io = &st->path[i].io;

			/* Not even looked at: stat(2) itself did not return
			 * (a hard NFS mount whose server is gone). */
			if (!st->path[i].err && !st->path[i].kind)
				st->path[i].err = ETIMEDOUT;

			/* What a step left half done is not a result. */
			if (io->state && (int)i != j->cur)
				continue;
			io->state = 0;
			gdr_fmt(io->why, sizeof(io->why),
				"%s did not return within %llu ms; the doctor "
				"went on without it",
				j->step, limit / 1000000ULL);
		}
	}
	pthread_mutex_unlock(&j->lock);
	if (late)
		pthread_detach(t);
	else
		pthread_join(t, NULL);
	put(j);
	return 0;
}
