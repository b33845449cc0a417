/* The subnet management agent of a simulated node (IBA vol. 1, 14.2.5 and 14.2.4).
 * Sets are all or nothing: a Set with an invalid field changes nothing and answers the
 * current value with status "invalid field", as a real SMA does. */
#include <string.h>

#include <infiniband/mad.h>

#include "agents.h"
#include "mad/mad_header.h"
#include "mad/mad_types.h"
#include "mad/vport_attrs.h"

#define ST_OK        MAD_STATUS_OK
#define ST_BAD_METH  MAD_STATUS_UNSUP_METHOD
#define ST_BAD_ATTR  MAD_STATUS_UNSUP_METHOD_ATTR
#define ST_BAD_FIELD MAD_STATUS_INVALID_FIELD

static uint32_t mkey_port(const struct fabric *f, uint32_t in)
{
	return fabric_lid_port(f, in);
}

/* What an SM that did not set SMSupportExtendedSpeeds sees of the speeds: nothing beyond
 * HDR (NDR hidden from the extended fields, XDR's fields empty); a link running faster
 * shows no extended speed, only LinkSpeedActive (QDR). The model of the IBA 1.5 rule that
 * broke OpenSM on NDR until it asked again with the bit set. */
static void hide_ext_speeds(struct mad_port_info *pi)
{
	pi->link_speed_ext_supported &= 7;
	pi->link_speed_ext_enabled &= 7;
	if (pi->link_speed_ext_active & 8)
		pi->link_speed_ext_active = 0;
	pi->link_speed_ext_active2 = pi->link_speed_ext_supported2 = 0;
	pi->link_speed_ext_enabled2 = 0;
}

/* PortInfo as this port reports it: switch external ports show port 0's addressing. */
static struct mad_port_info view_port(const struct fabric *f, uint32_t p, uint32_t arrival,
                                      bool ext)
{
	struct mad_port_info pi = f->ports[p].pi;
	const struct fs_node *n = fs_node_of(f, p);
	if (n->type == NODE_TYPE_SWITCH && f->ports[p].num != 0) {
		const struct mad_port_info *p0 = &f->ports[n->first_port].pi;
		pi.lid = p0->lid;
		pi.lmc = p0->lmc;
		pi.master_sm_lid = p0->master_sm_lid;
		pi.master_sm_sl = p0->master_sm_sl;
		pi.gid_prefix = p0->gid_prefix;
		pi.mkey = p0->mkey;
		pi.capability_mask = p0->capability_mask;
	}
	pi.local_port_num = f->ports[arrival].num;
	pi.client_reregister = 0; /* write-only */
	if (!ext)
		hide_ext_speeds(&pi);
	return pi;
}

void sma_node_info_raw(const struct fabric *f, uint32_t port, uint8_t out[64])
{
	const struct fs_node *n = fs_node_of(f, port);
	struct mad_node_info ni = {
	    .base_version = 1,
	    .class_version = 1,
	    .node_type = n->type,
	    .num_ports = n->nports,
	    .system_image_guid = n->sys_guid,
	    .node_guid = n->guid,
	    .port_guid = f->ports[port].guid,
	    .partition_cap = n->type == NODE_TYPE_SWITCH ? 8 : 64,
	    .device_id = (uint16_t)n->device_id,
	    .revision = n->revision,
	    .local_port_num = f->ports[port].num,
	    .vendor_id = n->vendor_id,
	};
	memset(out, 0, 64);
	mad_node_info_encode(&ni, out, 64, NULL);
}

void sma_port_info_raw(const struct fabric *f, uint32_t port, uint32_t arrival, bool ext,
                       uint8_t out[64])
{
	struct mad_port_info pi = view_port(f, port, arrival, ext);
	memset(out, 0, 64);
	mad_port_info_encode(&pi, out, 64, NULL);
}

/* ---- PortInfo Set ---- */

