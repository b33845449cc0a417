/* sssp and dfsssp: single-source shortest paths under global link weights (Hoefler et al.,
 * 2008), and their deadlock-free variant that spreads the paths over virtual layers (Domke
 * et al., 2011), as OpenSM's engines of the same names do; and lash, minhop's shortest
 * paths on the same layers (OpenSM's LASH: Skeie et al., 2002).
 *
 * sssp routes one destination LID at a time with Dijkstra over directed switch links whose
 * weight is the number of host paths already laid on them: the routes are shortest, and
 * among the shortest those whose most loaded link is the least loaded (where minhop balances
 * port by port; Hoefler's and OpenSM's sum the loads along the path, which spread a torus's
 * shift permutations worse: routing/weighted.c).
 *
 * dfsssp then makes them free of credit loops: a path is the route from a source switch
 * (where hosts inject) to a destination LID; each in turn goes to the lowest layer whose
 * channel dependency graph it leaves acyclic (routing/cdg.c keeps each layer's graph in
 * topological order, so the test is local). Domke et al. move the paths of a cycle's weakest
 * dependency up a layer instead; first fit needs fewer layers (a 4x4x4 torus: 4 or 5 against
 * 6 or 8, a 6x6x6 mesh: 7 against more than 8). A layer is one SL, mapped to its own VL on
 * every switch link; the engine fails when the layers outnumber the VLs the switch links run
 * (or routing_max_vls). The SA's PathRecords carry each path's layer as its SL.
 *
 * Memory: the layers take one byte per (switch with hosts, destination LID), the dependency
 * graph 2 bytes per (switch, input, output) for all layers; nothing is LID x LID. */
#include <stdlib.h>
#include <string.h>

#include "routing/cdg.h"
#include "routing/updown.h"
#include "routing/weighted.h"

#define NONE UINT32_MAX

struct sssp {
	const char *name; /* the engine's, for its messages */
	bool layered;     /* dfsssp, lash */
	uint8_t nlayers;
	uint8_t budget; /* the VLs the layers may take */
	uint32_t nsrc, ndst;
	uint32_t *src_of_sw; /* switch -> source index, NONE: no host hangs off it */
	uint8_t *layer;      /* [source * ndst + destination index] */
	/* for path_sl after the routing context has moved on: LID -> source index of the
	 * switch it sends through, and LID -> destination index */
	uint32_t nlids;
	uint32_t *lid_src, *lid_dst;
};

static void why_oom(struct routing_ctx *ctx, const char *engine)
{
	snprintf(ctx->why, sizeof(ctx->why), "%s: out of memory", engine);
}

static int sssp_route(struct routing_ctx *ctx, const struct chans *c, const char *engine)
{
	uint32_t ns = ctx->nsw;
	struct dijkstra d;
	struct weights ww = {0};
	int rc = -1;
	/* at LMC > 0 the first LID's hop counts, for the spread of the block's later LIDs */
	bool lmc = routing_lmc_any(ctx);
	uint16_t *hops = lmc ? malloc(sizeof(uint16_t) * (ns + 1)) : NULL;
	if (dijkstra_alloc(&d, ns) < 0 || weights_init(&ww, ctx) < 0 || (lmc && !hops)) {
		why_oom(ctx, engine);
		goto out;
	}
	/* destination switches in GUID order, not in the order discovery met them: the
	 * greedy weights then fall the same way wherever the SM sits (the 5,184-host tree's
	 * worst shift load was 5, 6 or 11 by the SM's place; by GUID, with Dijkstra's ties
	 * to the lower port, 1), and as OpenSM's sssp takes them */
	uint32_t *by = switches_by_guid(ctx);
	if (!by) {
		why_oom(ctx, engine);
		goto out;
	}
	for (uint32_t o = 0; o < ns; o++) {
		uint32_t t = by[o];
		if (ctx->dst_start[t] == ctx->dst_start[t + 1])
			continue;
		routing_assign_local(ctx, t);
		/* hosts first; the switch's own LIDs then follow its first host's routes: they
		 * carry management only, and a tree of their own would add channel
		 * dependencies (and dfsssp layers) for nothing */
		for (uint32_t i = ctx->dst_start[t]; i < ctx->dst_start[t + 1]; i++) {
			uint16_t lid = ctx->dst[i].lid;
			if (!ctx->dst[i].port)
				continue;
			unsigned nth = routing_lmc_index(ctx, t, i);
			if (nth > 0) {
				/* a later LID of an LMC block: spread over the other shortest
				 * ways from the first LID's Dijkstra (hops: its run to t), not a
				 * Dijkstra of its own; it adds nothing to the weights, as it
				 * carries traffic only when a primary path has failed */
				weighted_spread_lid(ctx, c, hops, t, ctx->dst[i - nth].lid, lid,
				                    nth);
				continue;
			}
			dijkstra_to(ctx, c, ww.w, t, &d);
			if (hops)
				dijkstra_hops(ctx, &d, hops);
			for (uint32_t k = 1; k < d.nsettled; k++) {
				uint32_t s = d.order[k];
				ctx->t->sws[s].lft[lid] = ctx->adj[d.next[s]].port;
			}
			weights_lay(&ww, ctx, &d);
		}
		weighted_switch_lids(ctx, c, ww.w, t, &d);
	}
	free(by);
	rc = 0;
out:
	dijkstra_free(&d);
	weights_free(&ww);
	free(hops);
	return rc;
}

