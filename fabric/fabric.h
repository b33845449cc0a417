/* The fabric model: the one picture of the subnet that routing, the SM and the SA share.
 * Nodes, ports and switches in flat arrays indexed by small integers, links as port-to-port
 * indexes, GUID hash maps, a LID table, each port's P_Keys as the partition policy gives
 * them, the tables as programmed. The SM's discovery fills it and light sweeps update it in
 * place; routing engines write the switches' wanted LFTs; the SA reads it. Every node keeps
 * its slots: port p of node n is ports[n.first_port + p] for p in 0..nports (a CA's slot 0
 * is unused).
 *
 * It sits below routing/, sm/ and sa/ and calls none of them. */
#ifndef IBSMD_FABRIC_FABRIC_H
#define IBSMD_FABRIC_FABRIC_H

#include <stdbool.h>
#include <stdint.h>

#include "mad/mad_types.h"
#include "config/config.h"
#include "mad/smp_attrs.h"
#include "util/u64map.h"
#include "util/vec.h"

#define TOPO_NONE      UINT32_MAX
#define TOPO_LID_COUNT 0xc000 /* unicast LIDs 1..0xbfff */

struct topo_port {
	uint32_t node;
	uint32_t peer; /* port index at the other end, TOPO_NONE if none known */
	/* the far end when a link was last known here: the port a probe most likely meets,
	 * whose M_Key it presents */
	uint32_t last_peer;
	uint64_t guid;
	struct mad_port_info pi; /* as last read or set */
	/* VL tables as programmed (sm/vl.c): a CA port's SL-to-VL table (SL0 in the top
	 * nibble, TOPO_SL2VL_UNKNOWN until set), VL arbitration blocks 1-4 as indexes into
	 * topo.vlarb (0: unknown), and what the port refused (TOPO_REFUSED_*) */
	uint64_t sl2vl;
	uint16_t vlarb[4];
	/* a switch port's P_Key table as last set (a hash of it, 0: not set) */
	uint32_t pkey_sig;
	/* the P_Keys the partition policy gives the port (topo_pkeys_update): npkeys keys at
	 * topo.pkeys[pkey_at]: index 0 the default's or indx0's key, the others where they were
	 * (0: a hole) */
	uint32_t pkey_at;
	uint16_t lid; /* assigned base LID (CA ports and switch port 0), 0 if none */
	uint8_t lmc;
	uint8_t num;
	uint8_t refused;
	uint8_t npkeys;
	uint8_t pkey_blocks; /* P_Key blocks the SM last wrote (a shorter table empties the rest) */
	/* the SM's P_Key Sets to this port not answered yet, and whether the keys it should
	 * hold changed meanwhile (sm/program.c sends one table at a time per port) */
	uint8_t pkey_inflight;
	bool pkey_again;
	bool pkey_failed; /* a block of the table on its way failed: the port's table unknown */
	bool known;       /* PortInfo read at least once */
	/* virtualization (fabric/vports.c): the port has vports (CapabilityMask2), the SM
	 * enabled them, and they are to be read again (a trap, VPortStateChange, a new port) */
	bool virt, virt_enabled, virt_dirty;
	uint8_t vport0; /* ... and the state of its vport 0 (the PF), once enabled */
	/* routes keep off this port's link for now: it came up and is not ACTIVE yet, or it
	 * flaps and has not been stable long enough (sm/health.c) */
	bool unrouted;
};

#define TOPO_SL2VL_UNKNOWN UINT64_MAX
#define TOPO_REFUSED_SL2VL 1
#define TOPO_REFUSED_VLARB 2
#define TOPO_REFUSED_PKEYS 4 /* a switch port's P_Key table */

struct topo_node {
	uint8_t type, nports;
	bool present; /* reachable in the last sweep */
	uint64_t guid;
	struct mad_node_info ni;
	char desc[65];
	uint32_t first_port;
	uint32_t sw;      /* index into topo.sws, TOPO_NONE for CAs */
	uint8_t path[64]; /* directed route from the SM's port: path[1..hops] */
	uint8_t hops;
	uint32_t seen; /* the sweep that last reached it */
	/* its lives: topo_forget_tables counts each (a reset, a return): what the layers
	 * above programmed into an earlier one is gone (congestion control) */
	uint32_t lives;
	/* its SMA refused PortInfo with SMSupportExtendedSpeeds (older than IBA 1.5) */
	bool pi_no_ext_am;
};

