/* ibsmd's configuration: defaults, then a YAML file, then the command line. */
#ifndef IBSMD_CONFIG_CONFIG_H
#define IBSMD_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mad/cc.h"
#include "util/log.h"

#define CONFIG_MAX_ROOTS         256
#define CONFIG_MAX_PARTITIONS    32768 /* every P_Key but 0 */
#define CONFIG_MAX_PREFIX_ROUTES 64

/* Another subnet's prefix (0: any), and the router port that leads there (0: the first
 * router port, by GUID, present) */
struct config_prefix_route {
	uint64_t prefix, router;
};

/* Who a partition member is: a port by GUID, or a whole class of ports */
enum config_member_kind {
	CM_GUID,         /* a CA port's GUID, or a switch's (its management port 0) */
	CM_ALL,          /* every CA port and switch port 0 */
	CM_ALL_CAS,      /* every CA port (not routers') */
	CM_ALL_SWITCHES, /* every switch's port 0 */
	CM_SELF,         /* the SM's own port */
	CM_ALL_ROUTERS,  /* every router port */
};
/* Membership: bits, so that "both" gives a port the full and the limited key */
#define CM_FULL    1u
#define CM_LIMITED 2u
#define CM_BOTH    (CM_FULL | CM_LIMITED)

struct config_member {
	uint64_t guid; /* CM_GUID */
	uint8_t kind;
	uint8_t membership; /* CM_FULL, CM_LIMITED or CM_BOTH; 0: the partition's default */
	/* added at run time (sm/tenants.h), after the file's own members: not the file's, so
	 * a reload, a dump and the digests peers compare leave it out */
	bool api;
};

/* A multicast group the SA creates with the partition (partitions.conf's "mgid=" lines) */
struct config_mgroup {
	uint8_t mgid[16];
	uint8_t mtu, rate, sl, scope, tclass; /* IBA codes */
	uint32_t qkey, flow_label;
};

struct config_partition {
	char name[64];
	uint16_t pkey;     /* 15 bits; the membership bit is per member */
	uint8_t defmember; /* members without their own membership: CM_FULL, _LIMITED, _BOTH */
	bool indx0;        /* its key goes at index 0 of the P_Key table (OpenSM's indx0) */
	bool has_sl;       /* paths on it carry sl */
	uint8_t sl;
	/* caps on the PathRecords of its P_Key (IBA codes, 0: none), as UFM's mtu_limit and
	 * rate_limit: what an operator gives a tenant's partition, enforced by the SA */
	uint8_t mtu_limit, rate_limit;
	struct config_member *members;
	unsigned nmembers;
	bool ipoib;         /* the SA keeps this partition's IPoIB broadcast group */
	uint8_t ipoib_mtu;  /* its MTU (IBA code: 4 = 2048) */
	uint8_t ipoib_rate; /* its rate (IBA code: 3 = 10 Gb/s) */
	uint8_t ipoib_sl, ipoib_scope;
	uint32_t ipoib_qkey;
	struct config_mgroup *groups;
	unsigned ngroups;
	uint32_t line, col; /* where the file defines it, for messages */
	bool api; /* a partition of the run-time API's own, after the file's (as members' api) */
};

/* A QoS policy (config/qos.c): what OpenSM's qos-policy.conf and its qos_* options say.
 * Port groups and QoS levels, rules that pick a level for a path by service ID, P_Key and
 * source and destination groups (the first that matches), and per port class the SL-to-VL
 * table and VL arbitration. */
#define CONFIG_QOS_MAX 64
enum { QOS_CLASS_CA, QOS_CLASS_SWITCH_EXT, QOS_CLASS_SWITCH_PORT0, QOS_CLASS_ROUTER, QOS_NCLASSES };

struct config_vl_table {
	bool set;
	uint8_t sl2vl[16]; /* VL of each SL; 15 drops */
	uint8_t high_limit;
	uint8_t nhigh, nlow;
	uint8_t high_vl[64], high_weight[64], low_vl[64], low_weight[64];
};

