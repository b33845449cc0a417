/* Link health: a link that goes up and down too often (a bad cable) makes every other port
 * pay: each transition is a trap, a sweep and routes moved off and back on. A port that
 * floods the SM with traps about itself (a babbling port) costs the SM and every subscriber
 * the traps are reported to. After link_flap_threshold transitions, or trap_flood_threshold
 * traps, within link_flap_window seconds, the SM disables the link at its end nearer the
 * SM (PortInfo:PortPhysicalState = Disabled), says so once with the count, and enables it
 * again (Polling) after link_flap_hold seconds, or when told (ibsa release). Meanwhile
 * routes keep off it and the rest of the fabric is not disturbed by it. As OpenSM's
 * babbling port policy, and opa-fm's flapping ports.
 *
 * Kept per port index in one flat array: the link's lower port index holds its record. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sm/sm_int.h"
#include "util/vec.h"

static int health_grow(struct sm_health *h, uint32_t nports)
{
	return array_reserve(&h->links, &h->cap, nports);
}

static void arm_release(struct sm *sm)
{
	struct sm_health *h = &sm->health;
	double next = 0;
	for (uint32_t i = 0; i < h->nheld; i++)
		if (!next || h->links[h->held[i]].until < next)
			next = h->links[h->held[i]].until;
	ev_timer_stop(sm->loop, &h->timer);
	if (next) {
		double in = next - ev_now(sm->loop);
		ev_timer_set(&h->timer, in > 0 ? in : 0, 0.);
		ev_timer_start(sm->loop, &h->timer);
	}
}

static void release(struct sm *sm, uint32_t i, const char *why)
{
	struct sm_health *h = &sm->health;
	uint32_t key = h->held[i];
	uint32_t p = h->links[key].near;
	h->held[i] = h->held[--h->nheld];
	h->links[key].until = 0;
	h->links[key].count = h->links[key].traps = 0;
	h->links[key].start = h->links[key].trap_start = ev_now(sm->loop);
	char name[160];
	log_notice(sm->log, "health", "%s port %u enabled again (%s)",
	           sm_node_name(sm, sm->topo.ports[p].node, name, sizeof(name)),
	           sm->topo.ports[p].num, why);
	program_port_phys(sm, p, PHYS_STATE_POLLING);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sm *sm = w->data;
	struct sm_health *h = &sm->health;
	double now = ev_now(sm->loop);
	for (uint32_t i = 0; i < h->nheld;) {
		if (h->links[h->held[i]].until <= now)
			release(sm, i, "its hold time is over");
		else
			i++;
	}
	arm_release(sm);
}

static void settle_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);

void health_init(struct sm *sm)
{
	ev_init(&sm->health.timer, timer_cb);
	sm->health.timer.data = sm;
	ev_init(&sm->health.settle_timer, settle_timer_cb);
	sm->health.settle_timer.data = sm;
}

void health_free(struct sm *sm)
{
	struct sm_health *h = &sm->health;
	if (sm->loop) {
		ev_timer_stop(sm->loop, &h->timer);
		ev_timer_stop(sm->loop, &h->settle_timer);
	}
	free(h->links);
	free(h->held);
	free(h->settling);
	memset(h, 0, sizeof(*h));
}

/* Quarantine the link whose record is key: near is its port the SM reaches without
 * crossing it. what: "went up or down" or "sent traps". */
static void quarantine(struct sm *sm, uint32_t key, uint32_t near, uint32_t far, const char *what,
                       const char *count_key, unsigned count, double since)
{
	const struct ibsmd_config *cfg = sm->cfg;
	struct sm_health *h = &sm->health;
	double now = ev_now(sm->loop);
	if (array_reserve(&h->held, &h->held_cap, h->nheld + 1ull) < 0)
		return;
	h->held[h->nheld++] = key;
	h->links[key].near = near;
	h->links[key].until = now + cfg->link_flap_hold_s;
	char name[160], peer[160], g[20], pn[4], cnt[12];
	const struct topo_port *np = &sm->topo.ports[near], *fp = &sm->topo.ports[far];
	snprintf(g, sizeof(g), "0x%016" PRIx64, sm->topo.nodes[np->node].guid);
	snprintf(pn, sizeof(pn), "%u", np->num);
	snprintf(cnt, sizeof(cnt), "%u", count);
	const char *kv[] = {"node_guid", g, "port", pn, count_key, cnt, NULL};
	sm_event(sm, LOGL_WARN, "link_quarantined", kv,
	         "link %s port %u - %s port %u %s %u times in %u s: disabled for %u s (%s), or "
	         "until ibsa release",
	         sm_node_name(sm, np->node, name, sizeof(name)), np->num,
	         sm_node_name(sm, fp->node, peer, sizeof(peer)), fp->num, what, count,
	         (unsigned)(now - since + 0.5), cfg->link_flap_hold_s,
	         strcmp(count_key, "traps") ? "link_flap_threshold" : "trap_flood_threshold");
	program_port_phys(sm, near, PHYS_STATE_DISABLED);
	arm_release(sm);
}

