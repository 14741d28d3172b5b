/* SPDX-License-Identifier: MIT */
/* Plain C check macros: count, print what failed, summarise at the end. */
#ifndef GDR_TEST_CHECK_H
#define GDR_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

extern int check_passed, check_failed;
extern const char *check_scope;

#define CHECK_(cond, fmt, ...)                                                 \
	do {                                                                   \
		if (cond) {                                                    \
			check_passed++;                                        \
		} else {                                                       \
			check_failed++;                                        \
			fprintf(stderr, "FAIL %s:%d [%s] " fmt "\n", __FILE__, \
				__LINE__, check_scope ? check_scope : "",      \
				__VA_ARGS__);                                  \
		}                                                              \
	} while (0)

#define CHECK(cond) CHECK_(cond, "%s", #cond)
#define CHECK_INT(a, b)                                                        \
	do {                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);            \
		CHECK_(a_ == b_, "%s == %s: got %lld, want %lld", #a, #b, a_,  \
		       b_);                                                    \
	} while (0)
#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                               \
		CHECK_(a_ &&b_ &&strcmp(a_, b_) == 0,                          \
		       "%s: got \"%s\", want \"%s\"", #a, a_ ? a_ : "(null)",  \
		       b_);                                                    \
	} while (0)
#define CHECK_HAS(hay, needle)                                                 \
	do {                                                                   \
		const char *h_ = (hay), *n_ = (needle);                        \
		CHECK_(h_ &&strstr(h_, n_), "%s: \"%s\" lacks \"%s\"", #hay,   \
		       h_ ? h_ : "(null)", n_);                                \
	} while (0)

/* Print "N passed, N failed" and return the exit status. */
int check_summary(const char *what);

#endif
