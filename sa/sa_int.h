/* Internals shared by the SA's files. */
#ifndef IBSMD_SA_SA_INT_H
#define IBSMD_SA_SA_INT_H

#include <stdio.h>

#include <ev.h>

#include "mad/link_speed.h"
#include "mad/mad_header.h"
#include "mad/sa_records.h"
#include "sa/sa.h"
#include "sm/sm.h"
#include "util/idxmap.h"
#include "util/u64map.h"
#include "util/vec.h"

#define SA_MAX_SERVICES 65536 /* registrations beyond this get NO_RESOURCES */

#define SA_MAX_SUBSCRIPTIONS  65536
#define SA_MAX_TRANSFERS      256          /* RMPP answers under way before tables get BUSY */
#define SA_MAX_TRANSFER_BYTES (256u << 20) /* ... or bytes of them */
#define SA_MAX_JOBS           4            /* tables built a slice at a time, at once */
/* ... of which one port (an untrusted requester) may have: one table built a slice at a time,
 * and 16 answers by RMPP under way (a host's tools ask a few at once; one port must not take
 * the room of all and leave other hosts BUSY); its answers sent whole stop counting when it
 * asks again, as a client without RMPP ACKs never ends them */
#define SA_JOBS_PER_PORT      1
#define SA_TRANSFERS_PER_PORT 16
#define SA_DEFERRED           0xfffeu /* a handler's status: a job answers later */

struct sa_service;
struct sa_sub;
struct sa_group;
struct sa_alias;
struct sa_path_cache;
void sa_path_cache_free(struct sa *sa);

#define SA_NATTRS          14 /* the record attributes sa.c answers */
#define SA_STATE_MAX_KINDS 8  /* kinds of line in the state file (sa/state.c) */
struct sa_state_kind;

struct sa_path_job;

struct sa {
	struct sm *sm;
	struct sa_path_job *jobs; /* PathRecord tables being built (sa/path.c) */
	unsigned njobs;
	/* what the SA reads of the SM, through its public face */
	struct topo *t;
	struct mad_dispatcher *d;
	const struct log *log;
	const struct ibsmd_config *cfg;
	struct ev_loop *loop;
	struct sa_components comps[SA_NATTRS]; /* each attribute's, in sa.c's order */
	struct sa_stats st;
	/* what the wire can make the SA log, rate limited */
	struct log_rl rl_malformed, rl_bad_key, rl_refused;
	struct log_rl rl_client; /* what clients change (joins, registrations, subscriptions) */
	struct sa_service *svcs;
	uint32_t nsvcs, svcs_cap;
	struct u64map svcs_of_port; /* registering port's GUID -> services it registered */
	struct mad_service_record builtin_svc; /* the SM's own service; id 0: none */
	struct sa_sub *subs;                   /* InformInfo subscriptions */
	uint32_t nsubs, subs_cap;
	struct u64map sub_by_enum;  /* (port, SubscriberEnum) -> index in subs */
	struct u64map sub_by_what;  /* a hash of (port, what it asks for) -> index in subs */
	struct u64map subs_of_port; /* port + 1 -> how many subscriptions it holds */
	bool *served;               /* per port: in service at the last sweep (for traps 64/65) */
	uint32_t served_cap;
	bool served_once;
	struct sa_group *groups; /* multicast groups, each with its own MLID */
	uint32_t ngroups, groups_cap;
	struct idxmap group_by_mgid;  /* MGID -> groups index */
	uint32_t *group_of_mlid;      /* MLID - SM_MLID_BASE -> groups index + 1 (0: free) */
	uint32_t mlid_hint;           /* no free MLID below SM_MLID_BASE + this */
	uint32_t mgid_seq;            /* for MGIDs the SA makes up */
	struct u64map groups_of_port; /* creating port's GUID -> groups it created that exist */
	struct sa_path_cache *pcache; /* sa/path.c */
	/* the first router port (lowest GUID) as of model generation first_router_gen + 1 (0:
	 * not looked for yet): where a prefix route with a wildcard router leads */
	uint32_t first_router;
	uint64_t first_router_gen;
	/* per 15-bit P_Key, from the policy: its partition's SL + 1 (0 none) and caps on its
	 * paths' MTU and rate (IBA codes, 0 none) */
	struct sa_pkey_qos {
		uint8_t sl1, mtu_limit, rate_limit;
	} * pkey_qos;
	uint64_t *qos_groups; /* per port: the QoS port groups it is in (sa/qos.c) */
	uint32_t qos_groups_cap;
	/* alias GUIDs (sa/guidinfo.c; the aliases themselves are in the model) */
	uint64_t alias_seq;
	uint64_t alias_changes_saved; /* topo.alias_changes when the state file was written */
	/* the state file (sa/state.c) */
	const struct sa_state_kind *kinds[SA_STATE_MAX_KINDS]; /* its kinds of line */
	unsigned nkinds;
	char **pending; /* its lines, until the first sweep lets them be applied */
	uint32_t npending, pending_cap;
	bool state_ready, state_dirty;
	uint64_t state_changes; /* moves with every change (the standby sync follows it) */
	ev_timer save_timer;
	/* answers to requests that changed the state, held until it is on disk (a group
	 * commit): an acknowledged registration survives a kill -9 */
	struct sa_held_answer *held;
	uint32_t nheld, held_cap;
	bool holding;       /* send_answer queues instead of sending */
	double last_save_s; /* how long the last save took: the commit window follows it */
};

