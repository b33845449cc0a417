/* nue: deadlock-free routing on any connected topology within a budget of VLs, down to one
 * (the idea of Nue, Domke et al., 2016: destinations spread over virtual layers, each
 * layer's channel dependency graph kept acyclic, with escape paths that always fit).
 *
 * The escape: routes along one spanning tree (breadth first from a root switch), free of
 * credit loops on any graph, are laid into the last layer first for every destination; a
 * tree's dependencies are few (turns at its own links only), so they leave the layers room
 * (up/down routes over every link, the escape before, left a 6x6x6 torus with 1 VL a worst
 * shift-permutation link load of 73; the tree, 29). Then each destination LID in turn gets
 * a tree grown by Dijkstra inside the lowest layer that can take one (layer_tree): paths
 * weighed by hops and by the host paths already laid on their links (sssp's weights,
 * routing/weighted.c), each switch joining through the neighbour that keeps the layer's
 * channel dependency graph acyclic (routing/cdg.c), longer than the shortest where the
 * dependencies or the loads want it. When no layer takes a tree, the destination keeps its
 * escape routes. The SL of a path is its destination's layer. An LMC block's later LIDs get
 * no tree: they are spread and laid with the alternates (nue_alternates).
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

static uint64_t step_cost(uint64_t at, uint64_t hop, uint64_t load)
{
	return at + hop + load;
}

/* A tree towards switch t inside layer l (Nue's idea: routes through the channel dependency
 * graph rather than along the topology's distances). Grown from t outwards by Dijkstra: a
 * switch joins through the neighbour already in the tree that makes its path cheapest, a
 * hop costing `hop` plus the host paths laid on the link so far (sssp's weights, less their
 * hop cost `base`), and whose dependency (its link into that neighbour, followed by the
 * neighbour's own next hop) keeps the layer acyclic; one that cannot join yet may later,
 * through switches that join after it. Only dependencies on host traffic's way count: a
 * switch with hosts keeps its at once; one without (a spine, whose own routes carry
 * management only) only tests it, and keeps it at the end if host traffic passes it
 * (keep_active). The tree in d (next, order, nsettled, dist: its hops) when every one of
 * the `reach` switches joined, else false (the layer as it was); *oom when out of memory.
 *
 * With `shortest` (BFS distances to t) a switch joins only through a neighbour one hop
 * nearer: the first pass over the layers, so that paths stay shortest wherever some layer
 * takes them (with 8 VLs, on all of test_routing's 150 random graphs). The second pass lets
 * them grow longer, a hop costing as much as `hop` host paths (the number of hosts). On a
 * 6x6x6 torus the shift permutations' worst link load is 18 with 8 VLs, 21 with 4 and 29 with
 * 1 (OpenSM's nue: 16 with 1); before, each switch took the least loaded nearer neighbour
 * on its own and the escape routes were up/down over every link: 29, 61 and 73. */
/* Edges whose dependency a layer refused while the tree being grown in it: refused again
 * until that tree is done (the layer only gains dependencies meanwhile), so not asked again
 * (each refusal is a search of the layer's order). at[edge] == epoch. */
struct refusals {
	uint32_t *at;
	uint32_t epoch;
};

/* Switch x joins the tree in d through the cheapest of its neighbours in it (with
 * shortest: only those one hop nearer) whose dependency layer l takes: the edge, or NONE
 * (*oom when out of memory). */
static uint32_t join(struct routing_ctx *ctx, const struct chans *c, struct cdg *g, unsigned l,
                     uint32_t t, const uint64_t *w, uint64_t base, uint64_t hop,
                     const uint16_t *shortest, const bool *leaf, const struct dijkstra *d,
                     const uint16_t *dist, uint32_t *cand, struct deps *dp, struct refusals *rf,
                     uint32_t x, bool *oom)
{
	uint64_t cost[256];
	uint32_t nc = 0;
	for (uint32_t f = ctx->adj_start[x]; f < ctx->adj_start[x + 1] && nc < 256; f++) {
		uint32_t u = ctx->adj[f].to;
		if (dist[u] == RT_INF || (shortest && shortest[u] + 1 != shortest[x]) ||
		    rf->at[f] == rf->epoch)
			continue;
		uint64_t cf = step_cost(d->cost[u], hop, w[f] - base);
		uint32_t at = nc++;
		while (at && cost[at - 1] > cf) {
			cand[at] = cand[at - 1];
			cost[at] = cost[at - 1];
			at--;
		}
		cand[at] = f;
		cost[at] = cf;
	}
	for (uint32_t i = 0; i < nc; i++) {
		uint32_t f = cand[i], u = ctx->adj[f].to;
		if (u == t)
			return f;
		uint8_t in = c->in[ctx->port_base[x] + ctx->adj[f].port];
		uint8_t out = ctx->adj[d->next[u]].port;
		int r = leaf[x] ? keep(g, l, u, in, out, dp) : cdg_add(g, l, u, in, out);
		if (r == -2) {
			*oom = true;
			return NONE;
		}
		if (r < 0) {
			rf->at[f] = rf->epoch; /* the layer only grows while the tree does */
			continue;
		}
		if (r == 1 && !leaf[x])
			cdg_remove(g, l, u, in,
			           out); /* a test: kept at the end if it carries hosts */
		return f;
	}
	return NONE;
}

