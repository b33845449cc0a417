/* What every engine shares: the switch graph, destinations by switch, balanced port choice. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "routing/files.h"
#include "routing/parallel.h"

int routing_switch_map(const struct routing_ctx *ctx, const char *path,
                       const struct guid_line_fmt *f, bool port,
                       void (*take)(void *arg, uint32_t sw, const struct guid_line *l), void *arg,
                       const char *then)
{
	if (!path || !path[0])
		return 0;
	struct guid_line *l = NULL;
	uint32_t n = 0, skipped = 0;
	char why[400];
	if (routing_read_guid_lines(path, f, &l, &n, why, sizeof(why)) < 0) {
		log_err(ctx->log, "routing", "%s: %s", why, then);
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t node = u64map_get(&ctx->t->by_guid, l[i].guid);
		uint32_t s = node == U64MAP_NONE ? TOPO_NONE : ctx->t->nodes[node].sw;
		if (s == TOPO_NONE || s >= ctx->nsw ||
		    (port && ctx->port_base[s] + l[i].v[0] >= ctx->port_base[s + 1]))
			skipped++;
		else
			take(arg, s, &l[i]);
	}
	if (skipped)
		log_notice(ctx->log, "routing",
		           "%s: %u of %u lines name a switch%s this fabric does not have: skipped",
		           path, skipped, n, port ? " or port" : "");
	free(l);
	return 1;
}

static void take_prof_ignored(void *arg, uint32_t sw, const struct guid_line *l)
{
	struct routing_ctx *ctx = arg;
	ctx->prof_ignored[ctx->port_base[sw] + l->v[0]] = 1;
}

/* port_prof_ignore_file's ports, flagged by channel (NULL without the file). */
static int load_prof_ignored(struct routing_ctx *ctx)
{
	const char *path = ctx->cfg ? ctx->cfg->port_prof_ignore_file : "";
	if (!path[0])
		return 0;
	ctx->prof_ignored = calloc(ctx->port_base[ctx->nsw] + 1, 1);
	if (!ctx->prof_ignored)
		return -1;
	if (!routing_switch_map(ctx, path, &routing_port_prof_ignore_fmt, true, take_prof_ignored,
	                        ctx, "every port counts in the balance until it is fixed")) {
		free(ctx->prof_ignored);
		ctx->prof_ignored = NULL;
	}
	return 0;
}

struct order_block {
	uint32_t rank, start, len; /* rank: the port's line in the file */
};

static int by_rank(const void *a, const void *b)
{
	uint32_t x = ((const struct order_block *)a)->rank,
	         y = ((const struct order_block *)b)->rank;
	return (x > y) - (x < y);
}

/* One destination switch's entries reordered: its own LIDs first, then its listed ports'
 * blocks (all the LIDs of a port go together, as they lie) by their line in the file, then
 * the rest as they were. rank: per topo port, its line (UINT32_MAX: not listed); tmp: room
 * for the switch's entries. The end of the listed ones. */
static uint32_t order_switch(struct routing_ctx *ctx, uint32_t t, const uint32_t *rank,
                             struct rt_dest *tmp)
{
	const struct topo_node *n = &ctx->t->nodes[ctx->t->sws[t].node];
	uint32_t own = ctx->dst_start[t], d1 = ctx->dst_start[t + 1], nb = 0, k = 0;
	while (own < d1 && ctx->dst[own].port == 0)
		own++;
	struct order_block b[256];
	for (uint32_t d = own; d < d1; d++) {
		uint32_t r = rank[n->first_port + ctx->dst[d].port];
		if (r == UINT32_MAX)
			continue;
		if (nb && b[nb - 1].start + b[nb - 1].len == d && b[nb - 1].rank == r)
			b[nb - 1].len++;
		else if (nb < 256)
			b[nb++] = (struct order_block){r, d, 1};
	}
	qsort(b, nb, sizeof(b[0]), by_rank);
	for (uint32_t i = 0; i < nb; i++)
		for (uint32_t d = b[i].start; d < b[i].start + b[i].len; d++)
			tmp[k++] = ctx->dst[d];
	uint32_t listed = k;
	for (uint32_t d = own; d < d1; d++)
		if (rank[n->first_port + ctx->dst[d].port] == UINT32_MAX)
			tmp[k++] = ctx->dst[d];
	memcpy(ctx->dst + own, tmp, sizeof(*tmp) * k);
	return own + listed;
}

