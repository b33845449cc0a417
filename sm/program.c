/* Programming the subnet, in phases:
 *  keys:     PortInfo of the ports whose M_Key changes, alone (program_keys);
 *  P_Keys:   P_Key tables of the CA ports and of the switch ports facing them;
 *  tables:   SwitchInfo (LinearFDBTop, LifeTime), the LFT blocks that differ from what the
 *            switch holds, and beside them, as room comes, PortInfo of every port: LID, LMC,
 *            SM LID, subnet prefix, M_Key, NeighborMTU and OperVLs agreed with the
 *            neighbour, partition enforcement on switch ports that face CAs, and ARMED for
 *            ports still in INIT; the SL-to-VL and VL arbitration tables that follow those
 *            VLs (sm/vl.c);
 *  activate: ACTIVE for every ARMED port (both ends are ARMED by then, as the spec's neighbour
 *            rule wants), once every table is written.
 * Every Set answers with the attribute as it now is; that answer becomes our copy. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sm/sm_int.h"

static void on_set_done(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                        void *ctx)
{
	const uint32_t *ref = ctx; /* [0] node, [1] what, [2] attr modifier */
	if (!smp || smp->dr_status) {
		char name[160];
		sm->phase_failures++;
		log_rl(sm->log, &sm->rl_refused, LOGL_WARN, "program",
		       "%s: Set of attribute 0x%04x (modifier 0x%x) %s",
		       sm_node_name(sm, ref[0], name, sizeof(name)), ref[1], ref[2],
		       smp ? mad_status_str(smp->dr_status) : "got no answer");
	}
	/* A switch that answers nothing may be restarting: a reset in the middle of our
	 * programming loses the blocks it had acknowledged, and a retried Set of ours landing
	 * after the reset (SwitchInfo: LinearFDBTop) hides it from the next read. Seen in the
	 * soak: a spine reset twice within one long sweep kept routes to a core switch missing
	 * for good. Its tables are forgotten and all sent again by the next sweep. */
	if (!smp && res->error == -ETIMEDOUT && ref[0] < sm->topo.nnodes &&
	    topo_is_switch(&sm->topo, ref[0]) && sm->topo.sws[sm->topo.nodes[ref[0]].sw].lft_hw) {
		uint32_t node = ref[0];
		char name[160];
		log_rl(sm->log, &sm->rl_refused, LOGL_NOTICE, "program",
		       "%s answered no Set of ours: it may have reset; all of its tables go again",
		       sm_node_name(sm, node, name, sizeof(name)));
		topo_forget_tables(&sm->topo, node);
		mcast_topology_changed(sm); /* its MFT blocks too: every group is looked at again */
		sm_request_sweep(sm, &node, 1);
	}
}

static void send_set(struct sm *sm, uint32_t node, uint16_t attr, uint32_t mod, const uint8_t *data,
                     sm_smp_fn cb)
{
	uint32_t ref[3] = {node, attr, mod};
	sm_send_dr(sm, node, NULL, 0, MAD_METHOD_SET, attr, mod, data, 64, cb ? cb : on_set_done,
	           ref, sizeof(ref));
}

static void on_lft_done(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                        void *ctx)
{
	const uint32_t *ref = ctx;
	if (sm->lft_out.inflight)
		sm->lft_out.inflight--;
	on_set_done(sm, res, smp, ctx);
	if (!smp || smp->dr_status)
		return;
	/* remember what the switch now holds, so later sweeps send only differences */
	topo_lft_hw_store(&sm->topo, sm->topo.nodes[ref[0]].sw, ref[2], smp->data);
}

static void on_switch_info_set(struct sm *sm, const struct mad_result *res,
                               const struct mad_smp *smp, void *ctx)
{
	const uint32_t *ref = ctx;
	on_set_done(sm, res, smp, ctx);
	if (smp && !smp->dr_status)
		mad_switch_info_decode(smp->data, sizeof(smp->data),
		                       &sm->topo.sws[sm->topo.nodes[ref[0]].sw].si, NULL);
}

static uint32_t pkeys_sig(const uint16_t *pk, unsigned n)
{
	uint32_t h = 2166136261u;
	for (unsigned i = 0; i < n; i++) {
		h = (h ^ (pk[i] >> 8)) * 16777619u;
		h = (h ^ (pk[i] & 0xff)) * 16777619u;
	}
	return h ? h : 1;
}

static void program_port_pkeys(struct sm *sm, uint32_t p);

/* One P_Key table per port at a time: a Set's answer is what tells us what the port holds,
 * and a Set sent while another is unanswered could land in either order (a retry of the
 * first after the second) or be skipped as "already held" against a table that the first
 * is about to replace. Seen under 500 partition API calls: a port kept keys a later change
 * had taken back. A change that comes meanwhile is sent when the answers are in. */
static void pkeys_answered(struct sm *sm, uint32_t p)
{
	struct topo_port *port = &sm->topo.ports[p];
	if (port->pkey_inflight)
		port->pkey_inflight--;
	if (port->pkey_inflight || !port->pkey_again)
		return;
	port->pkey_again = false;
	if (sm->state != SM_STATE_MASTER || sm->dry_run || sm->stopped)
		return;
	sm->detached++; /* no sweep's phase waits for it */
	program_port_pkeys(sm, p);
	sm->detached--;
}

