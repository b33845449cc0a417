/* LID assignment. The SM's own port first; every port keeps the LID it had (last sweep, the
 * guid2lid file, or what it holds on the fabric) when that LID is valid: in range, aligned to
 * the port's 2^LMC block and not taken; the rest get the lowest free aligned block. The
 * guid2lid file keeps LIDs across restarts and is written atomically (write, fsync, rename). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sm/sm_int.h"
#include "util/statefile.h"

struct assign {
	struct sm *sm;
	uint32_t *owner;    /* LID -> port index this sweep */
	uint64_t *reserved; /* LID -> GUID the state file keeps it for */
	uint32_t unowned;   /* every LID from lid_min below it has an owner: where a search
	                     * for a free block starts (from lid_min each time was quadratic:
	                     * 40,000 fresh ports scanned 870 million LIDs) */
};

static uint8_t want_lmc(const struct sm *sm, uint32_t port)
{
	bool sw = topo_is_switch(&sm->topo, sm->topo.ports[port].node);
	return sw && !sm->cfg->lmc_esp0 ? 0 : sm->cfg->lmc;
}

static uint64_t port_key(const struct topo *t, uint32_t port)
{
	const struct topo_port *p = &t->ports[port];
	return topo_is_switch(t, p->node) ? t->nodes[p->node].guid : p->guid;
}

static bool valid_block(const struct ibsmd_config *c, uint32_t lid, uint8_t lmc)
{
	uint32_t n = 1u << lmc;
	return lid >= c->lid_min && lid + n - 1 <= c->lid_max && (lid & (n - 1)) == 0;
}

static bool block_free(const struct assign *a, uint32_t lid, uint8_t lmc, uint64_t guid,
                       bool respect_reserved)
{
	for (uint32_t l = lid; l < lid + (1u << lmc); l++) {
		if (a->owner[l] != TOPO_NONE)
			return false;
		if (respect_reserved && a->reserved[l] && a->reserved[l] != guid)
			return false;
	}
	return true;
}

static void take(struct assign *a, uint32_t port, uint32_t lid, uint8_t lmc)
{
	for (uint32_t l = lid; l < lid + (1u << lmc); l++)
		a->owner[l] = port;
	while (a->unowned < TOPO_LID_COUNT && a->owner[a->unowned] != TOPO_NONE)
		a->unowned++;
	topo_assign_lid(&a->sm->topo, port, (uint16_t)lid, lmc);
}

/* The first of these candidates that is valid and free. */
static bool try_keep(struct assign *a, uint32_t port, uint32_t lid, bool respect_reserved)
{
	uint8_t lmc = want_lmc(a->sm, port);
	uint64_t guid = port_key(&a->sm->topo, port);
	if (!lid || !valid_block(a->sm->cfg, lid, lmc) ||
	    !block_free(a, lid, lmc, guid, respect_reserved))
		return false;
	take(a, port, lid, lmc);
	return true;
}

static bool allocate(struct assign *a, uint32_t port)
{
	const struct ibsmd_config *c = a->sm->cfg;
	uint8_t lmc = want_lmc(a->sm, port);
	uint32_t step = 1u << lmc;
	uint64_t guid = port_key(&a->sm->topo, port);
	uint32_t from = c->lid_min > a->unowned ? c->lid_min : a->unowned;
	for (int pass = 0; pass < 2; pass++) {
		uint32_t first = (from + step - 1) & ~(step - 1);
		for (uint32_t lid = first; lid + step - 1 <= c->lid_max; lid += step) {
			if (block_free(a, lid, lmc, guid, pass == 0)) {
				take(a, port, lid, lmc);
				return true;
			}
		}
	}
	return false;
}

/* A vport's own LID (it asked for one, LIDRequired): kept as a port's is (this sweep's, the
 * state file's, what it holds), else the lowest free; the others use their port's. In
 * guid2lid by the vport's GUID, so that restarts and standbys keep it. The number that got
 * none. */
