/* Alternate routes for the LIDs of an LMC block (APM): after an engine has routed every LID,
 * the LIDs of each CA port's block after the first are routed again so that, from every
 * switch, the path to LID 1 shares no switch-to-switch link with the path to LID 0 (and no
 * switch but the two ends where the graph allows), and each later LID keeps apart from one
 * of the LIDs before it: for a switch that has such a pair already, from the LID just
 * before; for one that has none yet, from any of them. A connection then holds a primary
 * and an alternate path that no single link failure takes down together; LID 0 keeps the
 * engine's route, the shortest.
 *
 * A switch's table cannot tell where a packet came from, so a LID's routes form a tree
 * towards the destination switch like any other LID's. It is grown from the destination
 * outwards, each switch joining by a neighbour already in the tree (which keeps it loop
 * free): of the switches with a way in, the one whose best way keeps it furthest apart joins
 * first (link-disjoint, then switch-disjoint, then fewest shared links), shorter before
 * longer, then the port it holds, then the least loaded. A switch with no way apart yet
 * waits, since a switch that joins later may give it one (a switch next to the destination
 * whose primary goes straight in must go round through a neighbour); when only such switches
 * are left, the least bad joins. A bounded local search follows: a switch moves to another
 * neighbour when that raises the score of the switches behind it (its route is their way
 * on), and on small fabrics a neighbour and the switch move together. Alternates are longer
 * than shortest where no disjoint shortest path exists. If the engine's own routes already
 * keep every host switch apart (fat trees), they stay. A host switch across a bridge from
 * the destination can have no alternate, and no effort goes to it.
 *
 * Whether a link lies on a switch's primary path is one comparison: the reference LID's
 * tree is numbered in preorder, and the link from x lies on v's path when v is in x's
 * subtree. Each way in is scored once, when the switch it enters by joins.
 *
 * Engines with a deadlock rule pass it as rules: each switch in the tree carries a state
 * (up/down's "descends all the way"), and a switch may take only a step the rule allows
 * from its neighbour's state, so every alternate is a route the engine could have chosen.
 * An engine with several rules (updn's orders, each on a VL of its own) lets each LID take
 * the one that leaves the fewest source switches without a pair apart (route_choice).
 * Engines that break credit loops with layers (dfsssp) run this before their layering, which
 * then covers the alternates too. If a host switch that routes LID 0 cannot join at all,
 * the LID keeps the engine's own routes. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "routing/engine.h"
#include "routing/parallel.h"
#include "routing/updown.h"
#include "routing/weighted.h"
#include "util/vec.h"

#define NONE         UINT32_MAX
#define ALT_MAX_HOPS 64

struct alt_score {
	bool link_ok, sw_ok;
	uint32_t overlap;
};

/* A reference LID's routes to the destination switch form a tree: each switch's link
 * towards it (its cable id, NONE without a route) and the tree's preorder numbering, so
 * that "is this link on switch v's path" is one comparison, not a walk. */
struct prim {
	struct prim_node {
		uint32_t tin, tout, cable; /* together: one cache line per switch on a walk */
	} * n;
};

/* A switch's table, and its ports' far ends, laid out for walking paths. */
struct alt_sw {
	const uint8_t *lft;
	uint32_t lft_size, port_base, nports;
};
struct alt_hop {
	uint32_t to, link; /* the neighbour switch (NONE: none), the cable's id */
};

struct alt {
	struct routing_ctx *ctx;
	const struct routing_alt_rules *rules;
	uint32_t ns;
	/* per switch port (port_base): the neighbour switch, and the link's id (the lower of
	 * the two topo port indexes) */
	uint32_t *peer, *link;
	/* the tree under construction: parent edge (index into adj), length, state */
	uint32_t *par;
	uint16_t *len;
	uint8_t *state;
	struct alt_sw *sw;   /* per switch */
	struct alt_hop *hop; /* per switch port (port_base) */
	/* the reference LIDs' trees (prim_build), and its scratch arrays */
	struct prim prim[8];
	uint32_t *pnext, *pkid, *psib, *porder, *pstack;
	/* the growth: each waiting switch's best way in, its score and key */
	uint32_t *best, *seen;
	struct alt_score *bscore;
	uint64_t *key;
	struct heap hp;
	uint32_t *kid, *sib, *stack; /* the tree's children lists, for the local search */
	bool *hosts;                 /* switches with CA ports: each must have an alternate */
	/* the block's LIDs before the one routed now: a switch's alternate should avoid one of
	 * them (all of them are tried for a switch without a disjoint pair among them yet;
	 * covered: it has one, and the LID just before is the one to pair with) */
	uint16_t ref[8];
	unsigned nref;
	bool *covered;
	uint32_t checked;      /* host switches engine_disjoint found apart */
	uint64_t work, budget; /* the local search's switch scorings, and their limit */
	bool moved;            /* it moved a switch: the growth's scores are stale */
	uint64_t probe_cap;    /* a probe's growth stops at this many short (0: no probe) */
	bool refs_ready;       /* refs_prepare() done for the LID routed now */
	/* the ports' loads (ctx->port_base) as this part of the work sees them: a copy of its
	 * own, as the parts run at once (route_part) */
	uint32_t *load;
	/* 2-edge-connected components of the switch graph: a switch in another component than
	 * the destination's crosses a bridge to it, and no alternate avoids that */
	uint32_t *comp;
	uint32_t *peer_edge;  /* per edge (index into adj): the same cable the other way */
	struct alt_hop *edge; /* per edge: its far end and cable, for walks (one load each) */
	struct alt_stats {
		uint32_t blocks; /* LID pairs (2i, 2i+1) of CA ports */
		uint32_t kept;   /* ... that kept the engine's routes: a host switch had no way */
		/* host switches x pairs: paths to 2i and 2i+1 sharing no link, no switch */
		uint64_t sources, link_disjoint, switch_disjoint;
		uint64_t possible; /* ... of the sources not across a bridge from the destination */
		uint64_t open;     /* ... that have no pair of the block's LIDs apart so far */
	} stats;
	struct routing_alt_undo *undo;
	/* a few LIDs' hops from every switch, laid out flat (col_get): engine_disjoint walks
	 * each host switch's two paths in them, not in the switches' tables, a cache line each */
	struct alt_col {
		uint16_t lid; /* 0: empty */
		struct alt_hop *hop;
	} col[3];
	unsigned col_next;
	uint32_t *stamp, epoch; /* per switch: on the path col_apart walks first */
};

/* Switch x's hop towards lid along its table, NULL where it has none. */
static inline const struct alt_hop *table_hop(const struct alt *a, uint32_t x, uint16_t lid)
{
	const struct alt_sw *s = &a->sw[x];
	uint8_t p = lid < s->lft_size ? s->lft[lid] : 0;
	if (!p || p > s->nports)
		return NULL;
	const struct alt_hop *hp = &a->hop[s->port_base + p];
	return hp->to == NONE ? NULL : hp;
}

static uint32_t next_hop(const struct alt *a, uint32_t s, uint16_t lid)
{
	const struct alt_hop *hp = table_hop(a, s, lid);
	return hp ? hp->to : NONE;
}

/* x on v's path (x == v included) in the reference tree */
static inline bool anc(const struct prim *p, uint32_t x, uint32_t v)
{
	return p->n[x].tin <= p->n[v].tin && p->n[v].tin < p->n[x].tout;
}

/* Number lid's tree towards t: preorder from t, a switch whose route loops or ends
 * elsewhere left out (tin NONE: it has no path). */
