#include "fabric.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/mad_types.h"

/* ---- model ---- */

void fabric_init(struct fabric *f)
{
	memset(f, 0, sizeof(*f));
	f->next_sw_guid = 0x200000;
	f->next_ca_guid = 0x100000;
	f->lid_port = malloc(sizeof(uint32_t) * FS_MAX_UCAST);
	if (!f->lid_port)
		abort();
	for (uint32_t i = 0; i < FS_MAX_UCAST; i++)
		f->lid_port[i] = FS_NONE;
}

void fabric_free(struct fabric *f)
{
	fs_journal_free(&f->journal);
	for (uint32_t i = 0; i < f->nports; i++) {
		free(f->ports[i].pkeys);
		free(f->ports[i].vlarb);
		free(f->ports[i].cc);
		free(f->ports[i].guids);
		free(f->ports[i].vports);
	}
	for (uint32_t i = 0; i < f->nsws; i++) {
		free(f->sws[i].lft);
		free(f->sws[i].mft);
		free(f->sws[i].sl2vl);
	}
	free(f->nodes);
	free(f->ports);
	free(f->sws);
	free(f->lid_port);
	u64map_free(&f->by_node_guid);
	u64map_free(&f->by_port_guid);
	u64map_free(&f->by_vport_guid);
	u64map_free(&f->by_name);
}

