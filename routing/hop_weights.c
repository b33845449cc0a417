/* Weighted hop counts for min-hop (see hop_weights.h): a Dijkstra towards each switch over
 * the switch graph, an edge costing the weight of the port it leaves by. */
#include "routing/hop_weights.h"

#include <stdlib.h>
#include <string.h>

#include "routing/files.h"
#include "routing/weighted.h"
#include "util/log.h"

struct chan_weights {
	const struct routing_ctx *ctx;
	uint8_t *by_chan; /* [port_base[s] + port] */
};

static void take_weight(void *arg, uint32_t sw, const struct guid_line *l)
{
	struct chan_weights *cw = arg;
	cw->by_chan[cw->ctx->port_base[sw] + l->v[0]] = (uint8_t)l->v[1];
}

/* Each edge's weight from hop_weights_file: 1 unless listed. 1 when the file was read, 0
 * when it was refused (logged: minhop then routes without weights), -1 out of memory. */
static int edge_weights(const struct routing_ctx *ctx, uint8_t *w)
{
	uint32_t nch = ctx->port_base[ctx->nsw];
	struct chan_weights cw = {ctx, malloc(nch + 1)};
	if (!cw.by_chan)
		return -1;
	memset(cw.by_chan, 1, nch + 1);
	/* a site's typo must not leave the fabric without routes (nor fail the chain's last
	 * resort): the file is not used until it is fixed, as OpenSM routes with every weight
	 * 1 when it cannot parse it */
	int rc =
	    routing_switch_map(ctx, ctx->cfg->hop_weights_file, &routing_hop_weights_fmt, true,
	                       take_weight, &cw, "routing without hop weights until it is fixed");
	for (uint32_t s = 0; s < ctx->nsw; s++)
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++)
			w[e] = cw.by_chan[ctx->port_base[s] + ctx->adj[e].port];
	free(cw.by_chan);
	return rc;
}

/* cost[s * nsw + t] for every s, towards t: relaxing the edge s -> m (the one back of m's
 * edge to s) by its weight. */
static void costs_to(const struct routing_ctx *ctx, const struct chans *ch, const uint8_t *w,
                     uint32_t t, uint64_t *key, struct heap *hp, uint16_t *cost)
{
	uint32_t ns = ctx->nsw;
	for (uint32_t s = 0; s < ns; s++)
		key[s] = UINT64_MAX;
	key[t] = 0;
	hp->n = 0;
	heap_push_or_lower(hp, t);
	while (hp->n) {
		uint32_t m = heap_pop(hp);
		cost[(size_t)m * ns + t] = key[m] >= RT_INF ? RT_INF : (uint16_t)key[m];
		for (uint32_t e = ctx->adj_start[m]; e < ctx->adj_start[m + 1]; e++) {
			uint32_t s = ctx->adj[e].to, back = ch->rev[e];
			if (back == UINT32_MAX)
				continue;
			uint64_t c = key[m] + w[back];
			if (c < key[s]) {
				key[s] = c;
				heap_push_or_lower(hp, s);
			}
		}
	}
}

int hop_costs_build(struct routing_ctx *ctx, struct hop_costs *hc)
{
	*hc = (struct hop_costs){0};
	if (!ctx->cfg->hop_weights_file[0])
		return 1;
	uint32_t ns = ctx->nsw;
	struct chans ch = {0};
	uint64_t *key = malloc(sizeof(uint64_t) * (ns + 1));
	uint32_t *h = malloc(sizeof(uint32_t) * (ns + 1)),
	         *pos = malloc(sizeof(uint32_t) * (ns + 1));
	hc->cost = malloc(sizeof(uint16_t) * ((size_t)ns * ns + 1));
	hc->w = malloc(ctx->adj_start[ns] + 1);
	int read = -1;
	if (!key || !h || !pos || !hc->cost || !hc->w || chans_build(ctx, &ch) < 0 ||
	    (read = edge_weights(ctx, hc->w)) <= 0) {
		if (read < 0)
			snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		free(key);
		free(h);
		free(pos);
		chans_free(&ch);
		hop_costs_free(hc);
		return read < 0 ? -1 : 1;
	}
	for (uint32_t s = 0; s < ns; s++)
		pos[s] = UINT32_MAX;
	struct heap hp = {.h = h, .pos = pos, .n = 0, .key = key};
	for (size_t i = 0; i < (size_t)ns * ns; i++)
		hc->cost[i] = RT_INF;
	for (uint32_t t = 0; t < ns; t++)
		costs_to(ctx, &ch, hc->w, t, key, &hp, hc->cost);
	free(key);
	free(h);
	free(pos);
	chans_free(&ch);
	return 0;
}

void hop_costs_free(struct hop_costs *hc)
{
	free(hc->cost);
	free(hc->w);
	*hc = (struct hop_costs){0};
}
