/* SPDX-License-Identifier: MIT */
/*
 * A snapshot of a node's files in memory: what gdr-info --capture writes
 * and --from/--root replay. Nothing is extracted or written to disk to
 * read one: an archive (plain or gzip'd tar) or a directory is read into
 * the tree, with caps on members and sizes, and served to the library
 * from memory. Only regular files and directories are kept; a symbolic
 * link is data (its target text), resolved inside the tree and never on
 * the real file system.
 */
#ifndef GDR_INFO_TREE_H
#define GDR_INFO_TREE_H

#include <stddef.h>

/* Caps: what a snapshot of one node needs, with room to spare. */
#define TREE_MAX_MEMBERS 20000
#define TREE_MAX_FILE ((size_t)1 << 20)	  /* bytes of one file */
#define TREE_MAX_TOTAL ((size_t)64 << 20) /* bytes of all files */
#define TREE_MAX_INPUT ((size_t)64 << 20) /* bytes of the archive */
#define TREE_MAX_NAME 1024		  /* bytes of a member's name */
#define TREE_MAX_LINKS 40		  /* links followed in one path */
/* What a capture keeps of one file (a sysfs attribute is a page). */
#define TREE_CAPTURE_FILE ((size_t)64 << 10)

enum tree_kind {
	TREE_FILE,
	TREE_DIR,
	TREE_LINK,  /* data: the target, as readlink(2) gave it */
	TREE_OTHER, /* a FIFO, device or socket in a --root tree */
};

struct tree_node {
	char *name; /* relative, normalised: "sys/class/infiniband" */
	enum tree_kind kind;
	char *data;
	size_t size;
	size_t seq; /* the order added: of equal names the last wins */
};

struct tree {
	struct tree_node *n;
	size_t num, cap, total, seq;
	int sorted;
};

void tree_init(struct tree *t);
void tree_free(struct tree *t);

/*
 * Add (or replace) @name. The name must be relative, without "..", of at
 * most TREE_MAX_NAME bytes; files count against the caps. 0, or -1 with
 * the reason in @err.
 */
int tree_add(struct tree *t, const char *name, enum tree_kind kind,
	     const void *data, size_t size, char *err, size_t n);

/*
 * What a walk through a namespace asks of it: @name (relative) is a
 * file, a directory, a link (target in @target) or something else; -1
 * with errno ENOENT when there is nothing.
 */
typedef int (*tree_lookup_fn)(void *ctx, const char *name, enum tree_kind *kind,
			      char *target, size_t n);

/*
 * Resolve absolute @path (the node's "/sys/...") through the links of a
 * namespace, links resolving inside it: an absolute target from its root,
 * ".." never above it. With @nofollow_last a link at the end is the
 * answer itself. The resolved name into @out (@n bytes) and its kind; -1
 * with errno (ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG). @on_link, if set, is
 * told every link passed (name, target).
 */
int tree_walk(tree_lookup_fn lookup, void *ctx, const char *path,
	      int nofollow_last, char *out, size_t n, enum tree_kind *kind,
	      void (*on_link)(void *arg, const char *name, const char *target),
	      void *arg);

/* tree_walk's lookup over a tree (ctx: the tree). Sorts it first. */
int tree_lookup(void *ctx, const char *name, enum tree_kind *kind, char *target,
		size_t n);
/* The node of @name, or NULL. */
const struct tree_node *tree_find(struct tree *t, const char *name);

/*
 * Read an archive (tar, or tar compressed with gzip) into @t: regular
 * files and directories only; any other member refused by name. 0, or -1
 * with the reason in @err.
 */
int tree_read_tar(struct tree *t, const char *file, char *err, size_t n);

/* tree_read_tar's parser, over @len bytes of an archive in memory. */
int tree_parse_tar(struct tree *t, const unsigned char *buf, size_t len,
		   char *err, size_t n);
/* @t's files and directories as a tar archive in a new buffer. 0 or -1. */
int tree_tar(struct tree *t, char **data, size_t *len);

/*
 * Read the directory tree below @dir into @t: regular files, directories,
 * links (as data) and, by name only, anything else. Nothing is followed.
 */
int tree_read_dir(struct tree *t, const char *dir, char *err, size_t n);

/*
 * Write @t's files and directories as a tar archive to @file, whole or
 * not at all (replace.h: a link at @file is replaced, never written
 * through). 0, or -1 with the reason in @err.
 */
int tree_write_tar(struct tree *t, const char *file, char *err, size_t n);

/* @s for a message: control and non-ASCII bytes as \xNN. */
const char *tree_printable(const char *s, char *buf, size_t n);

#endif