struct topo_switch {
	uint32_t node;
	struct mad_switch_info si;
	uint8_t *lft;    /* what routing wants, lft_size entries, 0xff = none */
	uint8_t *lft_hw; /* what we last programmed, NULL until the first time */
	uint32_t lft_size, lft_hw_size;
	uint16_t lft_top; /* LinearFDBTop we programmed */
	/* multicast: a port mask per MLID and position (16 ports each), what the groups'
	 * trees want and what the switch was last sent; per 32-MLID block, whether that is
	 * known to be what it holds, and its Sets in flight (one block's Sets never overlap:
	 * a retry of an older one would land after a newer one) */
	uint16_t *mft, *mft_hw;
	bool *mft_known;
	uint8_t *mft_sets;
	uint8_t mft_fails;  /* its MFT Sets that failed in a row (up to 7) */
	uint8_t mft_wait;   /* retry ticks before its unknown blocks go again */
	uint32_t mft_mlids; /* MLIDs covered (from 0xc000), a multiple of 32 */
	uint8_t mft_pos;    /* positions: (ports + 1 + 15) / 16 */
	/* SL-to-VL tables as programmed, [in][out] over ports 0..nports, as indexes + 1 into
	 * topo.sl2vl (0: unknown); NULL: all unknown */
	uint16_t *sl2vl;
};

/* An alias GUID (IBA 15.2.5.18): an extra GUID at an index of a port's GUIDInfo table. */
struct topo_alias {
	uint64_t guid, port_guid;
	uint32_t port;
	uint16_t index; /* block * 8 + entry */
};

/* A virtual port (IBA Annex A18): a VF behind an SR-IOV HCA's physical port, with a GUID, a
 * state and a P_Key table of its own, and a LID of its own when it asks for one. */
struct topo_vport {
	uint64_t guid;
	uint32_t port;  /* the physical port */
	uint16_t index; /* at that port */
	uint16_t lid;   /* its own LID as the SM gives it (lid_required), 0: none */
	uint16_t lid_by_index;
	uint16_t hw_lid;   /* VPortLID as the vport last reported it */
	uint16_t pkey_cap; /* VPartitionCap */
	/* its virtual node (VNodeInfo): GUID (0: not read), its port there, its ports */
	uint64_t node_guid;
	uint8_t local_port, num_ports;
	uint8_t state;    /* VPortState as last read or set */
	uint8_t guid_cap; /* VPortInfo GUIDCap: its GUIDInfo table's entries */
	char desc[65];    /* VNodeDescription as read (empty: not read, its HCA's is used) */
	bool lid_required;
	uint32_t seen;     /* the sweep (topo.sweep) that last read it */
	uint32_t pkey_sig; /* its P_Key table as programmed (a hash), 0: unknown */
	/* its P_Keys from the partition policy, as a port's: npkeys at topo.pkeys[pkey_at] */
	uint32_t pkey_at;
	uint8_t npkeys;
};

/* A port's P_Key block 0 as it answered a Get (topo_pkeys_held) */
struct topo_pkeys_held {
	uint32_t port;
	uint16_t keys[32];
};

