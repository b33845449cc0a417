/* A hash map from 64-bit keys (GUIDs) to 32-bit indexes: open addressing, linear probing.
 * Key 0 is reserved (no GUID is 0). */
#ifndef IBSMD_UTIL_U64MAP_H
#define IBSMD_UTIL_U64MAP_H

#include <stdint.h>

#define U64MAP_NONE UINT32_MAX

struct u64map {
	uint64_t *keys;
	uint32_t *vals;
	uint32_t cap, used;
};

/* 0, or -1 when out of memory. */
int u64map_put(struct u64map *m, uint64_t key, uint32_t val);
uint32_t u64map_get(const struct u64map *m, uint64_t key);
/* Remove a key (backward-shift deletion keeps probes short). */
void u64map_del(struct u64map *m, uint64_t key);
void u64map_clear(struct u64map *m);
void u64map_free(struct u64map *m);
/* A count per key (a key absent counts 0): add delta, the key dropped when it comes to 0.
 * The new count; on running out of memory the count is left as it was. */
uint32_t u64map_count_add(struct u64map *m, uint64_t key, int delta);
static inline uint32_t u64map_count(const struct u64map *m, uint64_t key)
{
	uint32_t n = u64map_get(m, key);
	return n == U64MAP_NONE ? 0 : n;
}
/* FNV-1a of a string, never 0: names as keys. */
uint64_t u64map_str_key(const char *s);

#endif
