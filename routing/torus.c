/* dor and torus: dimension-order routing on meshes and tori found in the cabling
 * (routing/grid.c), free of credit loops: on a mesh by the order alone, on a torus with a
 * dateline per ring over two VLs. The SL of a path carries one bit per dimension (whether it
 * crosses that dateline); QoS classes stack on top (SL = class x 2^dims + bits, two VLs per
 * class).
 *
 * torus also routes around failed links and switches: a ring with a gap is a line, routed
 * the way round that avoids it (a line cannot deadlock); a path whose turn would be at a
 * missing switch steps aside first and turns back into the lower dimension once past it
 * (grid.c), the hop after that turn on VLs of its own: the SL-to-VL tables of the switches
 * beside the hole then depend on the input port, and each QoS class takes 4 VLs on a torus
 * (2 on a mesh), as with OpenSM's
 * torus-2QoS. A pair a dimension cannot join (a ring cut twice between them, switches
 * missing at both the corner and the step aside) fails the engine with the switches named.
 * dor refuses a grid with gaps, naming the first, for sites that want the plain order or
 * nothing. */
#include <stdlib.h>

#include "routing/grid.h"

#define NONE UINT32_MAX

struct torus {
	bool tolerant; /* torus: route around gaps */
	struct grid g;
	bool rings; /* some dimension is a ring: two VLs */
	bool holes; /* a switch is missing: paths turn round it, twice the VLs */
	uint32_t nlids;
	uint32_t *lid_sw; /* LID -> the switch it hangs off (NONE) */
	/* LMC alternates: the odd LIDs of a port's block go in the reverse dimension order, on
	 * VLs of their own (two orders on the same VLs could close a credit loop) */
	bool alt;
	uint8_t *lid_rev; /* LID -> routed in the reverse order */
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
	free(st->lid_rev);
	free(st);
}

static const char *sw_name(const struct routing_ctx *ctx, uint32_t s)
{
	return ctx->t->nodes[ctx->t->sws[s].node].desc;
}

/* LMC alternates: with LMC above 0, no missing switch (a path stepping round one follows
 * the plain order only) and VLs for a second set, the odd LIDs of each port's block are
 * routed in the reverse dimension order. Where the two ends differ in two dimensions or
 * more, that route shares no link and no switch with the plain one (it goes round the
 * other sides of the box between them); along one dimension both are the same. -1: out of
 * memory. */
static int alternates_setup(struct routing_ctx *ctx, struct torus *st, unsigned vls, unsigned need)
{
	const struct grid *g = &st->g;
	st->alt = false;
	if (!routing_lmc_any(ctx) || g->ndims < 2)
		return 0;
	if (st->holes) {
		log_notice(ctx->log, "routing",
		           "%s: a switch is missing from the grid: the LMC alternates keep the "
		           "plain order (paths stepping round a hole follow it only)",
		           st->tolerant ? "torus" : "dor");
		return 0;
	}
	if (vls < 2 * need) {
		log_notice(ctx->log, "routing",
		           "%s: LMC alternates in the reverse dimension order need %u VLs and the "
		           "switch links run %u: every LID of a port takes the plain order",
		           st->tolerant ? "torus" : "dor", 2 * need, vls);
		return 0;
	}
	/* the reverse order must reach wherever the plain one does (a line cut in a place
	 * only one order avoids) */
	for (uint32_t t = 0; t < ctx->nsw; t++)
		for (uint32_t s = 0; s < ctx->nsw && ctx->dst_start[t] < ctx->dst_start[t + 1];
		     s++) {
			unsigned d;
			bool plus;
			if (s != t && grid_hop(g, s, t, false, &d, &plus) &&
			    !grid_hop(g, s, t, true, &d, &plus)) {
				log_notice(
				    ctx->log, "routing",
				    "%s: \"%s\" cannot reach \"%s\" in the reverse dimension "
				    "order: the LMC alternates keep the plain one",
				    st->tolerant ? "torus" : "dor", sw_name(ctx, s),
				    sw_name(ctx, t));
				return 0;
			}
		}
	st->lid_rev = calloc(st->nlids + 1, 1);
	if (!st->lid_rev)
		return -1;
	for (uint32_t t = 0; t < ctx->nsw; t++)
		for (uint32_t d = ctx->dst_start[t]; d < ctx->dst_start[t + 1]; d++)
			st->lid_rev[ctx->dst[d].lid] = routing_lmc_index(ctx, t, d) % 2 == 1;
	st->alt = true;
	return 0;
}

