/* Multicast forwarding: a spanning tree per multicast LID over the switches, and the MFT
 * blocks that make the switches follow it.
 *
 * The SA decides which ports a multicast LID must reach (its group's members); this file
 * turns that into port masks. Each MLID gets its own tree, rooted at the switch closest (in
 * the worst case) to the member switches, so that groups spread over different roots rather
 * than all crossing one. The tree is a breadth-first tree from that root, pruned to the
 * branches that lead to members: one path between any two members, hence no copies twice
 * and no loops. Changes are batched: many joins in one turn of the event loop cost one
 * recomputation of the MLIDs they touch, and only MFT blocks that differ from what the
 * switch holds are sent. */
#include <stdlib.h>
#include <string.h>

#include "sm/sm_int.h"

#define DIST_INF 0xff

static void mcast_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);

void mcast_init(struct sm *sm)
{
	ev_timer_init(&sm->mc.timer, mcast_timer_cb, 0., 0.);
	sm->mc.timer.data = sm;
}

void mcast_stop(struct sm *sm)
{
	if (sm->loop)
		ev_timer_stop(sm->loop, &sm->mc.timer);
}

void mcast_free(struct sm *sm)
{
	struct sm_mcast *mc = &sm->mc;
	if (sm->loop)
		ev_timer_stop(sm->loop, &mc->timer);
	for (uint32_t i = 0; i < mc->nmlid; i++)
		free(mc->mlid[i].ports);
	free(mc->mlid);
	free(mc->dirty);
	free(mc->dist);
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
		uint32_t ncap = mc->nmlid ? mc->nmlid : 64;
		while (ncap <= i)
			ncap *= 2;
		struct sm_mlid *nm = realloc(mc->mlid, sizeof(*nm) * ncap);
		if (!nm)
			return -1;
		mc->mlid = nm;
		bool *nd = realloc(mc->dirty, ncap);
		if (!nd)
			return -1;
		mc->dirty = nd;
		memset(mc->mlid + mc->nmlid, 0, sizeof(*nm) * (ncap - mc->nmlid));
		memset(mc->dirty + mc->nmlid, 0, ncap - mc->nmlid);
		mc->nmlid = ncap;
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
			mc->dirty[i] = mc->any_dirty = true;
}

/* The switch at the far end of a switch port, or TOPO_NONE (CA, down, absent). */
static uint32_t neighbor_switch(const struct topo *t, uint32_t p)
{
	const struct topo_port *port = &t->ports[p];
	if (port->peer == TOPO_NONE || !topo_port_up(port))
		return TOPO_NONE;
	uint32_t pn = t->ports[port->peer].node;
	if (!topo_is_switch(t, pn) || !t->nodes[pn].present)
		return TOPO_NONE;
	return t->nodes[pn].sw;
}

