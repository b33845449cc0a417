/* Fat trees: up/down from the roots (so any graph, a quasi fat tree with missing links or
 * switches included, is routed free of credit loops without falling back to another engine),
 * with the climbing port chosen by the destination's digits, D-mod-K (Zahavi, 2010): a
 * switch at each level sends a destination up by the digit of its index that this level
 * spreads, so every shift permutation (host i to host i + k) of a complete tree crosses each
 * link at most once.
 *
 * A destination's index is mixed-radix from the tree itself: its rank among its leaf's
 * endpoints (port order), the leaf's rank among its first parent's down ports, that parent's
 * among its own first parent's, and so on to the roots. Cabling that is the same on every
 * switch of a level (as fat trees are built) then numbers hosts the way their cables run.
 *
 * Leaves are the switches with hosts, or with compute nodes when cn_guid_file lists them
 * (storage and service nodes then do not make a switch a leaf); roots are configured
 * (root_guids, root_guid_file) or the switches farthest from the leaves. */
#include <stdlib.h>
#include <string.h>

#include "routing/files.h"
#include "routing/updown.h"

struct ft {
	struct updown u;
	uint32_t *parent; /* the first parent: up neighbour by the lowest port, or UINT32_MAX */
	uint16_t *pos;    /* rank of the link from the parent among the parent's down ports */
	uint32_t *mdown;  /* per rank: most down ports of a switch */
	uint32_t *wup;    /* per rank: most up ports of a switch */
	uint64_t *div;    /* per rank: the divisor that picks this level's digit */
	bool *leaf;
	uint32_t *roots;
	uint16_t leaf_rank; /* the deepest rank a leaf has */
	uint32_t m0;        /* most endpoints on a leaf */
};

static void ft_free(struct ft *f)
{
	updown_free(&f->u);
	free(f->parent);
	free(f->pos);
	free(f->mdown);
	free(f->wup);
	free(f->div);
	free(f->leaf);
	free(f->roots);
}

/* Leaves by compute nodes: switches with a CA whose node or port GUID the file lists. */
static int cn_leaves(struct routing_ctx *ctx, bool *leaf)
{
	struct topo *t = ctx->t;
	uint64_t *cn;
	uint32_t ncn;
	if (routing_read_guid_file(ctx->cfg->cn_guid_file, &cn, &ncn, ctx->why, sizeof(ctx->why)) <
	    0)
		return -1;
	struct u64map set = {0};
	for (uint32_t i = 0; i < ncn; i++)
		if (u64map_put(&set, cn[i], 1) < 0) {
			free(cn);
			u64map_free(&set);
			snprintf(ctx->why, sizeof(ctx->why), "out of memory");
			return -1;
		}
	free(cn);
	uint32_t found = 0;
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		leaf[s] = false;
		for (uint32_t d = ctx->dst_start[s]; d < ctx->dst_start[s + 1]; d++) {
			if (!ctx->dst[d].port)
				continue;
			uint32_t p = t->lid_port[ctx->dst[d].lid];
			if (p == TOPO_NONE)
				continue;
			if (u64map_get(&set, t->nodes[t->ports[p].node].guid) != U64MAP_NONE ||
			    u64map_get(&set, topo_port_guid(t, p)) != U64MAP_NONE) {
				leaf[s] = true;
				found++;
				break;
			}
		}
	}
	u64map_free(&set);
	if (!found) {
		snprintf(ctx->why, sizeof(ctx->why),
		         "no compute node of %.200s is attached to a switch",
		         ctx->cfg->cn_guid_file);
		return -1;
	}
	return 0;
}

