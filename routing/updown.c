/* The up/down core shared by updn, dnup and ftree (see updown.h). */
#include "routing/updown.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "routing/files.h"
#include "routing/parallel.h"

int updown_init(struct updown *u, const struct routing_ctx *ctx, const uint32_t *roots,
                uint32_t nroots, bool reverse)
{
	memset(u, 0, sizeof(*u));
	uint32_t ns = ctx->nsw;
	u->reverse = reverse;
	u->rank = malloc(sizeof(uint16_t) * (ns + 1));
	u->guid = malloc(sizeof(uint64_t) * (ns + 1));
	u->dist = malloc(sizeof(uint16_t) * (ns + 1));
	u->st = malloc(ns + 1);
	u->queue = malloc(sizeof(uint32_t) * (ns + 1));
	u->plain = malloc(sizeof(uint16_t) * (ns + 1));
	u->plain_queue = malloc(sizeof(uint32_t) * (ns + 1));
	if (!u->rank || !u->guid || !u->dist || !u->st || !u->queue || !u->plain ||
	    !u->plain_queue) {
		updown_free(u);
		return -1;
	}
	for (uint32_t s = 0; s < ns; s++) {
		u->rank[s] = RT_INF;
		u->guid[s] = ctx->t->nodes[ctx->t->sws[s].node].guid;
	}
	uint32_t head = 0, tail = 0;
	for (uint32_t i = 0; i < nroots; i++) {
		if (u->rank[roots[i]] == RT_INF) {
			u->rank[roots[i]] = 0;
			u->queue[tail++] = roots[i];
		}
	}
	while (head < tail) {
		uint32_t s = u->queue[head++];
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++)
			if (u->rank[ctx->adj[e].to] == RT_INF) {
				u->rank[ctx->adj[e].to] = (uint16_t)(u->rank[s] + 1);
				u->queue[tail++] = ctx->adj[e].to;
			}
	}
	u->ranked = tail;
	u->dst = UINT32_MAX;
	return 0;
}

static void take_id(void *arg, uint32_t sw, const struct guid_line *l)
{
	((struct updown *)arg)->guid[sw] = l->v[0];
}

int updown_read_ids(struct updown *u, const struct routing_ctx *ctx)
{
	if (ctx->cfg)
		routing_switch_map(ctx, ctx->cfg->ids_guid_file, &routing_ids_fmt, false, take_id,
		                   u, "updn ties ranks by node GUID until it is fixed");
	return 0;
}

void updown_free(struct updown *u)
{
	free(u->rank);
	free(u->order);
	free(u->guid);
	free(u->dist);
	free(u->st);
	free(u->queue);
	free(u->plain);
	free(u->plain_queue);
	memset(u, 0, sizeof(*u));
}

bool updown_first_phase(const struct updown *u, uint32_t a, uint32_t b)
{
	if (u->order) {
		bool earlier = u->order[b] < u->order[a];
		return u->reverse ? !earlier : earlier;
	}
	/* one total order: rank, ties broken by GUID */
	bool towards_roots =
	    u->rank[b] < u->rank[a] || (u->rank[b] == u->rank[a] && u->guid[b] < u->guid[a]);
	bool away =
	    u->rank[b] > u->rank[a] || (u->rank[b] == u->rank[a] && u->guid[b] > u->guid[a]);
	return u->reverse ? away : towards_roots;
}

int updown_alt_step(const void *arg, uint32_t v, uint32_t w, uint8_t w_state)
{
	if (updown_first_phase(arg, v, w))
		return UD_UP;
	return w_state == UD_DOWN ? UD_DOWN : -1;
}

int updown_order_dfs(struct updown *u, const struct routing_ctx *ctx, uint32_t root)
{
	uint32_t ns = ctx->nsw, sp = 0, n = 0;
	uint32_t *stack = malloc(sizeof(uint32_t) * ((size_t)ctx->adj_start[ns] + 1));
	uint32_t *order = u->order ? u->order : malloc(sizeof(uint32_t) * (ns + 1));
	if (!stack || !order) {
		free(stack);
		if (order != u->order)
			free(order);
		return -1;
	}
	u->order = order;
	for (uint32_t s = 0; s < ns; s++)
		order[s] = UINT32_MAX;
	/* from root, then from the other roots the ranks came from (another part of the graph
	 * where a link between them is out of routing), then the switches no root reaches */
	for (uint32_t k = 0; k <= ns; k++) {
		uint32_t from = k == 0 ? root : k - 1;
		if (from >= ns || order[from] != UINT32_MAX || (k > 0 && u->rank[from] != 0))
			continue;
		stack[sp++] = from;
		while (sp) {
			uint32_t x = stack[--sp];
			if (order[x] != UINT32_MAX)
				continue;
			order[x] = n++;
			for (uint32_t e = ctx->adj_start[x + 1]; e-- > ctx->adj_start[x];)
				if (order[ctx->adj[e].to] == UINT32_MAX)
					stack[sp++] = ctx->adj[e].to;
		}
	}
	for (uint32_t s = 0; s < ns; s++) /* unreached: after every reached switch */
		if (order[s] == UINT32_MAX)
			order[s] = n++;
	free(stack);
	return 0;
}