/* ---- links held out of routing until ACTIVE and settled ----
 * A link that comes up is INIT: a route moved onto it before its ports are ACTIVE drops
 * every packet sent that way until they are (2,052 pairs for about 60 ms on a 2,592-host
 * tree when routes moved at once). So the SM activates it in one pass and moves routes onto
 * it in the next. A link that went down twice within link_flap_window waits also
 * link_settle_time seconds of staying up: a flapping link then pulls no routes onto itself
 * only to break them again at its next transition. */

static void settle_unhold(struct sm *sm, uint32_t i)
{
	struct sm_health *h = &sm->health;
	uint32_t key = h->settling[i];
	struct sm_link_health *l = &h->links[key];
	sm->topo.ports[key].unrouted = false;
	sm->topo.ports[l->other].unrouted = false;
	l->settling = false;
	h->settling[i] = h->settling[--h->nsettling];
}

static bool settle_hold(struct sm *sm, uint32_t key, uint32_t other)
{
	struct sm_health *h = &sm->health;
	struct sm_link_health *l = &h->links[key];
	double now = ev_now(sm->loop);
	if (!l->settling) {
		if (array_reserve(&h->settling, &h->settling_cap, h->nsettling + 1ull) < 0)
			return false;
		h->settling[h->nsettling++] = key;
		l->settling = true;
	}
	l->other = other;
	sm->topo.ports[key].unrouted = sm->topo.ports[other].unrouted = true;
	/* twice down within the window: it flaps (once is a reset or a cable put back) */
	l->settle_until = l->prev_down_at && now - l->prev_down_at < sm->cfg->link_flap_window_s
	                      ? now + sm->cfg->link_settle_s
	                      : 0;
	return true;
}

void health_settle_forget(struct sm *sm)
{
	struct sm_health *h = &sm->health;
	while (h->nsettling)
		settle_unhold(sm, h->nsettling - 1);
	ev_timer_stop(sm->loop, &h->settle_timer);
}

void health_settle_check(struct sm *sm)
{
	struct sm_health *h = &sm->health;
	const struct topo *t = &sm->topo;
	double now = ev_now(sm->loop), next = 0;
	uint32_t nodes[64], n = 0, released = 0;
	for (uint32_t i = 0; i < h->nsettling;) {
		uint32_t key = h->settling[i];
		const struct sm_link_health *l = &h->links[key];
		const struct topo_port *a = &t->ports[key], *b = &t->ports[l->other];
		if (a->peer != l->other) {
			settle_unhold(sm, i); /* gone again, or found otherwise by a full sweep */
			continue;
		}
		bool active =
		    a->pi.port_state == PORT_STATE_ACTIVE && b->pi.port_state == PORT_STATE_ACTIVE;
		if (active && l->settle_until <= now) {
			if (n + 2 <= sizeof(nodes) / sizeof(nodes[0])) {
				nodes[n++] = a->node;
				nodes[n++] = b->node;
			}
			uint32_t *w = vec_push(&sm->rejoin_nodes);
			if (w)
				*w = a->node;
			if ((w = vec_push(&sm->rejoin_nodes)))
				*w = b->node;
			settle_unhold(sm, i);
			released++;
			continue;
		}
		if (l->settle_until > now && (!next || l->settle_until < next))
			next = l->settle_until;
		i++;
	}
	ev_timer_stop(sm->loop, &h->settle_timer);
	if (next) {
		ev_timer_set(&h->settle_timer, next - now, 0.);
		ev_timer_start(sm->loop, &h->settle_timer);
	}
	if (!released)
		return;
	log_notice(sm->log, "health", "%u link(s) ACTIVE%s: routes move onto them", released,
	           sm->cfg->link_settle_s ? " and settled" : "");
	sm->rejoin = true;
	sm_request_sweep(sm, nodes, n);
}

