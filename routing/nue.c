/* nue: deadlock-free routing on any connected topology within a budget of VLs, down to one
 * (the idea of Nue, Domke et al., 2016: destinations spread over virtual layers, each
 * layer's channel dependency graph kept acyclic, with escape paths that always fit).
 *
 * The escape: up/down routes (routing/updown.c) for every destination, whose dependencies
 * are acyclic together on any graph, are laid into the last layer first. Then each
 * destination LID in turn gets a shortest-path tree built inside the lowest layer that can
 * take one: from the destination outwards every switch picks, among its neighbours one hop
 * nearer, the least loaded (sssp's link weights, routing/weighted.c) whose dependency keeps
 * the layer acyclic (routing/cdg.c); when some switch has none, the next layer is tried, the
 * escape layer last; when none takes it, a tree with longer paths is tried likewise
 * (layer_tree_any); when none takes that either, the destination keeps its up/down routes in
 * the escape layer. The SL of a path is its destination's layer. With one VL every
 * destination tries the escape layer alone: shortest where that stays acyclic, longer
 * elsewhere (a 6x6x6 torus: 128 of 432 shortest, the rest longer, none up/down); each VL
 * more takes more destinations shortest (all of them on fat trees, random graphs and 4x4x4
 * tori with 8; 346 of 432 on a 6x6x6 torus, the other 86 longer, where 95 took up/down
 * routes before the longer trees: shift permutations' worst link load 61 -> 37 with 4 VLs,
 * 29 -> 31 with 8).
 *
 * The budget: the VLs every switch-to-switch link runs, or fewer by routing_max_vls. */
#include <stdlib.h>
#include <string.h>

#include "routing/cdg.h"
#include "routing/updown.h"
#include "routing/weighted.h"

#define NONE UINT32_MAX

struct nue {
	uint8_t budget, nlayers;
	uint32_t nlids;
	uint8_t *lid_layer;                 /* per LID: its layer (the SL of paths towards it) */
	uint32_t shortest, longer, escaped; /* destinations by their kind of tree */
};

static int nue_setup(struct routing_ctx *ctx, void **state)
{
	struct nue *st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(ctx->why, sizeof(ctx->why), "nue: out of memory");
		return -1;
	}
	*state = st;
	st->budget = (uint8_t)routing_link_vls(ctx);
	if (ctx->cfg && ctx->cfg->routing_max_vls && ctx->cfg->routing_max_vls < st->budget)
		st->budget = ctx->cfg->routing_max_vls;
	if (!st->budget)
		st->budget = 1;
	if (st->budget > CDG_MAX_LAYERS)
		st->budget = CDG_MAX_LAYERS;
	st->nlayers = 1;
	return 0;
}

static void nue_free(void *state)
{
	struct nue *st = state;
	if (st)
		free(st->lid_layer);
	free(st);
}

/* Lay the dependencies the tables create towards lid, on the routes from switches with
 * hosts, into layer esc: the escape routes. Up/down routes from hosts are acyclic together;
 * those between switches without hosts (spine to spine) need not be, and carry no host
 * traffic. -1 if they close a cycle anyway, -2 out of memory. stamp/epoch: walked marks. */
static int lay_escape(struct cdg *g, const struct routing_ctx *ctx, const bool *leaf, uint32_t t,
                      uint16_t lid, unsigned esc, uint32_t *stamp, uint32_t epoch)
{
	for (uint32_t h = 0; h < ctx->nsw; h++) {
		if (!leaf[h] || h == t)
			continue;
		unsigned in = 0;
		bool came = false;
		for (uint32_t s = h, hop = 0; s != t && hop < 64; hop++) {
			uint8_t p = ctx->t->sws[s].lft[lid];
			uint32_t ch = p && p != 0xff ? cdg_channel(g, s, p) : NONE;
			if (ch == NONE)
				break;
			if (came) {
				int r = cdg_add(g, esc, s, in, p);
				if (r < 0)
					return r;
			}
			if (stamp[s] == epoch)
				break; /* the rest of the way is laid already */
			stamp[s] = epoch;
			came = true;
			in = g->in[ch];
			s = g->to_sw[ch];
		}
	}
	return 0;
}