/* ---- dfsssp: layers ---- */

/* The dependencies of the path from switch s0 to lid (along the tables): switch, input and
 * output of each hop after the first. */
static unsigned path_deps(const struct routing_ctx *ctx, const struct cdg *g, uint32_t s0,
                          uint32_t t, uint16_t lid, uint32_t *dsw, uint8_t *din, uint8_t *dout)
{
	unsigned nd = 0, in = 0;
	bool came = false;
	for (uint32_t s = s0, hop = 0; s != t && hop < 64; hop++) {
		uint8_t p = ctx->t->sws[s].lft[lid];
		uint32_t ch = p && p != 0xff ? cdg_channel(g, s, p) : NONE;
		if (ch == NONE)
			break;
		if (came && nd < 64) {
			dsw[nd] = s;
			din[nd] = (uint8_t)in;
			dout[nd++] = p;
		}
		came = true;
		in = g->in[ch];
		s = g->to_sw[ch];
	}
	return nd;
}

/* Dependencies added to the layers, in order, so that a try can be taken back. */
struct dep_log {
	struct dep_added {
		uint32_t sw;
		uint8_t layer, in, out;
	} * v;
	size_t n, cap;
};

static int log_dep(struct dep_log *lg, unsigned l, uint32_t sw, uint8_t in, uint8_t out)
{
	if (lg->n == lg->cap) {
		size_t nc = lg->cap ? lg->cap * 2 : 1024;
		struct dep_added *a = realloc(lg->v, nc * sizeof(*a));
		if (!a)
			return -2;
		lg->v = a;
		lg->cap = nc;
	}
	lg->v[lg->n++] = (struct dep_added){sw, (uint8_t)l, in, out};
	return 0;
}

/* Take back the dependencies logged since mark. */
static void unlog(struct cdg *g, struct dep_log *lg, size_t mark)
{
	while (lg->n > mark) {
		const struct dep_added *a = &lg->v[--lg->n];
		cdg_remove(g, a->layer, a->sw, a->in, a->out);
	}
}

/* Layers [from, from + n) kept for others (the up/down orders' layers). */
struct skip {
	unsigned from, n;
};

/* The lowest layer from lo on, out of sk, that takes the path's dependencies without a
 * cycle (they are added to it, and to lg when given), budget when none does; -2 out of
 * memory. */
static int fit_path(struct cdg *g, unsigned lo, unsigned budget, struct skip sk,
                    const uint32_t *dsw, const uint8_t *din, const uint8_t *dout, unsigned nd,
                    struct dep_log *lg)
{
	for (unsigned l = lo; l < budget; l++) {
		if (l >= sk.from && l < sk.from + sk.n)
			continue;
		unsigned k = 0;
		int r = 0;
		bool fresh[64];
		for (; k < nd; k++) {
			r = cdg_add(g, l, dsw[k], din[k], dout[k]);
			if (r < 0)
				break;
			fresh[k] = r == 1;
		}
		if (k == nd) {
			for (k = 0; lg && k < nd; k++)
				if (fresh[k] && log_dep(lg, l, dsw[k], din[k], dout[k]) < 0)
					return -2;
			return (int)l;
		}
		/* undo this try: the layer stays as it was */
		while (k--)
			if (fresh[k])
				cdg_remove(g, l, dsw[k], din[k], dout[k]);
		if (r == -2)
			return -2;
	}
	return (int)budget;
}

/* The paths to the entries d with alt[d] == which (alt NULL: every entry), each in the
 * lowest layer from lo that takes it, logged in lg when given; *tried counts them. 0; 1 when
 * one fits none (ctx->why says so); -2 out of memory. */
static int fit_some(struct routing_ctx *ctx, struct sssp *st, struct cdg *g, const bool *alt,
                    bool which, unsigned lo, unsigned *used, uint64_t *tried, struct dep_log *lg,
                    const uint8_t *prev, unsigned in);

static int fit_all(struct routing_ctx *ctx, struct sssp *st, struct cdg *g, const bool *alt,
                   bool which, unsigned lo, unsigned *used, uint64_t *tried, struct dep_log *lg)
{
	return fit_some(ctx, st, g, alt, which, lo, used, tried, lg, NULL, 0);
}

