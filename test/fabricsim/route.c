/* How MADs cross the simulated fabric: directed route hop by hop (IBA 14.2.2) and LID routing
 * through the programmed LFTs. A wrong table shows up as a drop, as on hardware. */
#include <stdlib.h>

#include <infiniband/mad.h>

#include "agents.h"
#include "mad/mad_types.h"

#define MAX_LID_HOPS 64

static void count_hop(struct fabric *f, uint32_t out, uint32_t in)
{
	f->ports[out].cnt.xmit_pkts++;
	f->ports[out].cnt.xmit_data += 256 / 4;
	f->ports[in].cnt.rcv_pkts++;
	f->ports[in].cnt.rcv_data += 256 / 4;
}

/* Cross the link behind port `out`; the port it arrives on, or FS_NONE. min_state: the
 * state both ends must have reached. */
static uint32_t cross(struct fabric *f, uint32_t out, uint8_t min_state, struct route *r)
{
	const char **why = &r->why;
	const struct fs_port *p = &f->ports[out];
	if (p->peer == FS_NONE) {
		*why = "no cable on the exit port";
		return FS_NONE;
	}
	if (!fabric_link_up(f, out)) {
		*why = "link down";
		return FS_NONE;
	}
	if (p->pi.port_state < min_state || f->ports[p->peer].pi.port_state < min_state) {
		*why = min_state == PORT_STATE_ACTIVE ? "link not ACTIVE" : "link not up";
		return FS_NONE;
	}
	if (p->drop_percent && (unsigned)rand_r(&f->seed) % 100 < p->drop_percent) {
		*why = "lost (fault injection)";
		r->lost = true;
		return FS_NONE;
	}
	count_hop(f, out, p->peer);
	return p->peer;
}

static void set_dest(const struct fabric *f, uint32_t arrival, struct route *r)
{
	r->arrival = arrival;
	r->dest = fabric_lid_port(f, arrival);
}

int route_dr(struct fabric *f, uint32_t src, uint8_t *mad, struct route *r)
{
	unsigned hop_cnt = mad_get_field(mad, 0, IB_DRSMP_HOPCNT_F);
	unsigned hop_ptr = mad_get_field(mad, 0, IB_DRSMP_HOPPTR_F);
	bool ret = mad_get_field(mad, 0, IB_DRSMP_DIRECTION_F);
	uint8_t *ipath = mad + 128, *rpath = mad + 192;
	r->hops = 0;
	r->why = NULL;
	r->lost = false;
	if (hop_cnt > MAD_DR_MAX_HOPS) {
		r->why = "hop count over 63";
		return -1;
	}
	if (mad_get_field(mad, 0, IB_DRSMP_DRSLID_F) != 0xffff ||
	    mad_get_field(mad, 0, IB_DRSMP_DRDLID_F) != 0xffff) {
		r->why = "directed route with LID-routed parts (DrSLID/DrDLID) is not simulated";
		return -1;
	}
	uint32_t node = f->ports[src].node;
	if (!ret) {
		if (hop_ptr != 0) {
			r->why = "outbound SMP with a hop pointer not 0";
			return -1;
		}
		uint32_t at = src;
		for (unsigned h = 1; h <= hop_cnt; h++) {
			uint32_t out;
			if (h == 1 && !fs_is_switch(f, node))
				out = src; /* a CA sends from its own port */
			else if (!fs_is_switch(f, node)) {
				r->why = "a CA in the middle of a directed route";
				return -1;
			} else {
				out = fabric_port(f, node, ipath[h]);
				if (out == FS_NONE || ipath[h] == 0) {
					r->why = "directed route names a port the switch lacks";
					return -1;
				}
			}
			/* SMPs on directed routes cross links in any state but Down */
			at = cross(f, out, PORT_STATE_INIT, r);
			if (at == FS_NONE)
				return -1;
			rpath[h] = f->ports[at].num;
			node = f->ports[at].node;
			r->hops++;
		}
		mad_set_field(mad, 0, IB_DRSMP_HOPPTR_F, hop_cnt + 1);
		set_dest(f, at, r);
		return 0;
	}
	/* return path: from the responder back along the recorded ports */
	if (hop_ptr != hop_cnt + 1 && hop_ptr != hop_cnt) {
		r->why = "returning SMP with a hop pointer that is not at the end";
		return -1;
	}
	uint32_t at = src;
	for (unsigned h = hop_cnt; h >= 1; h--) {
		uint32_t out = fs_is_switch(f, node) ? fabric_port(f, node, rpath[h]) : src;
		if (out == FS_NONE || (fs_is_switch(f, node) && rpath[h] == 0)) {
			r->why = "return path names a port the switch lacks";
			return -1;
		}
		if (!fs_is_switch(f, node) && h != hop_cnt) {
			r->why = "a CA in the middle of a return path";
			return -1;
		}
		at = cross(f, out, PORT_STATE_INIT, r);
		if (at == FS_NONE)
			return -1;
		node = f->ports[at].node;
		r->hops++;
	}
	mad_set_field(mad, 0, IB_DRSMP_HOPPTR_F, 0);
	set_dest(f, at, r);
	return 0;
}

