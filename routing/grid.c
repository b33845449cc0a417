/* Meshes and tori found in the cabling (see grid.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/grid.h"

#define NONE    UINT32_MAX
#define NOWHERE UINT16_MAX

static const char *sw_name(const struct routing_ctx *ctx, uint32_t s)
{
	const struct topo_node *n = &ctx->t->nodes[ctx->t->sws[s].node];
	return n->desc[0] ? n->desc : "?";
}

/* The peer switch of s by port p, NONE without a switch link there. */
static uint32_t peer_by_port(const struct routing_ctx *ctx, uint32_t s, unsigned p)
{
	for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++)
		if (ctx->adj[e].port == p)
			return ctx->adj[e].to;
	return NONE;
}

static unsigned peer_port(const struct routing_ctx *ctx, uint32_t s, unsigned p)
{
	const struct topo *t = ctx->t;
	uint32_t peer = t->ports[t->nodes[t->sws[s].node].first_port + p].peer;
	return peer == TOPO_NONE ? 0 : t->ports[peer].num;
}

/* The port pairs most links use: the dimensions, lowest ports first. */
static int find_dims(struct grid *g, struct routing_ctx *ctx, const char *engine)
{
	uint32_t *count = calloc(256 * 256, sizeof(uint32_t));
	if (!count) {
		snprintf(ctx->why, sizeof(ctx->why), "%s: out of memory", engine);
		return -1;
	}
	for (uint32_t s = 0; s < ctx->nsw; s++)
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			unsigned p = ctx->adj[e].port, q = peer_port(ctx, s, p);
			if (p != q)
				count[(p < q ? p : q) * 256 + (p < q ? q : p)]++;
		}
	uint32_t best = 0;
	for (uint32_t i = 0; i < 256 * 256; i++)
		if (count[i] > best)
			best = count[i];
	bool used[256] = {false};
	g->ndims = 0;
	while (best && g->ndims < GRID_MAX_DIMS) {
		uint32_t pick = NONE;
		for (uint32_t i = 0; i < 256 * 256; i++)
			if (count[i] && count[i] * 4 >= best && !used[i / 256] && !used[i % 256] &&
			    (pick == NONE || count[i] > count[pick]))
				pick = i;
		if (pick == NONE)
			break;
		used[pick / 256] = used[pick % 256] = true;
		/* the higher port leads plus (fabricsim's cabling; any consistent choice works) */
		g->minus[g->ndims] = (uint8_t)(pick / 256);
		g->plus[g->ndims] = (uint8_t)(pick % 256);
		g->ndims++;
		count[pick] = 0;
	}
	free(count);
	if (!g->ndims) {
		snprintf(ctx->why, sizeof(ctx->why),
		         "%s: no grid in the cabling (no pair of ports that links join)", engine);
		return -1;
	}
	/* dimensions in port order: x first */
	for (unsigned i = 0; i < g->ndims; i++)
		for (unsigned j = i + 1; j < g->ndims; j++)
			if (g->minus[j] < g->minus[i]) {
				uint8_t m = g->minus[i], p = g->plus[i];
				g->minus[i] = g->minus[j];
				g->plus[i] = g->plus[j];
				g->minus[j] = m;
				g->plus[j] = p;
			}
	return 0;
}

/* Every switch link must join plus[d] to minus[d] of some dimension. */
static int check_cabling(const struct grid *g, struct routing_ctx *ctx, const char *engine)
{
	for (uint32_t s = 0; s < ctx->nsw; s++)
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			unsigned p = ctx->adj[e].port, q = peer_port(ctx, s, p), d = 0;
			for (; d < g->ndims; d++)
				if ((p == g->plus[d] && q == g->minus[d]) ||
				    (p == g->minus[d] && q == g->plus[d]))
					break;
			if (d == g->ndims) {
				snprintf(ctx->why, sizeof(ctx->why),
				         "%s: switch \"%s\" port %u leads to \"%s\" port %u, which "
				         "is not "
				         "a dimension of the grid (its links join ports %u-%u%s%s)",
				         engine, sw_name(ctx, s), p, sw_name(ctx, ctx->adj[e].to),
				         q, g->plus[0], g->minus[0], g->ndims > 1 ? ", ..." : "",
				         "");
				return -1;
			}
		}
	return 0;
}

/* Ring length of dimension d: the steps plus-ward from some switch back to itself (0: no
 * ring closes: a line). */