/* fit_all() for the paths that layering prev (NULL: all of them) put in layer in. */
static int fit_some(struct routing_ctx *ctx, struct sssp *st, struct cdg *g, const bool *alt,
                    bool which, unsigned lo, unsigned *used, uint64_t *tried, struct dep_log *lg,
                    const uint8_t *prev, unsigned in)
{
	uint32_t ns = ctx->nsw;
	for (uint32_t t = 0; t < ns; t++)
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1]; d++) {
			if (alt && alt[d] != which)
				continue;
			for (uint32_t s0 = 0; s0 < ns; s0++) {
				uint32_t src = st->src_of_sw[s0];
				if (src == NONE || s0 == t ||
				    (prev && prev[(size_t)src * st->ndst + d] != in))
					continue;
				uint32_t dsw[64];
				uint8_t din[64], dout[64];
				unsigned nd =
				    path_deps(ctx, g, s0, t, ctx->dst[d].lid, dsw, din, dout);
				int l = fit_path(g, lo, st->budget, (struct skip){0, 0}, dsw, din,
				                 dout, nd, lg);
				(*tried)++;
				if (l == -2)
					return -2;
				if ((unsigned)l == st->budget) {
					bool capped =
					    ctx->cfg && ctx->cfg->routing_max_vls == st->budget;
					snprintf(ctx->why, sizeof(ctx->why),
					         "%s: the %s need more than %u virtual layers to "
					         "be free of credit loops, and %s %u VL%s",
					         st->name,
					         which ? "LMC alternates" : "shortest paths",
					         st->budget,
					         capped ? "routing_max_vls allows"
					                : "the switch links run",
					         st->budget, st->budget == 1 ? "" : "s");
					return 1;
				}
				st->layer[(size_t)src * st->ndst + d] = (uint8_t)l;
				if ((unsigned)l + 1 > *used)
					*used = (unsigned)l + 1;
			}
		}
	return 0;
}

static void log_first_fit(struct routing_ctx *ctx, const struct sssp *st, uint64_t tried,
                          bool above)
{
	log_notice(ctx->log, "routing", "%s: %llu paths in %u virtual layer(s) of %u%s", st->name,
	           (unsigned long long)tried, st->nlayers, st->budget,
	           above ? " (LMC alternates from the first free one)" : "");
}

/* First fit: every path in turn goes to the lowest layer its dependencies leave acyclic.
 * The LMC alternates (alt[d], NULL: none) come after all the others, in layers above theirs
 * (above) or in any (first fit from layer 0): above, an alternate never pushes a primary
 * route up, and alternates that keep a rule of their own (up/down) share one layer. */
static int dfsssp_first_fit(struct routing_ctx *ctx, struct sssp *st, const bool *alt, bool above)
{
	struct cdg g;
	unsigned used = 1;
	uint64_t tried = 0;
	int r = -2;
	if (cdg_init(&g, ctx) == 0)
		r = fit_all(ctx, st, &g, alt, false, 0, &used, &tried, NULL);
	if (r == 0 && alt)
		r = fit_all(ctx, st, &g, alt, true, above ? used : 0, &used, &tried, NULL);
	cdg_free(&g);
	if (r == -2)
		why_oom(ctx, st->name);
	if (r != 0)
		return -1;
	st->nlayers = (uint8_t)used;
	log_first_fit(ctx, st, tried, alt && above);
	return 0;
}

/* Lay every path to alternate LID d (destination switch t) in layer l, as a whole (one table
 * serves every source: a path cannot leave on its own). false, with the layer as it was,
 * when some path would close a cycle there; -2 out of memory. */
static int lay_alt_lid(const struct routing_ctx *ctx, struct sssp *st, struct cdg *g, uint32_t t,
                       uint32_t d, unsigned l, struct dep_log *lg)
{
	size_t mark = lg->n;
	int ok = 1;
	for (uint32_t s0 = 0; s0 < ctx->nsw && ok == 1; s0++) {
		if (st->src_of_sw[s0] == NONE || s0 == t)
			continue;
		uint32_t dsw[64];
		uint8_t din[64], dout[64];
		unsigned nd = path_deps(ctx, g, s0, t, ctx->dst[d].lid, dsw, din, dout);
		for (unsigned k = 0; k < nd; k++) {
			int r = cdg_add(g, l, dsw[k], din[k], dout[k]);
			if (r == 1 && log_dep(lg, l, dsw[k], din[k], dout[k]) < 0) {
				cdg_remove(g, l, dsw[k], din[k], dout[k]);
				r = -2;
			}
			if (r < 0) {
				ok = r == -2 ? -2 : 0;
				break;
			}
		}
	}
	if (ok != 1) {
		unlog(g, lg, mark);
		return ok;
	}
	lg->n = mark; /* kept: never taken back */
	for (uint32_t s0 = 0; s0 < ctx->nsw; s0++)
		if (st->src_of_sw[s0] != NONE && s0 != t)
			st->layer[(size_t)st->src_of_sw[s0] * st->ndst + d] = (uint8_t)l;
	return 1;
}

/* Lay the paths to LID d path by path, each in the lowest layer out of sk that takes it. 0;
 * 1, with the layers as they were, when one fits none (ctx->why says so, what they are,
 * when given); -2 out of memory. */
