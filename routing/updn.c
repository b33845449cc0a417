/* up/down: switches are ranked by hop distance from the roots (configured, or the switches
 * farthest from the hosts); a route may climb towards the roots and then descend, never
 * climb again, so no cycle of channel dependencies can form and the fabric is free of credit
 * loops on any topology (routing/updown.c). Among such routes the shortest are taken,
 * balanced like min-hop.
 *
 * LMC alternates (routing/lmc.c) must be up/down routes too, and under one order few are
 * apart from the primary (every route from a switch with a single way up shares it). Where
 * the switch links run two VLs or more, there are as many orders as VLs (up to 8, or
 * routing_max_vls), each ranked from the switch farthest from the roots of the orders before
 * it, and order o's routes go on SL/VL o. LID k of each block tries order k first (the LIDs
 * past the fourth order on the fourth) and, where that leaves a host switch without a pair
 * of the block's LIDs apart, takes the order that leaves the fewest (routing/lmc.c,
 * route_choice). Each VL then carries the routes of one order, each free of credit loops;
 * the VLs past the fourth are used only where the first four orders leave a switch short.
 * From 3 orders on, the last may be rooted again for the blocks left short (last_order). */
#include <stdlib.h>
#include <string.h>

#include "routing/updown.h"

/* updn and dnup: the order each LID's routes follow (0 the first, which the alternates may
 * take too), which is its SL and VL */
struct ud_state {
	uint8_t *lid_layer;
	uint32_t nlids;
	unsigned nlayers;
};

static void updn_route(void *arg, uint32_t slot, const struct updown *label, uint32_t s,
                       const uint32_t *cand, uint32_t n, bool climb)
{
	(void)slot;
	(void)climb;
	routing_assign(arg, s, label->dst, cand, n);
}

/* The block's shortfall summed over blocks (open: per entry, from the alternates): what the
 * later LIDs of each port left without a pair apart; mark (optional) gets the later LIDs of
 * the blocks short of one. */
static uint64_t blocks_short(const struct routing_ctx *ctx, const uint32_t *open, bool *mark,
                             uint32_t *nmarked)
{
	uint64_t sum = 0;
	uint32_t n = 0;
	for (uint32_t t = 0; t < ctx->nsw; t++)
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1]; d++) {
			uint32_t end = d + 1;
			while (end < ctx->dst_start[t + 1] && routing_lmc_index(ctx, t, end) > 0)
				end++;
			uint32_t last = end - 1;
			if (last > d && open[last]) {
				sum += open[last];
				for (uint32_t k = d + 1; mark && k <= last; k++, n++)
					mark[k] = true;
			}
			d = last;
		}
	if (nmarked)
		*nmarked = n;
	return sum;
}

/* The blocks a repair of the last order re-routes at most (their later LIDs): beyond that the
 * shortfall is spread over the fabric (a graph whose bridges or few ways round leave most
 * blocks short somewhere), and one order more does not mend it. */
#define LAST_ORDER_MAX_LIDS 512
#define LAST_ORDER_TRIALS   16

/* Mark (only) the later LIDs of the blocks to route again for the last order: those short
 * (is_short) and those with a LID on it (chosen n - 1: the order changes under them). How
 * many. */
static uint32_t mark_redo(const struct routing_ctx *ctx, const uint8_t *chosen, unsigned n,
                          const bool *is_short, bool *only)
{
	uint32_t count = 0;
	for (uint32_t t = 0; t < ctx->nsw; t++)
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1]; d++) {
			unsigned k = routing_lmc_index(ctx, t, d);
			only[d] |= is_short[d];
			if (k && chosen[d] == n - 1)
				for (uint32_t j = d - k + 1;
				     j < ctx->dst_start[t + 1] &&
				     (j == d - k + 1 || routing_lmc_index(ctx, t, j));
				     j++)
					only[j] = true;
		}
	for (uint32_t d = 0; d < ctx->dst_start[ctx->nsw]; d++)
		count += only[d];
	return count;
}

/* The roots to try for the last order: its own first, then the short blocks' destination
 * switches and their neighbours, as many as LAST_ORDER_MAX_LIDS x 8 re-routed LIDs allow
 * (at most LAST_ORDER_TRIALS). How many. */
