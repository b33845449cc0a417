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
 * outwards in rounds by path length, each switch joining by the neighbour already in the
 * tree that keeps it furthest apart (link-disjoint, then switch-disjoint, then fewest shared
 * links, shorter, the route it holds already, the least loaded port). Joining only through
 * switches already in the tree keeps it loop free. But a switch's route is also the way on
 * for every switch behind it (a switch next to the destination goes straight in, and a
 * neighbour that needed it as a detour has none), so a local search follows: a switch moves
 * to another neighbour when that raises the score of the switches behind it, and on small
 * fabrics a neighbour and the switch move together. Alternates are longer than shortest
 * where no disjoint shortest path exists. If the engine's own routes already keep every
 * host switch apart (fat trees), they stay. A host switch across a bridge from the
 * destination can have no alternate, and no effort goes to it.
 *
 * Engines with a deadlock rule pass it as rules: each switch in the tree carries a state
 * (up/down's "descends all the way"), and a switch may take only a step the rule allows
 * from its neighbour's state, so every alternate is a route the engine could have chosen.
 * Engines that break credit loops with layers (dfsssp) run this before their layering, which
 * then covers the alternates too. If a host switch that routes LID 0 cannot join at all,
 * the LID keeps the engine's own routes. */
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "routing/updown.h"
#include "util/vec.h"

#define NONE         UINT32_MAX
#define ALT_MAX_HOPS 64

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
	/* marks of the switch's own primary path: links (by topo port) and switches */
	uint32_t *link_mark, *sw_mark, stamp;
	/* this round's candidates, and the choice each made */
	uint32_t *cand, *choice, *seen;
	uint32_t ncand;
	uint32_t *kid, *sib, *stack; /* the tree's children lists, for the local search */
	bool *hosts;                 /* switches with CA ports: each must have an alternate */
	/* the block's LIDs before the one routed now: a switch's alternate should avoid one of
	 * them (all of them are tried for a switch without a disjoint pair among them yet;
	 * covered: it has one, and the LID just before is the one to pair with) */
	uint16_t ref[8];
	unsigned nref;
	bool *covered;
	uint32_t checked; /* host switches engine_disjoint found apart */
	/* 2-edge-connected components of the switch graph: a switch in another component than
	 * the destination's crosses a bridge to it, and no alternate avoids that */
	uint32_t *comp;
	uint32_t *peer_edge; /* per edge (index into adj): the same cable the other way */
	struct {
		uint32_t blocks; /* LID pairs (2i, 2i+1) of CA ports */
		uint32_t kept;   /* ... that kept the engine's routes: a host switch had no way */
		/* host switches x pairs: paths to 2i and 2i+1 sharing no link, no switch */
		uint64_t sources, link_disjoint, switch_disjoint;
		uint64_t possible; /* ... of the sources not across a bridge from the destination */
	} stats;
	struct routing_alt_undo *undo;
};

struct alt_score {
	bool link_ok, sw_ok;
	uint32_t overlap;
};

static uint32_t next_hop(const struct alt *a, uint32_t s, uint16_t lid)
{
	const struct topo_switch *sw = &a->ctx->t->sws[s];
	uint8_t p = lid < sw->lft_size ? sw->lft[lid] : 0xff;
	uint32_t n = a->ctx->t->nodes[sw->node].nports;
	if (!p || p == 0xff || p > n)
		return NONE;
	return a->peer[a->ctx->port_base[s] + p];
}

/* Mark the switch's primary path (links, and the switches between its ends). false: it
 * has none (it does not route the LID to t). */
static bool mark_primary(struct alt *a, uint32_t v, uint32_t t, uint16_t lid)
{
	a->stamp++;
	uint32_t x = v;
	for (unsigned h = 0; x != t; h++) {
		uint32_t y = next_hop(a, x, lid);
		if (y == NONE || h >= ALT_MAX_HOPS)
			return false;
		const struct topo_switch *sw = &a->ctx->t->sws[x];
		a->link_mark[a->link[a->ctx->port_base[x] + sw->lft[lid]]] = a->stamp;
		if (y != t)
			a->sw_mark[y] = a->stamp;
		x = y;
	}
	return true;
}

