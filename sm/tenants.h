/* Partitions changed at run time (issue 35): what an orchestrator asks through the control
 * socket (`ibsa partition ...`) or the HTTPS endpoint (UFM's REST shapes), one interface for
 * both, so that the two cannot come to behave differently.
 *
 * Semantics an operator can rely on:
 *  - Validation first, nothing changed on any error: a P_Key 0x0001..0x7ffe (bit 15, the
 *    full-membership bit, is accepted and ignored, as UFM takes "0x8001" and "0x0001" for the
 *    same partition; 0x7fff is the default partition, which belongs to ibsmd.yaml); every GUID
 *    a port GUID, a switch's GUID or an alias GUID the SM knows now, or one it does not know
 *    yet (pending: applied when it appears; not 0 or all ones; api_max_pending per client);
 *    membership full or limited. The message says which value is wrong.
 *  - Durable before the answer: the API's members are written (fsync, rename, directory
 *    fsync: util/statefile.h) to `partitions-api` in the state directory before a function
 *    below returns TENANTS_OK; a write that fails undoes the change and says so.
 *  - Merged with ibsmd.yaml's partitions: a P_Key the file defines gets the API's GUIDs as
 *    extra members (the file's name, index0, IPoIB group and SL rule it); another P_Key is a
 *    partition of the API's own, named "api_0xPKEY". The file's own members cannot be removed
 *    or changed here (TENANTS_REFUSED); a reload (SIGHUP) takes the file's partitions anew and
 *    keeps every API member. A partition of the API's own whose last member leaves is gone.
 *  - index0 and ip_over_ib are the partition's: the last add of an API partition sets them.
 *  - Synced to standbys (sync/sync.c, "apartition" and "pmember" lines:
 *    tenants_changes/_each/_apply), so a
 *    standby that takes over, and a restarted SM (it reads the file), keep them.
 *  - Applied incrementally: only the ports whose P_Key tables change get them (CA ports and
 *    the switch ports facing them), the same turn of the event loop, with no sweep; the SA
 *    creates the IPoIB broadcast group of a new partition with ip_over_ib, and deletes it
 *    (trap 67 to subscribers if in use) when the partition goes with its last member or an
 *    add turns ip_over_ib off, as UFM deletes a P_Key's group with the P_Key.
 *  - Only the master takes changes (TENANTS_NOT_MASTER elsewhere: a standby's would be
 *    overwritten by its master's copy).
 *  - Each change is a structured journal event "partition_changed" (IBSMD_WHO, IBSMD_PKEY,
 *    IBSMD_ACTION, IBSMD_GUIDS) with who asked, what, and the journal's own time.
 *
 * Everything runs on the SM's event loop (not thread safe). */
#ifndef IBSMD_SM_TENANTS_H
#define IBSMD_SM_TENANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sm/sm.h"

#define TENANTS_MAX_GUIDS 4096 /* GUIDs in one request */

/* Return codes, each with its text in err; the REST layer maps them to HTTP statuses. */
enum tenants_status {
	TENANTS_OK = 0,
	TENANTS_INVALID = -1,    /* a bad P_Key, GUID or membership (HTTP 400) */
	TENANTS_NOT_FOUND = -2,  /* no such partition (HTTP 404) */
	TENANTS_REFUSED = -3,    /* ibsmd.yaml's own member or partition (HTTP 403) */
	TENANTS_NOT_MASTER = -4, /* this SM is not the master (HTTP 503) */
	TENANTS_FAILED = -5,     /* not written to disk, or out of memory (HTTP 500) */
};

/* Add GUIDs (port, switch or alias GUIDs) to partition pkey, creating it if new. A GUID
 * already an API member takes the new membership. A GUID the fabric does not show yet (a
 * virtual function's, added before the VF exists, as ib-kubernetes does) is kept pending and
 * takes effect when it appears, as a port, alias or vport GUID: at most api_max_pending of
 * them per client (TENANTS_REFUSED beyond, nothing changed). */
struct tenants_add {
	uint16_t pkey;
	const uint64_t *guids;
	unsigned nguids;
	uint8_t membership; /* CM_FULL or CM_LIMITED (config/config.h) */
	bool index0;        /* the partition's key at index 0 of its members' P_Key tables */
	bool ipoib;         /* the SA keeps the partition's IPoIB broadcast group */
	/* the client, stable across its requests ("https:alice", "uid:1000"): its pending
	 * GUIDs count against api_max_pending */
	const char *client;
	/* each GUID's own membership (CM_FULL or CM_LIMITED), as UFM's "memberships"; NULL:
	 * membership for every one */
	const uint8_t *memberships;
	/* UFM's PUT (set): the partition's API members become exactly these, the others of
	 * the API leave (ibsmd.yaml's stay) */
	bool replace;
};
/* who: whoever asked, for the journal ("control socket uid 0 (root)", "https alice@10.0.0.5").
 * TENANTS_OK or an error with its reason in err; on TENANTS_OK, err holds a line saying what
 * changed. */
int tenants_add(struct sm *sm, const char *who, const struct tenants_add *rq, char *err,
                size_t errlen);
