#include "util/idxmap.h"

#include <stdlib.h>
#include <string.h>

static int grow(struct idxmap *m)
{
	uint32_t ncap = m->cap ? m->cap * 2 : 64;
	uint32_t *ni = malloc(sizeof(*ni) * ncap), *nh = malloc(sizeof(*nh) * ncap);
	if (!ni || !nh || ncap < m->cap) {
		free(ni);
		free(nh);
		return -1;
	}
	memset(ni, 0xff, sizeof(*ni) * ncap);
	for (uint32_t i = 0; i < m->cap; i++) {
		if (m->idx[i] == IDXMAP_NONE)
			continue;
		uint32_t j = m->hash[i] & (ncap - 1);
		while (ni[j] != IDXMAP_NONE)
			j = (j + 1) & (ncap - 1);
		ni[j] = m->idx[i];
		nh[j] = m->hash[i];
	}
	free(m->idx);
	free(m->hash);
	m->idx = ni;
	m->hash = nh;
	m->cap = ncap;
	return 0;
}

uint32_t idxmap_find(const struct idxmap *m, uint32_t hash, const void *key, idxmap_eq_fn eq,
                     const void *ctx)
{
	if (!m->cap)
		return IDXMAP_NONE;
	for (uint32_t j = hash & (m->cap - 1); m->idx[j] != IDXMAP_NONE; j = (j + 1) & (m->cap - 1))
		if (m->hash[j] == hash && eq(key, m->idx[j], ctx))
			return m->idx[j];
	return IDXMAP_NONE;
}

int idxmap_add(struct idxmap *m, uint32_t hash, uint32_t idx)
{
	if ((uint64_t)(m->used + 1) * 2 > m->cap && grow(m) < 0)
		return -1;
	uint32_t j = hash & (m->cap - 1);
	while (m->idx[j] != IDXMAP_NONE)
		j = (j + 1) & (m->cap - 1);
	m->idx[j] = idx;
	m->hash[j] = hash;
	m->used++;
	return 0;
}

static uint32_t slot_of(const struct idxmap *m, uint32_t hash, uint32_t idx)
{
	if (!m->cap)
		return IDXMAP_NONE;
	for (uint32_t j = hash & (m->cap - 1); m->idx[j] != IDXMAP_NONE; j = (j + 1) & (m->cap - 1))
		if (m->idx[j] == idx)
			return j;
	return IDXMAP_NONE;
}

void idxmap_del(struct idxmap *m, uint32_t hash, uint32_t idx)
{
	uint32_t j = slot_of(m, hash, idx), mask = m->cap - 1;
	if (j == IDXMAP_NONE)
		return;
	m->idx[j] = IDXMAP_NONE;
	m->used--;
	/* shift back the run that follows, so lookups never stop at the hole early */
	for (uint32_t k = (j + 1) & mask; m->idx[k] != IDXMAP_NONE; k = (k + 1) & mask) {
		uint32_t home = m->hash[k] & mask;
		if ((k > j && (home <= j || home > k)) || (k < j && home <= j && home > k)) {
			m->idx[j] = m->idx[k];
			m->hash[j] = m->hash[k];
			m->idx[k] = IDXMAP_NONE;
			j = k;
		}
	}
}

void idxmap_move(struct idxmap *m, uint32_t hash, uint32_t from, uint32_t to)
{
	uint32_t j = slot_of(m, hash, from);
	if (j != IDXMAP_NONE)
		m->idx[j] = to;
}

void idxmap_free(struct idxmap *m)
{
	free(m->idx);
	free(m->hash);
	memset(m, 0, sizeof(*m));
}

uint32_t idxmap_hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	/* keys that differ in their last bytes only (MGIDs) still spread over the low bits */
	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	return h;
}