static int lay_paths(struct routing_ctx *ctx, struct sssp *st, struct cdg *g, uint32_t t,
                     uint32_t d, struct skip sk, unsigned *used, const char *what,
                     struct dep_log *lg)
{
	size_t mark = lg->n;
	unsigned was = *used;
	for (uint32_t s0 = 0; s0 < ctx->nsw; s0++) {
		uint32_t src = st->src_of_sw[s0];
		if (src == NONE || s0 == t)
			continue;
		uint32_t dsw[64];
		uint8_t din[64], dout[64];
		unsigned nd = path_deps(ctx, g, s0, t, ctx->dst[d].lid, dsw, din, dout);
		int l = fit_path(g, 0, st->budget, sk, dsw, din, dout, nd, lg);
		if (l == -2)
			return -2;
		if ((unsigned)l == st->budget) {
			if (what)
				snprintf(ctx->why, sizeof(ctx->why),
				         "%s: the %s need more than %u virtual layers to be free "
				         "of credit loops",
				         st->name, what, st->budget);
			unlog(g, lg, mark);
			*used = was;
			return 1;
		}
		st->layer[(size_t)src * st->ndst + d] = (uint8_t)l;
		if ((unsigned)l + 1 > *used)
			*used = (unsigned)l + 1;
	}
	lg->n = mark; /* kept: never taken back */
	return 0;
}

/* Put back what the alternates changed for the LIDs marked in lids, and unmark them. */
static void revert_marked(struct routing_ctx *ctx, struct routing_alt_undo *undo, bool *lids)
{
	routing_lmc_revert_lids(ctx, undo, lids);
	memset(lids, 0, ((size_t)ctx->max_lid + 1) * sizeof(bool));
}

/* Lay LID d's paths (lay_paths, any layer); a later LID of a block whose paths fit no layer
 * takes its first LID's routes instead (counted in *copied), which fit where those do. */
static int lay_or_follow(struct routing_ctx *ctx, struct sssp *st, struct cdg *g, uint32_t t,
                         uint32_t d, unsigned *used, const char *what, struct dep_log *lg,
                         struct routing_alt_undo *undo, uint32_t *copied)
{
	const struct skip none = {0, 0};
	int r = lay_paths(ctx, st, g, t, d, none, used, what, lg);
	if (r != 1 || routing_lmc_index(ctx, t, d) == 0)
		return r;
	(*copied)++;
	if (routing_lmc_follow_first(ctx, undo, t, d) < 0)
		return -2;
	return lay_paths(ctx, st, g, t, d, none, used, "LMC LIDs on their first LID's routes", lg);
}

/* The free alternates (alt[d]) path by path in the layers out of sk; those none takes go
 * back to sssp's routes (back[d]), all in one pass over the undo log (lids: scratch per
 * LID, false on entry and on return; a pass per LID took a third of the routing time on a
 * 200-switch graph). How many were laid, or -2 out of memory. */
static int64_t lay_free_alternates(struct routing_ctx *ctx, struct sssp *st, struct cdg *g,
                                   bool *alt, bool *back, struct skip sk, unsigned *used,
                                   struct dep_log *lg, struct routing_alt_undo *undo, bool *lids)
{
	int64_t laid = 0;
	for (uint32_t t = 0; t < ctx->nsw; t++)
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1]; d++) {
			if (!alt[d])
				continue;
			int ok = lay_paths(ctx, st, g, t, d, sk, used, NULL, lg);
			if (ok == -2)
				return -2;
			if (ok == 0) {
				laid++;
				continue;
			}
			lids[ctx->dst[d].lid] = true;
			alt[d] = false;
			back[d] = true;
		}
	revert_marked(ctx, undo, lids);
	return laid;
}

/* The first switch an order is ranked from. */
static uint32_t first_root(const struct updown *u, uint32_t ns)
{
	for (uint32_t s = 0; s < ns; s++)
		if (u->rank[s] == 0)
			return s;
	return 0;
}

/* The alternates' orders after ord[0], one per layer above the primary routes' (none where
 * they took every layer: full), counted in *nord. With one order or two, each in a layer of
 * its own, the first takes a depth-first order from its root instead of the hop ranks: one
 * order alone then gives far more source switches a way apart (fabricsim's 200-switch random
 * graphs, 8 VLs, of the pairs no bridge parts: 75.1 -> 83.7%, 79.2 -> 86.4%), and beside a
 * ranked second one 0.2-5.6 points more (8 graphs of 150 and 200 switches). With three or
 * more, the ranked orders from switches far apart complement each other better (-2.2 to +0.8
 * points), and where the order has no layer (full) its paths fit the primary routes' layers
 * worse depth first (-0.8 to -1.8 points): those keep the ranks. 0, or -1 out of memory. */
static int alt_orders(struct routing_ctx *ctx, const struct sssp *st, struct updown *ord, bool full,
                      unsigned reserved, unsigned *nord)
{
	while (!full && *nord < st->budget - reserved && *nord < UD_ORDERS &&
	       updown_next_order(ord, *nord, ctx, &ord[*nord]) == 0)
		(*nord)++;
	if (!full && *nord <= 2)
		return updown_order_dfs(&ord[0], ctx, first_root(&ord[0], ctx->nsw));
	return 0;
}

