/* Hand-built fabrics for unit tests: a fabric model (struct topo) made node by node, as the
 * SM's discovery would leave it, and a checker of what a routing engine wrote into it.
 * No simulator: tests of fabric/, routing/ and the SA build what they need here. */
#ifndef IBSMD_TEST_TOPO_FIXTURE_H
#define IBSMD_TEST_TOPO_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric/fabric.h"

/* A switch (nports external ports) or a one-port CA; its node index. GUIDs follow from the
 * index: 0x1000 + n for switches' nodes, CA port GUID = node GUID + 1. */
uint32_t fix_switch(struct topo *t, unsigned nports);
uint32_t fix_ca(struct topo *t);
/* Cable port pa of node a to port pb of node b, ACTIVE at both ends. */
void fix_link(struct topo *t, uint32_t a, unsigned pa, uint32_t b, unsigned pb);
/* The first free port of a node (0 if none). */
unsigned fix_free_port(const struct topo *t, uint32_t node);
/* Connect two nodes through their first free ports. */
void fix_connect(struct topo *t, uint32_t a, uint32_t b);
/* As discovery ends: the SM at node sm (a CA), paths and presence, LIDs 1.. in node order
 * (switch port 0, CA ports), the LID table, P_Keys from cfg (NULL: defaults), stable. */
void fix_finish(struct topo *t, uint32_t sm, const struct ibsmd_config *cfg);

/* Generators. hosts: CAs per switch (leaf). Return the node index of the first CA. */
uint32_t fix_ring(struct topo *t, unsigned switches, unsigned hosts);
uint32_t fix_fattree(struct topo *t, unsigned leaves, unsigned spines, unsigned hosts);
/* A complete 3-level fat tree of k-port switches (k^3/4 hosts). */
uint32_t fix_fattree3(struct topo *t, unsigned k);
uint32_t fix_torus(struct topo *t, unsigned x, unsigned y, unsigned hosts);
/* A mesh or torus cabled by port pairs as fabricsim does: hosts on ports 1..hosts, dimension
 * d's link from port hosts + 2d + 2 to the next switch's port hosts + 2d + 1 (the last
 * position wraps to 0 on a torus). Switch at (x, y, z) is node base + x + n0 (y + n1 z). */
uint32_t fix_grid(struct topo *t, const unsigned *n, unsigned ndims, bool torus, unsigned hosts);
/* switches of radix ports joined by a random spanning tree and up to extra_links more random
 * links (parallel links included, as real fabrics have them), hosts on each; the same seed
 * gives the same graph */
uint32_t fix_random(struct topo *t, unsigned switches, unsigned radix, unsigned hosts,
                    unsigned extra_links, uint32_t seed);

/* What the switches' wanted LFTs (topo_switch.lft) do, from every switch to every endpoint
 * LID. */
struct fix_routes {
	uint64_t pairs, unreachable, loops, longer_than_shortest;
	bool credit_loop; /* a cycle in the channel dependency graph (one VL) */
	char first_problem[160];
};
void fix_check_routes(const struct topo *t, struct fix_routes *out);
/* The same with each path's SL (slid -> dlid) from sl_of: the credit check then follows
 * every SL as a VL of its own. */
typedef uint8_t (*fix_sl_fn)(void *arg, uint16_t slid, uint16_t dlid);
void fix_check_routes_sl(const struct topo *t, fix_sl_fn sl_of, void *arg, struct fix_routes *out);
/* ... and with the VL each hop takes (vl_of: switch index, input and output port, SL; NULL:
 * VL = SL), as the engine's SL-to-VL tables map it. */
typedef uint8_t (*fix_vl_fn)(void *arg, uint32_t sw, uint8_t in, uint8_t out, uint8_t sl);
void fix_check_routes_vl(const struct topo *t, fix_sl_fn sl_of, fix_vl_fn vl_of, void *arg,
                         struct fix_routes *out);

#endif
