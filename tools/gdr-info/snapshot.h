/* SPDX-License-Identifier: MIT */
/*
 * gdr-info snapshots: record the sysfs/procfs files the report reads and
 * the CUDA and verbs answers, write them as a tar, and replay a snapshot
 * through the library's seam on another machine.
 */
#ifndef GDR_EXAMPLES_SNAPSHOT_H
#define GDR_EXAMPLES_SNAPSHOT_H

#include <infiniband/verbs.h>

/* From now on, remember every file and link the library reads. */
void snapshot_record(void);
/* Write FILE: the files read so far (those below @host_root, if not NULL,
 * at their host paths) and answers.json. 0 or -1. */
int snapshot_capture(const char *file, struct ibv_context *const *ctxs,
		     unsigned int num, const char *host_root, char *err,
		     size_t n);
/* Replay the snapshot in DIR: install its seam, return its devices. */
int snapshot_replay(const char *dir, struct ibv_context ***ctxs,
		    unsigned int *num, char *err, size_t n);
/* Unpack a snapshot tar into a new temporary directory (malloc'd). */
char *snapshot_extract(const char *file, char *err, size_t n);
void snapshot_remove(const char *dir);

#endif
