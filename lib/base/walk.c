/* SPDX-License-Identifier: MIT */
/*
 * Resolving a path through a namespace's links without leaving it: an
 * absolute link target starts again at the namespace's root, ".." never
 * climbs above it. The namespace is asked through a lookup callback, so
 * the same walk serves a snapshot in memory (gdr-info's tree), a host tree
 * on disk that the kernel cannot resolve in place (no openat2), and the
 * capture of what the library read. Pure: it calls only the callback.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "walk.h"

int gdr_walk(gdr_walk_lookup_fn lookup, void *ctx, const char *path,
	     int nofollow_last, char *out, size_t n, enum gdr_walk_kind *kind,
	     void (*on_link)(void *arg, const char *name, const char *target),
	     void *arg)
{
	char cur[PATH_MAX], rest[PATH_MAX], target[PATH_MAX], cand[PATH_MAX];
	enum gdr_walk_kind k = GDR_WALK_DIR;
	int links = 0;
	size_t cl = 0;

	cur[0] = '\0';
	if (snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	while (rest[0]) {
		char *p = rest, *e;
		size_t len;
		int last;

		while (*p == '/')
			p++;
		e = strchr(p, '/');
		len = e ? (size_t)(e - p) : strlen(p);
		last = !e || !e[strspn(e, "/")];
		if (!len || (len == 1 && *p == '.')) {
			memmove(rest, p + len, strlen(p + len) + 1);
			continue;
		}
		if (len == 2 && !memcmp(p, "..", 2)) {
			char *slash = strrchr(cur, '/');

			/* As the kernel: no ".." out of a file. */
			if (k != GDR_WALK_DIR) {
				errno = ENOTDIR;
				return -1;
			}
			/* Never above the namespace's root. */
			cl = slash ? (size_t)(slash - cur) : 0;
			cur[cl] = '\0'; /* a directory still (k) */
			memmove(rest, p + len, strlen(p + len) + 1);
			continue;
		}
		if (k != GDR_WALK_DIR) {
			errno = ENOTDIR;
			return -1;
		}
		if (cl + len + 2 > sizeof(cand)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(cand, cur, cl);
		if (cl)
			cand[cl] = '/';
		memcpy(cand + cl + (cl ? 1 : 0), p, len);
		cand[cl + (cl ? 1 : 0) + len] = '\0';
		memmove(rest, p + len, strlen(p + len) + 1);
		target[0] = '\0';
		if (lookup(ctx, cand, &k, target, sizeof(target)))
			return -1;
		if (k == GDR_WALK_LINK && !(last && nofollow_last)) {
			char next[PATH_MAX];

			if (++links > GDR_WALK_MAX_LINKS) {
				errno = ELOOP;
				return -1;
			}
			if (on_link)
				on_link(arg, cand, target);
			if (snprintf(next, sizeof(next), "%s/%s", target,
				     rest) >= (int)sizeof(next)) {
				errno = ENAMETOOLONG;
				return -1;
			}
			memcpy(rest, next, strlen(next) + 1);
			if (target[0] == '/') {
				cl = 0;
				cur[0] = '\0';
			}
			k = GDR_WALK_DIR; /* the link's directory goes on */
			continue;
		}
		if (k == GDR_WALK_LINK && on_link)
			on_link(arg, cand, target);
		memcpy(cur, cand, strlen(cand) + 1);
		cl = strlen(cur);
	}
	if (snprintf(out, n, "%s", cur) >= (int)n) {
		errno = ENAMETOOLONG;
		return -1;
	}
	*kind = k;
	return 0;
}
