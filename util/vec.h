/* The one growable array of the tree: an element pointer and a capacity, grown by doubling,
 * new room zero-filled. Either as a VEC(type) struct (v, n, cap) or over a pointer and a
 * capacity that a struct already holds (array_reserve). Written by hand, in the manner of
 * BIRD's lib/buffer.h: a few lines that no library offers for plain C arrays. */
#ifndef IBSMD_UTIL_VEC_H
#define IBSMD_UTIL_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define VEC(type)                                                                                  \
	struct {                                                                                   \
		type *v;                                                                           \
		uint32_t n, cap;                                                                   \
	}

/* Make room for `need` elements of `elem` bytes in the array *pp (a pointer to any pointer
 * type) of capacity *cap. 0, or -1 when out of memory or past UINT32_MAX elements (the array
 * is then unchanged). */
int vec_grow_(void *pp, uint32_t *cap, uint64_t need, size_t elem);

#define array_reserve(pp, capp, need) vec_grow_((pp), (capp), (need), sizeof(**(pp)))

/* The same without zero-filling the new room, for arrays whose every element is written
 * in full as it is added (fabric/'s nodes and ports): at 40,000 hosts zeroing each doubled
 * capacity touched twice the memory the fabric needs, page faults and all. */
int vec_grow_raw_(void *pp, uint32_t *cap, uint64_t need, size_t elem);
#define array_reserve_raw(pp, capp, need) vec_grow_raw_((pp), (capp), (need), sizeof(**(pp)))

#define vec_reserve(a, need) array_reserve(&(a)->v, &(a)->cap, (need))
/* A pointer to a new zeroed element at the end, or NULL when out of memory. */
#define vec_push(a) (vec_reserve((a), (uint64_t)(a)->n + 1) < 0 ? NULL : &(a)->v[(a)->n++])
/* Remove element i by moving the last one into its place (order is not kept). */
#define vec_swap_remove(a, i) ((a)->v[(i)] = (a)->v[--(a)->n])
#define vec_free(a)                                                                                \
	do {                                                                                       \
		free((a)->v);                                                                      \
		(a)->v = NULL;                                                                     \
		(a)->n = (a)->cap = 0;                                                             \
	} while (0)

#endif
