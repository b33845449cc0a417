/* Partitions changed at run time (sm/tenants.h): the API's members, kept apart from the
 * configuration file's in sm->tn, written to partitions-api, and merged into the running
 * configuration's partitions after the file's (tagged `api`), so that every reader of the
 * partition policy (the P_Key tables, the SA's groups and visibility, QoS) sees one policy. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mad/link_speed.h"
#include "sm/saved.h"
#include "sm/sm_int.h"
#include "sm/tenants.h"
#include "util/statefile.h"

#define TN_FILE "partitions-api"

/* ---- the API's members ---- */

/* The index's key of (pkey, guid): mixed, so that one GUID's P_Keys spread; two pairs that
 * meet on one key are told apart by item_find (the later one is found by a scan). */
static uint64_t item_key(uint16_t pkey, uint64_t guid)
{
	uint64_t k = guid * 0x9e3779b97f4a7c15ull ^ pkey;
	return k ? k : 1; /* 0 is the map's empty key */
}

static int item_find(const struct sm *sm, uint16_t pkey, uint64_t guid)
{
	uint32_t i = u64map_get(&sm->tn.index, item_key(pkey, guid));
	if (i == U64MAP_NONE)
		return -1;
	if (i < sm->tn.items.n && sm->tn.items.v[i].pkey == pkey && sm->tn.items.v[i].guid == guid)
		return (int)i;
	for (i = 0; i < sm->tn.items.n; i++) /* a collision of keys: rare, see item_key */
		if (sm->tn.items.v[i].pkey == pkey && sm->tn.items.v[i].guid == guid)
			return (int)i;
	return -1;
}

/* After items moved (a removal, an undo): every item's place anew. 0; -1 out of memory (the
 * index then finds fewer, and a later add may double an item: logged by the caller). */
static int index_rebuild(struct sm *sm)
{
	u64map_clear(&sm->tn.index);
	sm->tn.collisions = 0;
	for (uint32_t i = 0; i < sm->tn.items.n; i++) {
		uint64_t k = item_key(sm->tn.items.v[i].pkey, sm->tn.items.v[i].guid);
		if (u64map_get(&sm->tn.index, k) != U64MAP_NONE)
			sm->tn.collisions++;
		else if (u64map_put(&sm->tn.index, k, i) < 0)
			return -1;
	}
	return 0;
}

/* A new item at the end; NULL out of memory. */
static struct sm_saved_pmember *item_push(struct sm *sm, const struct sm_saved_pmember *m)
{
	struct sm_saved_pmember *slot = vec_push(&sm->tn.items);
	if (!slot)
		return NULL;
	*slot = *m;
	uint64_t k = item_key(m->pkey, m->guid);
	if (u64map_get(&sm->tn.index, k) != U64MAP_NONE) {
		sm->tn.collisions++;
	} else if (u64map_put(&sm->tn.index, k, sm->tn.items.n - 1) < 0) {
		sm->tn.items.n--;
		return NULL;
	}
	return slot;
}

/* ---- the partitions the API defined ---- */

static int part_find(const struct sm *sm, uint16_t pkey)
{
	uint32_t i = u64map_get(&sm->tn.part_index, pkey);
	return i == U64MAP_NONE ? -1 : (int)i;
}

/* After records moved: every record's place anew. 0; -1 out of memory. */
static int part_rebuild(struct sm *sm)
{
	u64map_clear(&sm->tn.part_index);
	for (uint32_t i = 0; i < sm->tn.parts.n; i++)
		if (u64map_put(&sm->tn.part_index, sm->tn.parts.v[i].pkey, i) < 0)
			return -1;
	return 0;
}

/* p in (replacing the record of its P_Key); 0, -1 out of memory (nothing changed). */
static int part_put(struct sm *sm, const struct sm_saved_partition *p)
{
	int k = part_find(sm, p->pkey);
	if (k >= 0) {
		sm->tn.parts.v[k] = *p;
		return 0;
	}
	struct sm_saved_partition *slot = vec_push(&sm->tn.parts);
	if (!slot)
		return -1;
	*slot = *p;
	if (u64map_put(&sm->tn.part_index, p->pkey, sm->tn.parts.n - 1) < 0) {
		sm->tn.parts.n--;
		return -1;
	}
	return 0;
}

/* The record of pkey out (the last one takes its place). */
static void part_del(struct sm *sm, uint16_t pkey)
{
	int k = part_find(sm, pkey);
	if (k < 0)
		return;
	uint32_t last = --sm->tn.parts.n;
	u64map_del(&sm->tn.part_index, pkey);
	if ((uint32_t)k != last) {
		sm->tn.parts.v[k] = sm->tn.parts.v[last];
		if (u64map_put(&sm->tn.part_index, sm->tn.parts.v[k].pkey, (uint32_t)k) < 0)
			part_rebuild(sm);
	}
}

/* The partition of the running configuration that holds pkey, or NULL. */
static struct config_partition *partition_of(const struct sm *sm, uint16_t pkey)
{
	for (unsigned i = 0; i < sm->cfg->npartitions; i++)
		if ((sm->cfg->partitions[i].pkey & 0x7fff) == pkey)
			return &sm->cfg->partitions[i];
	return NULL;
}

/* Drop the API's entries from the running configuration: the file's stay, as loaded. */
static void strip(struct ibsmd_config *c)
{
	unsigned np = config_file_partitions(c);
	for (unsigned i = np; i < c->npartitions; i++) {
		free(c->partitions[i].members);
		free(c->partitions[i].groups);
	}
	c->npartitions = np;
	for (unsigned i = 0; i < np; i++)
		c->partitions[i].nmembers = config_file_members(&c->partitions[i]);
}

