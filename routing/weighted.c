/* Shortest paths under link weights: Dijkstra towards a destination switch over the switch
 * graph's directed links (see weighted.h). */
#include <stdlib.h>
#include <string.h>

#include "routing/weighted.h"

#define NONE UINT32_MAX

#define DIJKSTRA_HOP_SHIFT 48
#define DIJKSTRA_LOAD_MASK ((1ull << DIJKSTRA_HOP_SHIFT) - 1)

int chans_build(const struct routing_ctx *ctx, struct chans *c)
{
	uint32_t nch = ctx->port_base[ctx->nsw], ne = ctx->adj_start[ctx->nsw];
	c->to_sw = malloc(sizeof(uint32_t) * (nch + 1));
	c->in = calloc(nch + 1, 1);
	c->rev = malloc(sizeof(uint32_t) * (ne + 1));
	if (!c->to_sw || !c->in || !c->rev)
		return -1;
	for (uint32_t i = 0; i < nch; i++)
		c->to_sw[i] = NONE;
	const struct topo *t = ctx->t;
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		const struct topo_node *n = &t->nodes[t->sws[s].node];
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			uint8_t p = ctx->adj[e].port;
			uint32_t peer = t->ports[n->first_port + p].peer;
			c->to_sw[ctx->port_base[s] + p] = ctx->adj[e].to;
			c->in[ctx->port_base[s] + p] = t->ports[peer].num;
		}
	}
	for (uint32_t s = 0; s < ctx->nsw; s++)
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			uint32_t m = ctx->adj[e].to;
			uint8_t q = c->in[ctx->port_base[s] + ctx->adj[e].port];
			c->rev[e] = NONE;
			for (uint32_t f = ctx->adj_start[m]; f < ctx->adj_start[m + 1]; f++)
				if (ctx->adj[f].port == q)
					c->rev[e] = f;
		}
	return 0;
}

void chans_free(struct chans *c)
{
	free(c->to_sw);
	free(c->in);
	free(c->rev);
}

/* ---- a binary heap of switches keyed by cost, with decrease-key ---- */

static void heap_swap(struct heap *hp, uint32_t a, uint32_t b)
{
	uint32_t x = hp->h[a];
	hp->h[a] = hp->h[b];
	hp->h[b] = x;
	hp->pos[hp->h[a]] = a;
	hp->pos[hp->h[b]] = b;
}

