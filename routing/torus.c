/* dor and torus: dimension-order routing on meshes and tori found in the cabling
 * (routing/grid.c), free of credit loops: on a mesh by the order alone, on a torus with a
 * dateline per ring over two VLs. The SL of a path carries one bit per dimension (whether it
 * crosses that dateline); QoS classes stack on top (SL = class x 2^dims + bits, two VLs per
 * class; at LMC > 0 the alternates' up/down orders add an SL and a VL each per class, see
 * alternates_setup).
 *
 * torus also routes around failed links and switches: a ring with a gap is a line, routed
 * the way round that avoids it (a line cannot deadlock); a path whose turn would be at a
 * missing switch steps aside first and turns back into the lower dimension once past it
 * (grid.c), the hop after that turn on VLs of its own: the SL-to-VL tables of the switches
 * beside the hole then depend on the input port, and each QoS class takes 4 VLs on a torus
 * (2 on a mesh; plus the alternates' orders), as with OpenSM's
 * torus-2QoS. A pair a dimension cannot join (a ring cut twice between them, switches
 * missing at both the corner and the step aside) fails the engine with the switches named.
 * dor refuses a grid with gaps, naming the first, for sites that want the plain order or
 * nothing. */
#include <stdlib.h>
#include <string.h>

#include "routing/grid.h"
#include "routing/updown.h"

#define NONE UINT32_MAX

struct torus {
	bool tolerant; /* torus: route around gaps */
	struct grid g;
	bool rings; /* some dimension is a ring: two VLs */
	bool holes; /* a switch is missing: paths turn round it, twice the VLs */
	uint32_t nlids;
	uint32_t *lid_sw; /* LID -> the switch it hangs off (NONE) */
	/* LMC alternates: up/down orders, each on an SL and a VL after the dimension order's
	 * (0: none), and the order each LID's routes follow (1 + its index; 0: the dimension
	 * order) */
	unsigned orders;
	uint8_t *lid_order;
};

static int setup(struct routing_ctx *ctx, void **state, bool tolerant)
{
	struct torus *st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(ctx->why, sizeof(ctx->why), "%s: out of memory",
		         tolerant ? "torus" : "dor");
		return -1;
	}
	st->tolerant = tolerant;
	*state = st;
	return 0;
}

static int dor_setup(struct routing_ctx *ctx, void **state)
{
	return setup(ctx, state, false);
}

static int torus_setup(struct routing_ctx *ctx, void **state)
{
	return setup(ctx, state, true);
}

static void torus_free(void *state)
{
	struct torus *st = state;
	if (!st)
		return;
	grid_free(&st->g);
	free(st->lid_sw);
	free(st->lid_order);
	free(st);
}

static const char *sw_name(const struct routing_ctx *ctx, uint32_t s)
{
	return ctx->t->nodes[ctx->t->sws[s].node].desc;
}

/* The SLs of the dimension order in a class: one per combination of dateline bits. */
static unsigned dor_sls(const struct torus *st)
{
	return st->rings ? 1u << st->g.ndims : 1u;
}

/* ... and its VLs: two per ring for the datelines, twice that for the turns round a hole. */
static unsigned dor_vls(const struct torus *st)
{
	return (st->rings ? 2u : 1u) * (st->holes ? 2u : 1u);
}

/* LMC alternates: dimension order gives a pair one route, and its reverse order, though
 * apart from it where the ends differ in two dimensions or more, is the same along one
 * (14% of the pairs on a 4x4x4 torus) and cannot step round a hole. So the later LIDs of
 * each port's block are routed apart from the first by the general alternates
 * (routing/lmc.c) under up/down orders, as updn's are: each order free of credit loops on a
 * VL of its own above the dimension order's, on an SL of its own above its SLs; as many
 * orders as the VLs left, up to 8, and the SLs left (3 dimensions take 8), of the VLs the
 * links run or routing_max_vls allows (keep VLs for QoS classes with it, on 2 dimensions;
 * on 3, the 8 dateline SLs and any order leave no SLs for a second class); without one to
 * spare the later LIDs keep the dimension order. */
static unsigned alternates_setup(const struct routing_ctx *ctx, const struct torus *st,
                                 unsigned vls)
{
	if (!routing_lmc_any(ctx))
		return 0;
	if (ctx->cfg && ctx->cfg->routing_max_vls && ctx->cfg->routing_max_vls < vls)
		vls = ctx->cfg->routing_max_vls;
	unsigned sls = dor_sls(st), need = dor_vls(st);
	unsigned n = vls > need ? vls - need : 0;
	if (n > 16 - sls)
		n = 16 - sls;
	if (n > UD_ORDERS)
		n = UD_ORDERS;
	if (!n)
		log_notice(
		    ctx->log, "routing",
		    "%s: the LMC alternates need a VL beside the %u of the dimension order, "
		    "and the switch links run (or routing_max_vls allows) %u: every LID of a "
		    "port takes the dimension order",
		    st->tolerant ? "torus" : "dor", need, vls);
	return n;
}