static uint32_t candidates(const struct routing_ctx *ctx, const struct updown *last,
                           const bool *is_short, uint32_t nonly, uint32_t *cand)
{
	uint32_t ns = ctx->nsw, nc = 0, cap = (LAST_ORDER_MAX_LIDS * 8) / nonly;
	bool *seen = calloc(ns + 1, sizeof(bool));
	if (cap > LAST_ORDER_TRIALS)
		cap = LAST_ORDER_TRIALS;
	for (uint32_t s = 0; s < ns && !nc; s++)
		if (last->rank[s] == 0)
			cand[nc++] = s;
	if (!seen)
		return nc;
	if (nc)
		seen[cand[0]] = true;
	for (uint32_t t = 0; t < ns && nc < cap; t++) {
		bool short_here = false;
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1]; d++)
			short_here |= is_short[d];
		if (!short_here)
			continue;
		if (!seen[t]) {
			seen[t] = true;
			cand[nc++] = t;
		}
		for (uint32_t e = ctx->adj_start[t]; e < ctx->adj_start[t + 1] && nc < cap; e++)
			if (!seen[ctx->adj[e].to]) {
				seen[ctx->adj[e].to] = true;
				cand[nc++] = ctx->adj[e].to;
			}
	}
	free(seen);
	return nc;
}

/* The tables' columns of the LIDs marked in only, saved into cols (put false) or put back
 * from it (true), loads with them. */
static void columns(struct routing_ctx *ctx, const bool *only, uint8_t *cols, bool put)
{
	uint32_t ns = ctx->nsw;
	for (uint32_t d = 0, i = 0; d < ctx->dst_start[ns]; d++) {
		if (!only[d])
			continue;
		uint16_t lid = ctx->dst[d].lid;
		for (uint32_t s = 0; s < ns; s++) {
			uint8_t *lft = ctx->t->sws[s].lft, *col = &cols[(size_t)i * ns + s];
			uint32_t *load = ctx->load + ctx->port_base[s];
			if (!put) {
				*col = lft[lid];
				continue;
			}
			if (lft[lid] == *col)
				continue;
			if (lft[lid] && lft[lid] != 0xff && load[lft[lid]])
				load[lft[lid]]--;
			if (*col && *col != 0xff)
				load[*col]++;
			lft[lid] = *col;
		}
		i++;
	}
}

/* The last order (ord[n - 1], rooted at the switch farthest from the roots before) again, for
 * the blocks the orders leave short: rooted at a switch next to those blocks' destinations
 * (or one of them) where that re-routes them, and the blocks that took the last order, with
 * fewer host switches short. Those LIDs start again from their first LID's routes; each root, the
 * first too, is a trial over them only, taken back; the best is routed if it leaves fewer
 * short than the first routing, else that routing is put back. On a 16-switch random
 * graph every order rooted at the switch farthest from the roots before left a switch with no
 * alternate apart to 7 others (94.2% of pairs); a root beside them, 100%. 0, or -1 out of memory.
 */
static int last_order(struct routing_ctx *ctx, struct updown *ord, unsigned n,
                      struct routing_alt_rules *choice, const uint8_t *first, uint8_t *chosen,
                      uint32_t *open)
{
	uint32_t ns = ctx->nsw, ndst = ctx->dst_start[ns], nonly = 0;
	bool *only = calloc(ndst + 1, sizeof(bool)), *is_short = calloc(ndst + 1, sizeof(bool));
	bool *given = calloc(ndst + 1, sizeof(bool));
	uint32_t *cand = malloc(sizeof(uint32_t) * (LAST_ORDER_TRIALS + 1));
	uint8_t *kept = malloc(ndst + 1), *cols = NULL;
	int rc = -1;
	if (!only || !is_short || !given || !cand || !kept)
		goto out;
	uint64_t before = blocks_short(ctx, open, is_short, NULL);
	nonly = mark_redo(ctx, chosen, n, is_short, only);
	rc = 0;
	if (!before || nonly > LAST_ORDER_MAX_LIDS)
		goto out;
	/* phase A's tables for those LIDs, to put back if no root does better */
	cols = malloc((size_t)nonly * ns + 1);
	if (!cols) {
		rc = -1;
		goto out;
	}
	columns(ctx, only, cols, false);
	memcpy(kept, chosen, ndst);
	uint32_t nc = candidates(ctx, &ord[n - 1], is_short, nonly, cand);
	/* those LIDs start again from their first LID's routes (on order 0): a LID that gets
	 * no tree of its own then keeps those, never a tree of the order replaced */
	for (uint32_t t = 0; t < ns && rc == 0; t++)
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1]; d++)
			if (only[d]) {
				chosen[d] = 0;
				if (routing_lmc_follow_first(ctx, NULL, t, d) < 0)
					rc = -1;
			}
	uint32_t best = UINT32_MAX, tried = 0;
	uint64_t fewest = before;
	for (uint32_t i = 0; i < nc && fewest && rc == 0; i++, tried++) {
		updown_free(&ord[n - 1]);
		if (updown_init(&ord[n - 1], ctx, &cand[i], 1, false) < 0) {
			rc = -1;
			break;
		}
		struct routing_alt_undo trial = {0};
		struct routing_alt_choice c = {choice, n, first, chosen, open, true};
		rc = routing_lmc_alternates_choice(ctx, &c, &trial, given, only);
		routing_lmc_revert(ctx, &trial);
		for (uint32_t d = 0; d < ndst; d++)
			if (only[d])
				chosen[d] = 0;
		uint64_t sh = blocks_short(ctx, open, NULL, NULL);
		if (rc == 0 && sh < fewest) {
			fewest = sh;
			best = cand[i];
		}
	}
	if (rc == 0 && best != UINT32_MAX) {
		log_info(ctx->log, "routing",
		         "up/down: the last order rooted at switch %u (%u roots tried) for %u "
		         "LIDs: %llu host switches short of an alternate -> %llu",
		         best, tried, nonly, (unsigned long long)before,
		         (unsigned long long)fewest);
		updown_free(&ord[n - 1]);
		if (updown_init(&ord[n - 1], ctx, &best, 1, false) < 0) {
			rc = -1;
			goto out;
		}
		struct routing_alt_choice c = {choice, n, first, chosen, open, false};
		rc = routing_lmc_alternates_choice(ctx, &c, NULL, NULL, only);
		goto out;
	}
	if (rc == 0)
		log_info(ctx->log, "routing",
		         "up/down: %u roots tried for the last order, for %llu host switches short "
		         "of an alternate: none better",
		         tried, (unsigned long long)before);
	/* phase A's routes back */
	updown_free(&ord[n - 1]);
	memcpy(chosen, kept, ndst);
	columns(ctx, only, cols, true);