struct topo {
	struct topo_node *nodes;
	uint32_t nnodes, nodes_cap;
	struct topo_port *ports;
	uint32_t nports, ports_cap;
	struct topo_switch *sws;
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
	/* the ports' P_Keys, materialised once per sweep from the partition policy (holes,
	 * 0, where a key left: the others keep their indexes); the buffer of the update before
	 * (read while this one was written); tables read from the ports, to be placed by */
	uint16_t *pkeys;
	uint32_t npkeys, pkeys_cap;
	uint16_t *pkeys_spare;
	uint32_t pkeys_spare_cap;
	VEC(struct topo_pkeys_held) pkeys_held;
	uint32_t pkeys_truncated; /* ports given fewer keys than the policy asks (PartitionCap) */
	/* members named by a GUID that is no port's or switch's: an alias's, or one not in
	 * the fabric (yet); an alias coming or going changes the tables only if this is not 0 */
	uint32_t pkeys_by_alias;
	/* readers' view of change: generation counts the times the model was completed (a
	 * sweep ended); while stable is false the SM is changing it (tables, links, LIDs), so
	 * nothing derived from it should be kept */
	uint64_t generation;
	bool stable;
	/* every port's peer when the model was last completed: a sweep forgets links before it
	 * finds them again (a full one all of them), while the switches go on forwarding over
	 * them; readers answering from the model meanwhile follow these (topo_reader_peer) */
	uint32_t *last_peer;
	uint32_t nlast_peer, last_peer_cap;
	/* a routing engine is filling the switches' wanted LFTs (sws[].lft) on another thread:
	 * readers on the event loop look at the programmed ones (lft_hw) alone meanwhile */
	bool routing;
	/* alias GUIDs: model state the SA edits and the SM writes into the ports */
	VEC(struct topo_alias) aliases;
	struct u64map alias_by_guid; /* alias GUID -> aliases index */
	struct u64map alias_by_slot; /* (port + 1) << 16 | index -> aliases index */
	uint64_t alias_changes;      /* counts adds and removals (for whoever saves them) */
	/* virtual ports, by GUID and by slot ((port + 1) << 16 | index) */
	VEC(struct topo_vport) vports;
	struct u64map vport_by_guid, vport_by_slot, vport_by_lid;
	uint64_t vport_changes; /* counts adds, removals and LID changes */
};

#define TOPO_MAX_PKEYS 128 /* P_Keys per port the model keeps (PartitionCap of today's HCAs) */

int topo_init(struct topo *t);
void topo_free(struct topo *t);

/* Add a node (all ports unlinked). TOPO_NONE when out of memory. */
uint32_t topo_add_node(struct topo *t, const struct mad_node_info *ni);
static inline uint32_t topo_port(const struct topo *t, uint32_t node, unsigned num)
{
	return num <= t->nodes[node].nports ? t->nodes[node].first_port + num : TOPO_NONE;
}
static inline bool topo_is_switch(const struct topo *t, uint32_t node)
{
	return t->nodes[node].type == NODE_TYPE_SWITCH;
}
/* The port that carries a node's LID: switch port 0, or the CA port itself. */
/* Port 0 of a switch with an enhanced port 0 (SwitchInfo EnhancedPort0): it runs data VLs of
 * its own, with SL-to-VL (as an output) and VL arbitration tables, which base port 0 has not. */
static inline bool topo_port_esp0(const struct topo *t, uint32_t port)
{
	const struct topo_node *n = &t->nodes[t->ports[port].node];
	return n->type == NODE_TYPE_SWITCH && t->ports[port].num == 0 &&
	       t->sws[n->sw].si.enhanced_port0;
}

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
/* The SM is done changing the model (a sweep ended): stable again, a new generation, and the
 * links as they are now kept for readers during the next sweep. -1: out of memory (readers
 * then see the links as the sweep finds them). */
int topo_complete(struct topo *t);
/* A port's peer as readers answering from the model should see it: the model's own while
 * it is stable, else the last completed one's (where the port existed then). */
static inline uint32_t topo_reader_peer(const struct topo *t, uint32_t p)
{
	if (t->stable || p >= t->nlast_peer)
		return t->ports[p].peer;
	return t->last_peer[p];
}
void topo_unlink(struct topo *t, uint32_t a);
/* Every link forgotten (a full sweep finds them again; readers keep the last completed ones,
 * topo_reader_peer). */
void topo_forget_links(struct topo *t);
/* A CA port's GUID, indexed (by_port_guid): -1 when another port holds that GUID (a
 * duplicate: nothing changes). A GUID the port held before leaves the index. */
int topo_set_port_guid(struct topo *t, uint32_t port, uint64_t guid);
/* A port gives its LIDs back (gone, unreachable, or its LID could not be kept). */
static inline void topo_release_lid(struct topo *t, uint32_t port)
{
	t->ports[port].lid = 0;
}
/* A port's LID block, as the SM gives it out (lid_port follows when the model is indexed). */
static inline void topo_assign_lid(struct topo *t, uint32_t port, uint16_t lid, uint8_t lmc)
{
	t->ports[port].lid = lid;
	t->ports[port].lmc = lmc;
}

