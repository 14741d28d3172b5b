/* SPDX-License-Identifier: MIT */
/*
 * gdr-info --storage (the check itself is the library's,
 * lib/doctor/storage*.c): run it with stdout kept clean, and read its
 * verdicts back for the exit status and the NFD label.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "storage.h"

int storage_check(struct gdr_storage *st, const char *const *paths,
		  unsigned int num, unsigned int timeout_ms, char *err,
		  size_t n)
{
	int saved, e;

	/* libcufile prints some of its complaints on stdout (1.15, seen
	 * without a CUDA driver): while it runs, stdout is stderr. */
	if (fflush(stdout) == EOF) {
		snprintf(err, n, "flushing stdout: %s", strerror(errno));
		return -1;
	}
	saved = dup(STDOUT_FILENO);
	if (saved < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		snprintf(err, n, "redirecting stdout: %s", strerror(errno));
		if (saved >= 0)
			close(saved);
		return -1;
	}
	e = gdr_private_storage_check(st, paths, num, 0, timeout_ms, 0);
	fflush(stdout);
	if (dup2(saved, STDOUT_FILENO) < 0) {
		snprintf(err, n, "restoring stdout: %s", strerror(errno));
		close(saved);
		return -1;
	}
	close(saved);
	if (e) {
		snprintf(err, n, "%s", strerror(e));
		return -1;
	}
	return 0;
}

/* Each path's "gds" item, in turn. */
static const char *label(const struct gdr_report *r, bool *all_ok)
{
	struct gdr_report_item it;
	unsigned int i;
	int worst = 0; /* 0 none, 1 direct, 2 unknown, 3 compat, 4 fail */

	*all_ok = true;
	for (i = 0; i < gdr_report_num_items(r); i++) {
		int rank;

		memset(&it, 0, sizeof(it));
		if (gdr_report_item(r, i, &it, sizeof(it)) ||
		    it.scope != GDR_REPORT_SCOPE_STORAGE ||
		    strcmp(it.key, "gds") || !strcmp(it.section, "storage"))
			continue;
		if (it.verdict == GDR_VERDICT_OK)
			rank = 1;
		else if (!strncmp(it.value, "compat", 6))
			rank = 3;
		else if (it.verdict == GDR_VERDICT_UNKNOWN)
			rank = 2;
		else
			rank = 4;
		*all_ok &= rank == 1;
		if (rank > worst)
			worst = rank;
	}
	if (!worst)
		*all_ok = false;
	return (const char *[]){ NULL, "direct", "unknown", "compat",
				 "fail" }[worst];
}

bool storage_proved(const struct gdr_report *r)
{
	bool ok;

	label(r, &ok);
	return ok;
}

const char *storage_label(const struct gdr_report *r)
{
	bool ok;

	return label(r, &ok);
}