static int by_first(const void *a, const void *b, void *arg)
{
	const uint32_t *first = arg;
	uint32_t x = first[*(const uint32_t *)a], y = first[*(const uint32_t *)b];
	return (x > y) - (x < y);
}

/* guid_routing_order_file: reorder every switch's destinations and the switches (see
 * engine.h). A file that cannot be read is logged and the natural order kept, as OpenSM
 * routes in its own order when it cannot parse the file. */
static int load_routing_order(struct routing_ctx *ctx)
{
	const char *path = ctx->cfg ? ctx->cfg->guid_routing_order_file : "";
	if (!path[0])
		return 0;
	const struct topo *t = ctx->t;
	uint64_t *g = NULL;
	uint32_t n = 0, ns = ctx->nsw, found = 0;
	char why[400];
	if (routing_read_guid_file(path, &g, &n, why, sizeof(why)) < 0) {
		log_err(ctx->log, "routing", "%s: routing in ibsmd's own order until it is fixed",
		        why);
		return 0;
	}
	uint32_t widest = 0;
	for (uint32_t s = 0; s < ns; s++)
		if (ctx->dst_start[s + 1] - ctx->dst_start[s] > widest)
			widest = ctx->dst_start[s + 1] - ctx->dst_start[s];
	uint32_t *rank = malloc(sizeof(uint32_t) * (t->nports + 1));
	uint32_t *first = malloc(sizeof(uint32_t) * (ns + 1));
	struct rt_dest *tmp = malloc(sizeof(struct rt_dest) * (widest + 1));
	ctx->sw_order = malloc(sizeof(uint32_t) * (ns + 1));
	ctx->listed_end = malloc(sizeof(uint32_t) * (ns + 1));
	if (!rank || !first || !tmp || !ctx->sw_order || !ctx->listed_end) {
		free(g), free(rank), free(first), free(tmp);
		return -1;
	}
	for (uint32_t p = 0; p < t->nports; p++)
		rank[p] = UINT32_MAX;
	for (uint32_t s = 0; s < ns; s++)
		first[s] = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		/* a CA port: the switch port it hangs off carries its LIDs */
		uint32_t p = u64map_get(&t->by_port_guid, g[i]);
		if (p == U64MAP_NONE || p >= t->nports || t->ports[p].peer == TOPO_NONE)
			continue;
		uint32_t sp = t->ports[p].peer, sn = t->ports[sp].node;
		if (!topo_is_switch(t, sn) || rank[sp] != UINT32_MAX)
			continue; /* OpenSM too takes a port's first line */
		rank[sp] = i;
		found++;
		uint32_t s = t->nodes[sn].sw;
		if (s < ns && first[s] == UINT32_MAX)
			first[s] = i;
	}
	for (uint32_t s = 0; s < ns; s++)
		ctx->listed_end[s] = ctx->dst_start[s];
	for (uint32_t s = 0; s < ns; s++)
		if (first[s] != UINT32_MAX)
			ctx->listed_end[s] = order_switch(ctx, s, rank, tmp);
	/* the switches with listed ports by their first one's line, then the rest as they are
	 * (UINT32_MAX sorts last; qsort_r is not stable, so the index breaks ties) */
	for (uint32_t s = 0; s < ns; s++) {
		ctx->sw_order[s] = s;
		if (first[s] == UINT32_MAX)
			first[s] = UINT32_MAX - ns + s;
	}
	qsort_r(ctx->sw_order, ns, sizeof(uint32_t), by_first, first);
	if (found < n)
		log_notice(ctx->log, "routing",
		           "%s: %u of %u lines name no host port of this fabric (or one twice): "
		           "skipped",
		           path, n - found, n);
	free(g), free(rank), free(first), free(tmp);
	return 0;
}