/* One request, from decoding to the answer: every handler gets it, and nothing about the
 * request under way lives in struct sa. */
struct sa_attr; /* sa/sa.c's table: what an attribute takes and how it is answered */
struct sa_req {
	struct sa *sa;
	const struct sa_attr *attr;
	struct mad_addr from;
	struct mad_sa_hdr h; /* method, attribute, component mask (h.comp_mask) */
	const uint8_t *data; /* the request's record (MultiPathRecord: and its GIDs) */
	size_t len;          /* ... its bytes */
	uint32_t requester;  /* the requester's port; TOPO_NONE: the SA cannot place it */
	/* whose keys decide what it sees: the requester's port, or the vport's slot (nports +
	 * its index) when it asks from a vport's own LID (a VF sees as its own P_Keys let it,
	 * not as its physical function's) */
	uint32_t requester_slot;
	bool trusted;          /* it carries our SM_Key */
	uint16_t only_lid;     /* builders may skip records of other LIDs (0: none) */
	uint64_t changes;      /* sa->state_changes when it came: did it change the state? */
	const char *why;       /* why it was refused, for the log */
	struct sa_records out; /* the answer being built */
	/* answers it, once a handler that deferred (SA_DEFERRED) is done: sa.c sets it, so a
	 * handler never calls back up into sa.c */
	void (*finish)(struct sa_req *rq, uint16_t status);
};

typedef void (*sa_build_fn)(const struct sa_req *rq, struct sa_records *out);
/* Records that pick themselves by the request's components (sa/vl_records.c). */
typedef void (*sa_select_fn)(const struct sa_req *rq, const uint8_t *req, uint64_t mask,
                             struct sa_records *out);
void sa_select_sl2vl_records(const struct sa_req *rq, const uint8_t *req, uint64_t mask,
                             struct sa_records *out);
void sa_select_vlarb_records(const struct sa_req *rq, const uint8_t *req, uint64_t mask,
                             struct sa_records *out);

void sa_build_node_records(const struct sa_req *rq, struct sa_records *out);
/* Block b (32 keys) of a port's nk P_Keys, the rest of the block empty. */
void sa_pkey_block(const uint16_t *keys, unsigned nk, unsigned b, struct mad_pkey_table *tbl);
/* the virtual ports' records (sa/vport_records.c), at the end of each family's */
void sa_build_vport_node_records(const struct sa_req *rq, struct sa_records *out);
void sa_build_vport_port_info_records(const struct sa_req *rq, struct sa_records *out);
void sa_build_vport_guid_info_records(const struct sa_req *rq, struct sa_records *out);
void sa_build_vport_pkey_records(const struct sa_req *rq, struct sa_records *out);
void sa_build_port_info_records(const struct sa_req *rq, struct sa_records *out);
void sa_build_link_records(const struct sa_req *rq, struct sa_records *out);
void sa_build_switch_info_records(const struct sa_req *rq, struct sa_records *out);
void sa_build_lft_records(const struct sa_req *rq, struct sa_records *out);
void sa_build_mft_records(const struct sa_req *rq, struct sa_records *out);
void sa_build_pkey_records(const struct sa_req *rq, struct sa_records *out);
void sa_build_guid_info_records(const struct sa_req *rq, struct sa_records *out);
void sa_build_sm_info_records(const struct sa_req *rq, struct sa_records *out);