/* The dependencies a tree added to a layer, to undo it. */
struct deps {
	uint32_t *sw;
	uint8_t *in, *out;
	uint32_t n;
};

static void undo(struct cdg *g, unsigned layer, struct deps *dp)
{
	while (dp->n--)
		cdg_remove(g, layer, dp->sw[dp->n], dp->in[dp->n], dp->out[dp->n]);
	dp->n = 0;
}

/* Add a dependency to layer l, recorded in dp when it is new. -1 refused, -2 out of memory. */
static int keep(struct cdg *g, unsigned l, uint32_t n, uint8_t in, uint8_t out, struct deps *dp)
{
	int r = cdg_add(g, l, n, in, out);
	if (r == 1) {
		dp->sw[dp->n] = n;
		dp->in[dp->n] = in;
		dp->out[dp->n++] = out;
	}
	return r;
}

static bool keep_active(struct routing_ctx *ctx, const struct chans *c, struct cdg *g, unsigned l,
                        uint32_t t, const bool *leaf, bool *active, const struct dijkstra *d,
                        struct deps *dp, bool *oom);

/* A shortest-path tree towards switch t built inside layer l's dependency graph: switches
 * from t outwards each take, among their neighbours one hop nearer, the least loaded whose
 * dependency (our link into it, followed by its own next hop) keeps the layer acyclic.
 * Only dependencies on host traffic's way count: a switch with hosts keeps its at once; one
 * without (a spine, whose own routes carry management only) only tests it, and keeps it at
 * the end if host traffic passes it (active: hosts of its own or an active switch routes
 * through it). The tree in d (next, order, nsettled) and true; false (the layer as it was)
 * when some switch has no such neighbour, *oom when out of memory. */
static bool layer_tree(struct routing_ctx *ctx, const struct chans *c, struct cdg *g, unsigned l,
                       uint32_t t, const uint64_t *w, const bool *leaf, bool *active,
                       struct dijkstra *d, uint16_t *dist, uint32_t *cand, struct deps *dp,
                       bool *oom)
{
	routing_bfs(ctx, t, dist, d->order);
	d->nsettled = 0;
	for (uint32_t s = 0; s < ctx->nsw; s++)
		if (dist[s] != RT_INF)
			d->nsettled++;
	d->next[t] = NONE;
	dp->n = 0;
	for (uint32_t k = 1; k < d->nsettled; k++) {
		uint32_t s = d->order[k], nc = 0;
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			if (dist[ctx->adj[e].to] + 1 != dist[s])
				continue;
			/* by weight, then port: the least loaded first */
			uint32_t at = nc++;
			while (at && w[cand[at - 1]] > w[e]) {
				cand[at] = cand[at - 1];
				at--;
			}
			cand[at] = e;
		}
		uint32_t chosen = NONE;
		for (uint32_t i = 0; i < nc && chosen == NONE; i++) {
			uint32_t e = cand[i], n = ctx->adj[e].to;
			if (n == t) {
				chosen = e;
				break;
			}
			uint8_t in = c->in[ctx->port_base[s] + ctx->adj[e].port];
			uint8_t out = ctx->adj[d->next[n]].port;
			int r = leaf[s] ? keep(g, l, n, in, out, dp) : cdg_add(g, l, n, in, out);
			if (r == -2) {
				*oom = true;
				undo(g, l, dp);
				return false;
			}
			if (r < 0)
				continue;
			if (r == 1 && !leaf[s])
				cdg_remove(g, l, n, in,
				           out); /* a test: kept below if it carries hosts */
			chosen = e;
		}
		if (chosen == NONE) {
			undo(g, l, dp);
			return false;
		}
		d->next[s] = chosen;
	}
	/* the switches without hosts that host traffic passes */
	return keep_active(ctx, c, g, l, t, leaf, active, d, dp, oom);
}

/* The dependencies of the switches without hosts that host traffic passes, once a tree in d
 * is complete (see layer_tree): kept now. false (the layer as it was) when one closes a
 * cycle. */