/* dfsssp's alternates LID by LID, when the whole lot of them does not fit: the primary
 * routes first fit, path by path; each layer above theirs then goes to one up/down order
 * (ord[0] given, the others ranked from the switches farthest from the roots before). Each
 * free alternate LID (alt[d]) is laid whole among the primary routes' layers where one takes
 * it (of the layers no order holds); the others are routed again by the order that keeps
 * them apart best and laid whole in that order's layer, before anything else goes there (one
 * order's routes never close a cycle among themselves). Where the primary routes take every
 * layer, there is one order, ord[0], and its alternates go to any layer that takes them.
 * An alternate that gets no route by any order, or that its layer refuses all the same,
 * keeps sssp's routes, laid like the primary ones, or, where those fit no layer either, its
 * block's first LID's (which fit wherever that LID's do). Layers of their own for the
 * orders, not shared with the free alternates: on random graphs of 60 switches and 240
 * hosts the free ones took the 4 spare layers while fitting a quarter of the LIDs, and the
 * rest, on one order, left 64-67% of host pairs with an alternate apart; with the 4 layers
 * to 4 orders, 77-84% (minhop, without a rule, 78-84). g: empty, or holding the primary
 * routes where laid_used is not 0 (the layers they use). 0, or -1 with ctx->why. */
static int dfsssp_fit_by_lid(struct routing_ctx *ctx, struct sssp *st, bool *alt,
                             struct routing_alt_undo *undo, struct updown *ord, struct cdg *g,
                             unsigned laid_used)
{
	struct dep_log lg = {0};
	uint32_t ns = ctx->nsw, ndst = st->ndst, free_laid = 0, ud_laid = 0, kept = 0, copied = 0;
	const struct skip none = {0, 0};
	unsigned used = laid_used ? laid_used : 1, nord = 1;
	int rc = -1, r = -2;
	bool *back = calloc(ndst + 1, sizeof(bool)), *ud = calloc(ndst + 1, sizeof(bool));
	bool *lids = calloc((size_t)ctx->max_lid + 1, sizeof(bool));
	uint8_t *chosen = calloc(ndst + 1, 1);
	if (back && ud && lids && chosen)
		r = 0;
	/* the primary routes, and the later LIDs that kept sssp's (apart already, or without a
	 * tree of their own): those take their first LID's where their own fit no layer (laid
	 * already where laid_used says: all of them fit) */
	for (uint32_t t = 0; t < ns && r == 0 && !laid_used; t++)
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1] && r == 0; d++)
			if (!alt[d])
				r = lay_or_follow(ctx, st, g, t, d, &used, "shortest paths", &lg,
				                  undo, &copied);
	if (r != 0) {
		if (r == -2)
			why_oom(ctx, st->name);
		goto out;
	}
	/* order o's layer: reserved + o; none where the primary routes took them all */
	bool full = used >= st->budget;
	unsigned reserved = used;
	if (alt_orders(ctx, st, ord, full, reserved, &nord) < 0) {
		why_oom(ctx, st->name);
		goto out;
	}
	struct skip orders = {reserved, full ? 0 : nord};
	int64_t laid = lay_free_alternates(ctx, st, g, alt, back, orders, &used, &lg, undo, lids);
	if (laid < 0) {
		why_oom(ctx, st->name);
		goto out;
	}
	free_laid = (uint32_t)laid;
	struct routing_alt_rules rules[UD_ORDERS];
	for (unsigned o = 0; o < nord; o++)
		rules[o] = (struct routing_alt_rules){updown_alt_step, &ord[o], UD_DOWN};
	struct routing_alt_choice choice = {.rules = rules, .nrules = nord, .chosen = chosen};
	if (routing_lmc_alternates_choice(ctx, &choice, undo, ud, back) < 0)
		goto out;
	/* every order's alternates in its layer first, then sssp's routes for those that got
	 * none or that it refused, path by path wherever they fit (lay_paths may take any
	 * layer: after the orders', it cannot refuse them theirs), or else the first LID's */
	for (int pass = 0; pass < 2 && r == 0; pass++) {
		if (pass == 1) /* those refused in pass 0 go back to sssp's routes */
			revert_marked(ctx, undo, lids);
		for (uint32_t t = 0; t < ns && r == 0; t++)
			for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1] && r == 0;
			     d++) {
				if (!back[d] || ud[d] == (pass == 1))
					continue;
				if (pass == 1) {
					kept++;
					r = lay_or_follow(ctx, st, g, t, d, &used,
					                  "LMC LIDs kept on sssp's routes", &lg,
					                  undo, &copied);
					continue;
				}
				/* where the primary routes took every layer, path by path in
				 * any; else whole in the order's layer */
				unsigned l = reserved + chosen[d];
				int ok;
				if (full) {
					ok = lay_paths(ctx, st, g, t, d, none, &used, NULL, &lg);
					ok = ok == 0 ? 1 : ok == 1 ? 0 : ok;
				} else {
					ok = lay_alt_lid(ctx, st, g, t, d, l, &lg);
				}
				if (ok == -2) {
					why_oom(ctx, st->name);
					goto out;
				}
				if (ok == 1) {
					alt[d] = true;
					back[d] = false;
					ud_laid++;
					if (!full && l + 1 > used)
						used = l + 1;
					continue;
				}
				lids[ctx->dst[d].lid] = true;
				ud[d] = false; /* sssp's routes again: the second pass lays them */
			}
	}
	if (r != 0) {
		if (r == -2)
			why_oom(ctx, st->name);
		goto out;
	}
	st->nlayers = (uint8_t)used;
	if (full)
		log_notice(ctx->log, "routing",
		           "%s: the shortest paths take all %u virtual layers; LMC alternates "
		           "laid LID by LID among them: %u routed freely, %u by the up/down order, "
		           "%u kept the shortest routes, %u of those their first LID's",
		           st->name, st->budget, free_laid, ud_laid, kept, copied);
	else
		log_notice(ctx->log, "routing",
		           "%s: %u virtual layer(s) of %u; LMC alternates laid LID by LID: %u "
		           "routed freely, %u by %u up/down order(s) (layers %u to %u), %u kept "
		           "the shortest routes, %u of those their first LID's",
		           st->name, st->nlayers, st->budget, free_laid, ud_laid, nord, reserved,
		           reserved + nord - 1, kept, copied);
	rc = 0;