/* The tree's shape: first parents, positions, arities per rank, divisors. */
static int ft_shape(struct routing_ctx *ctx, struct ft *f)
{
	uint32_t ns = ctx->nsw;
	const uint16_t *rank = f->u.rank;
	uint32_t nr = 0;
	for (uint32_t s = 0; s < ns; s++)
		if (rank[s] != RT_INF && rank[s] + 1u > nr)
			nr = rank[s] + 1u;
	f->parent = malloc(sizeof(uint32_t) * (ns + 1));
	f->pos = calloc(ns + 1, sizeof(uint16_t));
	f->mdown = calloc(nr + 1, sizeof(uint32_t));
	f->wup = calloc(nr + 1, sizeof(uint32_t));
	f->div = calloc(nr + 1, sizeof(uint64_t));
	if (!f->parent || !f->pos || !f->mdown || !f->wup || !f->div)
		return -1;
	f->leaf_rank = 0;
	f->m0 = 1;
	for (uint32_t s = 0; s < ns; s++) {
		f->parent[s] = UINT32_MAX;
		if (rank[s] == RT_INF)
			continue;
		uint32_t up = 0, down = 0, hosts = 0;
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			uint32_t x = ctx->adj[e].to;
			if (rank[x] + 1u == rank[s]) {
				if (f->parent[s] == UINT32_MAX)
					f->parent[s] = x;
				up++;
			} else if (rank[x] == rank[s] + 1u) {
				down++;
			}
		}
		if (up > f->wup[rank[s]])
			f->wup[rank[s]] = up;
		if (down > f->mdown[rank[s]])
			f->mdown[rank[s]] = down;
		if (f->leaf[s]) {
			if (rank[s] > f->leaf_rank)
				f->leaf_rank = rank[s];
			for (uint32_t d = ctx->dst_start[s]; d < ctx->dst_start[s + 1]; d++) {
				uint32_t p = ctx->t->lid_port[ctx->dst[d].lid];
				if (ctx->dst[d].port && p != TOPO_NONE &&
				    ctx->t->ports[p].lid == ctx->dst[d].lid)
					hosts++;
			}
			if (hosts > f->m0)
				f->m0 = hosts;
		}
	}
	/* a switch's position under its first parent: its first link among the parent's down
	 * ports */
	for (uint32_t p = 0; p < ns; p++) {
		if (rank[p] == RT_INF)
			continue;
		uint16_t k = 0;
		for (uint32_t e = ctx->adj_start[p]; e < ctx->adj_start[p + 1]; e++) {
			uint32_t x = ctx->adj[e].to;
			if (rank[x] != rank[p] + 1u)
				continue;
			bool first = true;
			for (uint32_t e2 = ctx->adj_start[p]; e2 < e; e2++)
				if (ctx->adj[e2].to == x)
					first = false;
			if (first && f->parent[x] == p)
				f->pos[x] = k;
			k++;
		}
	}
	/* the leaf spreads by the lowest digit; each level up divides by the up ports below */
	uint64_t d = 1;
	for (int r = (int)nr - 1; r >= 0; r--) {
		f->div[r] = d;
		if (r <= f->leaf_rank && f->wup[r] && d < (UINT64_C(1) << 40))
			d *= f->wup[r];
	}
	return 0;
}

/* The index of a destination port on leaf-side switch s with rank j among its endpoints. */
static uint64_t ft_index(const struct ft *f, uint32_t s, uint32_t j)
{
	uint64_t g = j, mult = f->m0;
	for (uint32_t x = s, hops = 0; f->parent[x] != UINT32_MAX && hops < 64; hops++) {
		g += mult * f->pos[x];
		uint32_t p = f->parent[x];
		mult *= f->mdown[f->u.rank[p]] ? f->mdown[f->u.rank[p]] : 1;
		if (mult > (UINT64_C(1) << 40))
			break;
		x = p;
	}
	return g;
}

/* Which LID of its port's LMC block a LID is (0: the base LID). */
static uint32_t lmc_offset(const struct topo *t, uint16_t lid)
{
	uint32_t p = t->lid_port[lid];
	return p != TOPO_NONE && t->ports[p].lid <= lid ? (uint32_t)(lid - t->ports[p].lid) : 0;
}

/* On the threads of updown_route_all: each destination's index at every level, once for
 * all the switches (prepare), then its routes at switch s (route): a climb by the digit of
 * s's level, the rest balanced by load. */
struct ft_run {
	struct routing_ctx *ctx;
	const struct ft *f;
	uint64_t *g;           /* per slot, per row (rank), per destination of the switch */
	uint32_t rows, stride; /* a row per rank up to the leaves', one for any below them */
};

static uint64_t *ft_row(const struct ft_run *w, uint32_t slot, uint32_t r)
{
	return w->g + ((size_t)slot * w->rows + r) * w->stride;
}

