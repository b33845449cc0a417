/* Alias GUIDs into the ports' GUIDInfo tables. The aliases are model state (fabric/aliases.c)
 * that the SA edits; the SM writes them: at once when they change, and in the arm phase of
 * every sweep that changed the fabric (a port that was reset forgot them). */
#include <string.h>

#include "sm/sm_int.h"

enum { GUIDS_OUT = 1, GUIDS_AGAIN };

static void write_block(struct sm *sm, uint32_t port, unsigned b);

static void on_guid_info_set(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                             void *ctx)
{
	(void)res;
	const uint32_t *ref = ctx; /* port, block */
	if (!smp || smp->dr_status)
		log_warn(sm->log, "sm",
		         "GUIDInfo block %u of port GUID " GUID_FMT
		         " not written (%s): its aliases "
		         "are not on the port until the next sweep",
		         ref[1], topo_port_guid(&sm->topo, ref[0]),
		         smp ? mad_status_str(smp->dr_status) : "no answer");
	uint64_t key = ((uint64_t)ref[0] + 1) << 16 | ref[1];
	uint32_t v = u64map_get(&sm->guid_sets, key);
	u64map_del(&sm->guid_sets, key);
	if (v == GUIDS_AGAIN && !sm->stopped) { /* what changed while it was out */
		sm->detached++;
		write_block(sm, ref[0], ref[1]);
		sm->detached--;
	}
}

static void write_block(struct sm *sm, uint32_t port, unsigned b)
{
	uint64_t key = ((uint64_t)port + 1) << 16 | b;
	if (u64map_get(&sm->guid_sets, key) != U64MAP_NONE) {
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

void guids_program(struct sm *sm)
{
	struct topo *t = &sm->topo;
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
}
