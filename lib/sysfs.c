/* SPDX-License-Identifier: MIT */
/* Reading sysfs/procfs files below a root, and parsing what they hold. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static int join(char *out, size_t n, const char *root, const char *path)
{
	int r = snprintf(out, n, "%s%s", root, path);

	return r < 0 || (size_t)r >= n ? ENAMETOOLONG : 0;
}

int gdr_read_bin(const char *root, const char *path, void *buf, size_t n,
		 size_t *got)
{
	const struct gdr_seam *s = gdr_seam();
	char full[PATH_MAX];
	ssize_t r;
	int fd, err;

	*got = 0;
	err = join(full, sizeof(full), root, path);
	if (err)
		return err;
	fd = s->open_file(full);
	if (fd < 0)
		return errno ? errno : EIO;
	while (*got < n) {
		r = s->read_fd(fd, (char *)buf + *got, n - *got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			/* A failed read is an error, never the end of the file. */
			err = errno ? errno : EIO;
			break;
		}
		if (r == 0)
			break;
		*got += (size_t)r;
	}
	close(fd);
	return err;
}

int gdr_read_file(const char *root, const char *path, char *buf, size_t n)
{
	size_t got;
	int err;

	if (!n)
		return EINVAL;
	buf[0] = '\0';
	err = gdr_read_bin(root, path, buf, n - 1, &got);
	if (err) {
		buf[0] = '\0';
		return err;
	}
	buf[got] = '\0';
	while (got && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
		buf[--got] = '\0';
	return 0;
}

bool gdr_file_exists(const char *root, const char *path)
{
	char full[PATH_MAX];
	int fd;

	if (join(full, sizeof(full), root, path))
		return false;
	fd = gdr_seam()->open_file(full);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int gdr_read_link(const char *root, const char *path, char *buf, size_t n)
{
	char full[PATH_MAX];
	ssize_t r;
	int err;

	if (!n)
		return EINVAL;
	err = join(full, sizeof(full), root, path);
	if (err)
		return err;
	r = gdr_seam()->read_link(full, buf, n - 1);
	if (r < 0)
		return errno ? errno : EIO;
	buf[r] = '\0';
	return 0;
}

/* Read a decimal run at *s, at most 6 digits; advance *s. */
static int number(const char **s, int *out)
{
	long v = 0;
	int digits = 0;

	while (isdigit((unsigned char)**s)) {
		if (++digits > 6)
			return EINVAL;
		v = v * 10 + (**s - '0');
		(*s)++;
	}
	if (!digits)
		return EINVAL;
	*out = (int)v;
	return 0;
}

int gdr_parse_kernel_release(const char *s, struct gdr_kver *v)
{
	if (!s || !v)
		return EINVAL;
	v->major = v->minor = v->patch = 0;
	if (number(&s, &v->major) || *s++ != '.' || number(&s, &v->minor))
		return EINVAL;
	/* The patch level is optional ("6.8-rc1"); anything may follow. */
	if (*s == '.') {
		s++;
		if (number(&s, &v->patch))
			v->patch = 0;
	}
	return 0;
}

int gdr_kver_cmp(const struct gdr_kver *a, int major, int minor)
{
	if (a->major != major)
		return a->major < major ? -1 : 1;
	if (a->minor != minor)
		return a->minor < minor ? -1 : 1;
	return 0;
}

enum gdr_nv_flavour gdr_parse_nvidia_version(const char *text, char *ver,
					     size_t n)
{
	const char *p, *line_end, *q;
	size_t len;

	if (n)
		ver[0] = '\0';
	if (!text)
		return GDR_NV_ABSENT;
	/* An empty (or NUL-filled) file is there but says nothing. */
	if (!*text)
		return GDR_NV_UNPARSED;
	p = strstr(text, "NVRM version:");
	if (!p)
		return GDR_NV_UNPARSED;
	line_end = strchr(p, '\n');
	if (!line_end)
		line_end = p + strlen(p);
	/* The version is the first token shaped like 580.159.04 on the line. */
	for (q = p; q < line_end; q++) {
		if (isdigit((unsigned char)*q) && (q == p || q[-1] == ' ')) {
			len = strspn(q, "0123456789.");
			if (len < (size_t)(line_end - q) && q[len] != ' ' &&
			    q[len] != '\t')
				continue;
			if (!memchr(q, '.', len))
				continue;
			if (n) {
				if (len >= n)
					len = n - 1;
				memcpy(ver, q, len);
				ver[len] = '\0';
			}
			break;
		}
	}
	if (n && !ver[0])
		return GDR_NV_UNPARSED;
	/* "NVIDIA UNIX Open Kernel Module for x86_64  580.159.04 ..." */
	if (memmem(p, (size_t)(line_end - p), "Open Kernel Module", 18))
		return GDR_NV_OPEN;
	return GDR_NV_PROPRIETARY;
}

int gdr_parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s)
		return EINVAL;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return EINVAL;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s)
		return EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return EINVAL;
	*out = v;
	return 0;
}