/* One API member into the running configuration: into the file's partition of its P_Key
 * (after the file's members), or a partition of the API's own. 0; -1 out of memory. */
static int merge_one(struct sm *sm, const struct sm_saved_pmember *m)
{
	struct config_partition *pt = partition_of(sm, m->pkey);
	if (!pt) {
		pt = config_partition_add(sm->cfg);
		if (!pt)
			return -1;
		snprintf(pt->name, sizeof(pt->name), "api_0x%04x", m->pkey);
		pt->pkey = m->pkey;
		pt->api = true;
		pt->defmember = CM_FULL;
		pt->indx0 = m->index0;
		pt->ipoib = m->ipoib;
	}
	if (config_partition_member(pt, CM_GUID, m->guid, m->membership) < 0)
		return -1;
	pt->members[pt->nmembers - 1].api = true;
	return 0;
}

/* A partition the API defined into the running configuration, before any member (a P_Key
 * the file has keeps the file's: logged, the record stays for when the file drops it).
 * 0; -1 out of memory. */
static int merge_part(struct sm *sm, const struct sm_saved_partition *r)
{
	if (partition_of(sm, r->pkey)) {
		log_warn(sm->log, "partitions",
		         "P_Key 0x%04x (\"%s\", defined through the API) is ibsmd.yaml's now: "
		         "the file's partition rules; delete the API's with DELETE "
		         "/ufmRest/resources/pkeys/0x%x",
		         r->pkey, r->name, r->pkey);
		return 0;
	}
	struct config_partition *pt = config_partition_add(sm->cfg);
	if (!pt)
		return -1;
	snprintf(pt->name, sizeof(pt->name), "%s", r->name);
	pt->pkey = r->pkey;
	pt->api = true;
	pt->indx0 = r->index0;
	pt->ipoib = r->ipoib;
	if (r->mtu)
		pt->mtu_limit = pt->ipoib_mtu = r->mtu;
	if (r->rate)
		pt->rate_limit = pt->ipoib_rate = r->rate;
	if (r->sl != SM_SAVED_NO_SL) {
		pt->has_sl = true;
		pt->sl = pt->ipoib_sl = r->sl;
	}
	return 0;
}

int tenants_merge(struct sm *sm)
{
	route_wait(sm, true); /* the routing thread may read the partitions (their SLs) */
	strip(sm->cfg);
	for (uint32_t i = 0; i < sm->tn.parts.n; i++)
		if (merge_part(sm, &sm->tn.parts.v[i]) < 0) {
			log_err(
			    sm->log, "partitions",
			    "out of memory: partitions defined at run time are not all applied");
			return -1;
		}
	for (uint32_t i = 0; i < sm->tn.items.n; i++)
		if (merge_one(sm, &sm->tn.items.v[i]) < 0) {
			log_err(sm->log, "partitions",
			        "out of memory: partitions added at run time are not all applied");
			return -1;
		}
	return 0;
}

/* The running policy changed: the ports' tables that differ, and the SA's groups. */
static void apply(struct sm *sm)
{
	if (tenants_merge(sm) < 0)
		return;
	program_pkeys_now(sm);
	if (sm->state != SM_STATE_MASTER)
		return;
	for (unsigned i = 0; i < sm->nlisteners; i++)
		if (sm->listeners[i].partitions_changed)
			sm->listeners[i].partitions_changed(sm->listeners[i].ctx);
}

/* ---- the state file ---- */

int tenants_save(struct sm *sm)
{
	struct statefile sf;
	if (!sm->cfg->state_dir[0]) {
		errno = ENOENT;
		return -1;
	}
	if (statefile_begin(&sf, sm->cfg->state_dir, TN_FILE, 0644) < 0) {
		log_err(sm->log, "partitions", "cannot write %s: %s", sf.tmp, strerror(errno));
		return -1;
	}
	fprintf(sf.f, "# ibsmd: partition members added at run time (ibsa partition, the "
	              "REST API); ibsmd.yaml's are not here\n");
	tenants_each(sm, sf.f);
	if (statefile_commit(&sf) < 0) {
		log_err(sm->log, "partitions", "cannot write %s: %s", sf.path, strerror(errno));
		return -1;
	}
	return 0;
}

int tenants_load(struct sm *sm)
{
	char path[600];
	if (!sm->cfg->state_dir[0])
		return 0;
	snprintf(path, sizeof(path), "%s/%s", sm->cfg->state_dir, TN_FILE);
	statefile_discard_tmp(sm->cfg->state_dir, TN_FILE);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return errno == ENOENT ? 0 : -1;
	char line[256];
	unsigned lineno = 0;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		struct sm_saved_pmember m;
		struct sm_saved_partition pr;
		if (line[0] == '#' || !line[0])
			continue;
		if (sm_saved_parse_partition(line, &pr)) {
			if (part_put(sm, &pr) < 0)
				break;
			continue;
		}
		if (!sm_saved_parse_pmember(line, &m)) {
			log_warn(sm->log, "partitions",
			         "%s:%u: not \"pmember PKEY GUID full|limited 0|1 0|1\" nor "
			         "\"apartition PKEY 0|1 0|1 MTU RATE SL NAME\": skipped",
			         path, lineno);
			continue;
		}
		int i = item_find(sm, m.pkey, m.guid);
		if (i >= 0)
			sm->tn.items.v[i] = m;
		else if (!item_push(sm, &m))
			break;
	}
	fclose(fp);
	log_info(sm->log, "partitions",
	         "%s: %u partition(s) defined and %u member(s) added at run time", path,
	         sm->tn.parts.n, sm->tn.items.n);
	return tenants_merge(sm);
}

