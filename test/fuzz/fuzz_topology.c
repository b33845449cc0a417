/* Fuzz target: Slurm's topology.conf and the graphviz graph (daemon/topology.c) from a
 * fabric whose NodeDescriptions any host or switch may set to any 64 bytes, the names in
 * them the only input from outside. A 2-level fat tree (4 leaves of 3 hosts, 2 spines) and
 * a ring of 3 switches with hosts. Input: byte 0 picks the fabric (bit 0) and which links
 * are quarantined (bits 1-7, one per switch port in turn); then the descriptions, 64 bytes
 * per node in node order (a short last one NUL-terminated there), nodes left over keep their
 * empty description; bit 0 of byte 1 (also the first description's first byte) asks for
 * topology.yaml. Nothing here may crash, leak or write outside its buffers, and every
 * name the topology.conf holds must be one Slurm reads as itself. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/topo_fixture.h"
#include "daemon/topology.h"

/* every character of topology.conf outside its comments: names, '=', '[', ']', ',', '-';
 * of topology.yaml also the YAML's ':' and '"' (every name quoted) */
static void check_conf(const char *text, size_t len, bool yaml)
{
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '#') {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		char c = text[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr(yaml ? "._-=[],\n :\"" : "._-=[],\n ", c)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topo t;
	if (topo_init(&t) < 0)
		return 0;
	uint32_t first = size && (data[0] & 1) ? fix_ring(&t, 3, 2) : fix_fattree(&t, 4, 2, 3);
	fix_finish(&t, first, NULL);
	for (uint32_t n = 0, at = 1; n < t.nnodes && at < size; n++, at += 64) {
		size_t k = size - at < 64 ? size - at : 64;
		memcpy(t.nodes[n].desc, data + at, k);
		t.nodes[n].desc[k] = 0;
	}
	uint32_t held[8], nheld = 0;
	for (uint32_t p = 0, bit = 1; size && p < t.nports && bit < 8; p++)
		if (t.ports[p].num && topo_port_linked(&t, p) &&
		    topo_is_switch(&t, t.ports[p].node))
			if (data[0] & (1u << bit++))
				held[nheld++] = p;
	char *buf = NULL, *pbuf = NULL;
	size_t len = 0, plen = 0;
	FILE *out = open_memstream(&buf, &len), *problems = open_memstream(&pbuf, &plen);
	if (out && problems) {
		const struct slurm_opts o = {.yaml = size > 1 && (data[1] & 1)};
		if (topology_slurm(&t, &o, out, problems) >= 0) {
			fflush(out);
			check_conf(buf, len, o.yaml);
		}
		topology_dot(&t, held, nheld, out);
	}
	if (out)
		fclose(out);
	if (problems)
		fclose(problems);
	free(buf);
	free(pbuf);
	topo_free(&t);
	return 0;
}
