/* SPDX-License-Identifier: MIT */
/*
 * How the library opens a node's file (the seam's open_file and
 * read_link in production).
 *
 * Opening can be an action: opening /dev/watchdog arms it, a tape rewinds,
 * a FIFO's writer wakes. So a path is first resolved to an O_PATH
 * descriptor, which opens nothing, and only a regular file (sysfs and
 * procfs attributes are) or a directory is then opened for reading, the
 * very inode that was checked (through /proc/self/fd; where /proc is not
 * mounted, the path again, its inode compared).
 *
 * Under a root (gdr-info --host-root DIR), every path resolves inside DIR:
 * an absolute link (/etc/cufile.json -> /opt/gds/cufile.json) from DIR, ".."
 * never above it, with openat2(RESOLVE_IN_ROOT) where the kernel has it
 * (Linux 5.6), else with the walk gdr-info's snapshots use (walk.c) over
 * the directory tree, one name at a time without following links. A path
 * that is not below the root is refused (EXDEV): nothing is read from the
 * container's own files in its place.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os.h"
#include "walk.h"

#ifndef RESOLVE_NO_MAGICLINKS
#define RESOLVE_NO_MAGICLINKS 0x02
#endif
#ifndef RESOLVE_IN_ROOT
#define RESOLVE_IN_ROOT 0x10
#endif
#ifndef SYS_openat2
#define SYS_openat2 437 /* the same on every architecture */
#endif

/* struct open_how of linux/openat2.h (Linux 5.6). */
struct gdr_open_how {
	unsigned long long flags, mode, resolve;
};

/* The root's descriptor and real path, or -1 / "". Set before any read
 * (gdr-info sets it first), then only read. */
static int root_fd = -1;
static char root_path[PATH_MAX];
/* openat2 works here: 1 yes, 0 not tried, -1 no (ENOSYS, or a seccomp
 * filter's EPERM in an older container runtime). */
static int have_openat2;

int gdr_open_root_set(const char *real)
{
	int fd = -1;

	if (real && real[0] && strcmp(real, "/")) {
		if (strlen(real) >= sizeof(root_path))
			return ENAMETOOLONG;
		fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return errno;
	}
	if (root_fd >= 0)
		close(root_fd);
	root_fd = fd;
	snprintf(root_path, sizeof(root_path), "%s", fd >= 0 ? real : "");
	return 0;
}

/* The walk's lookup below the root: @name has no links but its last. */
static int root_lookup(void *ctx, const char *name, enum gdr_walk_kind *kind,
		       char *target, size_t n)
{
	struct stat st;
	ssize_t r;

	(void)ctx;
	if (fstatat(root_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -1;
	if (S_ISLNK(st.st_mode)) {
		r = readlinkat(root_fd, name, target, n - 1);
		if (r < 0)
			return -1;
		target[r] = '\0';
		*kind = GDR_WALK_LINK;
	} else {
		*kind = S_ISDIR(st.st_mode)   ? GDR_WALK_DIR
			: S_ISREG(st.st_mode) ? GDR_WALK_FILE
					      : GDR_WALK_OTHER;
	}
	return 0;
}

/*
 * @rel (below the root) opened with @oflags (O_PATH: nothing is opened but
 * the name), resolved inside the root; with @nofollow a link at the end is
 * itself the answer. -1 with errno.
 */
static int resolve_in_root(const char *rel, bool nofollow, int oflags)
{
	struct gdr_open_how how = {
		.flags = (unsigned long long)oflags | O_CLOEXEC |
			 (nofollow ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char name[PATH_MAX], path[PATH_MAX];
	enum gdr_walk_kind kind;
	int fd;

	if (__atomic_load_n(&have_openat2, __ATOMIC_RELAXED) >= 0) {
		fd = (int)syscall(SYS_openat2, root_fd, rel[0] ? rel : ".",
				  &how, sizeof(how));
		if (fd >= 0 ||
		    (errno != ENOSYS && errno != EPERM && errno != E2BIG)) {
			__atomic_store_n(&have_openat2, 1, __ATOMIC_RELAXED);
			return fd;
		}
		if (__atomic_load_n(&have_openat2, __ATOMIC_RELAXED) == 1)
			return -1; /* openat2 works: a real EPERM */
		__atomic_store_n(&have_openat2, -1, __ATOMIC_RELAXED);
	}
	/* The walk resolves every link; the name it gives has none. */
	if (snprintf(path, sizeof(path), "/%s", rel) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (gdr_walk(root_lookup, NULL, path, nofollow, name, sizeof(name),
		     &kind, NULL, NULL))
		return -1;
	return openat(root_fd, name[0] ? name : ".",
		      oflags | O_CLOEXEC | O_NOFOLLOW);
}

/*
 * @path opened with @oflags: inside the root when one is set (a path not
 * below it is EXDEV), else as the kernel resolves it.
 */
static int resolve(const char *path, bool nofollow, int oflags)
{
	size_t len = strlen(root_path);

	if (root_fd < 0)
		return open(path,
			    oflags | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	if (strncmp(path, root_path, len) || (path[len] && path[len] != '/')) {
		errno = EXDEV;
		return -1;
	}
	path += len;
	while (*path == '/')
		path++;
	return resolve_in_root(path, nofollow, oflags);
}

/* The regular file or directory @pfd (O_PATH) names, opened for reading. */
static int reopen(int pfd, const struct stat *st, const char *path)
{
	char self[64];
	struct stat now;
	int fd;

	if (S_ISDIR(st->st_mode))
		return openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 || errno != ENOENT)
		return fd;
	/* No /proc: the path once more (inside the root, if one is set),
	 * then the inode compared. A file swapped in between is refused,
	 * not read. */
	fd = resolve(path, false, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &now) || now.st_dev != st->st_dev ||
	    now.st_ino != st->st_ino) {
		close(fd);
		errno = GDR_ENOTREG;
		return -1;
	}
	return fd;
}

int gdr_open_node(const char *path)
{
	struct stat st;
	int pfd = resolve(path, false, O_PATH), fd, err;

	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st)) {
		err = errno;
		close(pfd);
		errno = err;
		return -1;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		close(pfd);
		errno = GDR_ENOTREG;
		return -1;
	}
	fd = reopen(pfd, &st, path);
	err = errno;
	close(pfd);
	errno = err;
	return fd;
}

ssize_t gdr_readlink_node(const char *path, char *buf, size_t n)
{
	ssize_t r;
	int pfd, err;

	if (root_fd < 0)
		return readlink(path, buf, n);
	pfd = resolve(path, true, O_PATH);
	if (pfd < 0)
		return -1;
	r = readlinkat(pfd, "", buf, n);
	err = errno;
	close(pfd);
	errno = err;
	return r;
}

const char *gdr_open_root(void)
{
	return root_path;
}