struct fresh_lfts {
	struct topo *t;
	uint32_t size;
	atomic_bool failed;
};

static void fresh_lft(void *arg, uint32_t s)
{
	struct fresh_lfts *f = arg;
	struct topo_switch *sw = &f->t->sws[s];
	if (sw->lft_size != f->size) {
		uint8_t *nl = realloc(sw->lft, f->size);
		if (!nl) {
			atomic_store(&f->failed, true);
			return;
		}
		sw->lft = nl;
		sw->lft_size = f->size;
	}
	memset(sw->lft, 0xff, f->size);
}

int routing_ctx_build(struct routing_ctx *ctx, struct topo *t, const struct ibsmd_config *cfg,
                      const struct log *log)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->t = t;
	ctx->cfg = cfg;
	ctx->log = log;
	ctx->nsw = t->nsws;
	uint32_t ns = t->nsws;
	ctx->adj_start = calloc(ns + 1, sizeof(uint32_t));
	ctx->dst_start = calloc(ns + 1, sizeof(uint32_t));
	ctx->port_base = calloc(ns + 1, sizeof(uint32_t));
	if (!ctx->adj_start || !ctx->dst_start || !ctx->port_base)
		return -1;

	/* count, then fill (CSR) */
	for (uint32_t s = 0; s < ns; s++) {
		const struct topo_node *n = &t->nodes[t->sws[s].node];
		ctx->port_base[s + 1] = ctx->port_base[s] + n->nports + 1u;
		if (!n->present)
			continue;
		for (unsigned p = 1; p <= n->nports; p++) {
			uint32_t peer = t->ports[n->first_port + p].peer;
			if (peer == TOPO_NONE)
				continue;
			uint32_t pn = t->ports[peer].node;
			if (topo_is_switch(t, pn)) {
				if (!t->ports[n->first_port + p].unrouted &&
				    !t->ports[peer].unrouted)
					ctx->adj_start[s + 1]++;
			} else if (t->ports[peer].lid)
				ctx->dst_start[s + 1] += 1u << t->ports[peer].lmc;
		}
		if (t->ports[n->first_port].lid)
			ctx->dst_start[s + 1] += 1u << t->ports[n->first_port].lmc;
	}
	for (uint32_t s = 0; s < ns; s++) {
		ctx->adj_start[s + 1] += ctx->adj_start[s];
		ctx->dst_start[s + 1] += ctx->dst_start[s];
	}
	ctx->adj = malloc(sizeof(struct rt_edge) * (ctx->adj_start[ns] + 1));
	ctx->dst = malloc(sizeof(struct rt_dest) * (ctx->dst_start[ns] + 1));
	ctx->load = calloc(ctx->port_base[ns] + 1, sizeof(uint32_t));
	if (!ctx->adj || !ctx->dst || !ctx->load)
		return -1;
	for (uint32_t s = 0; s < ns; s++) {
		const struct topo_node *n = &t->nodes[t->sws[s].node];
		uint32_t ea = ctx->adj_start[s], da = ctx->dst_start[s];
		if (!n->present)
			continue;
		const struct topo_port *p0 = &t->ports[n->first_port];
		for (uint32_t l = p0->lid; p0->lid && l < p0->lid + (1u << p0->lmc); l++)
			ctx->dst[da++] = (struct rt_dest){.lid = (uint16_t)l, .port = 0};
		for (unsigned p = 1; p <= n->nports; p++) {
			uint32_t peer = t->ports[n->first_port + p].peer;
			if (peer == TOPO_NONE)
				continue;
			const struct topo_port *pp = &t->ports[peer];
			if (topo_is_switch(t, pp->node)) {
				if (t->ports[n->first_port + p].unrouted || pp->unrouted)
					continue;
				ctx->adj[ea++] = (struct rt_edge){.to = t->nodes[pp->node].sw,
				                                  .port = (uint8_t)p};
			} else if (pp->lid) {
				for (uint32_t l = pp->lid; l < pp->lid + (1u << pp->lmc); l++)
					ctx->dst[da++] = (struct rt_dest){.lid = (uint16_t)l,
					                                  .port = (uint8_t)p};
			}
		}
	}
	for (uint32_t i = 0; i < ctx->dst_start[ns]; i++)
		if (ctx->dst[i].lid > ctx->max_lid)
			ctx->max_lid = ctx->dst[i].lid;
	if (load_prof_ignored(ctx) < 0 || load_routing_order(ctx) < 0)
		return -1;
	/* vports' own LIDs get their physical port's exits after routing (topo_vport_lfts) */
	if (topo_vport_max_lid(t) > ctx->max_lid)
		ctx->max_lid = topo_vport_max_lid(t);
	/* fresh LFTs, sized to the highest LID: on every CPU, since the first time this is
	 * the pages of switches x LIDs bytes (156 MB at 40,000 hosts) faulted in */
	struct fresh_lfts f = {.t = t, .size = ((uint32_t)ctx->max_lid / 64 + 1) * 64};
	atomic_init(&f.failed, false);
	routing_parallel(ns, ctx->threads, fresh_lft, &f);
	return atomic_load(&f.failed) ? -1 : 0;
}

