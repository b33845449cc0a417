/* The subnet manager's public face: what main and the layers above it (the SA) use.
 *
 * The SM owns the fabric model (fabric/), sweeps the fabric, assigns LIDs, routes and
 * programs it, and keeps it up. It calls nothing above it: whoever wants to hear of sweeps,
 * traps and state changes registers a listener (the binary's main wires the SA in), the way
 * BIRD's core reaches protocols only through their hooks. Its internals are in sm_int.h. */
#ifndef IBSMD_SM_SM_H
#define IBSMD_SM_SM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "config/config.h"
#include "fabric/fabric.h"
#include "routing/check.h"
#include "mad/dispatcher.h"
#include "mad/smp_attrs.h"

struct sm;

#define SM_MLID_BASE 0xc000
#define SM_MLID_MAX  0x3fff /* multicast LIDs 0xc000..0xfffe */

struct sm_phase_times {
	/* read: the LFT blocks of switches whose tables were unknown, before routing */
	double discover, lids, read, route, tables, arm, activate, total;
};

struct sm_counts {
	uint32_t nodes, switches, cas, ports, links, lids;
	uint32_t lft_blocks_sent, port_sets, vl_sets;
	uint32_t lft_blocks_read;       /* read from switches whose tables were unknown */
	uint32_t pkey_reads, pkey_sets; /* P_Key blocks read (unknown) and set (wrong) */
	/* the most SMPs the sweep held at once in the SM's own queue, past mad_queue_max: what
	 * goes as room comes never waits there */
	uint32_t queued_peak;
};

/* What the SM tells its listener. Each hook is optional; ctx is the listener's own. */
struct sm_listener {
	void *ctx;
	/* a sweep ended with the subnet up (structural: it found links or nodes changed) */
	void (*sweep_done)(void *ctx, bool structural);
	/* a trap reached the SM (it has answered it with TrapRepress already) */
	void (*trap)(void *ctx, const struct mad_notice *trap);
	/* the SM's state (SM_STATE_*) changed */
	void (*state_changed)(void *ctx, uint8_t state);
	/* may the subnet be handed over to this standby SM now? false defers it (a standby
	 * still receiving the master's state); the SM asks again at its next poll */
	bool (*handover_ready)(void *ctx, uint64_t guid);
	/* the partitions changed at run time (sm/tenants.h), the ports' tables are on their
	 * way: the SA makes the IPoIB groups of new partitions and drops those of partitions
	 * gone (master only) */
	void (*partitions_changed)(void *ctx);
};

/* Set up the SM on an open transport: NULL (logged) on failure. No MAD goes out before
 * sm_start. */
struct sm *sm_new(struct ibsmd_config *cfg, const struct log *log, struct ev_loop *loop,
                  struct mad_transport *t, bool once);
/* A read-only trial on a fabric another SM runs (--dry-run): IsSM never set, no Set sent;
 * one sweep discovers the fabric and reads its tables with Gets, keeps the LIDs the ports
 * hold, runs the engine chain, compares and checks both sets of tables (sm_dry_report), and
 * stops the loop. */
struct sm *sm_new_dry_run(struct ibsmd_config *cfg, const struct log *log, struct ev_loop *loop,
                          struct mad_transport *t);
/* Start sweeping. 0 or -1. */
int sm_start(struct sm *sm);
/* Stop: cancel every transaction under way (their callbacks do not run), stop timers, save
 * state. The model and dispatcher stay readable until sm_free. */
void sm_stop(struct sm *sm);
void sm_free(struct sm *sm);

/* Add a listener (a copy is kept); they are called in the order added. 0, or -1 when
 * SM_MAX_LISTENERS are there. sm_clear_listeners drops them all (at shutdown). */
#define SM_MAX_LISTENERS 8
int sm_add_listener(struct sm *sm, const struct sm_listener *l);
void sm_clear_listeners(struct sm *sm);

/* Ask for a sweep: of these switches (NULL: a full rediscovery). */
void sm_request_sweep(struct sm *sm, const uint32_t *switch_nodes, uint32_t n);
/* A light sweep now (every switch's SwitchInfo), as the timer does; nothing when not
 * master or a sweep is under way. */
void sm_request_light_sweep(struct sm *sm);
/* A full sweep whose routing starts afresh (balanced over the whole fabric), instead of
 * keeping every route that still works. */
void sm_request_reroute(struct sm *sm);

/* The configuration changed under the SM (a reload): take the new light sweep period and
 * rediscover the whole fabric, so that partitions, routing and the rest apply. */
void sm_config_changed(struct sm *sm);
/* Has a routing input changed since the SM last routed by its configuration (an input file
 * edited under the same name, which a reload of an unchanged ibsmd.yaml does not see)? */