static void on_switch_pkeys_set(struct sm *sm, const struct mad_result *res,
                                const struct mad_smp *smp, void *ctx)
{
	const uint32_t *ref = ctx; /* node, attr, modifier, port index, signature */
	on_set_done(sm, res, smp, ctx);
	if (smp && !smp->dr_status)
		topo_set_pkey_sig(&sm->topo, ref[3], ref[4]);
	else if (smp) /* refused, not lost: it goes without enforcement, and is not asked again */
		sm->topo.ports[ref[3]].refused |= TOPO_REFUSED_PKEYS;
	else /* it may have landed with its answer lost: unknown, so sent again */
		topo_set_pkey_sig(&sm->topo, ref[3], 0);
	pkeys_answered(sm, ref[3]);
}

static void on_ca_pkeys_set(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                            void *ctx)
{
	const uint32_t *ref = ctx; /* node, attr, modifier, port index, signature (0: a block
	                            * before the last) */
	on_set_done(sm, res, smp, ctx);
	struct topo_port *port = &sm->topo.ports[ref[3]];
	if (!smp || smp->dr_status) {
		port->pkey_failed = true; /* a block failed: all of them again */
		topo_set_pkey_sig(&sm->topo, ref[3], 0);
	} else if (ref[4] && !port->pkey_failed) {
		topo_set_pkey_sig(&sm->topo, ref[3], ref[4]);
	}
	pkeys_answered(sm, ref[3]);
}

static void on_pkeys_read(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                          void *ctx)
{
	(void)res;
	const uint32_t *ref = ctx; /* port index */
	if (!smp || smp->dr_status)
		return; /* stays unknown: it is written */
	struct mad_pkey_table tbl;
	mad_pkey_table_decode(smp->data, sizeof(smp->data), &tbl, NULL);
	topo_set_pkey_sig(&sm->topo, ref[0], pkeys_sig(tbl.pkey, 32));
	/* a CA port's keys stay at the indexes it holds them (program_tables places them) */
	if (!topo_is_switch(&sm->topo, sm->topo.ports[ref[0]].node))
		topo_pkeys_held(&sm->topo, ref[0], tbl.pkey);
}

/* Ports up and running whose P_Key block 0 we do not know (a takeover, a restart) may hold
 * the right keys already: read them, so that only the wrong ones are written. */
static void read_pkeys(struct sm *sm)
{
	struct topo *t = &sm->topo;
	for (uint32_t p = 0; p < t->nports; p++) {
		struct topo_port *port = &t->ports[p];
		const struct topo_node *n = &t->nodes[port->node];
		if (!n->present || port->pkey_sig || port->pi.port_state != PORT_STATE_ACTIVE ||
		    port->num == 0)
			continue;
		uint32_t ref[1] = {p};
		if (n->type != NODE_TYPE_SWITCH) {
			if (!port->lid)
				continue;
			sm_send_dr_port(sm, p, MAD_METHOD_GET, MAD_ATTR_PKEY_TABLE, 0, NULL, 0,
			                on_pkeys_read, ref, sizeof(ref));
		} else {
			uint16_t pk[32];
			if ((port->refused & TOPO_REFUSED_PKEYS) ||
			    !topo_switch_port_pkeys(t, p, pk, 32))
				continue;
			sm_send_dr(sm, port->node, NULL, 0, MAD_METHOD_GET, MAD_ATTR_PKEY_TABLE,
			           (uint32_t)port->num << 16, NULL, 0, on_pkeys_read, ref,
			           sizeof(ref));
		}
		sm->counts.pkey_reads++;
	}
}

/* Partition enforcement at the edge: each switch port that faces a CA gets that CA port's
 * P_Keys (block 0; the rest of the switch's PartitionEnforcementCap stays empty), so the
 * switch drops what the CA sends or would receive in partitions it is not in, and a
 * misbehaving host cannot even reach other partitions' ports. The arm phase then turns on
 * PartitionEnforcementInbound and Outbound there. */
static void program_switch_port_pkeys(struct sm *sm, uint32_t p)
{
	struct topo *t = &sm->topo;
	struct topo_port *port = &t->ports[p];
	struct mad_pkey_table tbl = {0};
	unsigned k = topo_switch_port_pkeys(t, p, tbl.pkey, 32);
	if (!k || (port->refused & TOPO_REFUSED_PKEYS))
		return;
	if (port->pkey_inflight) {
		port->pkey_again = true;
		return;
	}
	uint32_t sig = pkeys_sig(tbl.pkey, 32);
	if (port->pkey_sig == sig)
		return;
	sm->counts.pkey_sets++;
	uint8_t data[64] = {0};
	mad_pkey_table_encode(&tbl, data, sizeof(data), NULL);
	uint32_t ref[5] = {port->node, MAD_ATTR_PKEY_TABLE, (uint32_t)port->num << 16, p, sig};
	if (sm_send_dr(sm, port->node, NULL, 0, MAD_METHOD_SET, MAD_ATTR_PKEY_TABLE,
	               (uint32_t)port->num << 16, data, sizeof(data), on_switch_pkeys_set, ref,
	               sizeof(ref)) == 0)
		port->pkey_inflight++;
}

static void program_switch_pkeys(struct sm *sm)
{
	struct topo *t = &sm->topo;
	for (uint32_t s = 0; s < t->nsws; s++) {
		const struct topo_node *n = &t->nodes[t->sws[s].node];
		if (!n->present)
			continue;
		for (unsigned num = 1; num <= n->nports; num++)
			program_switch_port_pkeys(sm, n->first_port + num);
	}
}

