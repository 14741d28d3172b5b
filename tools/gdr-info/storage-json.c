/* SPDX-License-Identifier: MIT */
/*
 * The storage check's facts in a snapshot's answers.json ("storage",
 * snapshot format 2, 0.5): what cuFile answered and what each path was,
 * and the capture's measurement, which a replay shows as not measured
 * there. The mount table and sysfs files the check read are kept as the
 * snapshot's files, like every other file the report reads.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gpudirect-private.h>

#include "json.h"
#include "storage-json.h"

/* A whole number of answers.json from -2^53 to 2^53, else @def (a
 * crafted 1e300 or 2.5 is not converted). */
static long long whole(const struct json *o, const char *key, long long def)
{
	double d = json_num(o, key, NAN);

	if (!isfinite(d) || d != floor(d) || fabs(d) > 9007199254740992.0)
		return def;
	return (long long)d;
}

static void str(FILE *f, const char *key, const char *v, int comma)
{
	fprintf(f, "%s\"%s\": ", comma ? ", " : "", key);
	json_write_str(f, v);
}

void storage_json_write(FILE *f, const struct gdr_storage *st)
{
	const struct gdr_storage_cufile *c = &st->cufile;
	int i;

	fprintf(f, ",\n  \"storage\": {\"cufile\": {\"load_err\": %d",
		c->load_err);
	str(f, "why", c->why, 1);
	str(f, "library", c->library, 1);
	str(f, "how", c->how, 1);
	fprintf(f,
		", \"version\": %d, \"open_err\": %d, \"open_cu_err\": %d, "
		"\"props_err\": %d, \"nvfs_major\": %u, \"nvfs_minor\": %u, "
		"\"dstatusflags\": %u, \"dcontrolflags\": %u, \"fflags\": %u, "
		"\"allow_compat\": %d, \"force_compat\": %d, "
		"\"use_p2pdma\": %d",
		c->version, c->open_err, c->open_cu_err, c->props_err,
		c->nvfs_major, c->nvfs_minor, c->dstatusflags, c->dcontrolflags,
		c->fflags, c->allow_compat, c->force_compat, c->use_p2pdma);
	str(f, "stuck", c->stuck, 1);
	fprintf(f, "},\n    \"paths\": [");
	for (i = 0; i < st->num_paths && i < GDR_STORAGE_MAX_PATHS; i++) {
		const struct gdr_storage_path *p = &st->path[i];
		const struct gdr_storage_io *io = &p->io;

		fprintf(f, "%s\n     {", i ? "," : "");
		str(f, "path", p->path, 0);
		fprintf(f, ", \"errno\": %d, \"kind\": %d", p->err, p->kind);
		str(f, "real", p->real, 1);
		fprintf(f,
			", \"dev_major\": %u, \"dev_minor\": %u, "
			"\"mnt_id\": %lld, \"size\": %llu",
			p->dev_major, p->dev_minor, p->mnt_id, p->size);
		str(f, "server", p->server, 1);
		fprintf(f, ", \"route_errno\": %d", p->route_err);
		str(f, "route_dev", p->route_dev, 1);
		str(f, "route_src", p->route_src, 1);
		fprintf(f, ",\n      \"measured\": {\"state\": %d", io->state);
		str(f, "why", io->why, 1);
		fprintf(f,
			", \"gpu\": %d, \"readonly\": %d, \"odirect\": %d, "
			"\"bytes\": %llu, \"reg_err\": %d, "
			"\"write_ret\": %lld, \"write_errno\": %d, "
			"\"write_ns\": %llu, \"read_ret\": %lld, "
			"\"read_errno\": %d, \"read_ns\": %llu, "
			"\"pread_ret\": %lld, \"pread_errno\": %d, "
			"\"pread_ns\": %llu, \"checked\": %d, \"differ\": %llu, "
			"\"first_differ\": %lld, \"stats\": %d",
			io->gpu, io->readonly, io->odirect, io->bytes,
			io->reg_err, io->write_ret, io->write_errno,
			io->write_ns, io->read_ret, io->read_errno, io->read_ns,
			io->pread_ret, io->pread_errno, io->pread_ns,
			io->checked, io->differ, io->first_differ, io->stats);
		str(f, "stats_why", io->stats_why, 1);
		fprintf(f,
			", \"nvfs_reads\": %llu, \"p2p_reads\": %llu, "
			"\"posix_reads\": %llu, \"nvfs_writes\": %llu, "
			"\"p2p_writes\": %llu, \"posix_writes\": %llu}}",
			io->nvfs_reads, io->p2p_reads, io->posix_reads,
			io->nvfs_writes, io->p2p_writes, io->posix_writes);
	}
	fprintf(f, "\n    ]}");
}

