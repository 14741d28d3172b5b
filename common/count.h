/* SPDX-License-Identifier: MIT */
/*
 * A count given on an example's command line: decimal digits only, from 1
 * to @max. Anything else ("1M", "0x10", "-1", "") is refused rather than
 * read as part of it, so that two programs given the same words agree.
 */
#ifndef GDR_COMMON_COUNT_H
#define GDR_COMMON_COUNT_H

#include <errno.h>
#include <stdlib.h>

/* 0 and *@v, or -1 when @s is not such a count. */
static inline int count_parse(const char *s, unsigned long long max,
			      unsigned long long *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end || !*v || *v > max ? -1 : 0;
}

#endif