out:
	if (rc < 0 && !ctx->why[0])
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
	free(only);
	free(is_short);
	free(given);
	free(cand);
	free(kept);
	free(cols);
	return rc;
}

int updown_route(struct routing_ctx *ctx, const char *engine, const uint32_t *roots,
                 uint32_t nroots, bool reverse, uint8_t *alt, unsigned orders)
{
	uint32_t ns = ctx->nsw, ndst = ctx->dst_start[ns];
	struct updown ord[UD_ORDERS] = {0};
	bool *leaf = malloc(sizeof(bool) * (ns + 1));
	if (!leaf || updown_init(&ord[0], ctx, roots, nroots, reverse) < 0) {
		free(leaf);
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		return -1;
	}
	routing_host_switches(ctx, leaf);
	if (!reverse && updown_read_ids(&ord[0], ctx) < 0) {
		updown_free(&ord[0]);
		free(leaf);
		return -1;
	}
	log_info(ctx->log, "routing", "%s: %u root switch(es), %u switches ranked", engine, nroots,
	         ord[0].ranked);
	struct updown_hooks h = {.route = updn_route, .arg = ctx};
	int rc;
	if (ctx->ucast_mgr && ctx->listed_end) {
		/* guid_routing_order_file: the listed ports' LIDs at every switch first (the
		 * labels are made twice: only with the file) */
		rc = 0;
		for (ctx->listed_pass = 1; rc == 0 && ctx->listed_pass <= 2; ctx->listed_pass++)
			rc = updown_route_all(&ord[0], ctx, leaf, &h);
		ctx->listed_pass = 0;
	} else {
		rc = updown_route_all(&ord[0], ctx, leaf, &h);
	}
	struct routing_alt_rules rules = {
	    .step = updown_alt_step, .arg = &ord[0], .dst_state = UD_DOWN};
	struct routing_alt_rules choice[UD_ORDERS];
	uint8_t *first = NULL;
	uint32_t *open = NULL;
	unsigned n = 1;
	if (orders > UD_ORDERS)
		orders = UD_ORDERS;
	while (rc == 0 && alt && n < orders && updown_next_order(ord, n, ctx, &ord[n]) == 0)
		n++;
	if (n >= 2) {
		/* LID k of each block on order k first (the LIDs past the last order on it), on
		 * another where that leaves fewer host switches without a disjoint pair; from 3
		 * orders on, the last rooted again for the blocks left short (last_order) */
		first = calloc(ndst + 1, 1);
		open = calloc(ndst + 1, sizeof(uint32_t));
		rc = first && open ? 0 : -1;
		unsigned last = (n < 4 ? n : 4) - 1; /* the orders tried first: 0 to 3 */
		for (uint32_t t = 0; rc == 0 && t < ns; t++)
			for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1]; d++) {
				unsigned k = routing_lmc_index(ctx, t, d);
				first[d] = (uint8_t)(k < last ? k : last);
			}
		for (unsigned o = 0; o < n; o++)
			choice[o] = (struct routing_alt_rules){updown_alt_step, &ord[o], UD_DOWN};
		struct routing_alt_choice c = {choice, n, first, alt, open, false};
		if (rc == 0)
			rc = routing_lmc_alternates_choice(ctx, &c, NULL, NULL, NULL);
		if (rc == 0 && n >= 3)
			rc = last_order(ctx, ord, n, choice, first, alt, open);
		if (rc < 0 && !ctx->why[0])
			snprintf(ctx->why, sizeof(ctx->why), "out of memory");
	} else if (rc == 0) {
		rc = routing_lmc_alternates(ctx, &rules, NULL, NULL);
	}
	free(first);
	free(open);
	for (unsigned k = 0; k < UD_ORDERS; k++)
		updown_free(&ord[k]);
	free(leaf);
	return rc;
}

