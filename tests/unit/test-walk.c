/* SPDX-License-Identifier: MIT */
/*
 * Resolving a path through links inside a namespace, at the kernel's
 * limit: 40 links in one path resolve, a 41st is ELOOP (Linux's
 * MAXSYMLINKS counts every link of the path, in every component). Three
 * resolvers must agree with the kernel: gdr_walk (base/walk.c: snapshot
 * replay and captures), and under --host-root the library's own opening
 * (os/open.c) both through openat2(RESOLVE_IN_ROOT) and, where openat2
 * is missing (before Linux 5.6, or refused by a seccomp filter), through
 * its name-by-name walk. The kernel itself is asked first, so that the
 * numbers below are the kernel's, not copied from the code under test.
 *
 * The walk without openat2 is forced by this program's syscall(), which
 * the library's static objects call instead of the C library's: it
 * answers openat2 with ENOSYS, as an old kernel does.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fakes.h"
#include "walk.h"

#ifndef SYS_openat2
#define SYS_openat2 437 /* as os/open.c: the same on every architecture */
#endif

/* --- openat2 answered ENOSYS on request ------------------------------- */

static int no_openat2;	    /* answer openat2 with ENOSYS */
static int openat2_calls;   /* openat2 calls seen */
static int openat2_refused; /* ... that the kernel itself refused */

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;
	int i;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "syscall");
	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_openat2) {
		long r;

		openat2_calls++;
		if (no_openat2) {
			errno = ENOSYS;
			return -1;
		}
		r = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		if (r < 0 && (errno == ENOSYS || errno == EPERM))
			openat2_refused++;
		return r;
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/*
 * The namespace of every case: @a links d1 -> d2 -> ... -> dA -> D (a
 * directory), and in D @b links e1 -> ... -> eB -> f (a file). The path
 * "/d1/e1" passes a + b links ("/D/e1" without the first chain, "/d1/f"
 * without the second). @absolute: each target is written from the root
 * ("/d2", "/D/e2"), which inside a namespace starts again at its root.
 */
struct chains {
	int a, b, absolute;
};

static void chain_path(const struct chains *c, char *out, size_t n)
{
	snprintf(out, n, "/%s/%s", c->a ? "d1" : "D", c->b ? "e1" : "f");
}

/* The target of link @k of a chain of @len ending at @end, under @dir
 * ("" or "D/"). */
static void chain_target(const struct chains *c, const char *dir, char name,
			 int k, int len, const char *end, char *t, size_t n)
{
	const char *from = c->absolute ? "/" : "";

	if (k < len)
		snprintf(t, n, "%s%s%c%d", from, c->absolute ? dir : "", name,
			 k + 1);
	else
		snprintf(t, n, "%s%s%s", from, c->absolute ? dir : "", end);
}

/* "%c%d" whole: @s is @c then a number from 1 to @max; its number, or 0. */
static int link_number(const char *s, char c, int max)
{
	int k, used = 0;

	if (s[0] != c || sscanf(s + 1, "%d%n", &k, &used) != 1 || s[1 + used] ||
	    k < 1 || k > max)
		return 0;
	return k;
}

static int chain_lookup(void *ctx, const char *name, enum gdr_walk_kind *kind,
			char *target, size_t n)
{
	const struct chains *c = ctx;
	int k;

	if (!strcmp(name, "D")) {
		*kind = GDR_WALK_DIR;
		return 0;
	}
	if (!strcmp(name, "D/f")) {
		*kind = GDR_WALK_FILE;
		return 0;
	}
	if ((k = link_number(name, 'd', c->a))) {
		*kind = GDR_WALK_LINK;
		chain_target(c, "", 'd', k, c->a, "D", target, n);
		return 0;
	}
	if (!strncmp(name, "D/", 2) && (k = link_number(name + 2, 'e', c->b))) {
		*kind = GDR_WALK_LINK;
		chain_target(c, "D/", 'e', k, c->b, "f", target, n);
		return 0;
	}
	errno = ENOENT;
	return -1;
}

static void count_link(void *arg, const char *name, const char *target)
{
	(void)name;
	(void)target;
	++*(int *)arg;
}

/* gdr_walk over the chains: 0 (and "D/f", a file, every link told to
 * on_link), or the errno. */
static int walk_in_memory(const struct chains *c)
{
	enum gdr_walk_kind kind = GDR_WALK_OTHER;
	char path[32], out[64] = "";
	int seen = 0;

	chain_path(c, path, sizeof(path));
	errno = 0;
	if (gdr_walk(chain_lookup, (void *)c, path, 0, out, sizeof(out), &kind,
		     count_link, &seen))
		return errno;
	CHECK_STR(out, "D/f");
	CHECK_INT(kind, GDR_WALK_FILE);
	CHECK_INT(seen, c->a + c->b);
	return 0;
}

/* The chains on disk below @root (a fresh directory). */
static void make_chains(const char *root, const struct chains *c)
{
	char path[PATH_MAX], target[64];
	int k;

	snprintf(path, sizeof(path), "%s/D", root);
	CHECK_INT(mkdir(path, 0755), 0);
	CHECK_INT(fixture_write(root, "D/f", "the end\n"), 0);
	for (k = 1; k <= c->a; k++) {
		snprintf(path, sizeof(path), "%s/d%d", root, k);
		chain_target(c, "", 'd', k, c->a, "D", target, sizeof(target));
		CHECK_INT(symlink(target, path), 0);
	}
	for (k = 1; k <= c->b; k++) {
		snprintf(path, sizeof(path), "%s/D/e%d", root, k);
		chain_target(c, "D/", 'e', k, c->b, "f", target,
			     sizeof(target));
		CHECK_INT(symlink(target, path), 0);
	}
}

/* The kernel's own answer for relative chains: 0 or its errno. */
static int kernel_opens(const char *root, const struct chains *c)
{
	char path[PATH_MAX + 32], rel[32];
	int fd;

	chain_path(c, rel, sizeof(rel));
	snprintf(path, sizeof(path), "%s%s", root, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

#define OPENAT2_REFUSED -1000 /* openat2 cannot be asked here */

/*
 * gdr_open_node under the root @root (as gdr-info --host-root does), in a
 * child: the library remembers whether openat2 works, once per process.
 * @walk: openat2 answers ENOSYS. The child's exit status: 0 opened (and
 * the file read is D/f's), 100 + errno refused, 99 something else, 98
 * the walk was not the one asked for, 97 openat2 is refused here.
 */
static int library_opens(const char *root, const struct chains *c, int walk)
{
	char path[PATH_MAX + 32], rel[32], buf[16] = "";
	pid_t pid;
	int st = -1;

	chain_path(c, rel, sizeof(rel));
	snprintf(path, sizeof(path), "%s%s", root, rel);
	pid = fork();
	if (pid == 0) {
		int fd, err;
		ssize_t r;

		no_openat2 = walk;
		if (gdr_open_root_set(root))
			_exit(99);
		fd = gdr_open_node(path);
		err = errno;
		/* The walk: openat2 asked once, then never again. */
		if (walk && openat2_calls != 1)
			_exit(98);
		if (!walk && openat2_refused)
			_exit(97);
		if (fd < 0)
			_exit(err > 0 && err < 100 ? 100 + err : 99);
		r = read(fd, buf, sizeof(buf) - 1);
		_exit(r == 8 && !memcmp(buf, "the end\n", 8) ? 0 : 99);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	st = WEXITSTATUS(st);
	if (st == 97) {
		static int said;

		if (!said++)
			printf("SKIP openat2 is refused here (an old kernel, a "
			       "seccomp filter, valgrind): only the walk is "
			       "checked\n");
		return OPENAT2_REFUSED;
	}
	return st == 0 ? 0 : st > 100 ? st - 100 : -st;
}

static void one_case(const struct chains *c, int want)
{
	char real[PATH_MAX], scope[96];
	struct fixture fx;
	int got;

	snprintf(scope, sizeof(scope), "%d + %d links, %s targets", c->a, c->b,
		 c->absolute ? "absolute" : "relative");
	check_scope = scope;
	CHECK_INT(walk_in_memory(c), want);
	if (fixture_make(&fx) || !realpath(fx.root, real)) {
		CHECK_(0, "a fixture: %s", strerror(errno));
		return;
	}
	make_chains(fx.root, c);
	/* Absolute targets leave a directory the kernel resolves from the
	 * real root: only the relative chains are the kernel's question. */
	if (!c->absolute)
		CHECK_INT(kernel_opens(real, c), want);
	got = library_opens(real, c, 0);
	if (got != OPENAT2_REFUSED)
		CHECK_INT(got, want);
	CHECK_INT(library_opens(real, c, 1), want);
	fixture_remove(&fx);
}

/*
 * The root's edges, through openat2 (@walk 0) and the walk (1), in a
 * child: a file; a path through a file (ENOTDIR, as the kernel says);
 * lstat and readlink of a link (not followed), lstat of a missing name
 * (ENOENT); a link in the middle (followed); a sibling of the root
 * sharing its name as a prefix (EXDEV). 0, or the number of the step
 * that failed.
 */
static int edges_child(const char *real, int walk)
{
	char path[PATH_MAX + 32], buf[16];
	struct stat st;
	int fd, fds, i;

	no_openat2 = walk;
	/* No root yet: lstat, not stat (the link itself). */
	snprintf(path, sizeof(path), "%s/link", real);
	if (gdr_lstat_node(path, &st) || !S_ISLNK(st.st_mode))
		return 8;
	if (gdr_open_root_set(real))
		return 1;
	/* Nothing kept open: 50 opens closed, 50 namespace looks at a
	 * proc that is no procfs (EXDEV). */
	fds = count_fds();
	snprintf(path, sizeof(path), "%s/dir/file", real);
	for (i = 0; i < 50; i++) {
		fd = gdr_open_node(path);
		if (fd < 0)
			return 9;
		close(fd);
		if (gdr_root_ns_stat("1/ns/net", &st) != EXDEV)
			return 10;
	}
	if (count_fds() != fds)
		return 11;
	snprintf(path, sizeof(path), "%s/dir/file/x", real);
	if (gdr_open_node(path) >= 0 || errno != ENOTDIR)
		return 3;
	snprintf(path, sizeof(path), "%s/link", real);
	if (gdr_lstat_node(path, &st) || !S_ISLNK(st.st_mode))
		return 4;
	/* A missing name is its own errno, not fstat's of no fd. */
	snprintf(path, sizeof(path), "%s/dir/none", real);
	if (gdr_lstat_node(path, &st) != ENOENT)
		return 12;
	snprintf(path, sizeof(path), "%s/link", real);
	memset(buf, 0, sizeof(buf));
	if (gdr_readlink_node(path, buf, sizeof(buf)) != 3 ||
	    strcmp(buf, "dir"))
		return 5;
	snprintf(path, sizeof(path), "%s/link/file", real);
	fd = gdr_open_node(path);
	if (fd < 0)
		return 6;
	close(fd);
	snprintf(path, sizeof(path), "%ss/file", real);
	if (gdr_open_node(path) >= 0 || errno != EXDEV)
		return 7;
	return 0;
}

static void root_edges(void)
{
	char real[PATH_MAX], link[PATH_MAX + 8], sib[PATH_MAX + 8];
	char sib_file[PATH_MAX + 16], scope[64];
	struct fixture fx;
	int walk, st;
	pid_t pid;

	check_scope = "the root's edges";
	if (fixture_make(&fx) || !realpath(fx.root, real)) {
		CHECK_(0, "a fixture: %s", strerror(errno));
		return;
	}
	/* The sibling "<root>s" shares the root's name as a prefix. */
	snprintf(link, sizeof(link), "%s/link", real);
	snprintf(sib, sizeof(sib), "%ss", real);
	snprintf(sib_file, sizeof(sib_file), "%s/file", sib);
	CHECK_INT(fixture_write(real, "dir/file", "x\n"), 0);
	CHECK_INT(fixture_write(real, "proc/1/ns/keep", ""), 0);
	CHECK_INT(symlink("dir", link), 0);
	CHECK_INT(mkdir(sib, 0755), 0);
	CHECK_INT(fixture_write(sib, "file", "outside\n"), 0);
	for (walk = 0; walk < 2; walk++) {
		snprintf(scope, sizeof(scope), "the root's edges, %s",
			 walk ? "the walk" : "openat2");
		check_scope = scope;
		pid = fork();
		if (pid == 0)
			_exit(edges_child(real, walk));
		st = -1;
		CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st));
		CHECK_INT(WEXITSTATUS(st), 0);
	}
	unlink(sib_file);
	rmdir(sib);
	fixture_remove(&fx);
}

/* A namespace where every name is a directory; the names asked noted. */
struct asked {
	int n;
	int dot; /* a name whose last component is "." was asked */
};

static int all_dirs(void *ctx, const char *name, enum gdr_walk_kind *kind,
		    char *target, size_t n)
{
	struct asked *a = ctx;
	const char *last = strrchr(name, '/');

	(void)target;
	(void)n;
	a->n++;
	if (!strcmp(last ? last + 1 : name, "."))
		a->dot = 1;
	*kind = GDR_WALK_DIR;
	return 0;
}

/* "a" and "a/b" directories, "a/file" a file. */
static int file_in_a(void *ctx, const char *name, enum gdr_walk_kind *kind,
		     char *target, size_t n)
{
	(void)ctx;
	(void)target;
	(void)n;
	if (!strcmp(name, "a") || !strcmp(name, "a/b"))
		*kind = GDR_WALK_DIR;
	else if (!strcmp(name, "a/file"))
		*kind = GDR_WALK_FILE;
	else
		return errno = ENOENT, -1;
	return 0;
}

/* "l" a link to "a", "a" a directory. */
static int link_l(void *ctx, const char *name, enum gdr_walk_kind *kind,
		  char *target, size_t n)
{
	(void)ctx;
	if (!strcmp(name, "a")) {
		*kind = GDR_WALK_DIR;
		return 0;
	}
	if (strcmp(name, "l"))
		return errno = ENOENT, -1;
	*kind = GDR_WALK_LINK;
	snprintf(target, n, "a");
	return 0;
}

static void told(void *arg, const char *name, const char *target)
{
	char *out = arg;

	snprintf(out + strlen(out), 64 - strlen(out), "%s>%s;", name, target);
}

/* "." names nothing to look up; a path of PATH_MAX bytes (no room for
 * its NUL) is ENAMETOOLONG before any lookup. */
static void walk_names(void)
{
	static char path[PATH_MAX + 1];
	enum gdr_walk_kind kind;
	struct asked a = { 0, 0 };
	char out[PATH_MAX];

	check_scope = "walk: . components";
	CHECK_INT(gdr_walk(all_dirs, &a, "/a/./b/.", 0, out, sizeof(out), &kind,
			   NULL, NULL),
		  0);
	CHECK_STR(out, "a/b");
	CHECK_INT(a.dot, 0);
	CHECK_INT(a.n, 2);

	/* ".." out of a file is ENOTDIR, as the kernel answers (open(2) of
	 * a/file/../b). */
	check_scope = "walk: .. after a file";
	errno = 0;
	CHECK_INT(gdr_walk(file_in_a, NULL, "/a/file/../b", 0, out, sizeof(out),
			   &kind, NULL, NULL),
		  -1);
	CHECK_INT(errno, ENOTDIR);
	/* The same with ".." last: nothing after it would refuse. */
	errno = 0;
	CHECK_INT(gdr_walk(file_in_a, NULL, "/a/file/..", 0, out, sizeof(out),
			   &kind, NULL, NULL),
		  -1);
	CHECK_INT(errno, ENOTDIR);
	CHECK_INT(gdr_walk(file_in_a, NULL, "/a/b/../file", 0, out, sizeof(out),
			   &kind, NULL, NULL),
		  0);
	CHECK_STR(out, "a/file");
	CHECK_INT(kind, GDR_WALK_FILE);

	/* A link at the end, not followed: the answer, and told. */
	check_scope = "walk: a last link left unfollowed";
	{
		char links[64] = "";

		CHECK_INT(gdr_walk(link_l, NULL, "/l", 1, out, sizeof(out),
				   &kind, told, links),
			  0);
		CHECK_STR(out, "l");
		CHECK_INT(kind, GDR_WALK_LINK);
		CHECK_STR(links, "l>a;");
		links[0] = '\0';
		CHECK_INT(gdr_walk(link_l, NULL, "/l", 0, out, sizeof(out),
				   &kind, told, links),
			  0);
		CHECK_STR(out, "a");
		CHECK_INT(kind, GDR_WALK_DIR);
		CHECK_STR(links, "l>a;");
	}

	check_scope = "walk: a path of PATH_MAX bytes";
	memset(path, 'a', PATH_MAX);
	path[0] = '/';
	path[PATH_MAX] = '\0';
	a.n = 0;
	errno = 0;
	CHECK_INT(gdr_walk(all_dirs, &a, path, 0, out, sizeof(out), &kind, NULL,
			   NULL),
		  -1);
	CHECK_INT(errno, ENAMETOOLONG);
	CHECK_INT(a.n, 0);
}

int main(void)
{
	static const struct {
		int a, b, want;
	} cases[] = {
		{ 40, 0, 0 },	   { 41, 0, ELOOP }, { 0, 40, 0 },
		{ 0, 41, ELOOP },  { 20, 20, 0 },    { 21, 20, ELOOP },
		{ 20, 21, ELOOP }, { 39, 0, 0 },     { 1, 39, 0 },
	};
	unsigned int i;
	int absolute;

	for (absolute = 0; absolute < 2; absolute++)
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			one_case(&(struct chains){ cases[i].a, cases[i].b,
						   absolute },
				 cases[i].want);
	/* What the code calls the limit is the kernel's. */
	check_scope = "GDR_WALK_MAX_LINKS";
	CHECK_INT(GDR_WALK_MAX_LINKS, 40);
	root_edges();
	walk_names();
	return check_summary("walk");
}