static void prim_build(struct alt *a, struct prim *p, uint32_t t, uint16_t lid)
{
	uint32_t ns = a->ns, *par = a->pnext, *kid = a->pkid, *sib = a->psib, *order = a->porder;
	for (uint32_t v = 0; v < ns; v++) {
		kid[v] = NONE;
		p->n[v].tin = p->n[v].tout = NONE;
		p->n[v].cable = NONE;
	}
	for (uint32_t v = 0; v < ns; v++) {
		par[v] = v == t ? NONE : next_hop(a, v, lid);
		if (par[v] == NONE)
			continue;
		p->n[v].cable = a->link[a->ctx->port_base[v] + a->ctx->t->sws[v].lft[lid]];
		sib[v] = kid[par[v]];
		kid[par[v]] = v;
	}
	uint32_t n = 0, sp = 0;
	a->pstack[sp++] = t;
	while (sp) {
		uint32_t x = a->pstack[--sp];
		p->n[x].tin = n;
		order[n++] = x;
		for (uint32_t c = kid[x]; c != NONE; c = sib[c])
			a->pstack[sp++] = c;
	}
	/* subtree sizes, children before parents, then each subtree's end */
	for (uint32_t i = 0; i < n; i++)
		p->n[order[i]].tout = 1;
	for (uint32_t i = n; i-- > 1;)
		p->n[par[order[i]]].tout += p->n[order[i]].tout;
	for (uint32_t i = 0; i < n; i++)
		p->n[order[i]].tout += p->n[order[i]].tin;
}

/* How v's walk (first edge e, then the tree under construction from e's far end) meets v's
 * path in reference tree r. false: v has no path there. */
static bool score_ref(const struct alt *a, unsigned r, uint32_t v, uint32_t e, uint32_t t,
                      struct alt_score *sc, uint32_t *hops)
{
	const struct prim *p = &a->prim[r];
	if (p->n[v].tin == NONE)
		return false;
	*sc = (struct alt_score){true, true, 0};
	uint32_t x = v, edge = e;
	for (unsigned h = 0; h < ALT_MAX_HOPS; h++) {
		uint32_t y = a->edge[edge].to, c = a->edge[edge].link;
		if ((p->n[x].cable == c && anc(p, x, v)) || (p->n[y].cable == c && anc(p, y, v))) {
			sc->link_ok = false;
			sc->overlap++;
		}
		if (y == t) {
			*hops = h + 1;
			return true;
		}
		if (p->n[y].tin < p->n[v].tin && p->n[v].tin < p->n[y].tout)
			sc->sw_ok = false;
		x = y;
		edge = a->par[x];
	}
	sc->link_ok = sc->sw_ok = false;
	return true;
}

static bool score_better(struct alt_score s, struct alt_score b)
{
	if (s.link_ok != b.link_ok)
		return s.link_ok;
	if (s.sw_ok != b.sw_ok)
		return s.sw_ok;
	return s.overlap < b.overlap;
}

/* score_ref() against the LIDs v's alternate should avoid one of: the best. hops: the
 * walk's length, ALT_MAX_HOPS where no reference LID has a path from v. */
static struct alt_score score_v(struct alt *a, uint32_t v, uint32_t e, uint32_t t, uint32_t *hops)
{
	struct alt_score best = {false, false, UINT32_MAX}, s;
	bool all = a->nref > 1 && !a->covered[v];
	*hops = ALT_MAX_HOPS;
	for (unsigned i = all ? 0 : a->nref - 1; i < a->nref; i++)
		if (score_ref(a, i, v, e, t, &s, hops) && score_better(s, best))
			best = s;
	return best;
}

/* May v join the tree by edge e, and in which state? -1: the rules say no. */
static int join_state(const struct alt *a, uint32_t v, uint32_t e)
{
	uint32_t w = a->ctx->adj[e].to;
	if (!a->rules || !a->rules->step)
		return 0;
	return a->rules->step(a->rules->arg, v, w, a->state[w]);
}

/* Better: link-disjoint, switch-disjoint, fewer overlaps, shorter, the port held, less load. */
static bool better(const struct alt *a, uint32_t v, uint16_t lid, struct alt_score s, uint32_t e,
                   struct alt_score bs, uint32_t be)
{
	const struct routing_ctx *ctx = a->ctx;
	if (be == NONE)
		return true;
	if (s.link_ok != bs.link_ok || s.sw_ok != bs.sw_ok || s.overlap != bs.overlap)
		return score_better(s, bs);
	uint16_t l = a->len[ctx->adj[e].to], bl = a->len[ctx->adj[be].to];
	if (l != bl)
		return l < bl;
	uint8_t held = ctx->t->sws[v].lft[lid];
	if ((ctx->adj[e].port == held) != (ctx->adj[be].port == held))
		return ctx->adj[e].port == held;
	const uint32_t *load = a->load + ctx->port_base[v];
	return load[ctx->adj[e].port] < load[ctx->adj[be].port];
}

/* The heap's order for a way in: apart by link, by switch, fewer shared links, shorter. */
static uint64_t way_key(struct alt_score s, uint16_t len)
{
	uint64_t ov = s.overlap < 0xfffff ? s.overlap : 0xfffff;
	return (uint64_t)!s.link_ok << 62 | (uint64_t)!s.sw_ok << 61 | ov << 32 | len;
}

/* The switches next to w, not in the tree, that may join through it: score that way in
 * and keep it when it is the best each has seen. */
static void offer(struct alt *a, uint32_t w, uint32_t t, uint16_t lid1)
{
	const struct routing_ctx *ctx = a->ctx;
	for (uint32_t e = ctx->adj_start[w]; e < ctx->adj_start[w + 1]; e++) {
		uint32_t u = ctx->adj[e].to, eu = a->peer_edge[e];
		if (u == t || a->par[u] != NONE || !a->seen[u] || eu == NONE)
			continue;
		if (join_state(a, u, eu) < 0)
			continue;
		uint32_t hops;
		struct alt_score s = score_v(a, u, eu, t, &hops);
		if (!better(a, u, lid1, s, eu, a->bscore[u], a->best[u]))
			continue;
		a->best[u] = eu;
		a->bscore[u] = s;
		a->key[u] = way_key(s, (uint16_t)(a->len[w] + 1));
		heap_push_or_lower(&a->hp, u);
	}
}

/* Grow the tree from t: of the switches with a way in, the one whose best way keeps it
 * furthest apart joins first, shorter before longer among equals. A switch that finds no
 * way apart waits, as a switch joining later may give it one; when only such switches are
 * left, the least bad joins, and may open ways for the rest. Each way in is scored once,
 * when the switch it enters by joins (its path in the tree never changes after). */
static void grow(struct alt *a, uint32_t t, uint16_t lid1)
{
	for (uint32_t v = 0; v < a->ns; v++) {
		a->best[v] = NONE;
		a->hp.pos[v] = NONE;
	}
	a->hp.n = 0;
	offer(a, t, t, lid1);
	uint64_t open = 0;
	while (a->hp.n) {
		uint32_t v = heap_pop(&a->hp), e = a->best[v];
		/* a probe (route_choice) that has lost already: no switch's score changes
		 * after it joins, so the host switches short of a pair only add up */
		if (a->probe_cap && a->seen[v] && a->hosts[v] && a->comp[v] == a->comp[t] &&
		    !a->covered[v] && !a->bscore[v].link_ok && ++open >= a->probe_cap)
			return;
		a->par[v] = e;
		a->len[v] = (uint16_t)(a->len[a->ctx->adj[e].to] + 1);
		a->state[v] = (uint8_t)join_state(a, v, e);
		offer(a, v, t, lid1);
	}
}