static void heap_up(struct heap *hp, uint32_t i)
{
	while (i && hp->key[hp->h[(i - 1) / 2]] > hp->key[hp->h[i]]) {
		heap_swap(hp, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

uint32_t heap_pop(struct heap *hp)
{
	uint32_t top = hp->h[0];
	hp->pos[top] = NONE;
	if (--hp->n) {
		hp->h[0] = hp->h[hp->n];
		hp->pos[hp->h[0]] = 0;
		for (uint32_t i = 0;;) {
			uint32_t l = 2 * i + 1, r = l + 1, m = i;
			if (l < hp->n && hp->key[hp->h[l]] < hp->key[hp->h[m]])
				m = l;
			if (r < hp->n && hp->key[hp->h[r]] < hp->key[hp->h[m]])
				m = r;
			if (m == i)
				break;
			heap_swap(hp, i, m);
			i = m;
		}
	}
	return top;
}

void heap_push_or_lower(struct heap *hp, uint32_t s)
{
	if (hp->pos[s] == NONE) {
		hp->h[hp->n] = s;
		hp->pos[s] = hp->n++;
	}
	heap_up(hp, hp->pos[s]);
}

/* Cheapest routes of every switch to switch t over the weights w (per edge, as it is left):
 * fewest hops first, then the least loaded bottleneck. A path's cost is its hops in the top
 * bits and its most loaded link below (saturating): on tori the bottleneck spreads a shift
 * permutation's flows better than the sum of the loads did (worst link load 14-15 against
 * 18-20 on a 6x6x6 torus, 44-48 against 64 on an 8x8x8 one; OpenSM's sssp: 15 and 36),
 * and fat trees come out the same. Equal costs go to the lower port. */
void dijkstra_to(const struct routing_ctx *ctx, const struct chans *c, const uint64_t *w,
                 uint32_t t, struct dijkstra *d)
{
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		d->cost[s] = UINT64_MAX;
		d->next[s] = NONE;
	}
	d->nsettled = 0;
	d->hp.n = 0;
	d->cost[t] = 0;
	heap_push_or_lower(&d->hp, t);
	while (d->hp.n) {
		uint32_t n = heap_pop(&d->hp);
		d->order[d->nsettled++] = n;
		for (uint32_t e = ctx->adj_start[n]; e < ctx->adj_start[n + 1]; e++) {
			uint32_t m = ctx->adj[e].to, back = c->rev[e];
			if (back == NONE)
				continue;
			uint64_t hops = d->cost[n] >> DIJKSTRA_HOP_SHIFT,
			         worst = d->cost[n] & DIJKSTRA_LOAD_MASK,
			         wl = w[back] < DIJKSTRA_LOAD_MASK ? w[back] : DIJKSTRA_LOAD_MASK;
			uint64_t nc = (hops + 1) << DIJKSTRA_HOP_SHIFT | (wl > worst ? wl : worst);
			if (nc < d->cost[m]) {
				d->cost[m] = nc;
				d->next[m] = back;
				heap_push_or_lower(&d->hp, m);
			} else if (nc == d->cost[m] && d->hp.pos[m] != NONE &&
			           ctx->adj[back].port < ctx->adj[d->next[m]].port) {
				/* equally cheap: the lower port, not the neighbour settled first,
				 * so that ties fall the same way on every switch of a level
				 * whatever the switches' indexes (the SM's place) */
				d->next[m] = back;
			}
		}
	}
}

void dijkstra_hops(const struct routing_ctx *ctx, const struct dijkstra *d, uint16_t *hops)
{
	for (uint32_t s = 0; s < ctx->nsw; s++)
		hops[s] = d->cost[s] == UINT64_MAX ? RT_INF
		                                   : (uint16_t)(d->cost[s] >> DIJKSTRA_HOP_SHIFT);
}

void weighted_spread_lid(struct routing_ctx *ctx, const struct chans *c, const uint16_t *hops,
                         uint32_t t, uint16_t base, uint16_t lid, unsigned k)
{
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		if (s == t || hops[s] == RT_INF)
			continue;
		uint8_t *lft = ctx->t->sws[s].lft, cand[256];
		unsigned n = 0, at = 0;
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1] && n < 256; e++) {
			uint32_t m = ctx->adj[e].to;
			if (c->rev[e] == NONE || hops[m] == RT_INF || hops[m] + 1u != hops[s])
				continue;
			if (ctx->adj[e].port == lft[base])
				at = n;
			cand[n++] = ctx->adj[e].port;
		}
		if (!n)
			continue;
		lft[lid] = cand[(at + k) % n];
		/* the ports' count of LIDs (lmc.c's tie-break, moved when it routes one anew),
		 * though not the Dijkstra weights */
		ctx->load[ctx->port_base[s] + lft[lid]]++;
	}
}

struct guid_key {
	uint64_t guid;
	uint32_t s;
};

static int cmp_guid_key(const void *a, const void *b)
{
	const struct guid_key *x = a, *y = b;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

uint32_t *switches_by_guid(const struct routing_ctx *ctx)
{
	uint32_t ns = ctx->nsw;
	uint32_t *order = malloc(sizeof(uint32_t) * (ns + 1));
	struct guid_key *key = malloc(sizeof(*key) * (ns + 1));
	if (!order || !key) {
		free(order);
		free(key);
		return NULL;
	}
	for (uint32_t s = 0; s < ns; s++) {
		key[s].guid = ctx->t->nodes[ctx->t->sws[s].node].guid;
		key[s].s = s;
	}
	qsort(key, ns, sizeof(*key), cmp_guid_key);
	for (uint32_t s = 0; s < ns; s++)
		order[s] = key[s].s;
	free(key);
	return order;
}

/* Host ports hanging off each switch: the sources a destination's routes carry. */
void count_hosts(const struct routing_ctx *ctx, uint32_t *hosts)
{
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		hosts[s] = 0;
		uint8_t last = 0;
		for (uint32_t d = ctx->dst_start[s]; d < ctx->dst_start[s + 1]; d++)
			if (ctx->dst[d].port && ctx->dst[d].port != last) {
				hosts[s]++;
				last = ctx->dst[d].port;
			}
	}
}

