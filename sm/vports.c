/* Virtual ports (IBA Annex A18): the VFs of SR-IOV HCAs behind their physical ports.
 *
 * Discovery (after the election, before LIDs): for each CA port whose PortInfo says it has
 * virtualization (CapabilityMask2 IsVirtualizationSupported), in a heavy sweep, or when a
 * trap 1146 or a new port asks for it: VirtualizationInfo; with `virtualization: manage`
 * Enable set and VPortStateChange cleared (written 1) before the vports are read, so that a
 * change during the read shows again; the VPortState blocks up to VPortIndexTop; VPortInfo of
 * each vport that is not Down; VNodeInfo (its P_Key table's size) and VNodeDescription of a
 * vport new to the model. A port whose reads all came back loses the vports it no longer shows. At
 * most virt_max_ports_in_process ports are read at once.
 *
 * Programming (after the physical ports are ACTIVE): a vport's own LID (lids.c gives it)
 * and its state Active by one VPortInfo Set, its P_Key table (the partition policy by its
 * GUID, fabric/partitions.c) by VPortPKeyTable Sets when it is not what the vport holds.
 * Its LID is routed through the physical port (topo_vport_lfts, after routing). */
#include <string.h>

#include "mad/vport_attrs.h"
#include "sm/sm_int.h"
#include "util/idxmap.h"

struct vctx {
	uint32_t port;
	uint32_t slot;  /* in sm->vp.active */
	uint16_t index; /* the vport asked about */
};

static bool managing(const struct sm *sm)
{
	return !strcmp(sm->cfg->virtualization, "manage");
}

/* A CA port with a link that says it has virtual ports. */
static bool port_virt(const struct topo *t, uint32_t p)
{
	const struct topo_port *pt = &t->ports[p];
	return topo_port_linked(t, p) && !topo_is_switch(t, pt->node) &&
	       (pt->pi.capability_mask & PORT_CAP_HAS_CAP_MASK2) &&
	       (pt->pi.capability_mask2 & MAD_CAP2_VIRT_SUPPORTED);
}

static void start_next(struct sm *sm, uint32_t slot);

/* Only a master writes or goes on reading: a sweep abandoned (a handover, a stop) leaves
 * the answers still coming to end without sending more. */
static bool may_send(const struct sm *sm)
{
	return sm->state == SM_STATE_MASTER && !sm->stopped && !sm->dry_run;
}

/* One of the slot's SMPs ended: when it was the last, the port is done and the slot takes
 * the next one. */
static void slot_end(struct sm *sm, uint32_t slot)
{
	if (--sm->vp.active.v[slot].out)
		return;
	uint32_t port = sm->vp.active.v[slot].port;
	uint32_t *d;
	if (!sm->topo.ports[port].virt_dirty && (d = vec_push(&sm->vp.done)))
		*d = port; /* every read came back: what it did not show is gone */
	start_next(sm, slot);
}

static void vsend(struct sm *sm, uint32_t slot, uint8_t method, uint16_t attr, uint32_t mod,
                  const uint8_t *data, sm_smp_fn cb, uint16_t index)
{
	uint32_t port = sm->vp.active.v[slot].port;
	struct vctx c = {.port = port, .slot = slot, .index = index};
	if (!may_send(sm)) {
		sm->topo.ports[port].virt_dirty = true;
		return;
	}
	if (method == MAD_METHOD_SET)
		sm->vp.sets++;
	else
		sm->vp.reads++;
	if (sm_send_dr_port(sm, port, method, attr, mod, data, data ? 64 : 0, cb, &c, sizeof(c)) <
	    0) {
		sm->topo.ports[port].virt_dirty = true;
		return;
	}
	sm->vp.active.v[slot].out++;
}

/* An answer that did not come, or refused: logged, and the port is read again next sweep. */
static bool answered(struct sm *sm, const struct mad_smp *smp, const struct vctx *c,
                     const char *what)
{
	if (smp && !smp->dr_status)
		return true;
	sm->topo.ports[c->port].virt_dirty = true;
	char name[160];
	log_rl(sm->log, &sm->vp.rl, LOGL_WARN, "vports",
	       "%s port %u: %s (vport %u) %s; read again at the next sweep",
	       sm_node_name(sm, sm->topo.ports[c->port].node, name, sizeof(name)),
	       sm->topo.ports[c->port].num, what, c->index,
	       smp ? mad_status_str(smp->dr_status) : "not answered");
	return false;
}