static void text(char *dst, size_t n, const struct json *o, const char *key)
{
	snprintf(dst, n, "%s", json_str(o, key, ""));
}

static unsigned long long count(const struct json *o, const char *key)
{
	return json_bytes(o, key, 0);
}

int storage_json_read(const struct json *root, struct gdr_storage *st,
		      char *err, size_t n)
{
	const struct json *s = json_get(root, "storage"), *c, *e, *m;
	struct gdr_storage_cufile *cf = &st->cufile;

	memset(st, 0, sizeof(*st));
	if (!s)
		return 0; /* captured without --storage, or before 0.5 */
	if (s->type != JSON_OBJ) {
		snprintf(err, n, "answers.json: \"storage\" is not an object");
		return -1;
	}
	st->replayed = 1;
	c = json_get(s, "cufile");
	cf->load_err = json_int(c, "load_err", -1);
	text(cf->why, sizeof(cf->why), c, "why");
	text(cf->library, sizeof(cf->library), c, "library");
	text(cf->how, sizeof(cf->how), c, "how");
	cf->version = json_int(c, "version", -1);
	cf->open_err = json_int(c, "open_err", -1);
	cf->open_cu_err = json_int(c, "open_cu_err", 0);
	cf->props_err = json_int(c, "props_err", -1);
	cf->nvfs_major = (unsigned int)json_bytes(c, "nvfs_major", 0);
	cf->nvfs_minor = (unsigned int)json_bytes(c, "nvfs_minor", 0);
	cf->dstatusflags = (unsigned int)json_bytes(c, "dstatusflags", 0);
	cf->dcontrolflags = (unsigned int)json_bytes(c, "dcontrolflags", 0);
	cf->fflags = (unsigned int)json_bytes(c, "fflags", 0);
	cf->allow_compat = json_int(c, "allow_compat", -1);
	cf->force_compat = json_int(c, "force_compat", -1);
	cf->use_p2pdma = json_int(c, "use_p2pdma", -1);
	text(cf->stuck, sizeof(cf->stuck), c, "stuck");
	for (e = json_items(json_get(s, "paths"));
	     e && st->num_paths < GDR_STORAGE_MAX_PATHS; e = e->next) {
		struct gdr_storage_path *p = &st->path[st->num_paths++];
		struct gdr_storage_io *io = &p->io;

		text(p->path, sizeof(p->path), e, "path");
		p->err = json_int(e, "errno", 0);
		p->kind = json_int(e, "kind", 0);
		text(p->real, sizeof(p->real), e, "real");
		p->dev_major = (unsigned int)json_bytes(e, "dev_major", 0);
		p->dev_minor = (unsigned int)json_bytes(e, "dev_minor", 0);
		p->mnt_id = whole(e, "mnt_id", -1);
		p->size = count(e, "size");
		text(p->server, sizeof(p->server), e, "server");
		p->route_err = json_int(e, "route_errno", -1);
		text(p->route_dev, sizeof(p->route_dev), e, "route_dev");
		text(p->route_src, sizeof(p->route_src), e, "route_src");
		m = json_get(e, "measured");
		io->state = json_int(m, "state", 0);
		text(io->why, sizeof(io->why), m, "why");
		if (!io->state && !io->why[0])
			snprintf(io->why, sizeof(io->why),
				 "not in this snapshot");
		io->gpu = json_int(m, "gpu", -1);
		io->readonly = json_int(m, "readonly", 0);
		io->odirect = json_int(m, "odirect", 0);
		io->bytes = count(m, "bytes");
		io->reg_err = json_int(m, "reg_err", -1);
		io->write_ret = whole(m, "write_ret", 0);
		io->write_errno = json_int(m, "write_errno", 0);
		io->write_ns = count(m, "write_ns");
		io->read_ret = whole(m, "read_ret", 0);
		io->read_errno = json_int(m, "read_errno", 0);
		io->read_ns = count(m, "read_ns");
		io->pread_ret = whole(m, "pread_ret", 0);
		io->pread_errno = json_int(m, "pread_errno", 0);
		io->pread_ns = count(m, "pread_ns");
		io->checked = json_int(m, "checked", 0);
		io->differ = count(m, "differ");
		io->first_differ = whole(m, "first_differ", -1);
		io->stats = json_int(m, "stats", 0);
		text(io->stats_why, sizeof(io->stats_why), m, "stats_why");
		io->nvfs_reads = count(m, "nvfs_reads");
		io->p2p_reads = count(m, "p2p_reads");
		io->posix_reads = count(m, "posix_reads");
		io->nvfs_writes = count(m, "nvfs_writes");
		io->p2p_writes = count(m, "p2p_writes");
		io->posix_writes = count(m, "posix_writes");
	}
	return 0;
}
