/* Partitions changed at run time (sm/tenants.h): the API's members, kept apart from the
 * configuration file's in sm->tn, written to partitions-api, and merged into the running
 * configuration's partitions after the file's (tagged `api`), so that every reader of the
 * partition policy (the P_Key tables, the SA's groups and visibility, QoS) sees one policy. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sm/saved.h"
#include "sm/sm_int.h"
#include "sm/tenants.h"
#include "util/statefile.h"

#define TN_FILE "partitions-api"

/* ---- the API's members ---- */

static int item_find(const struct sm *sm, uint16_t pkey, uint64_t guid)
{
	for (uint32_t i = 0; i < sm->tn.items.n; i++)
		if (sm->tn.items.v[i].pkey == pkey && sm->tn.items.v[i].guid == guid)
			return (int)i;
	return -1;
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

int tenants_merge(struct sm *sm)
{
	route_wait(sm, true); /* the routing thread may read the partitions (their SLs) */
	strip(sm->cfg);
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
		if (line[0] == '#' || !line[0])
			continue;
		if (!sm_saved_parse_pmember(line, &m)) {
			log_warn(sm->log, "partitions",
			         "%s:%u: not \"pmember PKEY GUID full|limited 0|1 0|1\": skipped",
			         path, lineno);
			continue;
		}
		int i = item_find(sm, m.pkey, m.guid);
		struct sm_saved_pmember *slot =
		    i >= 0 ? &sm->tn.items.v[i] : vec_push(&sm->tn.items);
		if (!slot)
			break;
		*slot = m;
	}
	fclose(fp);
	log_info(sm->log, "partitions", "%s: %u partition members added at run time", path,
	         sm->tn.items.n);
	return tenants_merge(sm);
}

