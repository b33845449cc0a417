/* The ports as the SA's handlers see them: by GID or GUID (alias GUIDs and switches' port 0
 * included), a port's GID, and who may see whom (IBA 15.4: a requester sees only ports it
 * shares a partition with). Below every record handler; it reads the model only. */
#include "sa/sa_int.h"

uint32_t sa_gid_port(const struct sa *sa, const uint8_t *gid)
{
	uint64_t prefix = mad_bits_get(gid, 0, 64);
	/* our subnet's prefix, or any link-local one (fe80::/10): both mean this subnet */
	if (prefix != sa->cfg->subnet_prefix && (prefix >> 54) != (0xfe80000000000000ull >> 54))
		return TOPO_NONE;
	return sa_guid_port(sa, mad_bits_get(gid, 64, 64));
}

uint32_t sa_guid_port(const struct sa *sa, uint64_t guid)
{
	const struct topo *t = sa->t;
	uint32_t p = u64map_get(&t->by_port_guid, guid);
	if (p == U64MAP_NONE) {
		uint32_t n = u64map_get(&t->by_guid, guid); /* a switch: its port 0 */
		if (n != U64MAP_NONE && topo_is_switch(t, n))
			p = t->nodes[n].first_port;
		else if ((p = topo_alias_port(sa->t, guid)) == TOPO_NONE) { /* an alias GUID */
			uint32_t v = topo_vport_by_guid(t, guid); /* a vport's: its port */
			if (v == TOPO_NONE)
				return TOPO_NONE;
			p = t->vports.v[v].port;
		}
	}
	return t->nodes[t->ports[p].node].present ? p : TOPO_NONE;
}

uint32_t sa_gid_slot(const struct sa *sa, const uint8_t *gid)
{
	uint32_t v = topo_vport_by_guid(sa->t, mad_bits_get(gid, 64, 64));
	uint32_t p = sa_gid_port(sa, gid);
	return p != TOPO_NONE && v != TOPO_NONE ? sa->t->nports + v : p;
}

/* A router port that can carry traffic: present, with a LID */
static bool router_usable(const struct topo *t, uint32_t p)
{
	const struct topo_node *n = &t->nodes[t->ports[p].node];
	return n->present && n->type == NODE_TYPE_ROUTER && t->ports[p].num && t->ports[p].lid;
}

/* The router port with the lowest GUID, looked for once per model generation (routers are
 * few; the ports are not) */
static uint32_t first_router(struct sa *sa)
{
	const struct topo *t = sa->t;
	if (sa->first_router_gen == t->generation + 1)
		return sa->first_router;
	uint32_t best = TOPO_NONE;
	for (uint32_t n = 0; n < t->nnodes; n++) {
		if (t->nodes[n].type != NODE_TYPE_ROUTER)
			continue;
		for (unsigned num = 1; num <= t->nodes[n].nports; num++) {
			uint32_t p = t->nodes[n].first_port + num;
			if (router_usable(t, p) &&
			    (best == TOPO_NONE || t->ports[p].guid < t->ports[best].guid))
				best = p;
		}
	}
	sa->first_router = best;
	sa->first_router_gen = t->generation + 1;
	return best;
}

uint32_t sa_prefix_router(struct sa *sa, const uint8_t *gid)
{
	uint64_t prefix = mad_bits_get(gid, 0, 64);
	if (gid[0] == 0xff || prefix == sa->cfg->subnet_prefix ||
	    (prefix >> 54) == (0xfe80000000000000ull >> 54))
		return TOPO_NONE;
	const struct topo *t = sa->t;
	for (unsigned i = 0; i < sa->cfg->nprefix_routes; i++) {
		const struct config_prefix_route *r = &sa->cfg->prefix_routes[i];
		if (r->prefix && r->prefix != prefix)
			continue;
		uint32_t p = r->router ? u64map_get(&t->by_port_guid, r->router) : first_router(sa);
		/* a route whose router is not there: the next one that matches ("the first
		 * available matching router") */
		if (p != U64MAP_NONE && p != TOPO_NONE && router_usable(t, p))
			return p;
	}
	return TOPO_NONE;
}

void sa_port_gid(const struct sa *sa, uint32_t port, uint8_t *gid)
{
	const struct topo *t = sa->t;
	mad_bits_set(gid, 0, 64, sa->cfg->subnet_prefix);
	/* a vport's slot (nports + its index): its own GUID */
	mad_bits_set(gid, 64, 64,
	             port < t->nports ? topo_port_guid(t, port)
	                              : t->vports.v[port - t->nports].guid);
}

bool sa_ports_share(const struct sa *sa, uint32_t a, uint32_t b)
{
	return topo_shared_pkey(sa->t, a, b) != 0;
}

bool sa_visible(const struct sa_req *rq, uint32_t port)
{
	if (rq->trusted)
		return true; /* the SM's own tools */
	uint32_t me = rq->requester_slot;
	if (rq->requester == TOPO_NONE || me == TOPO_NONE)
		return false; /* a requester the SA cannot place sees nothing */
	const struct sa *sa = rq->sa;
	if (port >= sa->t->nports) /* a vport's slot: itself, its own port, or its own keys */
		return port == me || (me < sa->t->nports && topo_slot_port(sa->t, port) == me) ||
		       topo_shared_pkey(sa->t, me, port) != 0;
	uint32_t lp = topo_lid_port(sa->t, port);
	/* a port always sees itself, even a limited member of every partition it is in; a VF
	 * (me a vport's slot) sees ports by its own keys */
	return lp == me || topo_shared_pkey(sa->t, me, lp) != 0;
}

bool sa_port_has_pkey(const struct sa *sa, uint32_t port, uint16_t pkey, bool *full)
{
	return topo_port_has_pkey(sa->t, port, pkey, full);
}

/* Block b of a port's P_Key table as the policy gives it: 32 keys from b*32, zeros past the end. */
void sa_pkey_block(const uint16_t *keys, unsigned nk, unsigned b, struct mad_pkey_table *tbl)
{
	memset(tbl, 0, sizeof(*tbl));
	if (keys && nk > b * 32u)
		memcpy(tbl->pkey, keys + b * 32u,
		       (nk - b * 32u > 32u ? 32u : nk - b * 32u) * sizeof(uint16_t));
}