/* Route the later LIDs of each block apart from the first, each by the up/down order that
 * keeps it apart best (LID k tries order k - 1 first, up to the third: order 0 is not the
 * dimension order's, as updn's is). 0, or -1 with ctx->why. */
static int alternates_route(struct routing_ctx *ctx, struct torus *st, const char *engine)
{
	uint32_t ns = ctx->nsw, ndst = ctx->dst_start[ns], nroots = 0;
	struct updown ord[UD_ORDERS] = {0};
	struct routing_alt_rules rules[UD_ORDERS];
	uint32_t *roots = malloc(sizeof(uint32_t) * (ns + 1));
	bool *leaf = malloc(ns + 1), *given = calloc(ndst + 1, sizeof(bool));
	uint8_t *first = calloc(ndst + 1, 1), *chosen = calloc(ndst + 1, 1);
	st->lid_order = calloc(st->nlids + 1, 1);
	int rc = -1;
	if (!roots || !leaf || !given || !first || !chosen || !st->lid_order)
		goto out;
	routing_host_switches(ctx, leaf);
	if (routing_detect_roots(ctx, leaf, roots, &nroots) < 0) {
		snprintf(ctx->why, sizeof(ctx->why), "%s: no root switch for the LMC alternates",
		         engine);
		goto out;
	}
	if (updown_init(&ord[0], ctx, roots, nroots, false) < 0)
		goto out;
	unsigned n = 1;
	while (n < st->orders && updown_next_order(ord, n, ctx, &ord[n]) == 0)
		n++;
	unsigned last = (n < 3 ? n : 3) - 1; /* the orders tried first */
	for (uint32_t t = 0; t < ns; t++)
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1]; d++) {
			unsigned k = routing_lmc_index(ctx, t, d);
			first[d] = (uint8_t)(k == 0 ? 0 : k - 1 < last ? k - 1 : last);
		}
	for (unsigned o = 0; o < n; o++)
		rules[o] = (struct routing_alt_rules){updown_alt_step, &ord[o], UD_DOWN};
	struct routing_alt_choice c = {
	    .rules = rules, .nrules = n, .first = first, .chosen = chosen};
	if (routing_lmc_alternates_choice(ctx, &c, NULL, given, NULL) < 0)
		goto out;
	for (uint32_t d = 0; d < ndst; d++)
		if (given[d])
			st->lid_order[ctx->dst[d].lid] = (uint8_t)(chosen[d] + 1);
	st->orders = n;
	log_info(ctx->log, "routing", "%s: LMC alternates by %u up/down order(s), on SLs %u-%u",
	         engine, n, dor_sls(st), dor_sls(st) + n - 1);
	rc = 0;
out:
	if (rc < 0 && !ctx->why[0])
		snprintf(ctx->why, sizeof(ctx->why), "%s: out of memory", engine);
	for (unsigned o = 0; o < UD_ORDERS; o++)
		updown_free(&ord[o]);
	free(roots);
	free(leaf);
	free(given);
	free(first);
	free(chosen);
	return rc;
}

/* OpenSM's torus-2QoS.conf (torus_config): 0, or -1 with ctx->why naming file and line. */
static int read_conf(struct routing_ctx *ctx, struct torus_conf *tc)
{
	char why[400];
	if (torus_conf_read(ctx->cfg->torus_config, tc, why, sizeof(why)) < 0) {
		snprintf(ctx->why, sizeof(ctx->why), "torus: torus_config %s", why);
		return -1;
	}
	return 0;
}

/* What the file made of the cabling, for the site to check against its own picture. */
static void log_conf(const struct routing_ctx *ctx, const struct grid *g)
{
	char shape[160] = "";
	for (unsigned d = 0; d < g->ndims; d++)
		snprintf(shape + strlen(shape), sizeof(shape) - strlen(shape),
		         "%s%c: %u switches, a %s, plus by port %u", d ? "; " : "", "xyz"[d],
		         g -> n[d], g -> ring[d] ? "ring" : "line", g->plus[d]);
	log_notice(ctx->log, "routing", "torus: torus_config %s: %s", ctx->cfg->torus_config,
	           shape);
}

