/* SPDX-License-Identifier: MIT */
/*
 * Paths resolved inside a namespace (walk.c). Calls nothing but the C
 * library and its lookup callback: gdr-info compiles it too, for its
 * snapshots and captures.
 */
#ifndef GDR_WALK_H
#define GDR_WALK_H

#include <stddef.h>

#define GDR_WALK_MAX_LINKS 40 /* links followed in one path */

enum gdr_walk_kind {
	GDR_WALK_FILE,
	GDR_WALK_DIR,
	GDR_WALK_LINK,	/* data: the target, as readlink(2) gave it */
	GDR_WALK_OTHER, /* a FIFO, device or socket */
};

/*
 * What a walk asks of a namespace: @name (relative, without links before
 * its last component) is a file, a directory, a link (target in @target,
 * @n bytes) or something else; -1 with errno (ENOENT) when there is
 * nothing.
 */
typedef int (*gdr_walk_lookup_fn)(void *ctx, const char *name,
				  enum gdr_walk_kind *kind, char *target,
				  size_t n);

/*
 * Resolve @path (absolute, from the namespace's root) through its links,
 * links resolving inside it: an absolute target from its root, ".." never
 * above it. With @nofollow_last a link at the end is the answer itself.
 * The resolved name, relative and without links, into @out (@n bytes), and
 * its kind; -1 with errno (ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG). @on_link,
 * if set, is told every link passed (name, target).
 */
int gdr_walk(gdr_walk_lookup_fn lookup, void *ctx, const char *path,
	     int nofollow_last, char *out, size_t n, enum gdr_walk_kind *kind,
	     void (*on_link)(void *arg, const char *name, const char *target),
	     void *arg);

#endif
