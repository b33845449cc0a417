#include "fabric/fabric.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

int topo_init(struct topo *t)
{
	memset(t, 0, sizeof(*t));
	t->sm_node = t->sm_port = TOPO_NONE;
	t->lid_port = malloc(sizeof(uint32_t) * TOPO_LID_COUNT);
	if (!t->lid_port)
		return -1;
	for (uint32_t i = 0; i < TOPO_LID_COUNT; i++)
		t->lid_port[i] = TOPO_NONE;
	return 0;
}

int topo_complete(struct topo *t)
{
	t->stable = true;
	t->generation++;
	if (array_reserve(&t->last_peer, &t->last_peer_cap, t->nports) < 0) {
		t->nlast_peer = 0;
		return -1;
	}
	for (uint32_t p = 0; p < t->nports; p++)
		t->last_peer[p] = t->ports[p].peer;
	t->nlast_peer = t->nports;
	return 0;
}

void topo_free(struct topo *t)
{
	free(t->last_peer);
	for (uint32_t i = 0; i < t->nsws; i++) {
		free(t->sws[i].lft);
		free(t->sws[i].lft_hw);
		free(t->sws[i].mft);
		free(t->sws[i].mft_hw);
		free(t->sws[i].mft_known);
		free(t->sws[i].mft_sets);
		free(t->sws[i].sl2vl);
	}
	free(t->nodes);
	free(t->ports);
	free(t->sws);
	free(t->lid_port);
	free(t->vlarb);
	free(t->sl2vl);
	free(t->pkeys);
	free(t->pkeys_spare);
	vec_free(&t->pkeys_held);
	vec_free(&t->aliases);
	u64map_free(&t->alias_by_guid);
	u64map_free(&t->alias_by_slot);
	vec_free(&t->vports);
	u64map_free(&t->vport_by_guid);
	u64map_free(&t->vport_by_slot);
	u64map_free(&t->vport_by_lid);
	u64map_free(&t->by_guid);
	u64map_free(&t->by_port_guid);
	memset(t, 0, sizeof(*t));
}

uint32_t topo_add_node(struct topo *t, const struct mad_node_info *ni)
{
	/* every node and port added is memset below: the room needs no zeroing first */
	if (array_reserve_raw(&t->nodes, &t->nodes_cap, t->nnodes + 1ull) < 0 ||
	    array_reserve_raw(&t->ports, &t->ports_cap, t->nports + ni->num_ports + 1ull) < 0)
		return TOPO_NONE;
	uint32_t n = t->nnodes;
	struct topo_node *node = &t->nodes[n];
	memset(node, 0, sizeof(*node));
	node->type = ni->node_type;
	node->nports = ni->num_ports;
	node->guid = ni->node_guid;
	node->ni = *ni;
	node->first_port = t->nports;
	node->sw = TOPO_NONE;
	for (unsigned p = 0; p <= ni->num_ports; p++) {
		struct topo_port *port = &t->ports[t->nports + p];
		memset(port, 0, sizeof(*port));
		port->node = n;
		port->num = (uint8_t)p;
		port->peer = TOPO_NONE;
		port->last_peer = TOPO_NONE;
		port->sl2vl = TOPO_SL2VL_UNKNOWN;
		if (ni->node_type == NODE_TYPE_SWITCH)
			port->guid = ni->port_guid;
	}
	if (ni->node_type == NODE_TYPE_SWITCH) {
		if (array_reserve(&t->sws, &t->sws_cap, t->nsws + 1ull) < 0)
			return TOPO_NONE;
		memset(&t->sws[t->nsws], 0, sizeof(t->sws[t->nsws]));
		t->sws[t->nsws].node = n;
		node->sw = t->nsws++;
	}
	t->nports += ni->num_ports + 1u;
	t->nnodes++;
	if (u64map_put(&t->by_guid, ni->node_guid, n) < 0)
		return TOPO_NONE;
	return n;
}

void topo_link(struct topo *t, uint32_t a, uint32_t b)
{
	if (t->ports[a].peer == b && t->ports[b].peer == a)
		return;
	topo_unlink(t, a);
	topo_unlink(t, b);
	t->ports[a].peer = b;
	t->ports[b].peer = a;
	t->ports[a].last_peer = b;
	t->ports[b].last_peer = a;
}

void topo_unlink(struct topo *t, uint32_t a)
{
	uint32_t b = t->ports[a].peer;
	if (b != TOPO_NONE && t->ports[b].peer == a)
		t->ports[b].peer = TOPO_NONE;
	t->ports[a].peer = TOPO_NONE;
}

void topo_forget_links(struct topo *t)
{
	for (uint32_t p = 0; p < t->nports; p++)
		t->ports[p].peer = TOPO_NONE;
}