struct config_qos_group {
	char name[64];
	uint64_t *guids; /* port or node GUIDs */
	unsigned nguids;
	char node_desc[128]; /* a glob (fnmatch) on node descriptions, "" for none */
	char partition[64];  /* the members of this partition, "" for none */
	uint32_t line, col;
};

struct config_qos_level {
	char name[64];
	uint8_t sl;
	uint8_t mtu_limit;   /* IBA code, 0: none */
	uint8_t rate_limit;  /* IBA code, 0: none */
	uint8_t packet_life; /* 0-31, 0xff: the SA's own */
	uint32_t line, col;
};

struct config_qos_rule {
	bool has_sid, has_pkey;
	uint64_t sid_lo, sid_hi;
	uint16_t pkey;    /* 15 bits */
	int16_t src, dst; /* group index, -1: any */
	uint16_t level;
	uint32_t line, col;
};

struct config_qos {
	struct config_vl_table cls[QOS_NCLASSES];
	struct config_qos_group groups[CONFIG_QOS_MAX];
	unsigned ngroups;
	struct config_qos_level levels[16];
	unsigned nlevels;
	struct config_qos_rule rules[CONFIG_QOS_MAX];
	unsigned nrules;
	int16_t default_level; /* for paths no rule matches, -1: none */
};

void config_qos_free(struct config_qos *q);
/* The class names as the YAML writes them: "ca", "switch_external", ... */
const char *config_qos_class_name(unsigned cls);

/* The options, in the order --dump-config writes them. */
enum config_key {
	CK_ROUTING_ENGINE,
	CK_ROOT_GUIDS,
	CK_ROOT_GUID_FILE,
	CK_CN_GUID_FILE,
	CK_HOP_WEIGHTS_FILE,
	CK_PORT_PROF_IGNORE_FILE,
	CK_IDS_GUID_FILE,
	CK_SCATTER_PORTS,
	CK_PORT_SHIFTING,
	CK_GUID_ROUTING_ORDER_FILE,
	CK_GUID_ROUTING_ORDER_NO_SCATTER,
	CK_LFTS_FILE,
	CK_TORUS_CONFIG,
	CK_ROUTING_MAX_VLS,
	CK_ROUTING_FALLBACK_MINHOP,
	CK_LMC,
	CK_LMC_ESP0,
	CK_LID_MIN,
	CK_LID_MAX,
	CK_SWEEP_INTERVAL,
	CK_MAD_WINDOW,
	CK_MAD_WINDOW_PER_NODE,
	CK_MAD_QUEUE_MAX,
	CK_MAD_TIMEOUT_MS,
	CK_MAD_RETRIES,
	CK_SUBNET_PREFIX,
	CK_SUBNET_TIMEOUT,
	CK_SA_SUBSCRIPTIONS_PER_PORT,
	CK_SA_SERVICES_PER_PORT,
	CK_SA_GROUPS_PER_PORT,
	CK_LINK_FLAP_THRESHOLD,
	CK_LINK_FLAP_WINDOW,
	CK_LINK_FLAP_HOLD,
	CK_LINK_SETTLE_TIME,
	CK_HEAD_OF_QUEUE_LIFETIME,
	CK_LEAF_HEAD_OF_QUEUE_LIFETIME,
	CK_VL_STALL_COUNT,
	CK_LEAF_VL_STALL_COUNT,
	CK_LINK_SPEED_ENABLED,
	CK_LINK_WIDTH_ENABLED,
	CK_LINK_SPEED_EXT_ENABLED,
	CK_PACKET_LIFE_TIME,
	CK_TRAP_FLOOD_THRESHOLD,
	CK_SM_KEY,
	CK_M_KEY,
	CK_M_KEY_SECRET,
	CK_M_KEY_LEASE,
	CK_M_KEY_PROTECT,
	CK_SM_PRIORITY,
	CK_SM_POLL_INTERVAL_MS,
	CK_SM_POLL_RETRIES,
	CK_SM_STICKY,
	CK_IGNORE_OTHER_SM,
	CK_SHOW_SM_KEY,
	CK_STATE_DIR,
	CK_LOG_LEVEL,
	CK_DEFAULT_IPOIB,
	CK_DEFAULT_IPOIB_MTU,
	CK_DEFAULT_IPOIB_RATE,
	CK_PARTITIONS,
	CK_QOS,
	CK_PREFIX_ROUTES,
	CK_CONTROL_SOCKET,
	CK_CONTROL_GROUP,
	CK_DUMP_DIR,
	CK_NODE_NAME_MAP,
	CK_DUMP_AFTER_SWEEP,
	CK_METRICS_FILE,
	CK_METRICS_INTERVAL,
	CK_METRICS_LISTEN,
	CK_METRICS_PER_ADDRESS,
	CK_METRICS_PORTS,
	CK_METRICS_MAX_PORTS,
	CK_API_LISTEN,
	CK_API_TLS_CERT,
	CK_API_TLS_KEY,
	CK_API_USERS_FILE,
	CK_API_MAX_PENDING,
	CK_API_MAX_PARTITIONS,
	CK_VIRTUALIZATION,
	CK_VIRT_MAX_PORTS_IN_PROCESS,
	CK_VIRT_MAX_LIDS_PER_PORT,
	CK_PM_INTERVAL,
	CK_PM_WINDOW,
	CK_PM_THRESHOLD_SYMBOL_ERRORS,
	CK_PM_THRESHOLD_LINK_DOWNED,
	CK_PM_THRESHOLD_RCV_ERRORS,
	CK_PM_THRESHOLD_EXCESSIVE_BUFFER_OVERRUNS,
	CK_PM_THRESHOLD_XMIT_DISCARDS,
	CK_PM_THRESHOLD_XMIT_WAIT,
	CK_PM_IGNORE_CAS,
	CK_HEALTH_SYMBOL_ERRORS_PER_HOUR,
	CK_HEALTH_LINK_DOWNED_PER_HOUR,
	CK_HEALTH_ERRORS_PER_HOUR,
	CK_HEALTH_XMIT_WAIT_PERCENT,
	CK_CONGESTION_CONTROL,
	CONFIG_NKEYS
};