static uint16_t ring_length(const struct grid *g, const struct routing_ctx *ctx, unsigned d)
{
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		uint32_t x = s;
		for (unsigned k = 1; k <= ctx->nsw && k < NOWHERE; k++) {
			x = peer_by_port(ctx, x, g->plus[d]);
			if (x == NONE)
				break;
			if (x == s)
				return (uint16_t)k;
		}
	}
	return 0;
}

static uint32_t pos_of(const struct grid *g, const uint16_t *c)
{
	uint32_t p = 0;
	for (unsigned d = g->ndims; d-- > 0;)
		p = p * g->n[d] + c[d];
	return p;
}

/* The switch with links and the lowest GUID, NONE when no switch has links. */
static uint32_t grid_seed(const struct routing_ctx *ctx)
{
	uint32_t seed = NONE;
	for (uint32_t s = 0; s < ctx->nsw; s++)
		if (ctx->adj_start[s] != ctx->adj_start[s + 1] &&
		    (seed == NONE || ctx->t->nodes[ctx->t->sws[s].node].guid <
		                         ctx->t->nodes[ctx->t->sws[seed].node].guid))
			seed = s;
	return seed;
}

/* Each switch's coordinates (c, GRID_MAX_DIMS each) as offsets from the seed, wrapped on
 * rings, breadth first; seen marks those reached. 0; -1 with ctx->why when a switch is
 * reached at two places. */
static int grid_place(const struct grid *g, struct routing_ctx *ctx, const char *engine,
                      uint32_t seed, int32_t *c, uint32_t *queue, bool *seen)
{
	uint32_t head = 0, tail = 0;
	seen[seed] = true;
	memset(c + seed * GRID_MAX_DIMS, 0, sizeof(int32_t) * GRID_MAX_DIMS);
	queue[tail++] = seed;
	while (head < tail) {
		uint32_t s = queue[head++];
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			uint32_t m = ctx->adj[e].to;
			unsigned p = ctx->adj[e].port, d = 0;
			while (p != g->plus[d] && p != g->minus[d])
				d++;
			int32_t want[GRID_MAX_DIMS];
			memcpy(want, c + s * GRID_MAX_DIMS, sizeof(want));
			want[d] += p == g->plus[d] ? 1 : -1;
			if (g->ring[d])
				want[d] = (want[d] + g->n[d]) % g->n[d];
			if (!seen[m]) {
				seen[m] = true;
				memcpy(c + m * GRID_MAX_DIMS, want, sizeof(want));
				queue[tail++] = m;
			} else if (memcmp(c + m * GRID_MAX_DIMS, want,
			                  sizeof(int32_t) * g->ndims)) {
				snprintf(
				    ctx->why, sizeof(ctx->why),
				    "%s: switch \"%s\" is reached at two places of the grid (from "
				    "\"%s\" by port %u): not a mesh or torus",
				    engine, sw_name(ctx, m), sw_name(ctx, s), p);
				return -1;
			}
		}
	}
	return 0;
}

/* Lines from 0 to their extent, and the grid's places. 0; -1 with ctx->why. */
static int grid_extents(struct grid *g, struct routing_ctx *ctx, const char *engine, int32_t *c,
                        const bool *seen)
{
	uint32_t ns = ctx->nsw;
	for (unsigned d = 0; d < g->ndims; d++) {
		if (g->ring[d])
			continue;
		int32_t lo = 0, hi = 0;
		for (uint32_t s = 0; s < ns; s++)
			if (seen[s]) {
				int32_t v = c[s * GRID_MAX_DIMS + d];
				lo = v < lo ? v : lo;
				hi = v > hi ? v : hi;
			}
		for (uint32_t s = 0; s < ns; s++)
			c[s * GRID_MAX_DIMS + d] -= lo;
		if (hi - lo + 1 >= NOWHERE) {
			snprintf(ctx->why, sizeof(ctx->why), "%s: dimension %u too long", engine,
			         d);
			return -1;
		}
		g->n[d] = (uint16_t)(hi - lo + 1);
	}
	g->npos = 1;
	for (unsigned d = 0; d < g->ndims; d++)
		g->npos *= g->n[d];
	if (g->npos > 16u * ns + 64) {
		snprintf(ctx->why, sizeof(ctx->why),
		         "%s: the grid would have %u places for %u switches: not a mesh or torus",
		         engine, g->npos, ns);
		return -1;
	}
	return 0;
}