void sa_build_service_records(const struct sa_req *rq, struct sa_records *out);
void sa_service_components(struct sa_components *c);
/* Blank the ServiceKeys of selected records before they go out. */
void sa_service_hide_keys(struct sa_records *r);
/* Register (or renew) and remove services; the answer record goes to answer. Return 0 or an
 * SA status. */
uint16_t sa_service_set(struct sa_req *rq, const uint8_t *req, uint64_t mask, uint8_t *answer);
uint16_t sa_service_delete(struct sa_req *rq, const uint8_t *req, uint64_t mask, uint8_t *answer);

/* InformInfo subscribe or unsubscribe from the requester; the answer record goes to answer. */
uint16_t sa_inform_set(struct sa_req *rq, const uint8_t *req, uint8_t *answer);
void sa_build_inform_records(const struct sa_req *rq, struct sa_records *out);

/* sa/ports.c. The port a GID of this subnet names (TOPO_NONE: none, or not in the fabric now), and
 * the GID of a port (a switch's: its node GUID; a vport's slot: its own). */
uint32_t sa_gid_port(const struct sa *sa, const uint8_t *gid);
/* The same by the GUID alone: ServiceGIDs, where OpenSM ignores the prefix and clients
 * (osmtest) send it in the wrong byte order. */
uint32_t sa_guid_port(const struct sa *sa, uint64_t guid);
/* As sa_gid_port, but a vport's GID gives its slot (nports + its index: topo_slot_port),
 * for the queries that answer with the vport's own LID and P_Keys (PathRecord). */
uint32_t sa_gid_slot(const struct sa *sa, const uint8_t *gid);
/* The router port a GID of another subnet is reached through (prefix_routes: the first
 * route whose prefix matches and whose router is in the fabric), TOPO_NONE when the GID is
 * this subnet's, multicast, or no route takes it. */
uint32_t sa_prefix_router(struct sa *sa, const uint8_t *gid);
void sa_port_gid(const struct sa *sa, uint32_t port, uint8_t *gid);

/* IBA rate codes: of a link's width and speed, and as bandwidth (0.25 Gb/s units, 0 for a
 * code that names no rate) */

/* Multicast groups (sa/mcast.c): MCMemberRecord Set (join, create), Delete (leave), Get and
 * GetTable; the answer records go to out. Returns 0 or an SA status. */
uint16_t sa_mcast_request(struct sa_req *rq, const struct mad_sa_hdr *h, const uint8_t *req,
                          struct sa_records *out);
/* The PathRecord from port src to the multicast group q.dgid names (its MLID, MTU, rate, SL,
 * P_Key...), if src may see the group and the request's components fit it. */
uint16_t sa_mcast_path(struct sa_req *rq, const struct mad_path_record *q, uint64_t mask,
                       uint32_t src, struct sa_records *out);
/* The IPoIB broadcast groups of the configured partitions, created once the subnet is up. */
void sa_mcast_sweep_done(struct sa *sa);
/* The groups the partition policy asks for, and each partition's SL: after a sweep, and
 * after a change at run time. */
void sa_mcast_partitions(struct sa *sa);

/* QoS (sa/qos.c): the port groups each port is in, from the policy, after every sweep; and
 * the level of a path (the first rule that matches, else the default level; NULL: none). */
void sa_qos_sweep_done(struct sa *sa);
const struct config_qos_level *sa_qos_level(const struct sa *sa, uint32_t src, uint32_t dst,
                                            bool has_sid, uint64_t sid, uint16_t pkey);
void sa_mcast_free(struct sa *sa);
/* Drop every group and its MLID's tree (a master that handed over). */
void sa_mcast_forget(struct sa *sa);
/* Trap 66 (group created) or 67 (deleted) to the subscribers. */
void sa_report_mgid(struct sa *sa, uint16_t trap, const uint8_t *mgid, uint16_t pkey);

