/* The SM's internals, shared by its phases (sm/ only; others use sm/sm.h).
 *
 * A sweep runs phases one after another on the event loop: discovery (full, or of the
 * switches that reported changes), LID assignment, routing, then programming (switch tables,
 * port configuration with ARMED, then ACTIVE). Each phase sends its MADs all at once and
 * lets the dispatcher's windows pace them; it ends when the last answer is in. */
#ifndef IBSMD_SM_SM_INT_H
#define IBSMD_SM_SM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

#include "config/config.h"
#include "mad/dispatcher.h"
#include "mad/link_speed.h"
#include "mad/mad_header.h"
#include "fabric/fabric.h"
#include "routing/engine.h"
#include "sm/saved.h"
#include "sm/sm.h"
#include "util/u64map.h"
#include "util/vec.h"

struct sm_req;
#include "util/vec.h"

struct routing_engine;

/* What one multicast LID must reach: the ports of its group's members. */
struct sm_mlid {
	uint32_t *ports;
	uint32_t n, cap;
};

struct sm_mcast {
	struct sm_mlid *mlid; /* indexed by MLID - 0xc000 */
	bool *dirty;          /* ... whose tree needs recomputing */
	uint32_t nmlid;
	bool any_dirty;
	struct routing_hops hops; /* hops between switches, over the routed graph */
	bool dist_valid;
	ev_timer timer; /* batches the changes of one loop turn */
	/* blocks whose Sets failed (not known to the switch) go again: the timer ticks each
	 * second while there are any, and a switch whose last n Sets failed gets them
	 * 2^(n-1) ticks after the last failure (up to 64 s) */
	ev_timer retry;
	uint64_t blocks_sent;
};

/* Another SM on the subnet, as its SMInfo answers say. */
struct sm_remote {
	uint64_t guid;            /* its port GUID */
	uint32_t port;            /* where it sits in the model (TOPO_NONE: not seen this sweep) */
	uint16_t lid;             /* the LID it last spoke from (for an SM not in the model) */
	uint8_t discovering;      /* answers in a row that said DISCOVERING */
	double discovering_since; /* ... since the first of them */
	struct mad_sm_info si;    /* its last answer (SM_Key as it answered it) */
	bool answered;            /* it answered since it was found */
	bool rogue;               /* it answered with an SM_Key that is not ours */
	/* it answered with ours: it knows the SM_Key (an SM that hides the key from a standby,
	 * as OpenSM does, stays proved once it showed it to this SM as master) */
	bool proved;
	bool polling;            /* a Get is on its way */
	double asked;            /* ... since then (a lost callback must not silence it) */
	unsigned misses;         /* polls in a row it did not answer */
	uint32_t answered_sweep; /* the topo sweep in which it last answered */
};

/* Election, polling and handover (sm/election.c). */
struct sm_election {
	VEC(struct sm_remote) sms;
	struct u64map by_guid; /* port GUID -> index into sms */
	uint64_t master;       /* the SM this one stands by for (polls), 0: none */
	uint64_t handover_to;  /* a HANDOVER is on its way to this SM */
	/* the last SM a HANDOVER went to: its ACKNOWLEDGE counts even after the HANDOVER's
	 * answer was lost (it did take over: two masters until the next sweep otherwise) */
	uint64_t handover_last;
	unsigned waited;   /* decisions put off for a known SM that has not answered yet */
	bool rereg;        /* the next master sweep sets ClientReregister on every CA port */
	bool trust_fabric; /* ... and keeps the LIDs the ports hold before its own file's */
	bool deciding;     /* the sweep waits for SMInfo answers before it goes on */
	bool poll_owed;    /* a poll tick came while the last poll was out: poll when it ends */
	/* a standby of higher priority than its master reminds it (trap 144) every remind_every
	 * polls, remind_sent times at most */
	unsigned remind_polls, remind_every, remind_sent;
	ev_timer poll_timer;
	struct log_rl rl_rogue, rl_set, rl_blind, rl_unproved, rl_nofollow;
	uint64_t handovers_sent, takeovers;
	unsigned held; /* discoveries in a row that saw too little of the subnet to take it */
};

