/* up/down: switches are ranked by hop distance from the roots (configured, or the switches
 * farthest from the hosts); a route may climb towards the roots and then descend, never
 * climb again, so no cycle of channel dependencies can form and the fabric is free of credit
 * loops on any topology (routing/updown.c). Among such routes the shortest are taken,
 * balanced like min-hop. */
#include <stdlib.h>

#include "routing/updown.h"

int updown_route(struct routing_ctx *ctx, const char *engine, const uint32_t *roots,
                 uint32_t nroots, bool reverse)
{
	uint32_t ns = ctx->nsw;
	struct updown u;
	uint32_t *cand = malloc(sizeof(uint32_t) * 256);
	bool *leaf = malloc(sizeof(bool) * (ns + 1));
	if (!cand || !leaf || updown_init(&u, ctx, roots, nroots, reverse) < 0) {
		free(cand);
		free(leaf);
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		return -1;
	}
	routing_host_switches(ctx, leaf);
	int rc = 0;
	log_info(ctx->log, "routing", "%s: %u root switch(es), %u switches ranked", engine, nroots,
	         u.ranked);
	for (uint32_t dst = 0; dst < ns; dst++) {
		if (ctx->dst_start[dst] == ctx->dst_start[dst + 1] || u.rank[dst] == RT_INF)
			continue;
		updown_label(&u, ctx, dst);
		routing_assign_local(ctx, dst);
		for (uint32_t s = 0; s < ns; s++) {
			if (s == dst)
				continue;
			if (updown_unroutable(&u, ctx, leaf, s)) {
				updown_why_unroutable(&u, ctx, s, dst);
				rc = -1;
				goto out;
			}
			bool climb;
			uint32_t n = updown_candidates(&u, ctx, s, cand, 256, &climb);
			routing_assign(ctx, s, dst, cand, n);
		}
	}
out:
	updown_free(&u);
	free(cand);
	free(leaf);
	return rc;
}

static int updn_unicast(struct routing_ctx *ctx, void *state)
{
	(void)state;
	uint32_t ns = ctx->nsw, nroots = 0;
	uint32_t *roots = malloc(sizeof(uint32_t) * (ns + 1));
	bool *leaf = malloc(sizeof(bool) * (ns + 1));
	int rc = -1;
	if (!roots || !leaf) {
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		goto out;
	}
	if (routing_configured_roots(ctx, "updn", roots, &nroots) < 0)
		goto out;
	if (!nroots) {
		routing_host_switches(ctx, leaf);
		if (routing_detect_roots(ctx, leaf, roots, &nroots) < 0) {
			snprintf(ctx->why, sizeof(ctx->why), "no root switch found");
			goto out;
		}
	}
	rc = updown_route(ctx, "updn", roots, nroots, false);
out:
	free(roots);
	free(leaf);
	return rc;
}

const struct routing_engine routing_updn = {
    .name = "updn",
    .summary = "up/down from root switches (configured or detected): free of credit loops",
    .unicast = updn_unicast,
};