static bool keep_active(struct routing_ctx *ctx, const struct chans *c, struct cdg *g, unsigned l,
                        uint32_t t, const bool *leaf, bool *active, const struct dijkstra *d,
                        struct deps *dp, bool *oom)
{
	for (uint32_t k = 0; k < d->nsettled; k++)
		active[d->order[k]] = leaf[d->order[k]];
	for (uint32_t k = d->nsettled; k-- > 1;) {
		uint32_t s = d->order[k];
		if (active[s])
			active[ctx->adj[d->next[s]].to] = true;
	}
	for (uint32_t k = 1; k < d->nsettled; k++) {
		uint32_t s = d->order[k], e = d->next[s], n = ctx->adj[e].to;
		if (leaf[s] || !active[s] || n == t)
			continue;
		int r = keep(g, l, n, c->in[ctx->port_base[s] + ctx->adj[e].port],
		             ctx->adj[d->next[n]].port, dp);
		if (r < 0) {
			*oom = r == -2;
			undo(g, l, dp);
			return false;
		}
	}
	return true;
}

/* Where no layer takes a destination's shortest tree: a tree in layer l that need not be
 * shortest (Nue's own idea: a route through the channel dependency graph rather than the
 * topology's distances). Grown from t outwards a hop level at a time: a switch joins through
 * any neighbour already in the tree, the least loaded first, whose dependency keeps the
 * layer acyclic; one that cannot at this level tries again at the next, through the
 * switches that joined meanwhile. Every switch in, or false (the layer as it was). Paths
 * longer than the shortest beat up/down escape routes, which all climb to the roots. */
static bool layer_tree_any(struct routing_ctx *ctx, const struct chans *c, struct cdg *g,
                           unsigned l, uint32_t t, const uint64_t *w, const bool *leaf,
                           bool *active, struct dijkstra *d, uint16_t *dist, uint32_t *cand,
                           struct deps *dp, uint32_t reach, bool *oom)
{
	for (uint32_t s = 0; s < ctx->nsw; s++)
		dist[s] = RT_INF;
	dist[t] = 0;
	d->order[0] = t;
	d->nsettled = 1;
	d->next[t] = NONE;
	dp->n = 0;
	uint32_t level_start = 0;
	for (uint16_t level = 0; d->nsettled < reach && level < 60; level++) {
		uint32_t level_end = d->nsettled;
		if (level_start == level_end)
			break; /* nothing joined at the last level: nothing more can */
		/* the switches next to this level's, each once */
		for (uint32_t k = level_start; k < level_end; k++) {
			uint32_t n = d->order[k];
			for (uint32_t e = ctx->adj_start[n]; e < ctx->adj_start[n + 1]; e++) {
				uint32_t s = ctx->adj[e].to;
				if (dist[s] != RT_INF)
					continue;
				/* s's edges into this level, the least loaded first */
				uint32_t nc = 0;
				for (uint32_t f = ctx->adj_start[s]; f < ctx->adj_start[s + 1];
				     f++) {
					uint32_t m = ctx->adj[f].to;
					if (dist[m] != level)
						continue;
					uint32_t at = nc++;
					while (at && w[cand[at - 1]] > w[f]) {
						cand[at] = cand[at - 1];
						at--;
					}
					cand[at] = f;
				}
				for (uint32_t i = 0; i < nc; i++) {
					uint32_t f = cand[i], m = ctx->adj[f].to;
					if (m != t) {
						uint8_t in =
						    c->in[ctx->port_base[s] + ctx->adj[f].port];
						uint8_t out = ctx->adj[d->next[m]].port;
						int r = leaf[s] ? keep(g, l, m, in, out, dp)
						                : cdg_add(g, l, m, in, out);
						if (r == -2) {
							*oom = true;
							undo(g, l, dp);
							return false;
						}
						if (r < 0)
							continue;
						if (r == 1 && !leaf[s])
							cdg_remove(g, l, m, in, out);
					}
					d->next[s] = f;
					dist[s] = (uint16_t)(level + 1);
					d->order[d->nsettled++] = s;
					break;
				}
			}
		}
		level_start = level_end;
	}
	if (d->nsettled < reach) {
		undo(g, l, dp);
		return false;
	}
	return keep_active(ctx, c, g, l, t, leaf, active, d, dp, oom);
}