/* The switches the SM reaches over the links routing may use (BFS, queue as scratch). */
static uint32_t reach(const struct topo *t, uint8_t *seen, uint32_t *queue)
{
	memset(seen, 0, t->nsws);
	uint32_t start = t->sm_node;
	if (start != TOPO_NONE && !topo_is_switch(t, start)) {
		uint32_t peer = t->ports[t->sm_port].peer;
		start = peer == TOPO_NONE ? TOPO_NONE : t->ports[peer].node;
	}
	if (start == TOPO_NONE || !topo_is_switch(t, start))
		return 0;
	uint32_t head = 0, tail = 0;
	seen[t->nodes[start].sw] = 1;
	queue[tail++] = t->nodes[start].sw;
	while (head < tail) {
		const struct topo_node *n = &t->nodes[t->sws[queue[head++]].node];
		for (unsigned p = 1; p <= n->nports; p++) {
			const struct topo_port *a = &t->ports[n->first_port + p];
			if (a->peer == TOPO_NONE || a->unrouted || t->ports[a->peer].unrouted)
				continue;
			uint32_t pn = t->ports[a->peer].node;
			if (!topo_is_switch(t, pn) || seen[t->nodes[pn].sw])
				continue;
			seen[t->nodes[pn].sw] = 1;
			queue[tail++] = t->nodes[pn].sw;
		}
	}
	return tail;
}

void health_hold_check(struct sm *sm)
{
	struct sm_health *h = &sm->health;
	struct topo *t = &sm->topo;
	/* once the subnet is up, routes cross only ACTIVE links between switches: those a
	 * light sweep found come up are held already; these are the others (found by a full
	 * sweep, or whose activation failed) */
	if (sm->up && health_grow(h, t->nports) == 0) {
		for (uint32_t s = 0; s < t->nsws; s++) {
			const struct topo_node *n = &t->nodes[t->sws[s].node];
			if (!n->present)
				continue;
			for (unsigned p = 1; p <= n->nports; p++) {
				uint32_t a = n->first_port + p, b = t->ports[a].peer;
				if (b == TOPO_NONE || b < a ||
				    !topo_is_switch(t, t->ports[b].node) || h->links[a].settling)
					continue;
				if (t->ports[a].pi.port_state != PORT_STATE_ACTIVE ||
				    t->ports[b].pi.port_state != PORT_STATE_ACTIVE)
					settle_hold(sm, a, b);
			}
		}
	}
	if (!h->nsettling)
		return;
	uint8_t *seen = malloc(t->nsws + 1u);
	uint32_t *queue = malloc(sizeof(uint32_t) * (t->nsws + 1u));
	if (!seen || !queue) {
		health_settle_forget(sm); /* out of memory: route over everything */
		goto out;
	}
	for (;;) {
		reach(t, seen, queue);
		bool let_in = false;
		for (uint32_t i = 0; i < h->nsettling; i++) {
			uint32_t key = h->settling[i];
			struct topo_port *a = &t->ports[key], *b = &t->ports[h->links[key].other];
			if (!a->unrouted)
				continue;
			uint32_t sa = t->nodes[a->node].sw, sb = t->nodes[b->node].sw;
			if (!seen[sa] || !seen[sb]) {
				/* stays in the list: balanced over when ACTIVE and settled */
				a->unrouted = b->unrouted = false;
				let_in = true;
			}
		}
		if (!let_in)
			break;
	}
out:
	free(seen);
	free(queue);
}

static void settle_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sm *sm = w->data;
	if (!sm->busy) /* else the sweep under way looks when it ends */
		health_settle_check(sm);
}

/* Which end of a link the SM reaches without crossing it: a CA forwards nothing, so the
 * switch's end unless the CA is the SM's own; between switches, the one fewer hops away. A
 * port disabled at the far end could never be reached again to enable it. */
static void near_end(const struct topo *t, uint32_t *near, uint32_t *far)
{
	const struct topo_node *a = &t->nodes[t->ports[*near].node];
	const struct topo_node *b = &t->nodes[t->ports[*far].node];
	bool swap;
	if (t->ports[*far].node == t->sm_node)
		swap = true;
	else if (t->ports[*near].node == t->sm_node)
		swap = false;
	else if (a->type != b->type)
		swap = a->type != NODE_TYPE_SWITCH;
	else
		swap = b->hops < a->hops;
	if (swap) {
		uint32_t x = *near;
		*near = *far;
		*far = x;
	}
}

