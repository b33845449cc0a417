/* Alias GUIDs in the model: an array with two hash indexes, by GUID (which port does this GID
 * name?) and by slot (what does this port hold at this index?), both O(1). */
#include "fabric/fabric.h"

static uint64_t slot_key(uint32_t port, unsigned index)
{
	return ((uint64_t)port + 1) << 16 | index;
}

uint64_t topo_alias_at(const struct topo *t, uint32_t port, unsigned index)
{
	uint32_t i = u64map_get(&t->alias_by_slot, slot_key(port, index));
	return i == U64MAP_NONE ? 0 : t->aliases.v[i].guid;
}

uint32_t topo_alias_port(const struct topo *t, uint64_t guid)
{
	uint32_t i = u64map_get(&t->alias_by_guid, guid);
	return i == U64MAP_NONE ? TOPO_NONE : t->aliases.v[i].port;
}

bool topo_guid_free(const struct topo *t, uint64_t guid)
{
	return guid && u64map_get(&t->by_port_guid, guid) == U64MAP_NONE &&
	       u64map_get(&t->by_guid, guid) == U64MAP_NONE &&
	       u64map_get(&t->alias_by_guid, guid) == U64MAP_NONE;
}

int topo_alias_add(struct topo *t, uint32_t port, unsigned index, uint64_t guid)
{
	if (t->aliases.n >= TOPO_MAX_ALIASES || vec_reserve(&t->aliases, t->aliases.n + 1ull) < 0)
		return -1;
	uint32_t i = t->aliases.n;
	if (u64map_put(&t->alias_by_guid, guid, i) < 0)
		return -1;
	if (u64map_put(&t->alias_by_slot, slot_key(port, index), i) < 0) {
		u64map_del(&t->alias_by_guid, guid);
		return -1;
	}
	t->aliases.v[t->aliases.n++] = (struct topo_alias){.guid = guid,
	                                                   .port_guid = topo_port_guid(t, port),
	                                                   .port = port,
	                                                   .index = (uint16_t)index};
	t->alias_changes++;
	return 0;
}

static void remove_at(struct topo *t, uint32_t i)
{
	struct topo_alias *a = &t->aliases.v[i];
	u64map_del(&t->alias_by_guid, a->guid);
	u64map_del(&t->alias_by_slot, slot_key(a->port, a->index));
	uint32_t last = t->aliases.n - 1;
	if (i != last) {
		/* the last one moves into the hole: its keys exist, so the puts cannot fail */
		t->aliases.v[i] = t->aliases.v[last];
		u64map_put(&t->alias_by_guid, t->aliases.v[i].guid, i);
		u64map_put(&t->alias_by_slot, slot_key(t->aliases.v[i].port, t->aliases.v[i].index),
		           i);
	}
	t->aliases.n--;
	t->alias_changes++;
}

void topo_alias_del(struct topo *t, uint64_t guid)
{
	uint32_t i = u64map_get(&t->alias_by_guid, guid);
	if (i != U64MAP_NONE)
		remove_at(t, i);
}

uint32_t topo_aliases_follow(struct topo *t)
{
	uint32_t removed = 0;
	for (uint32_t i = 0; i < t->aliases.n;) {
		struct topo_alias *a = &t->aliases.v[i];
		uint32_t now = u64map_get(&t->by_port_guid, a->port_guid);
		if (now == U64MAP_NONE) {
			uint32_t n = u64map_get(&t->by_guid, a->port_guid);
			now = n != U64MAP_NONE && topo_is_switch(t, n) ? t->nodes[n].first_port
			                                               : U64MAP_NONE;
		}
		if (now == U64MAP_NONE || !t->nodes[t->ports[now].node].present) {
			remove_at(t, i); /* the port left: the alias goes with it */
			removed++;
			continue;
		}
		if (now != a->port) {
			u64map_del(&t->alias_by_slot, slot_key(a->port, a->index));
			a->port = now;
			if (u64map_put(&t->alias_by_slot, slot_key(now, a->index), i) < 0) {
				remove_at(t, i);
				removed++;
				continue;
			}
		}
		i++;
	}
	return removed;
}

void topo_guid_info_block(const struct topo *t, uint32_t port, unsigned b, struct mad_guid_info *g)
{
	for (unsigned i = 0; i < 8; i++)
		g->guid[i] =
		    b == 0 && i == 0 ? topo_port_guid(t, port) : topo_alias_at(t, port, b * 8 + i);
}