/* ---- local search: a switch moves into the tree elsewhere when that helps ----
 * The growth decides each switch's way in by its own paths alone, but its route is also the
 * way on for every switch behind it: a switch next to the destination goes straight in, and
 * a neighbour that needed it as a detour has none. A move re-parents one switch, which
 * changes the alternates of the switches behind it (its subtree) and no others; it is taken
 * when their sum of scores rises. */
#define SCORE_LINK   1000
#define SCORE_SWITCH 100

/* A host switch's score: link-disjoint, then switch-disjoint too, then the fewer hops. */
static int32_t vscore(struct alt *a, uint32_t u, uint32_t t, uint16_t lid0)
{
	if (!a->hosts[u] || next_hop(a, u, lid0) == NONE)
		return 0;
	uint32_t hops;
	struct alt_score sc = score_v(a, u, a->par[u], t, &hops);
	if (hops >= ALT_MAX_HOPS) { /* no reference walk reached t: count the hops apart */
		hops = 0;
		for (uint32_t x = u; x != t && hops < ALT_MAX_HOPS; hops++)
			x = a->ctx->adj[a->par[x]].to;
	}
	return (sc.link_ok ? SCORE_LINK : 0) + (sc.link_ok && sc.sw_ok ? SCORE_SWITCH : 0) -
	       (int32_t)hops;
}

/* The scores of v and every switch whose alternate passes v. */
static int64_t subtree_score(struct alt *a, uint32_t v, uint32_t t, uint16_t lid0)
{
	int64_t sum = 0;
	uint32_t n = 0;
	a->stack[n++] = v;
	while (n) {
		uint32_t x = a->stack[--n];
		sum += vscore(a, x, t, lid0);
		a->work++;
		for (uint32_t c = a->kid[x]; c != NONE; c = a->sib[c])
			a->stack[n++] = c;
	}
	return sum;
}

static void kid_unlink(struct alt *a, uint32_t w, uint32_t v)
{
	uint32_t *at = &a->kid[w];
	while (*at != NONE && *at != v)
		at = &a->sib[*at];
	if (*at == v)
		*at = a->sib[v];
}

/* May v take edge e: w in the tree, not behind v, the rule allows it, and every switch that
 * steps onto v keeps its state. v's state then, or -1. */
static int move_state(struct alt *a, uint32_t v, uint32_t e, uint32_t t)
{
	uint32_t w = a->ctx->adj[e].to;
	if (e == a->par[v] || (w != t && a->par[w] == NONE))
		return -1;
	for (uint32_t x = w, h = 0; x != t; h++) {
		if (x == v || h >= ALT_MAX_HOPS)
			return -1; /* a loop */
		x = a->ctx->adj[a->par[x]].to;
	}
	int st = join_state(a, v, e);
	if (st < 0 || !a->rules)
		return st;
	for (uint32_t c = a->kid[v]; c != NONE; c = a->sib[c])
		if (a->rules->step(a->rules->arg, c, v, (uint8_t)st) != a->state[c])
			return -1;
	return st;
}

static void move(struct alt *a, uint32_t v, uint32_t e, uint8_t st)
{
	a->moved = true;
	kid_unlink(a, a->ctx->adj[a->par[v]].to, v);
	a->par[v] = e;
	a->state[v] = st;
	uint32_t w = a->ctx->adj[e].to;
	a->sib[v] = a->kid[w];
	a->kid[w] = v;
}

static bool improve_one(struct alt *a, uint32_t v, uint32_t t, uint16_t lid0)
{
	const struct routing_ctx *ctx = a->ctx;
	uint32_t old = a->par[v], best = NONE;
	int64_t base = subtree_score(a, v, t, lid0), top = base;
	int best_st = 0;
	for (uint32_t e = ctx->adj_start[v]; e < ctx->adj_start[v + 1]; e++) {
		int st = move_state(a, v, e, t);
		if (st < 0)
			continue;
		a->par[v] = e;
		int64_t sc = subtree_score(a, v, t, lid0);
		a->par[v] = old;
		if (sc > top) {
			top = sc;
			best = e;
			best_st = st;
		}
	}
	if (best == NONE)
		return false;
	move(a, v, best, (uint8_t)best_st);
	return true;
}

static int64_t total_score(struct alt *a, uint32_t t, uint16_t lid0)
{
	int64_t sum = 0;
	for (uint32_t v = 0; v < a->ns; v++)
		if (a->par[v] != NONE && a->hosts[v])
			sum += vscore(a, v, t, lid0);
	return sum;
}

/* Two moves at once, for a host switch without a disjoint alternate: a neighbour w moves
 * first (out of the way of v's primary path), then v moves onto w. Neither move alone may
 * help: w's detour costs w, and v cannot use w before it. */
static bool improve_pair(struct alt *a, uint32_t v, uint32_t t, uint16_t lid0)
{
	const struct routing_ctx *ctx = a->ctx;
	int64_t base = total_score(a, t, lid0);
	for (uint32_t ev = ctx->adj_start[v]; ev < ctx->adj_start[v + 1]; ev++) {
		uint32_t w = ctx->adj[ev].to;
		if (w == t || a->par[w] == NONE)
			continue;
		for (uint32_t ew = ctx->adj_start[w]; ew < ctx->adj_start[w + 1]; ew++) {
			int sw = move_state(a, w, ew, t);
			if (sw < 0)
				continue;
			uint32_t oldw = a->par[w], oldv = a->par[v];
			uint8_t oldsw = a->state[w], oldsv = a->state[v];
			move(a, w, ew, (uint8_t)sw);
			int sv = move_state(a, v, ev, t);
			if (sv >= 0) {
				move(a, v, ev, (uint8_t)sv);
				if (total_score(a, t, lid0) > base)
					return true;
				move(a, v, oldv, oldsv);
			}
			move(a, w, oldw, oldsw);
		}
	}
	return false;
}

/* Is host switch v (in the tree) short of a link- and switch-disjoint alternate? While
 * nothing has moved, its score from the growth says (its way in as it joined, the path on
 * unchanged since, as vscore() would find it); after a move, scored again. */
static bool short_now(struct alt *a, uint32_t v, uint32_t t, uint16_t lid0)
{
	if (!a->moved)
		return next_hop(a, v, lid0) == NONE || !a->bscore[v].link_ok || !a->bscore[v].sw_ok;
	return vscore(a, v, t, lid0) < SCORE_LINK + SCORE_SWITCH - ALT_MAX_HOPS;
}

#define ALT_PASSES 3
/* switch scorings the local search may spend on one LID, per switch: most of its gain at a
 * fraction of its cost (the growth leaves it little to find) */
#define ALT_SEARCH_WORK 8
/* switches up to which pairs of moves are tried */
#define ALT_PAIR_MAX 64