bool health_link_event(struct sm *sm, uint32_t near, uint32_t far, bool up)
{
	const struct ibsmd_config *cfg = sm->cfg;
	struct sm_health *h = &sm->health;
	const struct topo *t = &sm->topo;
	if (health_grow(h, sm->topo.nports) < 0)
		return false;
	near_end(t, &near, &far);
	uint32_t key = near < far ? near : far;
	struct sm_link_health *l = &h->links[key];
	double now = ev_now(sm->loop);
	bool held = false;
	if (!up) {
		l->prev_down_at = l->down_at;
		l->down_at = now;
	} else if (sm->up && topo_is_switch(t, t->ports[near].node) &&
	           topo_is_switch(t, t->ports[far].node)) {
		held = settle_hold(sm, key, key == near ? far : near);
	}
	if (!cfg->link_flap_threshold || l->until)
		return held; /* held already: its own going down is no news */
	if (now - l->start > cfg->link_flap_window_s) {
		l->start = now;
		l->count = 0;
	}
	if (++l->count >= cfg->link_flap_threshold)
		quarantine(sm, key, near, far, "went up or down", "transitions", l->count,
		           l->start);
	return held;
}

void health_trap(struct sm *sm, uint16_t from_lid, const struct mad_notice *no)
{
	const struct ibsmd_config *cfg = sm->cfg;
	struct sm_health *h = &sm->health;
	const struct topo *t = &sm->topo;
	if (!cfg->trap_flood_threshold || !no->is_generic || from_lid >= TOPO_LID_COUNT)
		return;
	uint32_t sender = t->lid_port[from_lid], p = sender;
	if (sender == TOPO_NONE)
		return;
	if (no->trap_number >= 129 && no->trap_number <= 131) {
		/* about one port of the sender's node, named by LIDADDR and PortNumber: a LIDADDR
		 * that is not the sender's would let one port have another's link disabled */
		uint16_t lid = (uint16_t)(no->data_details[2] << 8 | no->data_details[3]);
		if (lid >= TOPO_LID_COUNT || t->lid_port[lid] != sender)
			return;
		p = topo_port(t, t->ports[sender].node, no->data_details[5]);
	} else if ((no->trap_number >= 256 && no->trap_number <= 259) ||
	           topo_is_switch(t, t->ports[sender].node)) {
		/* security traps tell of someone else (the port is the victim); a switch's other
		 * traps are about the switch, whose port 0 has no link to hold */
		return;
	}
	if (p == TOPO_NONE || t->ports[p].peer == TOPO_NONE || health_grow(h, t->nports) < 0)
		return;
	uint32_t far = t->ports[p].peer, key = p < far ? p : far;
	struct sm_link_health *l = &h->links[key];
	double now = ev_now(sm->loop);
	if (l->until)
		return;
	if (now - l->trap_start > cfg->link_flap_window_s) {
		l->trap_start = now;
		l->traps = 0;
	}
	if (++l->traps < cfg->trap_flood_threshold)
		return;
	/* disabled at the end the SM reaches without crossing the link */
	uint32_t near = p;
	near_end(t, &near, &far);
	quarantine(sm, key, near, far, "sent traps", "traps", l->traps, l->trap_start);
}

int sm_link_release(struct sm *sm, uint64_t guid, unsigned port)
{
	struct sm_health *h = &sm->health;
	int n = 0;
	for (uint32_t i = 0; i < h->nheld;) {
		const struct topo_port *p = &sm->topo.ports[h->links[h->held[i]].near];
		if (!guid || (sm->topo.nodes[p->node].guid == guid && (!port || p->num == port))) {
			release(sm, i, "by command");
			n++;
		} else {
			i++;
		}
	}
	arm_release(sm);
	return n;
}

unsigned sm_links_held(const struct sm *sm)
{
	return sm->health.nheld;
}

uint32_t sm_link_held_port(const struct sm *sm, unsigned i)
{
	const struct sm_health *h = &sm->health;
	return i < h->nheld ? h->links[h->held[i]].near : TOPO_NONE;
}