/* Alias GUIDs (sa/guidinfo.c): GUIDInfoRecord Set (set true) and Delete; the alias at an
 * index of a port's GUIDInfo table (0: none); the port an alias GUID names (TOPO_NONE). */
void sa_guidinfo_components(struct sa_components *c);
uint16_t sa_guidinfo_change(struct sa_req *rq, bool set, const uint8_t *req, uint64_t mask,
                            uint8_t *answer);
void sa_guidinfo_sweep_done(struct sa *sa);

/* The state file (sa/state.c): a line per item the clients made, of a kind each. A kind is
 * registered by its owner (sa.c wires them, as it fills attrs[]), so that state.c calls the
 * owners only through the table and they call state.c (sa_state_changed, the hex helpers):
 * its line format is written by its save and read by its restore alone, for the file and
 * the standby sync both. */
struct sa_state_kind {
	const char *prefix; /* the line's first word; restore gets what follows it and a space */
	/* restored in ascending passes, as the lines may come in any order (a standby's copy is
	 * a set): the aliases first, as they name ports; a group before its members */
	unsigned pass;
	void (*save)(struct sa *sa, FILE *f); /* every line (NULL: written by another kind's) */
	bool (*restore)(struct sa *sa, const char *rest); /* false: dropped */
	void (*restored)(struct sa *sa); /* once every line was read (NULL: nothing to do) */
	void (*forget)(struct sa *sa);   /* a handover: drop every item (NULL: another's does) */
};
void sa_state_register(struct sa *sa, const struct sa_state_kind *k);
void sa_state_load(struct sa *sa);  /* at start: read it */
void sa_state_apply(struct sa *sa); /* after the first sweep: restore what it holds */
void sa_state_changed(struct sa *sa);
int sa_state_save(struct sa *sa);
void sa_state_free(struct sa *sa);
/* A master handed over: forget the clients' state (the new master's copy comes by the sync).
 * False: there was none to forget (not restored yet, or forgotten already). */
bool sa_state_reset(struct sa *sa);
void sa_hex_put(FILE *f, const uint8_t *b, size_t n);
bool sa_hex_get(const char *s, uint8_t *out, size_t n);
/* Each kind's save, restore and forget ("service", "group" and "member", "sub", "alias"). */
void sa_service_save(struct sa *sa, FILE *f);
bool sa_service_restore(struct sa *sa, const char *line);
/* Drop every service (a standby's SA keeps none of its own), and the counts per port. */
void sa_service_forget(struct sa *sa);
void sa_inform_save(struct sa *sa, FILE *f);
/* Drop every subscription (a standby's SA keeps none of its own). */
void sa_inform_forget(struct sa *sa);
bool sa_inform_restore(struct sa *sa, const char *line);
void sa_mcast_save(struct sa *sa, FILE *f); /* groups, each followed by its members */
bool sa_mcast_restore_group(struct sa *sa, const char *line);
bool sa_mcast_restore_member(struct sa *sa, const char *line);
void sa_mcast_restore_done(struct sa *sa); /* trees for the restored groups */
void sa_guidinfo_save(struct sa *sa, FILE *f);
bool sa_guidinfo_restore(struct sa *sa, const char *line);
/* Drop every alias from the model (and the ports' GUIDInfo tables follow). */
void sa_guidinfo_forget(struct sa *sa);

/* Do two ports share a partition, one of them as a full member (so they can talk)? */
bool sa_ports_share(const struct sa *sa, uint32_t a, uint32_t b);
/* May the requester see records of this port (IBA 15.4: a requester sees only ports it
 * shares a partition with)? Trusted requesters see everything. port may be a vport's slot
 * (nports + its index): its own keys decide. */
bool sa_visible(const struct sa_req *rq, uint32_t port);

/* Is the port a member of the partition (full: as a full member)? */
bool sa_port_has_pkey(const struct sa *sa, uint32_t port, uint16_t pkey, bool *full);

/* PathRecords for a request (the request record on the wire and its component mask) into
 * out. Returns 0, or an SA status (insufficient components, invalid GID...). */
/* A PathRecord GetTable: built at once when it is small, else by a job that builds a slice
 * per turn of the event loop and answers; SA_DEFERRED then (rq->out is the job's). A job
 * whose fabric changes under it answers BUSY: the client asks again. */
