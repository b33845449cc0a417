/* Multicast forwarding: a spanning tree per multicast LID over the switches, and the MFT
 * blocks that make the switches follow it.
 *
 * The SA decides which ports a multicast LID must reach (its group's members); this file
 * turns that into port masks. Each MLID's tree comes from the routing engine that routed
 * the subnet (its mcast_tree hook, or routing/mcast.c's default over the same switch graph).
 * Changes are batched: many joins in one turn of the event loop cost one
 * recomputation of the MLIDs they touch, and only MFT blocks that differ from what the
 * switch holds are sent. */
#include <stdlib.h>
#include <string.h>

#include "sm/sm_int.h"
#include "util/vec.h"

static void mcast_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);
static void mcast_retry_cb(struct ev_loop *loop, ev_timer *w, int revents);

void mcast_init(struct sm *sm)
{
	ev_timer_init(&sm->mc.timer, mcast_timer_cb, 0., 0.);
	sm->mc.timer.data = sm;
	ev_timer_init(&sm->mc.retry, mcast_retry_cb, 1., 0.);
	sm->mc.retry.data = sm;
}

void mcast_stop(struct sm *sm)
{
	if (sm->loop) {
		ev_timer_stop(sm->loop, &sm->mc.timer);
		ev_timer_stop(sm->loop, &sm->mc.retry);
	}
}

void mcast_free(struct sm *sm)
{
	struct sm_mcast *mc = &sm->mc;
	mcast_stop(sm);
	for (uint32_t i = 0; i < mc->nmlid; i++)
		free(mc->mlid[i].ports);
	free(mc->mlid);
	free(mc->dirty);
	routing_hops_free(&mc->hops);
	memset(mc, 0, sizeof(*mc));
}

uint32_t sm_mcast_cap(const struct sm *sm)
{
	const struct topo *t = &sm->topo;
	uint32_t cap = SM_MLID_MAX;
	bool any = false;
	for (uint32_t s = 0; s < t->nsws; s++) {
		const struct topo_switch *sw = &t->sws[s];
		if (!t->nodes[sw->node].present)
			continue;
		any = true;
		if (sw->si.multicast_fdb_cap < cap)
			cap = sw->si.multicast_fdb_cap;
	}
	return any ? cap : SM_MLID_MAX; /* no switch: nothing to program, any MLID will do */
}

int sm_mcast_set(struct sm *sm, uint16_t mlid, const uint32_t *ports, uint32_t n)
{
	struct sm_mcast *mc = &sm->mc;
	if (mlid < SM_MLID_BASE || mlid - SM_MLID_BASE >= SM_MLID_MAX)
		return -1;
	uint32_t i = mlid - SM_MLID_BASE;
	if (i >= mc->nmlid) {
		uint32_t cap_m = mc->nmlid, cap_d = mc->nmlid;
		int rm = array_reserve(&mc->mlid, &cap_m, i + 1ull);
		int rd = array_reserve(&mc->dirty, &cap_d, i + 1ull);
		mc->nmlid = cap_m < cap_d ? cap_m : cap_d; /* both hold at least this many */
		if (rm < 0 || rd < 0)
			return -1;
	}
	struct sm_mlid *m = &mc->mlid[i];
	if (n > m->cap) {
		uint32_t *np = realloc(m->ports, sizeof(*np) * n);
		if (!np)
			return -1;
		m->ports = np;
		m->cap = n;
	}
	if (n)
		memcpy(m->ports, ports, sizeof(*ports) * n);
	m->n = n;
	mc->dirty[i] = true;
	mc->any_dirty = true;
	if (sm->loop && !ev_is_active(&mc->timer)) {
		ev_timer_set(&mc->timer, 0., 0.);
		ev_timer_start(sm->loop, &mc->timer);
	}
	return 0;
}

void mcast_topology_changed(struct sm *sm)
{
	struct sm_mcast *mc = &sm->mc;
	mc->dist_valid = false;
	for (uint32_t i = 0; i < mc->nmlid; i++)
		if (mc->mlid[i].n)
			mc->dirty[i] = true;
	/* and a look at every block: a switch back after an absence has them unknown */
	mc->any_dirty = mc->nmlid > 0;
}