/* P_Keys of a CA port, or of a switch's management port when the policy gives it keys
 * (all_switches): every block the keys need, 32 keys each, and the blocks a longer table had
 * before, emptied; only where the port holds others (known from our Sets, or read). */
static void program_ca_port_pkeys(struct sm *sm, uint32_t p)
{
	struct topo *t = &sm->topo;
	struct topo_port *port = &t->ports[p];
	const struct topo_node *n = &t->nodes[port->node];
	bool sw0 = n->type == NODE_TYPE_SWITCH && port->num == 0;
	if (!n->present || (n->type == NODE_TYPE_SWITCH && !sw0) ||
	    !t->ports[topo_lid_port(t, p)].lid)
		return;
	unsigned nk;
	const uint16_t *keys = topo_port_pkeys(t, p, &nk);
	/* a switch's port 0 keeps its own table unless the policy gives it more than the
	 * full default key */
	if (sw0 && nk <= 1 && (!nk || keys[0] == 0xffff) && !port->pkey_sig)
		return;
	if (port->pkey_inflight) {
		port->pkey_again = true;
		return;
	}
	if (!sw0 && port->pi.port_state == PORT_STATE_INIT)
		topo_set_pkey_sig(t, p, 0); /* it may have been reset with its device */
	unsigned blocks = (nk + 31u) / 32u;
	if (!blocks)
		blocks = 1;
	uint16_t all[TOPO_MAX_PKEYS + 32] = {0};
	memcpy(all, keys, nk * sizeof(uint16_t));
	uint32_t sig = pkeys_sig(all, blocks * 32u);
	if (port->pkey_sig == sig)
		return;
	unsigned upto = blocks > port->pkey_blocks ? blocks : port->pkey_blocks;
	port->pkey_failed = false;
	for (unsigned b = 0; b < upto; b++) {
		struct mad_pkey_table tbl = {0};
		if (b < blocks)
			memcpy(tbl.pkey, all + b * 32u, sizeof(tbl.pkey));
		uint8_t data[64] = {0};
		mad_pkey_table_encode(&tbl, data, sizeof(data), NULL);
		/* the signature is the port's once its last block is set */
		uint32_t ref[5] = {port->node, MAD_ATTR_PKEY_TABLE, b, p, b + 1 == upto ? sig : 0};
		int rc =
		    sw0 ? sm_send_dr(sm, port->node, NULL, 0, MAD_METHOD_SET, MAD_ATTR_PKEY_TABLE,
		                     b, data, sizeof(data), on_ca_pkeys_set, ref, sizeof(ref))
		        : sm_send_dr_port(sm, p, MAD_METHOD_SET, MAD_ATTR_PKEY_TABLE, b, data,
		                          sizeof(data), on_ca_pkeys_set, ref, sizeof(ref));
		if (rc == 0)
			port->pkey_inflight++;
		else
			port->pkey_failed =
			    true; /* the last block's answer must not vouch for it */
		sm->counts.pkey_sets++;
	}
	if (port->pkey_failed && !port->pkey_inflight)
		topo_set_pkey_sig(t, p, 0);
	port->pkey_blocks = (uint8_t)blocks;
}

static void program_ca_pkeys(struct sm *sm)
{
	for (uint32_t p = 0; p < sm->topo.nports; p++)
		program_ca_port_pkeys(sm, p);
}

static void program_port_pkeys(struct sm *sm, uint32_t p)
{
	const struct topo_port *port = &sm->topo.ports[p];
	if (topo_is_switch(&sm->topo, port->node) && port->num > 0)
		program_switch_port_pkeys(sm, p);
	else
		program_ca_port_pkeys(sm, p);
}

/* Does LFT block b need sending? Entries of LIDs nobody holds any more do not count: a
 * vanished node must not make every switch in the fabric rewrite a table. */
static bool block_differs(const struct topo *t, const struct topo_switch *sw, uint32_t b)
{
	const uint8_t *want = sw->lft + b * 64, *hw = sw->lft_hw + b * 64;
	if (!memcmp(want, hw, 64))
		return false;
	for (uint32_t i = 0; i < 64; i++) {
		uint32_t lid = b * 64 + i;
		if (want[i] == hw[i])
			continue;
		if (want[i] == 0xff && hw[i] != 0xfe && lid < TOPO_LID_COUNT &&
		    t->lid_port[lid] == TOPO_NONE)
			continue;
		return true;
	}
	return false;
}

uint32_t program_lft_missing(const struct sm *sm, uint32_t *switches)
{
	const struct topo *t = &sm->topo;
	uint32_t blocks = 0;
	*switches = 0;
	for (uint32_t s = 0; s < t->nsws; s++) {
		const struct topo_switch *sw = &t->sws[s];
		if (!t->nodes[sw->node].present || !sw->lft)
			continue;
		uint32_t before = blocks;
		for (uint32_t b = 0; b * 64 < sw->lft_size; b++)
			if (!sw->lft_hw || b * 64 + 64 > sw->lft_hw_size || block_differs(t, sw, b))
				blocks++;
		*switches += blocks != before;
	}
	return blocks;
}

static void on_lft_read(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                        void *ctx)
{
	(void)res;
	const uint32_t *ref = ctx; /* [0] node, [1] block */
	if (!smp || smp->dr_status)
		return; /* stays unknown (0xfe): the block is written */
	topo_lft_hw_store(&sm->topo, sm->topo.nodes[ref[0]].sw, ref[1], smp->data);
}

