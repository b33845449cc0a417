#include "util/u64map.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t k)
{
	k ^= k >> 31;
	k *= 0x7fb5d329728ea185ull;
	k ^= k >> 27;
	k *= 0x81dadef4bc2dd44dull;
	k ^= k >> 33;
	return k;
}

static int grow(struct u64map *m)
{
	uint32_t ncap = m->cap ? m->cap * 2 : 1024;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	uint32_t *nv = calloc(ncap, sizeof(*nv));
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -1;
	}
	for (uint32_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		uint32_t j = (uint32_t)mix(m->keys[i]) & (ncap - 1);
		while (nk[j])
			j = (j + 1) & (ncap - 1);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	if (!key)
		return 0;
	if ((m->used + 1) * 2 > m->cap && grow(m) < 0)
		return -1;
	uint32_t j = (uint32_t)mix(key) & (m->cap - 1);
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->keys[j])
		m->used++;
	m->keys[j] = key;
	m->vals[j] = val;
	return 0;
}

uint32_t u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->cap || !key)
		return U64MAP_NONE;
	uint32_t j = (uint32_t)mix(key) & (m->cap - 1);
	while (m->keys[j]) {
		if (m->keys[j] == key)
			return m->vals[j];
		j = (j + 1) & (m->cap - 1);
	}
	return U64MAP_NONE;
}

void u64map_del(struct u64map *m, uint64_t key)
{
	if (!m->cap || !key)
		return;
	uint32_t mask = m->cap - 1, j = (uint32_t)mix(key) & mask;
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & mask;
	if (!m->keys[j])
		return;
	m->keys[j] = 0;
	m->used--;
	/* shift back the run that follows, so lookups never stop at the hole early */
	for (uint32_t k = (j + 1) & mask; m->keys[k]; k = (k + 1) & mask) {
		uint32_t home = (uint32_t)mix(m->keys[k]) & mask;
		if ((k > j && (home <= j || home > k)) || (k < j && home <= j && home > k)) {
			m->keys[j] = m->keys[k];
			m->vals[j] = m->vals[k];
			m->keys[k] = 0;
			j = k;
		}
	}
}

void u64map_clear(struct u64map *m)
{
	if (m->cap)
		memset(m->keys, 0, sizeof(*m->keys) * m->cap);
	m->used = 0;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

uint64_t u64map_str_key(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 0x100000001b3ull;
	}
	return h ? h : 1;
}

uint32_t u64map_count_add(struct u64map *m, uint64_t key, int delta)
{
	uint32_t n = u64map_count(m, key) + (uint32_t)delta;
	if (!n)
		u64map_del(m, key);
	else if (u64map_put(m, key, n) < 0)
		return u64map_count(m, key);
	return n;
}