/* How the path v -> w, then w's path in the tree, meets v's marked primary path. */
static struct alt_score score(const struct alt *a, uint32_t v, uint32_t e, uint32_t t)
{
	const struct routing_ctx *ctx = a->ctx;
	struct alt_score sc = {true, true, 0};
	uint32_t x = v, edge = e;
	while (x != t) {
		uint32_t pid = ctx->port_base[x] + ctx->adj[edge].port;
		if (a->link_mark[a->link[pid]] == a->stamp) {
			sc.link_ok = false;
			sc.overlap++;
		}
		x = ctx->adj[edge].to;
		if (x == t)
			break;
		if (a->sw_mark[x] == a->stamp)
			sc.sw_ok = false;
		edge = a->par[x];
	}
	return sc;
}

static bool score_better(struct alt_score s, struct alt_score b)
{
	if (s.link_ok != b.link_ok)
		return s.link_ok;
	if (s.sw_ok != b.sw_ok)
		return s.sw_ok;
	return s.overlap < b.overlap;
}

/* score() against the LIDs v's alternate should avoid one of: the best. */
static struct alt_score score_v(struct alt *a, uint32_t v, uint32_t e, uint32_t t)
{
	struct alt_score best = {false, false, UINT32_MAX};
	bool all = a->nref > 1 && !a->covered[v];
	for (unsigned i = all ? 0 : a->nref - 1; i < a->nref; i++) {
		if (!mark_primary(a, v, t, a->ref[i]))
			continue;
		struct alt_score s = score(a, v, e, t);
		if (score_better(s, best))
			best = s;
	}
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
	const uint32_t *load = ctx->load + ctx->port_base[v];
	return load[ctx->adj[e].port] < load[ctx->adj[be].port];
}

/* One round: every switch not in the tree with a neighbour in it picks its best way in (with
 * level > 0 only through switches joined in the last round, which keeps the rounds in order
 * of length). Then all of them join at once. Returns how many. */
/* The edges by which v may join now: into the tree, through a switch of the level before
 * (level > 0), by the rules. */
static bool may_join(const struct alt *a, uint32_t v, uint32_t e, uint32_t t, uint16_t level)
{
	uint32_t w = a->ctx->adj[e].to;
	if (w != t && a->par[w] == NONE)
		return false;
	if (level && a->len[w] + 1u != level)
		return false;
	return join_state(a, v, e) >= 0;
}

/* v's best way in now, NONE if none: each edge scored against each LID v should keep apart
 * from (one marking of a path serves all of v's edges). */
static uint32_t best_way_in(struct alt *a, uint32_t v, uint32_t t, uint16_t lid1, uint16_t level)
{
	const struct routing_ctx *ctx = a->ctx;
	uint32_t first = ctx->adj_start[v], n = ctx->adj_start[v + 1] - first;
	struct alt_score es[256];
	if (n > 256)
		n = 256;
	for (uint32_t k = 0; k < n; k++)
		es[k] = (struct alt_score){false, false, UINT32_MAX};
	bool all = a->nref > 1 && !a->covered[v];
	for (unsigned i = all ? 0 : a->nref - 1; i < a->nref; i++) {
		if (!mark_primary(a, v, t, a->ref[i]))
			continue;
		for (uint32_t k = 0; k < n; k++) {
			if (!may_join(a, v, first + k, t, level))
				continue;
			struct alt_score s = score(a, v, first + k, t);
			if (score_better(s, es[k]))
				es[k] = s;
		}
	}
	uint32_t be = NONE;
	struct alt_score bs = {0};
	for (uint32_t k = 0; k < n; k++) {
		if (!may_join(a, v, first + k, t, level))
			continue;
		if (better(a, v, lid1, es[k], first + k, bs, be)) {
			be = first + k;
			bs = es[k];
		}
	}
	return be;
}