void tenants_free(struct sm *sm)
{
	vec_free(&sm->tn.items);
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
	       topo_alias_port(t, guid) != TOPO_NONE || (n != U64MAP_NONE && topo_is_switch(t, n));
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

static int check_add(const struct sm *sm, const struct tenants_add *rq, uint16_t *pkey, char *err,
                     size_t errlen)
{
	int rc = check_common(sm, rq->nguids, err, errlen);
	if (rc == TENANTS_OK)
		rc = check_pkey(rq->pkey, pkey, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	if (rq->membership != CM_FULL && rq->membership != CM_LIMITED) {
		snprintf(err, errlen, "membership must be full or limited");
		return TENANTS_INVALID;
	}
	const struct config_partition *pt = partition_of(sm, *pkey);
	for (unsigned i = 0; i < rq->nguids; i++) {
		uint64_t g = rq->guids[i];
		if (!g || !guid_known(&sm->topo, g)) {
			snprintf(err, errlen,
			         "GUID 0x%016" PRIx64 " is not a port, switch or alias GUID in the "
			         "fabric: nothing changed",
			         g);
			return TENANTS_INVALID;
		}
		if (file_member(pt, g)) {
			snprintf(err, errlen,
			         "GUID 0x%016" PRIx64
			         " is a member of partition \"%s\" in ibsmd.yaml: "
			         "change it there; nothing changed",
			         g, pt->name);
			return TENANTS_REFUSED;
		}
	}
	return TENANTS_OK;
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
	free(sm->tn.items.v);
	sm->tn.items.v = old;
	sm->tn.items.n = sm->tn.items.cap = nold;
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
	for (unsigned i = 0; i < rq->nguids; i++) {
		int k = item_find(sm, pkey, rq->guids[i]);
		struct sm_saved_pmember *m = k >= 0 ? &sm->tn.items.v[k] : vec_push(&sm->tn.items);
		*m = (struct sm_saved_pmember){pkey, rq->guids[i], rq->membership, rq->index0,
		                               rq->ipoib};
	}
	/* the partition's flags are the last add's: every member's line says the same */
	for (uint32_t i = 0; i < sm->tn.items.n; i++)
		if (sm->tn.items.v[i].pkey == pkey) {
			sm->tn.items.v[i].index0 = rq->index0;
			sm->tn.items.v[i].ipoib = rq->ipoib;
		}
	rc = commit(sm, old, nold, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	char what[200];
	snprintf(what, sizeof(what), "%u GUID(s) added as %s members%s (index0 %s, IPoIB %s)",
	         rq->nguids, ms_name(rq->membership), created ? ", partition created" : "",
	         rq->index0 ? "yes" : "no", rq->ipoib ? "yes" : "no");
	journal(sm, who, "add", pkey, rq->guids, rq->nguids, what);
	snprintf(err, errlen, "partition 0x%04x: %s", pkey, what);
	return TENANTS_OK;
}

int tenants_remove(struct sm *sm, const char *who, uint16_t given, const uint64_t *guids,
                   unsigned nguids, char *err, size_t errlen)
{
	uint16_t pkey;
	int rc = check_common(sm, nguids, err, errlen);
	if (rc == TENANTS_OK)
		rc = check_pkey(given, &pkey, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	const struct config_partition *pt = partition_of(sm, pkey);
	if (!pt) {
		snprintf(err, errlen, "no partition with P_Key 0x%04x", pkey);
		return TENANTS_NOT_FOUND;
	}
	for (unsigned i = 0; i < nguids; i++)
		if (file_member(pt, guids[i])) {
			snprintf(err, errlen,
			         "GUID 0x%016" PRIx64
			         " is a member of partition \"%s\" in ibsmd.yaml "
			         "and stays: remove it there; nothing changed",
			         guids[i], pt->name);
			return TENANTS_REFUSED;
		}
	uint32_t nold = sm->tn.items.n;
	struct sm_saved_pmember *old = snapshot(sm);
	if (!old) {
		snprintf(err, errlen, "out of memory: nothing changed");
		return TENANTS_FAILED;
	}
	unsigned gone = 0;
	for (unsigned i = 0; i < nguids; i++) {
		int k = item_find(sm, pkey, guids[i]);
		if (k < 0)
			continue;
		memmove(&sm->tn.items.v[k], &sm->tn.items.v[k + 1],
		        (sm->tn.items.n - (uint32_t)k - 1) * sizeof(sm->tn.items.v[0]));
		sm->tn.items.n--;
		gone++;
	}
	if (!gone) {
		free(old);
		snprintf(err, errlen, "partition 0x%04x: none of the %u GUID(s) was a member", pkey,
		         nguids);
		return TENANTS_OK;
	}
	rc = commit(sm, old, nold, err, errlen);
	if (rc != TENANTS_OK)
		return rc;
	char what[120];
	snprintf(what, sizeof(what), "%u of %u GUID(s) removed%s", gone, nguids,
	         partition_of(sm, pkey) ? "" : ", partition gone");
	journal(sm, who, "remove", pkey, guids, nguids, what);
	snprintf(err, errlen, "partition 0x%04x: %s", pkey, what);
	return TENANTS_OK;
}

/* ---- reading ---- */

static int fill(const struct sm *sm, const struct config_partition *pt,
                struct tenants_partition *out)
{
	*out = (struct tenants_partition){.pkey = pt->pkey & 0x7fff,
	                                  .from_file = !pt->api,
	                                  .index0 = pt->indx0,
	                                  .ipoib = pt->ipoib};
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
	for (uint32_t i = 0; i < sm->tn.items.n; i++)
		sm_saved_put_pmember(f, &sm->tn.items.v[i]);
}

static bool same(const struct sm_saved_pmember *a, const struct sm_saved_pmember *b)
{
	return a->pkey == b->pkey && a->guid == b->guid && a->membership == b->membership &&
	       a->index0 == b->index0 && a->ipoib == b->ipoib;
}

void tenants_apply(struct sm *sm, char op, const char *line)
{
	struct sm_saved_pmember m;
	if (!sm_saved_parse_pmember(line, &m))
		return;
	int k = item_find(sm, m.pkey, m.guid);
	if (op == '+') {
		struct sm_saved_pmember *slot =
		    k >= 0 ? &sm->tn.items.v[k] : vec_push(&sm->tn.items);
		if (!slot)
			return;
		*slot = m;
	} else if (k >= 0 && same(&sm->tn.items.v[k], &m)) {
		/* only the line it holds: a change comes as the old line out and the new one in,
		 * in either order */
		sm->tn.items.v[k] = sm->tn.items.v[--sm->tn.items.n];
	} else {
		return;
	}
	sm->tn.changes++;
	apply(sm);
}