/* g's coordinates of each switch and the switch at each place. 0; -1 with ctx->why when
 * two take one place; -2 out of memory. */
static int grid_index(struct grid *g, struct routing_ctx *ctx, const char *engine, const int32_t *c,
                      const bool *seen)
{
	uint32_t ns = ctx->nsw;
	g->coord = malloc(sizeof(uint16_t) * GRID_MAX_DIMS * (ns + 1));
	g->at = malloc(sizeof(uint32_t) * (g->npos + 1));
	g->gap = calloc((size_t)g->npos * GRID_MAX_DIMS + 1, 1);
	g->broken = calloc((size_t)g->npos * GRID_MAX_DIMS + 1, sizeof(bool));
	if (!g->coord || !g->at || !g->gap || !g->broken)
		return -2;
	for (uint32_t p = 0; p < g->npos; p++)
		g->at[p] = NONE;
	for (uint32_t s = 0; s < ns; s++) {
		uint16_t *cs = g->coord + s * GRID_MAX_DIMS;
		for (unsigned d = 0; d < GRID_MAX_DIMS; d++)
			cs[d] = seen[s] && d < g->ndims ? (uint16_t)c[s * GRID_MAX_DIMS + d] : 0;
		if (!seen[s]) {
			cs[0] = NOWHERE;
			continue;
		}
		uint32_t p = pos_of(g, cs);
		if (g->at[p] != NONE) {
			snprintf(ctx->why, sizeof(ctx->why),
			         "%s: switches \"%s\" and \"%s\" take the same place of the grid",
			         engine, sw_name(ctx, g->at[p]), sw_name(ctx, s));
			return -1;
		}
		g->at[p] = s;
	}
	return 0;
}

/* Gaps: a plus link missing where the grid has one (a ring's every position, a line's all
 * but the last); a ring with a gap is broken. */
static void grid_gaps(struct grid *g, const struct routing_ctx *ctx)
{
	for (uint32_t p = 0; p < g->npos; p++) {
		uint16_t cp[GRID_MAX_DIMS] = {0};
		for (unsigned d = 0, r = p; d < g->ndims; d++) {
			cp[d] = (uint16_t)(r % g->n[d]);
			r /= g->n[d];
		}
		for (unsigned d = 0; d < g->ndims; d++) {
			if (!g->ring[d] && cp[d] + 1u == g->n[d])
				continue;
			uint32_t s = g->at[p];
			if (s != NONE && peer_by_port(ctx, s, g->plus[d]) != NONE)
				continue;
			g->gap[p * GRID_MAX_DIMS + d] = 1;
			uint16_t base[GRID_MAX_DIMS];
			memcpy(base, cp, sizeof(base));
			base[d] = 0;
			g->broken[pos_of(g, base) * GRID_MAX_DIMS + d] = true;
		}
	}
}

/* ---- torus_config (torus-2QoS.conf): the axes, origin and shape a site gave ---- */

struct conf_map {
	uint32_t seed;                /* the origin before the datelines move it */
	unsigned axis[GRID_MAX_DIMS]; /* grid dimension -> the file's axis (0 x, 1 y, 2 z) */
	int32_t shift[GRID_MAX_DIMS]; /* the datelines, by grid dimension */
};

static const char axis_name[] = "xyz";

/* The switch with node GUID guid and switch links, NONE if not there. */
static uint32_t sw_by_guid(const struct routing_ctx *ctx, uint64_t guid)
{
	uint32_t n = u64map_get(&ctx->t->by_guid, guid);
	if (n == U64MAP_NONE || !topo_is_switch(ctx->t, n) || !ctx->t->nodes[n].present)
		return NONE;
	uint32_t s = ctx->t->nodes[n].sw;
	return s < ctx->nsw && ctx->adj_start[s] != ctx->adj_start[s + 1] ? s : NONE;
}

/* The port of switch s with a link to switch to, 0 if none. */
static unsigned port_to(const struct routing_ctx *ctx, uint32_t s, uint32_t to)
{
	for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++)
		if (ctx->adj[e].to == to)
			return ctx->adj[e].port;
	return 0;
}

/* A seed's links as ports of its switch (port[axis][0] plus, [1] minus; 0 not given): false
 * with why when one of its switches or links is not there. */