static uint32_t round_grow(struct alt *a, uint32_t t, uint16_t lid1, uint16_t level)
{
	struct routing_ctx *ctx = a->ctx;
	a->ncand = 0;
	for (uint32_t v = 0; v < a->ns; v++) {
		if (a->par[v] != NONE || v == t || a->seen[v] != 1)
			continue;
		uint32_t be = best_way_in(a, v, t, lid1, level);
		if (be == NONE)
			continue;
		a->cand[a->ncand] = v;
		a->choice[a->ncand++] = be;
	}
	for (uint32_t i = 0; i < a->ncand; i++) {
		uint32_t v = a->cand[i], e = a->choice[i], w = ctx->adj[e].to;
		a->par[v] = e;
		a->len[v] = (uint16_t)(a->len[w] + 1);
		a->state[v] = (uint8_t)join_state(a, v, e);
	}
	return a->ncand;
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
	struct alt_score sc = score_v(a, u, a->par[u], t);
	int32_t hops = 0;
	for (uint32_t x = u; x != t && hops < ALT_MAX_HOPS; hops++)
		x = a->ctx->adj[a->par[x]].to;
	return (sc.link_ok ? SCORE_LINK : 0) + (sc.link_ok && sc.sw_ok ? SCORE_SWITCH : 0) - hops;
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

#define ALT_PASSES 3
/* switches up to which pairs of moves are tried */
#define ALT_PAIR_MAX 64

static void improve(struct alt *a, uint32_t t, uint16_t lid0)
{
	bool short_of = false;
	for (uint32_t v = 0; v < a->ns && !short_of; v++)
		short_of = a->par[v] != NONE && a->comp[v] == a->comp[t] &&
		           vscore(a, v, t, lid0) < SCORE_LINK + SCORE_SWITCH - ALT_MAX_HOPS &&
		           a->hosts[v];
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
			    vscore(a, v, t, lid0) >= SCORE_LINK + SCORE_SWITCH - ALT_MAX_HOPS)
				continue;
			for (uint32_t x = v, h = 0; x != t && a->seen[x] != 2 && h < ALT_MAX_HOPS;
			     h++) {
				a->seen[x] = 2;
				x = a->ctx->adj[a->par[x]].to;
			}
		}
		bool moved = false;
		for (uint32_t v = 0; v < a->ns; v++)
			if (a->par[v] != NONE && a->seen[v] == 2)
				moved |= improve_one(a, v, t, lid0);
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
 * to ref? */
static bool lft_apart(struct alt *a, uint32_t v, uint32_t t, uint16_t ref, uint16_t lid, bool *sw)
{
	*sw = false;
	if (!mark_primary(a, v, t, ref))
		return false;
	bool sw_ok = true;
	uint32_t x = v;
	for (unsigned h = 0; x != t; h++) {
		uint32_t y = next_hop(a, x, lid);
		if (y == NONE || h >= ALT_MAX_HOPS)
			return false;
		uint8_t p = a->ctx->t->sws[x].lft[lid];
		if (a->link_mark[a->link[a->ctx->port_base[x] + p]] == a->stamp)
			return false;
		sw_ok &= y == t || a->sw_mark[y] != a->stamp;
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
		if (lft_apart(a, v, t, a->ref[i], lid, &s)) {
			link = true;
			*sw |= s;
		}
	}
	return link;
}

/* Do the engine's routes to lid1 keep apart already, from every host switch? */
static bool engine_disjoint(struct alt *a, uint32_t t, uint16_t lid0, uint16_t lid1)
{
	a->checked = 0;
	for (uint32_t v = 0; v < a->ns; v++) {
		bool sw;
		if (v == t || !a->hosts[v] || next_hop(a, v, lid0) == NONE)
			continue;
		if (!lft_apart_v(a, v, t, lid1, &sw) || !sw)
			return false;
		a->checked++;
	}
	return true;
}

/* What became of a LID's alternate: none (the engine's routes stay: a host switch found no
 * way in), the engine's routes kept (they keep apart already), or a tree of its own. */
enum alt_outcome { ALT_NONE, ALT_ENGINE, ALT_TREE };

