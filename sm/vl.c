/* SL-to-VL mapping and VL arbitration: the tables that say which virtual lane a packet of a
 * service level takes at each hop, and how an output port shares its bandwidth between VLs.
 *
 * Every port gets tables that follow the data VLs its link runs (OperVLs, agreed with the
 * neighbour in the arm phase): SL s goes on VL s mod n, and arbitration serves those n VLs
 * round robin from the low-priority table, none from the high-priority one. Leaving them to
 * whatever the hardware was reset to would let SLs fall on VLs a link does not run, where
 * their packets are dropped. A routing engine that separates traffic by VL supplies
 * per-hop tables through its sl2vl hook instead (engine_sl2vl), and the hosts send each SL on
 * its QoS class's first VL (ca_class_sl2vl).
 *
 * Cost: one Set per CA port and, on switches that take OptimizedSLtoVLMappingProgramming,
 * one per switch (plus one per output port that runs a different number of VLs); VL
 * arbitration takes one Set per block the port has room for. Only tables that differ from
 * what the port holds go out: after the first sweep, none. Switches without the optimized
 * programming would need one Set per input/output pair (1,332 on a 36-port switch), so
 * theirs are left as they are until an engine needs them. */
#include <stdlib.h>
#include <string.h>

#include "sm/sm_int.h"

#define VLARB_WEIGHT 64 /* 64 x 64 bytes: one 4 KB packet per VL per turn */

/* Data VLs of an OperVLs / VLCap code: 1 = VL0, 2 = VL0-1, 3 = VL0-3, 4 = VL0-7, 5 = VL0-14. */
static unsigned data_vls(uint8_t code)
{
	static const unsigned n[] = {1, 1, 2, 4, 8, 15};
	return code < sizeof(n) / sizeof(n[0]) ? n[code] : 1;
}

/* The OperVLs code the port runs once its PortInfo Set (program.c port_set_phys) has agreed
 * it with its neighbour: known before that Set is answered, as the tables go beside it. An
 * enhanced switch port 0 runs every VL it can. */
static uint8_t port_oper_vls(const struct topo *t, const struct topo_port *port)
{
	if (port->peer == TOPO_NONE) {
		const struct topo_node *n = &t->nodes[port->node];
		bool esp0 = n->type == NODE_TYPE_SWITCH && port->num == 0 &&
		            t->sws[n->sw].si.enhanced_port0;
		return esp0 ? port->pi.vl_cap : port->pi.oper_vls;
	}
	uint8_t a = port->pi.vl_cap, b = t->ports[port->peer].pi.vl_cap;
	return a < b ? a : b;
}

/* SL s on VL s mod n, packed as on the wire: SL0 in the top nibble. */
static uint64_t default_sl2vl(unsigned nvl)
{
	uint64_t v = 0;
	for (unsigned sl = 0; sl < 16; sl++)
		v = (v << 4) | (sl % nvl);
	return v;
}

/* ---- the QoS policy's tables, by port class ---- */

static unsigned port_class(const struct topo *t, const struct topo_port *port)
{
	const struct topo_node *n = &t->nodes[port->node];
	if (n->type == NODE_TYPE_SWITCH)
		return port->num ? QOS_CLASS_SWITCH_EXT : QOS_CLASS_SWITCH_PORT0;
	return n->type == NODE_TYPE_ROUTER ? QOS_CLASS_ROUTER : QOS_CLASS_CA;
}

const struct config_vl_table *vl_class_table(const struct sm *sm, uint32_t p)
{
	const struct config_qos *q = sm->cfg->qos;
	if (!q)
		return NULL;
	const struct config_vl_table *tb = &q->cls[port_class(&sm->topo, &sm->topo.ports[p])];
	return tb->set ? tb : NULL;
}

/* The policy's SL-to-VL table for a port of that class running nvl data VLs, packed; the
 * default when the class has none, or when it sends an SL to a VL the link does not run
 * (that port's packets would be dropped: said, rate limited, and the port keeps SL mod
 * VLs). */