static int nue_unicast(struct routing_ctx *ctx, void *state)
{
	struct nue *st = state;
	uint32_t ns = ctx->nsw, nroots = 0;
	uint32_t *roots = malloc(sizeof(uint32_t) * (ns + 1));
	bool *leaf = malloc(sizeof(bool) * (ns + 1));
	struct chans c = {0};
	struct cdg g = {0};
	struct dijkstra d = {0};
	struct weights ww = {0};
	struct deps dp = {0};
	int rc = -1;
	bool oom = false;
	st->nlids = (uint32_t)ctx->max_lid + 1;
	st->lid_layer = calloc(st->nlids, 1);
	dp.sw = malloc(sizeof(uint32_t) * (ns + 1));
	dp.in = malloc(ns + 1);
	dp.out = malloc(ns + 1);
	uint16_t *dist = malloc(sizeof(uint16_t) * (ns + 1));
	uint32_t *cand = malloc(sizeof(uint32_t) * (ctx->adj_start[ns] + 1));
	uint32_t *walked = calloc(ns + 1, sizeof(uint32_t));
	bool *active = malloc(sizeof(bool) * (ns + 1));
	if (!roots || !leaf || !st->lid_layer || !dp.sw || !dp.in || !dp.out || !dist || !cand ||
	    !walked || !active || chans_build(ctx, &c) < 0 || cdg_init(&g, ctx) < 0 ||
	    dijkstra_alloc(&d, ns) < 0 || weights_init(&ww, ctx) < 0)
		goto oom;

	/* the escape routes: up/down from the configured or detected roots */
	if (routing_configured_roots(ctx, "nue", roots, &nroots) < 0)
		goto out;
	if (!nroots) {
		routing_host_switches(ctx, leaf);
		if (routing_detect_roots(ctx, leaf, roots, &nroots) < 0) {
			snprintf(ctx->why, sizeof(ctx->why), "nue: no root switch found");
			goto out;
		}
	}
	if (updown_route(ctx, "nue", roots, nroots, false) < 0)
		goto out;
	unsigned esc = st->budget - 1u;
	routing_host_switches(ctx, leaf);
	uint32_t epoch = 0;
	for (uint32_t t = 0; t < ns; t++)
		for (uint32_t i = ctx->dst_start[t]; i < ctx->dst_start[t + 1]; i++) {
			int r = lay_escape(&g, ctx, leaf, t, ctx->dst[i].lid, esc, walked, ++epoch);
			if (r == -2)
				goto oom;
			if (r < 0) {
				snprintf(
				    ctx->why, sizeof(ctx->why),
				    "nue: the up/down escape routes towards LID %u close a cycle",
				    ctx->dst[i].lid);
				goto out;
			}
		}

	/* every destination: its shortest tree where a layer takes it */
	uint16_t used = 0;
	for (uint32_t t = 0; t < ns; t++) {
		uint32_t first = weighted_first_host(ctx, t);
		for (uint32_t i = ctx->dst_start[t]; i < ctx->dst_start[t + 1]; i++) {
			if (!ctx->dst[i].port && first != NONE)
				continue; /* below: it follows the first host */
			uint16_t lid = ctx->dst[i].lid;
			uint32_t l = 0;
			bool longer = false;
			while (l < st->budget && !layer_tree(ctx, &c, &g, l, t, ww.w, leaf, active,
			                                     &d, dist, cand, &dp, &oom)) {
				if (oom)
					goto oom;
				l++;
			}
			if (l == st->budget) {
				/* no shortest tree fits: one with longer paths, in the lowest
				 * layer that takes it */
				uint32_t reach = 0;
				routing_bfs(ctx, t, dist, d.order);
				for (uint32_t s = 0; s < ns; s++)
					reach += dist[s] != RT_INF;
				for (l = 0; l < st->budget &&
				            !layer_tree_any(ctx, &c, &g, l, t, ww.w, leaf, active,
				                            &d, dist, cand, &dp, reach, &oom);
				     l++)
					if (oom)
						goto oom;
				longer = l < st->budget;
			}
			if (l == st->budget) {
				st->lid_layer[lid] = (uint8_t)esc;
				st->escaped++;
				used |= (uint16_t)(1u << esc);
				continue;
			}
			st->lid_layer[lid] = (uint8_t)l;
			used |= (uint16_t)(1u << l);
			if (longer)
				st->longer++;
			else
				st->shortest++;
			for (uint32_t k = 1; k < d.nsettled; k++) {
				uint32_t s = d.order[k];
				ctx->t->sws[s].lft[lid] = ctx->adj[d.next[s]].port;
			}
			if (ctx->dst[i].port)
				weights_lay(&ww, ctx, &d);
		}
		/* the switch's own LIDs: its first host's routes and layer */
		for (uint32_t i = ctx->dst_start[t]; first != NONE && i < ctx->dst_start[t + 1];
		     i++) {
			if (ctx->dst[i].port)
				continue;
			uint16_t lid = ctx->dst[i].lid, like = ctx->dst[first].lid;
			for (uint32_t s = 0; s < ns; s++)
				if (s != t)
					ctx->t->sws[s].lft[lid] = ctx->t->sws[s].lft[like];
			st->lid_layer[lid] = st->lid_layer[like];
		}
	}
	/* layers renumbered without gaps (the escape layer may be the only one above a few) */
	uint8_t remap[16];
	st->nlayers = 0;
	for (unsigned l = 0; l < 16; l++)
		if (used & (1u << l))
			remap[l] = st->nlayers++;
	if (!st->nlayers)
		st->nlayers = 1;
	for (uint32_t lid = 0; lid < st->nlids; lid++)
		if (used & (1u << st->lid_layer[lid]))
			st->lid_layer[lid] = remap[st->lid_layer[lid]];
	log_notice(ctx->log, "routing",
	           "nue: %u destinations on shortest paths, %u on longer ones, %u on up/down "
	           "escape routes; %u virtual layer(s) of %u",
	           st->shortest, st->longer, st->escaped, st->nlayers, st->budget);
	rc = 0;
	goto out;
oom:
	snprintf(ctx->why, sizeof(ctx->why), "nue: out of memory");
out:
	free(roots);
	free(leaf);
	free(dp.sw);
	free(dp.in);
	free(dp.out);
	free(dist);
	free(cand);
	free(walked);
	free(active);
	chans_free(&c);
	cdg_free(&g);
	dijkstra_free(&d);
	weights_free(&ww);
	return rc;
}

static uint8_t nue_path_sl(const struct routing_ctx *ctx, void *state, uint16_t slid, uint16_t dlid)
{
	(void)ctx;
	(void)slid;
	const struct nue *st = state;
	return st && st->lid_layer && dlid < st->nlids ? st->lid_layer[dlid] : 0;
}

static void nue_sl2vl(const struct routing_ctx *ctx, void *state, uint32_t sw, uint8_t in,
                      uint8_t out, uint8_t vl_of_sl[16])
{
	(void)in;
	const struct nue *st = state;
	routing_layer_sl2vl(ctx, sw, out, st ? st->nlayers : 1, vl_of_sl);
}

static unsigned nue_layers(const void *state)
{
	const struct nue *st = state;
	return st && st->nlayers ? st->nlayers : 1;
}

const struct routing_engine routing_nue = {
    .name = "nue",
    .summary = "destinations over virtual layers within routing_max_vls (down to one), "
               "shortest where a layer stays free of credit loops, up/down escape routes "
               "elsewhere",
    .setup = nue_setup,
    .unicast = nue_unicast,
    .path_sl = nue_path_sl,
    .sl2vl = nue_sl2vl,
    .sl2vl_by_vls = true,
    .layers = nue_layers,
    .teardown = nue_free,
};