/* Make the switch's MFT arrays cover MLID index i. */
static int mft_cover(struct sm *sm, struct topo_switch *sw, uint32_t i)
{
	if (i < sw->mft_mlids)
		return 0;
	const struct topo_node *node = &sm->topo.nodes[sw->node];
	uint8_t pos = (uint8_t)((node->nports + 1 + 15) / 16);
	uint32_t n = (i / 32 + 1) * 32;
	if (n < 64)
		n = 64;
	size_t old = (size_t)sw->mft_mlids * pos, now = (size_t)n * pos;
	uint16_t *a = realloc(sw->mft, now * sizeof(uint16_t));
	if (!a)
		return -1;
	sw->mft = a;
	uint16_t *b = realloc(sw->mft_hw, now * sizeof(uint16_t));
	if (!b)
		return -1;
	sw->mft_hw = b;
	bool *k = realloc(sw->mft_known, n / 32);
	if (!k)
		return -1;
	sw->mft_known = k;
	uint8_t *f = realloc(sw->mft_sets, n / 32);
	if (!f)
		return -1;
	sw->mft_sets = f;
	memset(a + old, 0, (now - old) * sizeof(uint16_t));
	memset(b + old, 0, (now - old) * sizeof(uint16_t));
	memset(k + sw->mft_mlids / 32, 0, n / 32 - sw->mft_mlids / 32);
	memset(f + sw->mft_mlids / 32, 0, n / 32 - sw->mft_mlids / 32);
	sw->mft_mlids = n;
	sw->mft_pos = pos;
	return 0;
}

static void set_bit(struct sm *sm, uint32_t s, uint32_t i, unsigned num)
{
	struct topo_switch *sw = &sm->topo.sws[s];
	if (mft_cover(sm, sw, i) < 0 || num / 16 >= sw->mft_pos)
		return;
	sw->mft[(size_t)i * sw->mft_pos + num / 16] |= (uint16_t)(1u << (num % 16));
}

/* Scratch for tree building, sized to the switches. */
struct tree_scratch {
	uint32_t *members; /* member switches of the MLID under work */
	uint8_t *is_member;
	uint8_t *up_port; /* the tree: each switch's port towards its parent */
};

/* Recompute MLID index i: clear it on every switch, then set the tree's bits. */
static void build_tree(struct sm *sm, uint32_t i, struct tree_scratch *ts)
{
	struct topo *t = &sm->topo;
	const struct sm_mlid *m = &sm->mc.mlid[i];
	for (uint32_t s = 0; s < t->nsws; s++) {
		struct topo_switch *sw = &t->sws[s];
		if (i < sw->mft_mlids)
			memset(sw->mft + (size_t)i * sw->mft_pos, 0,
			       sw->mft_pos * sizeof(uint16_t));
	}
	/* member switches, and the member ports' bits on them */
	uint32_t nms = 0;
	for (uint32_t k = 0; k < m->n; k++) {
		uint32_t p = m->ports[k];
		if (p >= t->nports || !t->nodes[t->ports[p].node].present)
			continue;
		uint32_t s;
		unsigned bit;
		if (topo_is_switch(t, t->ports[p].node)) {
			s = t->nodes[t->ports[p].node].sw; /* the switch itself joined: port 0 */
			bit = 0;
		} else {
			uint32_t peer = t->ports[p].peer;
			if (peer == TOPO_NONE || !topo_port_up(&t->ports[p]) ||
			    !topo_is_switch(t, t->ports[peer].node))
				continue; /* not attached (or CA to CA): nothing to forward */
			s = t->nodes[t->ports[peer].node].sw;
			bit = t->ports[peer].num;
		}
		set_bit(sm, s, i, bit);
		if (!ts->is_member[s]) {
			ts->is_member[s] = 1;
			ts->members[nms++] = s;
		}
	}
	for (uint32_t k = 0; k < nms; k++)
		ts->is_member[ts->members[k]] = 0;
	if (nms <= 1 || sm->rctx.nsw != t->nsws)
		return; /* one switch (or none) delivers everything by itself */
	if (routing_mcast_tree(sm->engine, sm->engine_state, &sm->rctx, &sm->mc.hops, ts->members,
	                       nms, ts->up_port) < 0) {
		log_warn(sm->log, "mcast", "MLID 0x%04x: no tree joins its %u switches",
		         SM_MLID_BASE + i, nms);
		return;
	}
	/* each tree edge: the child's port up, the parent's port down */
	for (uint32_t s = 0; s < t->nsws; s++) {
		uint8_t up = ts->up_port[s];
		if (up == RT_NO_PORT || up == 0)
			continue;
		uint32_t p = topo_port(t, t->sws[s].node, up);
		uint32_t peer = p == TOPO_NONE ? TOPO_NONE : t->ports[p].peer;
		if (peer == TOPO_NONE || !topo_is_switch(t, t->ports[peer].node))
			continue; /* an engine's tree over a port that leads nowhere */
		set_bit(sm, s, i, up);
		set_bit(sm, t->nodes[t->ports[peer].node].sw, i, t->ports[peer].num);
	}
}

