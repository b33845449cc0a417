/* Meshes and tori found in the cabling, for dimension-order routing (dor, torus).
 *
 * A grid is cabled by port pairs: in dimension d every link joins port plus[d] of one switch
 * to port minus[d] of the next (fabricsim's grids, and the way tori are cabled by hand). The
 * pairs are read off the links (the pairs most links use), then every switch gets a
 * coordinate by walking from the switch with the lowest GUID (or torus_config's seed); a
 * dimension is a ring (torus) when its rings close somewhere, a line (mesh) otherwise. A
 * link missing from a ring makes that ring a line: routes go round the other way, and cannot
 * deadlock in it.
 *
 * Dimension-order routing corrects the coordinates in order, each by the shorter way round
 * on an intact ring (ties: the way that stays off the dateline, as OpenSM's torus-2QoS), the
 * way that avoids the gap on a broken one. On an intact
 * ring a packet that crosses the dateline (the link from the last position back to 0) changes
 * from VL1 to VL0 there: paths that cross it hold VL1 before it and VL0 from it on, all
 * others VL0, so neither VL closes the ring. Switches cannot see whether a packet crossed, but
 * on shortest routes its position tells: going plus, a crossing packet is still before the
 * dateline exactly at positions i with 2i >= n; going minus, at 2i < n. The path's SL carries
 * one bit per dimension: whether it crosses that dimension's dateline. */
#ifndef IBSMD_ROUTING_GRID_H
#define IBSMD_ROUTING_GRID_H

#include "routing/engine.h"
#include "routing/torus_conf.h"

#define GRID_MAX_DIMS 3

struct grid {
	unsigned ndims;
	uint8_t plus[GRID_MAX_DIMS], minus[GRID_MAX_DIMS]; /* the ports of each dimension */
	uint16_t n[GRID_MAX_DIMS];                         /* positions */
	bool ring[GRID_MAX_DIMS];                          /* a torus dimension */
	uint16_t *coord; /* per switch: ndims coordinates; UINT16_MAX: not in the grid */
	uint32_t *at;    /* per position (x + n0 (y + n1 z)): the switch, UINT32_MAX */
	uint8_t *gap;    /* per position and dimension: the plus link from it is missing */
	uint32_t npos;
	bool *broken; /* per ring (position with that coordinate 0, and dimension) */
};

/* Find the grid in ctx's switch graph: 0, or -1 with ctx->why naming the engine, the switch
 * and the port that does not fit. With conf (OpenSM's torus-2QoS.conf), its shape must be the
 * cabling's; its first whole seed is the origin (moved by its datelines) and points the axes,
 * x first; a ring it calls a mesh is routed as a line. */
int grid_find(struct grid *g, struct routing_ctx *ctx, const char *engine,
              const struct torus_conf *conf);
void grid_free(struct grid *g);

/* Is the ring of switch s in dimension d cut somewhere? */
bool grid_ring_broken(const struct grid *g, uint32_t s, unsigned d);

/* The dimension-order hop from switch s towards switch t: *dim and *plus (direction), false
 * when s is t or the way is cut (a ring broken twice between them, a line's gap). Where the
 * path would turn at a missing switch, the hop steps aside into the next dimension the path
 * moves in, and the order then leads round it. */
bool grid_hop(const struct grid *g, uint32_t s, uint32_t t, unsigned *dim, bool *plus);

/* Places of the grid without a switch (failed or missing): paths step round them, turning
 * back into a lower dimension once (see next_hop in grid.c), and the hop after such a turn
 * needs VLs of its own. That is free of credit loops for one missing switch, or several in
 * a row along the last dimension (OpenSM's torus-2QoS has the same bound). How many; *first
 * the first of them, *bad one that breaks that bound (UINT32_MAX: none). */
unsigned grid_holes(const struct grid *g, uint32_t *first, uint32_t *bad);
/* Coordinates of position p ("2,0,5"), for messages. */
void grid_pos_name(const struct grid *g, uint32_t p, char *buf, size_t len);
/* Can a path turn back into a lower dimension at switch s? Only one step along two
 * dimensions from a hole (where a path that stepped aside beside it turns back): the
 * switches whose SL-to-VL tables depend on the input. */
bool grid_turns_here(const struct grid *g, uint32_t s);
/* The dimension a port leads in, -1 for none (a host's port, port 0). */
int grid_port_dim(const struct grid *g, unsigned port);

/* The dateline bits (bit d: the route crosses dimension d's dateline) of the route s -> t;
 * the SL of its paths. */
uint8_t grid_dateline_bits(const struct grid *g, uint32_t s, uint32_t t);

/* The VL (0 or 1) of a packet with dateline bits `bits` leaving switch s by port out. */
uint8_t grid_vl(const struct grid *g, uint32_t s, unsigned out, uint8_t bits);

#endif