/* Switches whose tables we do not know (a fresh start, a takeover, a switch that came
 * back) may hold the right routes already, put there by the SM before us: read what they
 * hold up to their LinearFDBTop before routing, so that the engine keeps the routes that
 * are still valid (sticky routing) and program_tables writes only the blocks that are
 * wrong: no working route is touched. The blocks go as room comes (program_read_more), as
 * the Sets do: queued all at once, a takeover's 830,000 reads at 20,736 hosts went cold in
 * the SM's queue and were read at half the simulator's rate. */
void program_read_tables(struct sm *sm)
{
	struct topo *t = &sm->topo;
	read_pkeys(sm);
	if (sm->read_out.active)
		sm->pending--; /* a sweep before this one left some: these replace them */
	sm->read_out.active = false;
	sm->read_out.sws.n = 0;
	sm->read_out.i = sm->read_out.b = sm->read_out.k = sm->read_out.blocks = 0;
	for (uint32_t s = 0; s < t->nsws; s++) {
		struct topo_switch *sw = &t->sws[s];
		uint32_t top = sw->si.linear_fdb_top;
		if (!t->nodes[sw->node].present || sw->lft_hw || !top || top >= TOPO_LID_COUNT)
			continue; /* known, or it holds nothing yet */
		uint32_t *slot;
		/* out of memory: it stays unknown, and every block is written */
		if (topo_lft_hw_reserve(t, s, (top / 64 + 1) * 64) < 0 ||
		    !(slot = vec_push(&sm->read_out.sws)))
			continue;
		*slot = s;
		if (top / 64 + 1 > sm->read_out.blocks)
			sm->read_out.blocks = top / 64 + 1;
	}
	if (!sm->read_out.sws.n)
		return;
	sm->read_out.active = true;
	sm->pending++;
	program_read_more(sm);
}

void program_read_more(struct sm *sm)
{
	const struct topo *t = &sm->topo;
	uint32_t round = sm->cfg->mad_window_per_node ? sm->cfg->mad_window_per_node : 1;
	while (sm->read_out.active && sm_has_room(sm)) {
		if (sm->read_out.i >= sm->read_out.sws.n) {
			sm->read_out.i = sm->read_out.k = 0;
			sm->read_out.b += round;
		}
		uint32_t b0 = sm->read_out.b;
		if (b0 >= sm->read_out.blocks) {
			sm->read_out.active = false;
			sm->pending--; /* the caller checks the phase (sm.c on_dr_answer) */
			break;
		}
		const struct topo_switch *sw = &t->sws[sm->read_out.sws.v[sm->read_out.i]];
		uint32_t top = sw->si.linear_fdb_top;
		if (!t->nodes[sw->node].present || b0 * 64 > top) {
			sm->read_out.i++; /* none of its blocks this round */
			sm->read_out.k = 0;
			continue;
		}
		uint32_t b = b0 + sm->read_out.k++;
		if (sm->read_out.k >= round || (b + 1) * 64 > top) {
			sm->read_out.i++;
			sm->read_out.k = 0;
		}
		uint32_t ref[2] = {sw->node, b};
		sm_send_dr(sm, sw->node, NULL, 0, MAD_METHOD_GET, MAD_ATTR_LFT, b, NULL, 0,
		           on_lft_read, ref, sizeof(ref));
		sm->counts.lft_blocks_read++;
	}
}

/* Routes moving onto links just let in: the switches at their ends are written first, then
 * their neighbours, and so on outwards, each wave acknowledged before the next. For a
 * destination whose new routes cross such a link, the switches nearer the link (the new
 * routes' next hops) then hold their new entries before any switch farther out sends
 * packets their way: no packet meets an old entry that leads back (a loop) while the
 * tables change. Other moves are between routes equally short, safe in any order. */
static void lft_waves(struct sm *sm)
{
	const struct routing_ctx *ctx = &sm->rctx;
	const struct topo *t = &sm->topo;
	sm->lft_out.wave = 0;
	sm->lft_out.waves = 1;
	uint32_t nseeds = sm->rejoin_nodes.n;
	sm->rejoin_nodes.n = 0;
	if (!nseeds || ctx->nsw != t->nsws || !ctx->adj_start)
		return;
	uint8_t *w = realloc(sm->lft_wave, t->nsws + 1u);
	uint32_t *queue = malloc(sizeof(uint32_t) * (t->nsws + 1u));
	if (!w || !queue) {
		if (w)
			sm->lft_wave = w;
		free(queue);
		return; /* out of memory: all at once, as before */
	}
	sm->lft_wave = w;
	memset(w, 0xff, t->nsws);
	uint32_t head = 0, tail = 0;
	for (uint32_t i = 0; i < nseeds; i++) {
		uint32_t node = sm->rejoin_nodes.v[i];
		if (node >= t->nnodes || !topo_is_switch(t, node))
			continue;
		uint32_t s = t->nodes[node].sw;
		if (w[s] == 0xff) {
			w[s] = 0;
			queue[tail++] = s;
		}
	}
	uint8_t last = 0;
	while (head < tail) {
		uint32_t s = queue[head++];
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++) {
			uint32_t m = ctx->adj[e].to;
			if (w[m] != 0xff || w[s] >= 253)
				continue;
			w[m] = (uint8_t)(w[s] + 1);
			last = w[m];
			queue[tail++] = m;
		}
	}
	for (uint32_t s = 0; s < t->nsws; s++)
		if (w[s] == 0xff)
			w[s] = (uint8_t)(last + 1); /* out of reach of the links: last */
	sm->lft_out.waves = (uint8_t)(last + 2);
	free(queue);
}