out:
	free(lg.v);
	free(back);
	free(ud);
	free(lids);
	free(chosen);
	return rc;
}

/* The primary routes (alt[d] false) laid again in a fresh graph, those layering prev put in
 * its top layer (of top) first, then the next one's, down: the paths that found room only
 * high up get the low layers first (an iterated greedy; first fit's number of layers
 * depends on the order it meets the paths in). 0 with the layers in *g2 and *used; 1 when
 * they fit no layers that way; -2 out of memory. st->layer is overwritten for them either
 * way. */
static int fit_hardest_first(struct routing_ctx *ctx, struct sssp *st, struct cdg *g2,
                             const bool *alt, const uint8_t *prev, unsigned top, unsigned *used)
{
	uint64_t tried = 0;
	*used = 1;
	if (cdg_init(g2, ctx) < 0)
		return -2;
	for (unsigned l = top; l-- > 0;) {
		int r = fit_some(ctx, st, g2, alt, false, 0, used, &tried, NULL, prev, l);
		if (r != 0)
			return r;
	}
	return 0;
}

#define RELAY_TRIES 3
/* At LMC > 0, where the primary routes leave the alternates' up/down orders one layer or
 * none (each order needs a layer of its own; with none, its routes go path by path into
 * what the primary routes' layers take), the primary routes laid again hardest first while
 * that takes fewer layers, up to RELAY_TRIES times. On fabricsim's 200-switch random
 * graphs with 8 VLs: seed 1 8 -> 7 -> 6 layers, 27% -> 78% of host pairs with an
 * alternate apart (90% of those no bridge parts); seed 2 7 -> 6, 66% -> 78% (95%); seed 5
 * stays at 7 (one try more, 0.4 s). 0 (g and *used the best found, st->layer as they
 * say); -2 out of memory. */
static int relay_primaries(struct routing_ctx *ctx, struct sssp *st, struct cdg *g, const bool *alt,
                           unsigned *used)
{
	size_t n = (size_t)st->nsrc * st->ndst;
	uint8_t *best = malloc(n + 1);
	if (!best)
		return -2;
	memcpy(best, st->layer, n);
	int rc = 0;
	for (unsigned k = 0; k < RELAY_TRIES; k++) {
		/* two layers or more left to the orders; or one layer, which cannot become none */
		if (*used + 1 < st->budget || *used <= 1)
			break;
		struct cdg g2;
		unsigned u = 0;
		int r = fit_hardest_first(ctx, st, &g2, alt, best, *used, &u);
		if (r == 0 && u < *used) {
			cdg_free(g);
			*g = g2;
			*used = u;
			memcpy(best, st->layer, n);
			continue;
		}
		cdg_free(&g2);
		memcpy(st->layer, best, n); /* no fewer: the layering before */
		rc = r == -2 ? -2 : 0;
		break;
	}
	free(best);
	return rc;
}

/* dfsssp at LMC > 0: the alternates routed freely in layers above the primary routes', or
 * among them, where the whole lot fits; else LID by LID (dfsssp_fit_by_lid); if even that
 * fails (the primary routes and the LIDs that kept sssp's fit no layers), every alternate by
 * one up/down order, laid like the first; failing all, each later LID takes its block's
 * first LID's routes. */