void routing_ctx_clean(struct routing_ctx *ctx)
{
	for (uint32_t s = 0; s < ctx->nsw; s++)
		memset(ctx->t->sws[s].lft, 0xff, ctx->t->sws[s].lft_size);
	memset(ctx->load, 0, sizeof(uint32_t) * ctx->port_base[ctx->nsw]);
	ctx->ucast_mgr = false;
}

void routing_ctx_free(struct routing_ctx *ctx)
{
	free(ctx->adj_start);
	free(ctx->adj);
	free(ctx->dst_start);
	free(ctx->dst);
	free(ctx->port_base);
	free(ctx->load);
	free(ctx->prof_ignored);
	free(ctx->sw_order);
	free(ctx->listed_end);
	memset(ctx, 0, sizeof(*ctx));
}

void routing_bfs(const struct routing_ctx *ctx, uint32_t from, uint16_t *dist, uint32_t *queue)
{
	for (uint32_t s = 0; s < ctx->nsw; s++)
		dist[s] = RT_INF;
	uint32_t head = 0, tail = 0;
	dist[from] = 0;
	queue[tail++] = from;
	while (head < tail) {
		uint32_t s = queue[head++];
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			uint32_t n = ctx->adj[e].to;
			if (dist[n] == RT_INF) {
				dist[n] = (uint16_t)(dist[s] + 1);
				queue[tail++] = n;
			}
		}
	}
}

/* Which candidate leaves by each port (0xff: none), for held_choice: a lookup per LID
 * where a scan of the candidates per LID was most of a sticky routing's time (18 up ports
 * at 2,592 hosts, 2 million LIDs over the switches: 20 ms of a link's 30 ms handling). Kept
 * in a routing_assign_memo (on: sticky, and the switch's table is known; of[] set up to the
 * switch's last port). */
static void cand_ports_init(struct routing_assign_memo *cp, const struct routing_ctx *ctx,
                            const struct topo_switch *sw, const uint32_t *cand, uint32_t ncand)
{
	cp->on = ctx->sticky && sw->lft_hw && ncand < 255;
	if (!cp->on)
		return;
	/* only the switch's ports: 374,000 pairs of switches for 5 LIDs each at 2,592 hosts */
	unsigned np = ctx->t->nodes[sw->node].nports;
	cp->last = (uint8_t)(np < 255 ? np : 254);
	memset(cp->of, 0xff, cp->last + 1u);
	for (uint32_t i = 0; i < ncand; i++)
		cp->of[ctx->adj[cand[i]].port] = (uint8_t)i;
}

/* The candidate a switch's table already holds for lid, when sticky and still valid;
 * ncand otherwise. */