void program_lft_more(struct sm *sm)
{
	const struct topo *t = &sm->topo;
	/* a round of blocks b to b + window - 1 of every switch, then the next round: the
	 * queue's head holds many switches, so that the MAD layer fills its window (a few in
	 * flight per switch), and each switch's blocks of a round go one after the other, its
	 * node, key and tables at hand in the cache (one block of every switch in turn, as
	 * before, missed the cache four times for each block at 40,000 hosts) */
	uint32_t round = sm->cfg->mad_window_per_node ? sm->cfg->mad_window_per_node : 1;
	while (sm->lft_out.active && sm_has_room(sm)) {
		if (sm->lft_out.s >= t->nsws) {
			sm->lft_out.s = sm->lft_out.k = 0;
			sm->lft_out.b += round;
		}
		uint32_t b0 = sm->lft_out.b;
		if (b0 >= sm->lft_out.blocks) {
			if (sm->lft_out.wave + 1 < sm->lft_out.waves) {
				if (sm->lft_out.inflight)
					break; /* this wave's Sets all in before the next goes */
				sm->lft_out.wave++;
				sm->lft_out.b = sm->lft_out.s = sm->lft_out.k = 0;
				continue;
			}
			sm->lft_out.active = false;
			sm->pending--; /* the caller checks the phase (sm.c on_dr_answer) */
			break;
		}
		uint32_t si = sm->lft_out.s;
		struct topo_switch *sw = &sm->topo.sws[si];
		if ((sm->lft_out.waves > 1 && sm->lft_wave[si] != sm->lft_out.wave) ||
		    !t->nodes[sw->node].present || !sw->lft || !sw->lft_hw ||
		    sw->lft_hw_size < sw->lft_size || b0 * 64 >= sw->lft_size) {
			sm->lft_out.s++; /* none of its blocks this round */
			sm->lft_out.k = 0;
			continue;
		}
		uint32_t b = b0 + sm->lft_out.k++;
		if (sm->lft_out.k >= round || (b + 1) * 64 >= sw->lft_size) {
			sm->lft_out.s++;
			sm->lft_out.k = 0;
		}
		if (!block_differs(t, sw, b))
			continue;
		send_set(sm, sw->node, MAD_ATTR_LFT, b, sw->lft + b * 64, on_lft_done);
		sm->lft_out.inflight++;
		sm->counts.lft_blocks_sent++;
	}
}

void program_tables(struct sm *sm)
{
	struct topo *t = &sm->topo;
	uint32_t lft_blocks = 0;
	for (uint32_t s = 0; s < t->nsws; s++) {
		struct topo_switch *sw = &t->sws[s];
		uint32_t node = sw->node;
		if (!t->nodes[node].present || !sw->lft)
			continue;
		if (sw->si.linear_fdb_top != sw->lft_top || sw->si.port_state_change ||
		    sw->si.life_time_value != sm->cfg->packet_life) {
			struct mad_switch_info si = sw->si;
			si.linear_fdb_top = sw->lft_top;
			si.life_time_value = sm->cfg->packet_life;
			si.port_state_change = 1; /* clears it */
			uint8_t data[64] = {0};
			mad_switch_info_encode(&si, data, sizeof(data), NULL);
			send_set(sm, node, MAD_ATTR_SWITCH_INFO, 0, data, on_switch_info_set);
		}
		/* unknown contents: every block goes out the first time */
		if (topo_lft_hw_reserve(t, s, sw->lft_size) < 0)
			continue;
		if ((sw->lft_size + 63) / 64 > lft_blocks)
			lft_blocks = (sw->lft_size + 63) / 64;
	}
	/* the blocks go as room comes (program_lft_more), not all queued now: at 11,664 hosts
	 * they are 337,000 Sets, each a queued request of 330 bytes, 111 MB at the peak */
	if (sm->lft_out.active)
		sm->pending--; /* a sweep before this one left some: these replace them */
	lft_waves(sm);
	sm->lft_out.b = sm->lft_out.s = sm->lft_out.k = 0;
	sm->lft_out.blocks = lft_blocks;
	sm->lft_out.active = true;
	sm->pending++;
	/* multicast trees: all of them again when links or nodes changed */
	if (sm->structural || sm->rejoin)
		mcast_topology_changed(sm);
	sm->rejoin = false;
	mcast_program(sm);
	/* the ports' PortInfo (ARMED) and VL tables beside the LFT blocks, made as room comes
	 * (program_ports_more): neither waits on the other (IBA orders only ACTIVE after
	 * ARMED), and one stream of Sets keeps the MAD window full where three phases in turn
	 * each waited on their slowest switch */
	sm->port_out.node = sm->port_out.num = sm->port_out.base = sm->port_out.max_num = 0;
	for (uint32_t n = 0; n < t->nnodes; n++)
		if (t->nodes[n].nports > sm->port_out.max_num)
			sm->port_out.max_num = t->nodes[n].nports;
	if (!sm->port_out.active)
		sm->pending++;
	sm->port_out.active = true;
	program_room(sm);
}

/* P_Key tables before the PortInfo that turns partition enforcement on where a switch port
 * holds its CA's keys (enforces): a port never enforces a table it does not hold yet. */
