/* SPDX-License-Identifier: MIT */
/*
 * The one parser of the numbers given on the programs' command lines
 * (sizes, counts, ports, GPU ordinals, seconds): decimal digits only, the
 * whole word, from a minimum to a maximum. Anything else ("1M", "0x10",
 * "-1", " 1", "", digits past the maximum) is refused rather than read as
 * part of it, so that two programs given the same words agree. Nothing is
 * copied into a buffer first: the word is read as it was given, however
 * long.
 */
#ifndef GDR_COMMON_COUNT_H
#define GDR_COMMON_COUNT_H

#include <errno.h>
#include <stdlib.h>

/* 0 and *@v, or -1 when @s is not a decimal number from @min to @max. */
static inline int number_parse(const char *s, unsigned long long min,
			       unsigned long long max, unsigned long long *v)
{
	unsigned long long r;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	r = strtoull(s, &end, 10);
	if (errno || *end || r < min || r > max)
		return -1;
	*v = r;
	return 0;
}

/* A count: from 1 to @max. 0 and *@v, or -1. */
static inline int count_parse(const char *s, unsigned long long max,
			      unsigned long long *v)
{
	return number_parse(s, 1, max, v);
}

#endif