static int dfsssp_layers_lmc(struct routing_ctx *ctx, struct sssp *st)
{
	uint32_t ns = ctx->nsw, nroots = 0;
	struct routing_alt_undo undo = {0};
	bool *alt = calloc(st->ndst + 1, sizeof(bool));
	uint32_t *roots = malloc(sizeof(uint32_t) * (ns + 1));
	bool *leaf = malloc(ns + 1);
	struct updown ord[UD_ORDERS] = {0};
	struct cdg g = {0}; /* cdg_free takes it unset */
	struct dep_log lg = {0};
	unsigned used = 1;
	uint64_t tried = 0;
	int rc = -1;
	if (!alt || !roots || !leaf) {
		why_oom(ctx, st->name);
		goto out;
	}
	if (routing_lmc_alternates(ctx, NULL, &undo, alt) < 0)
		goto out;
	if (!undo.changes.n) {
		rc = dfsssp_first_fit(ctx, st, NULL, false);
		goto out;
	}
	/* the primary routes once: each try of the alternates starts from them and is taken
	 * back from its log (laying them again for each took half of dfsssp's routing time
	 * on a 200-switch graph) */
	int r =
	    cdg_init(&g, ctx) < 0 ? -2 : fit_all(ctx, st, &g, alt, false, 0, &used, &tried, NULL);
	for (int above = 1; r == 0 && above >= 0; above--) {
		unsigned u = used;
		uint64_t n = tried;
		int a = fit_all(ctx, st, &g, alt, true, above ? used : 0, &u, &n, &lg);
		if (a == 0) { /* the whole lot fits: first fit, as without the log */
			st->nlayers = (uint8_t)u;
			log_first_fit(ctx, st, n, above);
			rc = 0;
			goto out;
		}
		unlog(&g, &lg, 0);
		if (a == -2)
			r = -2;
	}
	if (r == 0)
		r = relay_primaries(ctx, st, &g, alt, &used);
	if (r == 1) { /* the primary routes fit no layers: LID by LID lays them anew */
		cdg_free(&g);
		used = 0;
		r = cdg_init(&g, ctx) < 0 ? -2 : 0;
	}
	if (r == -2) {
		why_oom(ctx, st->name);
		goto out;
	}
	routing_host_switches(ctx, leaf);
	if (routing_detect_roots(ctx, leaf, roots, &nroots) < 0 ||
	    updown_init(&ord[0], ctx, roots, nroots, false) < 0) {
		why_oom(ctx, st->name);
		goto out;
	}
	/* LID by LID: each free alternate where a layer takes it, the others up/down */
	if (dfsssp_fit_by_lid(ctx, st, alt, &undo, ord, &g, used) == 0) {
		rc = 0;
		goto out;
	}
	log_notice(ctx->log, "routing", "%s: the alternates go by the up/down rule instead",
	           ctx->why);
	cdg_free(&g); /* the tries below build their own */
	routing_lmc_revert(ctx, &undo);
	memset(alt, 0, st->ndst * sizeof(bool));
	{
		struct routing_alt_rules rules = {updown_alt_step, &ord[0], UD_DOWN};
		if (routing_lmc_alternates(ctx, &rules, &undo, alt) < 0)
			goto out;
		/* above the primary routes' layers, else among them where they fit (the
		 * primary routes may have taken every VL) */
		if (dfsssp_first_fit(ctx, st, alt, true) == 0 ||
		    dfsssp_first_fit(ctx, st, alt, false) == 0) {
			rc = 0;
			goto out;
		}
		routing_lmc_revert(ctx, &undo);
	}
	/* last: every later LID on its block's first LID's routes, laid after all the others
	 * (each then fits where its first LID's paths do: these fit wherever LMC 0 does) */
	log_warn(ctx->log, "routing",
	         "%s: no room for the LMC alternates (%s): the later LIDs of each port follow "
	         "its first LID's routes, which share every link with them",
	         st->name, ctx->why);
	memset(alt, 0, st->ndst * sizeof(bool));
	for (uint32_t t = 0; t < ns; t++)
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1]; d++)
			if (routing_lmc_index(ctx, t, d) > 0) {
				if (routing_lmc_follow_first(ctx, NULL, t, d) < 0) {
					why_oom(ctx, st->name);
					goto out;
				}
				alt[d] = true;
			}
	rc = dfsssp_first_fit(ctx, st, alt, false);
out:
	cdg_free(&g);
	free(lg.v);
	for (unsigned o = 0; o < UD_ORDERS; o++)
		updown_free(&ord[o]);
	vec_free(&undo.changes);
	free(alt);
	free(roots);
	free(leaf);
	return rc;
}

/* ---- the engines ---- */

static void sssp_free(void *state)
{
	struct sssp *st = state;
	if (!st)
		return;
	free(st->src_of_sw);
	free(st->layer);
	free(st->lid_src);
	free(st->lid_dst);
	free(st);
}

static int setup(struct routing_ctx *ctx, void **state, bool layered, const char *engine)
{
	struct sssp *st = calloc(1, sizeof(*st));
	if (!st) {
		why_oom(ctx, engine);
		return -1;
	}
	*state = st;
	st->name = engine;
	st->layered = layered;
	st->nlayers = 1;
	st->budget = (uint8_t)routing_link_vls(ctx);
	if (ctx->cfg && ctx->cfg->routing_max_vls && ctx->cfg->routing_max_vls < st->budget)
		st->budget = ctx->cfg->routing_max_vls;
	if (!st->budget)
		st->budget = 1;
	return 0;
}

static int sssp_setup(struct routing_ctx *ctx, void **state)
{
	return setup(ctx, state, false, "sssp");
}

static int dfsssp_setup(struct routing_ctx *ctx, void **state)
{
	return setup(ctx, state, true, "dfsssp");
}

