/* SPDX-License-Identifier: MIT */
/* gdr-info --nfd: the report as a Node Feature Discovery feature file. */
#ifndef GDR_INFO_NFD_H
#define GDR_INFO_NFD_H

#include <stdbool.h>
#include <stddef.h>

struct gdr_report;

#define NFD_MAX 63 /* a label name (after the prefix) or value */
#define NFD_MAX_NICS 64

/* One self-test: a GPU (or -1 for host memory) with an RDMA device. */
struct nfd_selftest {
	char nic[64];
	int gpu;
	bool ok;
};

/*
 * The feature file's text (malloc'd): the expiry directive @expiry seconds
 * from now, then the labels of @r and, if the self-test @ran, its results.
 * 0, or -1 when out of memory or a node label would not fit.
 */
int nfd_render(const struct gdr_report *r, const struct nfd_selftest *st,
	       unsigned int nst, bool ran, long expiry, char **text,
	       size_t *len);
/* Replace @file atomically with @text. 0, or -1 with the reason. */
int nfd_write(const char *file, const char *text, size_t len, char *err,
	      size_t n);
/* A label value: the first word of @in, in NFD's characters. */
void nfd_value(const char *in, char *out, size_t n);
/* A device name as part of a label name: at most @max characters
 * ([A-Za-z0-9_-]), a long one cut and tagged with a hash of the whole. */
void nfd_device(const char *in, char *out, size_t max);

#endif