static int torus_unicast(struct routing_ctx *ctx, void *state)
{
	struct torus *st = state;
	const char *engine = st->tolerant ? "torus" : "dor";
	struct grid *g = &st->g;
	if (grid_find(g, ctx, engine) < 0)
		return -1;
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
	if (alternates_setup(ctx, st, vls, need) < 0) {
		free(leaf);
		snprintf(ctx->why, sizeof(ctx->why), "%s: out of memory", engine);
		return -1;
	}
	int rc = 0;
	for (uint32_t t = 0; t < ctx->nsw && !rc; t++) {
		if (ctx->dst_start[t] == ctx->dst_start[t + 1])
			continue;
		routing_assign_local(ctx, t);
		for (uint32_t s = 0; s < ctx->nsw; s++) {
			if (s == t || ctx->adj_start[s] == ctx->adj_start[s + 1])
				continue;
			unsigned d, dr;
			bool plus, plus_r;
			if (!grid_hop(g, s, t, false, &d, &plus)) {
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
			uint8_t port = plus ? g->plus[d] : g->minus[d], port_r = port;
			if (st->alt && grid_hop(g, s, t, true, &dr, &plus_r))
				port_r = plus_r ? g->plus[dr] : g->minus[dr];
			for (uint32_t i = ctx->dst_start[t]; i < ctx->dst_start[t + 1]; i++) {
				uint16_t lid = ctx->dst[i].lid;
				uint8_t p = st->alt && st->lid_rev[lid] ? port_r : port;
				ctx->t->sws[s].lft[lid] = p;
				ctx->load[ctx->port_base[s] + p]++;
			}
		}
	}
	free(leaf);
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
	return (st->rings ? 1u << st->g.ndims : 1) * (st->alt ? 2u : 1u);
}

static unsigned torus_layer_vls(const void *state)
{
	const struct torus *st = state;
	if (!st)
		return 1;
	return (st->rings ? 2u : 1u) * (st->holes ? 2u : 1u) * (st->alt ? 2u : 1u);
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
	if (!st || !(st->rings || st->alt) || !st->lid_sw || slid >= st->nlids ||
	    dlid >= st->nlids || st->lid_sw[slid] == NONE || st->lid_sw[dlid] == NONE)
		return 0;
	bool rev = st->alt && st->lid_rev[dlid];
	uint8_t bits =
	    st->rings ? grid_dateline_bits(&st->g, st->lid_sw[slid], st->lid_sw[dlid], rev) : 0;
	/* the reverse order's SLs above the plain one's */
	return (uint8_t)(bits | (rev ? 1u << (st->rings ? st->g.ndims : 0) : 0));
}

/* SL = class x 2^dims + dateline bits: VL = class x 2 + the dateline VL of this hop. */
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
			turn = per / 2;
	}
	/* within a class: the dateline bits, then (LMC alternates) the order bit */
	unsigned dl = st && st->rings ? 1u << st->g.ndims : 1;
	for (unsigned sl = 0; sl < 16; sl++) {
		unsigned in_class = sl % L;
		unsigned v =
		    st && st->rings ? grid_vl(&st->g, sw, out, (uint8_t)(in_class % dl)) : 0;
		v += turn;
		if (in_class / dl) /* the reverse order: the VLs above the plain order's */
			v += (st->rings ? 2u : 1u) * (st->holes ? 2u : 1u);
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
