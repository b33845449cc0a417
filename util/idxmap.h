/* A hash index over the elements of an array the caller owns: maps a key (an MGID, a name:
 * anything the caller can hash and compare) to the element's index. The map stores indexes
 * and their hashes only; the caller's eq() compares a key with an element. Open addressing,
 * linear probing, backward-shift deletion, as util/u64map. */
#ifndef IBSMD_UTIL_IDXMAP_H
#define IBSMD_UTIL_IDXMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDXMAP_NONE UINT32_MAX

struct idxmap {
	uint32_t *idx; /* IDXMAP_NONE: empty slot */
	uint32_t *hash;
	uint32_t cap, used;
};

typedef bool (*idxmap_eq_fn)(const void *key, uint32_t idx, const void *ctx);

/* The index of the element equal to key, or IDXMAP_NONE. */
uint32_t idxmap_find(const struct idxmap *m, uint32_t hash, const void *key, idxmap_eq_fn eq,
                     const void *ctx);
/* Index element idx under hash (the caller makes sure no equal element is there). 0 or -1. */
int idxmap_add(struct idxmap *m, uint32_t hash, uint32_t idx);
/* Forget element idx, indexed under hash. */
void idxmap_del(struct idxmap *m, uint32_t hash, uint32_t idx);
/* Element `from` moved to `to` in the caller's array (swap-remove). */
void idxmap_move(struct idxmap *m, uint32_t hash, uint32_t from, uint32_t to);
void idxmap_free(struct idxmap *m);

/* FNV-1a of n bytes: a hash for byte-string keys. */
uint32_t idxmap_hash_bytes(const void *p, size_t n);

#endif