static bool seed_ports(const struct routing_ctx *ctx, const struct torus_conf_seed *sd,
                       uint32_t *from, unsigned port[TORUS_CONF_DIMS][2], char *why, size_t len)
{
	/* filled only when the seed is whole: a seed that is not leaves nothing behind */
	uint32_t s = sw_by_guid(ctx, sd->from);
	unsigned pt[TORUS_CONF_DIMS][2];
	if (s == NONE) {
		snprintf(why, len, "switch 0x%016llx is not there", (unsigned long long)sd->from);
		return false;
	}
	for (unsigned a = 0; a < TORUS_CONF_DIMS; a++) {
		for (unsigned m = 0; m < 2; m++) {
			uint64_t guid = m ? sd->minus[a] : sd->plus[a];
			uint32_t to = guid ? sw_by_guid(ctx, guid) : NONE;
			pt[a][m] = to == NONE ? 0 : port_to(ctx, s, to);
			if (guid && !pt[a][m]) {
				snprintf(why, len, "%c%c_link: no link from 0x%016llx to 0x%016llx",
				         axis_name[a], m ? 'm' : 'p', (unsigned long long)sd->from,
				         (unsigned long long)guid);
				return false;
			}
		}
		if (pt[a][0] && pt[a][0] == pt[a][1]) {
			/* a ring of two: both ways are the one link, which says no direction */
			snprintf(why, len, "%c_link: xp and xm name one link of 0x%016llx",
			         axis_name[a], (unsigned long long)sd->from);
			return false;
		}
	}
	*from = s;
	memcpy(port, pt, sizeof(pt));
	return true;
}

static void swap_dirs(struct grid *g, unsigned d)
{
	uint8_t p = g->plus[d];
	g->plus[d] = g->minus[d];
	g->minus[d] = p;
}

/* The grid dimension whose ports include p, pointed so that p leads plus (or minus). */
static int orient(struct grid *g, unsigned p, bool plus)
{
	for (unsigned d = 0; d < g->ndims; d++)
		if (g->plus[d] == p || g->minus[d] == p) {
			if ((g->plus[d] == p) != plus)
				swap_dirs(g, d);
			return (int)d;
		}
	return -1;
}

/* Dimensions in the file's axis order, each pointed as the seed's links say. */
static int conf_axes(struct grid *g, struct routing_ctx *ctx, const char *engine,
                     const struct torus_conf *conf, unsigned port[TORUS_CONF_DIMS][2],
                     unsigned seed_no, struct conf_map *m)
{
	int at[TORUS_CONF_DIMS]; /* axis -> grid dimension, -1 not seeded */
	bool taken[GRID_MAX_DIMS] = {false};
	for (unsigned a = 0; a < TORUS_CONF_DIMS; a++) {
		at[a] = -1;
		for (unsigned k = 0; k < 2 && conf->radix[a] > 1; k++) {
			if (!port[a][k])
				continue;
			int d = orient(g, port[a][k], k == 0);
			if (d < 0 || (at[a] >= 0 && d != at[a]) || (at[a] < 0 && taken[d])) {
				snprintf(ctx->why, sizeof(ctx->why),
				         "%s: torus_config seed %u: %c%c_link (port %u) is not the "
				         "%c axis it should be, or that axis's links disagree",
				         engine, seed_no, axis_name[a], k ? 'm' : 'p', port[a][k],
				         axis_name[a]);
				return -1;
			}
			at[a] = d;
			taken[d] = true;
		}
	}
	struct grid o = *g;
	unsigned k = 0;
	for (unsigned a = 0; a < TORUS_CONF_DIMS; a++) {
		if (conf->radix[a] <= 1)
			continue;
		unsigned d = 0;
		if (at[a] >= 0)
			d = (unsigned)at[a];
		else
			while (taken[d])
				d++; /* an axis no link seeds: the next dimension in port order */
		taken[d] = true;
		g->plus[k] = o.plus[d];
		g->minus[k] = o.minus[d];
		m->axis[k++] = a;
	}
	return 0;
}