static uint16_t port_info_set(struct fabric *f, uint32_t p, const struct mad_port_info *req,
                              bool ext)
{
	struct fs_port *port = &f->ports[p];
	struct mad_port_info *pi = &port->pi;
	const struct fs_node *n = fs_node_of(f, p);
	bool sw = n->type == NODE_TYPE_SWITCH;
	bool mgmt = !sw || port->num == 0; /* carries a LID */

	/* validate everything first */
	if (req->port_state == PORT_STATE_INIT || req->port_state > PORT_STATE_ACTIVE)
		return ST_BAD_FIELD;
	if (req->port_state == PORT_STATE_ARMED && pi->port_state != PORT_STATE_INIT &&
	    pi->port_state != PORT_STATE_ARMED)
		return ST_BAD_FIELD;
	if (req->port_state == PORT_STATE_ACTIVE && pi->port_state != PORT_STATE_ARMED &&
	    pi->port_state != PORT_STATE_ACTIVE)
		return ST_BAD_FIELD;
	bool external = !(sw && port->num == 0);
	if (external &&
	    (req->port_state == PORT_STATE_ARMED || req->port_state == PORT_STATE_ACTIVE)) {
		if (!fabric_link_up(f, p))
			return ST_BAD_FIELD;
		/* the neighbour rule: Active only opposite an Armed or Active port */
		uint8_t peer = f->ports[port->peer].pi.port_state;
		if (req->port_state == PORT_STATE_ACTIVE && peer != PORT_STATE_ARMED &&
		    peer != PORT_STATE_ACTIVE)
			return ST_BAD_FIELD;
	}
	if (req->phys_state > PHYS_STATE_DISABLED || req->phys_state == PHYS_STATE_SLEEP)
		return ST_BAD_FIELD;
	if (req->neighbor_mtu && (req->neighbor_mtu > pi->mtu_cap || req->neighbor_mtu > 5))
		return ST_BAD_FIELD;
	if (req->oper_vls && req->oper_vls > pi->vl_cap)
		return ST_BAD_FIELD;
	if (req->link_width_enabled && req->link_width_enabled != 0xff &&
	    (req->link_width_enabled & ~pi->link_width_supported))
		return ST_BAD_FIELD;
	if (req->link_speed_enabled && req->link_speed_enabled != 0xf &&
	    (req->link_speed_enabled & ~pi->link_speed_supported))
		return ST_BAD_FIELD;
	/* LinkSpeedExtEnabled: 0 no change, 30 none, 31 all supported, else a subset; its
	 * NDR bit only from an SM that set SMSupportExtendedSpeeds */
	uint8_t ext_sup = ext ? pi->link_speed_ext_supported : pi->link_speed_ext_supported & 7;
	uint8_t ee = req->link_speed_ext_enabled;
	if (ee && ee < 30 && (ee & ~ext_sup))
		return ST_BAD_FIELD;
	if (ext && req->link_speed_ext_enabled2 &&
	    (req->link_speed_ext_enabled2 & ~pi->link_speed_ext_supported2))
		return ST_BAD_FIELD;
	if (mgmt && req->lid >= FS_MCAST_BASE && req->lid != 0xffff)
		return ST_BAD_FIELD;
	if (mgmt && req->lmc > 7)
		return ST_BAD_FIELD;

	/* then apply */
	if (mgmt) {
		uint16_t old_lid = pi->lid;
		uint8_t old_lmc = pi->lmc;
		pi->mkey = req->mkey;
		pi->gid_prefix = req->gid_prefix;
		pi->lid = req->lid;
		pi->lmc = req->lmc;
		pi->master_sm_lid = req->master_sm_lid;
		pi->master_sm_sl = req->master_sm_sl;
		pi->mkey_lease_period = req->mkey_lease_period;
		pi->mkey_protect_bits = req->mkey_protect_bits;
		pi->subnet_timeout = req->subnet_timeout;
		pi->resp_time_value = req->resp_time_value;
		if (old_lid != pi->lid || old_lmc != pi->lmc)
			fabric_lid_update(f, p, old_lid, old_lmc);
	}
	if (req->link_width_enabled)
		pi->link_width_enabled = req->link_width_enabled == 0xff ? pi->link_width_supported
		                                                         : req->link_width_enabled;
	if (req->link_speed_enabled)
		pi->link_speed_enabled = req->link_speed_enabled == 0xf ? pi->link_speed_supported
		                                                        : req->link_speed_enabled;
	if (ee) {
		uint8_t keep = ext ? 0 : pi->link_speed_ext_enabled & 8;
		pi->link_speed_ext_enabled = (uint8_t)(keep | (ee == 31   ? ext_sup
		                                               : ee == 30 ? 0
		                                                          : ee));
	}
	if (ext && req->link_speed_ext_enabled2)
		pi->link_speed_ext_enabled2 = req->link_speed_ext_enabled2;
	if (req->neighbor_mtu)
		pi->neighbor_mtu = req->neighbor_mtu;
	if (req->oper_vls)
		pi->oper_vls = req->oper_vls;
	pi->link_down_default_state = req->link_down_default_state ? req->link_down_default_state
	                                                           : pi->link_down_default_state;
	pi->vl_high_limit = req->vl_high_limit;
	pi->hoq_life = req->hoq_life;
	pi->vl_stall_count = req->vl_stall_count;
	pi->partition_enforcement_inbound = req->partition_enforcement_inbound;
	pi->partition_enforcement_outbound = req->partition_enforcement_outbound;
	pi->filter_raw_inbound = req->filter_raw_inbound;
	pi->filter_raw_outbound = req->filter_raw_outbound;
	pi->mkey_violations = req->mkey_violations;
	pi->pkey_violations = req->pkey_violations;
	pi->qkey_violations = req->qkey_violations;
	pi->local_phy_errors = req->local_phy_errors;
	pi->overrun_errors = req->overrun_errors;

	if (req->phys_state == PHYS_STATE_DISABLED && external && !port->disabled) {
		f->sm_deactivated += pi->port_state == PORT_STATE_ACTIVE;
		port->disabled = true;
		fs_journal_add(f, FS_J_PHYS, p, 0);
		fabric_set_link(f, p, !port->unplugged);
	} else if (req->phys_state == PHYS_STATE_POLLING && port->disabled) {
		port->disabled = false;
		fs_journal_add(f, FS_J_PHYS, p, 1);
		fabric_set_link(f, p, !port->unplugged);
	}
	uint8_t state_before = pi->port_state;
	switch (req->port_state) {
	case PORT_STATE_DOWN:
		if (external && pi->port_state != PORT_STATE_DOWN) {
			/* the link retrains: both ends drop to Init */
			f->sm_deactivated += pi->port_state == PORT_STATE_ACTIVE;
			pi->port_state = PORT_STATE_INIT;
			if (port->peer != FS_NONE && fabric_link_up(f, p))
				f->ports[port->peer].pi.port_state = PORT_STATE_INIT;
			if (sw)
				f->sws[n->sw].si.port_state_change = 1;
		}
		break;
	case PORT_STATE_ARMED:
	case PORT_STATE_ACTIVE: pi->port_state = req->port_state; break;
	default: break;
	}
	if (pi->port_state != state_before)
		fs_journal_add(f, FS_J_STATE, p, pi->port_state);
	return ST_OK;
}