/* the farthest: the least of its ranks in the orders before the greatest */
int updown_next_order(const struct updown *ord, unsigned o, const struct routing_ctx *ctx,
                      struct updown *next)
{
	uint32_t far = UINT32_MAX, best = 0;
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		uint32_t m = UINT32_MAX;
		for (unsigned k = 0; k < o; k++)
			if (ord[k].rank[s] < m)
				m = ord[k].rank[s];
		if (m == RT_INF || m == UINT32_MAX)
			continue;
		if (far == UINT32_MAX || m > best) {
			far = s;
			best = m;
		}
	}
	if (far == UINT32_MAX)
		return -1;
	return updown_init(next, ctx, &far, 1, false);
}

void updown_label(struct updown *u, const struct routing_ctx *ctx, uint32_t dst)
{
	/* One BFS backwards from dst labels every switch with its distance and how its route
	 * starts: DOWN (second phase all the way) or UP (first phase first). A switch may take
	 * a second-phase move only onto a DOWN switch, so a packet that has once moved down
	 * keeps moving down, whichever switch it came from. (Labelling each switch by its
	 * shortest up/down distance alone is not enough: a switch reached downward could then
	 * prefer a shorter route that climbs.) At equal distance DOWN wins, leaving more
	 * switches above a way down. */
	uint32_t ns = ctx->nsw;
	for (uint32_t s = 0; s < ns; s++) {
		u->dist[s] = RT_INF;
		u->st[s] = 0;
	}
	u->dst = dst;
	u->plain_done = false;
	if (u->rank[dst] == RT_INF)
		return;
	uint32_t head = 0, tail = 0;
	u->dist[dst] = 0;
	u->st[dst] = UD_DOWN;
	u->queue[tail++] = dst;
	while (head < tail) {
		uint32_t x = u->queue[head++];
		for (uint32_t e = ctx->adj_start[x]; e < ctx->adj_start[x + 1]; e++) {
			uint32_t s = ctx->adj[e].to; /* candidate predecessor s -> x */
			bool second = !updown_first_phase(u, s, x);
			if (second && u->st[x] != UD_DOWN)
				continue; /* down onto a switch that climbs: never */
			uint8_t how = second ? UD_DOWN : UD_UP;
			if (u->dist[s] == RT_INF) {
				u->dist[s] = (uint16_t)(u->dist[x] + 1);
				u->st[s] = how;
				u->queue[tail++] = s;
			} else if (u->dist[s] == u->dist[x] + 1 && how == UD_DOWN) {
				u->st[s] = UD_DOWN; /* not popped yet: its level comes after x's */
			}
		}
	}
}

uint32_t updown_candidates(struct updown *u, const struct routing_ctx *ctx, uint32_t s,
                           uint32_t *cand, uint32_t max, bool *climb)
{
	uint32_t n = 0;
	*climb = false;
	if (u->dist[s] == RT_INF) {
		/* No up/down route from s to the destination (roots to one another, say). Only
		 * s's own management traffic can need one: a switch forwards to s only when s has
		 * an up/down route onwards, so no CA traffic ever crosses s towards it. That
		 * traffic takes a shortest path. */
		if (!u->plain_done) {
			routing_bfs(ctx, u->dst, u->plain, u->plain_queue);
			u->plain_done = true;
		}
		if (u->plain[s] == RT_INF)
			return 0;
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1] && n < max; e++)
			if (u->plain[ctx->adj[e].to] + 1 == u->plain[s])
				cand[n++] = e;
		return n;
	}
	bool go_down = u->st[s] == UD_DOWN;
	*climb = !go_down;
	for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1] && n < max; e++) {
		uint32_t x = ctx->adj[e].to;
		if (u->dist[x] + 1 != u->dist[s])
			continue;
		bool first = updown_first_phase(u, s, x);
		if (go_down ? (!first && u->st[x] == UD_DOWN) : first)
			cand[n++] = e;
	}
	return n;
}