static int torus_unicast(struct routing_ctx *ctx, void *state)
{
	struct torus *st = state;
	const char *engine = st->tolerant ? "torus" : "dor";
	struct grid *g = &st->g;
	struct torus_conf tc;
	const struct torus_conf *conf = NULL;
	if (st->tolerant && ctx->cfg->torus_config[0]) {
		if (read_conf(ctx, &tc) < 0)
			return -1;
		conf = &tc;
	}
	if (grid_find(g, ctx, engine, conf) < 0)
		return -1;
	if (conf)
		log_conf(ctx, g);
	for (unsigned d = 0; d < g->ndims; d++)
		st->rings |= g->ring[d];
	if (!st->tolerant)
		for (uint32_t p = 0; p < g->npos * GRID_MAX_DIMS; p++)
			if (g->gap[p]) {
				unsigned d = p % GRID_MAX_DIMS;
				uint32_t s = g->at[p / GRID_MAX_DIMS];
				snprintf(
				    ctx->why, sizeof(ctx->why),
				    "dor: %s%s%s has no link in dimension %u (port %u): the grid "
				    "has a gap (torus routes around it)",
				    s == NONE ? "a switch is missing" : "switch \"",
				    s == NONE ? "" : sw_name(ctx, s), s == NONE ? "" : "\"", d,
				    g->plus[d]);
				return -1;
			}
	uint32_t first_hole, bad_hole;
	unsigned holes = grid_holes(g, &first_hole, &bad_hole);
	st->holes = holes > 0;
	if (bad_hole != NONE) {
		char a[24], b[24];
		grid_pos_name(g, first_hole, a, sizeof(a));
		grid_pos_name(g, bad_hole, b, sizeof(b));
		snprintf(ctx->why, sizeof(ctx->why),
		         "%s: %u switches missing (at %s and %s among them): routing round them is "
		         "free of credit loops for one, or several in a row along the last "
		         "dimension; nue routes any topology",
		         engine, holes, a, b);
		return -1;
	}
	unsigned vls = routing_link_vls(ctx), need = (st->rings ? 2u : 1u) * (st->holes ? 2u : 1u);
	if (vls < need) {
		snprintf(ctx->why, sizeof(ctx->why),
		         "%s: %s needs %u VLs (%s%s%s), and the switch links run %u", engine,
		         st->rings ? "a torus" : "a mesh", need, st->rings ? "its datelines" : "",
		         st->rings && st->holes ? ", times 2 for " : "",
		         st->holes ? "the turns round a missing switch" : "", vls);
		return -1;
	}
	st->nlids = (uint32_t)ctx->max_lid + 1;
	st->lid_sw = malloc(sizeof(uint32_t) * st->nlids);
	bool *leaf = malloc(sizeof(bool) * (ctx->nsw + 1));
	if (!st->lid_sw || !leaf) {
		free(leaf);
		snprintf(ctx->why, sizeof(ctx->why), "%s: out of memory", engine);
		return -1;
	}
	for (uint32_t l = 0; l < st->nlids; l++)
		st->lid_sw[l] = NONE;
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		leaf[s] = false;
		for (uint32_t i = ctx->dst_start[s]; i < ctx->dst_start[s + 1]; i++) {
			st->lid_sw[ctx->dst[i].lid] = s;
			leaf[s] |= ctx->dst[i].port != 0;
		}
	}
	st->orders = alternates_setup(ctx, st, vls);
	int rc = 0;
	for (uint32_t t = 0; t < ctx->nsw && !rc; t++) {
		if (ctx->dst_start[t] == ctx->dst_start[t + 1])
			continue;
		routing_assign_local(ctx, t);
		for (uint32_t s = 0; s < ctx->nsw; s++) {
			if (s == t || ctx->adj_start[s] == ctx->adj_start[s + 1])
				continue;
			unsigned d;
			bool plus;
			if (!grid_hop(g, s, t, &d, &plus)) {
				if (!leaf[s] || !leaf[t])
					continue; /* no host traffic between them */
				snprintf(
				    ctx->why, sizeof(ctx->why),
				    "%s: \"%s\" cannot reach \"%s\" in dimension order (a ring or "
				    "line cut twice between them); nue routes any topology",
				    engine, sw_name(ctx, s), sw_name(ctx, t));
				rc = -1;
				break;
			}
			uint8_t port = plus ? g->plus[d] : g->minus[d];
			for (uint32_t i = ctx->dst_start[t]; i < ctx->dst_start[t + 1]; i++) {
				ctx->t->sws[s].lft[ctx->dst[i].lid] = port;
				ctx->load[ctx->port_base[s] + port]++;
			}
		}
	}
	free(leaf);
	if (!rc && st->orders)
		rc = alternates_route(ctx, st, engine);
	if (!rc)
		log_notice(ctx->log, "routing",
		           "%s: %u-dimensional %s of %u x %u x %u positions%s%s", engine, g->ndims,
		           st->rings ? "torus" : "mesh", g->n[0], g->ndims > 1 ? g->n[1] : 1,
		           g->ndims > 2 ? g->n[2] : 1,
		           st->rings ? "; datelines on VL1/VL0, SL bits per dimension" : "",
		           st->holes ? "; paths step round the missing switches, the hop after "
		                       "their turn on VLs of its own"
		                     : "");
	return rc;
}