/* The M_Keys ports carry (sm/mkeys.c): GUID -> key, nonzero keys only. */
struct sm_mkey {
	uint64_t guid, key;
};
struct sm_hop {
	uint64_t node_guid, far_guid;
	uint8_t port;
};
struct sm_mkeys {
	struct sm_mkey *v;
	uint32_t n, cap;
	struct u64map idx; /* GUID -> index into v */
	bool dirty;        /* not saved yet */
	uint64_t changes;  /* moves with every change, for the standby sync */
	/* a standby's copy of where its master's ports lead (node GUID and port -> the GUID
	 * naming the far end's key), and the master's count of link changes */
	VEC(struct sm_hop) hops;
	struct u64map hop_idx;
	uint64_t hop_changes;
};

/* --once gives up after this many sweeps in a row that left no less undone */
#define SM_ONCE_STALE_MAX 3

/* Link health (sm/health.c): per port index, the link it is the lower index of. */
struct sm_link_health {
	double start;      /* the window's start */
	double until;      /* 0, or when the held link is enabled again */
	unsigned count;    /* transitions since start */
	uint32_t near;     /* the port disabled (the SM's side) */
	double trap_start; /* the window of traps about either port */
	unsigned traps;
	double down_at, prev_down_at; /* when it last went down, and the time before (0: never) */
	double settle_until;          /* held out of routing: released once ACTIVE and past this */
	uint32_t other;               /* held out of routing: the port at its other end */
	bool settling;                /* ... it is */
};

struct sm_health {
	struct sm_link_health *links;
	uint32_t cap;
	uint32_t *held; /* keys of the links held */
	uint32_t nheld, held_cap;
	ev_timer timer;
	/* keys of the links held out of routing until ACTIVE and settled (link_settle_time) */
	uint32_t *settling;
	uint32_t nsettling, settling_cap;
	ev_timer settle_timer;
};

/* Virtual ports being read (sm/vports.c): the ports to read this sweep, in order, and the
 * ones in process (at most virt_max_ports_in_process), each with its SMPs out and its
 * VPortIndexTop; the ones whose reads all came back. */
struct sm_vport_slot {
	uint32_t port;
	unsigned out;
	uint16_t top;
};
struct sm_vports {
	VEC(uint32_t) queue;
	uint32_t head;
	VEC(struct sm_vport_slot) active;
	VEC(uint32_t) done;
	struct log_rl rl;
	uint64_t reads, sets;
	uint64_t changes_at; /* topo.vport_changes when the read began */
};

struct sm {
	struct ibsmd_config *cfg;
	const struct log *log;
	struct ev_loop *loop;
	struct mad_transport *t;
	struct mad_dispatcher *d;
	struct mad_local_port local;
	struct topo topo;

	uint8_t state; /* SM_STATE_*, as SMInfo reports it */
	uint32_t act_count;

	/* sweep control */
	bool busy;         /* a sweep is under way */
	const char *stage; /* ... and what it does now: "discovery", "routing" (status) */
	bool again;        /* changes arrived meanwhile: sweep again when done */
	bool full;         /* the next sweep rediscovers everything */
	bool *dirty;       /* per node: switches to re-examine */
	uint32_t dirty_cap;
	ev_timer light_timer;
	/* the SM's own port, looked at every second: its leaving ACTIVE (its switch reset, and
	 * no trap can reach us) starts a sweep (local_watch_cb) */
	ev_timer local_watch;
	bool local_active;
	ev_timer election_wait; /* the election asks a late SM again (election_wait_known) */
	bool issm_wait;         /* another SM holds the port's issm device: nothing swept */
	ev_timer issm_timer;    /* ... asked for again */
	bool local_sysfs_stale; /* sysfs showed the port short of ACTIVE while it was ACTIVE */
	unsigned local_kicks, local_wait; /* sweeps it asked for in a row; ticks to wait */
	ev_timer kick_timer;
	ev_timer pkeys_timer; /* an alias came or went that the partition policy names */

