/* The SM's picture of the fabric: nodes, ports and switches in flat arrays indexed by small
 * integers, links as port-to-port indexes, GUID hash maps, a LID table. Discovery fills it,
 * light sweeps update it in place, routing engines read it. Every node keeps its slots:
 * port p of node n is ports[n.first_port + p] for p in 0..nports (a CA's slot 0 is unused). */
#ifndef IBSMD_SM_TOPOLOGY_H
#define IBSMD_SM_TOPOLOGY_H

#include <stdbool.h>
#include <stdint.h>

#include "mad/mad_types.h"
#include "mad/smp_attrs.h"
#include "util/u64map.h"

#define SM_NONE      UINT32_MAX
#define SM_LID_COUNT 0xc000 /* unicast LIDs 1..0xbfff */

struct sm_port {
	uint32_t node;
	uint8_t num;
	bool known;    /* PortInfo read at least once */
	uint32_t peer; /* port index at the other end, SM_NONE if none known */
	uint64_t guid;
	struct mad_port_info pi; /* as last read or set */
	uint16_t lid;            /* assigned base LID (CA ports and switch port 0), 0 if none */
	uint8_t lmc;
	/* VL tables as programmed (sm/vl.c): a CA port's SL-to-VL table (SL0 in the top
	 * nibble, TOPO_SL2VL_UNKNOWN until set), VL arbitration blocks 1-4 as indexes into
	 * topo.vlarb (0: unknown), and what the port refused (TOPO_REFUSED_*) */
	uint64_t sl2vl;
	uint16_t vlarb[4];
	uint8_t refused;
	/* a switch port's P_Key table as last set (a hash of it, 0: not set) */
	uint32_t pkey_sig;
};

#define TOPO_SL2VL_UNKNOWN UINT64_MAX
#define TOPO_REFUSED_SL2VL 1
#define TOPO_REFUSED_VLARB 2
#define TOPO_REFUSED_PKEYS 4 /* a switch port's P_Key table */

struct sm_node {
	uint8_t type, nports;
	bool present; /* reachable in the last sweep */
	uint64_t guid;
	struct mad_node_info ni;
	char desc[65];
	uint32_t first_port;
	uint32_t sw;      /* index into topo.sws, SM_NONE for CAs */
	uint8_t path[64]; /* directed route from the SM's port: path[1..hops] */
	uint8_t hops;
	uint32_t seen; /* the sweep that last reached it */
};

struct sm_switch {
	uint32_t node;
	struct mad_switch_info si;
	uint8_t *lft;    /* what routing wants, lft_size entries, 0xff = none */
	uint8_t *lft_hw; /* what we last programmed, NULL until the first time */
	uint32_t lft_size, lft_hw_size;
	uint16_t lft_top; /* LinearFDBTop we programmed */
	/* multicast: a port mask per MLID and position (16 ports each), what the groups'
	 * trees want and what the switch was last sent; hw_known per 32-MLID block */
	uint16_t *mft, *mft_hw;
	bool *mft_known;
	uint32_t mft_mlids; /* MLIDs covered (from 0xc000), a multiple of 32 */
	uint8_t mft_pos;    /* positions: (ports + 1 + 15) / 16 */
	/* SL-to-VL tables as programmed, [in][out] over ports 0..nports, as indexes + 1 into
	 * topo.sl2vl (0: unknown); NULL: all unknown */
	uint16_t *sl2vl;
};

struct topo {
	struct sm_node *nodes;
	uint32_t nnodes, nodes_cap;
	struct sm_port *ports;
	uint32_t nports, ports_cap;
	struct sm_switch *sws;
	uint32_t nsws, sws_cap;
	struct u64map by_guid;      /* node GUID -> node */
	struct u64map by_port_guid; /* CA port GUID -> port */
	uint32_t sm_node, sm_port;  /* where the SM sits */
	uint32_t *lid_port;         /* LID -> port holding it (every LID of an LMC block) */
	/* distinct VL arbitration blocks the ports hold (a handful): ports refer to them by
	 * index + 1 */
	struct mad_vlarb_table *vlarb;
	uint32_t nvlarb, vlarb_cap;
	/* ... and distinct SL-to-VL tables the switches hold, likewise (2 bytes per port pair
	 * instead of 8: a 48-port switch has 2,401 pairs) */
	uint64_t *sl2vl;
	uint32_t nsl2vl, sl2vl_cap;
	uint32_t sweep;
};

int topo_init(struct topo *t);
void topo_free(struct topo *t);

/* Add a node (all ports unlinked). SM_NONE when out of memory. */
uint32_t topo_add_node(struct topo *t, const struct mad_node_info *ni);
static inline uint32_t topo_port(const struct topo *t, uint32_t node, unsigned num)
{
	return num <= t->nodes[node].nports ? t->nodes[node].first_port + num : SM_NONE;
}
static inline bool topo_is_switch(const struct topo *t, uint32_t node)
{
	return t->nodes[node].type == NODE_TYPE_SWITCH;
}
/* The port that carries a node's LID: switch port 0, or the CA port itself. */
static inline uint32_t topo_lid_port(const struct topo *t, uint32_t port)
{
	uint32_t n = t->ports[port].node;
	return topo_is_switch(t, n) ? t->nodes[n].first_port : port;
}

/* The GUID a port is known by: a CA port's own, a switch's node GUID (for port 0). */
static inline uint64_t topo_port_guid(const struct topo *t, uint32_t port)
{
	uint32_t n = t->ports[port].node;
	return topo_is_switch(t, n) ? t->nodes[n].guid : t->ports[port].guid;
}

void topo_link(struct topo *t, uint32_t a, uint32_t b);
void topo_unlink(struct topo *t, uint32_t a);

/* Shortest directed routes from the SM to every node over the known links, and presence:
 * nodes the SM cannot reach are marked absent and their links dropped. Returns the number of
 * nodes that became absent. */
uint32_t topo_update_paths(struct topo *t);

/* The LID table, rebuilt from the ports' assigned LIDs. */
void topo_rebuild_lids(struct topo *t);

/* Is the port's physical link up (Init, Armed or Active)? */
static inline bool topo_port_up(const struct sm_port *p)
{
	return p->known && p->pi.port_state >= PORT_STATE_INIT;
}

#endif
