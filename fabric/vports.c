/* Virtual ports in the model: an array with hash indexes by GUID, by slot (port and index)
 * and by their own LID, all O(1). A vport is read by the SM (sm/vports.c); here it is kept,
 * follows its physical port, and gets its LFT entries. */
#include <stdlib.h>
#include <string.h>

#include "fabric/fabric.h"

static uint64_t slot_key(uint32_t port, unsigned index)
{
	return ((uint64_t)port + 1) << 16 | index;
}

uint32_t topo_vport_at(const struct topo *t, uint32_t port, unsigned index)
{
	uint32_t v = u64map_get(&t->vport_by_slot, slot_key(port, index));
	return v == U64MAP_NONE ? TOPO_NONE : v;
}

uint32_t topo_vport_by_guid(const struct topo *t, uint64_t guid)
{
	uint32_t v = u64map_get(&t->vport_by_guid, guid);
	return v == U64MAP_NONE ? TOPO_NONE : v;
}

uint32_t topo_vport_by_lid(const struct topo *t, uint16_t lid)
{
	uint32_t v = lid ? u64map_get(&t->vport_by_lid, lid) : U64MAP_NONE;
	return v == U64MAP_NONE ? TOPO_NONE : v;
}

/* Is the GUID anything's but this vport's own? */
static bool guid_other(const struct topo *t, uint64_t guid, uint32_t self)
{
	uint32_t v = topo_vport_by_guid(t, guid);
	return (v != TOPO_NONE && v != self) || u64map_get(&t->by_port_guid, guid) != U64MAP_NONE ||
	       u64map_get(&t->by_guid, guid) != U64MAP_NONE ||
	       u64map_get(&t->alias_by_guid, guid) != U64MAP_NONE;
}

uint32_t topo_vport_put(struct topo *t, uint32_t port, unsigned index, uint64_t guid,
                        bool lid_required, uint16_t lid_by_index, uint16_t hw_lid, uint8_t state)
{
	uint32_t v = topo_vport_at(t, port, index);
	if (!guid || guid_other(t, guid, v))
		return TOPO_NONE;
	if (v == TOPO_NONE) {
		if (t->vports.n >= TOPO_MAX_VPORTS ||
		    vec_reserve(&t->vports, t->vports.n + 1ull) < 0)
			return TOPO_NONE;
		v = t->vports.n;
		if (u64map_put(&t->vport_by_slot, slot_key(port, index), v) < 0)
			return TOPO_NONE;
		if (u64map_put(&t->vport_by_guid, guid, v) < 0) {
			u64map_del(&t->vport_by_slot, slot_key(port, index));
			return TOPO_NONE;
		}
		t->vports.v[t->vports.n++] =
		    (struct topo_vport){.guid = guid, .port = port, .index = (uint16_t)index};
		t->vport_changes++;
	} else if (t->vports.v[v].guid != guid) {
		/* another VF at the same index: a new GUID, the old one's LID goes with it */
		if (u64map_put(&t->vport_by_guid, guid, v) < 0)
			return TOPO_NONE;
		u64map_del(&t->vport_by_guid, t->vports.v[v].guid);
		topo_vport_assign_lid(t, v, 0);
		t->vports.v[v].guid = guid;
		t->vports.v[v].pkey_sig = 0;
		t->vports.v[v].node_guid = 0; /* another VF's node: read again */
		memset(t->vports.v[v].desc, 0, sizeof(t->vports.v[v].desc));
		t->vport_changes++;
	}
	struct topo_vport *vp = &t->vports.v[v];
	vp->lid_required = lid_required;
	vp->lid_by_index = lid_by_index;
	vp->hw_lid = hw_lid;
	vp->state = state;
	vp->seen = t->sweep;
	return v;
}

void topo_vport_del(struct topo *t, uint32_t v)
{
	struct topo_vport *vp = &t->vports.v[v];
	u64map_del(&t->vport_by_guid, vp->guid);
	u64map_del(&t->vport_by_slot, slot_key(vp->port, vp->index));
	if (vp->lid && topo_vport_by_lid(t, vp->lid) == v)
		u64map_del(&t->vport_by_lid, vp->lid);
	uint32_t last = t->vports.n - 1;
	if (v != last) {
		/* the last one moves into the hole: its keys exist, so the puts cannot fail */
		t->vports.v[v] = t->vports.v[last];
		vp = &t->vports.v[v];
		u64map_put(&t->vport_by_guid, vp->guid, v);
		u64map_put(&t->vport_by_slot, slot_key(vp->port, vp->index), v);
		if (vp->lid && topo_vport_by_lid(t, vp->lid) == last)
			u64map_put(&t->vport_by_lid, vp->lid, v);
	}
	t->vports.n--;
	t->vport_changes++;
}

