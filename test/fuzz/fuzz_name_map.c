/* Fuzz target: node-name-map files (util/name_map.c), as a site writes them for
 * ibnetdiscover and ibsmd's node_name_map. Nothing here may crash, leak or read past the
 * input, whatever the bytes; a map that parses holds only names of 1 to 64 bytes without
 * '#' or a NUL, under GUIDs that are not 0, each found again by its GUID. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/name_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct name_map m;
	char why[256];
	if (name_map_parse(&m, (const char *)data, size, "fuzz", why, sizeof(why)) < 0) {
		if (!why[0])
			abort(); /* a refusal gives its reason */
		return 0;
	}
	for (uint32_t k = 0; k < m.by_guid.cap; k++) {
		uint64_t g = m.by_guid.keys[k];
		if (!g)
			continue;
		const char *n = name_map_get(&m, g);
		size_t len = n ? strlen(n) : 0;
		if (!len || len >= NAME_MAP_NAME_LEN || strchr(n, '#'))
			abort();
	}
	name_map_free(&m);
	return 0;
}
