/* SPDX-License-Identifier: MIT */
/*
 * gdr-info snapshots: record the sysfs/procfs files the report reads and
 * the CUDA and verbs answers, write them as one tar archive, and replay a
 * snapshot (an archive or a directory) from memory on another machine.
 */
#ifndef GDR_EXAMPLES_SNAPSHOT_H
#define GDR_EXAMPLES_SNAPSHOT_H

#include <infiniband/verbs.h>

/* From now on, remember every file and link the library reads. */
void snapshot_record(void);
/*
 * Write @file: the files read so far (those below @host_root, if not
 * NULL, at their host paths; links as data) and answers.json, with the
 * storage check @st when not NULL. Nothing
 * below @host_root is moved or written. 0, or -1 with the reason in @err
 * (on success @err says what was kept).
 */
struct gdr_storage;
int snapshot_capture(const char *file, struct ibv_context *const *ctxs,
		     unsigned int num, const char *host_root,
		     const struct gdr_storage *st, char *err, size_t n);
/*
 * Read the snapshot at @source (a tar archive, plain or gzip'd; a
 * directory when @is_dir) into memory, install it in the library, and
 * return its devices. 0, or -1 with the reason in @err.
 * snapshot_storage() then holds the storage check it kept (none: no
 * paths).
 */
int snapshot_replay(const char *source, int is_dir, struct ibv_context ***ctxs,
		    unsigned int *num, char *err, size_t n);
const struct gdr_storage *snapshot_storage(void);
/* Free the replayed snapshot (after gdr_private_replay_end()). */
void snapshot_end(void);

#endif