static void on_vnode_info(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                          void *ctx)
{
	(void)res;
	const struct vctx *c = ctx;
	if (answered(sm, smp, c, "VNodeInfo")) {
		struct mad_vnode_info vn;
		mad_vnode_info_decode(smp->data, sizeof(smp->data), &vn, NULL);
		uint32_t v = topo_vport_at(&sm->topo, c->port, c->index);
		if (v != TOPO_NONE)
			topo_vport_set_node(&sm->topo, v, vn.node_guid, vn.local_port_num,
			                    vn.num_ports, vn.partition_cap);
	}
	slot_end(sm, c->slot);
}

/* VNodeDescription has NodeDescription's layout: the VM's own name for its HCA */
static void on_vnode_desc(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                          void *ctx)
{
	(void)res;
	const struct vctx *c = ctx;
	/* a name only: a VF whose firmware refuses it keeps its HCA's, and its port is not
	 * read again for it (answered() would mark it so) */
	if (smp && !smp->dr_status) {
		struct mad_node_desc nd;
		mad_node_desc_decode(smp->data, sizeof(smp->data), &nd, NULL);
		uint32_t v = topo_vport_at(&sm->topo, c->port, c->index);
		if (v != TOPO_NONE)
			topo_vport_set_desc(&sm->topo, v, nd.desc);
	}
	slot_end(sm, c->slot);
}

static void on_vport_info(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                          void *ctx)
{
	(void)res;
	const struct vctx *c = ctx;
	if (answered(sm, smp, c, "VPortInfo")) {
		struct mad_vport_info vi;
		mad_vport_info_decode(smp->data, sizeof(smp->data), &vi, NULL);
		struct topo *t = &sm->topo;
		bool known = topo_vport_at(t, c->port, c->index) != TOPO_NONE;
		uint32_t v =
		    vi.state == PORT_STATE_DOWN
		        ? TOPO_NONE
		        : topo_vport_put(t, c->port, c->index, vi.port_guid, vi.lid_required,
		                         vi.lid_by_index, vi.lid, vi.state);
		if (v == TOPO_NONE && vi.state != PORT_STATE_DOWN) {
			char name[160];
			log_rl(sm->log, &sm->vp.rl, LOGL_WARN, "vports",
			       "%s port %u vport %u: GUID " GUID_FMT
			       " is another port's or vport's (or out of memory): left out",
			       sm_node_name(sm, t->ports[c->port].node, name, sizeof(name)),
			       t->ports[c->port].num, c->index, vi.port_guid);
		} else if (v != TOPO_NONE) {
			topo_vport_set_guid_cap(t, v, vi.guid_cap);
			if (!known || !t->vports.v[v].pkey_cap)
				vsend(sm, c->slot, MAD_METHOD_GET, MAD_ATTR_VNODE_INFO,
				      mad_vport_am(c->index), NULL, on_vnode_info, c->index);
			if (!known)
				vsend(sm, c->slot, MAD_METHOD_GET, MAD_ATTR_VNODE_DESC,
				      mad_vport_am(c->index), NULL, on_vnode_desc, c->index);
		}
	}
	slot_end(sm, c->slot);
}

static void on_vport_state(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                           void *ctx)
{
	(void)res;
	const struct vctx *c = ctx;
	if (answered(sm, smp, c, "VPortState")) {
		struct mad_vport_state vs;
		mad_vport_state_decode(smp->data, sizeof(smp->data), &vs, NULL);
		unsigned base = c->index; /* the block's first vport */
		for (unsigned i = 0;
		     i < MAD_VPORT_STATE_BLOCK && base + i <= sm->vp.active.v[c->slot].top; i++) {
			unsigned index = base + i;
			if (index == 0)
				sm->topo.ports[c->port].vport0 = vs.state[i];
			else if (vs.state[i] != PORT_STATE_DOWN)
				vsend(sm, c->slot, MAD_METHOD_GET, MAD_ATTR_VPORT_INFO,
				      mad_vport_am(index), NULL, on_vport_info, (uint16_t)index);
		}
	}
	slot_end(sm, c->slot);
}

