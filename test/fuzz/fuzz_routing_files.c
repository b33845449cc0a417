/* Fuzz target: the files routing engines read (routing/files.c). The first byte picks the
 * parser: even, a GUID list (root_guid_file, cn_guid_file); odd, an LFT dump (lfts_file).
 * Nothing here may crash, leak or read past the input, whatever the bytes; a parse that
 * succeeds gives only values the formats allow. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "routing/files.h"

static int on_sw(void *arg, uint64_t guid, unsigned line)
{
	(void)line;
	if (!guid)
		abort(); /* a header with GUID 0 must be refused */
	*(unsigned *)arg += 1;
	return 0;
}

static int on_entry(void *arg, uint16_t lid, uint8_t port, unsigned line)
{
	(void)arg;
	(void)line;
	if (lid == 0 || lid >= 0xc000 || port > 254)
		abort(); /* the parser must have refused it */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	/* the parsers take text of a known length, NUL-terminated as routing_slurp gives it */
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	char why[512];
	if (data[0] % 2 == 0) {
		uint64_t *g = NULL;
		uint32_t n = 0;
		if (routing_parse_guids(text, size - 1, "fuzz", &g, &n, why, sizeof(why)) == 0) {
			for (uint32_t i = 0; i < n; i++)
				if (!g[i])
					abort();
			free(g);
		}
	} else {
		unsigned switches = 0;
		const struct lfts_parse_cb cb = {.sw = on_sw, .entry = on_entry};
		(void)routing_parse_lfts(text, size - 1, "fuzz", &cb, &switches, why, sizeof(why));
	}
	free(text);
	return 0;
}