int dijkstra_alloc(struct dijkstra *d, uint32_t nsw)
{
	memset(d, 0, sizeof(*d));
	d->cost = malloc(sizeof(uint64_t) * (nsw + 1));
	d->next = malloc(sizeof(uint32_t) * (nsw + 1));
	d->order = malloc(sizeof(uint32_t) * (nsw + 1));
	d->hp.h = malloc(sizeof(uint32_t) * (nsw + 1));
	d->hp.pos = malloc(sizeof(uint32_t) * (nsw + 1));
	if (!d->cost || !d->next || !d->order || !d->hp.h || !d->hp.pos)
		return -1;
	d->hp.key = d->cost;
	for (uint32_t s = 0; s < nsw; s++)
		d->hp.pos[s] = NONE;
	return 0;
}

void dijkstra_free(struct dijkstra *d)
{
	free(d->cost);
	free(d->next);
	free(d->order);
	free(d->hp.h);
	free(d->hp.pos);
	memset(d, 0, sizeof(*d));
}

int weights_init(struct weights *ww, const struct routing_ctx *ctx)
{
	uint32_t ns = ctx->nsw, ne = ctx->adj_start[ns];
	ww->w = malloc(sizeof(uint64_t) * (ne + 1));
	ww->hosts = malloc(sizeof(uint32_t) * (ns + 1));
	ww->carried = malloc(sizeof(uint64_t) * (ns + 1));
	if (!ww->w || !ww->hosts || !ww->carried)
		return -1;
	count_hosts(ctx, ww->hosts);
	uint64_t nhosts = 0;
	for (uint32_t s = 0; s < ns; s++)
		nhosts += ww->hosts[s];
	for (uint32_t e = 0; e < ne; e++)
		ww->w[e] = nhosts * nhosts + 1;
	return 0;
}

void weights_free(struct weights *ww)
{
	free(ww->w);
	free(ww->hosts);
	free(ww->carried);
	memset(ww, 0, sizeof(*ww));
}

void weights_lay(struct weights *ww, struct routing_ctx *ctx, const struct dijkstra *d)
{
	for (uint32_t k = 0; k < d->nsettled; k++)
		ww->carried[d->order[k]] = ww->hosts[d->order[k]];
	for (uint32_t k = d->nsettled; k-- > 1;) {
		uint32_t s = d->order[k], e = d->next[s];
		ww->w[e] += ww->carried[s];
		ww->carried[ctx->adj[e].to] += ww->carried[s];
		ctx->load[ctx->port_base[s] + ctx->adj[e].port]++;
	}
}

uint32_t weighted_first_host(const struct routing_ctx *ctx, uint32_t t)
{
	for (uint32_t i = ctx->dst_start[t]; i < ctx->dst_start[t + 1]; i++)
		if (ctx->dst[i].port)
			return i;
	return NONE;
}

void weighted_switch_lids(struct routing_ctx *ctx, const struct chans *c, const uint64_t *w,
                          uint32_t t, struct dijkstra *d)
{
	uint32_t first = weighted_first_host(ctx, t);
	bool routed = false;
	for (uint32_t i = ctx->dst_start[t]; i < ctx->dst_start[t + 1]; i++) {
		if (ctx->dst[i].port)
			continue;
		uint16_t lid = ctx->dst[i].lid;
		if (first != NONE) {
			uint16_t like = ctx->dst[first].lid;
			for (uint32_t s = 0; s < ctx->nsw; s++)
				if (s != t)
					ctx->t->sws[s].lft[lid] = ctx->t->sws[s].lft[like];
			continue;
		}
		if (!routed)
			dijkstra_to(ctx, c, w, t, d);
		routed = true;
		for (uint32_t k = 1; k < d->nsettled; k++) {
			uint32_t s = d->order[k];
			ctx->t->sws[s].lft[lid] = ctx->adj[d->next[s]].port;
		}
	}
}