/* ---- per attribute ---- */

static uint16_t do_node_info(struct fabric *f, uint32_t in, bool set, uint8_t *data)
{
	if (set)
		return ST_BAD_METH;
	sma_node_info_raw(f, in, data);
	return ST_OK;
}

static uint16_t do_node_desc(struct fabric *f, uint32_t in, bool set, uint8_t *data)
{
	if (set)
		return ST_BAD_METH;
	memset(data, 0, 64);
	size_t n = strlen(fs_node_of(f, in)->desc);
	memcpy(data, fs_node_of(f, in)->desc, n > 64 ? 64 : n);
	return ST_OK;
}

static uint16_t do_port_info(struct fabric *f, uint32_t in, uint32_t mod, bool set, uint8_t *data)
{
	const struct fs_node *n = fs_node_of(f, in);
	/* bit 31: SMSupportExtendedSpeeds, unknown to an SMA older than IBA 1.5 */
	bool ext = (mod & PORT_INFO_AM_EXT_SPEEDS) != 0;
	if (!n->legacy_sma)
		mod &= ~PORT_INFO_AM_EXT_SPEEDS;
	uint32_t p;
	if (n->type == NODE_TYPE_SWITCH) {
		if (mod > n->nports)
			return ST_BAD_FIELD;
		p = n->first_port + mod;
	} else {
		/* CAs: modifier 0 is the port the SMP came in on */
		if (mod > n->nports)
			return ST_BAD_FIELD;
		p = mod ? fabric_port(f, f->ports[in].node, mod) : in;
	}
	uint16_t st = ST_OK;
	if (set) {
		struct mad_port_info req;
		mad_port_info_decode(data, 64, &req, NULL);
		st = port_info_set(f, p, &req, ext);
	}
	sma_port_info_raw(f, p, in, ext, data);
	return st;
}