static uint32_t assign_vport_lids(struct assign *a)
{
	struct sm *sm = a->sm;
	struct topo *t = &sm->topo;
	const struct ibsmd_config *c = sm->cfg;
	uint32_t failed = 0, capped = 0;
	/* LIDs taken per port: a host's VFs (its root makes them) cannot eat the LID space */
	struct u64map per_port = {0};
	for (uint32_t v = 0; v < t->vports.n; v++) {
		const struct topo_vport *vp = &t->vports.v[v];
		if (!vp->lid_required || !t->ports[vp->port].lid) {
			topo_vport_assign_lid(t, v, 0);
			continue;
		}
		if (u64map_count(&per_port, vp->port) >= c->virt_max_lids_per_port) {
			topo_vport_assign_lid(t, v, 0);
			capped++;
			continue;
		}
		uint32_t kept = u64map_get(&sm->guid2lid, vp->guid);
		uint32_t cands[3] = {vp->lid, kept == U64MAP_NONE ? 0 : kept, vp->hw_lid};
		uint32_t lid = 0;
		for (unsigned i = 0; i < 3 && !lid; i++)
			if (cands[i] && valid_block(c, cands[i], 0) &&
			    block_free(a, cands[i], 0, vp->guid, i == 2))
				lid = cands[i];
		/* the lowest free, a LID the state file keeps for a GUID not here last */
		for (int pass = 0; pass < 2 && !lid; pass++)
			for (uint32_t l = c->lid_min > a->unowned ? c->lid_min : a->unowned;
			     !lid && l <= c->lid_max; l++)
				if (block_free(a, l, 0, vp->guid, pass == 0))
					lid = l;
		if (!lid || topo_vport_assign_lid(t, v, (uint16_t)lid) < 0) {
			topo_vport_assign_lid(t, v, 0); /* the one it had may be another's now */
			failed++;
			continue;
		}
		a->owner[lid] = t->nports + v; /* not a port's, and not TOPO_NONE */
		u64map_count_add(&per_port, vp->port, 1);
		if (u64map_get(&sm->guid2lid, vp->guid) != lid) {
			u64map_put(&sm->guid2lid, vp->guid, lid);
			sm->guid2lid_dirty = true;
			sm->guid2lid_changes++;
		}
	}
	u64map_free(&per_port);
	if (failed)
		log_err(sm->log, "lids",
		        "%u vport(s) that ask for a LID of their own got none: the range %u-%u is "
		        "full; widen lid_min/lid_max",
		        failed, c->lid_min, c->lid_max);
	if (capped)
		log_rl(sm->log, &sm->vp.rl, LOGL_WARN, "lids",
		       "%u vport(s) got no LID of their own: their ports' VFs hold "
		       "virt_max_lids_per_port (%u) already; they answer to no LID",
		       capped, c->virt_max_lids_per_port);
	return failed;
}

int lids_assign(struct sm *sm)
{
	struct topo *t = &sm->topo;
	struct assign a = {.sm = sm, .unowned = sm->cfg->lid_min};
	uint64_t changes0 = sm->guid2lid_changes;
	a.owner = malloc(sizeof(uint32_t) * TOPO_LID_COUNT);
	a.reserved = calloc(TOPO_LID_COUNT, sizeof(uint64_t));
	if (!a.owner || !a.reserved) {
		free(a.owner);
		free(a.reserved);
		return -1;
	}
	for (uint32_t i = 0; i < TOPO_LID_COUNT; i++)
		a.owner[i] = TOPO_NONE;
	for (uint32_t i = 0; i < sm->guid2lid.cap; i++) {
		uint64_t g = sm->guid2lid.keys[i];
		uint32_t lid = g ? sm->guid2lid.vals[i] : 0;
		if (lid && lid < TOPO_LID_COUNT)
			a.reserved[lid] = g;
	}

	uint32_t *order = malloc(sizeof(uint32_t) * (t->nports + 1));
	uint32_t n = 0;
	if (!order) {
		free(a.owner);
		free(a.reserved);
		return -1;
	}
	if (t->sm_port != TOPO_NONE && topo_port_endpoint(t, t->sm_port))
		order[n++] = t->sm_port;
	for (uint32_t p = 0; p < t->nports; p++) {
		if (p != t->sm_port && topo_port_endpoint(t, p))
			order[n++] = p;
		else if (!topo_port_endpoint(t, p) && p != t->sm_port)
			topo_release_lid(t, p); /* gone, or no longer reachable */
	}
	bool *done = calloc(n + 1, sizeof(bool));
	/* keep: this sweep's LID, the state file's, the fabric's; then allocate. A master that
	 * has just taken over trusts the fabric before its own file: the LIDs on the ports are
	 * what the subnet uses now, and its file may be from another time */
	bool live_first = sm->el.trust_fabric;
	for (int step = 0; step < 3; step++) {
		int pass = live_first && step ? 3 - step : step;
		for (uint32_t i = 0; i < n; i++) {
			if (done[i])
				continue;
			uint32_t p = order[i];
			uint32_t cand;
			if (pass == 0)
				cand = t->ports[p].lid;
			else if (pass == 1)
				cand = u64map_get(&sm->guid2lid, port_key(t, p));
			else
				cand = t->ports[topo_lid_port(t, p)].pi.lid;
			if (cand == U64MAP_NONE)
				cand = 0;
			/* the SM's port may take any valid LID first */
			if (try_keep(&a, p, cand, pass == 2 && i != 0 && !live_first))
				done[i] = true;
			else if (pass == 0)
				topo_release_lid(t, p);
		}
	}
	uint32_t fresh = 0, failed = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		uint32_t p = order[i];
		uint16_t had = t->ports[topo_lid_port(t, p)].pi.lid;
		if (!allocate(&a, p)) {
			failed++;
			continue;
		}
		fresh++;
		if (had && had != t->ports[p].lid) {
			char name[160];
			log_notice(sm->log, "lids",
			           "%s port %u held LID %u (taken, out of range or "
			           "misaligned): now LID %u",
			           sm_node_name(sm, t->ports[p].node, name, sizeof(name)),
			           t->ports[p].num, had, t->ports[p].lid);
		}
	}
	if (failed)
		log_err(sm->log, "lids",
		        "%u port(s) got no LID: the range %u-%u with LMC %u is full; "
		        "widen lid_min/lid_max",
		        failed, sm->cfg->lid_min, sm->cfg->lid_max, sm->cfg->lmc);
	uint32_t vfailed = assign_vport_lids(&a);
	/* remember them; count the LIDs (a port with LMC l answers to 2^l) */
	uint32_t nlids = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = order[i];
		if (!t->ports[p].lid)
			continue;
		nlids += 1u << (t->ports[p].lmc & 7);
		uint64_t g = port_key(t, p);
		if (u64map_get(&sm->guid2lid, g) != t->ports[p].lid) {
			u64map_put(&sm->guid2lid, g, t->ports[p].lid);
			sm->guid2lid_dirty = true;
			sm->guid2lid_changes++;
		}
	}
	sm->counts.lids = nlids;
	sm->lids_new = (uint32_t)(sm->guid2lid_changes - changes0);
	topo_rebuild_lids(t);
	log_info(sm->log, "lids", "%u ports have LIDs, %u newly assigned", n - failed, fresh);
	free(done);
	free(order);
	free(a.owner);
	free(a.reserved);
	return failed || vfailed ? -1 : 0;
}

