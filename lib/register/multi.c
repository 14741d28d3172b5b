/* SPDX-License-Identifier: MIT */
/*
 * One buffer on several protection domains (the rails of a multi-NIC
 * node): one classification and one dma-buf export for the whole call,
 * each PD its own path decision, all or nothing.
 */
#include <errno.h>
#include <string.h>

#include "register.h"

/* Record @i of the caller's array of records @size bytes apart. */
static struct gdr_reg_info *info_at(struct gdr_reg_info *infos, size_t size,
				    unsigned int i)
{
	return (struct gdr_reg_info *)(void *)((char *)infos +
					       (size_t)i * size);
}

/* Whether @num records @size bytes apart from @infos stay inside the
 * address space (the caller's array is another matter). */
static bool records_fit(const struct gdr_reg_info *infos, unsigned int num,
			size_t size)
{
	return num && size <= (UINTPTR_MAX - (uintptr_t)infos) / num;
}

static int check_multi(const char *call, struct ibv_pd *const *pds,
		       unsigned int num, struct ibv_mr **mrs,
		       const struct gdr_reg_info *infos, size_t info_size,
		       char *why, size_t n)
{
	unsigned int i, j;

	if (!pds || !mrs) {
		gdr_fmt(why, n, "%s: pds and mrs must not be NULL", call);
		return EINVAL;
	}
	if (num == 0 || num > GDR_REG_MULTI_MAX) {
		gdr_fmt(why, n,
			"%s: num is %u; pass 1 to %u PDs "
			"(GDR_REG_MULTI_MAX), or call it again for more",
			call, num, GDR_REG_MULTI_MAX);
		return EINVAL;
	}
	if (infos && info_size < GDR_REG_INFO_MIN_SIZE) {
		gdr_fmt(why, n,
			"info_size %zu is smaller than the first fields of "
			"struct gdr_reg_info (%zu); pass sizeof(*infos)",
			info_size, (size_t)GDR_REG_INFO_MIN_SIZE);
		return EINVAL;
	}
	if (infos && !records_fit(infos, num, info_size)) {
		gdr_fmt(why, n,
			"info_size %zu carries %u records past the end of the "
			"address space; pass sizeof(*infos)",
			info_size, num);
		return EINVAL;
	}
	for (i = 0; i < num; i++) {
		if (!pds[i]) {
			gdr_fmt(why, n,
				"%s: pds[%u] is NULL; pass %u "
				"allocated PDs",
				call, i, num);
			return EINVAL;
		}
		for (j = 0; j < i; j++)
			if (pds[j] == pds[i]) {
				gdr_fmt(why, n,
					"%s: pds[%u] is pds[%u] "
					"again; pass each PD once (one MR per "
					"PD serves every QP on it)",
					call, i, j);
				return EINVAL;
			}
	}
	return 0;
}

/* Room for what the roll-back says: which MRs stay (the first few by
 * index, how many more), the errno in words and the remedy. */
#define TAIL_LEN 320

/* Release mrs[0..k-1], made before pds[k] failed; say in @why which could
 * not be released (the first few by index, how many more, and the errno
 * of the first). Returns how many stay registered. */
static unsigned int roll_back(struct ibv_mr **mrs, unsigned int k, char *why,
			      size_t n)
{
	const struct gdr_seam *s = gdr_seam();
	unsigned int i, stay = 0, more = 0;
	char words[96], which[48] = "", more_words[32] = "";
	int err, first = 0;

	for (i = 0; i < k; i++) {
		err = s->verbs.dereg_mr(mrs[i]);
		if (!err) {
			mrs[i] = NULL;
			continue;
		}
		if (!stay++)
			first = err;
		/* whole numbers only: room for ", 255" and the NUL */
		if (strlen(which) + 6 < sizeof(which))
			gdr_append(which, sizeof(which), "%s%u",
				   stay > 1 ? ", " : "", i);
		else
			more++;
	}
	if (more)
		gdr_fmt(more_words, sizeof(more_words), " and %u more", more);
	if (stay == 1)
		gdr_append(why, n,
			   "; releasing the MR of pds[%s] failed with %s: it "
			   "stays in mrs[%s] (release it with "
			   "gdr_deregister_multi)",
			   which, gdr_errno_words(first, words, sizeof(words)),
			   which);
	else if (stay)
		gdr_append(why, n,
			   "; releasing the MRs of pds[%s]%s failed (the first "
			   "with %s): they stay in mrs at the same places "
			   "(release them with gdr_deregister_multi)",
			   which, more_words,
			   gdr_errno_words(first, words, sizeof(words)));
	return stay;
}

