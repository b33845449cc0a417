/* Virtual ports (IBA Annex A18, Virtualization) of an SR-IOV HCA, as the SMA shows them:
 * VirtualizationInfo, VPortInfo, VNodeInfo, VPortState, VNodeDescription, VPortGUIDInfo and
 * VPortPKeyTable (0xFFB0-0xFFB6; layouts and modifiers in mad/vport_attrs.h).
 *
 * The rules modelled, each from the attributes' documented meaning, not from an SM:
 * - a port has virtualization only if its hardware has it (VPortCap > 0; PortInfo's
 *   CapabilityMask2 IsVirtualizationSupported says so); the others refuse the attributes;
 * - until an SM sets VirtualizationInfo.Enable, vport 0 is the physical port and follows its
 *   state, and every other vport reads Down; enabled, vport 0 (the PF) has a state of its own;
 * - a VF that appears or goes sets VPortStateChange (an SM clears it by writing 1) and, with
 *   virtualization enabled, the port sends trap 1146;
 * - a vport's state goes Init -> Armed -> Active (or Init -> Active) only by an SM's Set, and
 *   Active only while the physical port is Active; a physical link that goes down takes its
 *   VFs back to Init; a Set to a vport with no VF, or an illegal transition, changes nothing
 *   and answers "invalid field";
 * - a vport's LID is the SM's to give when it asks for one (LIDRequired); otherwise it uses
 *   the LID of the vport LIDByVPortIndex names, or the physical port's;
 * - vport 0's P_Key table is the physical port's; every VF has one of VPartitionCap entries;
 * - VPortState, VNodeInfo, VNodeDescription and VPortGUIDInfo are read-only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "fabric.h"
#include "mad/mad_types.h"
#include "mad/smp_attrs.h"
#include "mad/vport_attrs.h"

#define ST_OK        MAD_STATUS_OK
#define ST_BAD_ATTR  MAD_STATUS_UNSUP_METHOD_ATTR
#define ST_BAD_FIELD MAD_STATUS_INVALID_FIELD

static bool has_vport(const struct fs_port *p, unsigned index)
{
	return p->vports && index < p->vport_cap && p->vports[index].state != PORT_STATE_DOWN;
}

/* A VF the SMA shows: there, and virtualization on (off, every VF reads Down) */
static bool vf_shown(const struct fs_port *p, unsigned index)
{
	return index && p->virt_enable && has_vport(p, index);
}

/* A vport LID into the LID table (the packets go to the physical port); one another port
 * holds stays that port's (a duplicate, which verify reports). */
static void vlid_move(struct fabric *f, uint32_t port, uint16_t old, uint16_t lid)
{
	if (old && old < FS_MAX_UCAST && f->lid_port[old] == port && f->ports[port].pi.lid != old)
		f->lid_port[old] = FS_NONE;
	if (lid && lid < FS_MAX_UCAST && f->lid_port[lid] == FS_NONE)
		f->lid_port[lid] = port;
}

int fabric_virt_cap(struct fabric *f, uint32_t port, unsigned cap)
{
	struct fs_port *p = &f->ports[port];
	if (fs_is_switch(f, p->node) || p->num == 0 || cap > 0xffff)
		return -1;
	p->vport_cap = (uint16_t)cap;
	if (cap) {
		p->pi.capability_mask2 |= MAD_CAP2_VIRT_SUPPORTED;
		p->pi.capability_mask |= PORT_CAP_HAS_CAP_MASK2;
	} else {
		p->pi.capability_mask2 &= (uint16_t)~MAD_CAP2_VIRT_SUPPORTED;
	}
	return 0;
}

static int vports_alloc(struct fs_port *p)
{
	if (p->vports)
		return 0;
	p->vports = calloc(p->vport_cap, sizeof(*p->vports));
	if (!p->vports)
		return -1;
	for (unsigned i = 0; i < p->vport_cap; i++)
		p->vports[i].state = PORT_STATE_DOWN;
	p->vports[0].state = PORT_STATE_INIT; /* the PF */
	return 0;
}

static void vport_changed(struct fabric *f, uint32_t port)
{
	struct fs_port *p = &f->ports[port];
	p->vport_change = true;
	if (p->virt_enable && f->on_vport_change && f->nodes[p->node].present)
		f->on_vport_change(f, port, f->ctx);
}

static bool guid_taken(const struct fabric *f, uint64_t guid)
{
	return u64map_get(&f->by_port_guid, guid) != U64MAP_NONE ||
	       u64map_get(&f->by_node_guid, guid) != U64MAP_NONE ||
	       u64map_get(&f->by_vport_guid, guid) != U64MAP_NONE;
}

