/* SPDX-License-Identifier: MIT */
/*
 * An interval tree: an AVL tree of [start, end) ranges ordered by start
 * (then by node address, so that equal starts may coexist), each node
 * knowing the largest end below it. The registration cache finds the
 * entry covering a range, and every entry overlapping one, in O(log n + k).
 */
#include "internal.h"

static int height(const struct gdr_itree_node *n)
{
	return n ? n->height : 0;
}

static uintptr_t max_end(const struct gdr_itree_node *n)
{
	return n ? n->max_end : 0;
}

static void update(struct gdr_itree_node *n)
{
	int hl = height(n->left), hr = height(n->right);
	uintptr_t m = n->end;

	n->height = 1 + (hl > hr ? hl : hr);
	if (max_end(n->left) > m)
		m = max_end(n->left);
	if (max_end(n->right) > m)
		m = max_end(n->right);
	n->max_end = m;
}

static struct gdr_itree_node *rotate_right(struct gdr_itree_node *n)
{
	struct gdr_itree_node *l = n->left;

	n->left = l->right;
	l->right = n;
	update(n);
	update(l);
	return l;
}

static struct gdr_itree_node *rotate_left(struct gdr_itree_node *n)
{
	struct gdr_itree_node *r = n->right;

	n->right = r->left;
	r->left = n;
	update(n);
	update(r);
	return r;
}

static struct gdr_itree_node *balance(struct gdr_itree_node *n)
{
	int b;

	update(n);
	b = height(n->left) - height(n->right);
	if (b > 1) {
		if (height(n->left->left) < height(n->left->right))
			n->left = rotate_left(n->left);
		return rotate_right(n);
	}
	if (b < -1) {
		if (height(n->right->right) < height(n->right->left))
			n->right = rotate_right(n->right);
		return rotate_left(n);
	}
	return n;
}

/* Order: by start, then by address. */
static int before(const struct gdr_itree_node *a,
		  const struct gdr_itree_node *b)
{
	if (a->start != b->start)
		return a->start < b->start;
	return (uintptr_t)a < (uintptr_t)b;
}

static struct gdr_itree_node *insert(struct gdr_itree_node *t,
				     struct gdr_itree_node *n)
{
	if (!t)
		return n;
	if (before(n, t))
		t->left = insert(t->left, n);
	else
		t->right = insert(t->right, n);
	return balance(t);
}

void gdr_itree_insert(struct gdr_itree_node **root, struct gdr_itree_node *n)
{
	n->left = n->right = NULL;
	n->height = 1;
	n->max_end = n->end;
	*root = insert(*root, n);
}

/* Unlink the smallest node of @t into *@min; the rest, balanced. */
static struct gdr_itree_node *take_min(struct gdr_itree_node *t,
				       struct gdr_itree_node **min)
{
	if (!t->left) {
		*min = t;
		return t->right;
	}
	t->left = take_min(t->left, min);
	return balance(t);
}

static struct gdr_itree_node *remove_node(struct gdr_itree_node *t,
					  struct gdr_itree_node *n)
{
	struct gdr_itree_node *m;

	if (!t)
		return NULL;
	if (t != n) {
		if (before(n, t))
			t->left = remove_node(t->left, n);
		else
			t->right = remove_node(t->right, n);
		return balance(t);
	}
	if (!t->right)
		return t->left;
	t->right = take_min(t->right, &m);
	m->left = t->left;
	m->right = t->right;
	return balance(m);
}

void gdr_itree_remove(struct gdr_itree_node **root, struct gdr_itree_node *n)
{
	*root = remove_node(*root, n);
	n->left = n->right = NULL;
}

static struct gdr_itree_node *cover(struct gdr_itree_node *t, uintptr_t a,
				    uintptr_t b)
{
	struct gdr_itree_node *found;

	/* Only a subtree whose ends reach b can hold a cover. */
	while (t && t->max_end >= b) {
		if (t->start <= a && t->end >= b)
			return t;
		found = cover(t->left, a, b);
		if (found)
			return found;
		if (t->start > a)
			return NULL; /* everything right starts after a too */
		t = t->right;
	}
	return NULL;
}

/*
 * The node that starts last at or before @a covers [@a, @b) whenever the
 * ranges do not nest, which is the usual case: one path from the root.
 * Otherwise search the subtrees whose ends reach @b.
 */
struct gdr_itree_node *gdr_itree_cover(struct gdr_itree_node *t, uintptr_t a,
				       uintptr_t b)
{
	struct gdr_itree_node *root = t, *pred = NULL;

	while (t) {
		if (t->start <= a) {
			pred = t;
			t = t->right;
		} else {
			t = t->left;
		}
	}
	if (pred && pred->end >= b)
		return pred;
	return cover(root, a, b);
}

unsigned int gdr_itree_overlaps(struct gdr_itree_node *t, uintptr_t a,
				uintptr_t b, struct gdr_itree_node **out,
				unsigned int max)
{
	unsigned int n = 0;

	if (!t || t->max_end <= a)
		return 0;
	n += gdr_itree_overlaps(t->left, a, b, out, max);
	if (t->start < b && t->end > a && n < max)
		out[n++] = t;
	if (t->start < b && n < max)
		n += gdr_itree_overlaps(t->right, a, b, out + n, max - n);
	return n;
}
