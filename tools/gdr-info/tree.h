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
#include <sys/stat.h>

#include "walk.h" /* gdr_walk(), which resolves links inside a tree */

/* Caps: what a snapshot of one node needs, with room to spare. */
#define TREE_MAX_MEMBERS 20000
#define TREE_MAX_FILE ((size_t)1 << 20)	  /* bytes of one file */
#define TREE_MAX_TOTAL ((size_t)64 << 20) /* bytes of all files */
#define TREE_MAX_INPUT ((size_t)64 << 20) /* bytes of the archive */
#define TREE_MAX_NAME 1024		  /* bytes of a member's name */
/* What a capture keeps of one file: as much as the library reads of any
 * (cufile.json: 256 KiB, so that a replay reads what live did; a sysfs
 * attribute is a page). A longer file is kept cut, and the capture says
 * so. */
#define TREE_CAPTURE_FILE (((size_t)256 << 10) + 1)

struct tree_node {
	char *name; /* relative, normalised: "sys/class/infiniband" */
	enum gdr_walk_kind kind;
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
int tree_add(struct tree *t, const char *name, enum gdr_walk_kind kind,
	     const void *data, size_t size, char *err, size_t n);

/* gdr_walk's lookup over a tree (ctx: the tree). Sorts it first. */
int tree_lookup(void *ctx, const char *name, enum gdr_walk_kind *kind,
		char *target, size_t n);
/* The node of @name, or NULL. */
const struct tree_node *tree_find(struct tree *t, const char *name);

/* What tree_open_file() says of a name that is not a regular file. */
#define EFTYPE_TREE 4097

/*
 * @name (relative to @dirfd; with @nofollow a link there is not followed)
 * opened for reading only if it is a regular file: resolved to an O_PATH
 * descriptor first, checked, and the inode checked opened (opening a
 * device or a FIFO can act, so anything else is never opened). The fd
 * with *@st, or -1 with errno (EFTYPE_TREE: not a regular file; ENOSYS:
 * /proc is not mounted, so the inode checked cannot be opened).
 */
int tree_open_file(int dirfd, const char *name, int nofollow, struct stat *st);

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
 * not at all (replace.h: only over a regular file or at a new name). 0,
 * or -1 with the reason in @err.
 */
int tree_write_tar(struct tree *t, const char *file, char *err, size_t n);

/* @s for a message: control and non-ASCII bytes as \xNN. */
const char *tree_printable(const char *s, char *buf, size_t n);

#endif