static bool layer_tree(struct routing_ctx *ctx, const struct chans *c, struct cdg *g, unsigned l,
                       uint32_t t, const uint64_t *w, uint64_t base, uint64_t hop,
                       const uint16_t *shortest, const uint32_t *bfs_order, const bool *leaf,
                       bool *active, struct dijkstra *d, uint16_t *dist, uint32_t *cand,
                       struct deps *dp, struct refusals *rf, uint32_t reach, bool *oom)
{
	rf->epoch++;
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		dist[s] = RT_INF;
		d->cost[s] = UINT64_MAX;
	}
	d->cost[t] = 0;
	dist[t] = 0;
	d->order[0] = t;
	d->nsettled = 1;
	d->next[t] = NONE;
	dp->n = 0;
	if (shortest) {
		/* every nearer neighbour is in before a switch's turn: breadth-first order */
		for (uint32_t k = 1; k < reach; k++) {
			uint32_t x = bfs_order[k];
			uint32_t f = join(ctx, c, g, l, t, w, base, hop, shortest, leaf, d, dist,
			                  cand, dp, rf, x, oom);
			if (f == NONE) {
				undo(g, l, dp);
				return false;
			}
			uint32_t u = ctx->adj[f].to;
			d->next[x] = f;
			d->cost[x] = step_cost(d->cost[u], hop, w[f] - base);
			dist[x] = (uint16_t)(dist[u] + 1);
			d->order[d->nsettled++] = x;
		}
		return keep_active(ctx, c, g, l, t, leaf, active, d, dp, oom);
	}
	d->hp.n = 0;
	for (uint32_t x = t;;) {
		for (uint32_t e = ctx->adj_start[x]; e < ctx->adj_start[x + 1]; e++) {
			uint32_t y = ctx->adj[e].to, back = c->rev[e];
			if (dist[y] != RT_INF || back == NONE)
				continue;
			uint64_t ny = step_cost(d->cost[x], hop, w[back] - base);
			if (ny < d->cost[y]) {
				d->cost[y] = ny;
				heap_push_or_lower(&d->hp, y);
			}
		}
		uint32_t f = NONE;
		while (d->hp.n && f == NONE) {
			x = heap_pop(&d->hp);
			f = join(ctx, c, g, l, t, w, base, hop, NULL, leaf, d, dist, cand, dp, rf,
			         x, oom);
			if (*oom) {
				while (d->hp.n) /* the heap empty for the next tree */
					heap_pop(&d->hp);
				undo(g, l, dp);
				return false;
			}
			if (f == NONE)
				d->cost[x] =
				    UINT64_MAX; /* later, through a switch that joins after */
		}
		if (f == NONE)
			break;
		uint32_t u = ctx->adj[f].to;
		d->next[x] = f;
		d->cost[x] = step_cost(d->cost[u], hop, w[f] - base);
		dist[x] = (uint16_t)(dist[u] + 1);
		d->order[d->nsettled++] = x;
	}
	if (d->nsettled < reach) {
		undo(g, l, dp);
		return false;
	}
	return keep_active(ctx, c, g, l, t, leaf, active, d, dp, oom);
}

/* The escape routes: along one spanning tree, breadth first from the root (the first root
 * switch found). Tree routing is free of credit loops, and its dependencies are few (turns
 * at tree links only), which leaves the layers more room for shortest trees than up/down
 * routes over every link did. Fills every switch's LFT for every destination (the trees
 * found later overwrite them); -1 out of memory. */