/* Directed routes from the SM to every node over the known links (a node's route is kept
 * while it holds; links held out of routing are crossed only where nothing else leads), and
 * presence: when final, nodes the SM cannot reach are marked absent and their links
 * dropped. Returns the number of nodes that became absent. */
uint32_t topo_update_paths(struct topo *t, bool final);

/* The LID table, rebuilt from the ports' assigned LIDs. */
void topo_rebuild_lids(struct topo *t);

/* ---- port predicates: the one definition of each ---- */

/* Is the port's physical link up (Init, Armed or Active)? */
static inline bool topo_port_up(const struct topo_port *p)
{
	return p->known && p->pi.port_state >= PORT_STATE_INIT;
}

/* A port of a node the last sweep reached, whose PortInfo the SM has read. */
static inline bool topo_port_seen(const struct topo *t, uint32_t p)
{
	return t->nodes[t->ports[p].node].present && t->ports[p].known;
}

/* A seen physical port with a link to a known peer. */
static inline bool topo_port_linked(const struct topo *t, uint32_t p)
{
	return topo_port_seen(t, p) && t->ports[p].num != 0 && t->ports[p].peer != TOPO_NONE;
}

/* An endpoint: what a LID addresses. A switch's port 0, or a CA port that is linked (or is
 * the SM's own). These get LIDs. */
static inline bool topo_port_endpoint(const struct topo *t, uint32_t p)
{
	if (!topo_port_seen(t, p))
		return false;
	if (topo_is_switch(t, t->ports[p].node))
		return t->ports[p].num == 0;
	return t->ports[p].num != 0 && (t->ports[p].peer != TOPO_NONE || p == t->sm_port);
}

/* An endpoint in service: it has a LID and, a CA port, an ACTIVE link (IBA's "in service"
 * for traps 64/65 and the SA's subscribers). */
static inline bool topo_port_in_service(const struct topo *t, uint32_t p)
{
	if (!topo_port_endpoint(t, p) || !t->ports[p].lid)
		return false;
	return topo_is_switch(t, t->ports[p].node) ||
	       (t->ports[p].peer != TOPO_NONE && t->ports[p].pi.port_state == PORT_STATE_ACTIVE);
}

/* A port the SM configures: a switch's port 0, or a linked port whose link is up. */
static inline bool topo_port_managed(const struct topo *t, uint32_t p)
{
	if (topo_is_switch(t, t->ports[p].node) && t->ports[p].num == 0)
		return topo_port_seen(t, p);
	return topo_port_linked(t, p) && topo_port_up(&t->ports[p]);
}

/* A managed link port that should be ACTIVE and is not. */
static inline bool topo_port_should_be_active(const struct topo *t, uint32_t p)
{
	return topo_port_linked(t, p) && t->ports[p].pi.port_state != PORT_STATE_ACTIVE;
}

/* ---- partitions (fabric/partitions.c) ---- */

/* Each port's P_Keys from the partition policy: a CA port gets the default partition first
 * (full, or limited when the policy limits it; the SM's own port stays full), then every
 * partition it belongs to in the policy's order; a switch's port 0 the default, full.
 * Once per sweep, after discovery, and after the policy changes. 0, or -1 out of memory. */
int topo_pkeys_update(struct topo *t, const struct ibsmd_config *cfg);
/* The port's P_Keys (count in *n); p may be a vport's slot, nports + its index. */
static inline const uint16_t *topo_port_pkeys(const struct topo *t, uint32_t p, unsigned *n)
{
	if (p >= t->nports) { /* a vport's slot: nports + its index (fabric/vports.c) */
		*n = t->vports.v[p - t->nports].npkeys;
		return t->pkeys ? t->pkeys + t->vports.v[p - t->nports].pkey_at : NULL;
	}
	*n = t->ports[p].npkeys;
	return t->pkeys ? t->pkeys + t->ports[p].pkey_at : NULL;
}
/* Is the port a member of the partition (*full: as a full member)? */
/* What a port holds in its P_Key block 0, read after a restart or a takeover: the next
 * topo_pkeys_update keeps each key at the index the port holds it (else the model's last
 * placement does). */