static void improve(struct alt *a, uint32_t t, uint16_t lid0)
{
	bool short_of = false;
	for (uint32_t v = 0; v < a->ns && !short_of; v++)
		short_of = a->par[v] != NONE && a->comp[v] == a->comp[t] && a->hosts[v] &&
		           short_now(a, v, t, lid0);
	if (!short_of)
		return; /* every host switch has its disjoint alternate already (fat trees) */
	for (uint32_t v = 0; v <= a->ns; v++)
		a->kid[v] = a->sib[v] = NONE;
	for (uint32_t v = 0; v < a->ns; v++)
		if (a->par[v] != NONE) {
			uint32_t w = a->ctx->adj[a->par[v]].to;
			a->sib[v] = a->kid[w];
			a->kid[w] = v;
		}
	for (unsigned pass = 0; pass < ALT_PASSES; pass++) {
		/* a move helps only the switches behind the one moved: try only the switches
		 * with a host switch short of its alternate behind them (or themselves) */
		for (uint32_t v = 0; v < a->ns; v++)
			a->seen[v] = 0;
		for (uint32_t v = 0; v < a->ns; v++) {
			/* a host switch across a bridge from t can have none: not worth a move */
			if (a->par[v] == NONE || !a->hosts[v] || a->comp[v] != a->comp[t] ||
			    !short_now(a, v, t, lid0))
				continue;
			for (uint32_t x = v, h = 0; x != t && a->seen[x] != 2 && h < ALT_MAX_HOPS;
			     h++) {
				a->seen[x] = 2;
				x = a->ctx->adj[a->par[x]].to;
			}
		}
		bool moved = false;
		for (uint32_t v = 0; v < a->ns && a->work < a->budget; v++)
			if (a->par[v] != NONE && a->seen[v] == 2)
				moved |= improve_one(a, v, t, lid0);
		if (a->work >= a->budget)
			break;
		if (moved)
			continue;
		/* stuck: pairs of moves, for the host switches still short of a link-disjoint
		 * alternate (small fabrics only: each try scores the whole tree) */
		if (a->ns > ALT_PAIR_MAX)
			break;
		for (uint32_t v = 0; v < a->ns; v++)
			if (a->par[v] != NONE && a->hosts[v] &&
			    vscore(a, v, t, lid0) < SCORE_LINK / 2)
				moved |= improve_pair(a, v, t, lid0);
		if (!moved)
			break;
	}
}

/* Does the path to lid along the tables avoid the links (sw: and the switches) of v's path
 * in reference tree r? */
static bool lft_apart(struct alt *a, unsigned r, uint32_t v, uint32_t t, uint16_t lid, bool *sw)
{
	const struct prim *p = &a->prim[r];
	*sw = false;
	if (p->n[v].tin == NONE)
		return false;
	bool sw_ok = true;
	uint32_t x = v;
	for (unsigned h = 0; x != t; h++) {
		uint32_t y = next_hop(a, x, lid);
		if (y == NONE || h >= ALT_MAX_HOPS)
			return false;
		uint32_t c = a->link[a->ctx->port_base[x] + a->ctx->t->sws[x].lft[lid]];
		if ((p->n[x].cable == c && anc(p, x, v)) || (p->n[y].cable == c && anc(p, y, v)))
			return false;
		sw_ok &= y == t || !(p->n[y].tin < p->n[v].tin && p->n[v].tin < p->n[y].tout);
		x = y;
	}
	*sw = sw_ok;
	return true;
}

/* The same against the LIDs v's alternate should avoid one of (the best). */
static bool lft_apart_v(struct alt *a, uint32_t v, uint32_t t, uint16_t lid, bool *sw)
{
	bool all = a->nref > 1 && !a->covered[v], link = false;
	*sw = false;
	for (unsigned i = all ? 0 : a->nref - 1; i < a->nref && !*sw; i++) {
		bool s;
		if (lft_apart(a, i, v, t, lid, &s)) {
			link = true;
			*sw |= s;
		}
	}
	return link;
}

/* Does lid's path from v avoid the links (sw: and the switches) of ref's path from v? Both
 * along the tables, for a single switch's question (prim_build numbers a whole tree, worth
 * it only for the growth's many questions). Paths are short: the ref path's links and
 * switches go in a small list, searched linearly. */
static bool path_apart(struct alt *a, uint32_t v, uint32_t t, uint16_t ref, uint16_t lid, bool *sw)
{
	uint32_t links[ALT_MAX_HOPS], sws[ALT_MAX_HOPS], n = 0;
	*sw = false;
	for (uint32_t x = v; x != t; n++) {
		const struct alt_hop *hp = n < ALT_MAX_HOPS ? table_hop(a, x, ref) : NULL;
		if (!hp)
			return false;
		links[n] = hp->link;
		sws[n] = hp->to;
		x = hp->to;
	}
	bool sw_ok = true;
	for (uint32_t x = v, h = 0; x != t; h++) {
		const struct alt_hop *hp = h < ALT_MAX_HOPS ? table_hop(a, x, lid) : NULL;
		if (!hp)
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (links[i] == hp->link)
				return false;
		/* the last of sws is t, which both paths share */
		for (uint32_t i = 0; i + 1 < n && hp->to != t; i++)
			sw_ok &= sws[i] != hp->to;
		x = hp->to;
	}
	*sw = sw_ok;
	return true;
}

/* lid's hop from every switch (to NONE where it has none), from the cache or read now into
 * a slot that does not hold keep (a column the caller still uses). */
static const struct alt_hop *col_get(struct alt *a, uint16_t lid, uint16_t keep)
{
	for (unsigned i = 0; i < 3; i++)
		if (a->col[i].lid == lid)
			return a->col[i].hop;
	if (keep && a->col[a->col_next].lid == keep)
		a->col_next = (a->col_next + 1) % 3;
	struct alt_col *c = &a->col[a->col_next];
	a->col_next = (a->col_next + 1) % 3;
	for (uint32_t x = 0; x < a->ns; x++) {
		const struct alt_hop *hp = table_hop(a, x, lid);
		c->hop[x] = hp ? *hp : (struct alt_hop){NONE, NONE};
	}
	c->lid = lid;
	return c->hop;
}

/* lid's routes changed: its column, if cached, is stale. */
static void col_forget(struct alt *a, uint16_t lid)
{
	for (unsigned i = 0; i < 3; i++)
		if (a->col[i].lid == lid)
			a->col[i].lid = 0;
}

/* Do v's paths along two columns (col_get) share no switch but v and t? Then they share no
 * link either (a link both used would join two switches both pass), unless both go
 * straight to t by the same cable. The ref path's switches are stamped, so each question
 * is a walk along each path, not a comparison of every hop with every other. */
static bool col_apart(struct alt *a, uint32_t v, uint32_t t, const struct alt_hop *ref,
                      const struct alt_hop *lid)
{
	if (!++a->epoch) { /* wrapped: no stale stamp may match */
		memset(a->stamp, 0, sizeof(uint32_t) * a->ns);
		a->epoch = 1;
	}
	if (ref[v].to == NONE || lid[v].to == NONE)
		return false;
	if (ref[v].to == lid[v].to)
		return ref[v].to == t && ref[v].link != lid[v].link;
	unsigned h = 0;
	for (uint32_t x = ref[v].to; x != t; x = ref[x].to) {
		if (x == NONE || ++h >= ALT_MAX_HOPS)
			return false;
		a->stamp[x] = a->epoch;
	}
	h = 0;
	for (uint32_t x = lid[v].to; x != t; x = lid[x].to)
		if (x == NONE || ++h >= ALT_MAX_HOPS || a->stamp[x] == a->epoch)
			return false;
	return true;
}

/* Has v a pair of the block's LIDs before the one routed now that keep apart? */
static bool covered_at(struct alt *a, uint32_t v, uint32_t t)
{
	bool sw;
	for (unsigned j = 0; j < a->nref; j++)
		for (unsigned k = j + 1; k < a->nref; k++)
			if (path_apart(a, v, t, a->ref[j], a->ref[k], &sw))
				return true;
	return false;
}

/* Do the engine's routes to lid1 keep apart already, by link and switch, from every host
 * switch: from the LID before it, or (a switch without a disjoint pair yet) from any LID
 * before it? The common case (fat trees) passes on the first test of each switch. */
static bool engine_disjoint(struct alt *a, uint32_t t, uint16_t lid0, uint16_t lid1)
{
	a->checked = 0;
	/* the reference is lid0, the LID just before lid1 (block_refs): two columns */
	const struct alt_hop *c0 = col_get(a, lid0, 0), *c1 = col_get(a, lid1, lid0);
	for (uint32_t v = 0; v < a->ns; v++) {
		bool sw, ok = false;
		if (v == t || !a->hosts[v] || c0[v].to == NONE)
			continue;
		ok = col_apart(a, v, t, c0, c1);
		if (!ok && a->nref > 1 && !covered_at(a, v, t))
			for (unsigned i = 0; i + 1 < a->nref && !ok; i++)
				ok = path_apart(a, v, t, a->ref[i], lid1, &sw) && sw;
		if (!ok)
			return false;
		a->checked++;
	}
	return true;
}