static int tree_escape(struct routing_ctx *ctx, const struct chans *c, uint32_t root)
{
	uint32_t ns = ctx->nsw;
	uint32_t *up = malloc(sizeof(uint32_t) * (ns + 1));  /* edge to the parent */
	uint32_t *via = malloc(sizeof(uint32_t) * (ns + 1)); /* edge down towards t */
	uint32_t *queue = malloc(sizeof(uint32_t) * (ns + 1));
	uint32_t *mark = calloc(ns + 1, sizeof(uint32_t));
	if (!up || !via || !queue || !mark) {
		free(up);
		free(via);
		free(queue);
		free(mark);
		return -1;
	}
	for (uint32_t s = 0; s < ns; s++)
		up[s] = NONE;
	bool *seen = (bool *)via; /* reused below */
	memset(seen, 0, ns + 1);
	uint32_t head = 0, tail = 0;
	queue[tail++] = root;
	seen[root] = true;
	while (head < tail) {
		uint32_t s = queue[head++];
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			uint32_t m = ctx->adj[e].to;
			if (seen[m] || c->rev[e] == NONE)
				continue;
			seen[m] = true;
			up[m] = c->rev[e];
			queue[tail++] = m;
		}
	}
	for (uint32_t t = 0; t < ns; t++) {
		if (ctx->dst_start[t] == ctx->dst_start[t + 1])
			continue;
		routing_assign_local(ctx, t);
		if (up[t] == NONE && t != root)
			continue; /* not in the tree: unreachable */
		/* t's ancestors, each with its edge down towards t */
		for (uint32_t a = t; a != root && up[a] != NONE;) {
			uint32_t p = ctx->adj[up[a]].to;
			via[p] = c->rev[up[a]];
			mark[p] = t + 1;
			a = p;
		}
		for (uint32_t k = 0; k < tail; k++) {
			uint32_t s = queue[k];
			if (s == t)
				continue;
			uint32_t e = mark[s] == t + 1 ? via[s] : up[s];
			if (e == NONE)
				continue;
			for (uint32_t i = ctx->dst_start[t]; i < ctx->dst_start[t + 1]; i++)
				ctx->t->sws[s].lft[ctx->dst[i].lid] = ctx->adj[e].port;
		}
	}
	free(up);
	free(via);
	free(queue);
	free(mark);
	return 0;
}

/* What one nue_unicast run works with, allocated once for every destination. */
struct nue_run {
	uint32_t *roots;
	bool *leaf;
	struct chans c;
	struct cdg g;
	struct dijkstra d;
	struct weights ww;
	struct deps dp;
	uint16_t *dist, *bfsd;
	uint32_t *bq;
	struct refusals rf;
	uint32_t *cand, *walked;
	bool *active;
	uint32_t *by;       /* switches in GUID order */
	uint64_t base, hop; /* the weights' hop cost, and what a hop costs longer trees */
	bool *unlaid;       /* per ctx->dst entry: an LMC block's later LID, spread, in no layer */
	unsigned esc;       /* the escape routes' layer */
	unsigned trees;     /* the layers nue's trees may take: all, or all but the escape */
	uint16_t used;      /* the layers that hold a tree */
	bool compact;       /* route_destination: each layer in turn, before the next */
};

static int nue_run_alloc(struct routing_ctx *ctx, struct nue *st, struct nue_run *r)
{
	uint32_t ns = ctx->nsw;
	st->nlids = (uint32_t)ctx->max_lid + 1;
	st->lid_layer = calloc(st->nlids, 1);
	r->roots = malloc(sizeof(uint32_t) * (ns + 1));
	r->leaf = malloc(sizeof(bool) * (ns + 1));
	r->dp.sw = malloc(sizeof(uint32_t) * (ns + 1));
	r->dp.in = malloc(ns + 1);
	r->dp.out = malloc(ns + 1);
	r->dist = malloc(sizeof(uint16_t) * (ns + 1));
	r->bfsd = malloc(sizeof(uint16_t) * (ns + 1));
	r->bq = malloc(sizeof(uint32_t) * (ns + 1));
	r->rf = (struct refusals){calloc(ctx->adj_start[ns] + 1, sizeof(uint32_t)), 0};
	r->cand = malloc(sizeof(uint32_t) * (ctx->adj_start[ns] + 1));
	r->walked = calloc(ns + 1, sizeof(uint32_t));
	r->active = malloc(sizeof(bool) * (ns + 1));
	r->by = switches_by_guid(ctx);
	r->unlaid = calloc(ctx->dst_start[ns] + 1, sizeof(bool));
	if (!r->roots || !r->leaf || !st->lid_layer || !r->dp.sw || !r->dp.in || !r->dp.out ||
	    !r->dist || !r->bfsd || !r->bq || !r->cand || !r->walked || !r->active || !r->by ||
	    !r->unlaid || chans_build(ctx, &r->c) < 0 || cdg_init(&r->g, ctx) < 0 ||
	    dijkstra_alloc(&r->d, ns) < 0 || weights_init(&r->ww, ctx) < 0)
		return -1;
	return 0;
}

