/* Weighted hop counts for min-hop (see hop_weights.h): a Dijkstra towards each switch over
 * the switch graph, an edge costing the weight of the port it leaves by. */
#include "routing/hop_weights.h"

#include <stdlib.h>

#include "routing/files.h"
#include "routing/weighted.h"
#include "util/log.h"

/* Each edge's weight from the file's lines: 1 unless listed. How many lines named nothing
 * the fabric has. */
static uint32_t edge_weights(const struct routing_ctx *ctx, const struct guid_line *hw, uint32_t n,
                             uint8_t *w)
{
	const struct topo *t = ctx->t;
	uint32_t nch = ctx->port_base[ctx->nsw], skipped = 0;
	uint8_t *by_chan = malloc(nch + 1);
	for (uint32_t e = 0; e < ctx->adj_start[ctx->nsw]; e++)
		w[e] = 1;
	if (!by_chan)
		return n;
	for (uint32_t c = 0; c < nch; c++)
		by_chan[c] = 1;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t node = u64map_get(&t->by_guid, hw[i].guid);
		uint32_t s = node == U64MAP_NONE ? TOPO_NONE : t->nodes[node].sw;
		if (s == TOPO_NONE || s >= ctx->nsw ||
		    ctx->port_base[s] + hw[i].v[0] >= ctx->port_base[s + 1]) {
			skipped++;
			continue;
		}
		by_chan[ctx->port_base[s] + hw[i].v[0]] = (uint8_t)hw[i].v[1];
	}
	for (uint32_t s = 0; s < ctx->nsw; s++)
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++)
			w[e] = by_chan[ctx->port_base[s] + ctx->adj[e].port];
	free(by_chan);
	return skipped;
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
	const char *path = ctx->cfg->hop_weights_file;
	if (!path[0])
		return 1;
	struct guid_line *hw = NULL;
	uint32_t nhw = 0, ns = ctx->nsw;
	char why[sizeof(ctx->why)];
	if (routing_read_guid_lines(path, &routing_hop_weights_fmt, &hw, &nhw, why, sizeof(why)) <
	    0) {
		/* a site's typo must not leave the fabric without routes (nor fail the chain's
		 * last resort): the file is not used until it is fixed, as OpenSM routes with
		 * every weight 1 when it cannot parse it */
		log_err(ctx->log, "routing", "%s: routing without hop weights until it is fixed",
		        why);
		return 1;
	}
	struct chans ch = {0};
	uint64_t *key = malloc(sizeof(uint64_t) * (ns + 1));
	uint32_t *h = malloc(sizeof(uint32_t) * (ns + 1)),
	         *pos = malloc(sizeof(uint32_t) * (ns + 1));
	hc->cost = malloc(sizeof(uint16_t) * ((size_t)ns * ns + 1));
	hc->w = malloc(ctx->adj_start[ns] + 1);
	if (!key || !h || !pos || !hc->cost || !hc->w || chans_build(ctx, &ch) < 0) {
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		free(hw);
		free(key);
		free(h);
		free(pos);
		chans_free(&ch);
		hop_costs_free(hc);
		return -1;
	}
	uint32_t skipped = edge_weights(ctx, hw, nhw, hc->w);
	if (skipped)
		log_notice(ctx->log, "routing",
		           "%s: %u of %u lines name a switch or port this fabric does not have: "
		           "skipped",
		           path, skipped, nhw);
	for (uint32_t s = 0; s < ns; s++)
		pos[s] = UINT32_MAX;
	struct heap hp = {.h = h, .pos = pos, .n = 0, .key = key};
	for (size_t i = 0; i < (size_t)ns * ns; i++)
		hc->cost[i] = RT_INF;
	for (uint32_t t = 0; t < ns; t++)
		costs_to(ctx, &ch, hc->w, t, key, &hp, hc->cost);
	free(hw);
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