void tenants_free(struct sm *sm)
{
	vec_free(&sm->tn.parts);
	u64map_free(&sm->tn.part_index);
	vec_free(&sm->tn.items);
	u64map_free(&sm->tn.index);
}

/* ---- validation ---- */

static const char *ms_name(uint8_t ms)
{
	return ms == CM_LIMITED ? "limited" : ms == CM_BOTH ? "both" : "full";
}

/* The partition's P_Key as the API takes it: bit 15 (full membership) dropped. */
static int check_pkey(uint16_t given, uint16_t *pkey, char *err, size_t errlen)
{
	*pkey = given & 0x7fff;
	if (!*pkey) {
		snprintf(err, errlen, "P_Key 0x%04x is not a partition's: 0x0001 to 0x7ffe", given);
		return TENANTS_INVALID;
	}
	if (*pkey == 0x7fff) {
		snprintf(err, errlen,
		         "P_Key 0x%04x is the default partition: its members are set in "
		         "ibsmd.yaml",
		         given);
		return TENANTS_INVALID;
	}
	return TENANTS_OK;
}

static bool guid_known(const struct topo *t, uint64_t guid)
{
	uint32_t n = u64map_get(&t->by_guid, guid);
	return u64map_get(&t->by_port_guid, guid) != U64MAP_NONE ||
	       topo_alias_port(t, guid) != TOPO_NONE || topo_vport_by_guid(t, guid) != TOPO_NONE ||
	       (n != U64MAP_NONE && topo_is_switch(t, n));
}

/* Is guid one of the file's own members of pt (by GUID: classes such as "all" name no one)? */
static bool file_member(const struct config_partition *pt, uint64_t guid)
{
	for (unsigned i = 0, n = pt ? config_file_members(pt) : 0; i < n; i++)
		if (pt->members[i].kind == CM_GUID && pt->members[i].guid == guid)
			return true;
	return false;
}

/* What every change checks first: master, the GUIDs' count. */
static int check_common(const struct sm *sm, unsigned nguids, char *err, size_t errlen)
{
	if (sm->state != SM_STATE_MASTER) {
		snprintf(err, errlen,
		         "this SM is %s, not the master: partitions are changed at the master",
		         sm_state_name(sm->state));
		return TENANTS_NOT_MASTER;
	}
	if (!nguids || nguids > TENANTS_MAX_GUIDS) {
		snprintf(err, errlen, "%s GUIDs given: 1 to %u per request",
		         nguids ? "too many" : "no", TENANTS_MAX_GUIDS);
		return TENANTS_INVALID;
	}
	if (!sm->cfg->state_dir[0]) {
		snprintf(err, errlen, "no state_dir: a change could not survive a restart");
		return TENANTS_FAILED;
	}
	return TENANTS_OK;
}

/* May client park `more` GUIDs the fabric does not show? Its pending ones are counted now:
 * a GUID stops being pending when it appears, which no add or remove sees. One pass over
 * the API's members per add that brings unknown GUIDs. */
static int check_pending(const struct sm *sm, const char *client, unsigned more, char *err,
                         size_t errlen)
{
	unsigned max = sm->cfg->api_max_pending, have = 0;
	const char *c = client ? client : "";
	for (uint32_t i = 0; max && i < sm->tn.items.n; i++) {
		const struct sm_saved_pmember *m = &sm->tn.items.v[i];
		have += !strcmp(m->client, c) && !guid_known(&sm->topo, m->guid);
	}
	if (have + more <= max)
		return TENANTS_OK;
	if (!max)
		snprintf(err, errlen,
		         "%u GUID(s) not in the fabric, and api_max_pending is 0 (a GUID must be "
		         "a port, switch or alias GUID in the fabric): nothing changed",
		         more);
	else
		snprintf(err, errlen,
		         "%s has %u GUID(s) pending (not in the fabric yet); %u more would pass "
		         "api_max_pending (%u): remove pending ones first; nothing changed",
		         c[0] ? c : "this client", have, more, max);
	return TENANTS_REFUSED;
}

/* May the API have one more partition of its own (pkey has none yet)? */
static int check_room(const struct sm *sm, uint16_t pkey, char *err, size_t errlen)
{
	unsigned have = sm->cfg->npartitions - config_file_partitions(sm->cfg);
	if (partition_of(sm, pkey) || have < sm->cfg->api_max_partitions)
		return TENANTS_OK;
	snprintf(err, errlen,
	         "P_Key 0x%04x would be partition %u of the API's own, past api_max_partitions "
	         "(%u): delete one first; nothing changed",
	         pkey, have + 1, sm->cfg->api_max_partitions);
	return TENANTS_REFUSED;
}