/* Block b's MLIDs are looked at again in a moment. */
static void block_again(struct sm *sm, uint32_t b)
{
	struct sm_mcast *mc = &sm->mc;
	for (uint32_t j = b * 32; j < b * 32 + 32 && j < mc->nmlid; j++)
		mc->dirty[j] = mc->any_dirty = true;
	if (sm->loop && !sm->stopped && !ev_is_active(&mc->timer)) {
		ev_timer_set(&mc->timer, 0., 0.);
		ev_timer_start(sm->loop, &mc->timer);
	}
}

/* Blocks the switches may not hold as sent go again (mcast_retry_cb). */
static void retry_later(struct sm *sm)
{
	struct sm_mcast *mc = &sm->mc;
	if (sm->loop && !sm->stopped && !ev_is_active(&mc->retry)) {
		ev_timer_set(&mc->retry, 1., 0.);
		ev_timer_start(sm->loop, &mc->retry);
	}
}

static bool all_known(const struct topo_switch *sw)
{
	for (uint32_t b = 0; b < sw->mft_mlids / 32; b++)
		if (!sw->mft_known[b])
			return false;
	return true;
}

static void on_mft_done(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                        void *ctx)
{
	(void)res;
	const uint32_t *ref = ctx; /* node, block, position */
	const struct topo *t = &sm->topo;
	uint32_t s = t->nodes[ref[0]].sw;
	struct topo_switch *sw =
	    s != TOPO_NONE && s < t->nsws && ref[1] < t->sws[s].mft_mlids / 32 ? &t->sws[s] : NULL;
	bool ok = smp && !smp->dr_status;
	if (!ok) {
		char name[160];
		log_rl(sm->log, &sm->rl_refused, LOGL_WARN, "mcast",
		       "%s: MFT block %u position %u %s; it is sent again later",
		       sm_node_name(sm, ref[0], name, sizeof(name)), ref[1], ref[2],
		       smp ? mad_status_str(smp->dr_status) : "got no answer");
	}
	if (!sw)
		return;
	if (!ok) {
		sw->mft_known[ref[1]] = false;
		if (!sw->mft_wait) { /* once a round: its other Sets fail with it */
			if (sw->mft_fails < 7)
				sw->mft_fails++;
			sw->mft_wait = (uint8_t)(1u << (sw->mft_fails - 1));
		}
	} else if (!sw->mft_wait && all_known(sw)) {
		sw->mft_fails = 0;
	}
	if (!sw->mft_sets[ref[1]] || --sw->mft_sets[ref[1]])
		return;
	/* the block's last Set is done: what changed while it was out goes now; a block not
	 * known goes with the retry */
	size_t at = (size_t)ref[1] * 32 * sw->mft_pos, len = (size_t)32 * sw->mft_pos;
	if (!sw->mft_known[ref[1]])
		retry_later(sm);
	else if (memcmp(sw->mft + at, sw->mft_hw + at, len * sizeof(uint16_t)))
		block_again(sm, ref[1]);
}

/* Send block b of a switch if it differs from what the switch holds, or what it holds is not
 * known (all positions: a position we never wrote may hold a stale mask from an earlier SM,
 * a Set that got no answer may have been taken). Not while the block's last Sets are out:
 * their completion sends it. */
static void send_block(struct sm *sm, struct topo_switch *sw, uint32_t b)
{
	size_t at = (size_t)b * 32 * sw->mft_pos, len = (size_t)32 * sw->mft_pos;
	if (sw->mft_sets[b] ||
	    (sw->mft_known[b] && !memcmp(sw->mft + at, sw->mft_hw + at, len * sizeof(uint16_t))))
		return;
	if (sw->mft_wait) { /* its Sets have been failing: the retry sends it, not a join */
		sw->mft_known[b] = false;
		return;
	}
	bool unsent = false;
	for (unsigned pos = 0; pos < sw->mft_pos; pos++) {
		struct mad_mft_block blk;
		for (unsigned j = 0; j < 32; j++)
			blk.mask[j] = sw->mft[((size_t)b * 32 + j) * sw->mft_pos + pos];
		uint8_t data[64] = {0};
		mad_mft_block_encode(&blk, data, sizeof(data), NULL);
		uint32_t ref[3] = {sw->node, b, pos};
		sw->mft_sets[b]++;
		if (sm_send_dr(sm, sw->node, NULL, 0, MAD_METHOD_SET, MAD_ATTR_MFT,
		               ((uint32_t)pos << 28) | b, data, sizeof(data), on_mft_done, ref,
		               sizeof(ref)) < 0) {
			sw->mft_sets[b]--; /* not sent (logged): the block is not known */
			unsent = true;
			continue;
		}
		sm->mc.blocks_sent++;
	}
	/* taken as done now, so that a later batch compares with what is on its way; a
	 * failure marks the block unknown and it goes again */
	memcpy(sw->mft_hw + at, sw->mft + at, len * sizeof(uint16_t));
	sw->mft_known[b] = !unsent;
	if (unsent)
		retry_later(sm);
}