static void state_path(const struct sm *sm, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", sm->cfg->state_dir, name);
}

int lids_load(struct sm *sm)
{
	char path[512];
	state_path(sm, "guid2lid", path, sizeof(path));
	statefile_discard_tmp(sm->cfg->state_dir, "guid2lid");
	FILE *fp = fopen(path, "r");
	if (!fp)
		return errno == ENOENT ? 0 : -1;
	char line[256];
	unsigned lineno = 0, kept = 0;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		uint64_t guid;
		unsigned lid, lid_max;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%" SCNx64 " %x %x", &guid, &lid, &lid_max) < 2 || !guid || !lid ||
		    lid >= TOPO_LID_COUNT) {
			log_warn(sm->log, "lids", "%s:%u: not \"GUID LID [LID]\": skipped", path,
			         lineno);
			continue;
		}
		u64map_put(&sm->guid2lid, guid, lid);
		kept++;
	}
	fclose(fp);
	log_info(sm->log, "lids", "%s: %u LIDs kept from the last run", path, kept);
	return 0;
}

int lids_save(struct sm *sm)
{
	if (!sm->guid2lid_dirty)
		return 0;
	struct statefile sf;
	if (statefile_begin(&sf, sm->cfg->state_dir, "guid2lid", 0644) < 0) {
		log_err(sm->log, "lids", "cannot write %s: %s; LIDs will not survive a restart",
		        sf.tmp, strerror(errno));
		return -1;
	}
	FILE *fp = sf.f;
	fprintf(fp, "# port GUID -> LID, kept by ibsmd across restarts\n");
	const struct topo *t = &sm->topo;
	for (uint32_t i = 0; i < sm->guid2lid.cap; i++) {
		uint64_t g = sm->guid2lid.keys[i];
		if (!g)
			continue;
		uint32_t lid = sm->guid2lid.vals[i], lmc = 0;
		uint32_t p = lid < TOPO_LID_COUNT ? t->lid_port[lid] : TOPO_NONE;
		if (p != TOPO_NONE)
			lmc = t->ports[p].lmc;
		fprintf(fp, "0x%016" PRIx64 " 0x%04x 0x%04x\n", g, lid, lid + (1u << lmc) - 1);
	}
	if (statefile_commit(&sf) < 0) {
		log_err(sm->log, "lids", "writing %s failed: %s", sf.path, strerror(errno));
		return -1;
	}
	sm->guid2lid_dirty = false;
	return 0;
}

uint64_t sm_guid2lid_changes(const struct sm *sm)
{
	return sm->guid2lid_changes;
}

void sm_guid2lid_each(const struct sm *sm, void (*fn)(void *ctx, uint64_t guid, uint16_t lid),
                      void *ctx)
{
	for (uint32_t i = 0; i < sm->guid2lid.cap; i++)
		if (sm->guid2lid.keys[i])
			fn(ctx, sm->guid2lid.keys[i], (uint16_t)sm->guid2lid.vals[i]);
}

void sm_guid2lid_set(struct sm *sm, uint64_t guid, uint16_t lid)
{
	if (!guid || lid >= TOPO_LID_COUNT)
		return;
	uint32_t old = u64map_get(&sm->guid2lid, guid);
	if (lid ? old == lid : old == U64MAP_NONE)
		return;
	if (lid) {
		if (u64map_put(&sm->guid2lid, guid, lid) < 0)
			return;
	} else {
		u64map_del(&sm->guid2lid, guid);
	}
	sm->guid2lid_dirty = true;
	sm->guid2lid_changes++;
}

int sm_guid2lid_save(struct sm *sm)
{
	return lids_save(sm);
}
