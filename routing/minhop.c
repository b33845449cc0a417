/* min-hop: every switch forwards each LID along a shortest path, balancing the LIDs over the
 * ports that are equally short, as OpenSM's default engine does (with hop_weights_file, the
 * cheapest path, a port costing its weight: routing/hop_weights.h). One BFS per switch gives
 * the hops between all switches (switches^2 bytes); then each switch routes every LID on its
 * own (its table, its port loads), switches spread over the CPUs with the same result as
 * one thread: O(switches x (switches + links) + LIDs x ports). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "routing/hop_weights.h"
#include "routing/parallel.h"

struct minhop {
	struct routing_ctx *ctx;
	const uint8_t *hops;       /* switch x switch: row s, hops from s */
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

/* Which of s's edges lead one hop nearer to each switch: bit i%8 of cm[(i/8) * ns + t] for
 * s's edge i. One pass over each neighbour's row of hops (contiguous, and in bytes that the
 * compiler does 16 or 32 at a time), where a scan of the neighbours per destination touched
 * a byte of each neighbour's row per pair: 800 million at 40,000 hosts, most of minhop's
 * time. hm1: s's hops to each switch, less one. */
static void near_edges(const struct minhop *m, uint32_t s, uint8_t *cm, uint8_t *hm1)
{
	const struct routing_ctx *ctx = m->ctx;
	uint32_t ns = ctx->nsw, e0 = ctx->adj_start[s], ne = ctx->adj_start[s + 1] - e0;
	const uint8_t *hs = m->hops + (size_t)s * ns;
	for (uint32_t t = 0; t < ns; t++)
		hm1[t] = (uint8_t)(hs[t] - 1u); /* s itself and the unreached are skipped */
	memset(cm, 0, (size_t)((ne + 7) / 8) * ns);
	for (uint32_t i = 0; i < ne; i++) {
		const uint8_t *row = m->hops + (size_t)ctx->adj[e0 + i].to * ns;
		uint8_t *g = cm + (size_t)(i / 8) * ns, bit = (uint8_t)(1u << (i % 8));
		for (uint32_t t = 0; t < ns; t++)
			g[t] |= row[t] == hm1[t] ? bit : 0;
	}
}

/* Every destination switch's LIDs at switch s: its share of the work, touching only s's table
 * and loads, in the order of the destination switches whatever the thread. */
static void route_at(void *arg, uint32_t s)
{
	const struct minhop *m = arg;
	struct routing_ctx *ctx = m->ctx;
	uint32_t ns = ctx->nsw, cand[256], e0 = ctx->adj_start[s], ne = ctx->adj_start[s + 1] - e0;
	const uint8_t *hs = m->hops + (size_t)s * ns;
	struct routing_assign_memo memo;
	memo.valid = false;
	if (!ne)
		return;
	uint32_t groups = (ne + 7) / 8;
	uint8_t *cm = m->w ? NULL : malloc((size_t)groups * ns + ns);
	if (cm)
		near_edges(m, s, cm, cm + (size_t)groups * ns);
	for (uint32_t k = 0; k < ns; k++) {
		uint32_t t = ctx->sw_order && ctx->ucast_mgr ? ctx->sw_order[k] : k;
		if (t == s || ctx->dst_start[t] == ctx->dst_start[t + 1] || hs[t] == RT_HOPS_INF)
			continue;
		uint32_t n = 0;
		if (m->w) {
			routing_assign_memo(ctx, s, t, cand, weighted_cand(m, s, t, cand), &memo);
			continue;
		}
		if (cm) {
			for (uint32_t g = 0; g < groups && n < 256; g++)
				for (uint8_t b = cm[(size_t)g * ns + t]; b && n < 256;
				     b &= (uint8_t)(b - 1))
					cand[n++] = e0 + g * 8 + (uint32_t)__builtin_ctz(b);
		} else { /* no memory for the bits: the same, a neighbour at a time */
			for (uint32_t e = e0; e < e0 + ne && n < 256; e++)
				if (m->hops[(size_t)ctx->adj[e].to * ns + t] + 1 == hs[t])
					cand[n++] = e;
		}
		routing_assign_memo(ctx, s, t, cand, n, &memo);
	}
	free(cm);
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
	struct minhop m = {ctx, h.d, weighted == 0 ? &hc : NULL};
	if (ctx->ucast_mgr && ctx->listed_end) {
		/* guid_routing_order_file: the listed ports' LIDs at every switch first */
		for (ctx->listed_pass = 1; ctx->listed_pass <= 2; ctx->listed_pass++)
			routing_parallel(ctx->nsw, ctx->threads, route_at, &m);
		ctx->listed_pass = 0;
	} else {
		routing_parallel(ctx->nsw, ctx->threads, route_at, &m);
	}
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