void mcast_program(struct sm *sm)
{
	struct sm_mcast *mc = &sm->mc;
	struct topo *t = &sm->topo;
	if (!mc->any_dirty || !t->nsws)
		return;
	if (sm->state != SM_STATE_MASTER)
		return; /* a standby's trees wait (a handed-over SM forgets its groups) */
	if (sm->rctx.nsw != t->nsws)
		return; /* not routed yet: the sweep's programming phase comes back here */
	if ((!mc->dist_valid || mc->hops.n != t->nsws)) {
		if (routing_hops_build(&sm->rctx, &mc->hops) < 0) {
			log_err(sm->log, "mcast",
			        "out of memory for switch distances; MFTs not updated");
			return;
		}
		mc->dist_valid = true;
	}
	struct tree_scratch ts = {
	    .up_port = malloc(t->nsws),
	    .members = malloc(sizeof(uint32_t) * t->nsws),
	    .is_member = calloc(t->nsws, 1),
	};
	if (!ts.up_port || !ts.members || !ts.is_member) {
		log_err(sm->log, "mcast", "out of memory building multicast trees");
		goto out;
	}
	uint32_t used = (mc->nmlid + 31) / 32; /* blocks of MLIDs in use */
	bool touched[(SM_MLID_MAX + 31) / 32] = {false};
	for (uint32_t i = 0; i < mc->nmlid; i++) {
		if (!mc->dirty[i])
			continue;
		build_tree(sm, i, &ts);
		touched[i / 32] = true;
	}
	for (uint32_t s = 0; s < t->nsws; s++) {
		struct topo_switch *sw = &t->sws[s];
		/* on every switch (one in no tree may hold bits from an earlier SM or group) the
		 * blocks touched and those not known (a switch back after an absence may hold
		 * bits of a group that left meanwhile), as far as it has room */
		uint32_t cap = (sw->si.multicast_fdb_cap + 31u) / 32u;
		uint32_t end = used < cap ? used : cap;
		if (!t->nodes[sw->node].present || !end || mft_cover(sm, sw, end * 32 - 1) < 0)
			continue;
		for (uint32_t b = 0; b < end; b++)
			if (touched[b] || !sw->mft_known[b])
				send_block(sm, sw, b);
	}
	memset(mc->dirty, 0, mc->nmlid);
	mc->any_dirty = false;
out:
	free(ts.up_port);
	free(ts.members);
	free(ts.is_member);
}

static void mcast_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sm *sm = w->data;
	if (sm->busy)
		return; /* the sweep programs them when it is done (mcast_sweep_done) */
	sm->detached++; /* no sweep's phase waits for these */
	mcast_program(sm);
	sm->detached--;
}

void mcast_became_master(struct sm *sm)
{
	struct topo *t = &sm->topo;
	for (uint32_t s = 0; s < t->nsws; s++) {
		struct topo_switch *sw = &t->sws[s];
		if (sw->mft_known)
			memset(sw->mft_known, 0, sw->mft_mlids / 32);
		sw->mft_fails = sw->mft_wait = 0;
	}
	mcast_topology_changed(sm);
}

void mcast_sweep_done(struct sm *sm)
{
	sm->detached++;
	mcast_program(sm);
	sm->detached--;
}

/* The blocks not known to hold what was sent, and not under way, again (mcast_program sends
 * them as they are now wanted); a switch whose Sets keep failing less often. */
static void mcast_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sm *sm = w->data;
	if (sm->state != SM_STATE_MASTER || sm->dry_run)
		return; /* a standby sends nothing; a new master sends them all */
	if (sm->busy) {
		retry_later(sm); /* not inside a sweep's phases */
		return;
	}
	struct topo *t = &sm->topo;
	/* switches still waiting: the timer goes on while any does, present or not (one that
	 * was away when its count was taken down would otherwise wait forever, its MFT never
	 * sent again: seen after a soak, a reset spine's trees broken for minutes) */
	bool left = false;
	for (uint32_t s = 0; s < t->nsws; s++) {
		struct topo_switch *sw = &t->sws[s];
		if (sw->mft_wait && --sw->mft_wait)
			left = true;
	}
	sm->mc.any_dirty = true;
	sm->detached++;
	mcast_program(sm);
	sm->detached--;
	if (left)
		retry_later(sm);
}