static void nue_run_free(struct nue_run *r)
{
	free(r->roots);
	free(r->leaf);
	free(r->dp.sw);
	free(r->dp.in);
	free(r->dp.out);
	free(r->dist);
	free(r->bfsd);
	free(r->bq);
	free(r->rf.at);
	free(r->cand);
	free(r->walked);
	free(r->active);
	free(r->by);
	free(r->unlaid);
	chans_free(&r->c);
	cdg_free(&r->g);
	dijkstra_free(&r->d);
	weights_free(&r->ww);
}

/* The escape routes, up/down from the configured or detected roots, laid in the top layer
 * for every destination. 0; -1 with ctx->why; -2 out of memory. */
static int escape_routes(struct routing_ctx *ctx, struct nue *st, struct nue_run *r)
{
	uint32_t nroots = 0;
	if (routing_configured_roots(ctx, "nue", r->roots, &nroots) < 0)
		return -1;
	if (!nroots) {
		routing_host_switches(ctx, r->leaf);
		if (routing_detect_roots(ctx, r->leaf, r->roots, &nroots) < 0) {
			snprintf(ctx->why, sizeof(ctx->why), "nue: no root switch found");
			return -1;
		}
	}
	if (tree_escape(ctx, &r->c, r->roots[0]) < 0)
		return -2;
	r->esc = st->budget - 1u;
	/* at LMC > 0 the escape layer is kept for the escape routes and the alternates that
	 * follow the escape tree's up/down order, which fit there together (nue_alternates;
	 * with one VL the trees share it): on a 200-switch random graph whose 8 layers nue's trees
	 * filled, the escape layer too, 77 of 2,400 alternates had found a layer (4.5% of host
	 * pairs had one); now all do */
	r->trees = routing_lmc_any(ctx) && st->budget > 1 ? r->esc : st->budget;
	routing_host_switches(ctx, r->leaf);
	uint32_t epoch = 0;
	for (uint32_t t = 0; t < ctx->nsw; t++)
		for (uint32_t i = ctx->dst_start[t]; i < ctx->dst_start[t + 1]; i++) {
			int rc = lay_escape(&r->g, ctx, r->leaf, t, ctx->dst[i].lid, r->esc,
			                    r->walked, ++epoch);
			if (rc == -2)
				return -2;
			if (rc < 0) {
				snprintf(
				    ctx->why, sizeof(ctx->why),
				    "nue: the up/down escape routes towards LID %u close a cycle",
				    ctx->dst[i].lid);
				return -1;
			}
		}
	return 0;
}

/* A tree towards t in layer l, of shortest paths or of any (layer_tree); *oom when out of
 * memory. */
static bool tree_in(struct routing_ctx *ctx, struct nue_run *r, unsigned l, uint32_t t,
                    bool shortest, uint32_t reach, bool *oom)
{
	return layer_tree(ctx, &r->c, &r->g, l, t, r->ww.w, r->base, r->hop,
	                  shortest ? r->bfsd : NULL, r->bq, r->leaf, r->active, &r->d, r->dist,
	                  r->cand, &r->dp, &r->rf, reach, oom);
}

/* Destination i (on switch t): its tree in the lowest layer that takes one, shortest where
 * one does, else longer, else the escape routes (compact: the lowest layer that takes a
 * tree, shortest or longer). 0; -2 out of memory. */
