/* down/up: up/down with the order turned over. Switches are ranked by hop distance from the
 * switches that have hosts, and a route first moves away from the hosts, then towards them,
 * never away again. One total order still holds every route, so the fabric is free of credit
 * loops on any topology; on fat trees and trees of tiers the routes are the same shortest
 * ones, and on graphs where the hosts sit on the edge (tori of storage racks, say) it keeps
 * the busy edge switches out of the turn. */
#include <stdlib.h>

#include "routing/updown.h"

static int dnup_unicast(struct routing_ctx *ctx, void *state)
{
	uint32_t ns = ctx->nsw, n = 0;
	uint32_t *roots = malloc(sizeof(uint32_t) * (ns + 1));
	bool *leaf = malloc(sizeof(bool) * (ns + 1));
	int rc = -1;
	if (!roots || !leaf) {
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		goto out;
	}
	routing_host_switches(ctx, leaf);
	for (uint32_t s = 0; s < ns; s++)
		if (leaf[s])
			roots[n++] = s;
	if (!n) {
		snprintf(ctx->why, sizeof(ctx->why), "no switch has hosts to rank from");
		goto out;
	}
	rc = updown_engine_route(ctx, state, "dnup", roots, n, true);
out:
	free(roots);
	free(leaf);
	return rc;
}

const struct routing_engine routing_dnup = {
    .name = "dnup",
    .summary = "down/up: ranked from the switches with hosts; free of credit loops",
    .setup = updown_engine_setup,
    .unicast = dnup_unicast,
    .path_sl = updown_engine_path_sl,
    .sl2vl = updown_engine_sl2vl,
    .sl2vl_by_vls = true,
    .layers = updown_engine_layers,
    .teardown = updown_engine_free,
};