static int lash_setup(struct routing_ctx *ctx, void **state)
{
	return setup(ctx, state, true, "lash");
}

/* Sources and destinations by LID, for path_sl. */
static int index_lids(const struct routing_ctx *ctx, struct sssp *st)
{
	uint32_t ns = ctx->nsw;
	st->ndst = ctx->dst_start[ns];
	st->nlids = (uint32_t)ctx->max_lid + 1;
	st->src_of_sw = malloc(sizeof(uint32_t) * (ns + 1));
	st->lid_src = malloc(sizeof(uint32_t) * st->nlids);
	st->lid_dst = malloc(sizeof(uint32_t) * st->nlids);
	if (!st->src_of_sw || !st->lid_src || !st->lid_dst)
		return -1;
	for (uint32_t l = 0; l < st->nlids; l++)
		st->lid_src[l] = st->lid_dst[l] = NONE;
	for (uint32_t s = 0; s < ns; s++) {
		st->src_of_sw[s] = NONE;
		for (uint32_t d = ctx->dst_start[s]; d < ctx->dst_start[s + 1]; d++)
			if (ctx->dst[d].port && st->src_of_sw[s] == NONE)
				st->src_of_sw[s] = st->nsrc++;
		for (uint32_t d = ctx->dst_start[s]; d < ctx->dst_start[s + 1]; d++) {
			st->lid_dst[ctx->dst[d].lid] = d;
			st->lid_src[ctx->dst[d].lid] = st->src_of_sw[s];
		}
	}
	st->layer = calloc((size_t)st->nsrc * st->ndst + 1, 1);
	return st->layer ? 0 : -1;
}

static int sssp_unicast(struct routing_ctx *ctx, void *state)
{
	struct sssp *st = state;
	const char *engine = st->name;
	struct chans c = {0};
	int rc = -1;
	if (chans_build(ctx, &c) < 0 || (st->layered && index_lids(ctx, st) < 0)) {
		why_oom(ctx, engine);
		goto out;
	}
	if (sssp_route(ctx, &c, engine) < 0)
		goto out;
	/* LMC alternates before the layering, which then covers them */
	if (st->layered)
		rc = dfsssp_layers_lmc(ctx, st);
	else
		rc = routing_lmc_alternates(ctx, NULL, NULL, NULL);
out:
	chans_free(&c);
	return rc;
}

/* lash: minhop's shortest paths (balanced over equal ports, where OpenSM's LASH takes one
 * path per pair of switches) on the same virtual layers as dfsssp's. */
static int lash_unicast(struct routing_ctx *ctx, void *state)
{
	struct sssp *st = state;
	if (index_lids(ctx, st) < 0) {
		why_oom(ctx, st->name);
		return -1;
	}
	if (routing_minhop_routes(ctx, false) < 0) /* OpenSM's lash weighs every hop the same */
		return -1;
	return dfsssp_layers_lmc(ctx, st);
}

static uint8_t dfsssp_path_sl(const struct routing_ctx *ctx, void *state, uint16_t slid,
                              uint16_t dlid)
{
	(void)ctx;
	const struct sssp *st = state;
	if (!st || !st->layered || slid >= st->nlids || dlid >= st->nlids)
		return 0;
	uint32_t s = st->lid_src[slid], d = st->lid_dst[dlid];
	return s == NONE || d == NONE ? 0 : st->layer[(size_t)s * st->ndst + d];
}

static void dfsssp_sl2vl(const struct routing_ctx *ctx, void *state, uint32_t sw, uint8_t in,
                         uint8_t out, uint8_t vl_of_sl[16])
{
	(void)in;
	const struct sssp *st = state;
	routing_layer_sl2vl(ctx, sw, out, st ? st->nlayers : 1, vl_of_sl);
}

static unsigned dfsssp_layers_used(const void *state)
{
	const struct sssp *st = state;
	return st && st->nlayers ? st->nlayers : 1;
}

const struct routing_engine routing_sssp = {
    .name = "sssp",
    .summary = "shortest paths under global link weights (not deadlock free in general)",
    .setup = sssp_setup,
    .unicast = sssp_unicast,
    .teardown = sssp_free,
};

const struct routing_engine routing_dfsssp = {
    .name = "dfsssp",
    .summary = "sssp's paths spread over virtual layers (SL = VL) until each layer is free of "
               "credit loops",
    .setup = dfsssp_setup,
    .unicast = sssp_unicast,
    .path_sl = dfsssp_path_sl,
    .sl2vl = dfsssp_sl2vl,
    .sl2vl_by_vls = true,
    .layers = dfsssp_layers_used,
    .teardown = sssp_free,
};

const struct routing_engine routing_lash = {
    .name = "lash",
    .summary = "layered shortest paths: minhop's routes spread over virtual layers (SL = VL) "
               "until each layer is free of credit loops, as OpenSM's LASH",
    .setup = lash_setup,
    .unicast = lash_unicast,
    .path_sl = dfsssp_path_sl,
    .sl2vl = dfsssp_sl2vl,
    .sl2vl_by_vls = true,
    .layers = dfsssp_layers_used,
    .teardown = sssp_free,
};