/* The first seed whose switches and links are all there gives the origin and the axes. */
static int conf_seed(struct grid *g, struct routing_ctx *ctx, const char *engine,
                     const struct torus_conf *conf, struct conf_map *m)
{
	unsigned nd = 0;
	for (unsigned a = 0; a < TORUS_CONF_DIMS; a++)
		nd += conf->radix[a] > 1;
	if (nd != g->ndims) {
		snprintf(ctx->why, sizeof(ctx->why),
		         "%s: torus_config says %u x %u x %u (%u dimensions), the cabling has %u",
		         engine, conf->radix[0], conf->radix[1], conf->radix[2], nd, g->ndims);
		return -1;
	}
	unsigned port[TORUS_CONF_DIMS][2] = {{0}};
	const struct torus_conf_seed *sd = NULL;
	char first_why[200] = "";
	for (unsigned i = 0; i < conf->nseeds && !sd; i++) {
		char why[160];
		if (seed_ports(ctx, &conf->seed[i], &m->seed, port, why, sizeof(why))) {
			sd = &conf->seed[i];
		} else if (!first_why[0]) {
			snprintf(first_why, sizeof(first_why), "seed %u: %s", i + 1, why);
		}
	}
	if (conf->nseeds && !sd) {
		snprintf(ctx->why, sizeof(ctx->why),
		         "%s: no seed of torus_config is whole (%s); next_seed gives others",
		         engine, first_why);
		return -1;
	}
	if (conf_axes(g, ctx, engine, conf, port, sd ? (unsigned)(sd - conf->seed) + 1 : 0, m) < 0)
		return -1;
	for (unsigned k = 0; k < g->ndims; k++)
		m->shift[k] = sd ? sd->dateline[m->axis[k]] : 0;
	return 0;
}

/* The file's shape against the cabling's, each ring's origin where the datelines put it. A
 * ring the file calls a mesh is routed as a line (its closing links unused), a line it calls
 * a torus is a ring with a gap. */
static int conf_shape(struct grid *g, struct routing_ctx *ctx, const char *engine,
                      const struct torus_conf *conf, const struct conf_map *m, int32_t *c,
                      const bool *seen)
{
	for (unsigned k = 0; k < g->ndims; k++) {
		unsigned a = m->axis[k];
		if (g->n[k] != conf->radix[a]) {
			snprintf(
			    ctx->why, sizeof(ctx->why),
			    "%s: torus_config says %u switches along %c, the cabling's dimension "
			    "of ports %u-%u has %u",
			    engine, conf->radix[a], axis_name[a], g->minus[k], g->plus[k], g->n[k]);
			return -1;
		}
		bool was_ring = g->ring[k];
		g->ring[k] = conf->ring[a];
		if (!was_ring && !g->ring[k])
			continue; /* a line: from its end, whatever the seed */
		int32_t n = g->n[k], base = c[m->seed * GRID_MAX_DIMS + k] + m->shift[k];
		for (uint32_t s = 0; s < ctx->nsw; s++)
			if (seen[s]) {
				int32_t *v = &c[s * GRID_MAX_DIMS + k];
				*v = (int32_t)((((int64_t)*v - base) % n + n) % n);
			}
	}
	return 0;
}

int grid_find(struct grid *g, struct routing_ctx *ctx, const char *engine,
              const struct torus_conf *conf)
{
	memset(g, 0, sizeof(*g));
	uint32_t ns = ctx->nsw;
	if (find_dims(g, ctx, engine) < 0 || check_cabling(g, ctx, engine) < 0)
		return -1;
	/* coordinates as offsets from the seed (the lowest GUID, or torus_config's), wrapped on
	 * rings */
	struct conf_map m = {.seed = grid_seed(ctx)};
	if (m.seed == NONE) {
		snprintf(ctx->why, sizeof(ctx->why), "%s: no switch links", engine);
		return -1;
	}
	if (conf && conf_seed(g, ctx, engine, conf, &m) < 0)
		return -1;
	for (unsigned d = 0; d < g->ndims; d++) {
		g->n[d] = ring_length(g, ctx, d);
		g->ring[d] = g->n[d] != 0;
	}
	int32_t *c = malloc(sizeof(int32_t) * GRID_MAX_DIMS * (ns + 1));
	uint32_t *queue = malloc(sizeof(uint32_t) * (ns + 1));
	bool *seen = calloc(ns + 1, sizeof(bool));
	int rc = !c || !queue || !seen ? -2 : grid_place(g, ctx, engine, m.seed, c, queue, seen);
	if (rc == 0)
		rc = grid_extents(g, ctx, engine, c, seen);
	if (rc == 0 && conf)
		rc = conf_shape(g, ctx, engine, conf, &m, c, seen);
	if (rc == 0)
		rc = grid_index(g, ctx, engine, c, seen);
	if (rc == 0)
		grid_gaps(g, ctx);
	if (rc == -2)
		snprintf(ctx->why, sizeof(ctx->why), "%s: out of memory", engine);
	free(c);
	free(queue);
	free(seen);
	if (rc < 0)
		grid_free(g);
	return rc < 0 ? -1 : 0;
}