/* Hops between every pair of switches, by a breadth-first search from each. */
static int compute_dist(struct sm *sm)
{
	struct sm_mcast *mc = &sm->mc;
	const struct topo *t = &sm->topo;
	uint32_t n = t->nsws;
	uint8_t *d = realloc(mc->dist, (size_t)n * n + 1);
	uint32_t *q = malloc(sizeof(uint32_t) * (n + 1));
	if (!d || !q) {
		free(q);
		if (d)
			mc->dist = d;
		return -1;
	}
	mc->dist = d;
	memset(d, DIST_INF, (size_t)n * n);
	for (uint32_t r = 0; r < n; r++) {
		if (!t->nodes[t->sws[r].node].present)
			continue;
		uint8_t *row = d + (size_t)r * n;
		uint32_t head = 0, tail = 0;
		row[r] = 0;
		q[tail++] = r;
		while (head < tail) {
			uint32_t s = q[head++];
			const struct topo_node *node = &t->nodes[t->sws[s].node];
			for (unsigned k = 1; k <= node->nports; k++) {
				uint32_t s2 = neighbor_switch(t, node->first_port + k);
				if (s2 == TOPO_NONE || row[s2] != DIST_INF)
					continue;
				row[s2] =
				    row[s] >= DIST_INF - 1 ? DIST_INF - 1 : (uint8_t)(row[s] + 1);
				q[tail++] = s2;
			}
		}
	}
	free(q);
	mc->dist_n = n;
	mc->dist_valid = true;
	return 0;
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
	memset(a + old, 0, (now - old) * sizeof(uint16_t));
	memset(b + old, 0, (now - old) * sizeof(uint16_t));
	memset(k + sw->mft_mlids / 32, 0, n / 32 - sw->mft_mlids / 32);
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
	uint32_t *queue, *up_port; /* up_port: the port of a switch towards the root */
	uint32_t *mark;            /* generation stamps: reached by BFS / in the tree */
	uint32_t *members;         /* member switches of the MLID under work */
	uint8_t *is_member;
	uint32_t gen;
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
	if (nms <= 1) {
		for (uint32_t k = 0; k < nms; k++)
			ts->is_member[ts->members[k]] = 0;
		return; /* one switch (or none) delivers everything by itself */
	}
	/* root: the switch with the shortest longest distance to a member switch */
	uint32_t root = TOPO_NONE;
	unsigned best = DIST_INF + 1u;
	for (uint32_t r = 0; r < t->nsws; r++) {
		if (!t->nodes[t->sws[r].node].present)
			continue;
		const uint8_t *row = sm->mc.dist + (size_t)r * sm->mc.dist_n;
		unsigned worst = 0;
		for (uint32_t k = 0; k < nms && worst < best; k++)
			if (row[ts->members[k]] > worst)
				worst = row[ts->members[k]];
		if (worst < best) {
			best = worst;
			root = r;
		}
	}
	/* breadth-first tree from the root */
	uint32_t g = ++ts->gen;
	uint32_t head = 0, tail = 0;
	ts->queue[tail++] = root;
	ts->mark[root] = g;
	ts->up_port[root] = TOPO_NONE;
	while (head < tail) {
		uint32_t s = ts->queue[head++];
		const struct topo_node *node = &t->nodes[t->sws[s].node];
		for (unsigned k = 1; k <= node->nports; k++) {
			uint32_t p = node->first_port + k;
			uint32_t s2 = neighbor_switch(t, p);
			if (s2 == TOPO_NONE || ts->mark[s2] == g)
				continue;
			ts->mark[s2] = g;
			ts->up_port[s2] = t->ports[p].peer;
			ts->queue[tail++] = s2;
		}
	}
	/* each member switch's branch up to the root, until it meets the tree */
	uint32_t in_tree = ++ts->gen;
	ts->mark[root] = in_tree;
	for (uint32_t k = 0; k < nms; k++) {
		uint32_t s = ts->members[k];
		ts->is_member[s] = 0;
		if (ts->mark[s] != g && ts->mark[s] != in_tree)
			continue; /* cut off from the root: unreachable */
		while (ts->mark[s] != in_tree) {
			ts->mark[s] = in_tree;
			uint32_t up = ts->up_port[s];
			uint32_t peer = t->ports[up].peer;
			uint32_t ps = t->nodes[t->ports[peer].node].sw;
			set_bit(sm, s, i, t->ports[up].num);
			set_bit(sm, ps, i, t->ports[peer].num);
			s = ps;
		}
	}
}

static void on_mft_done(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                        void *ctx)
{
	(void)res;
	const uint32_t *ref = ctx; /* node, block, position */
	if (smp && !smp->dr_status)
		return;
	char name[160];
	log_warn(sm->log, "mcast", "%s: MFT block %u position %u %s; it is sent again later",
	         sm_node_name(sm, ref[0], name, sizeof(name)), ref[1], ref[2],
	         smp ? mad_status_str(smp->dr_status) : "got no answer");
	const struct topo *t = &sm->topo;
	uint32_t s = t->nodes[ref[0]].sw;
	if (s != TOPO_NONE && s < t->nsws && ref[1] < t->sws[s].mft_mlids / 32)
		t->sws[s].mft_known[ref[1]] = false;
	sm->mc.failed = true;
}