static uint16_t do_switch_info(struct fabric *f, uint32_t in, bool set, uint8_t *data)
{
	const struct fs_node *n = fs_node_of(f, in);
	if (n->type != NODE_TYPE_SWITCH)
		return ST_BAD_ATTR;
	struct mad_switch_info *si = &f->sws[n->sw].si;
	uint16_t st = ST_OK;
	if (set) {
		struct mad_switch_info req;
		mad_switch_info_decode(data, 20, &req, NULL);
		if (req.linear_fdb_top >= si->linear_fdb_cap ||
		    (req.multicast_fdb_top &&
		     (req.multicast_fdb_top < FS_MCAST_BASE ||
		      req.multicast_fdb_top >= FS_MCAST_BASE + FS_MFT_CAP)) ||
		    (req.default_port && req.default_port > n->nports)) {
			st = ST_BAD_FIELD;
		} else {
			si->linear_fdb_top = req.linear_fdb_top;
			si->multicast_fdb_top = req.multicast_fdb_top;
			si->default_port = req.default_port;
			si->default_mcast_primary_port = req.default_mcast_primary_port;
			si->default_mcast_not_primary_port = req.default_mcast_not_primary_port;
			si->life_time_value = req.life_time_value;
			if (req.port_state_change)
				si->port_state_change = 0; /* writing 1 clears it */
		}
	}
	memset(data, 0, 64);
	mad_switch_info_encode(si, data, 64, NULL);
	return st;
}

static uint16_t do_lft(struct fabric *f, uint32_t in, uint32_t block, bool set, uint8_t *data)
{
	const struct fs_node *n = fs_node_of(f, in);
	if (n->type != NODE_TYPE_SWITCH)
		return ST_BAD_ATTR;
	struct fs_switch *s = &f->sws[n->sw];
	if ((uint64_t)block * 64 >= s->si.linear_fdb_cap)
		return ST_BAD_FIELD;
	uint32_t end = (block + 1) * 64;
	if (set) {
		if (end > s->lft_size) {
			uint32_t ns = s->lft_size ? s->lft_size : 1024;
			while (ns < end)
				ns *= 2;
			uint8_t *nl = realloc(s->lft, ns);
			if (!nl)
				return ST_BAD_FIELD;
			memset(nl + s->lft_size, 0xff, ns - s->lft_size);
			s->lft = nl;
			s->lft_size = ns;
		}
		memcpy(s->lft + block * 64, data, 64);
		s->lft_sets++;
		s->lft_last = ++f->lft_seq;
		fs_journal_add(f, FS_J_LFT, n->first_port, block);
	}
	if (end <= s->lft_size)
		memcpy(data, s->lft + block * 64, 64);
	else
		memset(data, 0xff, 64);
	return ST_OK;
}

static uint16_t do_mft(struct fabric *f, uint32_t in, uint32_t mod, bool set, uint8_t *data)
{
	const struct fs_node *n = fs_node_of(f, in);
	if (n->type != NODE_TYPE_SWITCH)
		return ST_BAD_ATTR;
	struct fs_switch *s = &f->sws[n->sw];
	uint32_t pos = mod >> 28, block = mod & 0x1ff;
	if (pos >= s->positions || block * 32 >= FS_MFT_CAP)
		return ST_BAD_FIELD;
	if (!s->mft) {
		s->mft = calloc((size_t)FS_MFT_CAP * s->positions, sizeof(uint16_t));
		if (!s->mft)
			return ST_BAD_FIELD;
	}
	struct mad_mft_block b;
	if (set) {
		mad_mft_block_decode(data, 64, &b, NULL);
		for (unsigned i = 0; i < 32; i++)
			s->mft[(block * 32 + i) * s->positions + pos] = b.mask[i];
	}
	for (unsigned i = 0; i < 32; i++)
		b.mask[i] = s->mft[(block * 32 + i) * s->positions + pos];
	mad_mft_block_encode(&b, data, 64, NULL);
	return ST_OK;
}