/* Where an option's value was read: line and column in `source`, 0 for a default or the
 * command line. */
struct config_where {
	uint32_t line, col;
};

/* Congestion control (IBA Annex A10) as OpenSM's manager programs it: off by default; the
 * CC_Key its MADs carry (and, with protect, sets in the ports); at most max_outstanding
 * requests in flight; every switch's SwitchCongestionSetting, every CA port's
 * CACongestionSetting and its CongestionControlTable (cct_len entries, shift << 14 |
 * multiplier; none: one block with CCTI_Limit 0). */
#define CONFIG_CC_CCT_MAX 128
struct config_cc {
	bool enable;
	uint64_t cc_key;
	/* write cc_key into every port's CongestionKeyInfo, with CC_KeyProtectBit: then only a
	 * holder of the key reads or changes the settings (OpenSM never sets a key) */
	bool protect;
	uint32_t max_outstanding;
	struct mad_cc_switch_setting sw;
	struct mad_cc_ca_setting ca;
	uint16_t cct[CONFIG_CC_CCT_MAX];
	uint16_t cct_len;
};

struct ibsmd_config {
	char routing_engines[128];    /* "minhop", or a fallback chain "updn,minhop" */
	bool routing_fallback_minhop; /* minhop when every engine of the chain failed */
	uint64_t root_guids[CONFIG_MAX_ROOTS];
	unsigned nroots;
	/* how the SA answers a PathRecord to another subnet's GID: the first route whose
	 * prefix matches, through its router (OpenSM's prefix-routes.conf); none: INVALID_GID */
	struct config_prefix_route prefix_routes[CONFIG_MAX_PREFIX_ROUTES];
	unsigned nprefix_routes;
	char root_guid_file[256];   /* more roots, one GUID a line (OpenSM's format) */
	char cn_guid_file[256];     /* ftree: the compute nodes, whose switches are leaves */
	char hop_weights_file[256]; /* minhop: GUID PORT WEIGHT lines, OpenSM's format */
	/* OpenSM's balancing knobs, for the engines of its unicast manager (minhop, updn,
	 * dnup, lash): GUID PORT lines whose routes weigh nothing on the port's load; GUID ID
	 * lines, updn's tie break between switches of a rank; a seed to pick at random among
	 * the least loaded ports (0: off); the scan for the least loaded from a start that
	 * shifts with the load, so that LIDs do not align across tables */
	char port_prof_ignore_file[256];
	char ids_guid_file[256];
	uint32_t scatter_ports;
	bool port_shifting;
	/* host port GUIDs a line, routed first in that order; those not scattered */
	char guid_routing_order_file[256];
	bool guid_routing_order_no_scatter;
	char lfts_file[256];    /* the file engine's forwarding tables (ibroute's format) */
	char torus_config[256]; /* torus: OpenSM's torus-2QoS.conf (shape, seeds, datelines) */
	/* the most VLs engines that break credit loops with VLs (dfsssp) may use, 0: all the
	 * switch links run */
	uint8_t routing_max_vls;
	uint8_t lmc;
	bool lmc_esp0; /* switch port 0 gets the LMC too (default: LMC 0) */
	uint16_t lid_min, lid_max;
	unsigned sweep_interval_s; /* light sweep period, 0 turns them off */
	unsigned mad_window, mad_window_per_node, mad_timeout_ms, mad_retries;
	/* SMPs the SM hands the dispatcher at once (queued or in flight); more wait in the SM's
	 * own queue, as compact requests */
	unsigned mad_queue_max;
	uint64_t subnet_prefix;
	uint64_t sm_key; /* SA requests with this SM_Key are trusted (0: none are) */
	uint64_t m_key;  /* one M_Key for every port; with a secret, the key ports had before */
	/* per-port M_Keys: derived from the secret in m_key_secret (a file), and the port GUID */
	char m_key_secret[256];       /* the file's path, "" for none */
	bool has_m_key_secret;        /* m_key_secret was read: mkey_secret_key holds it */
	uint8_t m_key_secret_key[32]; /* a hash of the file's contents, never the contents */
	uint16_t m_key_lease;
	uint8_t m_key_protect;
	uint8_t sm_priority;
	/* a standby asks the master's SMInfo every poll interval and takes over after this
	 * many unanswered polls in a row */
	unsigned sm_poll_interval_ms, sm_poll_retries;
	bool sm_sticky;       /* a master keeps the subnet when an SM of higher priority appears */
	bool ignore_other_sm; /* no election: master whatever other SMs say (labs) */
	/* SMInfo shows the SM_Key to any requester while the SM's port is not M_Key protected,
	 * as OpenSM 3.3 does (it ignores an SM that shows key 0) */
	bool show_sm_key;
	uint8_t subnet_timeout;
	/* InformInfo subscriptions one port may hold: one port must not take the room and the
	 * Reports of all */
	unsigned sa_subscriptions_per_port;
	/* ServiceRecords one port may register, and multicast groups (each an MLID) one port
	 * may create: one host must not take the SA's room (or the MLIDs) of all */
	unsigned sa_services_per_port, sa_groups_per_port;
	/* link health: a link that goes up or down this many times (0: never) within the
	 * window is disabled for the hold time */
	unsigned link_flap_threshold, link_flap_window_s, link_flap_hold_s;
	/* a link between switches that went down twice within link_flap_window carries no
	 * routes until it has stayed up this long (0: once it is ACTIVE) */
	unsigned link_settle_s;
	/* switch ports' buffers (OpenSM's option names and defaults): how long a packet may
	 * wait at the head of a queue (PortInfo HOQLife, 4.096 us x 2^v; 20 or more: forever)
	 * on a port towards a switch and towards a CA (leaf), how many such discards put a VL
	 * in the stall state (VLStallCount), and how long a packet may live in a switch
	 * (SwitchInfo LifeTimeValue) */
	uint8_t hoq_life, leaf_hoq_life, vl_stall_count, leaf_vl_stall_count, packet_life;
	/* the speeds and widths a switch port's link may train to, and the extended speeds
	 * any port's (PortInfo LinkSpeedEnabled, LinkWidthEnabled, LinkSpeedExtEnabled, as
	 * OpenSM's force_link_*): 0 no change, 15 / 255 / 31 every one the port supports, 30
	 * no extended speed, else the IBA bits; to hold a bad cable slower or narrower */
	uint8_t link_speed_enabled, link_width_enabled, link_speed_ext_enabled;
	unsigned trap_flood_threshold; /* traps a port sends about itself per window */
	char state_dir[256];
	struct config_partition *partitions;
	unsigned npartitions, partitions_cap;
	struct config_qos *qos; /* NULL: no policy (SL s on VL s mod VLs, round robin) */
	/* the default partition's IPoIB broadcast group, when it is not configured above */
	bool default_ipoib;
	uint8_t default_ipoib_mtu, default_ipoib_rate;
	int log_level; /* enum log_level, or -1: unchanged */
	/* runtime control: the local socket ibsa talks to, and the group allowed on it besides
	 * root ("" for root only) */
	char control_socket[108];
	char control_group[64];
	/* where the OpenSM-format dumps go, and whether each heavy sweep writes them */
	char dump_dir[256];
	/* node-name-map (ibnetdiscover's format): the names of nodes by GUID, for Slurm's topology
	 */
	char node_name_map[256];
	bool dump_after_sweep;
	/* Prometheus metrics: the file node_exporter's textfile collector reads ("": in the
	 * state directory), how often it is written (0: never), and an HTTP address to serve
	 * them on ("": none, the default: no open port) */
	char metrics_file[256];
	unsigned metrics_interval_s;
	char metrics_listen[128];
	/* HTTP connections one client address may hold at once (of 16 in all), so that one
	 * host cannot keep the others from the endpoint */
	unsigned metrics_per_address;
	/* per-port families in infiniband_exporter's names (daemon/metrics_ports.c): which
	 * ports (none, switches, all) and at most how many, to bound the series on large
	 * fabrics */
	char metrics_ports[16];
	unsigned metrics_max_ports;
	/* the partition API (UFM's REST shapes, for ib-kubernetes): the address to serve it on
	 * ("": off), the PEM certificate and key for HTTPS (both "": plain HTTP, allowed only on a
	 * loopback address) and the users file (lines name:crypto_pwhash_str hash, mode 0600) */
	char api_listen[128];
	char api_tls_cert[256];
	char api_tls_key[256];
	char api_users_file[256];
	/* GUIDs one client of the partition API may have pending (members added before their
	 * port, alias or vport is in the fabric); 0: a GUID must be in the fabric */
	unsigned api_max_pending;
	/* partitions the API may define (UFM's /pkeys/add, with or without members): each
	 * with IPoIB takes a multicast LID, of which there are 16,383 */
	unsigned api_max_partitions;
	/* SR-IOV virtual ports (IBA Annex A18): "manage" (enable them, give LIDs, P_Keys,
	 * states), "disable" (turn virtualization off on every port), "ignore" (leave it as
	 * it is); and how many physical ports' vports are read at once */
	char virtualization[16];
	unsigned virt_max_ports_in_process;
	unsigned virt_max_lids_per_port; /* LIDs of their own one port's VFs may hold */
	/* the performance manager: every pm_interval seconds (0: off) it reads every port's
	 * counters, pm_window requests at most in flight; an error counter that grows by at
	 * least its threshold (0: never) between two readings raises an event */
	unsigned pm_interval_s, pm_window;
	uint32_t pm_threshold_symbol_errors, pm_threshold_link_downed, pm_threshold_rcv_errors,
	    pm_threshold_excessive_buffer_overruns, pm_threshold_xmit_discards;
	/* XmitWait (ticks a port had data and no credit: congestion) grown by this much in an
	 * interval is an event too (0: never); the PM reads switch ports only */
	uint32_t pm_threshold_xmit_wait;
	bool pm_ignore_cas;
	/* the health report's error rates, over the PM's last one to two hours of readings:
	 * symbol errors, link downs and every other error counter an hour, and the share of
	 * XmitWait against the data sent (percent); over one, the port warns (0: never) */
	uint32_t health_symbol_errors_per_hour, health_link_downed_per_hour, health_errors_per_hour;
	unsigned health_xmit_wait_percent;
	/* the congestion control manager (OpenSM's cc_* options) */
	struct config_cc cc;
	char source[256]; /* the file last loaded, for messages */
	struct config_where where[CONFIG_NKEYS];
};