static int route_destination(struct routing_ctx *ctx, struct nue *st, struct nue_run *r, uint32_t t,
                             uint32_t i)
{
	uint32_t ns = ctx->nsw;
	struct dijkstra *d = &r->d;
	uint16_t lid = ctx->dst[i].lid;
	/* the switches it can be reached from, and their distances */
	routing_bfs(ctx, t, r->bfsd, r->bq);
	uint32_t reach = 0;
	for (uint32_t s = 0; s < ns; s++)
		reach += r->bfsd[s] != RT_INF;
	/* shortest paths where a layer takes them, else longer ones; compact: in the lowest
	 * layer that takes either, the layers above left to the LMC alternates */
	uint32_t l = 0, lim = r->trees;
	bool oom = false;
	if (r->compact) {
		for (l = 0; l < lim; l++)
			if (tree_in(ctx, r, l, t, true, reach, &oom) ||
			    (!oom && tree_in(ctx, r, l, t, false, reach, &oom)) || oom)
				break;
	} else {
		for (unsigned pass = 0; pass < 2 && (!pass || l == lim); pass++)
			for (l = 0; l < lim && !tree_in(ctx, r, l, t, !pass, reach, &oom) && !oom;
			     l++)
				;
	}
	if (oom)
		return -2;
	bool longer = false;
	for (uint32_t k = 0; l < lim && k < d->nsettled && !longer; k++)
		longer = r->dist[d->order[k]] != r->bfsd[d->order[k]];
	if (l == lim) {
		st->lid_layer[lid] = (uint8_t)r->esc;
		st->escaped++;
		r->used |= (uint16_t)(1u << r->esc);
		return 0;
	}
	st->lid_layer[lid] = (uint8_t)l;
	r->used |= (uint16_t)(1u << l);
	if (longer)
		st->longer++;
	else
		st->shortest++;
	for (uint32_t k = 1; k < d->nsettled; k++) {
		uint32_t s = d->order[k];
		ctx->t->sws[s].lft[lid] = ctx->adj[d->next[s]].port;
	}
	if (ctx->dst[i].port)
		weights_lay(&r->ww, ctx, d);
	return 0;
}

/* LID lid (on switch t) takes LID like's routes and layer, whose dependencies that layer
 * holds already. */
static void copy_routes(struct routing_ctx *ctx, struct nue *st, uint32_t t, uint16_t lid,
                        uint16_t like)
{
	for (uint32_t s = 0; s < ctx->nsw; s++)
		if (s != t)
			ctx->t->sws[s].lft[lid] = ctx->t->sws[s].lft[like];
	st->lid_layer[lid] = st->lid_layer[like];
}

/* Switch t's own LIDs: its first host's routes and layer. */
static void follow_first_host(struct routing_ctx *ctx, struct nue *st, uint32_t t, uint32_t first)
{
	for (uint32_t i = ctx->dst_start[t]; first != NONE && i < ctx->dst_start[t + 1]; i++)
		if (!ctx->dst[i].port)
			copy_routes(ctx, st, t, ctx->dst[i].lid, ctx->dst[first].lid);
}

/* The dependencies of destination LID lid's routes into layer l: at every switch a route
 * passes on its way (a switch that routes lid and whose next switch is not t), from the
 * link it arrives by to the one it leaves by. false (the layer as it was) when one closes a
 * cycle; *oom when out of memory. */
static bool lay_lid(struct routing_ctx *ctx, struct cdg *g, unsigned l, uint32_t t, uint16_t lid,
                    struct deps *dp, bool *oom)
{
	dp->n = 0;
	for (uint32_t c = 0; c < ctx->nsw; c++) {
		uint8_t p = c == t ? 0 : ctx->t->sws[c].lft[lid];
		uint32_t ch = p && p != 0xff ? cdg_channel(g, c, p) : NONE;
		if (ch == NONE || g->to_sw[ch] == t)
			continue;
		uint32_t x = g->to_sw[ch];
		uint8_t out = ctx->t->sws[x].lft[lid];
		if (!out || out == 0xff || cdg_channel(g, x, out) == NONE)
			continue;
		int rc = keep(g, l, x, g->in[ch], out, dp);
		if (rc < 0) {
			*oom = rc == -2;
			undo(g, l, dp);
			return false;
		}
	}
	return true;
}

/* The lowest layer of mask that takes alternate LID d's routes whole: its layer recorded,
 * or false (the layers as they were). */
static bool lay_alt(struct routing_ctx *ctx, struct nue *st, struct nue_run *r, uint32_t t,
                    uint32_t d, uint32_t mask, bool *oom)
{
	uint16_t lid = ctx->dst[d].lid;
	for (unsigned l = 0; l < st->budget && !*oom; l++) {
		if (!(mask & (1u << l)))
			continue;
		if (lay_lid(ctx, &r->g, l, t, lid, &r->dp, oom)) {
			st->lid_layer[lid] = (uint8_t)l;
			r->used |= (uint16_t)(1u << l);
			return true;
		}
	}
	return false;
}

