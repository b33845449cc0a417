/* What the switches' multicast tables deliver to: for each MLID any present switch holds a
 * bit of, the end ports whose attachment bit is set (a CA's port behind a switch port with
 * its bit, a switch's port 0 with bit 0). Tests compare this with the SA's members: a bit the
 * SM left behind, or one it never set, shows even where the tree itself is sound (which
 * verify judges). */
#include <stdlib.h>

#include "verify.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The end port that bit `num` of switch s delivers to, FS_NONE if none. */
static uint32_t delivered_to(const struct fabric *f, const struct fs_switch *sw, unsigned num)
{
	uint32_t p = fabric_port(f, sw->node, num);
	if (p == FS_NONE || num == 0)
		return p;
	uint32_t peer = f->ports[p].peer;
	if (peer == FS_NONE || !fabric_link_up(f, p) || fs_is_switch(f, f->ports[peer].node))
		return FS_NONE;
	return peer;
}

void verify_print_mcast(const struct fabric *f, FILE *out)
{
	uint64_t *guids = malloc(sizeof(uint64_t) * (f->nports + 1u));
	if (!guids) {
		fprintf(out, "error: out of memory\n");
		return;
	}
	for (unsigned m = 0; m < FS_MFT_CAP; m++) {
		uint32_t n = 0;
		bool any = false;
		for (uint32_t s = 0; s < f->nsws; s++) {
			const struct fs_switch *sw = &f->sws[s];
			const struct fs_node *node = &f->nodes[sw->node];
			if (!sw->mft || !node->present)
				continue;
			for (unsigned num = 0; num <= node->nports; num++) {
				if (!((sw->mft[m * sw->positions + num / 16] >> (num % 16)) & 1))
					continue;
				any = true;
				uint32_t p = delivered_to(f, sw, num);
				if (p != FS_NONE)
					guids[n++] = f->ports[p].guid;
			}
		}
		if (!any)
			continue;
		qsort(guids, n, sizeof(*guids), cmp_u64);
		fprintf(out, "0x%04x", FS_MCAST_BASE + m);
		for (uint32_t i = 0; i < n; i++)
			fprintf(out, " 0x%016llx", (unsigned long long)guids[i]);
		fputc('\n', out);
	}
	free(guids);
}
