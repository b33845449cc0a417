/* Layered channel dependency graphs kept acyclic (see cdg.h). */
#include <stdlib.h>
#include <string.h>

#include "routing/cdg.h"

#define NONE UINT32_MAX

static unsigned nports1(const struct cdg *g, uint32_t sw)
{
	return g->np1[sw];
}

int cdg_init(struct cdg *g, const struct routing_ctx *ctx)
{
	memset(g, 0, sizeof(*g));
	g->ctx = ctx;
	uint32_t ns = ctx->nsw;
	g->nch = ctx->port_base[ns];
	g->dep_base = malloc(sizeof(uint32_t) * (ns + 1));
	if (!g->dep_base)
		return -1;
	/* each switch's ports + 1, read on every step of a search: one load, not three */
	g->np1 = malloc(sizeof(uint16_t) * (ns + 1));
	if (!g->np1)
		return -1;
	for (uint32_t s = 0; s < ns; s++)
		g->np1[s] = (uint16_t)(ctx->t->nodes[ctx->t->sws[s].node].nports + 1u);
	uint32_t ndeps = 0;
	for (uint32_t s = 0; s < ns; s++) {
		unsigned np = nports1(g, s);
		g->dep_base[s] = ndeps;
		ndeps += np * np;
	}
	g->deps = calloc(ndeps + 1, sizeof(uint16_t));
	g->to_sw = malloc(sizeof(uint32_t) * (g->nch + 1));
	g->in = calloc(g->nch + 1, 1);
	g->stamp = calloc(g->nch + 1, sizeof(uint32_t));
	g->stk = malloc(sizeof(uint32_t) * (g->nch + 1));
	g->fwd = malloc(sizeof(uint32_t) * (g->nch + 1));
	g->bwd = malloc(sizeof(uint32_t) * (g->nch + 1));
	g->pool = malloc(sizeof(uint64_t) * 2 * (g->nch + 1));
	g->slots = malloc(sizeof(uint32_t) * 2 * (g->nch + 1));
	g->owner = malloc(sizeof(uint32_t) * (g->nch + 1));
	if (!g->deps || !g->to_sw || !g->in || !g->stamp || !g->stk || !g->fwd || !g->bwd ||
	    !g->pool || !g->slots || !g->owner)
		return -1;
	for (uint32_t c = 0; c < g->nch; c++)
		g->to_sw[c] = NONE;
	for (uint32_t s = 0; s < ns; s++)
		for (uint32_t c = ctx->port_base[s]; c < ctx->port_base[s + 1]; c++)
			g->owner[c] = s;
	const struct topo *t = ctx->t;
	for (uint32_t s = 0; s < ns; s++) {
		const struct topo_node *n = &t->nodes[t->sws[s].node];
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			uint8_t p = ctx->adj[e].port;
			uint32_t peer = t->ports[n->first_port + p].peer;
			g->to_sw[ctx->port_base[s] + p] = ctx->adj[e].to;
			g->in[ctx->port_base[s] + p] = t->ports[peer].num;
		}
	}
	return 0;
}

void cdg_free(struct cdg *g)
{
	free(g->np1);
	free(g->dep_base);
	free(g->deps);
	free(g->to_sw);
	free(g->in);
	for (unsigned l = 0; l < CDG_MAX_LAYERS; l++)
		free(g->ord[l]);
	free(g->stamp);
	free(g->stk);
	free(g->fwd);
	free(g->bwd);
	free(g->pool);
	free(g->slots);
	free(g->owner);
	memset(g, 0, sizeof(*g));
}

uint32_t cdg_channel(const struct cdg *g, uint32_t sw, unsigned port)
{
	uint32_t c = g->ctx->port_base[sw] + port;
	return g->to_sw[c] == NONE ? NONE : c;
}

bool cdg_has(const struct cdg *g, unsigned layer, uint32_t sw, unsigned in, unsigned out)
{
	unsigned np = nports1(g, sw);
	return g->deps[g->dep_base[sw] + in * np + out] & (1u << layer);
}

/* The channel a packet holds when it enters sw by port in. */
static uint32_t channel_into(const struct cdg *g, uint32_t sw, unsigned in)
{
	uint32_t back = g->ctx->port_base[sw] + in;
	uint32_t k = g->to_sw[back];
	return k == NONE ? NONE : g->ctx->port_base[k] + g->in[back];
}

/* Channels reachable from `from` over layer edges with positions up to ub; true when `stop`
 * is among them (a cycle). Found channels go to g->fwd. */