void program_tables_pkeys(struct sm *sm)
{
	struct topo *t = &sm->topo;
	/* tables read from the ports (a restart, a takeover): their keys placed as held */
	if (t->pkeys_held.n && topo_pkeys_update(t, sm->cfg) < 0)
		log_err(sm->log, "program",
		        "out of memory: P_Keys placed as the policy orders them");
	program_ca_pkeys(sm);
	program_switch_pkeys(sm);
}

static void program_arm_port(struct sm *sm, uint32_t p);

/* The port stream: a round of ports k to k + mad_window_per_node - 1 of every node, then
 * the next round (as the LFT blocks go, so that the queue's head holds many nodes and the
 * MAD layer's window, a few in flight per node, fills, while each node's ports of a round
 * go one after the other with its node, ports and key at hand in the cache), each port's
 * PortInfo (arming it if in INIT) and its VL tables, while the SMP service has room; the
 * alias GUIDs once at the end. One pending unit while active. */
void program_ports_more(struct sm *sm)
{
	struct topo *t = &sm->topo;
	unsigned round = sm->cfg->mad_window_per_node ? sm->cfg->mad_window_per_node : 1;
	while (sm->port_out.active && sm_has_room(sm)) {
		if (sm->port_out.node >= t->nnodes) {
			sm->port_out.node = 0;
			sm->port_out.base += round;
			sm->port_out.num = sm->port_out.base;
		}
		if (sm->port_out.base > sm->port_out.max_num) {
			sm->port_out.active = false;
			sm->link_recheck =
			    false; /* every port was looked at with the new settings */
			guids_program(sm);
			sm->pending--; /* the caller checks the phase */
			break;
		}
		uint32_t node = sm->port_out.node;
		const struct topo_node *n = &t->nodes[node];
		unsigned num = sm->port_out.num++;
		if (sm->port_out.num >= sm->port_out.base + round || sm->port_out.num > n->nports) {
			sm->port_out.node++; /* its last port of this round */
			sm->port_out.num = sm->port_out.base;
		}
		if (num > n->nports)
			continue;
		program_arm_port(sm, n->first_port + num);
		vl_program_port(sm, node, num);
	}
}

/* Room in the SMP service's window (its smp_room hook): the LFT blocks read before
 * routing; the port stream, then LFT blocks; ACTIVE after both. */
void program_room(struct sm *sm)
{
	program_read_more(sm);
	program_ports_more(sm);
	program_lft_more(sm);
	program_activate_more(sm);
}

static void on_port_set(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                        void *ctx)
{
	const uint32_t *ref = ctx;
	on_set_done(sm, res, smp, ctx);
	if (!smp || smp->dr_status)
		return;
	struct topo *t = &sm->topo;
	uint32_t p = topo_port(t, ref[0], ref[2]);
	mad_port_info_decode(smp->data, sizeof(smp->data), &t->ports[p].pi, NULL);
	if (!topo_is_switch(t, ref[0]) || ref[2] == 0)
		mkey_learned(sm, mkey_guid(t, p), t->ports[p].pi.mkey);
}

static uint8_t min_u8(uint8_t a, uint8_t b)
{
	return a < b ? a : b;
}

/* Does this switch port enforce partitions? Where it faces a CA whose P_Keys it holds. */
static uint8_t enforces(const struct sm *sm, uint32_t p)
{
	uint16_t pk[32];
	return topo_switch_port_pkeys(&sm->topo, p, pk, 32) && sm->topo.ports[p].pkey_sig ? 1 : 0;
}

/* A new master (fresh start, takeover, handover) asks the hosts to re-register: joins,
 * services and subscriptions go to it again (IBA 14.4.11), on CA ports that support it. */
static bool wants_rereg(const struct sm *sm, uint32_t p)
{
	const struct topo_port *port = &sm->topo.ports[p];
	return sm->el.rereg && !topo_is_switch(&sm->topo, port->node) &&
	       (port->pi.capability_mask & PORT_CAP_HAS_CLIENT_REREG);
}

/* A PortInfo Set that changes only what we mean to change (zero means "no change" for
 * widths, speeds, physical state and port state). */
static void port_set_phys(struct sm *sm, uint32_t p, uint8_t state, uint8_t phys);

static void port_set(struct sm *sm, uint32_t p, uint8_t state)
{
	port_set_phys(sm, p, state, 0);
}

void program_port_phys(struct sm *sm, uint32_t p, uint8_t phys)
{
	port_set_phys(sm, p, PORT_STATE_NOP, phys);
}

/* The widths and speeds a port's link may train to, as a Set carries them: a switch port's
 * as link_width_enabled and link_speed_enabled say (a CA's every one it supports), any
 * port's extended speeds as link_speed_ext_enabled says; 0 (no change) where the setting
 * asks for none the port supports. They take effect when the link next trains. */
static void link_set_values(const struct ibsmd_config *c, const struct mad_port_info *cur, bool sw,
                            struct mad_port_info *pi)
{
	uint8_t w = sw ? c->link_width_enabled : 255, s = sw ? c->link_speed_enabled : 15;
	uint8_t e = c->link_speed_ext_enabled;
	pi->link_width_enabled = w == 255 ? 0xff : (uint8_t)(w & cur->link_width_supported);
	pi->link_speed_enabled = s == 15 ? 0xf : (uint8_t)(s & cur->link_speed_supported);
	if (!cur->link_speed_ext_supported)
		pi->link_speed_ext_enabled = 0;
	else if (e == 31) /* FDR to NDR where the port has them */
		pi->link_speed_ext_enabled =
		    cur->link_speed_ext_enabled != cur->link_speed_ext_supported
		        ? LINK_SPEED_EXT_SET_SUPPORTED
		        : 0;
	else
		pi->link_speed_ext_enabled =
		    e == 30 ? 30 : (uint8_t)(e & cur->link_speed_ext_supported);
}