	/* the phase under way */
	unsigned pending;
	unsigned detached;        /* > 0: sends now are not part of the phase under way */
	int send_retries;         /* >= 0: retries for the sends now (default: the dispatcher's) */
	unsigned send_timeout_ms; /* > 0: their timeout */
	unsigned phase_failures;
	void (*phase_next)(struct sm *sm);
	double phase_start, sweep_start;
	struct sm_phase_times times;
	struct sm_counts counts;
	bool structural; /* the last discovery found changes (links, nodes) */
	/* ... and some of them are what routing reads: a switch, a link between switches, a
	 * port come up (hosts that only went change no route) */
	bool route_inputs;
	uint32_t lids_new; /* LIDs lids_assign gave afresh or moved this sweep (vports too) */
	bool grew;         /* ... and some of them add capacity: rebalance instead of sticking */
	bool heavy;        /* the sweep under way (or the last) rediscovers the whole fabric */
	bool reroute;      /* the next routing starts afresh (ibsa reroute, a reload) */
	uint64_t routing_inputs; /* config_routing_inputs() as last routed: a reload compares */
	bool keep_routes; /* the full sweep a reload asks for keeps the held routes (no routing
	                   * input changed): it balances only over capacity it finds new */
	/* the link settings (link_*_enabled) checked on every port, at the defaults too: the
	 * configuration changed them */
	bool link_recheck;
	bool rejoin;     /* links held out of routing were let in: balance over them */
	bool retry;      /* a partial sweep could not read some switch: its route may be stale */
	unsigned rounds; /* discovery rounds in this sweep */
	unsigned incomplete; /* sweeps in a row that left ports short of ACTIVE or blocks unset */