static bool owns_lid(const struct fabric *f, uint32_t port, uint16_t lid)
{
	const struct mad_port_info *pi = &f->ports[fabric_lid_port(f, port)].pi;
	return pi->lid && lid >= pi->lid && lid < pi->lid + (1u << pi->lmc);
}

int route_lid(struct fabric *f, uint32_t src, uint16_t dlid, bool vl15, struct route *r)
{
	uint8_t min_state = vl15 ? PORT_STATE_INIT : PORT_STATE_ACTIVE;
	r->hops = 0;
	r->why = NULL;
	r->lost = false;
	if (dlid == LID_PERMISSIVE || owns_lid(f, src, dlid)) {
		set_dest(f, src, r);
		return 0;
	}
	if (dlid == 0 || dlid >= FS_MCAST_BASE) {
		r->why = dlid ? "multicast DLID for a MAD" : "DLID 0";
		return -1;
	}
	uint32_t at = src;
	/* a CA (or a switch's own port 0) puts the packet on the wire */
	if (!fs_is_switch(f, f->ports[src].node)) {
		at = cross(f, src, min_state, r);
		if (at == FS_NONE)
			return -1;
		r->hops++;
	}
	for (;;) {
		uint32_t node = f->ports[at].node;
		if (owns_lid(f, at, dlid)) {
			set_dest(f, at, r);
			return 0;
		}
		if (!fs_is_switch(f, node)) {
			r->why = "reached a CA that does not own the DLID";
			return -1;
		}
		if (r->hops >= MAX_LID_HOPS) {
			r->why = "routing loop (over 64 hops)";
			return -1;
		}
		const struct fs_switch *s = &f->sws[f->nodes[node].sw];
		if (dlid >= s->lft_size || dlid > s->si.linear_fdb_top || s->lft[dlid] == 0xff) {
			r->why = "no LFT entry for the DLID";
			return -1;
		}
		unsigned port = s->lft[dlid];
		if (port == 0) {
			r->why = "LFT sends the DLID to port 0 of a switch that does not own it";
			return -1;
		}
		uint32_t out = fabric_port(f, node, port);
		if (out == FS_NONE) {
			r->why = "LFT names a port the switch lacks";
			return -1;
		}
		at = cross(f, out, min_state, r);
		if (at == FS_NONE)
			return -1;
		r->hops++;
	}
}

bool sma_exchange(struct fabric *f, uint32_t sm_port, uint16_t dlid, uint8_t *mad, uint16_t *src)
{
	struct route r, back;
	bool dr = mad[1] == MAD_CLASS_SUBN_DR;
	if ((dr ? route_dr(f, sm_port, mad, &r) : route_lid(f, sm_port, dlid, true, &r)) < 0)
		return false;
	if (sma_process(f, r.arrival, mad, 1) != AGENT_REPLY)
		return false;
	uint32_t from = fs_is_switch(f, f->ports[r.dest].node) ? r.dest : r.arrival;
	uint16_t sm_lid = f->ports[sm_port].pi.lid;
	if ((dr ? route_dr(f, from, mad, &back) : route_lid(f, from, sm_lid, true, &back)) < 0 ||
	    back.dest != sm_port)
		return false;
	*src = dr ? 0xffff : f->ports[r.dest].pi.lid;
	return true;
}