/* Route LID lid1 of destination switch t apart from the LIDs before it. ALT_NONE: some host
 * switch routing lid0 found no way in; nothing was changed. A switch without hosts that finds none
 * keeps the engine's route: no packet reaches it on the way to lid1 (no switch in the tree
 * forwards to it), and its own route leads into the tree, where it stays. */
static enum alt_outcome route_alternate(struct alt *a, uint32_t t, uint16_t lid0, uint16_t lid1)
{
	struct routing_ctx *ctx = a->ctx;
	uint32_t need = 0, joined_need = 0;
	for (uint32_t v = 0; v < a->ns; v++) {
		a->par[v] = NONE;
		a->len[v] = 0;
		/* seen 1: routes lid0, so may route lid1 */
		a->seen[v] = v != t && next_hop(a, v, lid0) != NONE;
		need += a->seen[v] && a->hosts[v];
	}
	a->state[t] = a->rules ? a->rules->dst_state : 0;
	if (engine_disjoint(a, t, lid0, lid1))
		return ALT_ENGINE; /* the engine's routes do already (fat trees): kept */
	for (uint16_t level = 1; level < ALT_MAX_HOPS; level++)
		if (!round_grow(a, t, lid1, level))
			break; /* nobody joined at this length: nobody can be one longer */
	while (round_grow(a, t, lid1, 0))
		;
	for (uint32_t v = 0; v < a->ns; v++)
		joined_need += a->par[v] != NONE && a->hosts[v];
	if (joined_need < need)
		return ALT_NONE;
	improve(a, t, lid0);
	for (uint32_t v = 0; v < a->ns; v++) {
		if (a->par[v] == NONE)
			continue;
		uint8_t *lft = ctx->t->sws[v].lft, port = ctx->adj[a->par[v]].port;
		if (lft[lid1] == port)
			continue;
		if (a->undo) {
			struct routing_alt_change *c = vec_push(&a->undo->changes);
			if (c)
				*c = (struct routing_alt_change){v, lid1, lft[lid1]};
		}
		uint32_t *load = ctx->load + ctx->port_base[v];
		if (lft[lid1] && lft[lid1] != 0xff && load[lft[lid1]])
			load[lft[lid1]]--;
		load[port]++;
		lft[lid1] = port;
	}
	return ALT_TREE;
}

/* The host switches whose paths to lid0 and lid1 (or another LID of the block before it)
 * keep apart. */
static void count(struct alt *a, uint32_t t, uint16_t lid0, uint16_t lid1)
{
	for (uint32_t v = 0; v < a->ns; v++) {
		bool sw;
		if (v == t || !a->hosts[v] || next_hop(a, v, lid0) == NONE)
			continue;
		a->stats.sources++;
		a->stats.possible += a->comp[v] == a->comp[t];
		bool link = lft_apart_v(a, v, t, lid1, &sw);
		a->stats.link_disjoint += link;
		a->stats.switch_disjoint += link && sw;
	}
}

/* For LID 2i+1 of a block at d: the LIDs before it, and which host switches have a
 * disjoint pair among them already. */