bool updown_unroutable(struct updown *u, const struct routing_ctx *ctx, const bool *leaf,
                       uint32_t s)
{
	/* switches' own LIDs take management traffic only (a host's perfquery of a spine):
	 * that goes by shortest paths when up/down has none (updown_candidates) */
	if (!leaf[s] || u->dst == UINT32_MAX || !leaf[u->dst] || u->dist[s] != RT_INF)
		return false;
	if (!u->plain_done) {
		routing_bfs(ctx, u->dst, u->plain, u->plain_queue);
		u->plain_done = true;
	}
	return u->plain[s] != RT_INF; /* a switch the destination cannot reach at all is not
	                                 this engine's failing */
}

void updown_why_unroutable(const struct updown *u, struct routing_ctx *ctx, uint32_t s,
                           uint32_t dst)
{
	const struct topo *t = ctx->t;
	const struct topo_node *a = &t->nodes[t->sws[s].node], *b = &t->nodes[t->sws[dst].node];
	snprintf(ctx->why, sizeof(ctx->why),
	         "no %s route from switch \"%.60s\" (0x%016llx, rank %u) to \"%.60s\" "
	         "(0x%016llx, rank %u): %s",
	         u->reverse ? "down/up" : "up/down", a->desc, (unsigned long long)a->guid,
	         u->rank[s], b->desc, (unsigned long long)b->guid, u->rank[dst],
	         u->reverse ? "the topology is not a tree of tiers ranked from its hosts; use updn"
	                    : "the roots do not reach the whole fabric; give other roots");
}

/* ---- every destination at every switch, on several threads ----
 * Destinations go in batches: the threads label a batch's destinations (each into a label of
 * its own, sharing the ranks), then take chunks of the switches, each routing the batch's
 * destinations at its switches in destination order. One hand-out of threads per batch
 * rather than per destination, and the labels, a BFS each, on every CPU too. */
#define UD_CHUNKS 64

struct ud_job {
	const struct updown *u;
	struct routing_ctx *ctx;
	const bool *leaf;
	const struct updown_hooks *h;
	struct updown lab[UPDOWN_SLOTS];
	uint32_t dst[UPDOWN_SLOTS], n;
	/* per destination, the lowest switch without an up/down route (chunks of any thread) */
	_Atomic uint32_t bad[UPDOWN_SLOTS];
};

static void ud_label(void *p, uint32_t i)
{
	struct ud_job *j = p;
	struct updown *l = &j->lab[i];
	updown_label(l, j->ctx, j->dst[i]);
	/* the shortest paths for switches up/down does not reach, now: the others only read */
	for (uint32_t s = 0; s < j->ctx->nsw && !l->plain_done; s++)
		if (l->dist[s] == RT_INF) {
			routing_bfs(j->ctx, l->dst, l->plain, l->plain_queue);
			l->plain_done = true;
		}
	if (j->h->prepare)
		j->h->prepare(j->h->arg, i, l);
}

static void ud_chunk(void *p, uint32_t chunk)
{
	struct ud_job *j = p;
	uint32_t ns = j->ctx->nsw, cand[256];
	uint32_t lo = (uint32_t)((uint64_t)ns * chunk / UD_CHUNKS);
	uint32_t hi = (uint32_t)((uint64_t)ns * (chunk + 1) / UD_CHUNKS);
	for (uint32_t i = 0; i < j->n; i++) {
		struct updown *l = &j->lab[i];
		for (uint32_t s = lo; s < hi; s++) {
			if (s == l->dst) {
				routing_assign_local(j->ctx, s);
				continue;
			}
			if (updown_unroutable(l, j->ctx, j->leaf, s)) {
				uint32_t b = atomic_load(&j->bad[i]);
				while (s < b && !atomic_compare_exchange_weak(&j->bad[i], &b, s))
					;
				break;
			}
			bool climb;
			uint32_t n = updown_candidates(l, j->ctx, s, cand, 256, &climb);
			if (n)
				j->h->route(j->h->arg, i, l, s, cand, n, climb);
		}
	}
}

static void ud_job_free(struct ud_job *j)
{
	for (uint32_t i = 0; i < UPDOWN_SLOTS; i++) {
		struct updown *l = &j->lab[i];
		free(l->dist);
		free(l->st);
		free(l->queue);
		free(l->plain);
		free(l->plain_queue);
	}
	free(j);
}