void grid_free(struct grid *g)
{
	free(g->coord);
	free(g->at);
	free(g->gap);
	free(g->broken);
	g->coord = NULL;
	g->at = NULL;
	g->gap = NULL;
	g->broken = NULL;
}

static bool in_grid(const struct grid *g, uint32_t s)
{
	return g->coord && g->coord[s * GRID_MAX_DIMS] != NOWHERE;
}

static bool broken_at(const struct grid *g, const uint16_t *c, unsigned d)
{
	uint16_t base[GRID_MAX_DIMS];
	memcpy(base, c, sizeof(base));
	base[d] = 0;
	return g->broken[pos_of(g, base) * GRID_MAX_DIMS + d];
}

bool grid_ring_broken(const struct grid *g, uint32_t s, unsigned d)
{
	return in_grid(g, s) && broken_at(g, g->coord + s * GRID_MAX_DIMS, d);
}

/* Is every plus link from position `from`, `len` steps along d (wrapping), present? */
static bool clear(const struct grid *g, const uint16_t *c, unsigned d, unsigned from, unsigned len)
{
	uint16_t x[GRID_MAX_DIMS];
	memcpy(x, c, sizeof(x));
	for (unsigned k = 0; k < len; k++) {
		x[d] = (uint16_t)((from + k) % g->n[d]);
		if (g->gap[pos_of(g, x) * GRID_MAX_DIMS + d])
			return false;
	}
	return true;
}

/* The way along dimension d from a to b at coordinates c: *plus, *crosses (the dateline);
 * false when cut. */
static bool way(const struct grid *g, const uint16_t *c, unsigned d, unsigned a, unsigned b,
                bool *plus, bool *crosses)
{
	unsigned n = g->n[d];
	if (!g->ring[d]) {
		*plus = b > a;
		*crosses = false;
		return *plus ? clear(g, c, d, a, b - a) : clear(g, c, d, b, a - b);
	}
	unsigned fwd = (b + n - a) % n, bwd = n - fwd;
	bool intact = !broken_at(g, c, d);
	bool pf = intact || clear(g, c, d, a, fwd), pb = intact || clear(g, c, d, b, bwd);
	if (!pf && !pb)
		return false;
	/* a tie goes the way that stays off the dateline (a < b: plus), as OpenSM's torus-2QoS
	 * does: the same paths and path SLs on the same torus */
	*plus = pf && (!pb || fwd < bwd || (fwd == bwd && a < b));
	*crosses = intact && (*plus ? a > b : a < b);
	return true;
}

/* Is the link from position c one step along d (plus or minus) there? */
static bool link_there(const struct grid *g, const uint16_t *c, unsigned d, bool plus)
{
	uint16_t x[GRID_MAX_DIMS];
	memcpy(x, c, sizeof(x));
	if (plus) {
		if (!g->ring[d] && c[d] + 1u >= g->n[d])
			return false;
	} else {
		if (!g->ring[d] && c[d] == 0)
			return false;
		x[d] = (uint16_t)((c[d] + g->n[d] - 1u) % g->n[d]);
	}
	return !g->gap[pos_of(g, x) * GRID_MAX_DIMS + d];
}

/* Along d towards the missing switch at position m of cur's line: the side to approach it
 * from (*plus: from m - 1, moving plus), and whether cur is there already. false when
 * neither side can be reached. */
static bool approach(const struct grid *g, const uint16_t *cur, unsigned d, unsigned m, bool *plus,
                     bool *beside)
{
	unsigned n = g->n[d], i = cur[d], dp, dm;
	bool can_p, can_m;
	if (g->ring[d]) {
		dp = (m + n - 1 - i) % n;
		dm = (i + n - (m + 1) % n) % n;
		can_p = can_m = true;
	} else {
		can_p = i < m;
		can_m = i > m;
		dp = can_p ? m - 1 - i : 0;
		dm = can_m ? i - m - 1 : 0;
	}
	can_p = can_p && clear(g, cur, d, i, dp);
	can_m = can_m && clear(g, cur, d, (m + 1) % n, dm);
	if (!can_p && !can_m)
		return false;
	*beside = (can_p && dp == 0) || (can_m && dm == 0);
	*plus = can_p && (!can_m || dp <= dm);
	return true;
}