static void block_refs(struct alt *a, uint32_t t, uint32_t d, uint32_t i)
{
	const struct routing_ctx *ctx = a->ctx;
	a->nref = 0;
	for (uint32_t k = d; k < i && a->nref < 8; k++)
		a->ref[a->nref++] = ctx->dst[k].lid;
	for (uint32_t v = 0; v < a->ns; v++) {
		a->covered[v] = false;
		if (a->nref < 2 || v == t || !a->hosts[v])
			continue;
		for (unsigned j = 0; j < a->nref && !a->covered[v]; j++)
			for (unsigned k = j + 1; k < a->nref && !a->covered[v]; k++) {
				bool sw;
				a->covered[v] = lft_apart(a, v, t, a->ref[j], a->ref[k], &sw);
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
	         *stk = malloc(sizeof(uint32_t) * (ns + 1));
	if (!disc || !low || !pe || !it || !stk) {
		free(disc), free(low), free(pe), free(it), free(stk);
		return -1;
	}
	uint32_t clock = 0, ncomp = 0, sp = 0, vs = 0;
	for (uint32_t v = 0; v < ns; v++)
		disc[v] = NONE;
	for (uint32_t r = 0; r < ns; r++) {
		if (disc[r] != NONE)
			continue;
		/* the DFS path in a->stack (reused), the component stack in stk */
		disc[r] = low[r] = clock++;
		pe[r] = NONE;
		it[r] = ctx->adj_start[r];
		a->stack[vs++] = r;
		stk[sp++] = r;
		while (vs) {
			uint32_t v = a->stack[vs - 1];
			if (it[v] < ctx->adj_start[v + 1]) {
				uint32_t e = it[v]++, w = ctx->adj[e].to;
				/* the edge back to the parent: the same cable, seen from v */
				if (pe[v] != NONE && e == a->peer_edge[pe[v]])
					continue;
				if (disc[w] == NONE) {
					disc[w] = low[w] = clock++;
					pe[w] = e;
					it[w] = ctx->adj_start[w];
					a->stack[vs++] = w;
					stk[sp++] = w;
				} else if (disc[w] < low[v]) {
					low[v] = disc[w];
				}
				continue;
			}
			vs--;
			if (vs) {
				uint32_t u = a->stack[vs - 1];
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
	free(disc), free(low), free(pe), free(it), free(stk);
	return 0;
}

static int alt_init(struct alt *a, struct routing_ctx *ctx)
{
	const struct topo *t = ctx->t;
	uint32_t ns = ctx->nsw, np = ctx->port_base[ns];
	a->ns = ns;
	a->peer = malloc(sizeof(uint32_t) * (np + 1));
	a->link = malloc(sizeof(uint32_t) * (np + 1));
	a->par = malloc(sizeof(uint32_t) * (ns + 1));
	a->len = malloc(sizeof(uint16_t) * (ns + 1));
	a->state = calloc(ns + 1, 1);
	a->link_mark = calloc(t->nports + 1, sizeof(uint32_t));
	a->sw_mark = calloc(ns + 1, sizeof(uint32_t));
	a->cand = malloc(sizeof(uint32_t) * (ns + 1));
	a->choice = malloc(sizeof(uint32_t) * (ns + 1));
	a->seen = malloc(sizeof(uint32_t) * (ns + 1));
	a->covered = calloc(ns + 1, sizeof(bool));
	a->comp = malloc(sizeof(uint32_t) * (ns + 1));
	a->peer_edge = malloc(sizeof(uint32_t) * (ctx->adj_start[ns] + 1));
	uint32_t *edge_at = malloc(sizeof(uint32_t) * (np + 1));
	a->kid = malloc(sizeof(uint32_t) * (ns + 1));
	a->sib = malloc(sizeof(uint32_t) * (ns + 1));
	a->stack = malloc(sizeof(uint32_t) * (ns + 1));
	if (!edge_at || !a->comp || !a->peer_edge || !a->covered || !a->kid || !a->sib ||
	    !a->stack || !a->peer || !a->link || !a->par || !a->len || !a->state || !a->link_mark ||
	    !a->sw_mark || !a->cand || !a->choice || !a->seen) {
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
		}
	for (uint32_t s = 0; s < ns; s++)
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			uint32_t tp = t->nodes[t->sws[s].node].first_port + ctx->adj[e].port;
			uint32_t w = ctx->adj[e].to;
			a->peer_edge[e] =
			    edge_at[ctx->port_base[w] + t->ports[t->ports[tp].peer].num];
		}
	free(edge_at);
	return two_edge_components(a);
}

static void alt_free(struct alt *a)
{
	free(a->peer);
	free(a->link);
	free(a->par);
	free(a->len);
	free(a->state);
	free(a->link_mark);
	free(a->sw_mark);
	free(a->cand);
	free(a->choice);
	free(a->seen);
	free(a->covered);
	free(a->comp);
	free(a->peer_edge);
	free(a->kid);
	free(a->sib);
	free(a->stack);
}

int routing_lmc_alternates(struct routing_ctx *ctx, const struct routing_alt_rules *rules,
                           struct routing_alt_undo *undo, bool *alt)
{
	struct alt a = {.ctx = ctx, .rules = rules, .undo = undo};
	bool any = false;
	for (uint32_t d = 0; d + 1 < (ctx->dst ? ctx->dst_start[ctx->nsw] : 0) && !any; d++)
		any = ctx->dst[d].port && ctx->dst[d + 1].port == ctx->dst[d].port &&
		      ctx->dst[d + 1].lid == ctx->dst[d].lid + 1u;
	if (!any)
		return 0; /* LMC 0: nothing to do */
	bool *hosts = malloc(ctx->nsw + 1);
	if (!hosts || alt_init(&a, ctx) < 0) {
		free(hosts);
		alt_free(&a);
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		return -1;
	}
	routing_host_switches(ctx, hosts);
	a.hosts = hosts;
	for (uint32_t t = 0; t < ctx->nsw; t++) {
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1];) {
			/* a CA port's block: consecutive entries, same port, consecutive LIDs */
			uint32_t end = d + 1;
			while (end < ctx->dst_start[t + 1] &&
			       ctx->dst[end].port == ctx->dst[d].port && ctx->dst[d].port &&
			       ctx->dst[end].lid == ctx->dst[end - 1].lid + 1u)
				end++;
			for (uint32_t i = d; i + 1 < end; i++) {
				uint16_t l0 = ctx->dst[i].lid, l1 = ctx->dst[i + 1].lid;
				a.stats.blocks++;
				block_refs(&a, t, d, i + 1);
				/* only a tree of its own is an alternate to the layering: the
				 * engine's routes kept are layered as primary ones */
				enum alt_outcome o = route_alternate(&a, t, l0, l1);
				a.stats.kept += o == ALT_NONE;
				if (alt && o == ALT_TREE)
					alt[i + 1] = true;
				if (o == ALT_ENGINE) { /* counted already: every one apart */
					a.stats.sources += a.checked;
					a.stats.link_disjoint += a.checked;
					a.stats.switch_disjoint += a.checked;
					/* apart: so on the destination's side of every bridge */
					a.stats.possible += a.checked;
				} else {
					count(&a, t, l0, l1);
				}
			}
			d = end;
		}
	}
	log_info(ctx->log, "routing",
	         "LMC alternates: %u LID pairs (%u kept the engine's routes); from %llu host "
	         "switches (%llu not across a bridge) %llu link-disjoint, %llu switch-disjoint",
	         a.stats.blocks, a.stats.kept, (unsigned long long)a.stats.sources,
	         (unsigned long long)a.stats.possible, (unsigned long long)a.stats.link_disjoint,
	         (unsigned long long)a.stats.switch_disjoint);
	free(hosts);
	alt_free(&a);
	return 0;
}

static void revert_one(struct routing_ctx *ctx, struct routing_alt_change *c)
{
	uint8_t *lft = ctx->t->sws[c->sw].lft;
	uint32_t *load = ctx->load + ctx->port_base[c->sw];
	if (lft[c->lid] && lft[c->lid] != 0xff && load[lft[c->lid]])
		load[lft[c->lid]]--;
	if (c->port && c->port != 0xff)
		load[c->port]++;
	lft[c->lid] = c->port;
	c->sw = UINT32_MAX; /* put back */
}

void routing_lmc_revert(struct routing_ctx *ctx, struct routing_alt_undo *undo)
{
	for (uint32_t i = undo->changes.n; i-- > 0;)
		if (undo->changes.v[i].sw != UINT32_MAX)
			revert_one(ctx, &undo->changes.v[i]);
	vec_free(&undo->changes);
}

void routing_lmc_revert_lid(struct routing_ctx *ctx, struct routing_alt_undo *undo, uint16_t lid)
{
	for (uint32_t i = undo->changes.n; i-- > 0;)
		if (undo->changes.v[i].sw != UINT32_MAX && undo->changes.v[i].lid == lid)
			revert_one(ctx, &undo->changes.v[i]);
}
