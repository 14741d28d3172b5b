/* SPDX-License-Identifier: MIT */
/*
 * Snapshots in memory (tree.h): the tree, a walk through links that never
 * leaves the namespace it walks, and tar archives read and written here
 * (no tar program, no extraction: GNU tar run as root keeps owners, modes,
 * devices and FIFOs of what it extracts). A gzip'd archive is inflated by
 * gzip reading the opened file on its standard input, its output read
 * with a cap.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replace.h"
#include "tree.h"

#define BLOCK 512

void tree_init(struct tree *t)
{
	memset(t, 0, sizeof(*t));
}

void tree_free(struct tree *t)
{
	size_t i;

	for (i = 0; i < t->num; i++) {
		free(t->n[i].name);
		free(t->n[i].data);
	}
	free(t->n);
	tree_init(t);
}

const char *tree_printable(const char *s, char *buf, size_t n)
{
	size_t o = 0;

	for (; *s && o + 5 < n; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(buf + o, n - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	buf[o < n ? o : n - 1] = '\0';
	return buf;
}

/* @in made relative and normalised into @out: 0, or -1 with @why. */
static int normalise(const char *in, char *out, size_t n, const char **why)
{
	size_t o = 0, len;
	const char *p = in, *e;

	if (*in == '/') {
		*why = "is an absolute name";
		return -1;
	}
	while (*p) {
		e = strchr(p, '/');
		len = e ? (size_t)(e - p) : strlen(p);
		if (len == 2 && !memcmp(p, "..", 2)) {
			*why = "has a \"..\" component";
			return -1;
		}
		if (len && !(len == 1 && *p == '.')) {
			if (o + len + 2 > n || o + len + 1 > TREE_MAX_NAME) {
				*why = "is too long";
				return -1;
			}
			if (o)
				out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p += len;
		while (*p == '/')
			p++;
	}
	out[o] = '\0';
	return 0;
}

int tree_add(struct tree *t, const char *name, enum gdr_walk_kind kind,
	     const void *data, size_t size, char *err, size_t n)
{
	char norm[TREE_MAX_NAME + 2], pr[128];
	const char *why = NULL;
	struct tree_node *x;

	if (normalise(name, norm, sizeof(norm), &why)) {
		snprintf(err, n, "member %s %s",
			 tree_printable(name, pr, sizeof(pr)), why);
		return -1;
	}
	if (!norm[0])
		return 0; /* the root itself */
	if (t->num >= TREE_MAX_MEMBERS) {
		snprintf(err, n, "more than %d members", TREE_MAX_MEMBERS);
		return -1;
	}
	if (size > TREE_MAX_FILE || t->total + size > TREE_MAX_TOTAL) {
		snprintf(err, n,
			 "member %s makes the snapshot larger than it may be "
			 "(%zu bytes a file, %zu in all)",
			 tree_printable(norm, pr, sizeof(pr)), TREE_MAX_FILE,
			 TREE_MAX_TOTAL);
		return -1;
	}
	if (t->num == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct tree_node *v = realloc(t->n, cap * sizeof(*v));

		if (!v) {
			snprintf(err, n, "out of memory");
			return -1;
		}
		t->n = v;
		t->cap = cap;
	}
	x = &t->n[t->num];
	x->name = strdup(norm);
	x->data = malloc(size + 1);
	if (!x->name || !x->data) {
		free(x->name);
		free(x->data);
		snprintf(err, n, "out of memory");
		return -1;
	}
	if (size)
		memcpy(x->data, data, size);
	x->data[size] = '\0';
	x->size = size;
	x->kind = kind;
	x->seq = t->seq++;
	t->num++;
	t->total += size;
	t->sorted = 0;
	return 0;
}

/* --- lookups --------------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
	const struct tree_node *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	/* Equal names: the one added later last (it wins). */
	return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorted, and of equal names only the last added kept. */
static void seal(struct tree *t)
{
	size_t i, k = 0;

	if (t->sorted || !t->num) {
		t->sorted = 1;
		return;
	}
	qsort(t->n, t->num, sizeof(t->n[0]), by_name);
	for (i = 0; i < t->num; i++) {
		if (i + 1 < t->num && !strcmp(t->n[i].name, t->n[i + 1].name)) {
			t->total -= t->n[i].size;
			free(t->n[i].name);
			free(t->n[i].data);
			continue;
		}
		t->n[k++] = t->n[i];
	}
	t->num = k;
	t->sorted = 1;
}

/* The first node whose name is >= @name. */
static size_t lower(const struct tree *t, const char *name)
{
	size_t lo = 0, hi = t->num;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->n[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct tree_node *tree_find(struct tree *t, const char *name)
{
	size_t i;

	seal(t);
	i = lower(t, name);
	return i < t->num && !strcmp(t->n[i].name, name) ? &t->n[i] : NULL;
}

int tree_lookup(void *ctx, const char *name, enum gdr_walk_kind *kind,
		char *target, size_t n)
{
	struct tree *t = ctx;
	const struct tree_node *x = tree_find(t, name);
	char dir[TREE_MAX_NAME + 2];
	size_t i, len = strlen(name);

	if (x) {
		*kind = x->kind;
		if (x->kind == GDR_WALK_LINK)
			snprintf(target, n, "%s", x->data);
		return 0;
	}
	/* A directory whose members came without an entry of its own. */
	if (len + 2 > sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, name, len);
	dir[len] = '/';
	dir[len + 1] = '\0';
	i = lower(t, dir);
	if (i < t->num && !strncmp(t->n[i].name, dir, len + 1)) {
		*kind = GDR_WALK_DIR;
		return 0;
	}
	errno = ENOENT;
	return -1;
}

/* --- reading a file we are handed ------------------------------------------ */

int tree_open_file(int dirfd, const char *name, int nofollow, struct stat *st)
{
	int pfd = openat(dirfd, name,
			 O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	char self[64];
	int fd = -1, err;

	if (pfd < 0)
		return -1;
	if (fstat(pfd, st)) {
		err = errno;
	} else if (!S_ISREG(st->st_mode)) {
		err = EFTYPE_TREE;
	} else {
		/* The inode just checked, not whatever the name is now. */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
		fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		err = errno;
		/* No /proc: the inode checked cannot be opened, and the
		 * name opened again could be a device by then: nothing. */
		if (fd < 0 && err == ENOENT)
			err = ENOSYS;
	}
	close(pfd);
	errno = err;
	return fd;
}

/*
 * Open @file for reading, only if it is a regular file of at most @max
 * bytes (never opened otherwise: opening a device can act). The fd, or -1
 * with @err.
 */
static int open_regular(const char *file, size_t max, size_t *size, char *err,
			size_t n)
{
	char pr[128];
	struct stat st;
	int fd = tree_open_file(AT_FDCWD, file, 0, &st);

	if (fd < 0 && errno == EFTYPE_TREE) {
		snprintf(err, n, "%s is not a regular file",
			 tree_printable(file, pr, sizeof(pr)));
		return -1;
	}
	if (fd < 0) {
		snprintf(err, n, "%s: %s", tree_printable(file, pr, sizeof(pr)),
			 strerror(errno));
		return -1;
	}
	if ((size_t)st.st_size > max) {
		snprintf(err, n, "%s is larger than %zu bytes",
			 tree_printable(file, pr, sizeof(pr)), max);
		close(fd);
		return -1;
	}
	*size = (size_t)st.st_size;
	return fd;
}

/* Up to @max bytes of @fd into a new buffer; *@got the count. -1 on a
 * read error or more than @max bytes (*@over set). */
static char *read_all(int fd, size_t max, size_t *got, int *over)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r;

	*over = 0;
	while (buf) {
		if (len == cap) {
			if (cap > max) {
				*over = 1;
				break;
			}
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb)
				break;
			buf = nb;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			if (len > max) {
				*over = 1;
				break;
			}
			*got = len;
			return buf;
		}
		len += (size_t)r;
	}
	free(buf);
	return NULL;
}

/* gzip -dc with @fd on its standard input; its output, at most @max. */
static char *inflate(int fd, size_t max, size_t *got, char *err, size_t n)
{
	static const char *const gzip[] = { "/usr/bin/gzip", "/bin/gzip" };
	const char *prog = NULL;
	int out[2], status, over = 0;
	char *data;
	size_t i;
	pid_t pid;

	for (i = 0; i < 2 && !prog; i++)
		if (!access(gzip[i], X_OK))
			prog = gzip[i];
	if (!prog) {
		snprintf(err, n,
			 "the snapshot is gzip-compressed and gzip is not "
			 "installed (/usr/bin/gzip); gunzip it elsewhere");
		return NULL;
	}
	if (pipe2(out, O_CLOEXEC)) {
		snprintf(err, n, "pipe: %s", strerror(errno));
		return NULL;
	}
	pid = fork();
	if (pid == 0) {
		/* Only the opened file goes in: no name for gzip to read. */
		if (dup2(fd, 0) < 0 || dup2(out[1], 1) < 0)
			_exit(127);
		execl(prog, "gzip", "-dc", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	if (pid < 0) {
		close(out[0]);
		snprintf(err, n, "fork: %s", strerror(errno));
		return NULL;
	}
	data = read_all(out[0], max, got, &over);
	close(out[0]);
	if (!data)
		kill(pid, SIGKILL); /* a bomb: nothing more is read */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (over) {
		snprintf(err, n,
			 "the snapshot decompresses to more than %zu bytes; "
			 "it is not a gdr-info --capture file",
			 max);
	} else if (!data) {
		snprintf(err, n, "reading gzip's output failed");
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(err, n, "gzip could not decompress the snapshot");
		free(data);
		data = NULL;
	}
	return data;
}

/* --- tar ------------------------------------------------------------------- */

/* A number of a header field: octal, or GNU's base-256. -1 if neither. */
static long long field(const unsigned char *p, size_t len)
{
	long long v = 0;
	size_t i = 0;

	if (len && (p[0] & 0x80)) {
		if (p[0] != 0x80)
			return -1; /* negative or too large */
		for (i = 1; i < len; i++) {
			if (v > (LLONG_MAX >> 8))
				return -1;
			v = (v << 8) | p[i];
		}
		return v;
	}
	while (i < len && p[i] == ' ')
		i++;
	for (; i < len && p[i] >= '0' && p[i] <= '7'; i++) {
		if (v > (LLONG_MAX >> 3))
			return -1;
		v = v * 8 + (p[i] - '0');
	}
	for (; i < len; i++)
		if (p[i] != ' ' && p[i] != '\0')
			return -1;
	return v;
}

static int checksum_ok(const unsigned char *h)
{
	long long want = field(h + 148, 8);
	unsigned long sum = 0;
	int i;

	for (i = 0; i < BLOCK; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	return want >= 0 && (unsigned long)want == sum;
}

/* The path of a pax extended header's records, if any. */
static int pax_path(const char *p, size_t len, char *out, size_t n)
{
	size_t at = 0;

	while (at < len) {
		char *end;
		unsigned long rec = strtoul(p + at, &end, 10);
		const char *kv = end + 1;

		if (end == p + at || *end != ' ' || !rec || rec > len - at)
			return -1;
		if (!strncmp(kv, "path=", 5)) {
			size_t vl = (size_t)(p + at + rec - 1 - (kv + 5));

			if ((p + at + rec - 1) < kv + 5 || vl >= n)
				return -1;
			memcpy(out, kv + 5, vl);
			out[vl] = '\0';
		}
		at += rec;
	}
	return 0;
}

static const char *type_words(char t)
{
	switch (t) {
	case '1': return "a hard link";
	case '2': return "a symbolic link";
	case '3': return "a character device";
	case '4': return "a block device";
	case '6': return "a FIFO";
	default: return NULL;
	}
}

int tree_parse_tar(struct tree *t, const unsigned char *buf, size_t len,
		   char *err, size_t n)
{
	char name[TREE_MAX_NAME + 256], next[TREE_MAX_NAME + 256], pr[160];
	size_t at = 0;
	int have_next = 0, members = 0;

	while (at + BLOCK <= len) {
		const unsigned char *h = buf + at;
		long long size;
		size_t blocks;
		char type;
		const char *what;

		if (!h[0] && !memcmp(h, h + 1, BLOCK - 1)) {
			/* The end-of-archive blocks. */
			if (members)
				return 0;
			snprintf(err, n, "the archive is empty");
			return -1;
		}
		if (!checksum_ok(h)) {
			snprintf(err, n,
				 "not a tar archive (a header's checksum is "
				 "wrong at byte %zu)",
				 at);
			return -1;
		}
		size = field(h + 124, 12);
		type = (char)h[156];
		if (size < 0 || (unsigned long long)size > TREE_MAX_TOTAL) {
			snprintf(err, n, "a member's size is out of range");
			return -1;
		}
		blocks = ((size_t)size + BLOCK - 1) / BLOCK;
		if (at + BLOCK + blocks * BLOCK > len) {
			snprintf(err, n, "the archive is truncated");
			return -1;
		}
		if (++members > 2 * TREE_MAX_MEMBERS) {
			snprintf(err, n, "more than %d members",
				 TREE_MAX_MEMBERS);
			return -1;
		}
		if (type == 'L' || type == 'x') {
			/* GNU long name, pax header: the name of the next */
			const char *d = (const char *)h + BLOCK;

			if ((size_t)size >= sizeof(next) - 1) {
				snprintf(err, n, "a member's name is too long");
				return -1;
			}
			if (type == 'L') {
				memcpy(next, d, (size_t)size);
				next[size] = '\0';
				have_next = 1;
			} else {
				next[0] = '\0';
				if (pax_path(d, (size_t)size, next,
					     sizeof(next))) {
					snprintf(err, n,
						 "a pax header is malformed");
					return -1;
				}
				have_next = next[0] != '\0';
			}
			at += BLOCK + blocks * BLOCK;
			continue;
		}
		if (type == 'g') { /* pax global header: nothing we use */
			at += BLOCK + blocks * BLOCK;
			continue;
		}
		if (have_next) {
			snprintf(name, sizeof(name), "%s", next);
			have_next = 0;
		} else if (!memcmp(h + 257, "ustar", 5) && h[345]) {
			snprintf(name, sizeof(name), "%.155s/%.100s",
				 (const char *)h + 345, (const char *)h);
		} else {
			snprintf(name, sizeof(name), "%.100s", (const char *)h);
		}
		what = type_words(type);
		if (what) {
			snprintf(err, n,
				 "member %s is %s: a snapshot holds regular "
				 "files and directories only (gdr-info 0.3 "
				 "keeps links in answers.json; capture it "
				 "again)",
				 tree_printable(name, pr, sizeof(pr)), what);
			return -1;
		}
		if (type == '5') {
			if (tree_add(t, name, GDR_WALK_DIR, NULL, 0, err, n))
				return -1;
		} else if (type == '0' || type == '\0' || type == '7') {
			if (tree_add(t, name, GDR_WALK_FILE, h + BLOCK,
				     (size_t)size, err, n))
				return -1;
		} else {
			snprintf(err, n,
				 "member %s is of tar type '%c', which a "
				 "snapshot never holds",
				 tree_printable(name, pr, sizeof(pr)),
				 type >= 0x20 && type < 0x7f ? type : '?');
			return -1;
		}
		at += BLOCK + blocks * BLOCK;
	}
	if (at < len || !members) {
		snprintf(err, n,
			 "not a tar archive (it ends in the middle "
			 "of a header)");
		return -1;
	}
	return 0;
}

int tree_read_tar(struct tree *t, const char *file, char *err, size_t n)
{
	unsigned char magic[2];
	size_t size, got = 0;
	char *data = NULL;
	int fd, over = 0, rc;

	fd = open_regular(file, TREE_MAX_INPUT, &size, err, n);
	if (fd < 0)
		return -1;
	if (pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f &&
	    magic[1] == 0x8b) {
		/* The headers' blocks count too: room for each member's. */
		data = inflate(fd,
			       TREE_MAX_TOTAL +
				       2 * TREE_MAX_MEMBERS * (size_t)BLOCK,
			       &got, err, n);
	} else {
		data = read_all(fd, TREE_MAX_INPUT, &got, &over);
		if (!data)
			snprintf(err, n, "%s: reading failed", file);
	}
	close(fd);
	if (!data)
		return -1;
	rc = tree_parse_tar(t, (const unsigned char *)data, got, err, n);
	free(data);
	return rc;
}

/* --- a directory ------------------------------------------------------------ */

/* The first @cap bytes of @fd at most (what reading an attribute gives). */
static char *read_capped(int fd, size_t cap, size_t *got)
{
	char *buf = malloc(cap ? cap : 1);
	ssize_t r;

	*got = 0;
	while (buf && *got < cap) {
		r = read(fd, buf + *got, cap - *got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (!r)
			break;
		*got += (size_t)r;
	}
	return buf;
}

static int read_dir_at(struct tree *t, int dfd, const char *rel, int depth,
		       char *err, size_t n)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	char name[TREE_MAX_NAME + 2], pr[128];
	int rc = 0;

	if (!d) {
		close(dfd);
		snprintf(err, n, "%s: %s", rel, strerror(errno));
		return -1;
	}
	while (!rc && (de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(name, sizeof(name), "%s%s%s", rel, *rel ? "/" : "",
			     de->d_name) >= (int)sizeof(name) - 1) {
			snprintf(err, n, "a name below %s is too long",
				 tree_printable(rel, pr, sizeof(pr)));
			rc = -1;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			snprintf(err, n, "%s: %s",
				 tree_printable(name, pr, sizeof(pr)),
				 strerror(errno));
			rc = -1;
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						 O_CLOEXEC);

			if (depth >= 64 || sub < 0) {
				if (sub >= 0)
					close(sub);
				snprintf(err, n, "%s: %s",
					 tree_printable(name, pr, sizeof(pr)),
					 depth >= 64 ? "nested too deep"
						     : strerror(errno));
				rc = -1;
			} else {
				rc = tree_add(t, name, GDR_WALK_DIR, NULL, 0,
					      err, n) ||
				     read_dir_at(t, sub, name, depth + 1, err,
						 n);
			}
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t r = readlinkat(dirfd(d), de->d_name, target,
					       sizeof(target) - 1);

			if (r < 0) {
				snprintf(err, n, "%s: %s",
					 tree_printable(name, pr, sizeof(pr)),
					 strerror(errno));
				rc = -1;
			} else {
				rc = tree_add(t, name, GDR_WALK_LINK, target,
					      (size_t)r, err, n);
			}
		} else if (S_ISREG(st.st_mode)) {
			struct stat now;
			int fd = tree_open_file(dirfd(d), de->d_name, 1, &now);
			size_t got = 0;
			/* As --from reads a member: whole, up to the cap. */
			char *data = fd < 0 ? NULL
					    : read_capped(fd, TREE_MAX_FILE + 1,
							  &got);

			if (fd >= 0)
				close(fd);
			if (!data) {
				snprintf(err, n, "%s: cannot read",
					 tree_printable(name, pr, sizeof(pr)));
				rc = -1;
			} else if (got > TREE_MAX_FILE) {
				snprintf(err, n,
					 "%s is larger than %zu bytes: not a "
					 "snapshot's file",
					 tree_printable(name, pr, sizeof(pr)),
					 TREE_MAX_FILE);
				rc = -1;
			} else {
				rc = tree_add(t, name, GDR_WALK_FILE, data, got,
					      err, n);
			}
			free(data);
		} else {
			rc = tree_add(t, name, GDR_WALK_OTHER, NULL, 0, err, n);
		}
	}
	closedir(d);
	return rc;
}

int tree_read_dir(struct tree *t, const char *dir, char *err, size_t n)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, n, "%s: %s", dir, strerror(errno));
		return -1;
	}
	return read_dir_at(t, fd, "", 0, err, n);
}

/* --- writing ------------------------------------------------------------------ */

static void octal(unsigned char *p, size_t len, unsigned long long v)
{
	snprintf((char *)p, len, "%0*llo", (int)len - 1, v);
}

static void checksum(unsigned char *h)
{
	unsigned long sum = 0;
	int i;

	memset(h + 148, ' ', 8);
	for (i = 0; i < BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06lo", sum);
	h[155] = ' ';
}

static void header(unsigned char *h, const char *name, char type, size_t size)
{
	memset(h, 0, BLOCK);
	snprintf((char *)h, 100, "%s", name);
	octal(h + 100, 8, type == '5' ? 0755 : 0644);
	octal(h + 108, 8, 0);
	octal(h + 116, 8, 0);
	octal(h + 124, 12, size);
	octal(h + 136, 12, 0);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
}

/* The archive being made, in memory. */
struct out {
	char *p;
	size_t len, cap;
};

static int put(struct out *o, const void *p, size_t len)
{
	if (o->len + len > o->cap) {
		size_t cap = o->cap ? o->cap : 65536;
		char *np;

		while (cap < o->len + len)
			cap *= 2;
		np = realloc(o->p, cap);
		if (!np)
			return -1;
		o->p = np;
		o->cap = cap;
	}
	memcpy(o->p + o->len, p, len);
	o->len += len;
	return 0;
}

/* One member: a ustar header (the name split into prefix and name when it
 * fits), else a pax header with the path first. */
static int member(struct out *fd, const struct tree_node *x)
{
	static const unsigned char zero[BLOCK];
	unsigned char h[BLOCK];
	const char *name = x->name, *cut = NULL, *p;
	char type = x->kind == GDR_WALK_DIR ? '5' : '0';
	size_t len = strlen(name), size = x->kind == GDR_WALK_DIR ? 0 : x->size;

	if (len >= 100)
		for (p = name; (p = strchr(p, '/')); p++)
			if ((size_t)(p - name) <= 155 &&
			    len - (size_t)(p - name) - 1 < 100)
				cut = p;
	if (len >= 100 && !cut) {
		char rec[TREE_MAX_NAME + 32];
		int rl, dl = (int)len + 7; /* " path=" + name + "\n" */

		rl = dl + 1;
		while (snprintf(NULL, 0, "%d", rl) + dl != rl)
			rl = snprintf(NULL, 0, "%d", rl) + dl;
		snprintf(rec, sizeof(rec), "%d path=%s\n", rl, name);
		header(h, "././@PaxHeader", 'x', (size_t)rl);
		checksum(h);
		if (put(fd, h, BLOCK) || put(fd, rec, (size_t)rl) ||
		    put(fd, zero, (BLOCK - (size_t)rl % BLOCK) % BLOCK))
			return -1;
		header(h, "long-name", type, size);
	} else if (cut) {
		header(h, cut + 1, type, size);
		memcpy(h + 345, name, (size_t)(cut - name));
	} else {
		header(h, name, type, size);
	}
	checksum(h);
	if (put(fd, h, BLOCK))
		return -1;
	if (size && (put(fd, x->data, size) ||
		     put(fd, zero, (BLOCK - size % BLOCK) % BLOCK)))
		return -1;
	return 0;
}

int tree_tar(struct tree *t, char **data, size_t *len)
{
	static const unsigned char zero[2 * BLOCK];
	struct out o = { NULL, 0, 0 };
	size_t i;

	seal(t);
	for (i = 0; i < t->num; i++) {
		if (t->n[i].kind != GDR_WALK_FILE &&
		    t->n[i].kind != GDR_WALK_DIR)
			continue;
		if (member(&o, &t->n[i]))
			break;
	}
	if (i < t->num || put(&o, zero, sizeof(zero))) {
		free(o.p);
		return -1;
	}
	*data = o.p;
	*len = o.len;
	return 0;
}

int tree_write_tar(struct tree *t, const char *file, char *err, size_t n)
{
	char *data;
	size_t len;
	int rc;

	if (tree_tar(t, &data, &len)) {
		snprintf(err, n, "out of memory for the archive");
		return -1;
	}
	rc = replace_file(file, data, len, err, n);
	free(data);
	return rc;
}
