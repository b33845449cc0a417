/* fabricsim's model of a fabric: nodes, ports and switches in flat arrays indexed by small
 * integers, links as port-to-port indexes, GUIDs and names in hash maps, and a LID table.
 * Every SMA and the packet paths work on this; the server, the verifier and the generators
 * only read or build it. */
#ifndef FABRICSIM_FABRIC_H
#define FABRICSIM_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "journal.h"
#include "mad/cc.h"
#include "mad/link_speed.h"
#include "mad/mad_types.h"
#include "mad/smp_attrs.h"
#include "util/u64map.h"

#define FS_NONE       UINT32_MAX
#define FS_MAX_UCAST  0xc000 /* unicast LIDs are 1..0xbfff */
#define FS_MCAST_BASE 0xc000
#define FS_MFT_CAP    1024 /* multicast LIDs per switch, as ibsim */
#define FS_LFT_CAP    49152

/* A port's counters, wide: the PMA saturates them at each field's width when it answers, as
 * hardware does, and a Set clears the ones selected. */
struct fs_counters {
	uint64_t xmit_pkts, rcv_pkts, xmit_data, rcv_data; /* data in 4-byte words */
	uint64_t link_downed;
	/* error counters, raised only by "ctl errors" (the simulated wire is clean) */
	uint64_t symbol_errors, link_error_recovery, rcv_errors, rcv_remote_phys_errors,
	    rcv_switch_relay_errors, xmit_discards, xmit_constraint_errors, rcv_constraint_errors,
	    local_link_integrity_errors, excessive_buffer_overruns, vl15_dropped, xmit_wait;
};

/* A virtual port (IBA Annex A18) of an SR-IOV HCA's physical port: a VF's own GUID, state,
 * P_Key table and, when it asks for one, LID (test/fabricsim/vports.c). */
#define FS_VPORT_PKEYS 64 /* VPartitionCap */
struct fs_vport {
	uint64_t guid;
	uint16_t lid;          /* its own LID, as the SM set it (with lid_required) */
	uint16_t lid_by_index; /* without one: the vport whose LID it uses (0: the port's) */
	uint8_t state;         /* PORT_STATE_*: DOWN is no VF at this index */
	bool lid_required;
	uint16_t pkeys[FS_VPORT_PKEYS];
};

/* A management port's congestion control state (test/fabricsim/cca.c), allocated on the
 * first CC MAD: what the node holds, power-on zeros */
#define FS_CC_CCT_BLOCKS 2 /* ControlTableCap of every CA: 128 CCT entries */
struct fs_cc {
	struct mad_cc_key_info key;
	struct mad_cc_switch_setting sw;
	struct mad_cc_ca_setting ca;
	uint16_t ccti_limit;
	uint16_t cct[FS_CC_CCT_BLOCKS][MAD_CC_CCT_BLOCK];
};

struct fs_port {
	uint32_t node;
	uint8_t num;
	uint32_t peer; /* the port at the other end of the cable, FS_NONE if none */
	uint64_t guid;
	struct mad_port_info pi; /* the live PortInfo; LID fields live on port 0 for switches */
	bool disabled;           /* PortPhysicalState Disabled by the SM */
	bool unplugged;          /* cable pulled (fault injection) */
	uint8_t width_cap;       /* LinkWidthSupported mask (w= in an ibsim net file) */
	uint16_t speed_cap;      /* speeds it supports, bits of enum link_speed (s=, e=, x=) */
	/* what the cable lets the link train at (both ends hold the same): the widest width
	 * (a LinkWidth bit) and the fastest speed + 1; 0: no limit */
	uint8_t cable_width, cable_speed;
	uint16_t *pkeys;       /* partition cap entries */
	uint8_t sl2vl[8];      /* CA ports; switches keep theirs per input/output pair */
	uint8_t *vlarb;        /* 4 blocks of 64 bytes, allocated on first Set */
	uint64_t *guids;       /* GUIDInfo (guid_cap entries), allocated on first Set */
	uint32_t drop_percent; /* fault injection: MADs lost crossing this port */
	struct fs_counters cnt;
	struct fs_cc *cc; /* switch port 0 and CA ports: congestion control, NULL until used */
	bool cc_off;      /* no CC agent (ctl cc NODE off): the kernel answers for it */
	uint64_t mkey_lease_start_ns; /* first M_Key violation of a running lease, 0 if none */
	/* the last SMP refused for its M_Key, for trap 256 (the server adds the requester's
	 * LID and sends it) */
	struct {
		bool pending;
		uint16_t lid, dr_slid, attr;
		uint8_t method;
		uint32_t mod;
		uint64_t mkey;
	} bad_mkey;
	/* virtualization: vport_cap vports (0: none, the HCA has no SR-IOV), allocated when
	 * the first is used; whether an SM enabled it, and VPortStateChange */
	struct fs_vport *vports;
	uint16_t vport_cap;
	bool virt_enable, vport_change;
	/* trap repress state */
	uint16_t trap_pending; /* trap number awaiting TrapRepress, 0 if none */
	/* trap 144's ChangeFlags for the trap pending (0: its CapabilityMask alone) */
	uint16_t trap144_flags;
	uint64_t trap_tid;
};