static uint32_t held_choice(const struct routing_assign_memo *cp, const struct topo_switch *sw,
                            uint16_t lid, uint32_t ncand)
{
	if (!cp->on || lid >= sw->lft_hw_size)
		return ncand;
	uint8_t held = sw->lft_hw[lid], i = held <= cp->last ? cp->of[held] : 0xff;
	return i == 0xff ? ncand : i;
}

/* The destinations of switch t this pass routes (see listed_pass in engine.h). */
static void pass_range(const struct routing_ctx *ctx, uint32_t t, uint32_t *d0, uint32_t *d1)
{
	*d0 = ctx->dst_start[t];
	*d1 = ctx->dst_start[t + 1];
	if (ctx->listed_pass == 1)
		*d1 = ctx->listed_end[t];
	else if (ctx->listed_pass == 2)
		*d0 = ctx->listed_end[t];
}

/* A well-mixed 64-bit value of x (splitmix64's finaliser): scatter_ports' draw, the same for
 * the same seed, switch and LID on every thread and every run, as OpenSM reseeds its random
 * numbers at every routing. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* routing_assign under OpenSM's knobs, one pass over the candidates per LID: with
 * port_shifting, the least loaded scanned cyclically from (their total load / their count),
 * OpenSM's shift; with scatter_ports, one of the least loaded drawn from the seed; routes out
 * of a port_prof_ignore_file port weigh nothing on its load. */
static void assign_with_knobs(struct routing_ctx *ctx, uint32_t s, uint32_t t, const uint32_t *cand,
                              uint32_t ncand)
{
	const struct ibsmd_config *cfg = ctx->cfg;
	const struct topo_switch *sw = &ctx->t->sws[s];
	uint32_t *load = ctx->load + ctx->port_base[s];
	const uint8_t *ignored = ctx->prof_ignored ? ctx->prof_ignored + ctx->port_base[s] : NULL;
	uint32_t ties[256], d0, d1;
	struct routing_assign_memo cp;
	cand_ports_init(&cp, ctx, sw, cand, ncand);
	pass_range(ctx, t, &d0, &d1);
	for (uint32_t d = d0; d < d1; d++) {
		uint16_t lid = ctx->dst[d].lid;
		uint32_t best = held_choice(&cp, sw, lid, ncand);
		if (best == ncand) {
			uint64_t total = 0;
			for (uint32_t i = 0; cfg->port_shifting && i < ncand; i++)
				total += load[ctx->adj[cand[i]].port];
			uint32_t start = cfg->port_shifting ? (uint32_t)(total / ncand % ncand)
			                 : ctx->dst[d].port ? (d - ctx->dst_start[t]) % ncand
			                                    : lid % ncand;
			uint32_t low = UINT32_MAX, nties = 0;
			for (uint32_t k = 0; k < ncand; k++) {
				uint32_t i = (start + k) % ncand, l = load[ctx->adj[cand[i]].port];
				if (l < low)
					low = l, nties = 0;
				if (l == low && nties < 256)
					ties[nties++] = i;
			}
			best = ties[0];
			/* guid_routing_order_no_scatter: the listed ports keep the balance */
			if (cfg->scatter_ports && !(cfg->guid_routing_order_no_scatter &&
			                            ctx->listed_end && d < ctx->listed_end[t]))
				best = ties[mix64((uint64_t)cfg->scatter_ports << 32 ^
				                  (uint64_t)s << 16 ^ lid) %
				            nties];
		}
		uint8_t port = ctx->adj[cand[best]].port;
		sw->lft[lid] = port;
		if (ctx->dst[d].port && !(ignored && ignored[port]))
			load[port]++;
	}
}

static void lowest_load(const struct routing_ctx *ctx, const uint32_t *load, const uint32_t *cand,
                        uint32_t ncand, uint32_t *low, uint32_t *nlow)
{
	*low = UINT32_MAX;
	*nlow = 0;
	for (uint32_t i = 0; i < ncand; i++) {
		uint32_t l = load[ctx->adj[cand[i]].port];
		if (l < *low)
			*low = l, *nlow = 0;
		*nlow += l == *low;
	}
}

