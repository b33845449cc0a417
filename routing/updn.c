/* up/down: switches are ranked by hop distance from the roots; a route may climb towards the
 * roots and then descend, never climb again, so no cycle of channel dependencies can form and
 * the fabric is free of credit loops on any topology. Among such routes the shortest are
 * taken, balanced like min-hop.
 *
 * A switch's table cannot tell how a packet arrived, so the route every switch takes towards
 * a destination must be valid however the packet got there: per destination, each switch
 * either descends all the way (DOWN) or climbs first (UP), and descends only into DOWN
 * switches. Then a packet that has moved down once only ever moves down. */
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"

enum { ST_DOWN = 1, ST_UP = 2 };

struct updn {
	uint16_t *rank;
	uint64_t *guid;
};

/* Is the move a -> b upward (towards the roots)? Ties broken by GUID, as up/down requires a
 * total order. */
static bool up_move(const struct updn *u, uint32_t a, uint32_t b)
{
	return u->rank[b] < u->rank[a] || (u->rank[b] == u->rank[a] && u->guid[b] < u->guid[a]);
}

static int choose_roots(struct routing_ctx *ctx, uint32_t *roots, uint32_t *nroots)
{
	struct topo *t = ctx->t;
	uint32_t ns = ctx->nsw;
	*nroots = 0;
	for (unsigned i = 0; i < ctx->cfg->nroots; i++) {
		uint32_t n = u64map_get(&t->by_guid, ctx->cfg->root_guids[i]);
		if (n == U64MAP_NONE || !topo_is_switch(t, n) || !t->nodes[n].present) {
			log_warn(ctx->log, "routing",
			         "updn: root GUID 0x%016llx is not a switch in "
			         "the fabric: ignored",
			         (unsigned long long)ctx->cfg->root_guids[i]);
			continue;
		}
		roots[(*nroots)++] = t->nodes[n].sw;
	}
	if (*nroots)
		return 0;
	/* No roots configured: the switches without hosts that lie farthest from the switches
	 * with hosts (the spines or cores of a fat tree); failing that the graph's centre. */
	uint16_t *dist = malloc(sizeof(uint16_t) * (ns + 1));
	uint32_t *queue = malloc(sizeof(uint32_t) * (ns + 1));
	if (!dist || !queue) {
		free(dist);
		free(queue);
		return -1;
	}
	for (uint32_t s = 0; s < ns; s++)
		dist[s] = RT_INF;
	uint32_t head = 0, tail = 0;
	for (uint32_t s = 0; s < ns; s++) {
		bool hosts = ctx->dst_start[s + 1] - ctx->dst_start[s] > 1; /* more than itself */
		if (hosts && t->nodes[t->sws[s].node].present) {
			dist[s] = 0;
			queue[tail++] = s;
		}
	}
	while (head < tail) {
		uint32_t s = queue[head++];
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++)
			if (dist[ctx->adj[e].to] == RT_INF) {
				dist[ctx->adj[e].to] = (uint16_t)(dist[s] + 1);
				queue[tail++] = ctx->adj[e].to;
			}
	}
	uint16_t far = 0;
	for (uint32_t s = 0; s < ns; s++)
		if (dist[s] != RT_INF && dist[s] > far)
			far = dist[s];
	if (far > 0) {
		for (uint32_t s = 0; s < ns; s++)
			if (dist[s] == far)
				roots[(*nroots)++] = s;
	} else {
		/* every switch has hosts: the one whose farthest switch is nearest */
		uint16_t best = RT_INF;
		uint32_t limit = ns > 4000 ? 4000 : ns;
		for (uint32_t s = 0; s < limit; s++) {
			if (!t->nodes[t->sws[s].node].present)
				continue;
			routing_bfs(ctx, s, dist, queue);
			uint16_t ecc = 0;
			for (uint32_t x = 0; x < ns; x++)
				if (dist[x] != RT_INF && dist[x] > ecc)
					ecc = dist[x];
			if (ecc < best) {
				best = ecc;
				roots[0] = s;
				*nroots = 1;
			}
		}
	}
	free(dist);
	free(queue);
	return *nroots ? 0 : -1;
}

