/* up/down: switches are ranked by hop distance from the roots (configured, or the switches
 * farthest from the hosts); a route may climb towards the roots and then descend, never
 * climb again, so no cycle of channel dependencies can form and the fabric is free of credit
 * loops on any topology (routing/updown.c). Among such routes the shortest are taken,
 * balanced like min-hop. */
#include <stdlib.h>

#include "routing/updown.h"

static void updn_route(void *arg, uint32_t slot, const struct updown *label, uint32_t s,
                       const uint32_t *cand, uint32_t n, bool climb)
{
	(void)slot;
	(void)climb;
	routing_assign(arg, s, label->dst, cand, n);
}

int updown_route(struct routing_ctx *ctx, const char *engine, const uint32_t *roots,
                 uint32_t nroots, bool reverse)
{
	uint32_t ns = ctx->nsw;
	struct updown u;
	bool *leaf = malloc(sizeof(bool) * (ns + 1));
	if (!leaf || updown_init(&u, ctx, roots, nroots, reverse) < 0) {
		free(leaf);
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		return -1;
	}
	routing_host_switches(ctx, leaf);
	log_info(ctx->log, "routing", "%s: %u root switch(es), %u switches ranked", engine, nroots,
	         u.ranked);
	struct updown_hooks h = {.route = updn_route, .arg = ctx};
	int rc = updown_route_all(&u, ctx, leaf, &h);
	struct routing_alt_rules rules = {.step = updown_alt_step, .arg = &u, .dst_state = UD_DOWN};
	if (rc == 0)
		rc = routing_lmc_alternates(ctx, &rules, NULL, NULL);
	updown_free(&u);
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
