/* A node-name-map as infiniband-diags reads it (ibnetdiscover --node-name-map, OpenSM's
 * node_name_map_name): lines "GUID "name"" keyed by node GUID, # comments, the first line of
 * a GUID winning. Sites name hosts and switches there when the NodeDescriptions are not the
 * names their scheduler and people use (a rail-optimized host's HCAs, each its own node,
 * mapped to the host's name). Parser of outside input: every error names the file and line;
 * fuzzed by test/fuzz/fuzz_name_map.c. */
#ifndef IBSMD_UTIL_NAME_MAP_H
#define IBSMD_UTIL_NAME_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/u64map.h"

#define NAME_MAP_NAME_LEN 65 /* a name: at most 64 bytes, as a NodeDescription */

struct name_map {
	struct u64map by_guid; /* node GUID -> index into names */
	char (*names)[NAME_MAP_NAME_LEN];
	uint32_t n, cap;
};

/* 0 with m filled (free it), or -1 with why ("NAME:LINE: ..."), m left empty. */
int name_map_parse(struct name_map *m, const char *text, size_t len, const char *name, char *why,
                   size_t whylen);
int name_map_read(struct name_map *m, const char *path, char *why, size_t whylen);
/* The name of a node GUID, NULL when the map has none. */
const char *name_map_get(const struct name_map *m, uint64_t guid);
void name_map_free(struct name_map *m);

#endif