/* LMC alternates (routing/lmc.c) over nue's trees: each alternate LID's routes, and each
 * later LID of a block whose spread lmc.c kept (apart already), go into the lowest layer of
 * nue's trees that stays acyclic with them, so nue keeps its guarantee. Where none takes
 * them, the LID is routed again by the up/down order that keeps it apart best: the escape
 * tree's (ranked from its root: the tree's routes are up/down routes of that order, so the
 * escape layer takes such alternates), or one ranked from the switches farthest from the
 * roots before, one for each layer nue's trees left empty (up to 7), which holds that
 * order's alternates first (one order's routes never close a cycle among themselves; a
 * switch no host's path passes may keep another route, so a refusal stays possible). On
 * random graphs of 60 switches and 240 hosts whose trees left 2 layers empty, the escape
 * order alone gave 66-85% of host pairs a link-disjoint alternate, minhop 90-97%. After
 * every order's LIDs, those refused and those no order routed go in any layer that takes
 * them; failing that a LID takes its block's first LID's routes and layer. 0; -2 out of
 * memory. */
static int nue_alternates(struct routing_ctx *ctx, struct nue *st, struct nue_run *r)
{
	uint32_t ndst = ctx->dst_start[ctx->nsw], all = (1u << st->budget) - 1, trees = r->used;
	struct routing_alt_undo au = {0};
	struct updown ord[UD_ORDERS] = {0};
	bool *alt = calloc(ndst + 1, sizeof(bool)), *back = calloc(ndst + 1, sizeof(bool));
	bool *ud = calloc(ndst + 1, sizeof(bool)), oom = false;
	bool *lids = calloc((size_t)ctx->max_lid + 1, sizeof(bool));
	uint8_t *chosen = calloc(ndst + 1, 1);
	unsigned placed = 0, by_order = 0, kept = 0, nord = 1, layer_of[UD_ORDERS];
	int rc = -2;
	if (!routing_lmc_any(ctx)) {
		rc = 0;
		goto out;
	}
	if (!alt || !back || !ud || !lids || !chosen ||
	    routing_lmc_alternates(ctx, NULL, &au, alt) < 0)
		goto out;
	/* the escape layer (where there are others) and the empty ones kept for the orders */
	if (st->budget > 1)
		trees &= ~(1u << r->esc);
	/* lmc.c's alternates, and the spread LIDs it kept (apart already, or no way apart) */
	for (uint32_t t = 0; t < ctx->nsw && !oom; t++)
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1] && !oom; d++) {
			if (!alt[d] && !r->unlaid[d])
				continue;
			if (lay_alt(ctx, st, r, t, d, st->budget > 1 ? trees : all, &oom)) {
				placed++;
			} else if (!oom) {
				lids[ctx->dst[d].lid] = alt[d];
				back[d] = true;
			}
		}
	/* those refused back to their spread, in one pass over the undo log */
	routing_lmc_revert_lids(ctx, &au, lids);
	if (oom || updown_init(&ord[0], ctx, &r->roots[0], 1, false) < 0)
		goto out;
	layer_of[0] = r->esc;
	for (unsigned l = 0; l < st->budget && nord < UD_ORDERS; l++)
		if (l != r->esc && !(r->used & (1u << l))) {
			if (updown_next_order(ord, nord, ctx, &ord[nord]) < 0)
				break;
			layer_of[nord++] = l;
		}
	struct routing_alt_rules rules[UD_ORDERS];
	for (unsigned o = 0; o < nord; o++)
		rules[o] = (struct routing_alt_rules){updown_alt_step, &ord[o], UD_DOWN};
	struct routing_alt_choice choice = {.rules = rules, .nrules = nord, .chosen = chosen};
	if (routing_lmc_alternates_choice(ctx, &choice, &au, ud, back) < 0)
		goto out;
	/* the orders' routes first, each in its order's layer; then, in any layer that takes
	 * them, those refused there and the LIDs no order routed anew (apart as they are, or
	 * no way apart) */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t t = 0; t < ctx->nsw && !oom; t++)
			for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1] && !oom;
			     d++) {
				if (!back[d] || (!pass && !ud[d]))
					continue;
				uint32_t mask = pass ? all : 1u << layer_of[chosen[d]];
				if (lay_alt(ctx, st, r, t, d, mask, &oom)) {
					back[d] = false;
					by_order += ud[d];
					placed += !ud[d];
					continue;
				}
				if (oom || !pass)
					continue; /* refused in its order's layer: any, after */
				if (ud[d]) {      /* its spread, then, where a layer takes it */
					routing_lmc_revert_lid(ctx, &au, ctx->dst[d].lid);
					ud[d] = false;
					if (lay_alt(ctx, st, r, t, d, all, &oom)) {
						placed++;
						continue;
					}
				}
				/* the block's first LID's routes, in its layer */
				if (r->unlaid[d])
					copy_routes(ctx, st, t, ctx->dst[d].lid,
					            ctx->dst[d - routing_lmc_index(ctx, t, d)].lid);
				kept++;
			}
	if (oom)
		goto out;
	log_info(ctx->log, "routing",
	         "nue: LMC alternates laid in its layers: %u routed freely or spread, %u by %u "
	         "up/down order(s) (the escape tree's and one per layer its trees left empty); "
	         "%u on their block's first LID's routes",
	         placed, by_order, nord, kept);
	rc = 0;