int fabric_vport_add(struct fabric *f, uint32_t port, unsigned index, uint64_t guid,
                     bool lid_required, char *err, size_t errlen)
{
	struct fs_port *p = &f->ports[port];
	if (!p->vport_cap) {
		snprintf(err, errlen, "port has no virtualization (vports=N in the spec)");
		return -1;
	}
	if (index == 0 || index >= p->vport_cap) {
		snprintf(err, errlen, "vport index 1 to %u (0 is the PF)", p->vport_cap - 1u);
		return -1;
	}
	if (vports_alloc(p) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (has_vport(p, index)) {
		snprintf(err, errlen, "vport %u is there already", index);
		return -1;
	}
	if (!guid)
		guid = 0xfa00000000000000ull | (uint64_t)port << 16 | index;
	if (guid == UINT64_MAX || guid_taken(f, guid)) {
		snprintf(err, errlen, "GUID 0x%016llx is taken", (unsigned long long)guid);
		return -1;
	}
	if (u64map_put(&f->by_vport_guid, guid, port) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	struct fs_vport *v = &p->vports[index];
	memset(v, 0, sizeof(*v));
	v->guid = guid;
	v->state = PORT_STATE_INIT;
	v->lid_required = lid_required;
	v->pkeys[0] = 0xffff; /* as a port out of reset */
	fs_journal_add(f, FS_J_VPORT, port, index << 1 | 1);
	vport_changed(f, port);
	return 0;
}

int fabric_vport_remove(struct fabric *f, uint32_t port, unsigned index, char *err, size_t errlen)
{
	struct fs_port *p = &f->ports[port];
	if (index == 0 || !has_vport(p, index)) {
		snprintf(err, errlen, "no VF at vport %u", index);
		return -1;
	}
	struct fs_vport *v = &p->vports[index];
	vlid_move(f, port, v->lid, 0);
	u64map_del(&f->by_vport_guid, v->guid);
	memset(v, 0, sizeof(*v));
	v->state = PORT_STATE_DOWN;
	fs_journal_add(f, FS_J_VPORT, port, index << 1);
	vport_changed(f, port);
	return 0;
}

uint8_t fabric_vport_state(const struct fabric *f, uint32_t port, unsigned index)
{
	const struct fs_port *p = &f->ports[port];
	if (index >= p->vport_cap)
		return PORT_STATE_DOWN;
	if (!p->virt_enable)
		return index == 0 ? p->pi.port_state : PORT_STATE_DOWN;
	return p->vports ? p->vports[index].state : PORT_STATE_DOWN;
}

uint16_t fabric_vport_lid(const struct fabric *f, uint32_t port, unsigned index)
{
	const struct fs_port *p = &f->ports[port];
	if (index == 0 || !has_vport(p, index))
		return p->pi.lid;
	const struct fs_vport *v = &p->vports[index];
	if (v->lid_required)
		return v->lid;
	unsigned by = v->lid_by_index;
	if (by && by != index && has_vport(p, by) && p->vports[by].lid_required)
		return p->vports[by].lid;
	return p->pi.lid;
}

void fabric_vports_link_down(struct fabric *f, uint32_t port)
{
	struct fs_port *p = &f->ports[port];
	bool changed = false;
	for (unsigned i = 0; p->vports && i < p->vport_cap; i++)
		if (p->vports[i].state > PORT_STATE_INIT) {
			p->vports[i].state = PORT_STATE_INIT;
			changed = true;
		}
	if (changed)
		p->vport_change = true;
}

void fabric_vports_reset(struct fabric *f, uint32_t port)
{
	struct fs_port *p = &f->ports[port];
	for (unsigned i = 1; p->vports && i < p->vport_cap; i++) {
		vlid_move(f, port, p->vports[i].lid, 0);
		if (p->vports[i].state != PORT_STATE_DOWN)
			u64map_del(&f->by_vport_guid, p->vports[i].guid);
	}
	free(p->vports);
	p->vports = NULL;
	p->virt_enable = false;
	p->vport_change = false;
}

static uint16_t do_virt_info(struct fabric *f, uint32_t in, bool set, uint8_t *data)
{
	struct fs_port *p = &f->ports[in];
	if (set) {
		struct mad_virt_info req;
		mad_virt_info_decode(data, 64, &req, NULL);
		if (req.enable && vports_alloc(p) < 0)
			return ST_BAD_FIELD;
		if (req.enable && !p->virt_enable) {
			/* the PF gets a state of its own, from where the port stands */
			p->vports[0].state =
			    p->pi.port_state >= PORT_STATE_INIT ? PORT_STATE_INIT : PORT_STATE_DOWN;
			p->vports[0].guid = p->guid;
		}
		p->virt_enable = req.enable;
		if (req.vport_state_change)
			p->vport_change = false; /* write 1 to clear */
	}
	struct mad_virt_info vi = {
	    .vport_cap = p->vport_cap,
	    .enable = p->virt_enable,
	    .vport_state_change = p->vport_change,
	};
	for (unsigned i = p->vport_cap; i-- > 0;)
		if (fabric_vport_state(f, in, i) != PORT_STATE_DOWN) {
			vi.vport_index_top = (uint16_t)i;
			break;
		}
	mad_virt_info_encode(&vi, data, 64, NULL);
	return ST_OK;
}

static void vport_info_of(const struct fabric *f, uint32_t in, unsigned index,
                          struct mad_vport_info *vp)
{
	const struct fs_port *p = &f->ports[in];
	memset(vp, 0, sizeof(*vp));
	vp->state = fabric_vport_state(f, in, index);
	vp->guid_cap = 1;
	vp->capability_mask = 0x0001; /* CM */
	if (index == 0) {
		vp->port_guid = p->guid;
		vp->lid = p->pi.lid;
	} else if (vf_shown(p, index)) {
		const struct fs_vport *v = &p->vports[index];
		vp->port_guid = v->guid;
		vp->lid = v->lid;
		vp->lid_required = v->lid_required;
		vp->lid_by_index = v->lid_by_index;
	}
}

/* The transitions an SM may ask of a vport: 0 allowed, -1 not. */
static int vport_transition(const struct fs_port *p, uint8_t from, uint8_t to)
{
	if (to == 0 || to == from)
		return 0;
	switch (to) {
	case PORT_STATE_INIT: return from >= PORT_STATE_INIT ? 0 : -1;
	case PORT_STATE_ARMED: return from == PORT_STATE_INIT ? 0 : -1;
	case PORT_STATE_ACTIVE:
		return (from == PORT_STATE_INIT || from == PORT_STATE_ARMED) &&
		               p->pi.port_state == PORT_STATE_ACTIVE
		           ? 0
		           : -1;
	default: return -1; /* Down is the VF's going, not the SM's to ask */
	}
}

static uint16_t vport_info_set(struct fabric *f, uint32_t in, unsigned index, const uint8_t *data)
{
	struct fs_port *p = &f->ports[in];
	if (!p->virt_enable || !p->vports || p->vports[index].state == PORT_STATE_DOWN)
		return ST_BAD_FIELD;
	struct fs_vport *v = &p->vports[index];
	struct mad_vport_info req;
	mad_vport_info_decode(data, 64, &req, NULL);
	if (vport_transition(p, v->state, req.state) < 0)
		return ST_BAD_FIELD;
	if (index && v->lid_required && req.lid >= FS_MAX_UCAST)
		return ST_BAD_FIELD;
	if (index && v->lid_required && req.lid != v->lid) {
		vlid_move(f, in, v->lid, req.lid);
		v->lid = req.lid;
	}
	if (req.state && req.state != v->state) {
		v->state = req.state;
		fs_journal_add(f, FS_J_VSTATE, in, index << 8 | req.state);
	}
	return ST_OK;
}

static uint16_t do_vport_info(struct fabric *f, uint32_t in, uint32_t mod, bool set, uint8_t *data)
{
	unsigned index = mod & 0xffff;
	if (index >= f->ports[in].vport_cap)
		return ST_BAD_FIELD;
	uint16_t st = set ? vport_info_set(f, in, index, data) : ST_OK;
	struct mad_vport_info vp;
	vport_info_of(f, in, index, &vp);
	mad_vport_info_encode(&vp, data, 64, NULL);
	return st;
}

static uint16_t do_vport_state(struct fabric *f, uint32_t in, uint32_t mod, uint8_t *data)
{
	unsigned block = mod & 0xffff;
	if (block * MAD_VPORT_STATE_BLOCK >= f->ports[in].vport_cap)
		return ST_BAD_FIELD;
	struct mad_vport_state vs;
	memset(&vs, 0, sizeof(vs));
	for (unsigned i = 0; i < MAD_VPORT_STATE_BLOCK; i++)
		vs.state[i] = fabric_vport_state(f, in, block * MAD_VPORT_STATE_BLOCK + i);
	mad_vport_state_encode(&vs, data, 64, NULL);
	return ST_OK;
}

static uint16_t do_vnode(struct fabric *f, uint32_t in, uint16_t attr, uint32_t mod, uint8_t *data)
{
	const struct fs_port *p = &f->ports[in];
	const struct fs_node *n = fs_node_of(f, in);
	unsigned index = mod & 0xffff;
	if (index >= p->vport_cap)
		return ST_BAD_FIELD;
	bool vf = vf_shown(p, index);
	memset(data, 0, 64);
	if (attr == MAD_ATTR_VNODE_DESC) {
		char d[65];
		if (vf)
			snprintf(d, sizeof(d), "%.56s VF%u", n->desc, index);
		else
			snprintf(d, sizeof(d), "%s", n->desc);
		memcpy(data, d, strlen(d));
		return ST_OK;
	}
	/* each VF is a virtual node of its own (a VM's HCA); the PF is the node */
	struct mad_vnode_info vn = {
	    .partition_cap = FS_VPORT_PKEYS,
	    .local_port_num = p->num,
	    .num_ports = 1,
	    .node_guid = vf ? p->vports[index].guid ^ (1ull << 56) : n->guid,
	};
	mad_vnode_info_encode(&vn, data, 64, NULL);
	return ST_OK;
}

static uint16_t do_vport_guids(struct fabric *f, uint32_t in, uint32_t mod, uint8_t *data)
{
	unsigned index, block;
	mad_vport_block_am_split(mod, &index, &block);
	if (index >= f->ports[in].vport_cap || block != 0)
		return ST_BAD_FIELD; /* GUIDCap 1: one block */
	struct mad_vport_info vp;
	vport_info_of(f, in, index, &vp);
	struct mad_guid_info g;
	memset(&g, 0, sizeof(g));
	g.guid[0] = vp.port_guid;
	mad_guid_info_encode(&g, data, 64, NULL);
	return ST_OK;
}

static uint16_t do_vport_pkeys(struct fabric *f, uint32_t in, uint32_t mod, bool set, uint8_t *data)
{
	struct fs_port *p = &f->ports[in];
	unsigned index, block;
	mad_vport_block_am_split(mod, &index, &block);
	if (index >= p->vport_cap || block * 32 >= FS_VPORT_PKEYS)
		return ST_BAD_FIELD;
	uint16_t *pk;
	uint16_t none[32] = {0};
	if (index == 0)
		pk = p->pkeys + block * 32; /* the PF's is the port's own table */
	else if (vf_shown(p, index))
		pk = p->vports[index].pkeys + block * 32;
	else if (set)
		return ST_BAD_FIELD;
	else
		pk = none;
	struct mad_pkey_table t;
	if (set) {
		mad_pkey_table_decode(data, 64, &t, NULL);
		if (memcmp(pk, t.pkey, sizeof(t.pkey)))
			fs_journal_add(f, index ? FS_J_VPKEY : FS_J_PKEY, in,
			               index ? index << 16 | block : block);
		memcpy(pk, t.pkey, sizeof(t.pkey));
	}
	memset(&t, 0, sizeof(t));
	memcpy(t.pkey, pk, sizeof(t.pkey));
	mad_pkey_table_encode(&t, data, 64, NULL);
	return ST_OK;
}

uint16_t sma_virt(struct fabric *f, uint32_t in, uint16_t attr, uint32_t mod, bool set,
                  uint8_t *data)
{
	if (fs_is_switch(f, f->ports[in].node) || !f->ports[in].vport_cap)
		return ST_BAD_ATTR;
	switch (attr) {
	case MAD_ATTR_VIRT_INFO: return do_virt_info(f, in, set, data);
	case MAD_ATTR_VPORT_INFO: return do_vport_info(f, in, mod, set, data);
	case MAD_ATTR_VPORT_PKEY_TABLE: return do_vport_pkeys(f, in, mod, set, data);
	default: break;
	}
	if (set)
		return ST_BAD_ATTR; /* the rest are read-only */
	switch (attr) {
	case MAD_ATTR_VPORT_STATE: return do_vport_state(f, in, mod, data);
	case MAD_ATTR_VNODE_INFO:
	case MAD_ATTR_VNODE_DESC: return do_vnode(f, in, attr, mod, data);
	case MAD_ATTR_VPORT_GUID_INFO: return do_vport_guids(f, in, mod, data);
	default: return ST_BAD_ATTR;
	}
}