static unsigned pkey_cap_of(const struct fabric *f, uint32_t p)
{
	const struct fs_node *n = fs_node_of(f, p);
	if (n->type == NODE_TYPE_SWITCH && f->ports[p].num != 0)
		return f->sws[n->sw].si.partition_enforcement_cap;
	return n->type == NODE_TYPE_SWITCH ? 8 : 64;
}

static uint16_t do_pkeys(struct fabric *f, uint32_t in, uint32_t mod, bool set, uint8_t *data)
{
	const struct fs_node *n = fs_node_of(f, in);
	uint32_t p = in, block = mod & 0xffff;
	if (n->type == NODE_TYPE_SWITCH) {
		unsigned num = mod >> 16;
		if (num > n->nports)
			return ST_BAD_FIELD;
		p = n->first_port + num;
	}
	unsigned cap = pkey_cap_of(f, p);
	if (block * 32 >= cap)
		return ST_BAD_FIELD;
	struct mad_pkey_table t;
	uint16_t *pk = f->ports[p].pkeys + block * 32;
	unsigned cnt = cap - block * 32 < 32 ? cap - block * 32 : 32;
	if (set) {
		mad_pkey_table_decode(data, 64, &t, NULL);
		if (memcmp(pk, t.pkey, cnt * sizeof(uint16_t)))
			fs_journal_add(f, FS_J_PKEY, p, block);
		memcpy(pk, t.pkey, cnt * sizeof(uint16_t));
	}
	memset(&t, 0, sizeof(t));
	memcpy(t.pkey, pk, cnt * sizeof(uint16_t));
	mad_pkey_table_encode(&t, data, 64, NULL);
	return ST_OK;
}

/* SLtoVLMappingTable. On switches the modifier names the input (bits 8-15) and output (bits
 * 0-7) port; with OptimizedSLtoVLMappingProgramming a Set may cover every input port (bit
 * 17) or every output port (bit 16). */
static uint16_t do_sl2vl(struct fabric *f, uint32_t in, uint32_t mod, bool set, uint8_t *data)
{
	const struct fs_node *n = fs_node_of(f, in);
	uint8_t *tbl;
	if (n->type == NODE_TYPE_SWITCH) {
		struct fs_switch *s = &f->sws[n->sw];
		unsigned ip = (mod >> 8) & 0xff, op = mod & 0xff, np = n->nports + 1u;
		bool all_in = mod & 0x20000, all_out = mod & 0x10000;
		if ((mod >> 18) ||
		    ((all_in || all_out) && (!set || !s->si.optimized_sl2vl_programming)))
			return ST_BAD_FIELD;
		if ((!all_in && ip > n->nports) || (!all_out && op > n->nports))
			return ST_BAD_FIELD;
		if (!s->sl2vl) {
			s->sl2vl = calloc((size_t)np * np, 8);
			if (!s->sl2vl)
				return ST_BAD_FIELD;
		}
		if (set) {
			for (unsigned i = 0; i < np; i++)
				for (unsigned o = 0; o < np; o++)
					if ((all_in || i == ip) && (all_out || o == op))
						memcpy(s->sl2vl + ((size_t)i * np + o) * 8, data,
						       8);
		}
		tbl = s->sl2vl + ((size_t)(all_in ? 0 : ip) * np + (all_out ? 0 : op)) * 8;
	} else {
		tbl = f->ports[in].sl2vl;
		if (set)
			memcpy(tbl, data, 8);
	}
	memset(data, 0, 64);
	memcpy(data, tbl, 8);
	return ST_OK;
}

/* VLArbitrationTable: the modifier's bits 16-31 name the block (1: low priority entries
 * 0-31, 2: low 32-63, 3: high 0-31, 4: high 32-63), bits 0-15 a switch's output port.
 * Blocks beyond the port's VLArbitrationLowCap/HighCap do not exist. */