static void refs_prepare(struct alt *a, uint32_t t);

/* What became of a LID's alternate: none (the engine's routes stay: a host switch found no
 * way in), the engine's routes kept (they keep apart already), or a tree of its own. */
enum alt_outcome { ALT_NONE, ALT_ENGINE, ALT_TREE };

/* Route LID lid1 of destination switch t apart from the LIDs before it. ALT_NONE: some host
 * switch routing lid0 found no way in; nothing was changed. A switch without hosts that finds none
 * keeps the engine's route: no packet reaches it on the way to lid1 (no switch in the tree
 * forwards to it), and its own route leads into the tree, where it stays. */
static enum alt_outcome route_alternate(struct alt *a, uint32_t t, uint16_t lid0, uint16_t lid1,
                                        bool probe)
{
	struct routing_ctx *ctx = a->ctx;
	uint32_t need = 0, joined_need = 0;
	if (!probe && engine_disjoint(a, t, lid0, lid1))
		return ALT_ENGINE; /* the engine's routes do already (fat trees): kept */
	if (!a->refs_ready)        /* the same for every try of one LID (route_choice) */
		refs_prepare(a, t);
	a->refs_ready = true;
	for (uint32_t v = 0; v < a->ns; v++) {
		a->par[v] = NONE;
		a->len[v] = 0;
		/* seen 1: routes lid0, so may route lid1 */
		a->seen[v] = v != t && next_hop(a, v, lid0) != NONE;
		need += a->seen[v] && a->hosts[v];
	}
	a->state[t] = a->rules ? a->rules->dst_state : 0;
	grow(a, t, lid1);
	for (uint32_t v = 0; v < a->ns; v++)
		joined_need += a->par[v] != NONE && a->hosts[v];
	if (joined_need < need)
		return ALT_NONE;
	if (probe)
		return ALT_TREE; /* the growth only, the tables untouched (route_choice) */
	a->work = 0;
	a->moved = false;
	a->budget = (uint64_t)ALT_SEARCH_WORK * a->ns;
	improve(a, t, lid0);
	/* a change unrecorded could not be put back (a LID half on one rule, half on another) */
	if (a->undo && vec_reserve(&a->undo->changes, (uint64_t)a->undo->changes.n + a->ns) < 0)
		return ALT_NONE; /* out of memory: the tables as they were */
	for (uint32_t v = 0; v < a->ns; v++) {
		if (a->par[v] == NONE)
			continue;
		uint8_t *lft = ctx->t->sws[v].lft, port = ctx->adj[a->par[v]].port;
		if (lft[lid1] == port)
			continue;
		if (a->undo) /* room reserved above */
			a->undo->changes.v[a->undo->changes.n++] =
			    (struct routing_alt_change){v, lid1, lft[lid1]};
		uint32_t *load = a->load + ctx->port_base[v];
		if (lft[lid1] && lft[lid1] != 0xff && load[lft[lid1]])
			load[lft[lid1]]--;
		load[port]++;
		lft[lid1] = port;
	}
	col_forget(a, lid1);
	return ALT_TREE;
}

/* The host switches whose paths to lid0 and lid1 (or another LID of the block before it)
 * keep apart. */
static void count(struct alt *a, uint32_t t, uint16_t lid0, uint16_t lid1, bool tree)
{
	for (uint32_t v = 0; v < a->ns; v++) {
		bool sw, link;
		if (v == t || !a->hosts[v] || next_hop(a, v, lid0) == NONE)
			continue;
		a->stats.sources++;
		a->stats.possible += a->comp[v] == a->comp[t];
		if (tree && !a->moved && a->par[v] != NONE) {
			/* the tables hold the tree, as scored when v joined */
			link = a->bscore[v].link_ok;
			sw = a->bscore[v].sw_ok;
		} else {
			link = lft_apart_v(a, v, t, lid1, &sw);
		}
		a->stats.link_disjoint += link;
		a->stats.switch_disjoint += link && sw;
		a->stats.open += a->comp[v] == a->comp[t] && !link && !a->covered[v];
	}
}

/* For LID 2i+1 of a block at d: the LIDs before it. */
static void block_refs(struct alt *a, uint32_t d, uint32_t i)
{
	a->nref = 0;
	for (uint32_t k = d; k < i && a->nref < 8; k++)
		a->ref[a->nref++] = a->ctx->dst[k].lid;
}

/* For the growth: the reference LIDs' trees, and which host switches have a disjoint pair
 * among them already. */
static void refs_prepare(struct alt *a, uint32_t t)
{
	for (unsigned r = 0; r < a->nref; r++)
		prim_build(a, &a->prim[r], t, a->ref[r]);
	for (uint32_t v = 0; v < a->ns; v++) {
		a->covered[v] = false;
		if (a->nref < 2 || v == t || !a->hosts[v])
			continue;
		for (unsigned j = 0; j < a->nref && !a->covered[v]; j++)
			for (unsigned k = j + 1; k < a->nref && !a->covered[v]; k++) {
				bool sw;
				a->covered[v] = lft_apart(a, j, v, t, a->ref[k], &sw);
			}
	}
}

/* Label the 2-edge-connected components (Tarjan's bridges, iterative; parallel links are
 * separate edges, so a doubled cable is no bridge). Returns -1 out of memory. */
static int two_edge_components(struct alt *a)
{
	const struct routing_ctx *ctx = a->ctx;
	uint32_t ns = a->ns, *disc = malloc(sizeof(uint32_t) * (ns + 1)),
	         *low = malloc(sizeof(uint32_t) * (ns + 1)),
	         *pe = malloc(sizeof(uint32_t) * (ns + 1)),
	         *it = malloc(sizeof(uint32_t) * (ns + 1)),
	         *stk = malloc(sizeof(uint32_t) * (ns + 1)),
	         *path = malloc(sizeof(uint32_t) * (ns + 1));
	if (!disc || !low || !pe || !it || !stk || !path) {
		free(disc), free(low), free(pe), free(it), free(stk), free(path);
		return -1;
	}
	uint32_t clock = 0, ncomp = 0, sp = 0, vs = 0;
	for (uint32_t v = 0; v < ns; v++)
		disc[v] = NONE;
	for (uint32_t r = 0; r < ns; r++) {
		if (disc[r] != NONE)
			continue;
		/* the DFS path in path, the component stack in stk */
		disc[r] = low[r] = clock++;
		pe[r] = NONE;
		it[r] = ctx->adj_start[r];
		path[vs++] = r;
		stk[sp++] = r;
		while (vs) {
			uint32_t v = path[vs - 1];
			if (it[v] < ctx->adj_start[v + 1]) {
				uint32_t e = it[v]++, w = ctx->adj[e].to;
				/* the edge back to the parent: the same cable, seen from v */
				if (pe[v] != NONE && e == a->peer_edge[pe[v]])
					continue;
				if (disc[w] == NONE) {
					disc[w] = low[w] = clock++;
					pe[w] = e;
					it[w] = ctx->adj_start[w];
					path[vs++] = w;
					stk[sp++] = w;
				} else if (disc[w] < low[v]) {
					low[v] = disc[w];
				}
				continue;
			}
			vs--;
			if (vs) {
				uint32_t u = path[vs - 1];
				if (low[v] < low[u])
					low[u] = low[v];
			}
			if (low[v] == disc[v]) { /* v heads a component: pop it */
				uint32_t x;
				do {
					x = stk[--sp];
					a->comp[x] = ncomp;
				} while (x != v);
				ncomp++;
			}
		}
	}
	free(disc), free(low), free(pe), free(it), free(stk), free(path);
	return 0;
}