int gdr_reg_multi(const char *name, struct ibv_pd *const *pds, unsigned int num,
		  void *ptr, size_t len, const struct gdr_reg_attr *attr,
		  uint32_t known, struct ibv_mr **mrs,
		  struct gdr_reg_info *infos, size_t info_size,
		  int (*prepare)(struct gdr_reg_call *call, void *arg,
				 char *why, size_t n),
		  void *arg)
{
	struct gdr_reg_call call;
	struct gdr_reg_info rec;
	char why[GDR_MSG_LEN], head[GDR_MSG_LEN / 4] = "", tail[TAIL_LEN] = "";
	bool rec_tried = false;
	unsigned int i, j, k;
	size_t room;
	int err = 0;

	gdr_clear_error();
	/* Whatever fails below, the caller's arrays say "nothing": every MR
	 * NULL, every record GDR_PATH_NONE (as far as they can be written). */
	if (mrs && num <= GDR_REG_MULTI_MAX)
		for (i = 0; i < num; i++)
			mrs[i] = NULL;
	memset(&rec, 0, GDR_REG_INFO_MIN_SIZE); /* no attempts yet */
	rec.device = -1;
	rec.export_index = -1;
	if (infos && info_size >= GDR_REG_INFO_MIN_SIZE &&
	    num <= GDR_REG_MULTI_MAX && records_fit(infos, num, info_size))
		for (i = 0; i < num; i++)
			gdr_reg_give_info(&rec, info_at(infos, info_size, i),
					  info_size, false);
	err = check_multi(name, pds, num, mrs, infos, info_size, why,
			  sizeof(why));
	gdr_reg_call_init(&call);
	if (!err && prepare)
		err = prepare(&call, arg, why, sizeof(why));
	if (err) {
		gdr_fail(err, "%s", why);
		return -1;
	}
	call.reuse = true;
	for (k = 0; k < num; k++) {
		err = gdr_reg_one(&call, pds[k], ptr, len, attr, known, &rec,
				  infos != NULL, &mrs[k], why, sizeof(why));
		if (infos)
			gdr_reg_give_info(&rec, info_at(infos, info_size, k),
					  info_size, false);
		rec_tried = rec.num_attempts > 0;
		if (err)
			break;
	}
	gdr_reg_call_end(&call);
	if (!err)
		return 0;
	/* The PDs after the failing one were never tried, but the buffer
	 * was classified for the whole call: their records say so (no
	 * path, no attempts) on its memory type and GPU, as the others. */
	if (infos && call.classified) {
		memset(&rec, 0, GDR_REG_INFO_MIN_SIZE);
		rec.mem_type = call.pi.type;
		rec.device = call.pi.device;
		rec.export_index = -1;
		for (j = k + 1; j < num; j++)
			gdr_reg_give_info(&rec, info_at(infos, info_size, j),
					  info_size, false);
	}
	/* A failure before any path was tried (the arguments, the
	 * environment, the buffer) is the call's, not the PD's. */
	if (rec_tried)
		gdr_fmt(head, sizeof(head), "pds[%u] (%s) of %u: ", k,
			gdr_pd_name(pds[k]), num);
	if (roll_back(mrs, k, tail, sizeof(tail)) == 0 && k)
		gdr_append(tail, sizeof(tail),
			   "; the MRs made on pds[0..%u] are released", k - 1);
	/* The reason gives way, so that which PD failed and what became of
	 * the MRs made before it (the remedy) are never what is cut. */
	room = GDR_MSG_LEN - 1 - strlen(head) - strlen(tail);
	gdr_fail(err, "%s%.*s%s", head, (int)room, why, tail);
	return -1;
}

GDR_PUBLIC int gdr_register_multi(struct ibv_pd *const *pds, unsigned int num,
				  void *ptr, size_t len,
				  const struct gdr_reg_attr *attr,
				  struct ibv_mr **mrs,
				  struct gdr_reg_info *infos, size_t info_size)
{
	return gdr_reg_multi("gdr_register_multi", pds, num, ptr, len, attr,
			     gdr_reg_paths(), mrs, infos, info_size, NULL,
			     NULL);
}

GDR_PUBLIC int gdr_deregister_multi(struct ibv_mr **mrs, unsigned int num)
{
	const struct gdr_seam *s = gdr_seam();
	char words[96];
	unsigned int i;
	int err, first = 0;

	gdr_clear_error();
	if (!mrs) {
		gdr_fail(EINVAL, "gdr_deregister_multi: mrs is NULL; pass the "
				 "array gdr_register_multi() filled");
		return EINVAL;
	}
	for (i = 0; i < num; i++) {
		if (!mrs[i])
			continue;
		err = s->verbs.dereg_mr(mrs[i]);
		if (!err) {
			mrs[i] = NULL;
			continue;
		}
		if (first)
			continue;
		first = gdr_errno_public(err);
		gdr_fail(err,
			 "ibv_dereg_mr of mrs[%u] failed with %s; it stays "
			 "registered (and in mrs[%u]): %s",
			 i, gdr_errno_words(err, words, sizeof(words)), i,
			 gdr_dereg_remedy(err));
	}
	if (first)
		errno = first;
	return first;
}