static void read_states(struct sm *sm, uint32_t slot, const struct mad_virt_info *vi)
{
	sm->topo.ports[sm->vp.active.v[slot].port].virt_enabled = vi->enable;
	sm->vp.active.v[slot].top = vi->vport_index_top;
	if (!vi->enable)
		return;
	for (unsigned b = 0; b <= vi->vport_index_top / MAD_VPORT_STATE_BLOCK; b++)
		vsend(sm, slot, MAD_METHOD_GET, MAD_ATTR_VPORT_STATE, b, NULL, on_vport_state,
		      (uint16_t)(b * MAD_VPORT_STATE_BLOCK));
}

static void on_virt_set(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                        void *ctx)
{
	(void)res;
	const struct vctx *c = ctx;
	if (answered(sm, smp, c, "VirtualizationInfo Set")) {
		struct mad_virt_info vi;
		mad_virt_info_decode(smp->data, sizeof(smp->data), &vi, NULL);
		read_states(sm, c->slot, &vi);
	}
	slot_end(sm, c->slot);
}

static void on_virt_info(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                         void *ctx)
{
	(void)res;
	const struct vctx *c = ctx;
	if (answered(sm, smp, c, "VirtualizationInfo")) {
		struct mad_virt_info vi;
		mad_virt_info_decode(smp->data, sizeof(smp->data), &vi, NULL);
		bool manage = managing(sm);
		/* manage: on, and the change flag cleared before the read (a change during it
		 * sets it again); disable: off */
		if ((manage && (!vi.enable || vi.vport_state_change)) || (!manage && vi.enable)) {
			struct mad_virt_info set = vi;
			set.enable = manage;
			set.vport_state_change = 1;
			uint8_t data[64] = {0};
			mad_virt_info_encode(&set, data, sizeof(data), NULL);
			vsend(sm, c->slot, MAD_METHOD_SET, MAD_ATTR_VIRT_INFO, 0, data, on_virt_set,
			      0);
		} else {
			read_states(sm, c->slot, &vi);
		}
	}
	slot_end(sm, c->slot);
}

static void start_next(struct sm *sm, uint32_t slot)
{
	struct sm_vports *vp = &sm->vp;
	if (vp->head >= vp->queue.n || !may_send(sm))
		return;
	uint32_t port = vp->queue.v[vp->head++];
	vp->active.v[slot].port = port;
	vp->active.v[slot].out = 1; /* held while the first SMP goes */
	vp->active.v[slot].top = 0;
	sm->topo.ports[port].virt_dirty = false;
	vsend(sm, slot, MAD_METHOD_GET, MAD_ATTR_VIRT_INFO, 0, NULL, on_virt_info, 0);
	slot_end(sm, slot);
}

void vports_discover(struct sm *sm)
{
	struct topo *t = &sm->topo;
	struct sm_vports *vp = &sm->vp;
	vp->queue.n = vp->head = 0;
	vp->done.n = 0;
	vp->changes_at = t->vport_changes;
	bool ignore = !strcmp(sm->cfg->virtualization, "ignore");
	for (uint32_t p = 0; p < t->nports; p++) {
		struct topo_port *pt = &t->ports[p];
		bool virt = port_virt(t, p);
		if (!virt || ignore) {
			pt->virt = pt->virt_enabled = pt->virt_dirty = false;
			continue;
		}
		/* a port new to virtualization, or whose link came back, is read in any sweep */
		if (!pt->virt || pt->pi.port_state != PORT_STATE_ACTIVE)
			pt->virt_dirty = true;
		pt->virt = true;
		uint32_t *q;
		if ((sm->heavy || pt->virt_dirty) && (q = vec_push(&vp->queue)))
			*q = p;
	}
	topo_vports_follow(t);
	unsigned n = sm->cfg->virt_max_ports_in_process;
	if (n > vp->queue.n)
		n = vp->queue.n;
	if (vec_reserve(&vp->active, n) < 0)
		n = 0; /* out of memory: read at the next sweep */
	vp->active.n = n;
	for (uint32_t s = 0; s < n; s++)
		start_next(sm, s);
}