/* The next hop from position cur towards ct: dimension, direction, and whether it crosses
 * the dimension's dateline (on an intact ring). false at ct, or when the way is cut.
 *
 * Dimension order, with one exception (what OpenSM's torus-2QoS does): where the turn into
 * the next dimension would be at a missing switch (the corner of the path), the path goes
 * along its line up to the switch beside the missing one, steps aside there into a later
 * dimension in which it has to move anyway (towards where it goes), turns back into the
 * lower dimension (which dimension order never does) for one hop past the missing switch,
 * and goes on along the missing switch's own ring (broken by it: a line) to the
 * destination: as many hops as the plain path. The hop after the turn back takes VLs of its
 * own (the SL-to-VL tables by input port, torus.c); any credit loop through such turns
 * would have to go round the missing switch, and that hop cannot close one. */
static bool next_hop(const struct grid *g, const uint16_t *cur, const uint16_t *ct, unsigned *dim,
                     bool *plus, bool *crosses)
{
	for (unsigned d = 0; d < g->ndims; d++) {
		if (cur[d] == ct[d])
			continue;
		uint16_t corner[GRID_MAX_DIMS];
		memcpy(corner, cur, sizeof(corner));
		corner[d] = ct[d];
		unsigned go = d;
		bool beside = false;
		if (g->at[pos_of(g, corner)] != NONE) {
			bool cr;
			if (!way(g, cur, d, cur[d], ct[d], plus, &cr))
				return false;
		} else if (!approach(g, cur, d, ct[d], plus, &beside)) {
			return false;
		}
		if (beside) {
			for (go = d + 1; go < g->ndims && cur[go] == ct[go]; go++)
				;
			if (go == g->ndims)
				return false; /* the destination itself is missing */
			unsigned n = g->n[go], fwd = (ct[go] + n - cur[go]) % n;
			bool pl = g->ring[go] ? fwd <= n - fwd : ct[go] > cur[go];
			if (link_there(g, cur, go, pl))
				*plus = pl;
			else if (link_there(g, cur, go, !pl))
				*plus = !pl;
			else
				return false;
		}
		*dim = go;
		unsigned i = cur[go], n = g->n[go];
		*crosses = g->ring[go] && !broken_at(g, cur, go) && (*plus ? i + 1 == n : i == 0);
		return true;
	}
	return false;
}

bool grid_hop(const struct grid *g, uint32_t s, uint32_t t, unsigned *dim, bool *plus)
{
	if (!in_grid(g, s) || !in_grid(g, t))
		return false;
	bool crosses;
	return next_hop(g, g->coord + s * GRID_MAX_DIMS, g->coord + t * GRID_MAX_DIMS, dim, plus,
	                &crosses);
}

uint8_t grid_dateline_bits(const struct grid *g, uint32_t s, uint32_t t)
{
	if (!in_grid(g, s) || !in_grid(g, t))
		return 0;
	uint16_t cur[GRID_MAX_DIMS];
	memcpy(cur, g->coord + s * GRID_MAX_DIMS, sizeof(cur));
	const uint16_t *ct = g->coord + t * GRID_MAX_DIMS;
	uint8_t bits = 0;
	/* hop by hop: a path is no longer than the grid's extent in every dimension */
	unsigned guard = 2;
	for (unsigned d = 0; d < g->ndims; d++)
		guard += g->n[d];
	unsigned d;
	bool plus, crosses;
	while (guard-- && next_hop(g, cur, ct, &d, &plus, &crosses)) {
		if (crosses)
			bits |= (uint8_t)(1u << d);
		cur[d] =
		    (uint16_t)(plus ? (cur[d] + 1u) % g->n[d] : (cur[d] + g->n[d] - 1u) % g->n[d]);
	}
	return bits;
}