/* Scratch for routing one LID at a time, of each part of the work (route_part) its own. */
static int scratch_alloc(struct alt *a)
{
	uint32_t ns = a->ns;
	bool ok = true;
	a->par = malloc(sizeof(uint32_t) * (ns + 1));
	a->len = malloc(sizeof(uint16_t) * (ns + 1));
	a->state = calloc(ns + 1, 1);
	for (unsigned r = 0; r < 8; r++) {
		a->prim[r].n = malloc(sizeof(*a->prim[r].n) * (ns + 1));
		ok &= a->prim[r].n != NULL;
	}
	a->pnext = malloc(sizeof(uint32_t) * (ns + 1));
	a->pkid = malloc(sizeof(uint32_t) * (ns + 1));
	a->psib = malloc(sizeof(uint32_t) * (ns + 1));
	a->porder = malloc(sizeof(uint32_t) * (ns + 1));
	a->pstack = malloc(sizeof(uint32_t) * (ns + 1));
	a->best = malloc(sizeof(uint32_t) * (ns + 1));
	a->bscore = malloc(sizeof(struct alt_score) * (ns + 1));
	a->key = malloc(sizeof(uint64_t) * (ns + 1));
	a->hp.h = malloc(sizeof(uint32_t) * (ns + 1));
	a->hp.pos = malloc(sizeof(uint32_t) * (ns + 1));
	a->hp.key = a->key;
	a->seen = malloc(sizeof(uint32_t) * (ns + 1));
	a->covered = calloc(ns + 1, sizeof(bool));
	a->kid = malloc(sizeof(uint32_t) * (ns + 1));
	a->sib = malloc(sizeof(uint32_t) * (ns + 1));
	a->stack = malloc(sizeof(uint32_t) * (ns + 1));
	a->stamp = calloc(ns + 1, sizeof(uint32_t));
	for (unsigned i = 0; i < 3; i++) {
		a->col[i].hop = malloc(sizeof(struct alt_hop) * (ns + 1));
		ok &= a->col[i].hop != NULL;
	}
	return ok && a->par && a->len && a->state && a->pnext && a->pkid && a->psib && a->porder &&
	               a->pstack && a->best && a->bscore && a->key && a->hp.h && a->hp.pos &&
	               a->seen && a->covered && a->kid && a->sib && a->stack && a->stamp
	           ? 0
	           : -1;
}

static void scratch_free(struct alt *a)
{
	free(a->par);
	free(a->len);
	free(a->state);
	for (unsigned r = 0; r < 8; r++)
		free(a->prim[r].n);
	free(a->pnext);
	free(a->pkid);
	free(a->psib);
	free(a->porder);
	free(a->pstack);
	free(a->best);
	free(a->bscore);
	free(a->key);
	free(a->hp.h);
	free(a->hp.pos);
	free(a->seen);
	free(a->covered);
	free(a->kid);
	free(a->sib);
	free(a->stack);
	for (unsigned i = 0; i < 3; i++)
		free(a->col[i].hop);
	free(a->stamp);
}

/* The model every part reads: the switches' ports, links and tables laid out for walks,
 * and the 2-edge-connected components. */
static int alt_init(struct alt *a, struct routing_ctx *ctx)
{
	const struct topo *t = ctx->t;
	uint32_t ns = ctx->nsw, np = ctx->port_base[ns];
	a->ns = ns;
	a->peer = malloc(sizeof(uint32_t) * (np + 1));
	a->link = malloc(sizeof(uint32_t) * (np + 1));
	a->sw = malloc(sizeof(struct alt_sw) * (ns + 1));
	a->hop = malloc(sizeof(struct alt_hop) * (np + 1));
	a->comp = malloc(sizeof(uint32_t) * (ns + 1));
	a->peer_edge = malloc(sizeof(uint32_t) * (ctx->adj_start[ns] + 1));
	uint32_t *edge_at = malloc(sizeof(uint32_t) * (np + 1));
	a->edge = malloc(sizeof(struct alt_hop) * (ctx->adj_start[ns] + 1));
	if (!a->edge || !edge_at || !a->comp || !a->peer_edge || !a->peer || !a->link || !a->sw ||
	    !a->hop) {
		free(edge_at);
		return -1;
	}
	for (uint32_t i = 0; i < np; i++)
		a->peer[i] = a->link[i] = NONE;
	for (uint32_t s = 0; s < ns; s++)
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			uint32_t tp = t->nodes[t->sws[s].node].first_port + ctx->adj[e].port;
			uint32_t peer = t->ports[tp].peer;
			a->peer[ctx->port_base[s] + ctx->adj[e].port] = ctx->adj[e].to;
			a->link[ctx->port_base[s] + ctx->adj[e].port] = peer < tp ? peer : tp;
			edge_at[ctx->port_base[s] + ctx->adj[e].port] = e;
			a->edge[e] = (struct alt_hop){ctx->adj[e].to, peer < tp ? peer : tp};
		}
	for (uint32_t s = 0; s < ns; s++)
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			uint32_t tp = t->nodes[t->sws[s].node].first_port + ctx->adj[e].port;
			uint32_t w = ctx->adj[e].to;
			a->peer_edge[e] =
			    edge_at[ctx->port_base[w] + t->ports[t->ports[tp].peer].num];
		}
	free(edge_at);
	for (uint32_t s = 0; s < ns; s++)
		a->sw[s] = (struct alt_sw){t->sws[s].lft, t->sws[s].lft_size, ctx->port_base[s],
		                           t->nodes[t->sws[s].node].nports};
	for (uint32_t i = 0; i < np; i++)
		a->hop[i] = (struct alt_hop){a->peer[i], a->link[i]};
	return two_edge_components(a);
}

static void alt_free(struct alt *a)
{
	free(a->edge);
	free(a->peer);
	free(a->link);
	free(a->sw);
	free(a->hop);
	free(a->comp);
	free(a->peer_edge);
}

/* Does entry d continue the block of entry d - 1, both of switch t: the same CA port, the
 * next LID? */
static bool block_goes_on(const struct routing_ctx *ctx, uint32_t t, uint32_t d)
{
	return d > ctx->dst_start[t] && ctx->dst[d].port &&
	       ctx->dst[d - 1].port == ctx->dst[d].port &&
	       ctx->dst[d - 1].lid + 1u == ctx->dst[d].lid;
}

/* The entry after the CA port's block that starts at entry d of destination switch t:
 * consecutive entries, same port, consecutive LIDs. */
static uint32_t block_end(const struct routing_ctx *ctx, uint32_t t, uint32_t d)
{
	uint32_t end = d + 1;
	while (end < ctx->dst_start[t + 1] && block_goes_on(ctx, t, end))
		end++;
	return end;
}

bool routing_lmc_any(const struct routing_ctx *ctx)
{
	for (uint32_t t = 0; ctx->dst && t < ctx->nsw; t++)
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1]; d++)
			if (block_goes_on(ctx, t, d))
				return true;
	return false;
}

unsigned routing_lmc_index(const struct routing_ctx *ctx, uint32_t t, uint32_t d)
{
	unsigned k = 0;
	while (block_goes_on(ctx, t, d - k))
		k++;
	return k;
}

int routing_lmc_alternates(struct routing_ctx *ctx, const struct routing_alt_rules *rules,
                           struct routing_alt_undo *undo, bool *alt)
{
	return routing_lmc_alternates_only(ctx, rules, undo, alt, NULL);
}