void topo_pkeys_held(struct topo *t, uint32_t port, const uint16_t keys[32]);
bool topo_port_has_pkey(const struct topo *t, uint32_t p, uint16_t pkey, bool *full);
/* The first partition two ports share with one of them a full member (membership bit set),
 * 0 if none: what lets them talk. */
uint16_t topo_shared_pkey(const struct topo *t, uint32_t a, uint32_t b);
/* The P_Keys a switch's external port holds when it faces a CA port with a LID (that port's
 * own, which the switch then enforces); the count, 0 when it does not face one or the keys
 * do not fit the switch's PartitionEnforcementCap (no enforcement there). */
unsigned topo_switch_port_pkeys(const struct topo *t, uint32_t port, uint16_t *pk, unsigned cap);

/* ---- alias GUIDs (fabric/aliases.c) ---- */

#define TOPO_MAX_ALIASES 65536

/* The alias at an index of a port's GUIDInfo table (0: none); the port an alias names
 * (TOPO_NONE: none). */
uint64_t topo_alias_at(const struct topo *t, uint32_t port, unsigned index);
uint32_t topo_alias_port(const struct topo *t, uint64_t guid);
/* Is the GUID free: no port, node or alias uses it? */
bool topo_guid_free(const struct topo *t, uint64_t guid);
/* 0, or -1 (out of memory, TOPO_MAX_ALIASES reached). The slot must be free. */
int topo_alias_add(struct topo *t, uint32_t port, unsigned index, uint64_t guid);
void topo_alias_del(struct topo *t, uint64_t guid);
/* After discovery: aliases follow their port's index, and go with a port that left. The
 * number removed. */
uint32_t topo_aliases_follow(struct topo *t);
/* GUIDInfo block b of a port as it should read: the port GUID at index 0, aliases. */
void topo_guid_info_block(const struct topo *t, uint32_t port, unsigned b, struct mad_guid_info *g);

/* ---- virtual ports (fabric/vports.c) ---- */

#define TOPO_MAX_VPORTS 262144

/* The vport at a port's index, or by GUID: its index into topo.vports, TOPO_NONE if none. */
uint32_t topo_vport_at(const struct topo *t, uint32_t port, unsigned index);
uint32_t topo_vport_by_guid(const struct topo *t, uint64_t guid);
/* A vport as read (its VPortInfo): added, or updated in place. Its index into topo.vports;
 * TOPO_NONE when its GUID is another's (a port's, a node's, an alias's or another vport's:
 * it is left out), or out of memory. */
uint32_t topo_vport_put(struct topo *t, uint32_t port, unsigned index, uint64_t guid,
                        bool lid_required, uint16_t lid_by_index, uint16_t hw_lid, uint8_t state);
void topo_vport_del(struct topo *t, uint32_t v);
/* The vports of a port not read since sweep `since` go (the VF is gone); all of them when
 * since is UINT32_MAX. How many went. */
uint32_t topo_vports_drop(struct topo *t, uint32_t port, uint32_t since);
/* After discovery: vports of ports that are gone, unlinked or without virtualization go. */
uint32_t topo_vports_follow(struct topo *t);
/* A vport's own LID as the SM gives it (0: none); -1 out of memory (it keeps none). */
int topo_vport_assign_lid(struct topo *t, uint32_t v, uint16_t lid);
/* The LID a vport answers to: its own, the one of the vport LIDByVPortIndex names, or the
 * physical port's (0: it asked for one of its own and got none). */
uint16_t topo_vport_lid(const struct topo *t, uint32_t v);
/* The highest LID a vport holds of its own (0: none). */
uint16_t topo_vport_max_lid(const struct topo *t);
/* After routing: every vport LID leaves each switch by the port its physical port's LID
 * does (the packets reach the HCA, which hands them to the VF). */
