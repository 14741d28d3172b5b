/* SPDX-License-Identifier: MIT */
/*
 * What every test of memory another process owns wraps the public calls
 * with: each call's errno recorded for the errno contract
 * (check-errnos.py), and SAID(), a message named and handed to the docs
 * check.
 */
#ifndef GDR_TEST_SHARE_CALLS_H
#define GDR_TEST_SHARE_CALLS_H

#include <errno.h>

#include "check.h"
#include "fakes.h"

/* The message names @what; it goes to the docs check too. */
#define SAID(what)                                                             \
	do {                                                                   \
		log_message(gdr_last_error());                                 \
		CHECK_HAS(gdr_last_error(), what);                             \
	} while (0)

#define BOOT_ID "1b4e28ba-2fa1-11d2-883f-0016d3cca427\n"

/* Each public call's errno, for the errno contract (check-errnos.py). */
static inline int seen_rc(const char *call, int rc)
{
	int e = errno;

	if (rc)
		errno_seen(call, e);
	errno = e;
	return rc;
}

static inline struct ibv_mr *seen_mr(const char *call, struct ibv_mr *mr)
{
	int e = errno;

	if (!mr)
		errno_seen(call, e);
	errno = e;
	return mr;
}

#define gdr_export(...) seen_rc("gdr_export", gdr_export(__VA_ARGS__))
#define gdr_export_pack(...)                                                   \
	seen_rc("gdr_export_pack", gdr_export_pack(__VA_ARGS__))
#define gdr_export_unpack(...)                                                 \
	seen_rc("gdr_export_unpack", gdr_export_unpack(__VA_ARGS__))
#define gdr_export_send(...)                                                   \
	seen_rc("gdr_export_send", gdr_export_send(__VA_ARGS__))
#define gdr_export_recv(...)                                                   \
	seen_rc("gdr_export_recv", gdr_export_recv(__VA_ARGS__))
#define gdr_import_register(...)                                               \
	seen_mr("gdr_import_register", gdr_import_register(__VA_ARGS__))
#define gdr_import_register_multi(...)                                         \
	seen_rc("gdr_import_register_multi",                                   \
		gdr_import_register_multi(__VA_ARGS__))
#define gdr_register_dmabuf(...)                                               \
	seen_mr("gdr_register_dmabuf", gdr_register_dmabuf(__VA_ARGS__))

#endif