uint32_t topo_vports_drop(struct topo *t, uint32_t port, uint32_t since)
{
	uint32_t gone = 0;
	for (uint32_t v = t->vports.n; v-- > 0;) {
		const struct topo_vport *vp = &t->vports.v[v];
		if (vp->port == port && (since == UINT32_MAX || vp->seen < since)) {
			topo_vport_del(t, v);
			gone++;
		}
	}
	return gone;
}

uint32_t topo_vports_follow(struct topo *t)
{
	uint32_t gone = 0;
	for (uint32_t v = t->vports.n; v-- > 0;) {
		uint32_t p = t->vports.v[v].port;
		if (!topo_port_linked(t, p) || !t->ports[p].virt) {
			topo_vport_del(t, v);
			gone++;
		}
	}
	return gone;
}

int topo_vport_assign_lid(struct topo *t, uint32_t v, uint16_t lid)
{
	struct topo_vport *vp = &t->vports.v[v];
	if (vp->lid == lid)
		return 0;
	if (vp->lid && topo_vport_by_lid(t, vp->lid) == v)
		u64map_del(&t->vport_by_lid, vp->lid);
	vp->lid = 0;
	t->vport_changes++;
	if (lid && u64map_put(&t->vport_by_lid, lid, v) < 0)
		return -1;
	vp->lid = lid;
	return 0;
}

uint16_t topo_vport_lid(const struct topo *t, uint32_t v)
{
	const struct topo_vport *vp = &t->vports.v[v];
	if (vp->lid_required)
		return vp->lid; /* 0: it asked for one and got none, and answers to no LID */
	if (vp->lid_by_index && vp->lid_by_index != vp->index) {
		uint32_t o = topo_vport_at(t, vp->port, vp->lid_by_index);
		if (o != TOPO_NONE && t->vports.v[o].lid_required && t->vports.v[o].lid)
			return t->vports.v[o].lid;
	}
	return t->ports[vp->port].lid;
}

uint16_t topo_vport_max_lid(const struct topo *t)
{
	uint16_t top = 0;
	for (uint32_t v = 0; v < t->vports.n; v++)
		if (t->vports.v[v].lid > top)
			top = t->vports.v[v].lid;
	return top;
}

void topo_vport_lfts(struct topo *t)
{
	for (uint32_t v = 0; v < t->vports.n; v++) {
		const struct topo_vport *vp = &t->vports.v[v];
		uint16_t plid = t->ports[vp->port].lid;
		if (!vp->lid || !plid)
			continue;
		for (uint32_t s = 0; s < t->nsws; s++) {
			struct topo_switch *sw = &t->sws[s];
			if (vp->lid < sw->lft_size && plid < sw->lft_size)
				sw->lft[vp->lid] = sw->lft[plid];
		}
	}
}

void topo_vport_set_pkey_sig(struct topo *t, uint32_t v, uint32_t sig)
{
	t->vports.v[v].pkey_sig = sig;
}

uint16_t topo_lid_base(const struct topo *t, uint16_t lid)
{
	if (!lid || lid >= TOPO_LID_COUNT || t->lid_port[lid] != TOPO_NONE)
		return lid;
	uint32_t v = topo_vport_by_lid(t, lid);
	return v == TOPO_NONE ? lid : t->ports[t->vports.v[v].port].lid;
}

uint32_t topo_lid_to_port(const struct topo *t, uint16_t lid)
{
	if (!lid || lid >= TOPO_LID_COUNT)
		return TOPO_NONE;
	if (t->lid_port[lid] != TOPO_NONE)
		return t->lid_port[lid];
	uint32_t v = topo_vport_by_lid(t, lid);
	return v == TOPO_NONE ? TOPO_NONE : t->vports.v[v].port;
}

void topo_vport_set_node(struct topo *t, uint32_t v, uint64_t node_guid, uint8_t local_port,
                         uint8_t num_ports, uint16_t pkey_cap)
{
	struct topo_vport *vp = &t->vports.v[v];
	vp->node_guid = node_guid;
	vp->local_port = local_port;
	vp->num_ports = num_ports;
	vp->pkey_cap = pkey_cap;
}

void topo_vport_set_guid_cap(struct topo *t, uint32_t v, uint8_t guid_cap)
{
	t->vports.v[v].guid_cap = guid_cap;
}

void topo_vport_set_desc(struct topo *t, uint32_t v, const char *desc)
{
	size_t n = strnlen(desc, sizeof(t->vports.v[v].desc) - 1);
	memcpy(t->vports.v[v].desc, desc, n);
	t->vports.v[v].desc[n] = 0;
}