int routing_lmc_alternates_only(struct routing_ctx *ctx, const struct routing_alt_rules *rules,
                                struct routing_alt_undo *undo, bool *alt, const bool *only)
{
	struct routing_alt_choice c = {.rules = rules, .nrules = 1};
	return routing_lmc_alternates_choice(ctx, &c, undo, alt, only);
}

static void revert_one(const struct routing_ctx *ctx, uint32_t *load, struct routing_alt_change *c);

/* The host switches (not across a bridge) that count() left without a link-disjoint pair
 * among the block's LIDs so far. */
static uint64_t shortfall(const struct alt *a, const struct alt_stats *before)
{
	return a->stats.open - before->open;
}

/* After a probe's growth: the host switches (not across a bridge) it leaves without a pair
 * of the block's LIDs apart, by the scores they joined with. */
static uint64_t probe_open(const struct alt *a, uint32_t t, uint16_t lid0)
{
	uint64_t open = 0;
	for (uint32_t v = 0; v < a->ns; v++)
		if (v != t && a->hosts[v] && a->comp[v] == a->comp[t] && !a->covered[v] &&
		    next_hop(a, v, lid0) != NONE)
			open += a->par[v] == NONE || !a->bscore[v].link_ok;
	return open;
}

/* Route lid1 (entry i + 1 of the block at d) by the first rules of the choice; where that
 * leaves a host switch without a pair of the block's LIDs apart, the others are grown
 * without the local search (a fraction of a routing each), and the one that promises the
 * fewest such switches is routed in full and kept if it leaves fewer. The index of the
 * rules kept goes to chosen[i + 1]. */
static enum alt_outcome route_choice(struct alt *a, const struct routing_alt_choice *c, uint32_t t,
                                     uint32_t i, uint16_t l0, uint16_t l1)
{
	unsigned first = c->first && c->first[i + 1] < c->nrules ? c->first[i + 1] : 0;
	unsigned kept = first, pick = c->nrules;
	a->rules = c->rules ? &c->rules[first] : NULL;
	a->refs_ready = false;
	struct alt_stats before = a->stats;
	enum alt_outcome o = route_alternate(a, t, l0, l1, false);
	if (o == ALT_ENGINE) { /* apart everywhere already: counted so */
		a->stats.sources += a->checked;
		a->stats.link_disjoint += a->checked;
		a->stats.switch_disjoint += a->checked;
		/* apart: so on the destination's side of every bridge */
		a->stats.possible += a->checked;
		return o;
	}
	count(a, t, l0, l1, o == ALT_TREE);
	uint64_t best = shortfall(a, &before), promise = best;
	for (unsigned r = 0; r < c->nrules && promise; r++) {
		if (r == first)
			continue;
		a->rules = &c->rules[r];
		a->probe_cap = promise;
		enum alt_outcome po = route_alternate(a, t, l0, l1, true);
		a->probe_cap = 0;
		if (po != ALT_TREE)
			continue;
		uint64_t s = probe_open(a, t, l0);
		if (s < promise) {
			promise = s;
			pick = r;
		}
	}
	if (pick < c->nrules) {
		struct routing_alt_undo *undo = a->undo, tried = {0};
		struct alt_stats kept_stats = a->stats;
		a->rules = &c->rules[pick];
		a->undo = &tried;
		enum alt_outcome o2 = route_alternate(a, t, l0, l1, false);
		a->undo = undo;
		bool fewer = false;
		if (o2 == ALT_TREE) {
			a->stats = before;
			count(a, t, l0, l1, true);
			fewer = shortfall(a, &before) < best;
		}
		/* the caller's undo takes every change or the try goes back */
		if (fewer && undo &&
		    vec_reserve(&undo->changes, (uint64_t)undo->changes.n + tried.changes.n) < 0)
			fewer = false;
		if (fewer) {
			kept = pick;
			o = o2;
			for (uint32_t k = 0; undo && k < tried.changes.n; k++)
				undo->changes.v[undo->changes.n++] = tried.changes.v[k];
		} else {
			/* no better after all: what it changed goes back, and the count */
			for (uint32_t k = tried.changes.n; k-- > 0;)
				revert_one(a->ctx, a->load, &tried.changes.v[k]);
			a->stats = kept_stats;
			col_forget(a, l1);
		}
		vec_free(&tried.changes);
	}
	if (c->chosen && o == ALT_TREE)
		c->chosen[i + 1] = (uint8_t)kept;
	return o;
}

/* ---- the work in parts, over the CPUs ----
 * Each LID's alternate reads and writes its own column of the tables, and reads its block's
 * LIDs before it: destination switches are independent but for the ports' loads, which
 * only break ties between equal ways. So the destination switches go in ALT_PARTS fixed
 * ranges, each with scratch of its own and a copy of the loads as they were before the
 * alternates, spreading its own LIDs; the parts' changes to the loads are added up after.
 * The tables are the same whatever the number of threads. */
#define ALT_PARTS 8
struct alt_run {
	struct alt part[ALT_PARTS];
	const struct routing_alt_choice *c;
	const bool *only;
	bool *alt;
};

static void route_part(void *arg, uint32_t k)
{
	struct alt_run *run = arg;
	struct alt *a = &run->part[k];
	struct routing_ctx *ctx = a->ctx;
	const bool *only = run->only;
	uint32_t lo = (uint32_t)((uint64_t)ctx->nsw * k / ALT_PARTS),
	         hi = (uint32_t)((uint64_t)ctx->nsw * (k + 1) / ALT_PARTS);
	for (uint32_t t = lo; t < hi; t++)
		for (uint32_t d = ctx->dst_start[t], end; d < ctx->dst_start[t + 1]; d = end) {
			end = block_end(ctx, t, d);
			for (uint32_t i = d; i + 1 < end; i++) {
				uint16_t l0 = ctx->dst[i].lid, l1 = ctx->dst[i + 1].lid;
				if (only && !only[i + 1])
					continue;
				a->stats.blocks++;
				block_refs(a, d, i + 1);
				uint64_t open = a->stats.open;
				enum alt_outcome o = route_choice(a, run->c, t, i, l0, l1);
				if (run->c->open)
					run->c->open[i + 1] = (uint32_t)(a->stats.open - open);
				a->stats.kept += o == ALT_NONE;
				/* only a tree of its own is an alternate to the layering: the
				 * engine's routes kept are layered as primary ones */
				if (run->alt && o == ALT_TREE)
					run->alt[i + 1] = true;
			}
		}
}

/* Each part: the model shared, scratch, loads and an undo log of its own. */
static int parts_init(struct alt_run *run, const struct alt *a)
{
	const struct routing_ctx *ctx = a->ctx;
	uint32_t np = ctx->port_base[ctx->nsw];
	int rc = 0;
	for (unsigned k = 0; k < ALT_PARTS; k++) {
		struct alt *p = &run->part[k];
		*p = *a;
		memset(&p->stats, 0, sizeof(p->stats));
		p->load = malloc(sizeof(uint32_t) * (np + 1));
		p->undo = a->undo ? calloc(1, sizeof(*p->undo)) : NULL;
		if (scratch_alloc(p) < 0 || !p->load || (a->undo && !p->undo))
			rc = -1;
		else
			memcpy(p->load, ctx->load, sizeof(uint32_t) * np);
	}
	return rc;
}

static void parts_free(struct alt_run *run)
{
	for (unsigned k = 0; k < ALT_PARTS; k++) {
		struct alt *p = &run->part[k];
		scratch_free(p);
		free(p->load);
		if (p->undo)
			vec_free(&p->undo->changes);
		free(p->undo);
	}
}

