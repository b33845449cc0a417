/* min-hop: every switch forwards each LID along a shortest path, balancing the LIDs over the
 * ports that are equally short, as OpenSM's default engine does. One BFS per switch gives
 * the hops between all switches (switches^2 bytes); then each switch routes every LID on its
 * own (its table, its port loads), switches spread over the CPUs with the same result as
 * one thread: O(switches x (switches + links) + LIDs x ports). */
#include <stdlib.h>

#include "routing/engine.h"
#include "routing/parallel.h"

struct minhop {
	struct routing_ctx *ctx;
	const uint8_t *hops; /* switch x switch */
};

/* Every destination switch's LIDs at switch s: its share of the work, touching only s's table
 * and loads, in the order of the destination switches whatever the thread. */
static void route_at(void *arg, uint32_t s)
{
	const struct minhop *m = arg;
	struct routing_ctx *ctx = m->ctx;
	uint32_t ns = ctx->nsw, cand[256];
	const uint8_t *hs = m->hops + (size_t)s * ns;
	if (ctx->adj_start[s] == ctx->adj_start[s + 1])
		return;
	for (uint32_t t = 0; t < ns; t++) {
		if (t == s || ctx->dst_start[t] == ctx->dst_start[t + 1] || hs[t] == RT_HOPS_INF)
			continue;
		uint32_t n = 0;
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1] && n < 256; e++)
			if (m->hops[(size_t)ctx->adj[e].to * ns + t] + 1 == hs[t])
				cand[n++] = e;
		routing_assign(ctx, s, t, cand, n);
	}
}

int routing_minhop_routes(struct routing_ctx *ctx)
{
	struct routing_hops h = {0};
	if (routing_hops_build(ctx, &h) < 0) {
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		return -1;
	}
	for (uint32_t t = 0; t < ctx->nsw; t++)
		if (ctx->dst_start[t] != ctx->dst_start[t + 1])
			routing_assign_local(ctx, t);
	struct minhop m = {ctx, h.d};
	routing_parallel(ctx->nsw, ctx->threads, route_at, &m);
	routing_hops_free(&h);
	return 0;
}

static int minhop_unicast(struct routing_ctx *ctx, void *state)
{
	(void)state;
	if (routing_minhop_routes(ctx) < 0)
		return -1;
	/* LMC: the odd LIDs of a block take routes apart from the even ones, longer where no
	 * disjoint shortest path exists (minhop is not free of credit loops either way) */
	return routing_lmc_alternates(ctx, NULL, NULL, NULL);
}

const struct routing_engine routing_minhop = {
    .name = "minhop",
    .summary = "shortest paths, balanced over equal ports (not deadlock free in general)",
    .unicast = minhop_unicast,
};