int updown_route_all(const struct updown *u, struct routing_ctx *ctx, const bool *leaf,
                     const struct updown_hooks *h)
{
	uint32_t ns = ctx->nsw;
	struct ud_job *j = calloc(1, sizeof(*j));
	if (!j)
		goto oom;
	j->u = u;
	j->ctx = ctx;
	j->leaf = leaf;
	j->h = h;
	for (uint32_t i = 0; i < UPDOWN_SLOTS; i++) {
		struct updown *l = &j->lab[i];
		*l = *u; /* the ranks and GUIDs, shared and only read */
		l->dist = malloc(sizeof(uint16_t) * (ns + 1));
		l->st = malloc(ns + 1);
		l->queue = malloc(sizeof(uint32_t) * (ns + 1));
		l->plain = malloc(sizeof(uint16_t) * (ns + 1));
		l->plain_queue = malloc(sizeof(uint32_t) * (ns + 1));
		if (!l->dist || !l->st || !l->queue || !l->plain || !l->plain_queue)
			goto oom;
	}
	for (uint32_t next = 0; next < ns;) {
		j->n = 0;
		for (; next < ns && j->n < UPDOWN_SLOTS; next++) {
			/* guid_routing_order_file's order of switches, for updn and dnup */
			uint32_t t = ctx->sw_order && ctx->ucast_mgr ? ctx->sw_order[next] : next;
			if (ctx->dst_start[t] != ctx->dst_start[t + 1] && u->rank[t] != RT_INF) {
				atomic_init(&j->bad[j->n], UINT32_MAX);
				j->dst[j->n++] = t;
			}
		}
		routing_parallel(j->n, ctx->threads, ud_label, j);
		routing_parallel(UD_CHUNKS, ctx->threads, ud_chunk, j);
		for (uint32_t i = 0; i < j->n; i++)
			if (atomic_load(&j->bad[i]) != UINT32_MAX) {
				/* the first failing one in order, as one thread finds it */
				updown_why_unroutable(&j->lab[i], ctx, atomic_load(&j->bad[i]),
				                      j->dst[i]);
				ud_job_free(j);
				return -1;
			}
	}
	ud_job_free(j);
	return 0;
oom:
	if (j)
		ud_job_free(j);
	snprintf(ctx->why, sizeof(ctx->why), "out of memory");
	return -1;
}

void routing_host_switches(const struct routing_ctx *ctx, bool *leaf)
{
	const struct topo *t = ctx->t;
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		const struct topo_node *n = &t->nodes[t->sws[s].node];
		leaf[s] = false;
		/* destinations other than the switch's own LIDs (they come first, port 0) */
		for (uint32_t d = ctx->dst_start[s]; d < ctx->dst_start[s + 1] && n->present; d++)
			if (ctx->dst[d].port) {
				leaf[s] = true;
				break;
			}
	}
}

int routing_configured_roots(struct routing_ctx *ctx, const char *engine, uint32_t *roots,
                             uint32_t *nroots)
{
	struct topo *t = ctx->t;
	const struct ibsmd_config *cfg = ctx->cfg;
	*nroots = 0;
	uint64_t *file = NULL;
	uint32_t nfile = 0;
	if (cfg->root_guid_file[0] && routing_read_guid_file(cfg->root_guid_file, &file, &nfile,
	                                                     ctx->why, sizeof(ctx->why)) < 0)
		return -1;
	uint32_t total = cfg->nroots + nfile;
	for (uint32_t i = 0; i < total; i++) {
		uint64_t g = i < cfg->nroots ? cfg->root_guids[i] : file[i - cfg->nroots];
		uint32_t n = u64map_get(&t->by_guid, g);
		if (n == U64MAP_NONE || !topo_is_switch(t, n) || !t->nodes[n].present) {
			log_warn(ctx->log, "routing",
			         "%s: root GUID 0x%016llx is not a switch in the fabric: ignored",
			         engine, (unsigned long long)g);
			continue;
		}
		roots[(*nroots)++] = t->nodes[n].sw;
	}
	free(file);
	if (total && !*nroots) {
		snprintf(ctx->why, sizeof(ctx->why),
		         "none of the %u configured root GUIDs is a switch in the fabric", total);
		return -1;
	}
	return 0;
}

int routing_detect_roots(const struct routing_ctx *ctx, const bool *leaf, uint32_t *roots,
                         uint32_t *nroots)
{
	const struct topo *t = ctx->t;
	uint32_t ns = ctx->nsw;
	*nroots = 0;
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
		if (leaf[s] && t->nodes[t->sws[s].node].present) {
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