static void *grow(void *arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return arr;
	uint32_t ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(arr, (size_t)ncap * elem);
	if (!n)
		abort();
	memset((char *)n + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
	*cap = ncap;
	return n;
}

/* What a port shows it supports (and enables, until an SM changes it) from its caps. */
static void port_caps(struct fs_port *p)
{
	struct mad_port_info *pi = &p->pi;
	pi->link_width_supported = pi->link_width_enabled = p->width_cap;
	mad_link_speeds_set_supported(pi, p->speed_cap);
	pi->link_speed_enabled = pi->link_speed_supported;
	pi->link_speed_ext_enabled = pi->link_speed_ext_supported;
	pi->link_speed_ext_enabled2 = pi->link_speed_ext_supported2;
	if (p->width_cap & LINK_WIDTH_2X) {
		pi->capability_mask2 |= PORT_CAP2_WIDTH_2X;
		pi->capability_mask |= PORT_CAP_HAS_CAP_MASK2;
	}
}

static void port_defaults(struct fabric *f, struct fs_port *p, const struct fs_node *n)
{
	struct mad_port_info *pi = &p->pi;
	memset(pi, 0, sizeof(*pi));
	pi->local_port_num = p->num;
	pi->link_down_default_state = PHYS_STATE_POLLING;
	pi->port_state = PORT_STATE_DOWN;
	pi->phys_state = PHYS_STATE_POLLING;
	pi->mtu_cap = 5; /* 4096 */
	pi->neighbor_mtu = 1;
	pi->vl_cap = 4; /* VL0-VL7 */
	pi->oper_vls = 1;
	pi->vl_arb_high_cap = 8;
	pi->vl_arb_low_cap = 8;
	pi->vl_stall_count = 7;
	pi->hoq_life = 31;
	pi->init_type_reply = 0;
	if (n->type == NODE_TYPE_SWITCH) {
		pi->capability_mask = PORT_CAP_IS_NOTICE | PORT_CAP_IS_TRAP | PORT_CAP_HAS_SL_MAP |
		                      PORT_CAP_IS_CAP_MASK_NOTICE;
		pi->guid_cap = 1;
	} else {
		pi->capability_mask = PORT_CAP_IS_TRAP | (1u << 6) | (1u << 11) | (1u << 16) |
		                      (1u << 19) | PORT_CAP_IS_CAP_MASK_NOTICE | (1u << 25) |
		                      PORT_CAP_IS_OTHER_LOCAL_CHANGES_NOTICE;
		pi->guid_cap = 32;
	}
	(void)f;
	port_caps(p);
}

static unsigned pkey_cap(const struct fabric *f, const struct fs_node *n, unsigned num)
{
	if (n->type == NODE_TYPE_SWITCH && num != 0)
		return f->sws[n->sw].si.partition_enforcement_cap;
	return n->type == NODE_TYPE_SWITCH ? 8 : 64;
}

unsigned fabric_pkey_cap(const struct fabric *f, uint32_t port)
{
	const struct fs_port *p = &f->ports[port];
	return pkey_cap(f, &f->nodes[p->node], p->num);
}

uint32_t fabric_add_node(struct fabric *f, uint8_t type, unsigned nports, const char *name,
                         uint64_t guid)
{
	bool sw = type == NODE_TYPE_SWITCH;
	uint32_t ni = f->nnodes;
	f->nodes = grow(f->nodes, &f->nodes_cap, ni + 1, sizeof(*f->nodes));
	struct fs_node *n = &f->nodes[ni];
	memset(n, 0, sizeof(*n));
	n->type = type;
	n->nports = (uint8_t)nports;
	n->present = true;
	n->revision = 0xa1;
	if (!guid) {
		guid = sw ? f->next_sw_guid++ : f->next_ca_guid;
		if (!sw)
			f->next_ca_guid += 1 + nports;
	}
	n->guid = guid;
	n->sys_guid = guid;
	snprintf(n->name, sizeof(n->name), "%s", name);
	snprintf(n->desc, sizeof(n->desc), "%s", name);
	n->sw = FS_NONE;
	f->nnodes++;

	if (sw) {
		f->sws = grow(f->sws, &f->sws_cap, f->nsws + 1, sizeof(*f->sws));
		struct fs_switch *s = &f->sws[f->nsws];
		memset(s, 0, sizeof(*s));
		s->node = ni;
		s->si.linear_fdb_cap = FS_LFT_CAP;
		s->si.multicast_fdb_cap = FS_MFT_CAP;
		s->si.life_time_value = 18;
		s->si.partition_enforcement_cap = 32;
		s->si.inbound_enforcement_cap = 1;
		s->si.outbound_enforcement_cap = 1;
		s->si.optimized_sl2vl_programming = 1; /* SL-to-VL Sets for all ports at once */
		s->positions = (uint8_t)((nports + 1 + 15) / 16);
		n->sw = f->nsws++;
	}

	unsigned first = sw ? 0 : 1;
	n->first_port = f->nports;
	f->ports = grow(f->ports, &f->ports_cap, f->nports + nports + 1, sizeof(*f->ports));
	for (unsigned num = first; num <= nports; num++) {
		struct fs_port *p = &f->ports[f->nports];
		memset(p, 0, sizeof(*p));
		p->node = ni;
		p->num = (uint8_t)num;
		p->peer = FS_NONE;
		p->guid = sw ? guid : guid + num;
		p->width_cap = 1 | 2;     /* 1x, 4x */
		p->speed_cap = 1 | 2 | 4; /* SDR, DDR, QDR */
		port_defaults(f, p, n);
		unsigned cap = pkey_cap(f, n, num);
		p->pkeys = calloc(cap ? cap : 1, sizeof(uint16_t));
		if (!p->pkeys)
			abort();
		p->pkeys[0] = 0xffff;
		if (!sw)
			u64map_put(&f->by_port_guid, p->guid, f->nports);
		f->nports++;
	}
	if (sw) {
		u64map_put(&f->by_port_guid, guid, n->first_port);
		/* switch port 0 is the management port: always up */
		f->ports[n->first_port].pi.port_state = PORT_STATE_INIT;
		f->ports[n->first_port].pi.phys_state = PHYS_STATE_LINKUP;
	}
	u64map_put(&f->by_node_guid, guid, ni);
	u64map_put(&f->by_name, u64map_str_key(name), ni);
	return ni;
}

uint32_t fabric_port(const struct fabric *f, uint32_t node, unsigned num)
{
	const struct fs_node *n = &f->nodes[node];
	if (num > n->nports)
		return FS_NONE;
	if (n->type == NODE_TYPE_SWITCH)
		return n->first_port + num;
	return num == 0 ? FS_NONE : n->first_port + num - 1;
}

uint32_t fabric_lid_port(const struct fabric *f, uint32_t port)
{
	const struct fs_node *n = fs_node_of(f, port);
	return n->type == NODE_TYPE_SWITCH ? n->first_port : port;
}

uint32_t fabric_find_node(const struct fabric *f, const char *s)
{
	uint32_t n = u64map_get(&f->by_name, u64map_str_key(s));
	if (n != FS_NONE)
		return n;
	char *end;
	uint64_t g = strtoull(s, &end, 16);
	if (*s && !*end && (n = u64map_get(&f->by_node_guid, g)) != FS_NONE)
		return n;
	for (uint32_t i = 0; i < f->nnodes; i++)
		if (strcmp(f->nodes[i].desc, s) == 0)
			return i;
	return FS_NONE;
}

/* Widths of at most as many lanes as w has */
static uint8_t widths_upto(uint8_t w)
{
	unsigned lanes = mad_link_lanes(w);
	uint8_t m = 0;
	for (unsigned b = 1; b <= LINK_WIDTH_2X; b <<= 1)
		if (mad_link_lanes((uint8_t)b) <= lanes)
			m |= (uint8_t)b;
	return m;
}

static unsigned fastest(uint16_t speeds)
{
	unsigned s = LINK_SPEEDS;
	for (unsigned i = 0; i < LINK_SPEEDS; i++)
		if (speeds & (1u << i))
			s = i;
	return s;
}

/* Width and speed the two ends of a link agree on: the best both enable and support, and
 * the cable carries. */
static void negotiate(struct fabric *f, uint32_t a)
{
	struct fs_port *pa = &f->ports[a], *pb = &f->ports[pa->peer];
	uint8_t wm =
	    pa->pi.link_width_enabled & pb->pi.link_width_enabled & pa->width_cap & pb->width_cap;
	if (pa->cable_width)
		wm &= widths_upto(pa->cable_width);
	uint16_t sm = mad_link_speeds_enabled(&pa->pi) & mad_link_speeds_enabled(&pb->pi) &
	              pa->speed_cap & pb->speed_cap;
	if (pa->cable_speed)
		sm &= (uint16_t)((1u << pa->cable_speed) - 1);
	uint8_t w = mad_link_width_widest(wm);
	unsigned sp = fastest(sm);
	pa->pi.link_width_active = pb->pi.link_width_active = w ? w : LINK_WIDTH_1X;
	mad_link_speed_set_active(&pa->pi, sp < LINK_SPEEDS ? (enum link_speed)sp : LINK_SDR);
	mad_link_speed_set_active(&pb->pi, sp < LINK_SPEEDS ? (enum link_speed)sp : LINK_SDR);
}

uint8_t fabric_port_widths(uint8_t w, unsigned speed)
{
	unsigned lanes = mad_link_lanes(w);
	uint8_t m = LINK_WIDTH_1X | w;
	if (lanes >= 4)
		m |= LINK_WIDTH_4X;
	if (lanes >= 2 && speed >= LINK_HDR && speed < LINK_SPEEDS)
		m |= LINK_WIDTH_2X;
	return m;
}

int fabric_parse_rate(const char *text, uint8_t *width, unsigned *speed)
{
	*width = 0;
	*speed = LINK_SPEEDS;
	char *e;
	unsigned long lanes = strtoul(text, &e, 10);
	if (e != text) {
		if (*e != 'x' && *e != 'X')
			return -1;
		*width = mad_link_width_of_lanes((unsigned)lanes);
		if (!*width)
			return -1;
		text = e + 1;
	}
	if (!*text)
		return *width ? 0 : -1;
	int sp = mad_link_speed_parse(text);
	if (sp < 0)
		return -1;
	*speed = (unsigned)sp;
	return 0;
}

void fabric_link_best(const struct fabric *f, uint32_t p, uint8_t *width, unsigned *speed)
{
	const struct fs_port *pa = &f->ports[p], *pb = &f->ports[pa->peer];
	*width = mad_link_width_widest(pa->width_cap & pb->width_cap);
	*speed = fastest(pa->speed_cap & pb->speed_cap);
}

int fabric_connect(struct fabric *f, uint32_t a, uint32_t b, uint8_t width, uint16_t speed)
{
	if (a == FS_NONE || b == FS_NONE || a == b)
		return -1;
	if (f->ports[a].peer != FS_NONE || f->ports[b].peer != FS_NONE)
		return -1;
	if (f->ports[a].num == 0 && fs_is_switch(f, f->ports[a].node))
		return -1;
	if (f->ports[b].num == 0 && fs_is_switch(f, f->ports[b].node))
		return -1;
	f->ports[a].peer = b;
	f->ports[b].peer = a;
	if (width)
		f->ports[a].width_cap = f->ports[b].width_cap = width;
	if (speed)
		f->ports[a].speed_cap = f->ports[b].speed_cap = speed;
	return 0;
}

bool fabric_link_up(const struct fabric *f, uint32_t p)
{
	const struct fs_port *a = &f->ports[p];
	if (a->peer == FS_NONE)
		return false;
	const struct fs_port *b = &f->ports[a->peer];
	return !a->unplugged && !b->unplugged && !a->disabled && !b->disabled &&
	       f->nodes[a->node].present && f->nodes[b->node].present;
}

static void port_link_state(struct fabric *f, uint32_t p)
{
	struct fs_port *port = &f->ports[p];
	if (port->num == 0 && fs_is_switch(f, port->node))
		return;
	if (fabric_link_up(f, p)) {
		if (port->pi.port_state == PORT_STATE_DOWN) {
			port->pi.port_state = PORT_STATE_INIT;
			negotiate(f, p);
		}
		port->pi.phys_state = PHYS_STATE_LINKUP;
	} else {
		if (port->pi.port_state != PORT_STATE_DOWN)
			port->cnt.link_downed++;
		fabric_vports_link_down(f, p);
		port->pi.port_state = PORT_STATE_DOWN;
		port->pi.phys_state = port->disabled ? PHYS_STATE_DISABLED : PHYS_STATE_POLLING;
		port->pi.link_width_active = 0;
		mad_link_speed_set_active(&port->pi, LINK_SPEEDS);
	}
}

/* A switch's capabilities are port 0's: it has the extended speeds any of its ports has. */
static void switch_caps(struct fabric *f, uint32_t node)
{
	const struct fs_node *n = &f->nodes[node];
	struct mad_port_info *p0 = &f->ports[n->first_port].pi;
	for (unsigned num = 1; num <= n->nports; num++)
		p0->capability_mask |=
		    f->ports[n->first_port + num].pi.capability_mask & PORT_CAP_HAS_EXT_SPEEDS;
}

void fabric_finalize(struct fabric *f)
{
	for (uint32_t p = 0; p < f->nports; p++) {
		struct fs_port *port = &f->ports[p];
		port_caps(port);
		port_link_state(f, p);
	}
	for (uint32_t i = 0; i < f->nsws; i++)
		switch_caps(f, f->sws[i].node);
}

void fabric_cable_limit(struct fabric *f, uint32_t p, uint8_t width, unsigned speed)
{
	struct fs_port *a = &f->ports[p];
	if (a->peer == FS_NONE)
		return;
	struct fs_port *b = &f->ports[a->peer];
	a->cable_width = b->cable_width = width;
	a->cable_speed = b->cable_speed = speed < LINK_SPEEDS ? (uint8_t)(speed + 1) : 0;
	if (a->pi.port_state != PORT_STATE_DOWN)
		negotiate(f, p);
}

static void link_changed(struct fabric *f, uint32_t p)
{
	uint8_t before = f->ports[p].pi.port_state;
	port_link_state(f, p);
	if (before == f->ports[p].pi.port_state)
		return;
	const struct fs_node *n = fs_node_of(f, p);
	if (n->type == NODE_TYPE_SWITCH)
		f->sws[n->sw].si.port_state_change = 1;
	if (f->on_link_change && n->present)
		f->on_link_change(f, p, f->ctx);
}

void fabric_set_link(struct fabric *f, uint32_t p, bool up)
{
	struct fs_port *a = &f->ports[p];
	a->unplugged = !up;
	if (a->peer != FS_NONE)
		f->ports[a->peer].unplugged = !up;
	link_changed(f, p);
	if (a->peer != FS_NONE)
		link_changed(f, a->peer);
}

void fabric_remove_node(struct fabric *f, uint32_t node)
{
	struct fs_node *n = &f->nodes[node];
	if (!n->present)
		return;
	n->present = false;
	for (unsigned num = 0; num <= n->nports; num++) {
		uint32_t p = fabric_port(f, node, num);
		if (p == FS_NONE)
			continue;
		/* a node that is gone holds no LIDs */
		uint16_t lid = f->ports[p].pi.lid;
		uint8_t lmc = f->ports[p].pi.lmc;
		f->ports[p].pi.lid = 0;
		f->ports[p].pi.lmc = 0;
		fabric_lid_update(f, p, lid, lmc);
		link_changed(f, p);
		if (f->ports[p].peer != FS_NONE)
			link_changed(f, f->ports[p].peer);
	}
	if (n->type == NODE_TYPE_SWITCH)
		switch_caps(f, node);
}

void fabric_restore_node(struct fabric *f, uint32_t node)
{
	struct fs_node *n = &f->nodes[node];
	if (n->present)
		return;
	n->present = true;
	/* it comes back as after a power cycle: no LIDs, no tables */
	if (n->sw != FS_NONE) {
		struct fs_switch *s = &f->sws[n->sw];
		if (s->lft)
			memset(s->lft, 0xff, s->lft_size);
		s->si.linear_fdb_top = 0;
		s->si.port_state_change = 0;
		if (s->mft)
			memset(s->mft, 0, sizeof(uint16_t) * FS_MFT_CAP * s->positions);
		free(s->sl2vl);
		s->sl2vl = NULL;
	}
	for (unsigned num = 0; num <= n->nports; num++) {
		uint32_t p = fabric_port(f, node, num);
		if (p == FS_NONE)
			continue;
		uint8_t vl_cap = f->ports[p].pi.vl_cap;
		bool unplugged = f->ports[p].unplugged;
		free(f->ports[p].vlarb);
		f->ports[p].vlarb = NULL;
		free(f->ports[p].cc); /* volatile, as the rest: a reset node holds power-on zeros */
		f->ports[p].cc = NULL;
		memset(f->ports[p].sl2vl, 0, sizeof(f->ports[p].sl2vl));
		port_defaults(f, &f->ports[p], n); /* the caps stay: the hardware's */
		f->ports[p].pi.vl_cap = vl_cap;    /* the hardware's, as cabled */
		fabric_vports_reset(f, p);
		if (f->ports[p].vport_cap)
			fabric_virt_cap(f, p, f->ports[p].vport_cap);
		f->ports[p].unplugged = unplugged;
		f->ports[p].disabled = false;
		if (num == 0 && n->type == NODE_TYPE_SWITCH) {
			f->ports[p].pi.port_state = PORT_STATE_INIT;
			f->ports[p].pi.phys_state = PHYS_STATE_LINKUP;
		}
		link_changed(f, p);
		if (f->ports[p].peer != FS_NONE)
			link_changed(f, f->ports[p].peer);
	}
	if (n->type == NODE_TYPE_SWITCH)
		switch_caps(f, node);
}

void fabric_lid_update(struct fabric *f, uint32_t port, uint16_t old_lid, uint8_t old_lmc)
{
	if (old_lid && old_lid < FS_MAX_UCAST) {
		uint32_t n = 1u << old_lmc;
		for (uint32_t l = old_lid; l < old_lid + n && l < FS_MAX_UCAST; l++)
			if (f->lid_port[l] == port)
				f->lid_port[l] = FS_NONE;
	}
	const struct mad_port_info *pi = &f->ports[port].pi;
	if (pi->lid && pi->lid < FS_MAX_UCAST) {
		uint32_t n = 1u << pi->lmc;
		for (uint32_t l = pi->lid; l < pi->lid + n && l < FS_MAX_UCAST; l++)
			f->lid_port[l] = port;
	}
}

uint32_t fabric_port_by_lid(const struct fabric *f, uint16_t lid)
{
	return lid && lid < FS_MAX_UCAST ? f->lid_port[lid] : FS_NONE;
}

void fabric_set_desc(struct fabric *f, uint32_t n, const char *desc)
{
	snprintf(f->nodes[n].desc, sizeof(f->nodes[n].desc), "%s", desc);
	if (f->on_desc_change)
		f->on_desc_change(f, n, f->ctx);
}