out:
	for (unsigned o = 0; o < UD_ORDERS; o++)
		updown_free(&ord[o]);
	vec_free(&au.changes);
	free(alt);
	free(back);
	free(ud);
	free(lids);
	free(chosen);
	return rc;
}

/* The layers renumbered without gaps (the escape layer may be the only one above a few). */
static void renumber_layers(struct nue *st, uint16_t used)
{
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
}

/* Every destination's routes and layer, and the LMC alternates; compact: each tree in the
 * lowest layer that takes it (route_destination). 0; -1 with ctx->why; -2 out of memory. */
static int nue_route(struct routing_ctx *ctx, struct nue *st, bool compact)
{
	uint32_t ns = ctx->nsw;
	struct nue_run r = {.compact = compact};
	st->shortest = st->longer = st->escaped = 0;
	free(st->lid_layer);
	st->lid_layer = NULL;
	int rc = nue_run_alloc(ctx, st, &r) < 0 ? -2 : escape_routes(ctx, st, &r);
	if (rc < 0)
		goto out;

	/* the weights' hop cost (hosts^2 + 1, weights_init), and what a hop costs longer trees */
	uint64_t nhosts = 0;
	for (uint32_t s = 0; s < ns; s++)
		nhosts += r.ww.hosts[s];
	r.base = nhosts * nhosts + 1;
	r.hop = nhosts;
	/* destination switches in GUID order, as sssp takes them: the trees then do not
	 * follow where the SM sits (the 5,184-host tree's worst shift load 4 -> 1, the 6x6x6
	 * torus's 18-19 -> 16 with 8 VLs) */
	for (uint32_t o = 0; o < ns && rc == 0; o++) {
		uint32_t t = r.by[o];
		uint32_t first = weighted_first_host(ctx, t);
		for (uint32_t i = ctx->dst_start[t]; i < ctx->dst_start[t + 1] && rc == 0; i++) {
			unsigned k = routing_lmc_index(ctx, t, i);
			if (k) {
				/* a block's later LID: spread over the shortest ways (r.bfsd:
				 * from t, by the first LID's route_destination), in no layer
				 * until nue_alternates lays it. A tree of its own in a layer was
				 * replaced by lmc.c's anyway and left its dependencies behind:
				 * on a 200-switch random graph with 8 VLs 888 of 3,200
				 * destinations were on escape routes at LMC 2 against 98 of 800
				 * at LMC 0. A copy of the first LID would leave lmc.c every LID
				 * to route anew (3,456-host fat tree 2.2 s, with copies 22 s) */
				weighted_spread_lid(ctx, &r.c, r.bfsd, t, ctx->dst[i - k].lid,
				                    ctx->dst[i].lid, k);
				r.unlaid[i] = true;
			} else if (ctx->dst[i].port ||
			           first == NONE) { /* else: as the first host */
				rc = route_destination(ctx, st, &r, t, i);
			}
		}
		if (rc == 0)
			follow_first_host(ctx, st, t, first);
	}
	if (rc == 0)
		rc = nue_alternates(ctx, st, &r);
	if (rc == 0)
		renumber_layers(st, r.used);
out:
	nue_run_free(&r);
	return rc;
}

/* What nue_route() leaves: every switch's table, the ports' loads, each LID's layer and
 * the counts. */
struct nue_result {
	uint8_t *lft;   /* the switches' tables, one after another */
	uint32_t *load; /* ctx->load */
	uint8_t *lid_layer;
	uint32_t shortest, longer, escaped;
	uint8_t nlayers;
};

static int result_save(const struct routing_ctx *ctx, struct nue *st, struct nue_result *res)
{
	size_t n = 0, np = ctx->port_base[ctx->nsw];
	for (uint32_t s = 0; s < ctx->nsw; s++)
		n += ctx->t->sws[s].lft_size;
	res->lft = malloc(n + 1);
	res->load = malloc(sizeof(uint32_t) * (np + 1));
	if (!res->lft || !res->load)
		return -2;
	n = 0;
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		memcpy(res->lft + n, ctx->t->sws[s].lft, ctx->t->sws[s].lft_size);
		n += ctx->t->sws[s].lft_size;
	}
	memcpy(res->load, ctx->load, sizeof(uint32_t) * np);
	res->lid_layer = st->lid_layer; /* nue_route() makes its own */
	st->lid_layer = NULL;
	res->shortest = st->shortest;
	res->longer = st->longer;
	res->escaped = st->escaped;
	res->nlayers = st->nlayers;
	return 0;
}