void vports_discover_end(struct sm *sm)
{
	struct topo *t = &sm->topo;
	struct sm_vports *vp = &sm->vp;
	/* a port not reached, or whose SMPs did not all end (one dropped unanswered), is read
	 * again at the next sweep; the others lose what they no longer show */
	for (uint32_t i = vp->head; i < vp->queue.n; i++)
		t->ports[vp->queue.v[i]].virt_dirty = true;
	for (uint32_t i = 0; i < vp->active.n; i++)
		if (vp->active.v[i].out)
			t->ports[vp->active.v[i].port].virt_dirty = true;
	uint32_t gone = 0;
	for (uint32_t i = 0; i < sm->vp.done.n; i++)
		gone += topo_vports_drop(t, sm->vp.done.v[i], t->sweep);
	if (gone)
		log_info(sm->log, "vports", "%u vport(s) gone", gone);
	/* vports that came or went are members, or not, of the partitions naming their GUIDs
	 * (pending members among them): the keys again, as discovery's were without them */
	if (t->vport_changes != sm->vp.changes_at && topo_pkeys_update(t, sm->cfg) < 0)
		log_err(sm->log, "vports", "out of memory: vports keep their P_Keys until a sweep");
	if (sm->vp.queue.n)
		log_info(sm->log, "vports", "%u port(s) with virtualization read: %u vports",
		         sm->vp.queue.n, t->vports.n);
}

/* ---- programming ---- */

static void on_vport_set(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                         void *ctx)
{
	(void)res;
	const struct vctx *c = ctx;
	struct topo *t = &sm->topo;
	if (!smp || smp->dr_status) {
		t->ports[c->port].virt_dirty = true;
		log_rl(sm->log, &sm->vp.rl, LOGL_WARN, "vports",
		       "VPortInfo Set of vport %u at port GUID " GUID_FMT " %s: read again at the "
		       "next sweep",
		       c->index, topo_port_guid(t, c->port),
		       smp ? mad_status_str(smp->dr_status) : "not answered");
		return;
	}
	struct mad_vport_info vi;
	mad_vport_info_decode(smp->data, sizeof(smp->data), &vi, NULL);
	if (c->index == 0) {
		t->ports[c->port].vport0 = vi.state;
		return;
	}
	uint32_t v = topo_vport_at(t, c->port, c->index);
	if (v != TOPO_NONE && t->vports.v[v].guid == vi.port_guid) {
		t->vports.v[v].state = vi.state;
		t->vports.v[v].hw_lid = vi.lid;
	}
}

static void on_vpkey_set(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                         void *ctx)
{
	(void)res;
	const struct vctx *c = ctx; /* slot: the table's signature's low bits are not needed */
	struct topo *t = &sm->topo;
	uint32_t v = topo_vport_at(t, c->port, c->index);
	if (v == TOPO_NONE)
		return;
	if (!smp || smp->dr_status) {
		topo_vport_set_pkey_sig(t, v, 0); /* unknown: written again */
		log_rl(sm->log, &sm->vp.rl, LOGL_WARN, "vports",
		       "VPortPKeyTable Set of vport %u at port GUID " GUID_FMT " %s: written again "
		       "at the next sweep",
		       c->index, topo_port_guid(t, c->port),
		       smp ? mad_status_str(smp->dr_status) : "not answered");
	}
}

/* The vport's P_Key table as the policy gives it, block by block, when its signature is not
 * what it holds. */
