/* Fuzz target: ibnetdiscover topology files (util/ibnet.c), as `ibsa health --compare`
 * reads a site's saved fabric. Nothing here may crash, leak or read past the input; a
 * refusal gives its reason; what parses has every cable at both ends, within their ports,
 * and compares with itself as equal. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/ibnet.h"

static void count(void *ctx, const struct ibnet_change *c)
{
	(void)c;
	(*(unsigned *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ibnet t;
	char why[256];
	if (ibnet_parse(&t, (const char *)data, size, "fuzz", why, sizeof(why)) < 0) {
		if (!why[0])
			abort(); /* a refusal gives its reason */
		return 0;
	}
	for (uint32_t n = 0; n < t.n; n++)
		for (unsigned p = 1; p <= t.nodes[n].nports; p++) {
			uint64_t g, g2;
			uint8_t q, q2;
			if (ibnet_peer(&t, n, p, &g, &q) < 0)
				continue;
			uint32_t m = u64map_get(&t.by_guid, g);
			if (m == U64MAP_NONE || !q || q > t.nodes[m].nports ||
			    ibnet_peer(&t, m, q, &g2, &q2) < 0 || g2 != t.nodes[n].guid || q2 != p)
				abort();
		}
	unsigned diffs = 0;
	ibnet_compare(&t, &t, count, &diffs);
	if (diffs)
		abort();
	ibnet_free(&t);
	return 0;
}