static void result_restore(struct routing_ctx *ctx, struct nue *st, struct nue_result *res)
{
	size_t n = 0;
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		memcpy(ctx->t->sws[s].lft, res->lft + n, ctx->t->sws[s].lft_size);
		n += ctx->t->sws[s].lft_size;
	}
	memcpy(ctx->load, res->load, sizeof(uint32_t) * ctx->port_base[ctx->nsw]);
	free(st->lid_layer);
	st->lid_layer = res->lid_layer;
	res->lid_layer = NULL;
	st->shortest = res->shortest;
	st->longer = res->longer;
	st->escaped = res->escaped;
	st->nlayers = res->nlayers;
}

static void result_free(struct nue_result *res)
{
	free(res->lft);
	free(res->load);
	free(res->lid_layer);
}

/* At LMC > 0, where nue's shortest trees take the layers its LMC alternates would need (the
 * alternates keep apart by up/down orders, one per layer left empty): on random graphs of
 * 40-100 switches and 8 VLs, 78-90% of the (host switch, port) pairs no bridge parts had
 * two of the port's LIDs apart, against 95-100% with the trees laid compact, at 1.3-3.4%
 * more hops on the primary routes. Yet on a dragonfly whose alternates kept apart anyway, compact
 * trees made the primary routes' busiest link 2.6 times as loaded: so they are tried only
 * when the alternates fall short of 95%, and kept only when they reach it or do clearly
 * better (2 points of that share more). */
static int nue_route_lmc(struct routing_ctx *ctx, struct nue *st)
{
	uint64_t possible, apart, possible2, apart2;
	struct nue_result first = {0};
	int rc = nue_route(ctx, st, false);
	/* with 2 layers (one for trees, the escape's) the compact trees are the same */
	if (rc < 0 || !routing_lmc_any(ctx) || st->budget < 3)
		return rc;
	/* what cannot be measured or saved (memory) leaves the first trees, complete */
	if (routing_lmc_apart(ctx, &possible, &apart) < 0 || apart * 100 >= possible * 95 ||
	    result_save(ctx, st, &first) < 0) {
		result_free(&first);
		return 0;
	}
	/* the second try from clean tables and loads (the alternates break ties by load), and
	 * failing for any reason leaves the first; kept at 95% or 2 points of share more */
	routing_ctx_clean(ctx);
	if (nue_route(ctx, st, true) == 0 && routing_lmc_apart(ctx, &possible2, &apart2) == 0 &&
	    (apart2 * 100 >= possible2 * 95 ||
	     apart2 * possible * 50 >= apart * possible2 * 50 + possible * possible2))
		log_info(ctx->log, "routing",
		         "nue: trees laid compact for the LMC alternates: %llu of %llu (host "
		         "switch, port) pairs no bridge parts with two LIDs apart, against %llu of "
		         "%llu",
		         (unsigned long long)apart2, (unsigned long long)possible2,
		         (unsigned long long)apart, (unsigned long long)possible);
	else
		result_restore(ctx, st, &first);
	result_free(&first);
	return 0;
}

static int nue_unicast(struct routing_ctx *ctx, void *state)
{
	struct nue *st = state;
	int rc = nue_route_lmc(ctx, st);
	if (rc == -2)
		snprintf(ctx->why, sizeof(ctx->why), "nue: out of memory");
	if (rc < 0)
		return -1;
	log_notice(ctx->log, "routing",
	           "nue: %u destinations on shortest paths, %u on longer ones, %u on escape "
	           "routes; %u virtual layer(s) of %u",
	           st->shortest, st->longer, st->escaped, st->nlayers, st->budget);
	return 0;
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
    .summary = "destinations over virtual layers within routing_max_vls (down to one), each "
               "layer free of credit loops, escape routes along a spanning tree where none "
               "takes one",
    .setup = nue_setup,
    .unicast = nue_unicast,
    .path_sl = nue_path_sl,
    .sl2vl = nue_sl2vl,
    .sl2vl_by_vls = true,
    .layers = nue_layers,
    .teardown = nue_free,
};