/* Does a port hold the link settings (as link_set_values would set them)? At the defaults
 * (every one supported) a port is not held to them unless they just changed: ibsim ignores
 * "set to supported", and would be written again every sweep. */
static bool link_settings_held(const struct sm *sm, const struct mad_port_info *pi, bool sw)
{
	const struct ibsmd_config *c = sm->cfg;
	bool all = sm->link_recheck;
	uint8_t w = sw ? c->link_width_enabled : 255, s = sw ? c->link_speed_enabled : 15;
	uint8_t e = c->link_speed_ext_enabled;
	uint8_t want_w =
	    w == 255 ? pi->link_width_supported : (uint8_t)(w & pi->link_width_supported);
	uint8_t want_s =
	    s == 15 ? pi->link_speed_supported : (uint8_t)(s & pi->link_speed_supported);
	if (want_w && (w != 255 || all) && pi->link_width_enabled != want_w)
		return false;
	if (want_s && (s != 15 || all) && pi->link_speed_enabled != want_s)
		return false;
	if (!pi->link_speed_ext_supported || !e || (e == 31 && !all))
		return true;
	uint8_t want_e = e == 31   ? pi->link_speed_ext_supported
	                 : e == 30 ? 0
	                           : (uint8_t)(e & pi->link_speed_ext_supported);
	return (e != 30 && !want_e) || pi->link_speed_ext_enabled == want_e;
}

static void port_set_phys(struct sm *sm, uint32_t p, uint8_t state, uint8_t phys)
{
	struct topo *t = &sm->topo;
	struct topo_port *port = &t->ports[p];
	struct mad_port_info pi = port->pi;
	bool mgmt = !topo_is_switch(t, port->node) || port->num == 0;
	pi.link_width_enabled = 0; /* 0: no change, unless set below */
	pi.link_speed_enabled = 0;
	bool sw = topo_is_switch(t, port->node);
	pi.phys_state = phys; /* 0: no change */
	pi.link_down_default_state = 0;
	pi.port_state = state;
	pi.client_reregister = wants_rereg(sm, p);
	if (mgmt) {
		const struct topo_port *smp = &t->ports[t->sm_port];
		pi.lid = port->lid;
		pi.lmc = port->lmc;
		pi.master_sm_lid = smp->lid;
		pi.master_sm_sl = 0;
		pi.gid_prefix = sm->cfg->subnet_prefix;
		pi.mkey = mkey_wanted(sm, mkey_guid(t, p));
		pi.mkey_lease_period = sm->cfg->m_key_lease;
		pi.mkey_protect_bits = sm->cfg->m_key_protect;
		pi.subnet_timeout = sm->cfg->subnet_timeout;
	}
	if (port->peer != TOPO_NONE) {
		const struct topo_port *peer = &t->ports[port->peer];
		pi.neighbor_mtu = min_u8(pi.mtu_cap, peer->pi.mtu_cap);
		pi.oper_vls = min_u8(pi.vl_cap, peer->pi.vl_cap);
		link_set_values(sm->cfg, &port->pi, sw, &pi);
		pi.link_speed_ext_enabled2 =
		    pi.link_speed_ext_enabled2 != pi.link_speed_ext_supported2
		        ? pi.link_speed_ext_supported2
		        : 0;
		if (topo_is_switch(t, port->node)) {
			/* how long a packet may wait at the head of a queue: shorter towards a
			 * CA, which cannot pass a stalled packet on */
			bool leaf = !topo_is_switch(t, peer->node);
			pi.hoq_life = leaf ? sm->cfg->leaf_hoq_life : sm->cfg->hoq_life;
			pi.vl_stall_count =
			    leaf ? sm->cfg->leaf_vl_stall_count : sm->cfg->vl_stall_count;
			pi.partition_enforcement_inbound = pi.partition_enforcement_outbound =
			    enforces(sm, p);
		}
	} else {
		pi.neighbor_mtu = 0;
		/* an enhanced switch port 0 runs every VL it can: its own traffic is data */
		pi.oper_vls = topo_port_esp0(t, p) ? pi.vl_cap : 0;
		pi.link_speed_ext_enabled = pi.link_speed_ext_enabled2 = 0; /* no change */
	}
	/* how much high-priority traffic may pass before low gets a turn: the QoS policy's */
	const struct config_vl_table *tb = vl_class_table(sm, p);
	if (tb)
		pi.vl_high_limit = tb->high_limit;
	uint8_t data[64] = {0};
	mad_port_info_encode(&pi, data, sizeof(data), NULL);
	uint32_t ref[3] = {port->node, MAD_ATTR_PORT_INFO, port->num};
	sm_send_dr_port(sm, p, MAD_METHOD_SET, MAD_ATTR_PORT_INFO, sm_port_info_mod(sm, p, true),
	                data, sizeof(data), on_port_set, ref, sizeof(ref));
	sm->counts.port_sets++;
}