/* Send block b of a switch if it differs from what the switch holds (all positions: a
 * position we never wrote may hold a stale mask from an earlier SM). */
static void send_block(struct sm *sm, struct topo_switch *sw, uint32_t b)
{
	size_t at = (size_t)b * 32 * sw->mft_pos, len = (size_t)32 * sw->mft_pos;
	bool any = false;
	for (size_t j = 0; j < len && !any; j++)
		any = sw->mft[at + j] != 0;
	if (sw->mft_known[b] ? !memcmp(sw->mft + at, sw->mft_hw + at, len * sizeof(uint16_t))
	                     : !any)
		return;
	for (unsigned pos = 0; pos < sw->mft_pos; pos++) {
		struct mad_mft_block blk;
		for (unsigned j = 0; j < 32; j++)
			blk.mask[j] = sw->mft[((size_t)b * 32 + j) * sw->mft_pos + pos];
		uint8_t data[64] = {0};
		mad_mft_block_encode(&blk, data, sizeof(data), NULL);
		uint32_t ref[3] = {sw->node, b, pos};
		sm_send_dr(sm, sw->node, NULL, 0, MAD_METHOD_SET, MAD_ATTR_MFT,
		           ((uint32_t)pos << 28) | b, data, sizeof(data), on_mft_done, ref,
		           sizeof(ref));
		sm->mc.blocks_sent++;
	}
	/* taken as done now, so that a later batch compares with what is on its way; a
	 * failure marks the block unknown and it goes again */
	memcpy(sw->mft_hw + at, sw->mft + at, len * sizeof(uint16_t));
	sw->mft_known[b] = true;
}

void mcast_program(struct sm *sm)
{
	struct sm_mcast *mc = &sm->mc;
	struct topo *t = &sm->topo;
	if (mc->failed) { /* blocks that failed before: look at every MLID again */
		mc->failed = false;
		for (uint32_t i = 0; i < mc->nmlid; i++)
			mc->dirty[i] = true;
		mc->any_dirty = true;
	}
	if (!mc->any_dirty || !t->nsws)
		return;
	if ((!mc->dist_valid || mc->dist_n != t->nsws) && compute_dist(sm) < 0) {
		log_err(sm->log, "mcast", "out of memory for switch distances; MFTs not updated");
		return;
	}
	struct tree_scratch ts = {
	    .queue = malloc(sizeof(uint32_t) * t->nsws),
	    .up_port = malloc(sizeof(uint32_t) * t->nsws),
	    .mark = calloc(t->nsws, sizeof(uint32_t)),
	    .members = malloc(sizeof(uint32_t) * t->nsws),
	    .is_member = calloc(t->nsws, 1),
	};
	if (!ts.queue || !ts.up_port || !ts.mark || !ts.members || !ts.is_member) {
		log_err(sm->log, "mcast", "out of memory building multicast trees");
		goto out;
	}
	uint32_t top = 0; /* blocks touched */
	for (uint32_t i = 0; i < mc->nmlid; i++) {
		if (!mc->dirty[i])
			continue;
		build_tree(sm, i, &ts);
		top = i / 32 + 1;
	}
	for (uint32_t s = 0; s < t->nsws; s++) {
		struct topo_switch *sw = &t->sws[s];
		if (!t->nodes[sw->node].present || !sw->mft)
			continue;
		for (uint32_t b = 0; b < top && b < sw->mft_mlids / 32; b++) {
			bool touched = false;
			for (uint32_t j = b * 32; j < b * 32 + 32 && j < mc->nmlid && !touched; j++)
				touched = mc->dirty[j];
			if (touched)
				send_block(sm, sw, b);
		}
	}
	memset(mc->dirty, 0, mc->nmlid);
	mc->any_dirty = false;
out:
	free(ts.queue);
	free(ts.up_port);
	free(ts.mark);
	free(ts.members);
	free(ts.is_member);
}

static void mcast_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sm *sm = w->data;
	if (sm->busy)
		return; /* the sweep programs them when it is done */
	mcast_program(sm);
}
