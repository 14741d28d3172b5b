/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/mountinfo, parsed (proc(5)): one mount a line,
 *
 *   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
 *   (1)(2)(3)   (4)   (5)      (6)      (7)   (8) (9)   (10)         (11)
 *
 * mount id, parent id, major:minor, root within the file system, mount
 * point, mount options, optional fields up to a lone "-", file system
 * type, source, super block options. The kernel writes a space, tab,
 * newline and backslash inside a path or the source as a backslash and
 * three octal digits (\040 for a space). A line that does not follow this
 * form is refused whole, never half read: the table comes from the node
 * or from someone else's snapshot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

/* The next space-separated field of [*p, end) unescaped into @out (room
 * @n): 0, or EINVAL (no field, a bad escape, a NUL, too long). */
static int field(const char **p, const char *end, char *out, size_t n,
		 bool escapes)
{
	const char *s = *p;
	size_t k = 0;

	if (s >= end || *s == ' ')
		return EINVAL; /* empty, or two spaces */
	while (s < end && *s != ' ') {
		unsigned char c = (unsigned char)*s;

		if (c == '\\' && escapes) {
			if (end - s < 4 || s[1] < '0' || s[1] > '3' ||
			    s[2] < '0' || s[2] > '7' || s[3] < '0' ||
			    s[3] > '7')
				return EINVAL;
			c = (unsigned char)((s[1] - '0') << 6 |
					    (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			s++;
		}
		if (!c || k + 1 >= n)
			return EINVAL;
		out[k++] = (char)c;
	}
	out[k] = '\0';
	if (s < end)
		s++; /* the space after it */
	*p = s;
	return 0;
}

/* A decimal number field that fits @max. */
static int number(const char *text, unsigned long long max,
		  unsigned long long *v)
{
	char *e;

	if (!text[0] || text[0] < '0' || text[0] > '9')
		return EINVAL;
	errno = 0;
	*v = strtoull(text, &e, 10);
	return errno || *e || *v > max ? EINVAL : 0;
}

int gdr_parse_mountinfo_line(const char *line, size_t len, struct gdr_mount *m)
{
	const char *p = line, *end = line + len;
	char word[64], *colon;
	unsigned long long v, maj;
	int fields = 0;

	memset(m, 0, sizeof(*m));
	if (field(&p, end, word, sizeof(word), false) ||
	    number(word, 0x7fffffff, &v))
		return EINVAL;
	m->id = (long long)v;
	if (field(&p, end, word, sizeof(word), false) ||
	    number(word, 0x7fffffff, &v))
		return EINVAL;
	m->parent = (long long)v;
	if (field(&p, end, word, sizeof(word), false))
		return EINVAL;
	colon = strchr(word, ':');
	if (!colon)
		return EINVAL;
	*colon = '\0';
	if (number(word, 0xfff, &maj) || number(colon + 1, 0xfffff, &v))
		return EINVAL;
	m->major = (unsigned int)maj;
	m->minor = (unsigned int)v;
	if (field(&p, end, m->root, sizeof(m->root), true) ||
	    field(&p, end, m->point, sizeof(m->point), true) ||
	    field(&p, end, m->options, sizeof(m->options), false))
		return EINVAL;
	/* Optional fields ("shared:1", "master:2"), then the separator. */
	for (;;) {
		if (field(&p, end, word, sizeof(word), false) || ++fields > 16)
			return EINVAL;
		if (!strcmp(word, "-"))
			break;
	}
	if (field(&p, end, m->fstype, sizeof(m->fstype), true) ||
	    field(&p, end, m->source, sizeof(m->source), true) ||
	    field(&p, end, m->super, sizeof(m->super), true) || p != end)
		return EINVAL;
	return m->root[0] == '/' && m->point[0] == '/' ? 0 : EINVAL;
}

int gdr_mount_option(const char *opts, const char *key, char *out, size_t n)
{
	size_t klen = strlen(key);
	const char *p = opts;

	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len >= klen && !strncmp(p, key, klen) &&
		    (len == klen || p[klen] == '=')) {
			const char *v = len > klen ? p + klen + 1 : p + len;
			size_t vlen = len > klen ? len - klen - 1 : 0;

			if (vlen >= n)
				return ENOBUFS;
			memcpy(out, v, vlen);
			out[vlen] = '\0';
			return 0;
		}
		p += len + (e ? 1 : 0);
	}
	return ENOENT;
}

bool gdr_path_under(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	if (!strcmp(dir, "/"))
		return path[0] == '/';
	return !strncmp(path, dir, len) && (path[len] == '/' || !path[len]);
}