static bool port_configured(const struct sm *sm, uint32_t p)
{
	const struct topo *t = &sm->topo;
	const struct topo_port *port = &t->ports[p];
	const struct mad_port_info *pi = &port->pi;
	bool mgmt = !topo_is_switch(t, port->node) || port->num == 0;
	if (mgmt && (pi->lid != port->lid || pi->lmc != port->lmc ||
	             pi->master_sm_lid != t->ports[t->sm_port].lid ||
	             pi->gid_prefix != sm->cfg->subnet_prefix))
		return false;
	/* the M_Key as the port showed it (we presented the right one, or it hides none) */
	if (mgmt && (pi->mkey != mkey_wanted(sm, mkey_guid(t, p)) ||
	             pi->mkey_protect_bits != sm->cfg->m_key_protect ||
	             pi->mkey_lease_period != sm->cfg->m_key_lease))
		return false;
	const struct config_vl_table *tb = vl_class_table(sm, p);
	if (tb && pi->vl_high_limit != tb->high_limit)
		return false;
	if (topo_port_esp0(t, p) && pi->oper_vls != pi->vl_cap)
		return false;
	if (port->peer != TOPO_NONE) {
		const struct topo_port *peer = &t->ports[port->peer];
		if (pi->neighbor_mtu != min_u8(pi->mtu_cap, peer->pi.mtu_cap) ||
		    pi->oper_vls != min_u8(pi->vl_cap, peer->pi.vl_cap) ||
		    !link_settings_held(sm, pi, topo_is_switch(t, port->node)))
			return false;
		if (topo_is_switch(t, port->node)) {
			uint8_t e = enforces(sm, p);
			bool leaf = !topo_is_switch(t, peer->node);
			if (pi->partition_enforcement_inbound != e ||
			    pi->partition_enforcement_outbound != e ||
			    pi->hoq_life != (leaf ? sm->cfg->leaf_hoq_life : sm->cfg->hoq_life) ||
			    pi->vl_stall_count !=
			        (leaf ? sm->cfg->leaf_vl_stall_count : sm->cfg->vl_stall_count))
				return false;
		}
	}
	return true;
}

/* Ports whose M_Key changes go first, alone: a Set sent beside one to the same node would
 * present the key that is about to go. */
void program_keys(struct sm *sm)
{
	struct topo *t = &sm->topo;
	for (uint32_t p = 0; p < t->nports; p++) {
		if (!topo_port_managed(t, p))
			continue;
		const struct topo_port *port = &t->ports[p];
		bool mgmt = !topo_is_switch(t, port->node) || port->num == 0;
		if (mgmt && port->pi.mkey != mkey_wanted(sm, mkey_guid(t, p)))
			port_set(sm, p,
			         port->pi.port_state == PORT_STATE_INIT ? PORT_STATE_ARMED
			                                                : PORT_STATE_NOP);
	}
}

void program_ports_now(struct sm *sm)
{
	if (sm->state != SM_STATE_MASTER || sm->dry_run || sm->stopped)
		return;
	struct topo *t = &sm->topo;
	sm->link_recheck = true;
	sm->detached++; /* no sweep's phase waits for them */
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct topo_port *port = &t->ports[p];
		if (topo_port_managed(t, p) && port->pi.port_state >= PORT_STATE_ARMED &&
		    !port_configured(sm, p))
			port_set(sm, p, PORT_STATE_NOP);
	}
	sm->detached--;
	sm->link_recheck = false;
}

static void program_arm_port(struct sm *sm, uint32_t p)
{
	struct topo *t = &sm->topo;
	if (!topo_port_managed(t, p))
		return;
	const struct topo_port *port = &t->ports[p];
	bool arm = port->pi.port_state == PORT_STATE_INIT;
	if (arm || wants_rereg(sm, p) || !port_configured(sm, p))
		port_set(sm, p, arm ? PORT_STATE_ARMED : PORT_STATE_NOP);
}

/* ACTIVE for the ARMED ports, made as room comes (program_room), in the order of the ports:
 * queued all at once they were 250,000 requests at 40,000 hosts, each allocated ahead and
 * gone cold in the SM's queue before it went. One pending unit while active. */
void program_activate_more(struct sm *sm)
{
	struct topo *t = &sm->topo;
	while (sm->act_out.active && sm_has_room(sm)) {
		if (sm->act_out.p >= t->nports) {
			sm->act_out.active = false;
			sm->pending--; /* the caller checks the phase */
			break;
		}
		uint32_t p = sm->act_out.p++;
		if (topo_port_managed(t, p) && t->ports[p].pi.port_state == PORT_STATE_ARMED)
			port_set(sm, p, PORT_STATE_ACTIVE);
	}
}

void program_activate(struct sm *sm)
{
	sm->act_out.p = 0;
	if (!sm->act_out.active)
		sm->pending++;
	sm->act_out.active = true;
	program_activate_more(sm);
}

void program_pkeys_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	program_pkeys_now((struct sm *)((char *)w - offsetof(struct sm, pkeys_timer)));
}

void program_pkeys_now(struct sm *sm)
{
	if (topo_pkeys_update(&sm->topo, sm->cfg) < 0) {
		log_err(sm->log, "program", "out of memory: ports keep their P_Keys until a sweep");
		return;
	}
	if (sm->state != SM_STATE_MASTER || sm->dry_run)
		return; /* a standby sends nothing; it holds the policy for a takeover */
	/* outside the phases: only the tables that differ from what the ports hold go, and a
	 * sweep under way does not wait for them */
	sm->detached++;
	program_ca_pkeys(sm);
	program_switch_pkeys(sm);
	vports_program_pkeys(sm);
	sm->detached--;
}
