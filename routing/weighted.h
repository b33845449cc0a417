/* Shortest paths under link weights, what sssp, dfsssp and nue route with: every switch's
 * cheapest route towards a destination switch, where a link costs what the engine says (a
 * hop, plus the paths already laid on it). */
#ifndef IBSMD_ROUTING_WEIGHTED_H
#define IBSMD_ROUTING_WEIGHTED_H

#include "routing/engine.h"

/* the peer of every switch port that leads to another switch, by channel (port_base + port) */
struct chans {
	uint32_t *to_sw; /* NONE: no switch there */
	uint8_t *in;     /* the port it arrives by */
	uint32_t *rev;   /* edge index (adj) -> the edge back */
};

int chans_build(const struct routing_ctx *ctx, struct chans *c);
void chans_free(struct chans *c);

/* a binary heap of switches keyed by cost, with decrease-key */
struct heap {
	uint32_t *h, *pos, n;
	const uint64_t *key;
};

/* The switch of least key (removed), and push s or lower its place after its key fell. */
uint32_t heap_pop(struct heap *hp);
void heap_push_or_lower(struct heap *hp, uint32_t s);

struct dijkstra {
	uint64_t *cost;
	uint32_t *next; /* edge (adj index) each switch leaves by towards the root */
	uint32_t *order, nsettled;
	struct heap hp;
};

/* LID k > 0 of a CA port's block at switch t whose first LID (base) is routed already,
 * hops[] being each switch's hop count to t (RT_INF: none): each switch takes the k-th of
 * its shortest ways (by port) after the one base takes. On a fat tree that keeps the
 * block's paths apart from every host switch (they climb by other switches and come down
 * by others), for a pass over the switches instead of a Dijkstra; routing/lmc.c then
 * routes apart whatever it leaves together. */
void weighted_spread_lid(struct routing_ctx *ctx, const struct chans *c, const uint16_t *hops,
                         uint32_t t, uint16_t base, uint16_t lid, unsigned k);
/* d's hop counts (after dijkstra_to) into hops[], as weighted_spread_lid takes them. */
void dijkstra_hops(const struct routing_ctx *ctx, const struct dijkstra *d, uint16_t *hops);

/* Cheapest routes of every switch to switch t over the weights w (per edge, as it is left),
 * fewest hops first and then the least loaded bottleneck link:
 * d->next[s] the edge s leaves by, d->order the switches from t outwards. d's arrays hold
 * ctx->nsw entries (d->hp.key = d->cost, d->hp.pos all UINT32_MAX before the first call). */
void dijkstra_to(const struct routing_ctx *ctx, const struct chans *c, const uint64_t *w,
                 uint32_t t, struct dijkstra *d);
/* The index (into ctx->dst) of the first host LID of switch t, UINT32_MAX when none. */
uint32_t weighted_first_host(const struct routing_ctx *ctx, uint32_t t);
/* Switch t's own LIDs (port 0) take its first host's routes: they carry management only,
 * and a tree of their own would add channel dependencies (and layers) for nothing. Without
 * hosts, their own cheapest routes (weights untouched). */
void weighted_switch_lids(struct routing_ctx *ctx, const struct chans *c, const uint64_t *w,
                          uint32_t t, struct dijkstra *d);

int dijkstra_alloc(struct dijkstra *d, uint32_t nsw);
void dijkstra_free(struct dijkstra *d);
/* The switches' indexes in node GUID order (malloc'd, ctx->nsw of them), or NULL. */
uint32_t *switches_by_guid(const struct routing_ctx *ctx);

/* Host ports hanging off each switch: the sources a destination's routes carry. */
void count_hosts(const struct routing_ctx *ctx, uint32_t *hosts);

/* Link weights as sssp lays routes: hosts^2 + 1 (more than all the host paths any link can
 * carry) plus the host paths laid on the link so far; each route laid adds the host paths it
 * carries to its links. */
struct weights {
	uint64_t *w;     /* per edge (adj index) */
	uint32_t *hosts; /* per switch */
	uint64_t *carried;
};
int weights_init(struct weights *ww, const struct routing_ctx *ctx);
void weights_free(struct weights *ww);
/* A destination's tree (d, as dijkstra_to left it) now carries every host's paths to it:
 * from the farthest switches in, each passes on its own hosts and all it received. Counts
 * the routes in ctx->load too. */
void weights_lay(struct weights *ww, struct routing_ctx *ctx, const struct dijkstra *d);

#endif