int topo_set_port_guid(struct topo *t, uint32_t port, uint64_t guid)
{
	uint32_t other = u64map_get(&t->by_port_guid, guid);
	if (other != U64MAP_NONE && other != port)
		return -1;
	uint64_t was = t->ports[port].guid;
	if (was && was != guid && u64map_get(&t->by_port_guid, was) == port)
		u64map_del(&t->by_port_guid, was);
	t->ports[port].guid = guid;
	if (guid && u64map_put(&t->by_port_guid, guid, port) < 0)
		return -1;
	return 0;
}

/* Does the node's directed route still lead to it, over links routes may use? */
static bool path_holds(const struct topo *t, uint32_t target)
{
	const struct topo_node *tn = &t->nodes[target];
	if (!tn->present || !tn->hops || tn->hops > MAD_DR_MAX_HOPS)
		return false;
	uint32_t n = t->sm_node;
	for (unsigned h = 1; h <= tn->hops; h++) {
		const struct topo_node *cur = &t->nodes[n];
		unsigned p = tn->path[h];
		if (p == 0 || p > cur->nports)
			return false;
		uint32_t pi = cur->first_port + p;
		if (!topo_is_switch(t, n) && (h > 1 || pi != t->sm_port))
			return false;
		uint32_t peer = t->ports[pi].peer;
		if (peer == TOPO_NONE || t->ports[pi].unrouted || t->ports[peer].unrouted)
			return false;
		n = t->ports[peer].node;
	}
	return n == target;
}

uint32_t topo_update_paths(struct topo *t, bool final)
{
	if (t->sm_node == TOPO_NONE)
		return 0;
	uint32_t *queue = malloc(sizeof(uint32_t) * (t->nnodes + 1));
	bool *reached = calloc(t->nnodes + 1, sizeof(bool));
	bool *keep = calloc(t->nnodes + 1, sizeof(bool));
	if (!queue || !reached || !keep) {
		free(queue);
		free(reached);
		free(keep);
		return 0;
	}
	/* a route that still holds is kept: a node's route changes only when it breaks, so
	 * that a link coming back (perhaps to go again) does not draw the SM's SMPs onto it */
	for (uint32_t n = 0; n < t->nnodes; n++)
		keep[n] = n != t->sm_node && path_holds(t, n);
	uint32_t head = 0, tail = 0;
	struct topo_node *root = &t->nodes[t->sm_node];
	root->hops = 0;
	reached[t->sm_node] = true;
	queue[tail++] = t->sm_node;
	/* first over the links routes may use, then (what is left) over the held ones too: a
	 * link held out of routing may be flapping, and an SMP sent across it may be lost
	 * with it, its node taken for dead */
	for (int pass = 0; pass < 2; pass++, head = 0)
		while (head < tail) {
			uint32_t n = queue[head++];
			struct topo_node *node = &t->nodes[n];
			/* only switches forward, and the SM's own CA sends out of its own port */
			bool sm_ca = n == t->sm_node && !topo_is_switch(t, n);
			if (!topo_is_switch(t, n) && !sm_ca)
				continue;
			if (node->hops >= MAD_DR_MAX_HOPS)
				continue;
			for (unsigned p = 1; p <= node->nports; p++) {
				uint32_t pi = node->first_port + p;
				if (sm_ca && pi != t->sm_port)
					continue;
				uint32_t peer = t->ports[pi].peer;
				if (peer == TOPO_NONE)
					continue;
				if (!pass && (t->ports[pi].unrouted || t->ports[peer].unrouted))
					continue;
				uint32_t m = t->ports[peer].node;
				if (reached[m])
					continue;
				reached[m] = true;
				queue[tail++] = m;
				if (keep[m])
					continue;
				struct topo_node *next = &t->nodes[m];
				memcpy(next->path, node->path, node->hops + 1u);
				next->hops = (uint8_t)(node->hops + 1);
				next->path[next->hops] = (uint8_t)p;
			}
		}
	uint32_t lost = 0;
	for (uint32_t n = 0; n < t->nnodes; n++) {
		struct topo_node *node = &t->nodes[n];
		if (!final && !reached[n])
			continue; /* a round of the sweep is still to look for it */
		if (reached[n]) {
			node->present = true;
			continue;
		}
		if (node->present)
			lost++;
		node->present = false;
		for (unsigned p = 0; p <= node->nports; p++)
			topo_unlink(t, node->first_port + p);
	}
	free(queue);
	free(reached);
	free(keep);
	return lost;
}

void topo_rebuild_lids(struct topo *t)
{
	for (uint32_t i = 0; i < TOPO_LID_COUNT; i++)
		t->lid_port[i] = TOPO_NONE;
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct topo_port *port = &t->ports[p];
		if (!port->lid || !t->nodes[port->node].present)
			continue;
		for (uint32_t l = port->lid;
		     l < port->lid + (1u << port->lmc) && l < TOPO_LID_COUNT; l++)
			t->lid_port[l] = p;
	}
}
