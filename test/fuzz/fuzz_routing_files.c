/* Fuzz target: the files routing engines read (routing/files.c, routing/torus_conf.c). The
 * first byte picks the parser, modulo 4: 0 a GUID list (root_guid_file, cn_guid_file), 1 an
 * LFT dump (lfts_file), 2 OpenSM's torus-2QoS.conf (torus_config), 3 a "GUID NUMBER..." node
 * map (hop_weights_file, port_prof_ignore_file or ids_guid_file, by the second byte).
 * Nothing here may crash, leak or read past the input, whatever the bytes; a parse that
 * succeeds gives only values the formats allow. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "routing/files.h"
#include "routing/torus_conf.h"

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
	if (data[0] % 4 == 3) {
		/* the node maps: hop weights, port_prof_ignore_file, ids_guid_file by the
		 * second byte */
		static const struct guid_line_fmt *const fmts[] = {
		    &routing_hop_weights_fmt, &routing_port_prof_ignore_fmt, &routing_ids_fmt};
		const struct guid_line_fmt *f = fmts[size > 1 ? data[1] % 3 : 0];
		struct guid_line *w = NULL;
		uint32_t n = 0;
		if (routing_parse_guid_lines(text, size - 1, "fuzz", f, &w, &n, why, sizeof(why)) ==
		    0) {
			for (uint32_t i = 0; i < n; i++) {
				if (!w[i].guid)
					abort();
				for (unsigned k = 0; k < f->nums; k++)
					if (w[i].v[k] < f->lo[k] || w[i].v[k] > f->hi[k])
						abort();
			}
			free(w);
		}
	} else if (data[0] % 4 == 2) {
		struct torus_conf c;
		if (torus_conf_parse(text, size - 1, "fuzz", &c, why, sizeof(why)) == 0) {
			if (c.nseeds > TORUS_CONF_MAX_SEEDS || c.nport_order > 254)
				abort();
			for (unsigned d = 0; d < TORUS_CONF_DIMS; d++)
				if (!c.radix[d] || c.radix[d] > TORUS_CONF_MAX_RADIX ||
				    (c.ring[d] && c.radix[d] <= 2))
					abort();
			for (unsigned i = 0; i < c.nseeds; i++)
				for (unsigned d = 0; d < TORUS_CONF_DIMS; d++)
					if (c.seed[i].dateline[d] <= -(int32_t)c.radix[d] ||
					    c.seed[i].dateline[d] >= (int32_t)c.radix[d])
						abort();
		}
	} else if (data[0] % 4 == 0) {
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
