/* Multicast trees: the one every engine gets unless it brings its own (engine.mcast_tree).
 *
 * One tree per MLID over the switches, rooted at the switch whose farthest member switch is
 * nearest (groups with different members then spread over different roots rather than all
 * crossing one), a breadth-first tree from that root over the switch graph unicast routing
 * uses (routing_bfs), pruned to the branches that lead to member switches: one path between
 * any two members, so nothing is copied twice and nothing loops. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "routing/parallel.h"

/* One BFS per switch, each writing its own row: spread over the CPUs in chunks (a chunk's
 * scratch allocated once). At 3,584 switches of 64 ports this is 800 million edge visits,
 * most of a bring-up's routing on one CPU. */
struct hops_job {
	const struct routing_ctx *ctx;
	uint8_t *d;
	atomic_bool failed;
};
#define HOPS_CHUNK 32u

static void hops_chunk(void *arg, uint32_t c)
{
	struct hops_job *j = arg;
	uint32_t n = j->ctx->nsw, r0 = c * HOPS_CHUNK;
	uint16_t *dist = malloc(sizeof(uint16_t) * (n + 1));
	uint32_t *queue = malloc(sizeof(uint32_t) * (n + 1));
	if (!dist || !queue) {
		atomic_store(&j->failed, true);
		free(dist);
		free(queue);
		return;
	}
	for (uint32_t r = r0; r < n && r < r0 + HOPS_CHUNK; r++) {
		routing_bfs(j->ctx, r, dist, queue);
		uint8_t *row = j->d + (size_t)r * n;
		for (uint32_t s = 0; s < n; s++)
			row[s] = dist[s] >= RT_HOPS_INF ? RT_HOPS_INF : (uint8_t)dist[s];
	}
	free(dist);
	free(queue);
}

int routing_hops_build(const struct routing_ctx *ctx, struct routing_hops *h)
{
	uint32_t n = ctx->nsw;
	uint8_t *d = malloc((size_t)n * n + 1);
	if (!d)
		return -1;
	struct hops_job j = {.ctx = ctx, .d = d};
	atomic_init(&j.failed, false);
	routing_parallel((n + HOPS_CHUNK - 1) / HOPS_CHUNK, ctx->threads, hops_chunk, &j);
	if (atomic_load(&j.failed)) {
		free(d);
		return -1;
	}
	free(h->d);
	h->d = d;
	h->n = n;
	return 0;
}

void routing_hops_free(struct routing_hops *h)
{
	free(h->d);
	h->d = NULL;
	h->n = 0;
}

int routing_mcast_default(const struct routing_ctx *ctx, const struct routing_hops *h,
                          const uint32_t *member_sw, uint32_t nmembers, uint8_t *up_port)
{
	uint32_t n = ctx->nsw;
	if (!nmembers || h->n != n)
		return -1;
	/* the root: the switch with the shortest longest distance to a member switch */
	uint32_t root = UINT32_MAX;
	unsigned best = RT_HOPS_INF + 1u; /* a root that misses a member still serves the rest */
	for (uint32_t r = 0; r < n; r++) {
		if (ctx->adj_start[r] == ctx->adj_start[r + 1] && nmembers > 1)
			continue; /* no links: not a root for more than itself */
		const uint8_t *row = h->d + (size_t)r * n;
		unsigned worst = 0;
		for (uint32_t k = 0; k < nmembers && worst < best; k++)
			if (row[member_sw[k]] > worst)
				worst = row[member_sw[k]];
		if (worst < best) {
			best = worst;
			root = r;
		}
	}
	if (root == UINT32_MAX)
		return -1;
	/* each member's branch climbs towards the root by a neighbour one hop nearer (the
	 * first in adjacency order, as a BFS from the root would have found it) until it meets
	 * the tree */
	const uint8_t *rd = h->d + (size_t)root * n;
	up_port[root] = 0;
	for (uint32_t k = 0; k < nmembers; k++) {
		uint32_t s = member_sw[k];
		if (rd[s] == RT_HOPS_INF)
			continue; /* cut off from the root: unreachable */
		while (up_port[s] == RT_NO_PORT) {
			uint32_t e = ctx->adj_start[s];
			while (e < ctx->adj_start[s + 1] && rd[ctx->adj[e].to] + 1 != rd[s])
				e++;
			if (e == ctx->adj_start[s + 1])
				break; /* cannot happen on a consistent graph */
			up_port[s] = ctx->adj[e].port;
			s = ctx->adj[e].to;
		}
	}
	return 0;
}

int routing_mcast_tree(const struct routing_engine *e, void *state, const struct routing_ctx *ctx,
                       const struct routing_hops *h, const uint32_t *member_sw, uint32_t nmembers,
                       uint8_t *up_port)
{
	memset(up_port, RT_NO_PORT, ctx->nsw);
	if (e && e->mcast_tree && e->mcast_tree(ctx, state, member_sw, nmembers, up_port) == 0)
		return 0;
	memset(up_port, RT_NO_PORT, ctx->nsw);
	return routing_mcast_default(ctx, h, member_sw, nmembers, up_port);
}