void config_defaults(struct ibsmd_config *c);
void config_cc_defaults(struct config_cc *cc);
bool config_cc_switch_equal(const struct mad_cc_switch_setting *x,
                            const struct mad_cc_switch_setting *y);
bool config_cc_ca_equal(const struct mad_cc_ca_setting *x, const struct mad_cc_ca_setting *y);
/* congestion_control's values as text, for the OpenSM importer too: "SHIFT:MULTIPLIER" as
 * shift << 14 | multiplier, a 256-bit hexadecimal port mask; 0, or -1 when malformed. And
 * the mapping's body as --dump-config writes it (after "congestion_control:"). */
int config_cc_shift_mult(const char *s, uint16_t *out);
int config_cc_mask(const char *s, uint8_t mask[MAD_CC_PORT_MASK_SIZE]);
void config_cc_dump(FILE *out, const struct config_cc *cc);
/* Read a YAML file over what c holds. 0, or -1 with "FILE:LINE: what" in err. */
int config_load(struct ibsmd_config *c, const char *path, char *err, size_t errlen);
/* The same from an open stream (rewound once; path names it in messages): for the fuzzer. */
int config_load_stream(struct ibsmd_config *c, FILE *fp, const char *path, char *err,
                       size_t errlen);
/* Check values that depend on each other. 0, or -1 with "FILE:LINE:COL: reason" (the place
 * of the option at fault, when it came from a file). */