/* Remove GUIDs from partition pkey: those the API added. A GUID not a member is no error
 * (a retried request finds it gone); one of ibsmd.yaml's is (TENANTS_REFUSED, nothing
 * removed). TENANTS_NOT_FOUND when the partition is neither the file's nor the API's. */
int tenants_remove(struct sm *sm, const char *who, uint16_t pkey, const uint64_t *guids,
                   unsigned nguids, char *err, size_t errlen);

/* Delete partition pkey: every member the API added leaves, and a partition of the API's own
 * goes with them. TENANTS_REFUSED for a partition ibsmd.yaml defines (nothing changed),
 * TENANTS_NOT_FOUND for none. */
int tenants_delete(struct sm *sm, const char *who, uint16_t pkey, char *err, size_t errlen);

/* Define partition pkey, or change what it is, without members (UFM's POST
 * /ufmRest/resources/pkeys/add and PUT /ufmRest/resources/pkeys/qos_conf). A partition the
 * API defines stays, members or none, until it is deleted (one created by adding members
 * alone goes with its last member). Its MTU and rate caps apply to the PathRecords on its
 * P_Key (lowered to them, as a QoS level's caps) and to its IPoIB group, and its SL to its
 * paths; a cap not given is none (the group takes ibsmd's defaults, 2048 and 10 Gb/s).
 * A partition ibsmd.yaml defines is refused (TENANTS_REFUSED); at most api_max_partitions
 * of the API's own. A live IPoIB group keeps the MTU and rate its members joined with until
 * it is recreated (its last member leaves, or the partition's IPoIB is turned off and on):
 * changing them under a joined member would break its traffic. */
struct tenants_define {
	uint16_t pkey;
	const char *name; /* NULL: kept (a new partition: "api_0xPKEY"); [A-Za-z0-9_.-], 1-63 */
	bool qos_only;    /* qos_conf: the partition must be the API's already */
	/* what the request gives; the rest is kept (a new partition's: index0 false, IPoIB on,
	 * no caps, no SL) */
	bool has_index0, index0, has_ipoib, ipoib;
	bool has_mtu, has_rate, has_sl;
	uint8_t mtu, rate, sl; /* IBA codes (mtu 1-5), SL 0-15 */
	const char *client;
};
int tenants_define(struct sm *sm, const char *who, const struct tenants_define *rq, char *err,
                   size_t errlen);

/* A partition as it runs: the file's members and the API's. */
struct tenants_member {
	uint64_t guid;      /* kind CM_GUID; 0 for the others */
	uint8_t kind;       /* enum config_member_kind: CM_GUID, CM_ALL, CM_SELF... */
	uint8_t membership; /* CM_FULL, CM_LIMITED or CM_BOTH */
	bool from_api;      /* added through this interface (else ibsmd.yaml's) */
	bool in_fabric;     /* a port (or an alias of one) the SM sees now; an API member
	                     * not in the fabric is pending */
	bool alias;         /* in the fabric as an alias GUID (a VF's) */
	uint16_t lid;       /* its port's LID (an alias's: its physical port's); 0 none */
	uint8_t port_state; /* its port's PortState (PORT_STATE_*); 0 not in the fabric */
};
struct tenants_partition {
	char name[64];
	uint16_t pkey; /* 15 bits */
	bool from_file;
	bool defined; /* the API defined it (tenants_define): it stays without members */
	bool index0, ipoib;
	/* QoS: caps on its paths (IBA codes, 0 none), its SL (has_sl), its IPoIB group's */
	uint8_t mtu_limit, rate_limit, sl, ipoib_mtu, ipoib_rate;
	bool has_sl;
	struct tenants_member *members;
	unsigned nmembers;
};
/* One partition (pkey's bit 15 ignored): TENANTS_OK and *out filled (free it with
 * tenants_partition_free), or TENANTS_NOT_FOUND / TENANTS_INVALID / TENANTS_FAILED. */
int tenants_get(struct sm *sm, uint16_t pkey, struct tenants_partition *out, char *err,
                size_t errlen);
void tenants_partition_free(struct tenants_partition *p);
/* Every partition, the file's and the API's, by P_Key: TENANTS_OK with *out (*n of them;
 * free with tenants_list_free) or TENANTS_FAILED. */
int tenants_list(struct sm *sm, struct tenants_partition **out, unsigned *n, char *err,
                 size_t errlen);
void tenants_list_free(struct tenants_partition *p, unsigned n);

/* ---- for the standby sync: the API's partitions and members as "apartition" and
 * "pmember" lines (sm/saved.h) ---- */
/* A count that moves with every change. */
uint64_t tenants_changes(const struct sm *sm);
/* Every API partition's line, then every member's, each ending in a newline. */
void tenants_each(const struct sm *sm, FILE *f);
/* A standby follows its master's lines: op '+' a line in, '-' a line out (an item leaves
 * only if the line still says what it holds). Applied to the model at once (not sent: a
 * standby programs nothing); tenants_save writes them to the state directory. */
void tenants_apply(struct sm *sm, char op, const char *line);
int tenants_save(struct sm *sm);

#endif