static int updn_unicast(struct routing_ctx *ctx, void *state)
{
	(void)state;
	struct topo *t = ctx->t;
	uint32_t ns = ctx->nsw;
	struct updn u = {0};
	uint32_t *roots = malloc(sizeof(uint32_t) * (ns + 1)), nroots = 0;
	uint16_t *down = malloc(sizeof(uint16_t) * (ns + 1));
	uint8_t *st = malloc(ns + 1);
	uint32_t *queue = malloc(sizeof(uint32_t) * (ns + 1));
	uint32_t *cand = malloc(sizeof(uint32_t) * 256);
	uint16_t *plain = malloc(sizeof(uint16_t) * (ns + 1));
	uint32_t *plain_queue = malloc(sizeof(uint32_t) * (ns + 1));
	u.rank = malloc(sizeof(uint16_t) * (ns + 1));
	u.guid = malloc(sizeof(uint64_t) * (ns + 1));
	int rc = -1;
	if (!roots || !down || !st || !queue || !cand || !plain || !plain_queue || !u.rank ||
	    !u.guid) {
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		goto out;
	}
	if (choose_roots(ctx, roots, &nroots) < 0) {
		snprintf(ctx->why, sizeof(ctx->why), "no root switch found");
		goto out;
	}
	/* ranks: distance from the nearest root */
	for (uint32_t s = 0; s < ns; s++) {
		u.rank[s] = RT_INF;
		u.guid[s] = t->nodes[t->sws[s].node].guid;
	}
	uint32_t head = 0, tail = 0;
	for (uint32_t i = 0; i < nroots; i++) {
		u.rank[roots[i]] = 0;
		queue[tail++] = roots[i];
	}
	while (head < tail) {
		uint32_t s = queue[head++];
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++)
			if (u.rank[ctx->adj[e].to] == RT_INF) {
				u.rank[ctx->adj[e].to] = (uint16_t)(u.rank[s] + 1);
				queue[tail++] = ctx->adj[e].to;
			}
	}
	log_info(ctx->log, "routing", "updn: %u root switch(es), %u switches ranked", nroots, tail);

	for (uint32_t dst = 0; dst < ns; dst++) {
		if (ctx->dst_start[dst] == ctx->dst_start[dst + 1] || u.rank[dst] == RT_INF)
			continue;
		/* One BFS backwards from dst labels every switch with its distance and how its
		 * route starts: DOWN (all the way down) or UP (up first, then down). A switch
		 * may move down only to a DOWN switch, so a packet that has once moved down
		 * keeps moving down, whichever switch it came from: every route is up* down*.
		 * (Labelling each switch by its shortest up/down distance alone is not enough:
		 * a switch reached downward could then prefer a shorter route that climbs.)
		 * At equal distance DOWN wins, leaving more switches above a way down. */
		for (uint32_t s = 0; s < ns; s++) {
			down[s] = RT_INF;
			st[s] = 0;
		}
		head = tail = 0;
		down[dst] = 0;
		st[dst] = ST_DOWN;
		queue[tail++] = dst;
		while (head < tail) {
			uint32_t x = queue[head++];
			for (uint32_t e = ctx->adj_start[x]; e < ctx->adj_start[x + 1]; e++) {
				uint32_t s = ctx->adj[e].to; /* candidate predecessor s -> x */
				bool downward = !up_move(&u, s, x);
				if (downward && st[x] != ST_DOWN)
					continue; /* down onto a switch that climbs: never */
				uint8_t how = downward ? ST_DOWN : ST_UP;
				if (down[s] == RT_INF) {
					down[s] = (uint16_t)(down[x] + 1);
					st[s] = how;
					queue[tail++] = s;
				} else if (down[s] == down[x] + 1 && how == ST_DOWN) {
					st[s] =
					    ST_DOWN; /* not popped yet: its level comes after x's */
				}
			}
		}
		routing_assign_local(ctx, dst);
		bool plain_done = false;
		for (uint32_t s = 0; s < ns; s++) {
			if (s == dst)
				continue;
			if (down[s] == RT_INF) {
				/* No up/down route from s to dst (roots to one another, say). Only
				 * s's own management traffic can need one: a switch forwards to s
				 * only when s has an up/down route onwards, so no CA traffic ever
				 * crosses s towards dst. That traffic takes a shortest path. */
				if (!plain_done) {
					routing_bfs(ctx, dst, plain, plain_queue);
					plain_done = true;
				}
				if (plain[s] == RT_INF)
					continue;
				uint32_t n = 0;
				for (uint32_t e = ctx->adj_start[s];
				     e < ctx->adj_start[s + 1] && n < 256; e++)
					if (plain[ctx->adj[e].to] + 1 == plain[s])
						cand[n++] = e;
				routing_assign(ctx, s, dst, cand, n);
				continue;
			}
			bool go_down = st[s] == ST_DOWN;
			uint32_t n = 0;
			for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1] && n < 256;
			     e++) {
				uint32_t x = ctx->adj[e].to;
				if (down[x] + 1 != down[s])
					continue;
				if (go_down ? (!up_move(&u, s, x) && st[x] == ST_DOWN)
				            : up_move(&u, s, x))
					cand[n++] = e;
			}
			routing_assign(ctx, s, dst, cand, n);
		}
	}
	rc = 0;
out:
	free(roots);
	free(down);
	free(st);
	free(queue);
	free(cand);
	free(plain);
	free(plain_queue);
	free(u.rank);
	free(u.guid);
	return rc;
}

const struct routing_engine routing_updn = {
    .name = "updn",
    .summary = "up/down from root switches (configured or detected): free of credit loops",
    .unicast = updn_unicast,
};