static uint64_t qos_sl2vl(struct sm *sm, const struct config_vl_table *tb, unsigned nvl,
                          uint32_t port)
{
	if (!tb)
		return default_sl2vl(nvl);
	uint64_t v = 0;
	for (unsigned sl = 0; sl < 16; sl++) {
		uint8_t vl = tb->sl2vl[sl];
		if (vl != 15 && vl >= nvl) {
			char name[160];
			sm_node_name(sm, sm->topo.ports[port].node, name, sizeof(name));
			log_rl(
			    sm->log, &sm->rl_qos, LOGL_ERR, "vl",
			    "qos: the %s SL-to-VL table sends SL %u to VL %u, but %s port %u runs "
			    "%u data VL(s) (VLCap of the link): the policy does not fit, that port "
			    "keeps SL mod %u; give a table within VL0-%u",
			    config_qos_class_name(port_class(&sm->topo, &sm->topo.ports[port])), sl,
			    vl, name, sm->topo.ports[port].num, nvl, nvl, nvl - 1);
			return default_sl2vl(nvl);
		}
		v = (v << 4) | vl;
	}
	return v;
}

static void sl2vl_pack(uint64_t v, uint8_t data[64])
{
	memset(data, 0, 64);
	for (unsigned i = 0; i < 8; i++)
		data[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint64_t sl2vl_unpack(const uint8_t data[64])
{
	uint64_t v = 0;
	for (unsigned i = 0; i < 8; i++)
		v = (v << 8) | data[i];
	return v;
}

static bool port_is_up_link(const struct topo *t, const struct topo_port *port)
{
	return port->num != 0 && port->peer != TOPO_NONE && topo_port_up(port) &&
	       t->nodes[port->node].present;
}

/* ---- answers ---- */

struct vl_ref {
	uint32_t port; /* CA port, or switch port 0 for SL-to-VL, the output port for VLArb */
	uint32_t mod;
	uint8_t follow_nvl; /* SL2VL all-ports Set: the VLs it was for (others follow it) */
};

static bool vl_answer_ok(struct sm *sm, const struct mad_smp *smp, const struct vl_ref *ref,
                         uint16_t attr, uint8_t flag)
{
	struct topo *t = &sm->topo;
	struct topo_port *port = &t->ports[ref->port];
	if (smp && !smp->dr_status)
		return true;
	char name[160];
	sm_node_name(sm, port->node, name, sizeof(name));
	if (!smp) {
		sm->phase_failures++;
		log_rl(sm->log, &sm->rl_no_answer, LOGL_WARN, "vl",
		       "%s port %u: no answer to the %s Set (modifier 0x%x)", name, port->num,
		       attr == MAD_ATTR_SL2VL_TABLE ? "SL-to-VL" : "VL arbitration", ref->mod);
		return false;
	}
	/* refused: the port cannot take it, and asking every sweep would not change that;
	 * said once (its blocks were asked for together) */
	if (port->refused & flag)
		return false;
	port->refused |= flag;
	log_warn(sm->log, "vl",
	         "%s port %u refused its %s table (modifier 0x%x): %s; its traffic uses the "
	         "tables it has, check its firmware",
	         name, port->num, attr == MAD_ATTR_SL2VL_TABLE ? "SL-to-VL" : "VL arbitration",
	         ref->mod, mad_status_str(smp->dr_status));
	return false;
}

static void send_sl2vl(struct sm *sm, uint32_t port, uint32_t mod, uint64_t table,
                       const struct vl_ref *ref, sm_smp_fn cb);

/* Does the engine want its own SL-to-VL tables? One that counts its layers only when it
 * uses more than one (a dfsssp routing free of loops on VL0 leaves the QoS tables be). */
static bool engine_tables(const struct sm *sm)
{
	return sm->engine && sm->engine->sl2vl && (!sm->engine->layers || sm->path_layers > 1);
}

/* A CA port's table under a layered engine: each SL on the first VL of its QoS class. A
 * host forwards nothing, so its link closes no dependency between switches: the layers the
 * engine separates need no VLs of their own there, and the link runs no more VLs than the
 * classes need (OpenSM's torus-2QoS programs its hosts the same way). */
static uint64_t ca_class_sl2vl(const struct sm *sm, unsigned nvl)
{
	unsigned layers = sm->path_layers ? sm->path_layers : 1;
	unsigned vls = sm->class_vls ? sm->class_vls : layers;
	uint64_t v = 0;
	for (unsigned sl = 0; sl < 16; sl++)
		v = (v << 4) | (((sl / layers) * vls) % nvl);
	return v;
}

/* The table a switch output wants, for all inputs: the layered engine's, else the QoS
 * policy's (or SL mod VLs). */
static uint64_t output_sl2vl(struct sm *sm, const struct config_vl_table *tb, unsigned nvl,
                             uint32_t port)
{
	uint64_t v;
	const struct topo_port *p = &sm->topo.ports[port];
	if (engine_tables(sm) && routing_sl2vl(sm->engine, sm->engine_state, &sm->rctx,
	                                       sm->topo.nodes[p->node].sw, 0, p->num, &v))
		return v;
	return qos_sl2vl(sm, tb, nvl, port);
}

static void esp0_sl2vl(struct sm *sm, uint32_t node);

static void on_switch_sl2vl(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                            void *ctx)
{
	(void)res;
	const struct vl_ref *ref = ctx;
	struct topo *t = &sm->topo;
	if (!vl_answer_ok(sm, smp, ref, MAD_ATTR_SL2VL_TABLE, TOPO_REFUSED_SL2VL))
		return;
	const struct topo_node *n = &t->nodes[t->ports[ref->port].node];
	struct topo_switch *sw = &t->sws[n->sw];
	unsigned np = n->nports + 1u;
	if (!sw->sl2vl && !(sw->sl2vl = calloc((size_t)np * np, sizeof(*sw->sl2vl))))
		return;
	uint16_t v = topo_sl2vl_intern(t, sl2vl_unpack(smp->data));
	unsigned in = (ref->mod >> 8) & 0xff, out = ref->mod & 0xff;
	bool all_in = ref->mod & 0x20000, all_out = ref->mod & 0x10000;
	for (unsigned i = 0; i < np; i++)
		for (unsigned o = 0; o < np; o++)
			if ((all_in || i == in) && (all_out || o == out))
				sw->sl2vl[i * np + o] = v;
	if (!all_out)
		return;
	/* now the outputs whose links run another number of VLs: after the Set for all, so
	 * that it cannot overwrite them */
	for (unsigned o = 1; o <= n->nports; o++) {
		const struct topo_port *p = &t->ports[n->first_port + o];
		if (!port_is_up_link(t, p) || data_vls(port_oper_vls(t, p)) == ref->follow_nvl)
			continue;
		struct vl_ref r = {.port = ref->port, .mod = 0x20000 | o};
		send_sl2vl(sm, ref->port, r.mod,
		           output_sl2vl(sm, vl_class_table(sm, n->first_port + o),
		                        data_vls(port_oper_vls(t, p)), n->first_port + o),
		           &r, on_switch_sl2vl);
	}
	esp0_sl2vl(sm, t->ports[ref->port].node);
}

static void on_ca_sl2vl(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                        void *ctx)
{
	(void)res;
	const struct vl_ref *ref = ctx;
	if (vl_answer_ok(sm, smp, ref, MAD_ATTR_SL2VL_TABLE, TOPO_REFUSED_SL2VL))
		sm->topo.ports[ref->port].sl2vl = sl2vl_unpack(smp->data);
}

static void on_vlarb(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                     void *ctx)
{
	(void)res;
	const struct vl_ref *ref = ctx;
	if (!vl_answer_ok(sm, smp, ref, MAD_ATTR_VLARB_TABLE, TOPO_REFUSED_VLARB))
		return;
	struct mad_vlarb_table tbl;
	mad_vlarb_table_decode(smp->data, sizeof(smp->data), &tbl, NULL);
	unsigned block = ref->mod >> 16;
	if (block >= 1 && block <= 4)
		sm->topo.ports[ref->port].vlarb[block - 1] = topo_vlarb_intern(&sm->topo, &tbl);
}

/* ---- sending ---- */

static void send_sl2vl(struct sm *sm, uint32_t port, uint32_t mod, uint64_t table,
                       const struct vl_ref *ref, sm_smp_fn cb)
{
	uint8_t data[64];
	sl2vl_pack(table, data);
	if (sm_send_dr_port(sm, port, MAD_METHOD_SET, MAD_ATTR_SL2VL_TABLE, mod, data, sizeof(data),
	                    cb, ref, sizeof(*ref)) == 0)
		sm->counts.vl_sets++;
}

/* An engine that separates traffic by VL (its sl2vl hook) gives each input/output pair its
 * own table: one Set per pair that differs from what the switch holds, by the per-pair
 * modifier every switch with SL-to-VL mapping takes. */
static void engine_sl2vl(struct sm *sm, uint32_t node)
{
	struct topo *t = &sm->topo;
	const struct topo_node *n = &t->nodes[node];
	const struct topo_switch *sw = &t->sws[n->sw];
	unsigned np = n->nports + 1u;
	for (unsigned o = 1; o <= n->nports; o++) {
		if (!port_is_up_link(t, &t->ports[n->first_port + o]))
			continue;
		for (unsigned i = 0; i < np; i++) {
			if (i == o || (i && !port_is_up_link(t, &t->ports[n->first_port + i])))
				continue;
			uint64_t want;
			if (!routing_sl2vl(sm->engine, sm->engine_state, &sm->rctx, n->sw,
			                   (uint8_t)i, (uint8_t)o, &want) ||
			    topo_switch_sl2vl(t, sw, np, i, o) == want)
				continue;
			struct vl_ref ref = {.port = n->first_port, .mod = i << 8 | o};
			send_sl2vl(sm, ref.port, ref.mod, want, &ref, on_switch_sl2vl);
		}
	}
}

/* An engine whose table depends on the output only: one Set per output that differs, for
 * all its inputs at once. */
static void engine_sl2vl_by_output(struct sm *sm, uint32_t node)
{
	struct topo *t = &sm->topo;
	const struct topo_node *n = &t->nodes[node];
	const struct topo_switch *sw = &t->sws[n->sw];
	unsigned np = n->nports + 1u;
	for (unsigned o = 1; o <= n->nports; o++) {
		if (!port_is_up_link(t, &t->ports[n->first_port + o]))
			continue;
		uint64_t want;
		if (!routing_sl2vl(sm->engine, sm->engine_state, &sm->rctx, n->sw, 0, (uint8_t)o,
		                   &want))
			return;
		for (unsigned i = 0; i < np; i++) {
			if (i == o || topo_switch_sl2vl(t, sw, np, i, o) == want)
				continue;
			struct vl_ref ref = {.port = n->first_port, .mod = 0x20000 | o};
			send_sl2vl(sm, ref.port, ref.mod, want, &ref, on_switch_sl2vl);
			break;
		}
	}
}

/* An enhanced port 0 as an output (the switch's own traffic, which ends there): the
 * policy's table for the switch_port0 class, else SL mod its VLs. One Set for all inputs
 * where the switch takes it, else one per input that differs. After a Set for every pair
 * (which covers port 0 too), from its answer. */
static void esp0_sl2vl(struct sm *sm, uint32_t node)
{
	struct topo *t = &sm->topo;
	const struct topo_node *n = &t->nodes[node];
	const struct topo_switch *sw = &t->sws[n->sw];
	uint32_t p0 = n->first_port;
	if (!topo_port_esp0(t, p0) || !(t->ports[p0].pi.capability_mask & PORT_CAP_HAS_SL_MAP) ||
	    (t->ports[p0].refused & TOPO_REFUSED_SL2VL))
		return;
	unsigned np = n->nports + 1u;
	uint64_t want =
	    qos_sl2vl(sm, vl_class_table(sm, p0), data_vls(port_oper_vls(t, &t->ports[p0])), p0);
	for (unsigned i = 1; i < np; i++) {
		if (topo_switch_sl2vl(t, sw, np, i, 0) == want)
			continue;
		struct vl_ref ref = {.port = p0,
		                     .mod = sw->si.optimized_sl2vl_programming ? 0x20000u : i << 8};
		send_sl2vl(sm, p0, ref.mod, want, &ref, on_switch_sl2vl);
		if (sw->si.optimized_sl2vl_programming)
			return;
	}
}

/* A switch's SL-to-VL tables by optimized programming: one Set for every input/output pair
 * with the table most outputs want, then one per output that runs another number of VLs. */
static void switch_sl2vl_data(struct sm *sm, uint32_t node);

static void switch_sl2vl(struct sm *sm, uint32_t node)
{
	switch_sl2vl_data(sm, node);
	/* unless a Set for every pair went, whose answer sends port 0's */
	if (!sm->vl_all_sent)
		esp0_sl2vl(sm, node);
}

static void switch_sl2vl_data(struct sm *sm, uint32_t node)
{
	sm->vl_all_sent = false;
	struct topo *t = &sm->topo;
	const struct topo_node *n = &t->nodes[node];
	const struct topo_switch *sw = &t->sws[n->sw];
	const struct topo_port *p0 = &t->ports[n->first_port];
	if (!(p0->pi.capability_mask & PORT_CAP_HAS_SL_MAP) || (p0->refused & TOPO_REFUSED_SL2VL))
		return;
	if (engine_tables(sm) && sm->engine->sl2vl_by_output &&
	    !(sm->engine->sl2vl_by_input && sm->engine->sl2vl_by_input(sm->engine_state, n->sw)) &&
	    sw->si.optimized_sl2vl_programming) {
		engine_sl2vl_by_output(sm, node);
		return;
	}
	if (engine_tables(sm) &&
	    (!sm->engine->sl2vl_by_vls || !sw->si.optimized_sl2vl_programming)) {
		engine_sl2vl(sm, node);
		return;
	}
	if (!sw->si.optimized_sl2vl_programming)
		return;
	unsigned count[16] = {0}, np = n->nports + 1u;
	for (unsigned o = 1; o <= n->nports; o++) {
		const struct topo_port *p = &t->ports[n->first_port + o];
		if (port_is_up_link(t, p))
			count[data_vls(port_oper_vls(t, p))]++;
	}
	unsigned most = 1;
	for (unsigned v = 1; v < 16; v++)
		if (count[v] > count[most])
			most = v;
	if (!count[most])
		return; /* no links: nothing passes through it */
	bool all = !sw->sl2vl, some = false;
	const struct config_vl_table *tb = NULL;
	uint32_t most_port = n->first_port;
	for (unsigned o = 1; o <= n->nports; o++) {
		const struct topo_port *p = &t->ports[n->first_port + o];
		if (port_is_up_link(t, p) && data_vls(port_oper_vls(t, p)) == most) {
			tb = vl_class_table(sm, n->first_port + o);
			most_port = n->first_port + o;
			break;
		}
	}
	for (unsigned o = 1; o <= n->nports && !all; o++) {
		const struct topo_port *p = &t->ports[n->first_port + o];
		if (!port_is_up_link(t, p))
			continue;
		unsigned nvl = data_vls(port_oper_vls(t, p));
		uint64_t want = output_sl2vl(sm, tb, nvl, n->first_port + o);
		for (unsigned i = 0; i < np; i++) {
			if (topo_switch_sl2vl(t, sw, np, i, o) == want)
				continue;
			if (nvl == most)
				all = true;
			else
				some = true;
			break;
		}
	}
	struct vl_ref ref = {.port = n->first_port, .follow_nvl = (uint8_t)most};
	if (all) {
		ref.mod = 0x30000;
		send_sl2vl(sm, ref.port, ref.mod, output_sl2vl(sm, tb, most, most_port), &ref,
		           on_switch_sl2vl);
		sm->vl_all_sent = true;
		return;
	}
	if (!some)
		return;
	for (unsigned o = 1; o <= n->nports; o++) {
		const struct topo_port *p = &t->ports[n->first_port + o];
		if (!port_is_up_link(t, p))
			continue;
		uint64_t want =
		    output_sl2vl(sm, tb, data_vls(port_oper_vls(t, p)), n->first_port + o);
		for (unsigned i = 0; i < np; i++) {
			if (topo_switch_sl2vl(t, sw, np, i, o) != want) {
				ref.mod = 0x20000 | o;
				send_sl2vl(sm, ref.port, ref.mod, want, &ref, on_switch_sl2vl);
				break;
			}
		}
	}
}

/* The VL arbitration blocks of one port: the low-priority table names each data VL once,
 * the high-priority table is empty; entries beyond them have weight 0. */
static void port_vlarb(struct sm *sm, uint32_t pi_port, bool is_switch)
{
	struct topo *t = &sm->topo;
	struct topo_port *port = &t->ports[pi_port];
	if (port->refused & TOPO_REFUSED_VLARB)
		return;
	unsigned nvl = data_vls(port_oper_vls(t, port));
	const struct config_vl_table *tb = vl_class_table(sm, pi_port);
	/* the entries of each table: the policy's (those on VLs the link runs), else every
	 * data VL once in the low-priority table */
	uint8_t hv[64], hw[64], lv[64], lw[64];
	unsigned nh = 0, nl = 0;
	if (tb) {
		for (unsigned i = 0; i < tb->nhigh; i++)
			if (tb->high_vl[i] < nvl) {
				hv[nh] = tb->high_vl[i];
				hw[nh++] = tb->high_weight[i];
			}
		for (unsigned i = 0; i < tb->nlow; i++)
			if (tb->low_vl[i] < nvl) {
				lv[nl] = tb->low_vl[i];
				lw[nl++] = tb->low_weight[i];
			}
	} else {
		for (unsigned v = 0; v < nvl; v++) {
			lv[nl] = (uint8_t)v;
			lw[nl++] = VLARB_WEIGHT;
		}
	}
	for (unsigned block = 1; block <= 4; block++) {
		/* blocks: 1 low priority entries 0-31, 2 low 32-63, 3 high 0-31, 4 high 32-63 */
		bool high = block >= 3;
		unsigned cap = high ? port->pi.vl_arb_high_cap : port->pi.vl_arb_low_cap;
		unsigned first = block % 2 ? 0 : 32;
		if (cap <= first)
			continue;
		struct mad_vlarb_table tbl = {0};
		unsigned used = cap - first < 32 ? cap - first : 32;
		const uint8_t *ev = high ? hv : lv, *ew = high ? hw : lw;
		unsigned ne = high ? nh : nl;
		for (unsigned i = 0; i < used; i++) {
			if (first + i < ne) {
				tbl.vl[i] = ev[first + i];
				tbl.weight[i] = ew[first + i];
			}
		}
		uint16_t want = topo_vlarb_intern(t, &tbl);
		if (want && port->vlarb[block - 1] == want)
			continue;
		uint8_t data[64] = {0};
		mad_vlarb_table_encode(&tbl, data, sizeof(data), NULL);
		struct vl_ref ref = {.port = pi_port,
		                     .mod = (block << 16) | (is_switch ? port->num : 0)};
		if (sm_send_dr_port(sm, pi_port, MAD_METHOD_SET, MAD_ATTR_VLARB_TABLE, ref.mod,
		                    data, sizeof(data), on_vlarb, &ref, sizeof(ref)) == 0)
			sm->counts.vl_sets++;
	}
}

/* One port's tables; port 0 of a switch stands for the switch's SL-to-VL tables (which
 * go first: an all-ports Set) and its enhanced port 0's arbitration. */
void vl_program_port(struct sm *sm, uint32_t node, unsigned num)
{
	struct topo *t = &sm->topo;
	const struct topo_node *n = &t->nodes[node];
	if (!n->present || num > n->nports)
		return;
	bool sw = n->type == NODE_TYPE_SWITCH;
	if (num == 0) {
		if (sw)
			switch_sl2vl(sm, node);
		if (sw && topo_port_esp0(t, n->first_port))
			port_vlarb(sm, n->first_port, true); /* the switch's own traffic */
		return;
	}
	uint32_t p = n->first_port + num;
	struct topo_port *port = &t->ports[p];
	if (!port_is_up_link(t, port))
		return;
	if (port->pi.port_state == PORT_STATE_INIT) {
		/* a port coming up may have been reset with its device */
		port->sl2vl = TOPO_SL2VL_UNKNOWN;
		memset(port->vlarb, 0, sizeof(port->vlarb));
	}
	/* (base switch port 0 carries no data: management on VL15 only) */
	port_vlarb(sm, p, sw);
	if (sw || !(port->pi.capability_mask & PORT_CAP_HAS_SL_MAP) ||
	    (port->refused & TOPO_REFUSED_SL2VL))
		return;
	unsigned nvl = data_vls(port_oper_vls(t, port));
	uint64_t want = engine_tables(sm) ? ca_class_sl2vl(sm, nvl)
	                                  : qos_sl2vl(sm, vl_class_table(sm, p), nvl, p);
	if (port->sl2vl != want) {
		struct vl_ref ref = {.port = p, .mod = 0};
		send_sl2vl(sm, p, 0, want, &ref, on_ca_sl2vl);
	}
}
