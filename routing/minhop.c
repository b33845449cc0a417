/* min-hop: every switch forwards each LID along a shortest path, balancing the LIDs over the
 * ports that are equally short, as OpenSM's default engine does. One BFS per destination
 * switch: O(switches x (switches + links) + LIDs x ports), linear in hosts x switches. */
#include <stdlib.h>

#include "routing/engine.h"

static int minhop_unicast(struct routing_ctx *ctx, void *state)
{
	(void)state;
	uint32_t ns = ctx->nsw;
	uint16_t *dist = malloc(sizeof(uint16_t) * (ns + 1));
	uint32_t *queue = malloc(sizeof(uint32_t) * (ns + 1));
	uint32_t *cand = malloc(sizeof(uint32_t) * 256);
	if (!dist || !queue || !cand) {
		free(dist);
		free(queue);
		free(cand);
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		return -1;
	}
	for (uint32_t t = 0; t < ns; t++) {
		if (ctx->dst_start[t] == ctx->dst_start[t + 1])
			continue; /* nothing hangs off this switch */
		routing_bfs(ctx, t, dist, queue);
		routing_assign_local(ctx, t);
		for (uint32_t s = 0; s < ns; s++) {
			if (s == t || dist[s] == RT_INF)
				continue;
			uint32_t n = 0;
			for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1] && n < 256;
			     e++)
				if (dist[ctx->adj[e].to] + 1 == dist[s])
					cand[n++] = e;
			routing_assign(ctx, s, t, cand, n);
		}
	}
	free(dist);
	free(queue);
	free(cand);
	return 0;
}

const struct routing_engine routing_minhop = {
    .name = "minhop",
    .summary = "shortest paths, balanced over equal ports (not deadlock free in general)",
    .unicast = minhop_unicast,
};