void topo_vport_lfts(struct topo *t);
/* The vport holding a LID of its own (TOPO_NONE: none). */
uint32_t topo_vport_by_lid(const struct topo *t, uint16_t lid);
void topo_vport_set_pkey_sig(struct topo *t, uint32_t v, uint32_t sig);
/* Its virtual node as VNodeInfo tells it: the SA's NodeRecord of the VF. */
void topo_vport_set_node(struct topo *t, uint32_t v, uint64_t node_guid, uint8_t local_port,
                         uint8_t num_ports, uint16_t pkey_cap);
/* Its GUIDInfo table's size as VPortInfo says: the SA's GUIDInfoRecords of the VF. */
void topo_vport_set_guid_cap(struct topo *t, uint32_t v, uint8_t guid_cap);
/* Its virtual node's description (VNodeDescription, up to 64 bytes): its NodeRecord's. */
void topo_vport_set_desc(struct topo *t, uint32_t v, const char *desc);
/* The port a LID leads to: its holder's, or for a vport's own LID its physical port
 * (TOPO_NONE: nobody's). */
uint32_t topo_lid_to_port(const struct topo *t, uint16_t lid);
/* The LID routing knows a LID by: itself, or for a vport's own its port's base LID (which
 * its packets follow through the fabric). */
uint16_t topo_lid_base(const struct topo *t, uint16_t lid);
/* An endpoint slot (a port index, or nports + a vport's index: what the SA's path queries
 * name) to the physical port it is at. */
static inline uint32_t topo_slot_port(const struct topo *t, uint32_t slot)
{
	return slot < t->nports ? slot : t->vports.v[slot - t->nports].port;
}

/* ---- tables as programmed (fabric/tables.c) ---- */

/* Forget every table a node holds as we programmed it (it was reset or came back after
 * an absence): VL, P_Key, and a switch's LFT and MFT blocks, and what its management port
 * held (read again). They are sent again. */
void topo_forget_tables(struct topo *t, uint32_t node);
/* Forget every table of every node as we programmed it, the nodes themselves kept: another
 * SM is master now and may rewrite any of them, so a takeover reads the LFTs again (and
 * sends what it cannot read) rather than trust what this SM last wrote. */
void topo_forget_all_tables(struct topo *t);
/* Room for a switch's LFT as it holds it (lft_hw) up to size entries; entries new to it are
 * unknown (0xfe matches no wanted port: their blocks are written). < 0: out of memory. */
int topo_lft_hw_reserve(struct topo *t, uint32_t sw, uint32_t size);
/* An LFT block the switch holds, as it answered a Get or acknowledged a Set (ignored beyond
 * lft_hw: the table was forgotten meanwhile). */
void topo_lft_hw_store(struct topo *t, uint32_t sw, uint32_t block, const uint8_t ports[64]);
/* A port's P_Key table as programmed, by its signature (0: unknown, written again). */
void topo_set_pkey_sig(struct topo *t, uint32_t port, uint32_t sig);
/* The index + 1 of a VL arbitration block in topo.vlarb, added if new; 0 when out of room. */
uint16_t topo_vlarb_intern(struct topo *t, const struct mad_vlarb_table *tbl);
/* ... and of an SL-to-VL table in topo.sl2vl. */
uint16_t topo_sl2vl_intern(struct topo *t, uint64_t v);
/* A switch's SL-to-VL table for in -> out (np: ports + 1), TOPO_SL2VL_UNKNOWN if not known. */
uint64_t topo_switch_sl2vl(const struct topo *t, const struct topo_switch *sw, unsigned np,
                           unsigned in, unsigned out);
/* The SL-to-VL table of output port `port` for packets that came in by port number `in`
 * (CA ports: in is ignored), SL0 in the top nibble; 0 when the SM has not set it. */
uint64_t topo_sl2vl_of(const struct topo *t, uint32_t port, unsigned in);
/* The output port a switch's LFT sends dlid by, as programmed (0xff: none or unknown). */
static inline uint8_t topo_lft_hw(const struct topo *t, uint32_t sw, uint16_t dlid)
{
	const struct topo_switch *s = &t->sws[sw];
	return s->lft_hw && dlid < s->lft_hw_size ? s->lft_hw[dlid] : 0xff;
}

#endif