	bool up;      /* the subnet has come up */
	bool once;    /* --once: stop after the first sweep */
	bool dry_run; /* --dry-run: Gets only, no IsSM; the report in dry (sm/dryrun.c) */
	struct sm_dry_report dry;
	/* what the wire can make the SM log, rate limited: traps, garbage answers, nodes
	 * that do not answer, Sets refused */
	struct log_rl rl_trap, rl_garbage, rl_no_answer, rl_refused;
	struct log_rl rl_events; /* structured events the wire can trigger (links flapping) */
	struct log_rl rl_qos;    /* a QoS table that does not fit the VLs a port runs */
	struct log_rl rl_layers; /* a QoS class that does not fit on top of the engine's layers */
	bool started;
	bool stopped; /* sm_stop ran: once only (sm_free calls it too) */
	/* SMPs beyond mad_queue_max handed to the dispatcher: they wait here, in order, and
	 * go as answers come back (backlog_head: the next to go) */
	VEC(struct sm_req *) backlog;
	VEC(struct sm_req *) req_pool; /* requests to be used again (sm/smp.c req_alloc) */
	uint32_t backlog_head;
	ev_timer backlog_retry;   /* the MAD layer had no room and no answer of ours is due */
	struct log_rl rl_backlog; /* ... logged rate-limited */
	/* the SMP service's hook "room in the MAD window": the sweep fills it with more of its
	 * LFT blocks (program_lft_more); the service never calls a phase by name */
	void (*smp_room)(struct sm *sm);
	/* LFT blocks still to send, made as room comes (program_lft_more): block b + k of
	 * switch s next (a round is blocks b to b + mad_window_per_node - 1 of every switch),
	 * up to blocks per switch; one pending unit while active */
	struct {
		uint32_t b, s, k, blocks;
		bool active;
		/* make-before-break when routes move onto links let in (health_settle_check):
		 * the switches in waves by their distance from those links, each wave's blocks
		 * acknowledged before the next goes; waves 1 otherwise */
		uint8_t wave, waves;
		uint32_t inflight; /* LFT Sets sent and not yet answered */
	} lft_out;
	uint8_t *lft_wave; /* per switch index: its wave */
	/* the ports' PortInfo and VL tables as room comes (program_ports_more), beside the LFT
	 * blocks: port num of node next, in the round of ports base to base +
	 * mad_window_per_node - 1 of every node; one pending unit while active */
	struct {
		uint32_t node;
		unsigned num, base, max_num;
		bool active;
	} port_out;
	/* ACTIVE for the ARMED ports as room comes (program_activate_more): port p next */
	struct {
		uint32_t p;
		bool active;
	} act_out;
	/* LFT blocks to read (program_read_tables) as room comes (program_read_more): the
	 * switches' indexes in sws, block b + k of sws[i] next, in rounds of
	 * mad_window_per_node blocks per switch as the Sets go; one pending unit while active */
	struct {
		VEC(uint32_t) sws;
		uint32_t i, b, k, blocks;
		bool active;
	} read_out;
	/* the switches at the ends of the links let in since the last programming */
	VEC(uint32_t) rejoin_nodes;
	unsigned outstanding; /* SMPs handed to the dispatcher and not yet ended */
	int exit_code;
	char exit_reason[256];
	/* --once: what the best sweep left undone (ports not ACTIVE + LFT blocks missing), and
	 * the sweeps since it got better: lost MADs are swept again while that helps */
	/* this sweep: NodeInfo probes behind up ports, and PortInfo reads, that got no
	 * answer (their nodes are dirty: the next sweep asks again) */
	uint32_t probes_lost;
	/* ports whose NodeInfo probe got no answer in the sweep's first round: probed again,
	 * by a new route, before whatever is behind them is taken for lost */
	VEC(uint32_t) reprobe;
	/* switches a light sweep found silent: their neighbours were read again, as their
	 * traps would have had it; one still there and silent after that is hung (full sweep).
	 * silent_mark per node: not answered since (its SwitchInfo answer clears it). */
	VEC(uint32_t) silent;
	bool *silent_mark;
	uint32_t silent_cap;
	uint32_t once_best;
	unsigned once_stale;  /* gives up at SM_ONCE_STALE_MAX */
	bool aliases_written; /* every alias GUID block written once */
	/* GUIDInfo blocks with a Set out, keyed (port + 1) << 16 | block: GUIDS_OUT, or
	 * GUIDS_AGAIN when they changed since (a retry of the older Set could land after a
	 * newer one, so a block's Sets never overlap) */
	struct u64map guid_sets;
	/* partition members added at run time (sm/tenants.c), in the order added, and the
	 * partitions the API defined (UFM's /pkeys/add: name, flags and QoS, members or none) */
	struct {
		VEC(struct sm_saved_partition) parts;
		struct u64map part_index; /* P_Key -> parts' index */
		VEC(struct sm_saved_pmember) items;
		struct u64map index; /* (P_Key, GUID) -> items' index (sm/tenants.c) */
		uint32_t collisions; /* items whose index key another item holds */
		uint64_t changes;
	} tn;
	struct u64map guid2lid; /* LIDs kept across restarts */
	bool guid2lid_dirty;
	uint64_t guid2lid_changes;
	struct sm_mkeys mk;
	const struct routing_engine *engine; /* the engine that routed last */
	void *engine_state;                  /* ... its state, kept for its hooks */
	struct routing_ctx rctx;             /* ... and the switch graph it routed over */
	struct sm_anomalies anomalies;       /* the last heavy sweep's duplicate GUIDs */
	struct route_job *route_job;         /* routing under way on its thread (route.c) */
	int route_rc;                        /* the last routing: 0, or -1 no engine routed */
	unsigned path_layers, class_vls;     /* its layers, and the VLs they take */
	unsigned layer_vls;                  /* the VLs the switch links ran */
	bool vl_all_sent; /* sm/vl.c: a switch's SL-to-VL Set for every pair just went */
	uint64_t sweeps;
	uint64_t light_sweeps; /* ended, whatever they found */
	uint64_t traps;        /* received */
	/* the layers above (the SA, the standby sync), in the order main added them */
	struct sm_listener listeners[SM_MAX_LISTENERS];
	unsigned nlisteners;
	struct sm_mcast mc;
	struct sm_election el;
	struct sm_health health;
	struct sm_vports vp;
};

/* ---- for the phases ---- */

typedef void (*sm_smp_fn)(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                          void *ctx);

/* Send a directed-route SMP to node (or along path/hops when node is TOPO_NONE); cb gets the
 * decoded answer (smp NULL when there was none) and a copy of ctx (ctxlen bytes, kept with
 * the request). The phase's pending count covers it. */
int sm_send_dr(struct sm *sm, uint32_t node, const uint8_t *path, unsigned hops, uint8_t method,
               uint16_t attr, uint32_t mod, const void *data, size_t datalen, sm_smp_fn cb,
               const void *ctx, size_t ctxlen);