static int check_add(const struct sm *sm, const struct tenants_add *rq, uint16_t *pkey, char *err,
                     size_t errlen)
{
	int rc = check_common(sm, rq->nguids, err, errlen);
	if (rc == TENANTS_OK)
		rc = check_pkey(rq->pkey, pkey, err, errlen);
	if (rc == TENANTS_OK)
		rc = check_room(sm, *pkey, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	for (unsigned i = 0; i < (rq->memberships ? rq->nguids : 1); i++) {
		uint8_t ms = rq->memberships ? rq->memberships[i] : rq->membership;
		if (ms != CM_FULL && ms != CM_LIMITED) {
			snprintf(err, errlen, "membership must be full or limited");
			return TENANTS_INVALID;
		}
	}
	const struct config_partition *pt = partition_of(sm, *pkey);
	unsigned unknown = 0;
	for (unsigned i = 0; i < rq->nguids; i++) {
		uint64_t g = rq->guids[i];
		if (!g || g == UINT64_MAX) {
			snprintf(err, errlen,
			         "GUID 0x%016" PRIx64 " is no port's GUID (0 and all ones are "
			         "reserved): nothing changed",
			         g);
			return TENANTS_INVALID;
		}
		if (!guid_known(&sm->topo, g) && item_find(sm, *pkey, g) < 0)
			unknown++;
		if (file_member(pt, g)) {
			snprintf(err, errlen,
			         "GUID 0x%016" PRIx64
			         " is a member of partition \"%s\" in ibsmd.yaml: "
			         "change it there; nothing changed",
			         g, pt->name);
			return TENANTS_REFUSED;
		}
	}
	return unknown ? check_pending(sm, rq->client, unknown, err, errlen) : TENANTS_OK;
}

/* ---- changes ---- */

/* The journal's record of a change: every one, not rate limited (an audit trail that drops
 * entries is none; the changes come from authenticated clients, and each costs an fsync,
 * which bounds how fast they can come). */
static void journal(struct sm *sm, const char *who, const char *action, uint16_t pkey,
                    const uint64_t *guids, unsigned n, const char *what)
{
	char pk[8], list[80] = "", cnt[12];
	size_t at = 0;
	for (unsigned i = 0; i < n && at + 20 < sizeof(list); i++)
		at += (size_t)snprintf(list + at, sizeof(list) - at, "%s0x%016" PRIx64,
		                       i ? "," : "", guids[i]);
	snprintf(pk, sizeof(pk), "0x%04x", pkey);
	snprintf(cnt, sizeof(cnt), "%u", n);
	const char *kv[] = {"who",   who,  "action",     action, "pkey", pk,
	                    "guids", list, "guid_count", cnt,    NULL};
	sm_audit(sm, LOGL_NOTICE, "partition_changed", kv, "partition 0x%04x: %s by %s: %s", pkey,
	         action, who, what);
}

/* The members back as they were (old: snapshot()'s copy, taken over). */
static void commit_undo(struct sm *sm, struct sm_saved_pmember *old, uint32_t nold)
{
	free(sm->tn.items.v);
	sm->tn.items.v = old;
	sm->tn.items.n = sm->tn.items.cap = nold;
	if (index_rebuild(sm) < 0)
		log_err(sm->log, "partitions", "out of memory: the members' index is incomplete");
}

/* Save; on failure put the members back as they were. */
static int commit(struct sm *sm, struct sm_saved_pmember *old, uint32_t nold, char *err,
                  size_t errlen)
{
	if (tenants_save(sm) == 0) {
		free(old);
		sm->tn.changes++;
		apply(sm);
		return TENANTS_OK;
	}
	snprintf(err, errlen, "cannot write %s/%s (%s): nothing changed", sm->cfg->state_dir,
	         TN_FILE, strerror(errno));
	commit_undo(sm, old, nold);
	return TENANTS_FAILED;
}

/* A copy of the members, to go back to. NULL out of memory. */
static struct sm_saved_pmember *snapshot(const struct sm *sm)
{
	size_t n = sm->tn.items.n ? sm->tn.items.n : 1;
	struct sm_saved_pmember *c = malloc(n * sizeof(*c));
	if (c && sm->tn.items.n)
		memcpy(c, sm->tn.items.v, sm->tn.items.n * sizeof(*c));
	return c;
}

/* The items marked (GUID 0) out, in one pass, and the index anew. 0; -1 out of memory. */
static int compact(struct sm *sm)
{
	uint32_t to = 0;
	for (uint32_t i = 0; i < sm->tn.items.n; i++)
		if (sm->tn.items.v[i].guid)
			sm->tn.items.v[to++] = sm->tn.items.v[i];
	sm->tn.items.n = to;
	return index_rebuild(sm);
}

/* A removal's start: the members as they are, to go back to (*nold of them); NULL out of
 * memory, said in err. */
static struct sm_saved_pmember *begin_change(const struct sm *sm, uint32_t *nold, char *err,
                                             size_t errlen)
{
	*nold = sm->tn.items.n;
	struct sm_saved_pmember *old = snapshot(sm);
	if (!old)
		snprintf(err, errlen, "out of memory: nothing changed");
	return old;
}

/* The items marked out and the change saved; on any failure everything as it was. */
static int drop_marked(struct sm *sm, struct sm_saved_pmember *old, uint32_t nold, char *err,
                       size_t errlen)
{
	if (compact(sm) < 0) {
		commit_undo(sm, old, nold);
		snprintf(err, errlen, "out of memory: nothing changed");
		return TENANTS_FAILED;
	}
	return commit(sm, old, nold, err, errlen);
}

/* What a removal or a deletion checks first: the SM, the P_Key, the partition. */
static int target_partition(const struct sm *sm, uint16_t given, unsigned nguids, uint16_t *pkey,
                            const struct config_partition **pt, char *err, size_t errlen)
{
	int rc = check_common(sm, nguids, err, errlen);
	if (rc == TENANTS_OK)
		rc = check_pkey(given, pkey, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	*pt = partition_of(sm, *pkey);
	if (!*pt) {
		snprintf(err, errlen, "no partition with P_Key 0x%04x", *pkey);
		return TENANTS_NOT_FOUND;
	}
	return TENANTS_OK;
}

/* A set's first half: pkey's API members that rq does not name leave (*left of them). */
static int drop_others(struct sm *sm, uint16_t pkey, const struct tenants_add *rq, unsigned *left)
{
	struct u64map named = {0};
	int rc = 0;
	for (unsigned i = 0; i < rq->nguids && rc == 0; i++)
		rc = u64map_put(&named, rq->guids[i], i);
	for (uint32_t i = 0; i < sm->tn.items.n && rc == 0; i++) {
		struct sm_saved_pmember *m = &sm->tn.items.v[i];
		if (m->pkey == pkey && u64map_get(&named, m->guid) == U64MAP_NONE) {
			m->guid = 0;
			(*left)++;
		}
	}
	u64map_free(&named);
	return rc < 0 ? -1 : compact(sm);
}

int tenants_add(struct sm *sm, const char *who, const struct tenants_add *rq, char *err,
                size_t errlen)
{
	uint16_t pkey;
	int rc = check_add(sm, rq, &pkey, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	uint32_t nold = sm->tn.items.n;
	struct sm_saved_pmember *old = snapshot(sm);
	if (!old || vec_reserve(&sm->tn.items, (uint64_t)nold + rq->nguids) < 0) {
		free(old);
		snprintf(err, errlen, "out of memory: nothing changed");
		return TENANTS_FAILED;
	}
	bool created = !partition_of(sm, pkey);
	unsigned pending = 0, left = 0;
	if (rq->replace && drop_others(sm, pkey, rq, &left) < 0) {
		commit_undo(sm, old, nold);
		snprintf(err, errlen, "out of memory: nothing changed");
		return TENANTS_FAILED;
	}
	for (unsigned i = 0; i < rq->nguids; i++) {
		uint8_t ms = rq->memberships ? rq->memberships[i] : rq->membership;
		struct sm_saved_pmember m = {pkey, rq->guids[i], ms, rq->index0, rq->ipoib, ""};
		snprintf(m.client, sizeof(m.client), "%s", rq->client ? rq->client : "");
		pending += !guid_known(&sm->topo, m.guid);
		int k = item_find(sm, pkey, rq->guids[i]);
		if (k >= 0)
			sm->tn.items.v[k] = m;
		else if (!item_push(sm, &m)) { /* reserved above: only the index can fail */
			commit_undo(sm, old, nold);
			snprintf(err, errlen, "out of memory: nothing changed");
			return TENANTS_FAILED;
		}
	}
	/* the partition's flags are the last add's: every member's line says the same, and
	 * the partition's own if the API defined it */
	for (uint32_t i = 0; i < sm->tn.items.n; i++)
		if (sm->tn.items.v[i].pkey == pkey) {
			sm->tn.items.v[i].index0 = rq->index0;
			sm->tn.items.v[i].ipoib = rq->ipoib;
		}
	int pi = part_find(sm, pkey);
	struct sm_saved_partition was =
	    pi >= 0 ? sm->tn.parts.v[pi] : (struct sm_saved_partition){0};
	if (pi >= 0) {
		sm->tn.parts.v[pi].index0 = rq->index0;
		sm->tn.parts.v[pi].ipoib = rq->ipoib;
	}
	rc = commit(sm, old, nold, err, errlen);
	if (rc != TENANTS_OK) {
		if (pi >= 0)
			sm->tn.parts.v[pi] = was;
		return rc;
	}
	char what[200];
	char pend[64] = "";
	if (pending)
		snprintf(pend, sizeof(pend), ", %u pending until the fabric shows them", pending);
	char others[48] = "";
	if (rq->replace)
		snprintf(others, sizeof(others), ", %u other(s) removed", left);
	snprintf(what, sizeof(what), "%u GUID(s) %s as %s members%s%s (index0 %s, IPoIB %s)%s",
	         rq->nguids, rq->replace ? "set" : "added",
	         rq->memberships ? "their own" : ms_name(rq->membership), others,
	         created ? ", partition created" : "", rq->index0 ? "yes" : "no",
	         rq->ipoib ? "yes" : "no", pend);
	journal(sm, who, rq->replace ? "set" : "add", pkey, rq->guids, rq->nguids, what);
	snprintf(err, errlen, "partition 0x%04x: %s", pkey, what);
	return TENANTS_OK;
}

int tenants_remove(struct sm *sm, const char *who, uint16_t given, const uint64_t *guids,
                   unsigned nguids, char *err, size_t errlen)
{
	uint16_t pkey;
	const struct config_partition *pt;
	int rc = target_partition(sm, given, nguids, &pkey, &pt, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	for (unsigned i = 0; i < nguids; i++)
		if (file_member(pt, guids[i])) {
			snprintf(err, errlen,
			         "GUID 0x%016" PRIx64
			         " is a member of partition \"%s\" in ibsmd.yaml "
			         "and stays: remove it there; nothing changed",
			         guids[i], pt->name);
			return TENANTS_REFUSED;
		}
	uint32_t nold;
	struct sm_saved_pmember *old = begin_change(sm, &nold, err, errlen);
	if (!old)
		return TENANTS_FAILED;
	unsigned gone = 0;
	for (unsigned i = 0; i < nguids; i++) {
		int k = item_find(sm, pkey, guids[i]);
		if (k >= 0 && sm->tn.items.v[k].guid) {
			sm->tn.items.v[k].guid = 0; /* marked; compacted below in one pass */
			gone++;
		}
	}
	if (!gone) {
		free(old);
		snprintf(err, errlen, "partition 0x%04x: none of the %u GUID(s) was a member", pkey,
		         nguids);
		return TENANTS_OK;
	}
	rc = drop_marked(sm, old, nold, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	char what[120];
	snprintf(what, sizeof(what), "%u of %u GUID(s) removed%s", gone, nguids,
	         partition_of(sm, pkey) ? "" : ", partition gone");
	journal(sm, who, "remove", pkey, guids, nguids, what);
	snprintf(err, errlen, "partition 0x%04x: %s", pkey, what);
	return TENANTS_OK;
}

/* Save a change of the records alone; on failure put back was (or drop a new one). */
static int commit_part(struct sm *sm, uint16_t pkey, const struct sm_saved_partition *was,
                       char *err, size_t errlen)
{
	if (tenants_save(sm) == 0) {
		sm->tn.changes++;
		apply(sm);
		return TENANTS_OK;
	}
	snprintf(err, errlen, "cannot write %s/%s (%s): nothing changed", sm->cfg->state_dir,
	         TN_FILE, strerror(errno));
	if (!was)
		part_del(sm, pkey);
	else if (part_put(sm, was) < 0)
		log_err(sm->log, "partitions", "out of memory: partition 0x%04x lost", pkey);
	return TENANTS_FAILED;
}

/* The API's definition of a P_Key ibsmd.yaml has taken since: only the record goes (the
 * API's members of the file's partition stay, as any). */
static int forget_definition(struct sm *sm, const char *who, uint16_t pkey, char *err,
                             size_t errlen)
{
	struct sm_saved_partition was = sm->tn.parts.v[part_find(sm, pkey)];
	part_del(sm, pkey);
	int rc = commit_part(sm, pkey, &was, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	const char *what = "the API's definition deleted; ibsmd.yaml's partition stays";
	journal(sm, who, "delete", pkey, NULL, 0, what);
	snprintf(err, errlen, "partition 0x%04x: %s", pkey, what);
	return TENANTS_OK;
}

/* What a definition gives, checked. */
static int check_define(const struct sm *sm, const struct tenants_define *rq, uint16_t *pkey,
                        char *err, size_t errlen)
{
	int rc = check_common(sm, 1, err, errlen);
	if (rc == TENANTS_OK)
		rc = check_pkey(rq->pkey, pkey, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	if (rq->name && !sm_saved_name_ok(rq->name)) {
		snprintf(err, errlen,
		         "partition name \"%.64s\": 1 to 63 of letters, digits, '_', '.', '-'",
		         rq->name);
		return TENANTS_INVALID;
	}
	if ((rq->has_mtu && (rq->mtu < 1 || rq->mtu > 5)) ||
	    (rq->has_rate && !mad_rate_mbps(rq->rate)) || (rq->has_sl && rq->sl > 15)) {
		snprintf(err, errlen, "MTU, rate or SL out of range: nothing changed");
		return TENANTS_INVALID;
	}
	const struct config_partition *pt = partition_of(sm, *pkey);
	if (pt && !pt->api) {
		snprintf(err, errlen,
		         "partition 0x%04x \"%s\" is defined in ibsmd.yaml: change it there; "
		         "nothing changed",
		         *pkey, pt->name);
		return TENANTS_REFUSED;
	}
	if (!pt && rq->qos_only) {
		snprintf(err, errlen, "no partition with P_Key 0x%04x", *pkey);
		return TENANTS_NOT_FOUND;
	}
	return check_room(sm, *pkey, err, errlen);
}

/* The record a definition starts from: the partition's own, or what it runs as now (a
 * partition the API made by adding members), or a new one's defaults. */
static struct sm_saved_partition definition_of(const struct sm *sm, uint16_t pkey)
{
	int k = part_find(sm, pkey);
	if (k >= 0)
		return sm->tn.parts.v[k];
	struct sm_saved_partition r = {.pkey = pkey, .ipoib = true, .sl = SM_SAVED_NO_SL};
	snprintf(r.name, sizeof(r.name), "api_0x%04x", pkey);
	const struct config_partition *pt = partition_of(sm, pkey);
	if (pt) {
		r.index0 = pt->indx0;
		r.ipoib = pt->ipoib;
	}
	return r;
}

int tenants_define(struct sm *sm, const char *who, const struct tenants_define *rq, char *err,
                   size_t errlen)
{
	uint16_t pkey;
	int rc = check_define(sm, rq, &pkey, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	bool created = !partition_of(sm, pkey), had = part_find(sm, pkey) >= 0;
	struct sm_saved_partition was = definition_of(sm, pkey), r = was;
	if (rq->name)
		snprintf(r.name, sizeof(r.name), "%s", rq->name);
	if (rq->has_index0)
		r.index0 = rq->index0;
	if (rq->has_ipoib)
		r.ipoib = rq->ipoib;
	if (rq->has_mtu)
		r.mtu = rq->mtu;
	if (rq->has_rate)
		r.rate = rq->rate;
	if (rq->has_sl)
		r.sl = rq->sl;
	snprintf(r.client, sizeof(r.client), "%s", rq->client ? rq->client : "");
	if (part_put(sm, &r) < 0) {
		snprintf(err, errlen, "out of memory: nothing changed");
		return TENANTS_FAILED;
	}
	for (uint32_t i = 0; i < sm->tn.items.n; i++) /* the members' lines say the same */
		if (sm->tn.items.v[i].pkey == pkey) {
			sm->tn.items.v[i].index0 = r.index0;
			sm->tn.items.v[i].ipoib = r.ipoib;
		}
	rc = commit_part(sm, pkey, had ? &was : NULL, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	char what[200], mtu[16] = "none", rate[16] = "none", sl[8] = "none";
	if (r.mtu)
		snprintf(mtu, sizeof(mtu), "%u", 128u << r.mtu);
	if (r.rate)
		snprintf(rate, sizeof(rate), "%s Gb/s", mad_rate_name(r.rate));
	if (r.sl != SM_SAVED_NO_SL)
		snprintf(sl, sizeof(sl), "%u", r.sl);
	snprintf(what, sizeof(what),
	         "%s \"%s\" (index0 %s, IPoIB %s, MTU limit %s, rate limit %s, SL %s)",
	         created ? "partition created" : "partition changed", r.name,
	         r.index0 ? "yes" : "no", r.ipoib ? "yes" : "no", mtu, rate, sl);
	journal(sm, who, rq->qos_only ? "qos" : "define", pkey, NULL, 0, what);
	snprintf(err, errlen, "partition 0x%04x: %s", pkey, what);
	return TENANTS_OK;
}

int tenants_delete(struct sm *sm, const char *who, uint16_t given, char *err, size_t errlen)
{
	uint16_t pkey;
	const struct config_partition *pt;
	int rc = target_partition(sm, given, 1, &pkey, &pt, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	if (!pt->api && part_find(sm, pkey) >= 0)
		return forget_definition(sm, who, pkey, err, errlen);
	if (!pt->api) {
		snprintf(err, errlen,
		         "partition 0x%04x \"%s\" is defined in ibsmd.yaml: remove it there "
		         "(its members added through the API can be removed); nothing changed",
		         pkey, pt->name);
		return TENANTS_REFUSED;
	}
	uint32_t nold;
	struct sm_saved_pmember *old = begin_change(sm, &nold, err, errlen);
	if (!old)
		return TENANTS_FAILED;
	unsigned gone = 0;
	for (uint32_t i = 0; i < sm->tn.items.n; i++)
		if (sm->tn.items.v[i].pkey == pkey) {
			sm->tn.items.v[i].guid = 0;
			gone++;
		}
	int pi = part_find(sm, pkey);
	struct sm_saved_partition was =
	    pi >= 0 ? sm->tn.parts.v[pi] : (struct sm_saved_partition){0};
	part_del(sm, pkey);
	rc = drop_marked(sm, old, nold, err, errlen);
	if (rc != TENANTS_OK) {
		if (pi >= 0 && part_put(sm, &was) < 0)
			log_err(sm->log, "partitions", "out of memory: partition 0x%04x lost",
			        pkey);
		return rc;
	}
	char what[80];
	snprintf(what, sizeof(what), "partition deleted with its %u member(s)", gone);
	journal(sm, who, "delete", pkey, NULL, 0, what);
	snprintf(err, errlen, "partition 0x%04x: %s", pkey, what);
	return TENANTS_OK;
}

/* ---- reading ---- */

/* The port a member's GUID names (a port GUID, a switch's port 0, an alias's physical
 * port): its LID and state into o. */
static void where(const struct topo *t, uint64_t guid, struct tenants_member *o)
{
	uint32_t p = u64map_get(&t->by_port_guid, guid), n = u64map_get(&t->by_guid, guid);
	if (p == U64MAP_NONE && n != U64MAP_NONE && topo_is_switch(t, n))
		p = t->nodes[n].first_port;
	if (p == U64MAP_NONE || p == TOPO_NONE) {
		p = topo_alias_port(t, guid);
		o->alias = p != TOPO_NONE;
	}
	uint32_t v = p == TOPO_NONE ? topo_vport_by_guid(t, guid) : TOPO_NONE;
	if (v != TOPO_NONE) { /* a vport's: its own LID (or its port's) and state */
		o->alias = true;
		o->lid = topo_vport_lid(t, v);
		o->port_state = t->vports.v[v].state;
		return;
	}
	if (p == TOPO_NONE || p >= t->nports)
		return;
	o->lid = t->ports[topo_lid_port(t, p)].lid;
	o->port_state = t->ports[p].pi.port_state;
}

static int fill(const struct sm *sm, const struct config_partition *pt,
                struct tenants_partition *out)
{
	*out = (struct tenants_partition){.pkey = pt->pkey & 0x7fff,
	                                  .from_file = !pt->api,
	                                  .defined = pt->api && part_find(sm, pt->pkey) >= 0,
	                                  .index0 = pt->indx0,
	                                  .ipoib = pt->ipoib,
	                                  .mtu_limit = pt->mtu_limit,
	                                  .rate_limit = pt->rate_limit,
	                                  .sl = pt->sl,
	                                  .has_sl = pt->has_sl,
	                                  .ipoib_mtu = pt->ipoib_mtu,
	                                  .ipoib_rate = pt->ipoib_rate};
	snprintf(out->name, sizeof(out->name), "%s", pt->name);
	out->members = calloc(pt->nmembers ? pt->nmembers : 1, sizeof(*out->members));
	if (!out->members)
		return -1;
	for (unsigned i = 0; i < pt->nmembers; i++) {
		const struct config_member *m = &pt->members[i];
		struct tenants_member *o = &out->members[out->nmembers++];
		o->guid = m->kind == CM_GUID ? m->guid : 0;
		o->kind = m->kind;
		o->membership = m->membership ? m->membership : pt->defmember;
		o->from_api = m->api;
		o->in_fabric = m->kind != CM_GUID || guid_known(&sm->topo, m->guid);
		if (m->kind == CM_GUID && o->in_fabric)
			where(&sm->topo, m->guid, o);
	}
	return 0;
}

int tenants_get(struct sm *sm, uint16_t given, struct tenants_partition *out, char *err,
                size_t errlen)
{
	uint16_t pkey = given & 0x7fff;
	const struct config_partition *pt = pkey ? partition_of(sm, pkey) : NULL;
	if (!pkey) {
		snprintf(err, errlen, "P_Key 0x%04x is not a partition's", given);
		return TENANTS_INVALID;
	}
	if (!pt) {
		snprintf(err, errlen, "no partition with P_Key 0x%04x", pkey);
		return TENANTS_NOT_FOUND;
	}
	if (fill(sm, pt, out) < 0) {
		snprintf(err, errlen, "out of memory");
		return TENANTS_FAILED;
	}
	return TENANTS_OK;
}

void tenants_partition_free(struct tenants_partition *p)
{
	free(p->members);
	p->members = NULL;
	p->nmembers = 0;
}

static int by_pkey(const void *a, const void *b)
{
	const struct tenants_partition *x = a, *y = b;
	return (int)x->pkey - (int)y->pkey;
}

int tenants_list(struct sm *sm, struct tenants_partition **out, unsigned *n, char *err,
                 size_t errlen)
{
	unsigned np = sm->cfg->npartitions;
	*n = 0;
	*out = calloc(np ? np : 1, sizeof(**out));
	if (!*out) {
		snprintf(err, errlen, "out of memory");
		return TENANTS_FAILED;
	}
	for (unsigned i = 0; i < np; i++) {
		if (fill(sm, &sm->cfg->partitions[i], &(*out)[i]) < 0) {
			tenants_list_free(*out, i);
			*out = NULL;
			snprintf(err, errlen, "out of memory");
			return TENANTS_FAILED;
		}
	}
	qsort(*out, np, sizeof(**out), by_pkey);
	*n = np;
	return TENANTS_OK;
}

void tenants_list_free(struct tenants_partition *p, unsigned n)
{
	for (unsigned i = 0; p && i < n; i++)
		tenants_partition_free(&p[i]);
	free(p);
}

/* ---- the standby sync ---- */

uint64_t tenants_changes(const struct sm *sm)
{
	return sm->tn.changes;
}

void tenants_each(const struct sm *sm, FILE *f)
{
	for (uint32_t i = 0; i < sm->tn.parts.n; i++)
		sm_saved_put_partition(f, &sm->tn.parts.v[i]);
	for (uint32_t i = 0; i < sm->tn.items.n; i++)
		sm_saved_put_pmember(f, &sm->tn.items.v[i]);
}

static bool same(const struct sm_saved_pmember *a, const struct sm_saved_pmember *b)
{
	return a->pkey == b->pkey && a->guid == b->guid && a->membership == b->membership &&
	       a->index0 == b->index0 && a->ipoib == b->ipoib && !strcmp(a->client, b->client);
}

/* A standby's "apartition" line: in, or out if it still says what the record holds. */
static void apply_part(struct sm *sm, char op, const struct sm_saved_partition *r)
{
	int k = part_find(sm, r->pkey);
	if (op == '+') {
		if (part_put(sm, r) < 0)
			return;
	} else if (k >= 0) {
		struct sm_saved_partition h = sm->tn.parts.v[k];
		if (h.index0 != r->index0 || h.ipoib != r->ipoib || h.mtu != r->mtu ||
		    h.rate != r->rate || h.sl != r->sl || strcmp(h.name, r->name) ||
		    strcmp(h.client, r->client))
			return;
		part_del(sm, r->pkey);
	} else {
		return;
	}
	sm->tn.changes++;
	apply(sm);
}

void tenants_apply(struct sm *sm, char op, const char *line)
{
	struct sm_saved_pmember m;
	struct sm_saved_partition r;
	if (sm_saved_parse_partition(line, &r)) {
		apply_part(sm, op, &r);
		return;
	}
	if (!sm_saved_parse_pmember(line, &m))
		return;
	int k = item_find(sm, m.pkey, m.guid);
	if (op == '+') {
		if (k >= 0)
			sm->tn.items.v[k] = m;
		else if (!item_push(sm, &m))
			return;
	} else if (k >= 0 && same(&sm->tn.items.v[k], &m)) {
		/* only the line it holds: a change comes as the old line out and the new one in,
		 * in either order */
		uint32_t last = --sm->tn.items.n;
		if ((uint32_t)k != last)
			sm->tn.items.v[k] = sm->tn.items.v[last];
		const struct sm_saved_pmember *mv = &sm->tn.items.v[k];
		bool ok = !sm->tn.collisions; /* else an entry may stand for either item */
		if (ok)
			u64map_del(&sm->tn.index, item_key(m.pkey, m.guid));
		if (ok && (uint32_t)k != last)
			ok = u64map_put(&sm->tn.index, item_key(mv->pkey, mv->guid), (uint32_t)k) ==
			     0;
		if (!ok)
			index_rebuild(sm);
	} else {
		return;
	}
	sm->tn.changes++;
	apply(sm);
}