/* The parts' loads, counts and undo logs into the whole: -1 where the caller's undo log
 * cannot take the parts' (every change to the tables and loads then put back; alt, chosen
 * and open still say what was routed, and the caller gives up). */
static int parts_merge(struct alt_run *run, struct alt *a)
{
	struct routing_ctx *ctx = a->ctx;
	uint32_t np = ctx->port_base[ctx->nsw];
	uint64_t changes = 0;
	for (uint32_t i = 0; i < np; i++) {
		/* a part's count stops at 0, as the serial one did: so does the sum */
		int64_t was = ctx->load[i], now = was;
		for (unsigned k = 0; k < ALT_PARTS; k++)
			now += (int64_t)run->part[k].load[i] - was;
		ctx->load[i] = now < 0 ? 0 : (uint32_t)now;
	}
	for (unsigned k = 0; k < ALT_PARTS; k++) {
		const struct alt_stats *s = &run->part[k].stats;
		a->stats.blocks += s->blocks;
		a->stats.kept += s->kept;
		a->stats.sources += s->sources;
		a->stats.link_disjoint += s->link_disjoint;
		a->stats.switch_disjoint += s->switch_disjoint;
		a->stats.possible += s->possible;
		a->stats.open += s->open;
		changes += run->part[k].undo ? run->part[k].undo->changes.n : 0;
	}
	if (!a->undo)
		return 0;
	if (vec_reserve(&a->undo->changes, a->undo->changes.n + changes) < 0) {
		for (unsigned k = ALT_PARTS; k-- > 0;)
			routing_lmc_revert(ctx, run->part[k].undo);
		return -1;
	}
	for (unsigned k = 0; k < ALT_PARTS; k++) {
		const struct routing_alt_undo *u = run->part[k].undo;
		if (!u->changes.n)
			continue;
		memcpy(a->undo->changes.v + a->undo->changes.n, u->changes.v,
		       sizeof(*u->changes.v) * u->changes.n);
		a->undo->changes.n += u->changes.n;
	}
	return 0;
}

int routing_lmc_alternates_choice(struct routing_ctx *ctx, const struct routing_alt_choice *c,
                                  struct routing_alt_undo *undo, bool *alt, const bool *only)
{
	struct alt a = {.ctx = ctx, .rules = c->rules, .undo = undo};
	if (!routing_lmc_any(ctx))
		return 0; /* LMC 0: nothing to do */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool *hosts = malloc(ctx->nsw + 1);
	struct alt_run *run = calloc(1, sizeof(*run));
	int rc = -1;
	if (hosts && run && alt_init(&a, ctx) == 0) {
		routing_host_switches(ctx, hosts);
		a.hosts = hosts;
		*run = (struct alt_run){.c = c, .only = only, .alt = alt};
		if (parts_init(run, &a) == 0) {
			routing_parallel(ALT_PARTS, ctx->threads, route_part, run);
			rc = parts_merge(run, &a);
		}
	}
	if (rc < 0)
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc == 0 && !c->quiet)
		log_info(ctx->log, "routing",
		         "LMC alternates in %.3f s: %u LID pairs (%u kept the engine's routes); "
		         "of %llu host switch and LID pairs (%llu not across a bridge) %llu "
		         "link-disjoint, %llu switch-disjoint",
		         (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		         a.stats.blocks, a.stats.kept, (unsigned long long)a.stats.sources,
		         (unsigned long long)a.stats.possible,
		         (unsigned long long)a.stats.link_disjoint,
		         (unsigned long long)a.stats.switch_disjoint);
	if (run)
		parts_free(run);
	free(run);
	free(hosts);
	alt_free(&a);
	return rc;
}

int routing_lmc_apart(struct routing_ctx *ctx, uint64_t *possible, uint64_t *apart)
{
	struct alt a = {.ctx = ctx};
	bool *hosts = malloc(ctx->nsw + 1);
	int rc = -1;
	*possible = *apart = 0;
	if (hosts && alt_init(&a, ctx) == 0) {
		routing_host_switches(ctx, hosts);
		rc = 0;
		for (uint32_t t = 0; t < ctx->nsw; t++)
			for (uint32_t d = ctx->dst_start[t], end; d < ctx->dst_start[t + 1];
			     d = end) {
				end = block_end(ctx, t, d);
				if (end - d < 2)
					continue;
				for (uint32_t v = 0; v < ctx->nsw; v++) {
					if (v == t || !hosts[v] || a.comp[v] != a.comp[t] ||
					    next_hop(&a, v, ctx->dst[d].lid) == NONE)
						continue;
					/* the first 8 LIDs, as the alternates take them
					 * (block_refs): 28 pairs at most, not 8,128 at LMC 7 */
					uint32_t last = end - d > 8 ? d + 8 : end;
					bool sw, ok = false;
					for (uint32_t j = d; j < last && !ok; j++)
						for (uint32_t k = j + 1; k < last && !ok; k++)
							ok = path_apart(&a, v, t, ctx->dst[j].lid,
							                ctx->dst[k].lid, &sw);
					(*possible)++;
					*apart += ok;
				}
			}
	}
	free(hosts);
	alt_free(&a);
	return rc;
}

static void revert_one(const struct routing_ctx *ctx, uint32_t *loads, struct routing_alt_change *c)
{
	uint8_t *lft = ctx->t->sws[c->sw].lft;
	uint32_t *load = loads + ctx->port_base[c->sw];
	if (lft[c->lid] && lft[c->lid] != 0xff && load[lft[c->lid]])
		load[lft[c->lid]]--;
	if (c->port && c->port != 0xff)
		load[c->port]++;
	lft[c->lid] = c->port;
	c->sw = UINT32_MAX; /* put back */
}

int routing_lmc_follow_first(struct routing_ctx *ctx, struct routing_alt_undo *undo, uint32_t t,
                             uint32_t d)
{
	uint32_t first = d - routing_lmc_index(ctx, t, d);
	uint16_t lid = ctx->dst[d].lid, like = ctx->dst[first].lid;
	if (first == d)
		return 0;
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		uint8_t *lft = ctx->t->sws[s].lft, old = lft[lid];
		if (s == t || old == lft[like])
			continue;
		if (undo) {
			struct routing_alt_change *c = vec_push(&undo->changes);
			if (!c)
				return -1;
			*c = (struct routing_alt_change){s, lid, old};
		}
		uint32_t *load = ctx->load + ctx->port_base[s];
		if (old && old != 0xff && load[old])
			load[old]--;
		lft[lid] = lft[like];
		if (lft[lid] && lft[lid] != 0xff)
			load[lft[lid]]++;
	}
	return 0;
}

void routing_lmc_revert(struct routing_ctx *ctx, struct routing_alt_undo *undo)
{
	for (uint32_t i = undo->changes.n; i-- > 0;)
		if (undo->changes.v[i].sw != UINT32_MAX)
			revert_one(ctx, ctx->load, &undo->changes.v[i]);
	vec_free(&undo->changes);
}

void routing_lmc_revert_lids(struct routing_ctx *ctx, struct routing_alt_undo *undo,
                             const bool *lids)
{
	for (uint32_t i = undo->changes.n; i-- > 0;)
		if (undo->changes.v[i].sw != UINT32_MAX && lids[undo->changes.v[i].lid])
			revert_one(ctx, ctx->load, &undo->changes.v[i]);
}

void routing_lmc_revert_lid(struct routing_ctx *ctx, struct routing_alt_undo *undo, uint16_t lid)
{
	for (uint32_t i = undo->changes.n; i-- > 0;)
		if (undo->changes.v[i].sw != UINT32_MAX && undo->changes.v[i].lid == lid)
			revert_one(ctx, ctx->load, &undo->changes.v[i]);
}