/* The same, to one port of a node: a CA port by a route that enters the CA through that port
 * (an SMA takes a Set of PortInfo or P_Keys only on the port it came in by), a switch port by
 * the switch's route. */
int sm_send_dr_port(struct sm *sm, uint32_t port, uint8_t method, uint16_t attr, uint32_t mod,
                    const void *data, size_t datalen, sm_smp_fn cb, const void *ctx, size_t ctxlen);
/* The AttributeModifier of a PortInfo Get or Set of a port: its number, with
 * SMSupportExtendedSpeeds where the port can take it (every Get until its SMA refuses it; a Set
 * where the port reports extended speeds), so that NDR and XDR ports show their speeds. */
uint32_t sm_port_info_mod(const struct sm *sm, uint32_t port, bool set);
/* The same along a path, to a node not known yet: key_guid names the port most likely
 * there (its M_Key is presented), or is 0. */
int sm_send_dr_probe(struct sm *sm, uint64_t key_guid, const uint8_t *path, unsigned hops,
                     uint8_t method, uint16_t attr, uint32_t mod, sm_smp_fn cb, const void *ctx,
                     size_t ctxlen);
/* A LID-routed SMP, to a port known by its LID only (an SM this one cannot see past its own
 * port, but that spoke to it); key_guid names its M_Key. */
int sm_send_lid(struct sm *sm, uint16_t lid, uint64_t key_guid, uint8_t method, uint16_t attr,
                uint32_t mod, const void *data, size_t datalen, sm_smp_fn cb, const void *ctx,
                size_t ctxlen);
/* At stop: the SMPs still in the SM's own queue are dropped (the phase stops counting them). */
void sm_smp_drop_backlog(struct sm *sm);
/* At the end, after the dispatcher (whose cancelled requests come back to the pool). */
void sm_smp_free(struct sm *sm);
/* The SMP service's timer, at creation. */
void sm_smp_init(struct sm *sm);
/* Room for a dirty flag per node of the model; < 0 out of memory. */
int sm_dirty_grow(struct sm *sm);
/* Start a phase: next runs when the phase's last MAD is answered (at once if none). */
void sm_phase_begin(struct sm *sm, void (*next)(struct sm *sm));
void sm_phase_check(struct sm *sm);

/* phases (each in its own file) */
/* sm/mkeys.c: trap 256 from a port (node: its node, TOPO_NONE if unknown). */
void mkey_violation_trap(struct sm *sm, uint32_t node, const struct mad_notice *no);
/* sm/health.c: a link went up or down between port near (the SM's side) and far. */
void health_init(struct sm *sm);
void health_free(struct sm *sm);
/* up: it came up, else it went down. A link between switches that comes up while the
 * subnet is up is held out of routing (true) until its ports are ACTIVE and it has settled. */
bool health_link_event(struct sm *sm, uint32_t near, uint32_t far, bool up);
/* After a sweep that brought the subnet up: the held links that are ACTIVE and settled are
 * let into routing, and a sweep moves routes onto them. */
void health_settle_check(struct sm *sm);
/* Before routing: once the subnet is up, a link between switches that is not ACTIVE at both
 * ends is held out of routing too; a held link whose absence would cut a switch off the
 * SM's is let in (routes already laid stay where they are, the switch's own destinations
 * use it). */
void health_hold_check(struct sm *sm);
/* Routes over every link again (out of memory). */
void health_settle_forget(struct sm *sm);
/* a trap came from LID from_lid: one a port sends about itself counts against its link */
void health_trap(struct sm *sm, uint16_t from_lid, const struct mad_notice *no);
/* program.c: PortInfo Set of PortPhysicalState only (Disabled, Polling). */
void program_port_phys(struct sm *sm, uint32_t port, uint8_t phys);
/* The next incremental sweep reads this node's ports again. */
void sm_dirty(struct sm *sm, uint32_t node);
void discover_full(struct sm *sm);
/* Between two rounds of a sweep: routes around what failed, nothing declared lost yet. */
void discover_reroute(struct sm *sm);
void discover_switches(struct sm *sm);
void discover_finish(struct sm *sm); /* after either: paths, presence, counts */
/* A switch's SwitchInfo as read: kept, and when its LinearFDBTop is not what it last held
 * (it was reset) its tables are forgotten and true returned. */