static void program_pkeys(struct sm *sm, uint32_t v)
{
	struct topo *t = &sm->topo;
	const struct topo_vport *vp = &t->vports.v[v];
	unsigned n = vp->npkeys, cap = vp->pkey_cap;
	if (!cap)
		return; /* its size is not known yet */
	const uint16_t *pk = t->pkeys ? t->pkeys + vp->pkey_at : NULL;
	uint32_t sig =
	    (pk ? idxmap_hash_bytes(pk, n * sizeof(uint16_t)) : 0) | 1; /* 0 is "unknown" */
	if (sig == vp->pkey_sig)
		return;
	topo_vport_set_pkey_sig(t, v, sig);
	unsigned blocks = (cap + MAD_VPORT_PKEY_BLOCK - 1) / MAD_VPORT_PKEY_BLOCK;
	for (unsigned b = 0; b < blocks; b++) {
		struct mad_pkey_table tbl;
		memset(&tbl, 0, sizeof(tbl));
		for (unsigned i = 0; i < MAD_VPORT_PKEY_BLOCK && b * 32 + i < n; i++)
			tbl.pkey[i] = pk[b * 32 + i];
		uint8_t data[64] = {0};
		mad_pkey_table_encode(&tbl, data, sizeof(data), NULL);
		struct vctx c = {.port = vp->port, .index = vp->index};
		sm->vp.sets++;
		if (sm_send_dr_port(sm, vp->port, MAD_METHOD_SET, MAD_ATTR_VPORT_PKEY_TABLE,
		                    mad_vport_block_am(vp->index, b), data, sizeof(data),
		                    on_vpkey_set, &c, sizeof(c)) < 0)
			topo_vport_set_pkey_sig(t, v, 0); /* not sent: the next sweep writes it */
	}
}

static void set_vport_info(struct sm *sm, uint32_t port, unsigned index, uint8_t state,
                           bool lid_required, uint16_t lid)
{
	struct mad_vport_info vi = {.state = state, .lid_required = lid_required, .lid = lid};
	uint8_t data[64] = {0};
	mad_vport_info_encode(&vi, data, sizeof(data), NULL);
	struct vctx c = {.port = port, .index = (uint16_t)index};
	sm->vp.sets++;
	sm_send_dr_port(sm, port, MAD_METHOD_SET, MAD_ATTR_VPORT_INFO, mad_vport_am(index), data,
	                sizeof(data), on_vport_set, &c, sizeof(c));
}

void vports_program_pkeys(struct sm *sm)
{
	struct topo *t = &sm->topo;
	if (!managing(sm))
		return;
	for (uint32_t v = 0; v < t->vports.n; v++)
		if (t->ports[t->vports.v[v].port].virt_enabled &&
		    t->ports[t->vports.v[v].port].pi.port_state == PORT_STATE_ACTIVE)
			program_pkeys(sm, v);
}

void vports_program(struct sm *sm)
{
	struct topo *t = &sm->topo;
	if (!managing(sm))
		return;
	/* the PFs: vport 0 has a state of its own once virtualization is on */
	for (uint32_t i = 0; i < sm->vp.queue.n; i++) {
		uint32_t p = sm->vp.queue.v[i];
		const struct topo_port *pt = &t->ports[p];
		if (pt->virt_enabled && pt->pi.port_state == PORT_STATE_ACTIVE &&
		    pt->vport0 != PORT_STATE_ACTIVE)
			set_vport_info(sm, p, 0, PORT_STATE_ACTIVE, false, 0);
	}
	for (uint32_t v = 0; v < t->vports.n; v++) {
		const struct topo_vport *vp = &t->vports.v[v];
		const struct topo_port *pt = &t->ports[vp->port];
		if (!pt->virt_enabled || pt->pi.port_state != PORT_STATE_ACTIVE)
			continue;
		program_pkeys(sm, v);
		bool lid = vp->lid_required && vp->lid != vp->hw_lid;
		if (lid || vp->state != PORT_STATE_ACTIVE)
			set_vport_info(sm, vp->port, vp->index,
			               vp->state != PORT_STATE_ACTIVE ? PORT_STATE_ACTIVE : 0,
			               vp->lid_required, vp->lid_required ? vp->lid : 0);
	}
}

void vports_trap(struct sm *sm, uint32_t port)
{
	struct topo *t = &sm->topo;
	if (port == TOPO_NONE || port >= t->nports || !t->ports[port].virt)
		return;
	t->ports[port].virt_dirty = true;
	/* an incremental sweep: nothing else to rediscover, the vports read, LIDs, routes and
	 * tables brought up to date */
	sm_request_sweep(sm, &port, 0);
}
