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
 * (Linux 5.6), else name by name from the root's descriptor, each name
 * opened without following a link and every link resolved here. A path
 * that is not below the root is refused (EXDEV): nothing is read from the
 * container's own files in its place.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os.h"
#include "walk.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0 /* linux/magic.h */
#endif

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

#define MAX_DEPTH 256 /* directories below the root in one path */
#define EAGAIN_TRIES 32

/*
 * Without openat2: @rel resolved below the root one name at a time, each
 * opened O_PATH | O_NOFOLLOW relative to the directory descriptor before
 * it. A link is read and resolved here (an absolute one from the root,
 * ".." never above it, at most GDR_WALK_MAX_LINKS), so a directory
 * swapped for a link meanwhile is met as that link, never followed by
 * the kernel out of the root. The O_PATH descriptor, or -1 with errno.
 */
static int walk_in_root(const char *rel, bool nofollow)
{
	char rest[2 * PATH_MAX], target[PATH_MAX], next[2 * PATH_MAX];
	int dirs[MAX_DEPTH], depth = 0, links = 0, fd = -1, err = 0;
	struct stat st;

	if (snprintf(rest, sizeof(rest), "%s", rel) >= (int)sizeof(rest)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (;;) {
		char *p = rest, *e, comp[NAME_MAX + 1];
		size_t len;
		bool last;
		ssize_t r;

		while (*p == '/')
			p++;
		if (!*p) {
			/* The root itself, or a path that ended in "..". */
			fd = openat(depth ? dirs[depth - 1] : root_fd, ".",
				    O_PATH | O_CLOEXEC);
			err = fd < 0 ? errno : 0;
			break;
		}
		e = strchr(p, '/');
		len = e ? (size_t)(e - p) : strlen(p);
		if (len > NAME_MAX) {
			err = ENAMETOOLONG;
			break;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		memmove(rest, p + len, strlen(p + len) + 1);
		last = !rest[strspn(rest, "/")];
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			if (depth) /* never above the root */
				close(dirs[--depth]);
			continue;
		}
		fd = openat(depth ? dirs[depth - 1] : root_fd, comp,
			    O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			err = errno;
			break;
		}
		if (S_ISLNK(st.st_mode) && !(last && nofollow)) {
			r = readlinkat(fd, "", target, sizeof(target) - 1);
			close(fd);
			fd = -1;
			if (r < 0 || ++links > GDR_WALK_MAX_LINKS) {
				err = r < 0 ? errno : ELOOP;
				break;
			}
			target[r] = '\0';
			if (snprintf(next, sizeof(next), "%s/%s", target,
				     rest) >= (int)sizeof(rest)) {
				err = ENAMETOOLONG;
				break;
			}
			memcpy(rest, next, strlen(next) + 1);
			if (target[0] == '/') /* from the root again */
				while (depth)
					close(dirs[--depth]);
			continue;
		}
		if (last)
			break; /* the answer, whatever it is */
		if (!S_ISDIR(st.st_mode) || depth == MAX_DEPTH) {
			err = S_ISDIR(st.st_mode) ? ENAMETOOLONG : ENOTDIR;
			break;
		}
		dirs[depth++] = fd;
		fd = -1;
	}
	while (depth)
		close(dirs[--depth]);
	if (err) {
		if (fd >= 0)
			close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/*
 * @rel (below the root) as an O_PATH descriptor, resolved inside the root;
 * with @nofollow a link at the end is itself the answer. -1 with errno.
 */
static int resolve_in_root(const char *rel, bool nofollow)
{
	struct gdr_open_how how = {
		.flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd, tries = 0;

	if (__atomic_load_n(&have_openat2, __ATOMIC_RELAXED) >= 0) {
		/* EAGAIN: a rename somewhere on the system raced a ".."
		 * (openat2(2) says to try again). */
		do
			fd = (int)syscall(SYS_openat2, root_fd,
					  rel[0] ? rel : ".", &how,
					  sizeof(how));
		while (fd < 0 && errno == EAGAIN && ++tries < EAGAIN_TRIES);
		if (fd >= 0 ||
		    (errno != ENOSYS && errno != EPERM && errno != E2BIG)) {
			__atomic_store_n(&have_openat2, 1, __ATOMIC_RELAXED);
			return fd;
		}
		if (__atomic_load_n(&have_openat2, __ATOMIC_RELAXED) == 1)
			return -1; /* openat2 works: a real EPERM */
		__atomic_store_n(&have_openat2, -1, __ATOMIC_RELAXED);
	}
	return walk_in_root(rel, nofollow);
}

/*
 * @path as an O_PATH descriptor: inside the root when one is set (a path
 * not below it is EXDEV), else as the kernel resolves it.
 */
static int resolve(const char *path, bool nofollow)
{
	size_t len = strlen(root_path);

	if (root_fd < 0)
		return open(path,
			    O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	if (strncmp(path, root_path, len) || (path[len] && path[len] != '/')) {
		errno = EXDEV;
		return -1;
	}
	path += len;
	while (*path == '/')
		path++;
	return resolve_in_root(path, nofollow);
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
	/*
	 * No /proc: no way to open the inode checked. Under a root (a tree
	 * someone else may change) nothing is opened: what was checked could
	 * be swapped for a device before the open. The node's own sysfs and
	 * procfs cannot be: the path once more, its inode compared.
	 */
	if (root_fd >= 0) {
		errno = ENOSYS;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
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
	int pfd = resolve(path, false), fd, err;

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
	struct stat st;
	ssize_t r;
	int pfd, err;

	if (root_fd < 0)
		return readlink(path, buf, n);
	pfd = resolve(path, true);
	if (pfd < 0)
		return -1;
	/* Not a link: EINVAL, as readlink(2) says (readlinkat of "" would
	 * say ENOENT). */
	if (fstat(pfd, &st) || !S_ISLNK(st.st_mode)) {
		err = errno ? errno : EINVAL;
		close(pfd);
		errno = S_ISLNK(st.st_mode) ? err : EINVAL;
		return -1;
	}
	r = readlinkat(pfd, "", buf, n);
	err = errno;
	close(pfd);
	errno = err;
	return r;
}

int gdr_lstat_node(const char *path, struct stat *st)
{
	int pfd, err;

	if (root_fd < 0)
		return lstat(path, st) ? errno : 0;
	pfd = resolve(path, true);
	if (pfd < 0)
		return errno ? errno : EIO;
	err = fstat(pfd, st) ? errno : 0;
	close(pfd);
	return err;
}

const char *gdr_open_root(void)
{
	return root_path;
}

int gdr_root_ns_stat(const char *pid_ns, struct stat *st)
{
	struct statfs fs;
	char dir[64];
	int fd, err;

	if (root_fd < 0)
		return ENOENT;
	/* The directory resolved inside the root. The last name is followed
	 * only where it is the kernel's own link to a namespace, on procfs:
	 * anywhere else it is a link like any other, whose target the real
	 * root would resolve (a tree whose ns/net points at
	 * /proc/self/ns/net would pass for the host's). */
	gdr_fmt(dir, sizeof(dir), "proc/%s", pid_ns);
	*strrchr(dir, '/') = '\0';
	fd = resolve_in_root(dir, false);
	if (fd < 0)
		return errno ? errno : EIO;
	if (fstatfs(fd, &fs))
		err = errno;
	else if (fs.f_type != PROC_SUPER_MAGIC)
		err = EXDEV;
	else
		err = fstatat(fd, strrchr(pid_ns, '/') + 1, st, 0) ? errno : 0;
	close(fd);
	return err;
}