unsigned grid_holes(const struct grid *g, uint32_t *first, uint32_t *bad)
{
	unsigned n = 0, last = g->ndims - 1, len = g->n[last];
	uint16_t c0[GRID_MAX_DIMS] = {0};
	bool *on = calloc(len + 1u, sizeof(bool)); /* the holes' places along the last dimension */
	*first = *bad = NONE;
	for (uint32_t p = 0; p < g->npos; p++) {
		if (g->at[p] != NONE)
			continue;
		uint16_t c[GRID_MAX_DIMS] = {0};
		for (unsigned d = 0, r = p; d < g->ndims; d++) {
			c[d] = (uint16_t)(r % g->n[d]);
			r /= g->n[d];
		}
		if (!n++) {
			*first = p;
			memcpy(c0, c, sizeof(c0));
		} else if (*bad == NONE && memcmp(c, c0, sizeof(uint16_t) * last) != 0) {
			*bad = p; /* not on the first one's line along the last dimension */
		}
		if (on)
			on[c[last]] = true;
	}
	if (n > 1 && *bad == NONE) {
		/* one run along that line: one place where a run starts (on a ring, after the
		 * wrap too) */
		unsigned starts = 0;
		for (unsigned i = 0; on && i < len; i++) {
			bool before = i ? on[i - 1] : g->ring[last] && on[len - 1];
			if (on[i] && !before && !starts++)
				continue;
			if (on[i] && !before)
				*bad = *first; /* a second run: name the first hole */
		}
		if (!on || !starts)
			*bad = *first;
	}
	free(on);
	return n;
}

/* Is the place c + delta (wrapped on rings) a hole? false off a line's ends. */
static bool hole_at(const struct grid *g, const uint16_t *c, const int *delta)
{
	uint16_t x[GRID_MAX_DIMS] = {0};
	for (unsigned d = 0; d < g->ndims; d++) {
		int v = c[d] + delta[d], n = g->n[d];
		if (g->ring[d])
			v = ((v % n) + n) % n;
		else if (v < 0 || v >= n)
			return false;
		x[d] = (uint16_t)v;
	}
	return g->at[pos_of(g, x)] == NONE;
}

bool grid_turns_here(const struct grid *g, uint32_t s)
{
	if (!in_grid(g, s))
		return false;
	const uint16_t *c = g->coord + s * GRID_MAX_DIMS;
	/* a step along one dimension and one along another, either way: the places a path
	 * that stepped aside beside a hole turns back from */
	for (unsigned a = 0; a < g->ndims; a++)
		for (unsigned b = a + 1; b < g->ndims; b++)
			for (int sa = -1; sa <= 1; sa += 2)
				for (int sb = -1; sb <= 1; sb += 2) {
					int delta[GRID_MAX_DIMS] = {0};
					delta[a] = sa;
					delta[b] = sb;
					if (hole_at(g, c, delta))
						return true;
				}
	return false;
}

void grid_pos_name(const struct grid *g, uint32_t p, char *buf, size_t len)
{
	unsigned c[GRID_MAX_DIMS] = {0};
	for (unsigned d = 0, r = p; d < g->ndims; d++) {
		c[d] = r % g->n[d];
		r /= g->n[d];
	}
	if (g->ndims == 3)
		snprintf(buf, len, "%u,%u,%u", c[0], c[1], c[2]);
	else if (g->ndims == 2)
		snprintf(buf, len, "%u,%u", c[0], c[1]);
	else
		snprintf(buf, len, "%u", c[0]);
}

int grid_port_dim(const struct grid *g, unsigned port)
{
	for (unsigned d = 0; d < g->ndims; d++)
		if (port == g->plus[d] || port == g->minus[d])
			return (int)d;
	return -1;
}

uint8_t grid_vl(const struct grid *g, uint32_t s, unsigned out, uint8_t bits)
{
	if (!in_grid(g, s))
		return 0;
	for (unsigned d = 0; d < g->ndims; d++) {
		if (out != g->plus[d] && out != g->minus[d])
			continue;
		const uint16_t *cs = g->coord + s * GRID_MAX_DIMS;
		if (!g->ring[d] || broken_at(g, cs, d) || !(bits & (1u << d)))
			return 0;
		bool plus = out == g->plus[d];
		unsigned i = cs[d], n = g->n[d];
		if (plus ? i + 1 == n : i == 0)
			return 0; /* the dateline itself: from here on VL0 */
		return plus ? 2 * i >= n : 2 * i < n;
	}
	return 0;
}