/* Route by up/down (dnup: reversed); at LMC > 0 with two VLs or more on the switch links,
 * each alternate LID on the order that keeps it apart best, and on that order's SL, as many
 * orders as the VLs and routing_max_vls allow (up to 8). */
int updown_engine_route(struct routing_ctx *ctx, void *state, const char *engine,
                        const uint32_t *roots, uint32_t nroots, bool reverse)
{
	struct ud_state *st = state;
	uint32_t ndst = ctx->dst_start[ctx->nsw];
	bool lmc = routing_lmc_any(ctx);
	uint8_t *alt = NULL;
	unsigned vls = routing_link_vls(ctx);
	if (ctx->cfg && ctx->cfg->routing_max_vls && ctx->cfg->routing_max_vls < vls)
		vls = ctx->cfg->routing_max_vls;
	if (st && lmc && vls >= 2) {
		alt = calloc(ndst + 1, 1);
		if (!alt) {
			snprintf(ctx->why, sizeof(ctx->why), "%s: out of memory", engine);
			return -1;
		}
	} else if (st && lmc) {
		log_notice(ctx->log, "routing",
		           "%s: one VL (the switch links run 1, or routing_max_vls is 1): the "
		           "LMC alternates follow the one up/down order, and fewer keep apart "
		           "from the primary paths",
		           engine);
	}
	/* updn and dnup run on OpenSM's unicast manager there: its balancing knobs apply */
	ctx->ucast_mgr = true;
	int rc = updown_route(ctx, engine, roots, nroots, reverse, alt, vls);
	if (rc == 0 && st) {
		free(st->lid_layer);
		st->nlids = (uint32_t)ctx->max_lid + 1;
		st->lid_layer = calloc(st->nlids + 1, 1);
		st->nlayers = 1;
		if (!st->lid_layer) {
			snprintf(ctx->why, sizeof(ctx->why), "%s: out of memory", engine);
			rc = -1;
		}
		for (uint32_t d = 0; rc == 0 && alt && d < ndst; d++)
			if (alt[d]) {
				st->lid_layer[ctx->dst[d].lid] = alt[d];
				if (alt[d] + 1u > st->nlayers)
					st->nlayers = alt[d] + 1u;
			}
	}
	free(alt);
	return rc;
}

int updown_engine_setup(struct routing_ctx *ctx, void **state)
{
	(void)ctx;
	*state = calloc(1, sizeof(struct ud_state));
	return *state ? 0 : -1;
}

void updown_engine_free(void *state)
{
	struct ud_state *st = state;
	if (st)
		free(st->lid_layer);
	free(st);
}

uint8_t updown_engine_path_sl(const struct routing_ctx *ctx, void *state, uint16_t slid,
                              uint16_t dlid)
{
	(void)ctx;
	(void)slid;
	const struct ud_state *st = state;
	return st && st->lid_layer && dlid < st->nlids ? st->lid_layer[dlid] : 0;
}

void updown_engine_sl2vl(const struct routing_ctx *ctx, void *state, uint32_t sw, uint8_t in,
                         uint8_t out, uint8_t vl_of_sl[16])
{
	(void)in;
	const struct ud_state *st = state;
	routing_layer_sl2vl(ctx, sw, out, st ? st->nlayers : 1, vl_of_sl);
}

unsigned updown_engine_layers(const void *state)
{
	const struct ud_state *st = state;
	return st && st->nlayers ? st->nlayers : 1;
}

static int updn_unicast(struct routing_ctx *ctx, void *state)
{
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
	rc = updown_engine_route(ctx, state, "updn", roots, nroots, false);
out:
	free(roots);
	free(leaf);
	return rc;
}

const struct routing_engine routing_updn = {
    .name = "updn",
    .summary = "up/down from root switches (configured or detected): free of credit loops",
    .setup = updown_engine_setup,
    .unicast = updn_unicast,
    .path_sl = updown_engine_path_sl,
    .sl2vl = updown_engine_sl2vl,
    .sl2vl_by_vls = true,
    .layers = updown_engine_layers,
    .teardown = updown_engine_free,
};
