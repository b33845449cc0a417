/* Following the forwarding tables the switches hold from a port to a LID, one hop per
 * switch: what PathRecords offer (sa/path.c) and what independence compares
 * (sa/independence.c), below both. */
#include "sa/sa_int.h"

static void link_caps(const struct topo *t, uint32_t p, struct sa_trace *pa)
{
	const struct mad_port_info *pi = &t->ports[p].pi;
	uint8_t mtu = pi->neighbor_mtu ? pi->neighbor_mtu : pi->mtu_cap;
	if (mtu < pa->mtu)
		pa->mtu = mtu;
	uint8_t r = mad_link_rate(pi);
	if (r && mad_rate_cmp(r, pa->rate) < 0)
		pa->rate = r;
}

/* Follow the LFTs from src port to dlid. hops (room for SA_PATH_HOPS_MAX), when given,
 * gets the port each hop leaves by, so that alternate paths can be told apart by what they
 * cross. */
bool sa_trace(const struct topo *t, uint32_t src, uint16_t dlid, struct sa_trace *pa,
              uint32_t *hops, unsigned *nhops)
{
	unsigned dummy;
	if (!nhops)
		nhops = &dummy;
	*nhops = 0;
	pa->hops = 0;
	pa->mtu = 5;
	pa->rate = MAD_RATE_MAX_CODE;             /* the fastest: the links lower it */
	uint32_t dst = topo_lid_to_port(t, dlid); /* a vport's own LID: its physical port */
	if (dst == TOPO_NONE)
		return false;
	if (topo_lid_port(t, src) == dst) {
		if (topo_reader_peer(t, src) != TOPO_NONE)
			link_caps(t, src, pa); /* to itself: at its own link's rate */
		return true;
	}
	uint32_t at = src;
	if (!topo_is_switch(t, t->ports[src].node)) {
		uint32_t peer = topo_reader_peer(t, src);
		if (peer == TOPO_NONE)
			return false;
		link_caps(t, src, pa);
		if (hops)
			hops[(*nhops)++] = src;
		at = peer;
		pa->hops++;
	}
	for (unsigned guard = 0; guard < SA_PATH_HOPS_MAX - 1; guard++) {
		uint32_t node = t->ports[at].node;
		if (topo_lid_port(t, at) == dst)
			return true;
		if (!topo_is_switch(t, node))
			return false;
		const struct topo_switch *sw = &t->sws[t->nodes[node].sw];
		/* what the switch holds; what routing wants only where nothing was programmed
		 * (and not while an engine writes it) */
		const uint8_t *lft = sw->lft_hw;
		uint32_t size = sw->lft_hw_size;
		if (!lft && !t->routing) {
			lft = sw->lft;
			size = sw->lft_size;
		}
		if (!lft || dlid >= size || lft[dlid] == 0xff || lft[dlid] == 0)
			return false;
		uint32_t out = topo_port(t, node, lft[dlid]);
		uint32_t peer = out == TOPO_NONE ? TOPO_NONE : topo_reader_peer(t, out);
		if (peer == TOPO_NONE)
			return false;
		link_caps(t, out, pa);
		if (hops)
			hops[(*nhops)++] = out;
		at = peer;
		pa->hops++;
	}
	return false;
}