static uint16_t do_vlarb(struct fabric *f, uint32_t in, uint32_t mod, bool set, uint8_t *data)
{
	const struct fs_node *n = fs_node_of(f, in);
	uint32_t p = in, block = mod >> 16;
	if (n->type == NODE_TYPE_SWITCH) {
		unsigned num = mod & 0xffff;
		if (num > n->nports)
			return ST_BAD_FIELD;
		p = n->first_port + num;
	}
	if (block < 1 || block > 4)
		return ST_BAD_FIELD;
	struct fs_port *port = &f->ports[p];
	unsigned cap = block <= 2 ? port->pi.vl_arb_low_cap : port->pi.vl_arb_high_cap;
	if (cap <= (block % 2 ? 0u : 32u))
		return ST_BAD_FIELD;
	if (set && !port->vlarb && !(port->vlarb = calloc(4, 64)))
		return ST_BAD_FIELD;
	if (set)
		memcpy(port->vlarb + (block - 1) * 64, data, 64);
	if (port->vlarb)
		memcpy(data, port->vlarb + (block - 1) * 64, 64);
	else
		memset(data, 0, 64);
	return ST_OK;
}

static uint16_t do_guid_info(struct fabric *f, uint32_t in, uint32_t block, bool set, uint8_t *data)
{
	uint32_t p = fabric_lid_port(f, in);
	struct fs_port *port = &f->ports[p];
	unsigned cap = port->pi.guid_cap ? port->pi.guid_cap : 1;
	if (block * 8 >= cap)
		return ST_BAD_FIELD;
	struct mad_guid_info g;
	if (set) {
		if (!port->guids && !(port->guids = calloc(cap, sizeof(uint64_t))))
			return ST_BAD_FIELD;
		mad_guid_info_decode(data, 64, &g, NULL);
		bool changed = false;
		for (unsigned i = 0; i < 8 && block * 8 + i < cap; i++)
			if (block * 8 + i != 0) { /* entry 0 is the port GUID, read-only */
				changed |= port->guids[block * 8 + i] != g.guid[i];
				port->guids[block * 8 + i] = g.guid[i];
			}
		if (changed)
			fs_journal_add(f, FS_J_GUIDS, p, block);
	}
	memset(&g, 0, sizeof(g));
	for (unsigned i = 0; i < 8 && block * 8 + i < cap; i++)
		g.guid[i] = port->guids ? port->guids[block * 8 + i] : 0;
	if (block == 0)
		g.guid[0] = port->guid;
	mad_guid_info_encode(&g, data, 64, NULL);
	return ST_OK;
}

/* M_Key check (14.2.4): 0 to go on, -1 to drop the SMP without an answer. */
static int mkey_check(struct fabric *f, uint32_t in, uint64_t mkey, bool set, uint64_t now_ns,
                      bool *hide_mkey)
{
	struct fs_port *kp = &f->ports[mkey_port(f, in)];
	struct mad_port_info *pi = &kp->pi;
	*hide_mkey = false;
	if (!pi->mkey || mkey == pi->mkey)
		return 0;
	/* a lease that ran out since the first violation lifts the protection */
	if (kp->mkey_lease_start_ns && pi->mkey_lease_period &&
	    now_ns >= kp->mkey_lease_start_ns + (uint64_t)pi->mkey_lease_period * 1000000000ull) {
		pi->mkey_protect_bits = 0;
		kp->mkey_lease_start_ns = 0;
	}
	if (!set && pi->mkey_protect_bits == 0)
		return 0;
	if (!set && pi->mkey_protect_bits == 1) {
		*hide_mkey = true;
		return 0;
	}
	if (pi->mkey_violations < 0xffff)
		pi->mkey_violations++;
	if (!kp->mkey_lease_start_ns)
		kp->mkey_lease_start_ns = now_ns ? now_ns : 1;
	return -1;
}

enum agent_result sma_process(struct fabric *f, uint32_t in, uint8_t *mad, uint64_t now_ns)
{
	uint8_t method = mad[3];
	uint16_t attr = (uint16_t)mad_get_field(mad, 0, IB_MAD_ATTRID_F);
	uint32_t mod = mad_get_field(mad, 0, IB_MAD_ATTRMOD_F);
	bool dr = mad[1] == MAD_CLASS_SUBN_DR;
	uint8_t *data = mad + MAD_SMP_DATA_OFF;