static unsigned torus_layers(const void *state)
{
	const struct torus *st = state;
	if (!st)
		return 1;
	return dor_sls(st) + st->orders;
}

static unsigned torus_layer_vls(const void *state)
{
	const struct torus *st = state;
	if (!st)
		return 1;
	return dor_vls(st) + st->orders;
}

static bool torus_by_input(const void *state, uint32_t sw)
{
	const struct torus *st = state;
	return st && st->holes && grid_turns_here(&st->g, sw);
}

static uint8_t torus_path_sl(const struct routing_ctx *ctx, void *state, uint16_t slid,
                             uint16_t dlid)
{
	(void)ctx;
	const struct torus *st = state;
	if (!st || !st->lid_sw || slid >= st->nlids || dlid >= st->nlids ||
	    st->lid_sw[slid] == NONE || st->lid_sw[dlid] == NONE)
		return 0;
	/* an LMC alternate: its order's SL, above the dimension order's */
	if (st->lid_order && st->lid_order[dlid])
		return (uint8_t)(dor_sls(st) + st->lid_order[dlid] - 1u);
	return st->rings ? grid_dateline_bits(&st->g, st->lid_sw[slid], st->lid_sw[dlid]) : 0;
}

/* SL = class x (2^dims + orders) + dateline bits, or + 2^dims + order for an LMC alternate;
 * VL = class x (the dimension order's VLs + orders) + the dateline VL of this hop (the upper
 * half after a turn round a hole), or + the dimension order's VLs + order. */
static void torus_sl2vl(const struct routing_ctx *ctx, void *state, uint32_t sw, uint8_t in,
                        uint8_t out, uint8_t vl_of_sl[16])
{
	const struct torus *st = state;
	const struct topo *t = ctx->t;
	unsigned nvl = routing_port_vls(t, t->nodes[t->sws[sw].node].first_port + out);
	unsigned L = torus_layers(st), per = torus_layer_vls(st);
	/* a packet that came in along a higher dimension and leaves along a lower one is
	 * stepping round a missing switch: this hop on the upper half of the class's VLs (only
	 * next to a hole does that happen: elsewhere the tables stay as they were, and a
	 * repair sends none there) */
	unsigned turn = 0;
	if (st && st->holes && grid_turns_here(&st->g, sw)) {
		int di = grid_port_dim(&st->g, in), dout = grid_port_dim(&st->g, out);
		if (di >= 0 && dout >= 0 && di > dout)
			turn = dor_vls(st) / 2; /* not per: the orders' VLs come after */
	}
	/* within a class: the dateline bits, then (LMC alternates) the up/down orders, each on
	 * a VL of its own after the dimension order's */
	unsigned dl = st ? dor_sls(st) : 1;
	for (unsigned sl = 0; sl < 16; sl++) {
		unsigned in_class = sl % L, v;
		if (in_class >= dl) {
			v = dor_vls(st) + (in_class - dl);
		} else {
			v = st && st->rings ? grid_vl(&st->g, sw, out, (uint8_t)in_class) : 0;
			v += turn;
		}
		unsigned vl = (sl / L) * per + v;
		if (vl >= nvl)
			vl = v % nvl; /* the class does not fit here: its dateline VL of class 0 */
		vl_of_sl[sl] = (uint8_t)vl;
	}
}

const struct routing_engine routing_dor = {
    .name = "dor",
    .summary = "dimension-order routing on meshes and tori (datelines over two VLs); fails "
               "on a gap",
    .setup = dor_setup,
    .unicast = torus_unicast,
    .path_sl = torus_path_sl,
    .sl2vl = torus_sl2vl,
    .sl2vl_by_output = true,
    .layers = torus_layers,
    .layer_vls = torus_layer_vls,
    .teardown = torus_free,
};

const struct routing_engine routing_torus = {
    .name = "torus",
    .summary = "dimension-order routing on meshes and tori (datelines over two VLs), around "
               "failed links and switches (two more VLs)",
    .setup = torus_setup,
    .unicast = torus_unicast,
    .path_sl = torus_path_sl,
    .sl2vl = torus_sl2vl,
    .sl2vl_by_output = true,
    .sl2vl_by_input = torus_by_input,
    .layers = torus_layers,
    .layer_vls = torus_layer_vls,
    .teardown = torus_free,
};