int config_check(const struct ibsmd_config *c, char *err, size_t errlen);
void config_free(struct ibsmd_config *c);
/* A new partition (zeroed: full default membership, IPoIB group defaults) at the end of the
 * list, or NULL out of memory; and a member added to it. */
struct config_partition *config_partition_add(struct ibsmd_config *c);
int config_partition_member(struct config_partition *p, uint8_t kind, uint64_t guid,
                            uint8_t membership);
/* The file's partitions (those before the API's), and a partition's file members. */
unsigned config_file_partitions(const struct ibsmd_config *c);
unsigned config_file_members(const struct config_partition *p);

const char *config_key_name(enum config_key k);
/* Does a reload apply this option to a running daemon (else it takes a restart)? */
bool config_key_live(enum config_key k);
/* ... and only to the ports' PortInfo (a reload sets it there without a sweep) */
bool config_key_port_only(enum config_key k);
/* Write the whole configuration, defaults included, as YAML that config_load reads back to
 * the same values. */
void config_dump(const struct ibsmd_config *c, FILE *out);
/* Do a and b hold the same value for option k? */
bool config_key_equal(const struct ibsmd_config *a, const struct ibsmd_config *b,
                      enum config_key k);
/* Move option k's value from src to dst (partitions are moved, not copied: src loses them,
 * and dst loses the run-time API's entries, which sm/tenants.c merges in again). */
void config_key_take(struct ibsmd_config *dst, struct ibsmd_config *src, enum config_key k);

/* Digests of what a master and its standbys must agree on, so that a takeover does not change
 * the subnet: the partitions (with their members and IPoIB groups), the routing (engines,
 * roots, LMC, LID range, subnet prefix) and the keys (SM_Key, M_Key and its protection). */
enum config_digest_part { CONFIG_DIGEST_PARTITIONS, CONFIG_DIGEST_ROUTING, CONFIG_DIGEST_KEYS };
uint64_t config_digest(const struct ibsmd_config *c, enum config_digest_part part);
/* The routing digest and each routing input file's identity and age (device, inode, size,
 * modification time): what a reload compares to know whether routes must be computed afresh
 * (an edited weights or order file under the same name) or may stay as they are. */
uint64_t config_routing_inputs(const struct ibsmd_config *c);

#endif