bool sm_routing_inputs_changed(const struct sm *sm);
/* ... only settings of the ports' PortInfo (config_key_port_only): set where they differ,
 * without a sweep. */
void sm_ports_changed(struct sm *sm);

/* ---- what the layers above read ---- */
struct topo *sm_fabric(struct sm *sm);
struct mad_dispatcher *sm_dispatcher(struct sm *sm);
const struct log *sm_log(const struct sm *sm);
const struct ibsmd_config *sm_config(const struct sm *sm);
struct ev_loop *sm_loop(const struct sm *sm);

/* "MASTER", "STANDBY", "DISCOVERING", "NOT-ACTIVE" (SMInfo:SMState) */
const char *sm_state_name(uint8_t state);

/* SMInfo as the SM answers it (SM_Key zeroed). */
struct mad_sm_info sm_info(const struct sm *sm);

/* The other SMs this one knows of (found by its sweeps, or that spoke to it), for the SA's
 * SMInfoRecords and for operators: their SMInfo as they last answered it (SM_Key zeroed),
 * their LID, and whether they are foreign (they showed an SM_Key that is not ours). */
struct sm_remote_info {
	struct mad_sm_info info;
	uint16_t lid;
	bool answered;
	bool rogue;
};
uint32_t sm_remote_count(const struct sm *sm);
/* A standby's master: its LID (0: not standing by, or the master is not found), GUID too. */
uint16_t sm_master_lid(const struct sm *sm, uint64_t *guid);
/* Is the port at this LID an SM this one knows, that answered its SMInfo and is not foreign
 * (what the standby sync serves)? Its port GUID too. */
bool sm_peer_at_lid(const struct sm *sm, uint16_t lid, uint64_t *guid);

/* The LIDs kept for port GUIDs (the guid2lid file), for the standby sync: a count that moves
 * with every change, each entry in turn, and a standby's way to mirror its master's: set
 * (lid 0: forget) and save. */
uint64_t sm_guid2lid_changes(const struct sm *sm);
void sm_guid2lid_each(const struct sm *sm, void (*fn)(void *ctx, uint64_t guid, uint16_t lid),
                      void *ctx);
void sm_guid2lid_set(struct sm *sm, uint64_t guid, uint16_t lid);
int sm_guid2lid_save(struct sm *sm);
/* The M_Keys the ports carry (the mkeys file), for the standby sync in the same way: a
 * count that moves with every change, each in turn, set (key 0: forget) and save. */
uint64_t sm_mkeys_changes(const struct sm *sm);
void sm_mkeys_each(const struct sm *sm, void (*fn)(void *ctx, uint64_t guid, uint64_t key),
                   void *ctx);
void sm_mkeys_set(struct sm *sm, uint64_t guid, uint64_t key);
bool sm_mkeys_get(const struct sm *sm, uint64_t guid, uint64_t *key);
/* Under M_Key protection level 2, where each port leads (node GUID, port, the GUID naming
 * the far end's key), so that a standby can find its way when it takes over. */
uint64_t sm_hops_changes(const struct sm *sm);
void sm_hops_each(const struct sm *sm,
                  void (*fn)(void *ctx, uint64_t node_guid, uint8_t port, uint64_t far_guid),
                  void *ctx);
void sm_hops_set(struct sm *sm, uint64_t node_guid, uint8_t port, uint64_t far_guid);
uint64_t sm_hops_get(const struct sm *sm, uint64_t node_guid, uint8_t port);
int sm_mkeys_save(struct sm *sm);
bool sm_remote_get(const struct sm *sm, uint32_t i, struct sm_remote_info *out);

/* Links quarantined for flapping (link_flap_threshold): enable again those at a port of the
 * node with this GUID (port 0: any of its ports; guid 0: every one). How many. */
int sm_link_release(struct sm *sm, uint64_t guid, unsigned port);
unsigned sm_links_held(const struct sm *sm);
/* Every present node's NodeDescription read again (OpenSM's console update_desc), as
 * master; how many nodes were asked (0 as standby). */
unsigned sm_update_descs(struct sm *sm);
/* The SM's priority now (sm_priority until a reload): SMInfo says it from the next answer,
 * and a master hands over to a standby it polls that now outranks it. */
void sm_set_priority(struct sm *sm, uint8_t priority);
/* The i-th of them (below sm_links_held): the port the SM disabled, whose last_peer is the
 * other end; TOPO_NONE past the end. */
uint32_t sm_link_held_port(const struct sm *sm, unsigned i);

/* Routing runs off the event loop (sm_status says when). What cannot run beside it (a
 * reload of the configuration, dumps of the tables) waits for it to end first; the sweep
 * then goes on. */
void sm_routing_wait(struct sm *sm);