void routing_assign(struct routing_ctx *ctx, uint32_t s, uint32_t t, const uint32_t *cand,
                    uint32_t ncand)
{
	struct routing_assign_memo memo;
	memo.valid = false;
	routing_assign_memo(ctx, s, t, cand, ncand, &memo);
}

void routing_assign_memo(struct routing_ctx *ctx, uint32_t s, uint32_t t, const uint32_t *cand,
                         uint32_t ncand, struct routing_assign_memo *m)
{
	if (!ncand)
		return;
	if (ctx->ucast_mgr && ctx->cfg &&
	    (ctx->cfg->scatter_ports || ctx->cfg->port_shifting || ctx->prof_ignored)) {
		m->valid = false;
		assign_with_knobs(ctx, s, t, cand, ncand);
		return;
	}
	const struct topo_switch *sw = &ctx->t->sws[s];
	uint8_t *lft = sw->lft;
	uint32_t *load = ctx->load + ctx->port_base[s];
	/* The rule: the least loaded candidate, the first of equals in cyclic order from a
	 * start. Found by scanning from the start for the lowest load, kept with how many
	 * candidates hold it: the scan then stops at the first port that does, and the lowest
	 * load is counted again only when its last port took a LID. On a fat tree, where the
	 * ports are nearly even, a LID costs a step or two instead of a pass over every
	 * candidate (24 per LID at 20,736 hosts: most of minhop's time). The lowest load and
	 * the port lookup stay right from one call to the next while the candidates do. */
	if (!m->valid || m->s != s || m->ncand != ncand ||
	    memcmp(m->cand, cand, sizeof(*cand) * ncand) != 0) {
		lowest_load(ctx, load, cand, ncand, &m->low, &m->nlow);
		cand_ports_init(m, ctx, sw, cand, ncand);
		m->s = s;
		m->ncand = ncand < 256 ? ncand : 256;
		memcpy(m->cand, cand, sizeof(*cand) * m->ncand);
		for (uint32_t i = 0; i < m->ncand; i++)
			m->port[i] = ctx->adj[cand[i]].port;
		m->valid = ncand <= 256;
	}
	/* each candidate's port, looked up once (more candidates than the memo holds, which no
	 * switch has, look theirs up each time) */
#define CPORT(i) (m->valid ? m->port[(i)] : ctx->adj[cand[(i)]].port)
	uint32_t low = m->low, nlow = m->nlow, d0, d1;
	pass_range(ctx, t, &d0, &d1);
	/* the destination's rank among its switch's, modulo ncand, kept as d goes (a division
	 * per LID was a fifth of minhop's time at 40,000 hosts) */
	uint32_t rank = (d0 - ctx->dst_start[t]) % ncand;
	for (uint32_t d = d0; d < d1; d++, rank = rank + 1 == ncand ? 0 : rank + 1) {
		uint16_t lid = ctx->dst[d].lid;
		/* A route the switch already holds stays while it is still a valid choice:
		 * a change in one corner of the fabric then reprograms only the switches it
		 * concerns, not every table through a ripple of rebalancing. */
		uint32_t best = m->on ? held_choice(m, sw, lid, ncand) : ncand;
		if (best == ncand) {
			/* equal loads go round-robin by the destination's rank among its switch's
			 * destinations (so an LMC block spreads over different ports, and every
			 * switch maps the n-th host of a leaf to the same of its equal ports: on a
			 * fat tree each shift permutation is then free of congestion, which a round
			 * robin by LID is not, since switch LIDs interleave with the hosts') */
			best = ctx->dst[d].port ? rank : lid % ncand; /* a switch: spread by LID */
			while (load[CPORT(best)] != low)
				best = best + 1 == ncand ? 0 : best + 1;
		}
		uint8_t port = CPORT(best);
		lft[lid] = port;
		/* a switch's own LID carries only management traffic: it does not weigh on the
		 * balance (nor shift it by one at every switch) */
		if (ctx->dst[d].port == 0)
			continue;
		uint32_t was = load[port]++;
		if (was == low && --nlow == 0) /* the last port at the lowest load took it */
			lowest_load(ctx, load, cand, ncand, &low, &nlow);
	}
	m->low = low;
	m->nlow = nlow;
#undef CPORT
}

