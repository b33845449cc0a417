/* Channel dependency graphs in layers, kept acyclic as dependencies are added: what the
 * engines that separate traffic by VL (dfsssp, nue) build their layers with.
 *
 * A channel is a switch port leading to another switch (ctx->port_base[s] + port). A
 * dependency at switch sw from input port `in` to output port `out` is the edge from the
 * channel arriving by `in` to the channel leaving by `out`: a packet holding the first waits
 * for the second. Each layer keeps a topological order of its channels, updated on every
 * insertion (Pearce and Kelly's dynamic topological sort), so that an insertion that would
 * close a cycle is refused by a search bounded to the channels between the two ends, not the
 * whole graph. Layers only grow, except for undoing an attempt (cdg_remove keeps the order
 * valid). */
#ifndef IBSMD_ROUTING_CDG_H
#define IBSMD_ROUTING_CDG_H

#include "routing/engine.h"

#define CDG_MAX_LAYERS 15

struct cdg {
	const struct routing_ctx *ctx;
	uint32_t nch;
	uint32_t *dep_base;            /* per switch: where its (ports + 1)^2 dependencies start */
	uint16_t *np1;                 /* per switch: its ports + 1 */
	uint16_t *deps;                /* per dependency: bit l when layer l has it */
	uint32_t *to_sw;               /* per channel: the switch it leads to (UINT32_MAX: none) */
	uint8_t *in;                   /* ... and the port it arrives by */
	uint32_t *ord[CDG_MAX_LAYERS]; /* per layer: each channel's position (lazily made) */
	uint32_t *stamp, epoch;
	uint32_t *owner; /* per channel: its switch */
	uint32_t *stk, *fwd, *bwd, *slots;
	uint64_t *pool;
	uint32_t nfwd, nbwd;
};

/* The channels of ctx's switch graph. 0, or -1 when out of memory. */
int cdg_init(struct cdg *g, const struct routing_ctx *ctx);
void cdg_free(struct cdg *g);

/* The channel leaving switch sw by port (UINT32_MAX if it leads to no switch). */
uint32_t cdg_channel(const struct cdg *g, uint32_t sw, unsigned port);

bool cdg_has(const struct cdg *g, unsigned layer, uint32_t sw, unsigned in, unsigned out);
/* Add the dependency to a layer: 1 added, 0 it was there, -1 refused (it would close a cycle),
 * -2 out of memory. */
int cdg_add(struct cdg *g, unsigned layer, uint32_t sw, unsigned in, unsigned out);
void cdg_remove(struct cdg *g, unsigned layer, uint32_t sw, unsigned in, unsigned out);

#endif