/* The outcome of the sweeps so far, for main and benchmarks. */
struct sm_status {
	bool up;       /* the subnet has come up */
	int exit_code; /* --once: 0 up, 1 not */
	const char *exit_reason;
	const char *engine; /* the engine that routed last */
	struct sm_counts counts;
	struct sm_phase_times times;
	uint64_t sweeps;
	uint64_t light_sweeps; /* light sweeps ended (each asks the known SMs again) */
	uint64_t traps;        /* traps received */
	uint32_t links_held;   /* links quarantined now (sm/health.c) */
	bool sweeping;         /* a sweep is under way */
	bool routing;          /* ... and its routing engine is computing (off the loop) */
	const char *stage;     /* ... what it does now: discovery, reading tables, routing,
	                        * programming ("" when none is under way) */
	bool heavy; /* ... or the last one: a full rediscovery (not a switch's re-look) */
};
struct sm_status sm_status(const struct sm *sm);

/* What a dry run found. The running SM's tables are what the switches hold; its paths are
 * checked on one SL (its SL-to-VL layers are not known from the tables). */
struct sm_dry_switch {
	uint64_t guid;
	char desc[65];
	uint32_t entries, changed; /* LIDs in use; entries ibsmd would write */
};
struct sm_dry_report {
	bool done;
	const char *engine;
	uint32_t switches, switches_changed, switches_unread;
	uint64_t entries, entries_changed;
	struct routing_check theirs, ours;
	unsigned our_layers, link_vls; /* SL/VL layers ibsmd's routes need; VLs the links run */
	uint64_t sets_refused;         /* Sets that something tried to send: none, or a bug */
	struct sm_dry_switch *sws;     /* the switches whose tables would change */
	uint32_t nsws;
};
const struct sm_dry_report *sm_dry_report(const struct sm *sm);

/* GUIDs the last heavy sweep found twice (a node GUID answering as two different nodes, a
 * port GUID on two ports): the first SM_ANOMALIES_KEPT said, all counted. */
#define SM_ANOMALIES_KEPT 8
struct sm_anomalies {
	uint64_t total;
	unsigned n;
	char what[SM_ANOMALIES_KEPT][200];
};
const struct sm_anomalies *sm_anomalies(const struct sm *sm);

/* The tables the SM gives the switches, walked from every endpoint to every LID as
 * routing/check.h does, on the SLs the SM gives the paths: 0 with *out, 1 when switches x
 * LIDs exceed budget (not walked: the loop would wait), 2 while a sweep is under way, -1
 * with no routes yet or out of memory. */
int sm_check_tables(struct sm *sm, uint64_t budget, struct routing_check *out);

/* ---- services for the SA ---- */

/* Multicast: the ports multicast LID mlid must reach (n = 0: none); the MFTs follow within
 * the same turn of the event loop, batched with other changes, or at the end of a sweep
 * under way. 0, or -1 (MLID out of range, out of memory). */
int sm_mcast_set(struct sm *sm, uint16_t mlid, const uint32_t *ports, uint32_t n);
/* MLIDs every switch can hold (the smallest MulticastFDBCap). */
uint32_t sm_mcast_cap(const struct sm *sm);

/* Alias GUIDs changed in the model (topo aliases) in a port's GUIDInfo block: the SM
 * writes the block now, and again after changes to the fabric (a reset port forgot it). */
void sm_aliases_changed(struct sm *sm, uint32_t port, unsigned block);

/* The SL for traffic slid -> dlid, as the engine that routed the subnet wants it (its
 * path_sl hook; 0 without one): what PathRecords carry. */
uint8_t sm_path_sl(const struct sm *sm, uint16_t slid, uint16_t dlid);
/* The SL of a path of QoS class cls (the SL its QoS level or partition asks for) from slid
 * to dlid. With an engine that keeps paths apart by SL layers (dfsssp), the class is
 * stacked on the layer: SL = cls x layers + layer, each on its own VL, as long as the
 * switch links run that many VLs (else the path keeps its layer's SL, and an error says
 * so). Otherwise the engine's SL when it gives one, else cls. */
uint8_t sm_path_sl_class(struct sm *sm, uint16_t slid, uint16_t dlid, uint8_t cls);
/* ibsmd-path-sl.dump: the engine's SL of every path, for fabricsim verify --path-sl and
 * for people: "max_lid 0x..", distinct rows of one hex digit per destination LID ("row N
 * 0120-.."; '-': no such LID), then "lid 0x.. row N" per source LID. 0, or -1 when out of
 * memory. */
int sm_dump_path_sl(const struct sm *sm, FILE *out);

/* "GUID 0x... (desc)" for logs */
const char *sm_node_name(const struct sm *sm, uint32_t node, char *buf, size_t len);

#endif