void routing_assign_local(struct routing_ctx *ctx, uint32_t t)
{
	uint8_t *lft = ctx->t->sws[t].lft;
	for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1]; d++)
		lft[ctx->dst[d].lid] = ctx->dst[d].port;
}

uint8_t routing_path_sl(const struct routing_engine *e, void *state, const struct routing_ctx *ctx,
                        uint16_t slid, uint16_t dlid)
{
	return e && e->path_sl && ctx->nsw ? (uint8_t)(e->path_sl(ctx, state, slid, dlid) & 0xf)
	                                   : 0;
}

bool routing_sl2vl(const struct routing_engine *e, void *state, const struct routing_ctx *ctx,
                   uint32_t sw, uint8_t in, uint8_t out, uint64_t *packed)
{
	if (!e || !e->sl2vl || sw >= ctx->nsw)
		return false;
	uint8_t vl[16] = {0};
	e->sl2vl(ctx, state, sw, in, out, vl);
	uint64_t v = 0;
	for (unsigned sl = 0; sl < 16; sl++)
		v = (v << 4) | (vl[sl] & 0xf);
	*packed = v;
	return true;
}

unsigned routing_layers(const struct routing_engine *e, const void *state)
{
	unsigned n = e && e->layers ? e->layers(state) : 1;
	return n ? n : 1;
}

unsigned routing_layer_vls(const struct routing_engine *e, const void *state)
{
	unsigned n = e && e->layer_vls ? e->layer_vls(state) : routing_layers(e, state);
	return n ? n : 1;
}

unsigned routing_port_vls(const struct topo *t, uint32_t port)
{
	/* VLCap codes 1-5: VL0, VL0-1, VL0-3, VL0-7, VL0-14 */
	static const unsigned n[] = {1, 1, 2, 4, 8, 15};
	const struct topo_port *p = &t->ports[port];
	uint8_t cap = p->pi.vl_cap;
	if (p->peer != TOPO_NONE && t->ports[p->peer].pi.vl_cap < cap)
		cap = t->ports[p->peer].pi.vl_cap;
	return cap < sizeof(n) / sizeof(n[0]) ? n[cap] : 1;
}

unsigned routing_link_vls(const struct routing_ctx *ctx)
{
	const struct topo *t = ctx->t;
	unsigned least = 15;
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		const struct topo_node *n = &t->nodes[t->sws[s].node];
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			unsigned v = routing_port_vls(t, n->first_port + ctx->adj[e].port);
			if (v < least)
				least = v;
		}
	}
	return least;
}

void routing_layer_sl2vl(const struct routing_ctx *ctx, uint32_t sw, uint8_t out, unsigned layers,
                         uint8_t vl_of_sl[16])
{
	const struct topo *t = ctx->t;
	unsigned nvl = routing_port_vls(t, t->nodes[t->sws[sw].node].first_port + out);
	if (!layers)
		layers = 1;
	for (unsigned sl = 0; sl < 16; sl++) {
		unsigned vl = sl;
		if (vl >= nvl)
			vl = sl % layers;
		if (vl >= nvl)
			vl %= nvl;
		vl_of_sl[sl] = (uint8_t)vl;
	}
}

static const struct routing_engine *const engines[] = {
    &routing_minhop, &routing_updn, &routing_dnup, &routing_ftree, &routing_sssp, &routing_dfsssp,
    &routing_lash,   &routing_nue,  &routing_dor,  &routing_torus, &routing_file};

const struct routing_engine *routing_find(const char *name)
{
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}

const char *routing_names(void)
{
	return "minhop, updn, dnup, ftree, sssp, dfsssp, lash, nue, dor, torus, file";
}