uint16_t sa_path_table(struct sa_req *rq);
void sa_path_jobs_free(struct sa *sa);
void sa_inform_sweep_done(struct sa *sa);
const struct sa_path_job *sa_path_job_next(const struct sa_path_job *j);
uint32_t sa_path_job_requester(const struct sa_path_job *j);
/* Tables have no room now (transfers under way, bytes held, jobs): BUSY before building. */
bool sa_tables_busy(const struct sa *sa);
/* Why a table request must be refused before it is built (0: it may be): BUSY when the
 * SA's room is taken or the port's table is being built, NO_RESOURCES when the port holds
 * its share of transfers. Ends first the port's transfers its new request shows done. */
uint16_t sa_tables_refusal(struct sa *sa, const struct sa_req *rq);
struct sa_held_answer {
	struct mad_addr to;
	uint8_t mad[MAD_SIZE];
};
/* A request changed the state: its answer (sent by send_answer while sa->holding) waits in
 * sa->held for the next save, which comes within a few milliseconds. */
void sa_state_hold(struct sa *sa, const struct mad_addr *to, const uint8_t *mad);
void sa_state_release(struct sa *sa); /* send what is held (after a save, or at the end) */
/* PathRecords for a query (table: GetTable). opt (NULL: none): numb, the records per port
 * pair at most (0: the query's NumbPath, 127 when it gives none); no_lead, the LID pairs in
 * the table's order, without the two most independent first (a MultiPathRecord that weighs
 * independence itself). */
struct sa_paths_opt {
	uint32_t numb;
	bool no_lead;
};
uint16_t sa_paths(struct sa_req *rq, const uint8_t *req, uint64_t mask, bool table,
                  const struct sa_paths_opt *opt, struct sa_records *out);
/* What a path offers: its hops, the least MTU and rate of its links (sa/trace.c). */
struct sa_trace {
	unsigned hops;
	uint8_t mtu, rate;
};
#define SA_PATH_HOPS_MAX 65 /* the source's link and 64 switch hops */
/* Follow the tables the switches hold from port src to dlid: false where they do not
 * deliver. hops (room for SA_PATH_HOPS_MAX), when given, gets the port each hop leaves by. */
bool sa_trace(const struct topo *t, uint32_t src, uint16_t dlid, struct sa_trace *pa,
              uint32_t *hops, unsigned *nhops);
/* A path from port s to port d by (slid, dlid) with its way back, for independence
 * (sa/independence.c): the ports it leaves by each way (nhops 0: no path to judge), and
 * rec, its record's index where the caller keeps one. */
struct sa_cand {
	uint32_t s, d, rec;
	uint32_t hops[2][SA_PATH_HOPS_MAX];
	unsigned nhops[2];
};
/* IndependenceSelector values: IBA names 1 "as fault independent as possible", which ibsmd
 * reads as no cable in common; 2 (reserved by IBA) asks for no switch in common either. */
enum { SA_INDEP_NONE = 0, SA_INDEP_LINK = 1, SA_INDEP_NODE = 2 };
/* Trace both ways along the switches' tables. false (nhops 0) where either does not
 * deliver. */
bool sa_cand_trace(const struct topo *t, uint32_t s, uint32_t d, uint16_t slid, uint16_t dlid,
                   struct sa_cand *c);
/* Do two paths share a cable (or, for SA_INDEP_NODE, a switch) that their common ends do
 * not force on them? */
bool sa_cand_conflict(const struct topo *t, const struct sa_cand *a, const struct sa_cand *b,
                      unsigned sel);
/* How many such hops they share, counted up to enough. */
unsigned sa_cand_shared(const struct topo *t, const struct sa_cand *a, const struct sa_cand *b,
                        unsigned sel, unsigned enough);
/* PathRecords for a MultiPathRecord request (len bytes, its GIDs included): every
 * SGID-DGID pair, at most NumbPath in all; with an IndependenceSelector, a set of
 * mutually independent paths first (sa/multipath.c). */
uint16_t sa_multipaths(struct sa_req *rq, const uint8_t *req, size_t len, uint64_t mask,
                       struct sa_records *out);

#endif