static bool search_forward(struct cdg *g, unsigned layer, uint32_t from, uint32_t ub, uint32_t stop)
{
	const uint32_t *ord = g->ord[layer];
	const uint32_t *pb = g->ctx->port_base;
	uint16_t bit = (uint16_t)(1u << layer);
	uint32_t top = 0;
	g->nfwd = 0;
	g->stk[top++] = from;
	g->stamp[from] = g->epoch;
	while (top) {
		uint32_t c = g->stk[--top];
		g->fwd[g->nfwd++] = c;
		uint32_t m = g->to_sw[c];
		unsigned np = nports1(g, m), q = g->in[c];
		const uint16_t *row = g->deps + g->dep_base[m] + q * np;
		for (unsigned o = 1; o < np; o++) {
			if (!(row[o] & bit))
				continue;
			uint32_t w = pb[m] + o;
			if (w == stop)
				return true;
			if (g->stamp[w] != g->epoch && ord[w] < ub) {
				g->stamp[w] = g->epoch;
				g->stk[top++] = w;
			}
		}
	}
	return false;
}

/* Channels that reach `from` over layer edges with positions from lb up: into g->bwd. */
static void search_backward(struct cdg *g, unsigned layer, uint32_t from, uint32_t lb)
{
	const uint32_t *owner = g->owner;
	const uint32_t *ord = g->ord[layer];
	uint16_t bit = (uint16_t)(1u << layer);
	uint32_t top = 0;
	g->nbwd = 0;
	g->stk[top++] = from;
	g->stamp[from] = g->epoch;
	while (top) {
		uint32_t c = g->stk[--top];
		g->bwd[g->nbwd++] = c;
		uint32_t m = owner[c];
		unsigned np = nports1(g, m), o = c - g->ctx->port_base[m];
		const uint16_t *base = g->deps + g->dep_base[m];
		for (unsigned q = 1; q < np; q++) {
			if (!(base[q * np + o] & bit))
				continue;
			uint32_t w = channel_into(g, m, q);
			if (w != NONE && g->stamp[w] != g->epoch && ord[w] > lb) {
				g->stamp[w] = g->epoch;
				g->stk[top++] = w;
			}
		}
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int cdg_add(struct cdg *g, unsigned layer, uint32_t sw, unsigned in, unsigned out)
{
	unsigned np = nports1(g, sw);
	uint16_t *d = &g->deps[g->dep_base[sw] + in * np + out];
	uint16_t bit = (uint16_t)(1u << layer);
	if (*d & bit)
		return 0;
	uint32_t x = channel_into(g, sw, in), y = cdg_channel(g, sw, out);
	if (x == NONE || y == NONE)
		return -1; /* not between switch links: no such dependency */
	if (!g->ord[layer]) {
		if (!(g->ord[layer] = malloc(sizeof(uint32_t) * (g->nch + 1))))
			return -2;
		for (uint32_t c = 0; c < g->nch; c++)
			g->ord[layer][c] = c;
	}
	uint32_t *ord = g->ord[layer];
	if (ord[x] < ord[y]) {
		*d |= bit;
		return 1;
	}
	/* y comes first: unless y reaches x (a cycle), what reaches x (down to y's place) moves
	 * before what y reaches (up to x's place), in the positions they held between them */
	uint32_t lb = ord[y], ub = ord[x];
	g->epoch++;
	if (search_forward(g, layer, y, ub, x))
		return -1;
	g->epoch++;
	search_backward(g, layer, x, lb);
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->nbwd; i++)
		g->pool[n++] = (uint64_t)ord[g->bwd[i]] << 32 | g->bwd[i];
	uint32_t nb = n;
	for (uint32_t i = 0; i < g->nfwd; i++)
		g->pool[n++] = (uint64_t)ord[g->fwd[i]] << 32 | g->fwd[i];
	/* each side in its own order; the positions, sorted, dealt out backward side first */
	qsort(g->pool, nb, sizeof(uint64_t), cmp_u64);
	qsort(g->pool + nb, n - nb, sizeof(uint64_t), cmp_u64);
	for (uint32_t i = 0; i < n; i++)
		g->slots[i] = (uint32_t)(g->pool[i] >> 32);
	qsort(g->slots, n, sizeof(uint32_t), cmp_u32);
	for (uint32_t i = 0; i < n; i++)
		ord[(uint32_t)g->pool[i]] = g->slots[i];
	*d |= bit;
	return 1;
}

void cdg_remove(struct cdg *g, unsigned layer, uint32_t sw, unsigned in, unsigned out)
{
	unsigned np = nports1(g, sw);
	g->deps[g->dep_base[sw] + in * np + out] &= (uint16_t) ~(1u << layer);
}
