/* Alias GUIDs into the ports' GUIDInfo tables. The aliases are model state (fabric/aliases.c)
 * that the SA edits; the SM writes them: at once when they change, and in the arm phase of
 * every sweep that changed the fabric (a port that was reset forgot them). */
#include <string.h>

#include "sm/sm_int.h"
#include "util/vec.h"

/* sm->guid_sets: a block's Set is out, or out and the block changed since, or its last Set
 * failed (the next sweep writes it, aliased or not: an alias deleted leaves none) */
enum { GUIDS_OUT = 1, GUIDS_AGAIN, GUIDS_FAILED };

static void write_block(struct sm *sm, uint32_t port, unsigned b);

static void on_guid_info_set(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                             void *ctx)
{
	(void)res;
	const uint32_t *ref = ctx; /* port, block */
	bool ok = smp && !smp->dr_status;
	if (!ok)
		log_rl(sm->log, &sm->rl_refused, LOGL_WARN, "sm",
		       "GUIDInfo block %u of port GUID " GUID_FMT
		       " not written (%s): its aliases are not on the port until the next sweep",
		       ref[1], topo_port_guid(&sm->topo, ref[0]),
		       smp ? mad_status_str(smp->dr_status) : "no answer");
	uint64_t key = ((uint64_t)ref[0] + 1) << 16 | ref[1];
	uint32_t v = u64map_get(&sm->guid_sets, key);
	u64map_del(&sm->guid_sets, key);
	if (v == GUIDS_AGAIN && sm->state == SM_STATE_MASTER && !sm->dry_run && !sm->stopped) {
		sm->detached++; /* what changed while it was out */
		write_block(sm, ref[0], ref[1]);
		sm->detached--;
	} else if (!ok) {
		u64map_put(&sm->guid_sets, key, GUIDS_FAILED);
	}
}

static void write_block(struct sm *sm, uint32_t port, unsigned b)
{
	uint64_t key = ((uint64_t)port + 1) << 16 | b;
	uint32_t v = u64map_get(&sm->guid_sets, key);
	if (v == GUIDS_OUT || v == GUIDS_AGAIN) {
		u64map_put(&sm->guid_sets, key, GUIDS_AGAIN); /* sent when the one out is done */
		return;
	}
	struct mad_guid_info g;
	topo_guid_info_block(&sm->topo, port, b, &g);
	uint8_t data[64] = {0};
	mad_guid_info_encode(&g, data, sizeof(data), NULL);
	uint32_t ref[2] = {port, b};
	if (u64map_put(&sm->guid_sets, key, GUIDS_OUT) < 0)
		return; /* out of memory: written by the next sweep that changes the fabric */
	if (sm_send_dr_port(sm, port, MAD_METHOD_SET, MAD_ATTR_GUID_INFO, b, data, sizeof(data),
	                    on_guid_info_set, ref, sizeof(ref)) < 0)
		u64map_del(&sm->guid_sets, key);
}

/* The blocks whose last Set failed, again. */
static void write_failed(struct sm *sm)
{
	const struct u64map *m = &sm->guid_sets;
	VEC(uint64_t) keys = {0};
	for (uint32_t i = 0; i < m->cap; i++) {
		uint64_t *k;
		if (m->keys[i] && m->vals[i] == GUIDS_FAILED && (k = vec_push(&keys)))
			*k = m->keys[i];
	}
	const struct topo *t = &sm->topo;
	for (uint32_t i = 0; i < keys.n; i++) {
		uint32_t port = (uint32_t)(keys.v[i] >> 16) - 1;
		if (port >= t->nports) {
			u64map_del(&sm->guid_sets, keys.v[i]);
		} else if (t->nodes[t->ports[port].node].present) {
			u64map_del(&sm->guid_sets, keys.v[i]);
			write_block(sm, port, (unsigned)(keys.v[i] & 0xffff));
		} /* else away: it may come back unreset, holding the block as it was */
	}
	vec_free(&keys);
}

void guids_sweep_done(struct sm *sm)
{
	if (sm->state != SM_STATE_MASTER || sm->dry_run || !sm->guid_sets.used)
		return;
	sm->detached++; /* outside the phases: light sweeps, between the full ones */
	write_failed(sm);
	sm->detached--;
}

void guids_program(struct sm *sm)
{
	struct topo *t = &sm->topo;
	write_failed(sm);
	if (!t->aliases.n || (!sm->structural && sm->aliases_written))
		return;
	/* every aliased block once */
	struct u64map done = {0};
	for (uint32_t i = 0; i < t->aliases.n; i++) {
		const struct topo_alias *a = &t->aliases.v[i];
		uint64_t key = ((uint64_t)a->port + 1) << 16 | (a->index / 8u);
		if (u64map_get(&done, key) != U64MAP_NONE)
			continue;
		u64map_put(&done, key, 1);
		write_block(sm, a->port, a->index / 8u);
	}
	u64map_free(&done);
	sm->aliases_written = true;
}

void sm_aliases_changed(struct sm *sm, uint32_t port, unsigned block)
{
	/* outside the phases: the sweep under way (if any) does not wait for it */
	sm->detached++;
	write_block(sm, port, block);
	sm->detached--;
	/* A member named by an alias (a VF's GUID, perhaps added before the VF had it) is
	 * enforced at its physical port: the tables follow the alias now, not at the next
	 * sweep. Once per turn of the loop, however many blocks a restore or a forget
	 * changes. */
	if (sm->topo.pkeys_by_alias && !ev_is_active(&sm->pkeys_timer)) {
		ev_timer_set(&sm->pkeys_timer, 0., 0.);
		ev_timer_start(sm->loop, &sm->pkeys_timer);
	}
}