bool discover_switch_info(struct sm *sm, uint32_t node, const struct mad_switch_info *si);
/* Read a node's NodeDescription again (trap 144 said it changed), outside any sweep. */
void discover_node_desc(struct sm *sm, uint32_t node);
int lids_assign(struct sm *sm);
int lids_load(struct sm *sm);
int lids_save(struct sm *sm);
/* Route the subnet with the configured chain on a thread of its own (route.c); then(sm)
 * runs on the loop when it is done, with route_rc 0 or -1 (no engine routed). -1: could
 * not start. */
int route_start(struct sm *sm, void (*then)(struct sm *sm));
/* Wait for the routing under way, if any, and take its result; the sweep goes on (then)
 * only when proceed. */
void route_wait(struct sm *sm, bool proceed);
/* M_Keys (mkeys.c): the key a port should carry (per port from the secret, or the static
 * one); the GUID that names the key protecting a port (switch: port 0's); the key it carries
 * if known; the key to present (known, else wanted); a key seen or set on a port. */
uint64_t mkey_wanted(const struct sm *sm, uint64_t guid);
uint64_t mkey_guid(const struct topo *t, uint32_t port);
bool mkey_known(const struct sm *sm, uint64_t guid, uint64_t *key);
uint64_t mkey_in_use(const struct sm *sm, uint64_t guid);
void mkey_learned(struct sm *sm, uint64_t guid, uint64_t key);
/* The GUID naming the key behind a node's port, from the master's hop items (0: none). */
uint64_t mkey_hop_hint(const struct sm *sm, uint64_t node_guid, uint8_t port);
/* A master's hops are its own topology's, after each sweep that changed it. */
void mkey_hops_from_topo(struct sm *sm);
int mkeys_load(struct sm *sm);
int mkeys_save(struct sm *sm);
/* Tear down the last engine's state and graph (sm_free, and before routing again). */
void route_release(struct sm *sm);
void program_read_tables(struct sm *sm);
void program_read_more(struct sm *sm);
void program_tables(struct sm *sm);
/* Send LFT blocks of the sweep's programming while the MAD layer has room and nothing
 * waits in the SM's queue (called as answers come back). */
void program_lft_more(struct sm *sm);
/* The SM's queue is empty and the MAD layer takes more (sm.c). */
bool sm_has_room(const struct sm *sm);
/* LFT blocks whose programmed contents (as the switches acknowledged them) are not what
 * routing wants, and on how many switches: Sets that failed or never went. */
uint32_t program_lft_missing(const struct sm *sm, uint32_t *switches);
void program_keys(struct sm *sm);         /* PortInfo of the ports whose M_Key changes */
void program_tables_pkeys(struct sm *sm); /* P_Key tables, before the PortInfo that enforces */
void program_ports_more(struct sm *sm);   /* the port stream: PortInfo, VL tables, GUIDs */
void program_room(struct sm *sm);         /* the smp_room hook: port stream, LFT blocks */
void program_activate(struct sm *sm);
void program_activate_more(struct sm *sm);
/* Virtual ports (sm/vports.c): read those of the ports that need it (a phase); then the
 * ports whose reads all came back lose the vports they no longer show; after activation
 * their LIDs, states and P_Key tables (a phase); a trap 1146 from a port. */
void vports_discover(struct sm *sm);
void vports_discover_end(struct sm *sm);
void vports_program(struct sm *sm);
void vports_trap(struct sm *sm, uint32_t port);
/* The vports' P_Key tables where the policy changed them (a run-time partition change). */
void vports_program_pkeys(struct sm *sm);

/* Election (sm/election.c): who is master among the SMs of the subnet. */
void election_init(struct sm *sm);
void election_stop(struct sm *sm);
void election_free(struct sm *sm);
/* After a discovery: ask every SM the sweep found (IsSM) for its SMInfo. While this SM is
 * not MASTER yet the sweep waits for the answers (they are part of the phase); a master
 * goes on and acts on them when they come. */