static void ft_prepare(void *arg, uint32_t slot, const struct updown *label)
{
	const struct ft_run *w = arg;
	const struct routing_ctx *ctx = w->ctx;
	const struct ft *f = w->f;
	uint32_t dst = label->dst, d0 = ctx->dst_start[dst], d1 = ctx->dst_start[dst + 1], j = 0;
	for (uint32_t d = d0; d < d1; d++) {
		uint64_t g = ctx->dst[d].lid; /* the switch itself: spread by LID */
		uint32_t off = 0;
		if (ctx->dst[d].port) {
			off = lmc_offset(ctx->t, ctx->dst[d].lid);
			if (!off && d > d0 && ctx->dst[d - 1].port)
				j++;
			g = ft_index(f, dst, j);
		}
		for (uint32_t r = 0; r < w->rows; r++) {
			uint64_t div = r <= f->leaf_rank ? f->div[r] : 1;
			/* an LMC block's LIDs take the next digits' ports */
			ft_row(w, slot, r)[d - d0] = ctx->dst[d].port ? g / div + off : g;
		}
	}
}

static void ft_route(void *arg, uint32_t slot, const struct updown *label, uint32_t s,
                     const uint32_t *cand, uint32_t n, bool climb)
{
	const struct ft_run *w = arg;
	struct routing_ctx *ctx = w->ctx;
	const struct ft *f = w->f;
	if (!climb || n == 1) {
		routing_assign(ctx, s, label->dst, cand, n);
		return;
	}
	uint32_t d0 = ctx->dst_start[label->dst], d1 = ctx->dst_start[label->dst + 1];
	uint8_t *lft = ctx->t->sws[s].lft;
	uint32_t *load = ctx->load + ctx->port_base[s];
	uint32_t r = f->u.rank[s] <= f->leaf_rank ? f->u.rank[s] : f->leaf_rank + 1u;
	const uint64_t *g = ft_row(w, slot, r);
	for (uint32_t d = d0; d < d1; d++) {
		/* the index is small on any real tree: a 32-bit remainder is cheaper */
		uint64_t x = g[d - d0];
		uint32_t i = x <= UINT32_MAX ? (uint32_t)x % n : (uint32_t)(x % n);
		uint8_t port = ctx->adj[cand[i]].port;
		lft[ctx->dst[d].lid] = port;
		if (ctx->dst[d].port)
			load[port]++;
	}
}

static int ftree_unicast(struct routing_ctx *ctx, void *state)
{
	(void)state;
	uint32_t ns = ctx->nsw, nroots = 0;
	struct ft f = {0};
	int rc = -1;
	uint32_t maxdst = 0;
	for (uint32_t s = 0; s < ns; s++)
		if (ctx->dst_start[s + 1] - ctx->dst_start[s] > maxdst)
			maxdst = ctx->dst_start[s + 1] - ctx->dst_start[s];
	f.leaf = malloc(sizeof(bool) * (ns + 1));
	f.roots = malloc(sizeof(uint32_t) * (ns + 1));
	if (!f.leaf || !f.roots)
		goto oom;
	if (ctx->cfg->cn_guid_file[0]) {
		if (cn_leaves(ctx, f.leaf) < 0)
			goto out;
	} else {
		routing_host_switches(ctx, f.leaf);
	}
	if (routing_configured_roots(ctx, "ftree", f.roots, &nroots) < 0)
		goto out;
	if (!nroots && routing_detect_roots(ctx, f.leaf, f.roots, &nroots) < 0) {
		snprintf(ctx->why, sizeof(ctx->why), "no root switch found");
		goto out;
	}
	if (updown_init(&f.u, ctx, f.roots, nroots, false) < 0 || ft_shape(ctx, &f) < 0)
		goto oom;
	log_info(ctx->log, "routing",
	         "ftree: %u root switch(es), leaves at rank %u, %u switches ranked, up to %u "
	         "endpoints a leaf",
	         nroots, f.leaf_rank, f.u.ranked, f.m0);

	struct ft_run w = {.ctx = ctx, .f = &f, .rows = f.leaf_rank + 2u, .stride = maxdst + 1};
	w.g = malloc(sizeof(uint64_t) * UPDOWN_SLOTS * w.rows * w.stride);
	if (!w.g)
		goto oom;
	struct updown_hooks h = {.prepare = ft_prepare, .route = ft_route, .arg = &w};
	int r = updown_route_all(&f.u, ctx, f.leaf, &h);
	free(w.g);
	if (r < 0)
		goto out;
	rc = 0;
	goto out;
oom:
	snprintf(ctx->why, sizeof(ctx->why), "out of memory");
out:
	ft_free(&f);
	return rc;
}

const struct routing_engine routing_ftree = {
    .name = "ftree",
    .summary = "fat trees (quasi ones too): up/down with D-mod-K port choice, congestion-free "
               "shift permutations on complete trees",
    .unicast = ftree_unicast,
};