struct fs_node {
	uint8_t type; /* NODE_TYPE_CA / NODE_TYPE_SWITCH / NODE_TYPE_ROUTER */
	uint8_t nports;
	bool present; /* false after removal: invisible, links down */
	uint64_t guid, sys_guid;
	uint32_t vendor_id, device_id, revision;
	char name[64]; /* the net file's node id, e.g. "Switch1" or "S-0002c90000000001" */
	char desc[65];
	uint32_t first_port;    /* index of port 0 (switch) or port 1 (CA) */
	uint32_t sw;            /* index into fabric.sws, FS_NONE for CAs */
	uint64_t busy_until_ns; /* per-node SMA service time model */
	uint16_t refuse_attr;   /* fault: Sets of this attribute get "unsupported" (0: none) */
	uint32_t refused;       /* ... how many */
	bool legacy_sma;        /* older than IBA 1.5: refuses PortInfo with AM bit 31 */
	uint64_t smp_sets;      /* SubnSets its clients sent (ctl sets: a dry run sends none) */
};

struct fs_switch {
	uint32_t node;
	struct mad_switch_info si;
	uint8_t *lft;      /* lft_size entries, 0xff = no route */
	uint32_t lft_size; /* grows with the highest LID set */
	uint16_t *mft;     /* FS_MFT_CAP x positions */
	uint8_t positions; /* 16-port blocks of the MFT */
	uint8_t *sl2vl;    /* (nports+1)^2 x 8 bytes, [in][out] */
	uint64_t lft_sets; /* LFT blocks written by Set (tests count reprogramming) */
	uint64_t lft_last; /* fabric.lft_seq at its last LFT Set (tests check the order) */
};

struct fabric {
	struct fs_node *nodes;
	uint32_t nnodes, nodes_cap;
	struct fs_port *ports;
	uint32_t nports, ports_cap;
	struct fs_switch *sws;
	uint32_t nsws, sws_cap;
	struct u64map by_node_guid, by_port_guid, by_name;
	struct u64map by_vport_guid; /* a VF's GUID -> its physical port */
	uint32_t *lid_port;          /* LID -> port index (the port owning it), FS_NONE if none */
	uint64_t next_sw_guid, next_ca_guid;
	unsigned seed;    /* fault injection's random choices */
	uint64_t lft_seq; /* LFT Sets taken, fabric-wide */
	uint64_t cc_sets; /* CC settings Sets taken (SwitchCongestionSetting, CA's, CCT blocks) */
	/* ACTIVE ports an SM's PortInfo Set took down (retrain to Init, or disable): a takeover
	 * or a handover that keeps the subnet up leaves this alone */
	uint64_t sm_deactivated;
	struct fs_journal journal; /* what happened when, by the simulator's clock */
	/* Told of every port whose link state changed (the server sends traps from it). */
	void (*on_link_change)(struct fabric *f, uint32_t port, void *ctx);
	/* ... and of every physical port whose vports came or went (trap 1146) */
	void (*on_vport_change)(struct fabric *f, uint32_t port, void *ctx);
	/* node's NodeDescription changed (ctl desc): its ports tell the SM (trap 144) */
	void (*on_desc_change)(struct fabric *f, uint32_t node, void *ctx);
	void *ctx;
};

void fabric_init(struct fabric *f);
void fabric_free(struct fabric *f);

/* Add a node with its ports, all unconnected. guid 0: the next deterministic GUID (switches
 * from 0x200000, CAs from 0x100000 and one GUID per port after the node's, as ibsim). */
uint32_t fabric_add_node(struct fabric *f, uint8_t type, unsigned nports, const char *name,
                         uint64_t guid);
/* Cable two ports together; both must be free. width/speed: masks both ends support (a
 * LinkWidth mask, bits of enum link_speed; 0 keeps the default 1x|4x, SDR|DDR|QDR). 0 or -1. */
int fabric_connect(struct fabric *f, uint32_t pa, uint32_t pb, uint8_t width, uint16_t speed);
/* Limit what the cable between p and its peer trains at: the widest width (LinkWidth bit)
 * and the fastest speed (enum link_speed); 0 / LINK_SPEEDS: no limit. A link that is up
 * trains again at once, without going down. */
