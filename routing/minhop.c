/* min-hop: every switch forwards each LID along a shortest path, balancing the LIDs over the
 * ports that are equally short, as OpenSM's default engine does (with hop_weights_file, the
 * cheapest path, a port costing its weight: routing/hop_weights.h). One BFS per switch gives
 * the hops between all switches (switches^2 bytes); then each switch routes every LID on its
 * own (its table, its port loads), switches spread over the CPUs with the same result as
 * one thread: O(switches x (switches + links) + LIDs x ports). */
#include <stdio.h>
#include <stdlib.h>

#include "routing/engine.h"
#include "routing/hop_weights.h"
#include "routing/parallel.h"

struct minhop {
	struct routing_ctx *ctx;
	const uint8_t *hops;       /* switch x switch: row s, hops from s */
	const uint8_t *to;         /* the same transposed: row t, hops to t from each switch */
	const struct hop_costs *w; /* hop_weights_file's costs, or NULL: every hop one */
};

/* With hop weights: the edges whose weight plus the far switch's cost to t is s's cost. */
static uint32_t weighted_cand(const struct minhop *m, uint32_t s, uint32_t t, uint32_t *cand)
{
	const struct routing_ctx *ctx = m->ctx;
	uint32_t ns = ctx->nsw, n = 0;
	const uint16_t *c = m->w->cost;
	if (c[(size_t)s * ns + t] == RT_INF)
		return 0;
	for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1] && n < 256; e++) {
		uint16_t far = c[(size_t)ctx->adj[e].to * ns + t];
		if (far != RT_INF && (uint32_t)far + m->w->w[e] == c[(size_t)s * ns + t])
			cand[n++] = e;
	}
	return n;
}

/* Every destination switch's LIDs at switch s: its share of the work, touching only s's table
 * and loads, in the order of the destination switches whatever the thread. */
static void route_at(void *arg, uint32_t s)
{
	const struct minhop *m = arg;
	struct routing_ctx *ctx = m->ctx;
	uint32_t ns = ctx->nsw, cand[256];
	const uint8_t *hs = m->hops + (size_t)s * ns;
	struct routing_assign_memo memo;
	memo.valid = false;
	if (ctx->adj_start[s] == ctx->adj_start[s + 1])
		return;
	for (uint32_t k = 0; k < ns; k++) {
		uint32_t t = ctx->sw_order && ctx->ucast_mgr ? ctx->sw_order[k] : k;
		if (t == s || ctx->dst_start[t] == ctx->dst_start[t + 1] || hs[t] == RT_HOPS_INF)
			continue;
		uint32_t n = 0;
		if (m->w) {
			routing_assign_memo(ctx, s, t, cand, weighted_cand(m, s, t, cand), &memo);
			continue;
		}
		/* the neighbours' hops to t from one row: a column of hops would be a cache
		 * line per neighbour */
		const uint8_t *ht = m->to + (size_t)t * ns;
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1] && n < 256; e++)
			if (ht[ctx->adj[e].to] + 1 == hs[t])
				cand[n++] = e;
		routing_assign_memo(ctx, s, t, cand, n, &memo);
	}
}

/* Rows of the transpose, one block row per index (the graph may be asymmetric where a
 * switch is half gone, so the transpose is computed, not assumed equal). */
#define TR_BLOCK 64u
struct transpose {
	const uint8_t *in;
	uint8_t *out;
	uint32_t n;
};

static void transpose_rows(void *arg, uint32_t b)
{
	const struct transpose *tr = arg;
	uint32_t n = tr->n, r0 = b * TR_BLOCK, r1 = r0 + TR_BLOCK < n ? r0 + TR_BLOCK : n;
	for (uint32_t c0 = 0; c0 < n; c0 += TR_BLOCK)
		for (uint32_t r = r0; r < r1; r++)
			for (uint32_t c = c0; c < n && c < c0 + TR_BLOCK; c++)
				tr->out[(size_t)c * n + r] = tr->in[(size_t)r * n + c];
}

int routing_minhop_routes(struct routing_ctx *ctx, bool weights)
{
	/* minhop runs on OpenSM's unicast manager, lash does not: its knobs go with weights */
	ctx->ucast_mgr = weights;
	struct routing_hops h = {0};
	if (routing_hops_build(ctx, &h) < 0) {
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		return -1;
	}
	for (uint32_t t = 0; t < ctx->nsw; t++)
		if (ctx->dst_start[t] != ctx->dst_start[t + 1])
			routing_assign_local(ctx, t);
	struct hop_costs hc = {0};
	int weighted = weights ? hop_costs_build(ctx, &hc) : 1;
	if (weighted < 0) {
		routing_hops_free(&h);
		return -1;
	}
	uint8_t *to = weighted ? malloc((size_t)ctx->nsw * ctx->nsw + 1) : NULL;
	if (weighted && !to) {
		routing_hops_free(&h);
		hop_costs_free(&hc);
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		return -1;
	}
	if (to) {
		/* index b reads rows b*64.. of the hops and writes those columns of the
		 * transpose: no two indexes write the same byte */
		struct transpose tr = {h.d, to, ctx->nsw};
		routing_parallel((ctx->nsw + TR_BLOCK - 1) / TR_BLOCK, ctx->threads, transpose_rows,
		                 &tr);
	}
	struct minhop m = {ctx, h.d, to, weighted == 0 ? &hc : NULL};
	if (ctx->ucast_mgr && ctx->listed_end) {
		/* guid_routing_order_file: the listed ports' LIDs at every switch first */
		for (ctx->listed_pass = 1; ctx->listed_pass <= 2; ctx->listed_pass++)
			routing_parallel(ctx->nsw, ctx->threads, route_at, &m);
		ctx->listed_pass = 0;
	} else {
		routing_parallel(ctx->nsw, ctx->threads, route_at, &m);
	}
	free(to);
	routing_hops_free(&h);
	hop_costs_free(&hc);
	return 0;
}

static int minhop_unicast(struct routing_ctx *ctx, void *state)
{
	(void)state;
	if (routing_minhop_routes(ctx, true) < 0)
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