	if (method == MAD_METHOD_TRAP_REPRESS) {
		struct fs_port *p = &f->ports[fabric_lid_port(f, in)];
		p->trap_pending = 0;
		return AGENT_NO_REPLY;
	}
	/* SMInfo and traps are for the SM at the port (an SM's trap 144 to the master, say) */
	if (attr == MAD_ATTR_SM_INFO || method == MAD_METHOD_TRAP)
		return AGENT_NOT_MINE;
	if (mad_is_response(method))
		return AGENT_NO_REPLY; /* an SMA takes no answers */

	bool set = method == MAD_METHOD_SET;
	if (mad[2] != MAD_CLASS_VERSION_SM) {
		/* a class version this SMA does not speak */
		mad[3] = MAD_METHOD_GET_RESP;
		if (dr) {
			mad_set_field(mad, 0, IB_DRSMP_STATUS_F, MAD_STATUS_BAD_VERSION);
			mad_set_field(mad, 0, IB_DRSMP_DIRECTION_F, 1);
		} else {
			mad_set_field(mad, 0, IB_MAD_STATUS_F, MAD_STATUS_BAD_VERSION);
		}
		return AGENT_REPLY;
	}
	bool hide = false;
	if (method == MAD_METHOD_GET || set) {
		uint64_t key = mad_get_field64(mad, 0, IB_MAD_MKEY_F);
		if (mkey_check(f, in, key, set, now_ns, &hide)) {
			/* what trap 256 tells the SM (14.2.5.1): the server sends it */
			struct fs_port *kp = &f->ports[mkey_port(f, in)];
			kp->bad_mkey.pending = true;
			kp->bad_mkey.method = method;
			kp->bad_mkey.attr = attr;
			kp->bad_mkey.mod = mod;
			kp->bad_mkey.mkey = key;
			kp->bad_mkey.dr_slid =
			    dr ? (uint16_t)mad_get_field(mad, 0, IB_DRSMP_DRSLID_F) : 0;
			return AGENT_NO_REPLY;
		}
	}
	uint16_t st;
	if (method != MAD_METHOD_GET && !set) {
		st = ST_BAD_METH;
	} else if (set && attr && attr == fs_node_of(f, in)->refuse_attr) {
		st = ST_BAD_ATTR; /* the refuse fault: firmware without this attribute */
		f->nodes[f->ports[in].node].refused++;
	} else {
		switch (attr) {
		case MAD_ATTR_NODE_INFO: st = do_node_info(f, in, set, data); break;
		case MAD_ATTR_NODE_DESC: st = do_node_desc(f, in, set, data); break;
		case MAD_ATTR_PORT_INFO: st = do_port_info(f, in, mod, set, data); break;
		case MAD_ATTR_SWITCH_INFO: st = do_switch_info(f, in, set, data); break;
		case MAD_ATTR_LFT: st = do_lft(f, in, mod, set, data); break;
		case MAD_ATTR_MFT: st = do_mft(f, in, mod, set, data); break;
		case MAD_ATTR_PKEY_TABLE: st = do_pkeys(f, in, mod, set, data); break;
		case MAD_ATTR_SL2VL_TABLE: st = do_sl2vl(f, in, mod, set, data); break;
		case MAD_ATTR_VLARB_TABLE: st = do_vlarb(f, in, mod, set, data); break;
		case MAD_ATTR_GUID_INFO: st = do_guid_info(f, in, mod, set, data); break;
		case MAD_ATTR_VIRT_INFO:
		case MAD_ATTR_VPORT_INFO:
		case MAD_ATTR_VNODE_INFO:
		case MAD_ATTR_VPORT_STATE:
		case MAD_ATTR_VNODE_DESC:
		case MAD_ATTR_VPORT_GUID_INFO:
		case MAD_ATTR_VPORT_PKEY_TABLE: st = sma_virt(f, in, attr, mod, set, data); break;
		default: st = ST_BAD_ATTR; break;
		}
	}
	if (hide && attr == MAD_ATTR_PORT_INFO)
		memset(data, 0, 8); /* protection level 1: Get works, the M_Key reads as 0 */
	mad[3] = MAD_METHOD_GET_RESP;
	if (dr) {
		mad_set_field(mad, 0, IB_DRSMP_STATUS_F, st);
		mad_set_field(mad, 0, IB_DRSMP_DIRECTION_F, 1);
	} else {
		mad_set_field(mad, 0, IB_MAD_STATUS_F, st);
	}
	return AGENT_REPLY;
}