void fabric_cable_limit(struct fabric *f, uint32_t p, uint8_t width, unsigned speed);
/* Node n's NodeDescription becomes desc (NUL-terminated, up to 64 bytes), as a host's driver
 * sets it; on_desc_change tells the server, whose SMA sends trap 144 from each port that
 * has IsOtherLocalChangesNoticeSupported. */
void fabric_set_desc(struct fabric *f, uint32_t n, const char *desc);
/* "4xHDR", "2xNDR", "HDR" or "4x": a width (LinkWidth bit, 0 if not given) and a speed
 * (enum link_speed, LINK_SPEEDS if not given). 0, or -1 if it is neither. */
int fabric_parse_rate(const char *text, uint8_t *width, unsigned *speed);
/* The widths a port whose widest is w supports, as hardware has them: 1x, 4x, w, and 2x
 * from HDR on (speed: its fastest, enum link_speed). */
uint8_t fabric_port_widths(uint8_t w, unsigned speed);
/* The width and speed both ends of a link could run at, ignoring the cable and what is
 * enabled: what a link running slower than this is missing. */
void fabric_link_best(const struct fabric *f, uint32_t p, uint8_t *width, unsigned *speed);
/* Finish set-up: port states from the links (INIT where cabled, DOWN elsewhere). */
void fabric_finalize(struct fabric *f);

/* Port index of port number num of node n, FS_NONE if the node has no such port. */
uint32_t fabric_port(const struct fabric *f, uint32_t node, unsigned num);
/* Entries in a port's P_Key table (PartitionCap; a switch's external ports: its
 * PartitionEnforcementCap). */
unsigned fabric_pkey_cap(const struct fabric *f, uint32_t port);
/* The port carrying a node's LID: port 0 of a switch, the port itself for a CA. */
uint32_t fabric_lid_port(const struct fabric *f, uint32_t port);
uint32_t fabric_find_node(const struct fabric *f, const char *name_or_guid);

static inline struct fs_port *fs_port(const struct fabric *f, uint32_t p)
{
	return &f->ports[p];
}
static inline struct fs_node *fs_node_of(const struct fabric *f, uint32_t p)
{
	return &f->nodes[f->ports[p].node];
}
static inline bool fs_is_switch(const struct fabric *f, uint32_t node)
{
	return f->nodes[node].type == NODE_TYPE_SWITCH;
}

/* The physical link behind a port is up: cabled, both ends present and enabled. */
bool fabric_link_up(const struct fabric *f, uint32_t p);
/* Take a link down or up (cable pulled / put back): states, PortStateChange, traps. */
void fabric_set_link(struct fabric *f, uint32_t p, bool up);
void fabric_remove_node(struct fabric *f, uint32_t node);
void fabric_restore_node(struct fabric *f, uint32_t node);

/* LID bookkeeping after a PortInfo Set of LID or LMC. */
void fabric_lid_update(struct fabric *f, uint32_t port, uint16_t old_lid, uint8_t old_lmc);
/* The port owning a LID (any LID of an LMC block), FS_NONE if none. */
uint32_t fabric_port_by_lid(const struct fabric *f, uint16_t lid);

/* ---- virtual ports (vports.c) ---- */

/* Give a CA port virtualization with cap vports (VPortCap; vport 0 is the PF). 0 or -1. */
int fabric_virt_cap(struct fabric *f, uint32_t port, unsigned cap);
/* A VF appears at index (1..cap-1) with its GUID (0: a deterministic one) and whether it asks
 * for a LID of its own; VPortStateChange and trap 1146 when virtualization is enabled. 0, or
 * -1 with why in err. */
int fabric_vport_add(struct fabric *f, uint32_t port, unsigned index, uint64_t guid,
                     bool lid_required, char *err, size_t errlen);
int fabric_vport_remove(struct fabric *f, uint32_t port, unsigned index, char *err, size_t errlen);
/* The state a vport shows: DOWN where no VF is, or virtualization is off (vport 0 then
 * follows the physical port). */
uint8_t fabric_vport_state(const struct fabric *f, uint32_t port, unsigned index);
/* The LID a vport answers to: its own, another vport's (LIDByVPortIndex), or the port's. */
uint16_t fabric_vport_lid(const struct fabric *f, uint32_t port, unsigned index);
/* The physical link went down: its VFs drop back to Init (they stay, the SM brings them up
 * again). Called by fabric.c. */
void fabric_vports_link_down(struct fabric *f, uint32_t port);
/* A power cycle: the VFs are gone and virtualization is off until an SM enables it. */
void fabric_vports_reset(struct fabric *f, uint32_t port);
/* The SMA's virtualization attributes (0xFFB0-0xFFB6) at physical port in: the MAD status. */
uint16_t sma_virt(struct fabric *f, uint32_t in, uint16_t attr, uint32_t mod, bool set,
                  uint8_t *data);

#endif