void election_query(struct sm *sm);
/* Once those answers are in, a DISCOVERING SM decides: true, it is MASTER now and the sweep
 * goes on; false, it stands by (the sweep ends there). */
bool election_decide(struct sm *sm);
/* Before an SM that is not master yet takes the subnet: does its discovery see nothing past
 * its own port, whose link is up? Then true, with a new discovery scheduled, rather than a
 * master of itself alone. */
bool election_hold(struct sm *sm);
/* true: a known SM that outranks this one has not answered this sweep's question yet; ask
 * again (election_query) after a poll interval before deciding */
bool election_wait_known(struct sm *sm);
/* A master's sweep ended, or its light sweep: ask the SMs it knows how they are. */
void election_poll_known(struct sm *sm);
/* Trap 144 from a port: did an SM appear or leave there? */
void election_cap_changed(struct sm *sm, uint32_t port);
void election_handle_sm_info(struct sm *sm, const struct mad_addr *from, const uint8_t *mad,
                             size_t len);
/* Stand by / take over (used by the state machine and the SMInfo Sets). */
void sm_become_standby(struct sm *sm, uint64_t master_guid);
void sm_take_over(struct sm *sm, const char *why);
void sm_set_state(struct sm *sm, uint8_t state);

/* Alias GUIDs into the GUIDInfo tables (sm/guids.c), in the arm phase; blocks whose Set
 * failed again after a light sweep too. */
void guids_program(struct sm *sm);
void guids_sweep_done(struct sm *sm);

/* SL-to-VL and VL arbitration tables (sm/vl.c): one port's, those that differ from what it
 * holds, as the port stream (sm/program.c) reaches it, before the ports go ACTIVE. Port 0
 * of a switch stands for its SL-to-VL tables and its enhanced port 0's arbitration. */
void vl_program_port(struct sm *sm, uint32_t node, unsigned num);
/* The QoS policy's VL table for the port's class (CA, switch external, switch port 0,
 * router), NULL without one. */
const struct config_vl_table *vl_class_table(const struct sm *sm, uint32_t p);
void mcast_init(struct sm *sm);
void mcast_stop(struct sm *sm);
void mcast_free(struct sm *sm);
void mcast_topology_changed(struct sm *sm); /* every tree is recomputed next time */
void mcast_program(struct sm *sm);          /* send the MFT blocks that changed */
void mcast_sweep_done(struct sm *sm);       /* what came during a sweep, outside its phases */
void mcast_became_master(struct sm *sm);    /* every block unknown, every tree again */

/* Partitions changed at run time (sm/tenants.c): read partitions-api and merge it into the
 * running configuration (at start); merge again after the file's partitions were replaced
 * (a reload); free. 0, or -1 (errno: the file; or out of memory, logged). */
int tenants_load(struct sm *sm);
int tenants_merge(struct sm *sm);
void tenants_free(struct sm *sm);
/* The partition policy changed outside a sweep: every port's P_Keys from it again, and, as
 * master, the tables that now differ sent at once (sm/program.c). */
void program_pkeys_now(struct sm *sm);
/* Port settings changed by a reload (buffers, link settings): the ports that do not hold
 * them get a PortInfo Set now, outside the sweeps. */
void program_ports_now(struct sm *sm);
/* pkeys_timer's callback (sm/guids.c starts it): program_pkeys_now, after aliases that the
 * partition policy names came or went */
void program_pkeys_cb(struct ev_loop *loop, ev_timer *w, int revents);

/* A duplicate GUID the sweep found, for the health report (sm_anomalies). */
void sm_anomaly(struct sm *sm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A structured event (log_event), rate limited: a flapping link must not flood the journal.
 * fields: "key", value pairs given as a NULL-terminated list of strings. */
void sm_event(struct sm *sm, enum log_level level, const char *event, const char *const *kv,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The same for an audit record of a change an authenticated client made: never held back. */
void sm_audit(struct sm *sm, enum log_level level, const char *event, const char *const *kv,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The dry run's report from the sweep just routed (sm/dryrun.c). */
void dryrun_finish(struct sm *sm);
void dryrun_free(struct sm *sm);

#endif