void sma_build_trap(const struct fabric *f, uint32_t port, uint16_t trap, uint64_t tid,
                    uint8_t mad[256])
{
	uint32_t lp = fabric_lid_port(f, port);
	const struct fs_node *n = fs_node_of(f, port);
	const struct mad_port_info *pi = &f->ports[lp].pi;
	struct mad_smp smp;
	mad_smp_init_lid(&smp, MAD_METHOD_TRAP, MAD_ATTR_NOTICE, 0);
	smp.hdr.tid = tid;
	struct mad_notice no = {
	    .is_generic = 1,
	    .type = trap >= 128 && trap <= 131 ? 1 : 4, /* urgent / informational */
	    .producer_type = n->type == NODE_TYPE_SWITCH ? 2 : 1,
	    .trap_number = trap,
	    .issuer_lid = pi->lid,
	};
	uint8_t *d = no.data_details;
	d[0] = (uint8_t)(pi->lid >> 8); /* trap 128: LIDADDR of the switch */
	d[1] = (uint8_t)pi->lid;
	if (trap == 256) {
		/* Bad M_Key: LIDADDR of the requester, DRSLID, Method, reserved, AttributeID,
		 * AttributeModifier, M_Key */
		const struct fs_port *kp = &f->ports[lp];
		memset(d, 0, 20);
		d[0] = (uint8_t)(kp->bad_mkey.lid >> 8);
		d[1] = (uint8_t)kp->bad_mkey.lid;
		d[2] = (uint8_t)(kp->bad_mkey.dr_slid >> 8);
		d[3] = (uint8_t)kp->bad_mkey.dr_slid;
		d[4] = kp->bad_mkey.method;
		d[6] = (uint8_t)(kp->bad_mkey.attr >> 8);
		d[7] = (uint8_t)kp->bad_mkey.attr;
		for (unsigned i = 0; i < 4; i++)
			d[8 + i] = (uint8_t)(kp->bad_mkey.mod >> (24 - 8 * i));
		for (unsigned i = 0; i < 8; i++)
			d[12 + i] = (uint8_t)(kp->bad_mkey.mkey >> (56 - 8 * i));
		no.type = 2; /* security */
	}
	if (trap >= 129 && trap <= 131) {
		/* reserved 16, LIDADDR 16, reserved 8, PortNumber 8: the port in trouble */
		memset(d, 0, 6);
		d[2] = (uint8_t)(pi->lid >> 8);
		d[3] = (uint8_t)pi->lid;
		d[5] = f->ports[port].num;
	}
	if (trap == 1146) {
		/* a vport's state changed (Annex A18): reserved 16, LIDADDR 16 of the port */
		memset(d, 0, 4);
		d[2] = (uint8_t)(pi->lid >> 8);
		d[3] = (uint8_t)pi->lid;
	}
	if (trap == 144) {
		/* the port's LID and CapabilityMask, and what else changed (OtherLocalChanges with
		 * its ChangeFlags: a new NodeDescription, say) */
		uint16_t flags = f->ports[lp].trap144_flags;
		struct mad_trap144 t = {.lid = pi->lid,
		                        .other_local_changes = flags != 0,
		                        .capability_mask = pi->capability_mask,
		                        .change_flags = flags,
		                        .capability_mask2 = pi->capability_mask2};
		memset(d, 0, sizeof(no.data_details));
		mad_trap144_encode(&t, d, sizeof(no.data_details), NULL);
	}
	/* An SMP carries the first 64 bytes of the Notice: no IssuerGID. */
	uint8_t notice[80] = {0};
	mad_notice_encode(&no, notice, sizeof(notice), NULL);
	memcpy(smp.data, notice, sizeof(smp.data));
	memset(mad, 0, 256);
	mad_smp_encode(&smp, mad, 256, NULL);
}
