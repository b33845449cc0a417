/* The SM's state machine and sweep pipeline (see sm.h) on top of the SMP service (smp.c):
 * the chain of phases, light sweeps, traps and SMInfo requests, start and stop. */
#include "sm/sm_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "routing/engine.h"
#include "util/vec.h"

/* ---- phases ---- */

static double phase_end(struct sm *sm)
{
	return ev_time() - sm->phase_start;
}

static void sweep_done(struct sm *sm);
static void after_activate(struct sm *sm);
static void after_election(struct sm *sm);
static void after_read(struct sm *sm);

/* ACTIVE once every table and every port's PortInfo is in. */
static void after_tables(struct sm *sm)
{
	sm->times.tables += phase_end(sm);
	sm_phase_begin(sm, after_activate);
	program_activate(sm);
	sm_phase_check(sm);
}

/* LFTs, PortInfo (ARMED) and VL tables together (program_tables); "arm" in the sweep's
 * times is the M_Key phase before them, "tables" the P_Keys and this one. */
static void after_pkeys(struct sm *sm)
{
	sm->times.tables = phase_end(sm);
	sm_phase_begin(sm, after_tables);
	program_tables(sm);
	sm_phase_check(sm);
}

/* The M_Keys that change go first and alone: any Set sent beside one to the same port
 * would present the key that is about to go. */
static void after_keys(struct sm *sm)
{
	sm->times.arm = phase_end(sm);
	sm_phase_begin(sm, after_pkeys);
	program_tables_pkeys(sm);
	sm_phase_check(sm);
}

static void after_vports_program(struct sm *sm)
{
	sm->times.activate += phase_end(sm);
	sweep_done(sm);
}

static void after_activate(struct sm *sm)
{
	sm->times.activate = phase_end(sm);
	sm_phase_begin(sm, after_vports_program);
	vports_program(sm);
	sm_phase_check(sm);
}

static void after_read(struct sm *sm);
static void after_vports(struct sm *sm);

/* A dry run takes no part in the election and writes nothing: the LIDs are the ones the
 * ports hold (a port without one gets one in the model only), the tables are read, and
 * routing follows. */
static void dry_after_discovery(struct sm *sm)
{
	sm->times.discover = ev_time() - sm->sweep_start;
	sm->el.trust_fabric = true;
	if (lids_assign(sm) < 0)
		log_warn(sm->log, "sm", "dry run: some ports have no LID in the model");
	sm->stage = "reading tables";
	sm_phase_begin(sm, after_read);
	program_read_tables(sm);
	sm_phase_check(sm);
}

/* A switch that stopped answering a light sweep and is still reachable by its neighbours'
 * links (they are up): hung, or its answers lost. A full sweep looks at it again, and takes
 * a link with nothing answering behind it for half-dead. */
static void silent_check(struct sm *sm)
{
	for (uint32_t i = 0; i < sm->silent.n; i++) {
		uint32_t node = sm->silent.v[i];
		/* a full sweep has looked behind every link already, and taken one with nothing
		 * answering behind it for half-dead */
		if (!sm->heavy && sm->topo.nodes[node].present && sm->silent_mark[node]) {
			sm->full = true;
			sm->again = true;
		}
		sm->silent_mark[node] = false;
	}
	sm->silent.n = 0;
}

static void after_discovery(struct sm *sm)
{
	if (sm->retry && sm->rounds < 3) {
		/* routes recomputed around what failed: read the switches we missed, probe the
		 * ports that got no answer */
		discover_reroute(sm);
		sm_phase_begin(sm, after_discovery);
		discover_switches(sm);
		sm_phase_check(sm);
		return;
	}
	sm->reprobe.n = 0;
	discover_finish(sm);
	silent_check(sm);
	if (sm->topo.sm_node == TOPO_NONE) {
		sm->times.discover = ev_time() - sm->sweep_start;
		sm->exit_code = 1;
		log_err(sm->log, "sm", "%s", sm->exit_reason);
		sweep_done(sm);
		return;
	}
	if (sm->dry_run) {
		dry_after_discovery(sm);
		return;
	}
	/* the other SMs: a master goes on while they answer, an SM that is not master yet
	 * waits for them to know whether it is to be */
	sm_phase_begin(sm, after_election);
	election_query(sm);
	sm_phase_check(sm);
}

static void election_wait_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sm *sm = (struct sm *)((char *)w - offsetof(struct sm, election_wait));
	if (sm->state != SM_STATE_DISCOVERING || !sm->busy)
		return;
	sm_phase_begin(sm, after_election);
	election_query(sm);
	sm_phase_check(sm);
}

static void after_election(struct sm *sm)
{
	sm->times.discover = ev_time() - sm->sweep_start;
	if (election_hold(sm)) {
		sm->busy = false;
		return;
	}
	if (election_wait_known(sm)) {
		/* the sweep stays under way: the answers, or their absence, decide */
		ev_timer_set(&sm->election_wait, sm->cfg->sm_poll_interval_ms / 1000.0, 0.);
		ev_timer_start(sm->loop, &sm->election_wait);
		return;
	}
	if (!election_decide(sm)) {
		/* standing by: nothing of the subnet is ours to program */
		sm->busy = false;
		if (sm->once) {
			sm->exit_code = 1;
			snprintf(sm->exit_reason, sizeof(sm->exit_reason),
			         "another SM is master: standing by");
			ev_break(sm->loop, EVBREAK_ALL);
		}
		return;
	}
	/* the VFs behind the ports (their LIDs are given with the ports') */
	sm_phase_begin(sm, after_vports);
	vports_discover(sm);
	sm_phase_check(sm);
}

static void after_vports(struct sm *sm)
{
	vports_discover_end(sm);
	double t0 = ev_time();
	if (lids_assign(sm) < 0) {
		log_err(sm->log, "sm", "some ports have no LID: they stay unreachable");
		if (sm->once) {
			sm->exit_code = 1;
			snprintf(sm->exit_reason, sizeof(sm->exit_reason),
			         "some ports got no LID: the LID range is too small");
		}
	}
	lids_save(sm);
	sm->times.lids = ev_time() - t0;
	/* tables we do not know yet are read before routing, which keeps the valid ones */
	sm->stage = "reading tables";
	sm_phase_begin(sm, after_read);
	program_read_tables(sm);
	sm_phase_check(sm);
}

static void after_route(struct sm *sm);

/* Routing again would give every switch the table it has: the sweep found nothing new, or
 * only hosts gone (their LIDs stay routed where they were, unreachable with them), no LID
 * new or moved, and the engine that routed last holds. At 2,592 hosts the engine's run was most
 * of a host link's handling. */
static bool routes_hold(const struct sm *sm)
{
	return !sm->heavy && !sm->route_inputs && !sm->lids_new && sm->engine && sm->up &&
	       !sm->reroute && !sm->grew && !sm->rejoin && sm->route_rc == 0 &&
	       !sm->counts.lft_blocks_read;
}

static void after_read(struct sm *sm)
{
	sm->times.read = phase_end(sm);
	health_hold_check(sm);
	sm->stage = "routing";
	if (routes_hold(sm)) {
		if (sm->structural) /* (a sweep that found nothing new has nothing to say) */
			log_info(sm->log, "routing",
			         "only hosts left: every route holds, %s not run",
			         sm->engine->name);
		sm->times.route = 0;
		after_route(sm);
		return;
	}
	if (route_start(sm, after_route) < 0) {
		log_err(sm->log, "routing", "out of memory starting the routing");
		sm->route_rc = -1;
		after_route(sm);
	}
}

static void after_route(struct sm *sm)
{
	if (sm->route_rc < 0) {
		sm->exit_code = 1;
		snprintf(sm->exit_reason, sizeof(sm->exit_reason), "no routing engine succeeded");
	}
	if (sm->dry_run) {
		dryrun_finish(sm);
		sm->busy = false;
		ev_break(sm->loop, EVBREAK_ALL);
		return;
	}
	sm->stage = "programming";
	sm_phase_begin(sm, after_keys);
	program_keys(sm);
	sm_phase_check(sm);
}

/* Ports of present nodes that should be ACTIVE and are not; *first names one. */
static uint32_t ports_not_active(const struct sm *sm, uint32_t *first)
{
	const struct topo *t = &sm->topo;
	uint32_t n = 0;
	*first = TOPO_NONE;
	for (uint32_t p = 0; p < t->nports; p++)
		if (topo_port_should_be_active(t, p) && !n++)
			*first = p;
	/* and switches whose management port went unread: it has no LID yet */
	for (uint32_t s = 0; s < t->nsws; s++) {
		uint32_t p = t->nodes[t->sws[s].node].first_port;
		if (t->nodes[t->sws[s].node].present && !t->ports[p].known && !n++)
			*first = p;
	}
	return n;
}

/* The nodes of the ports ports_not_active counts: the next incremental sweep reads them. */
static void mark_inactive_dirty(struct sm *sm)
{
	const struct topo *t = &sm->topo;
	for (uint32_t p = 0; p < t->nports; p++)
		if (topo_port_should_be_active(t, p))
			sm_dirty(sm, t->ports[p].node);
	for (uint32_t s = 0; s < t->nsws; s++) {
		uint32_t n = t->sws[s].node;
		if (t->nodes[n].present && !t->ports[t->nodes[n].first_port].known)
			sm_dirty(sm, n);
	}
}

static void start_sweep(struct sm *sm)
{
	sm->busy = true;
	sm->stage = "discovery";
	sm->topo.stable = false;
	sm->again = false;
	sm->sweeps++;
	sm->sweep_start = ev_time();
	memset(&sm->times, 0, sizeof(sm->times));
	sm->counts.lft_blocks_sent = sm->counts.port_sets = sm->counts.vl_sets = 0;
	sm->counts.lft_blocks_read = sm->counts.queued_peak = 0;
	sm->rounds = 0;
	sm->retry = false;
	sm->probes_lost = 0;
	sm->reprobe.n = 0;
	sm_phase_begin(sm, after_discovery);
	sm->heavy = sm->full || sm->topo.sm_node == TOPO_NONE;
	if (sm->heavy) {
		sm->full = false;
		memset(&sm->anomalies, 0, sizeof(sm->anomalies));
		if (sm->state != SM_STATE_MASTER)
			sm_set_state(sm, SM_STATE_DISCOVERING);
		discover_full(sm);
	} else {
		discover_switches(sm);
	}
	sm_phase_check(sm);
}

static void sweep_done(struct sm *sm)
{
	if (sm->state == SM_STATE_MASTER && (sm->structural || !sm->up))
		mkey_hops_from_topo(sm);
	mkeys_save(sm);
	sm->busy = false;
	if (topo_complete(&sm->topo) < 0)
		log_warn(sm->log, "sm",
		         "out of memory keeping the links for the SA: paths may go unanswered "
		         "during the next sweep");
	sm->times.total = ev_time() - sm->sweep_start;
	uint32_t first_inactive, inactive = ports_not_active(sm, &first_inactive);
	/* the SM checks what it programmed before it calls the subnet up: every LFT block as
	 * the switches acknowledged it (a Set that failed or never went leaves it otherwise) */
	uint32_t lft_switches = 0, lft_missing = program_lft_missing(sm, &lft_switches);
	const struct sm_counts *c = &sm->counts;
	const struct sm_phase_times *tm = &sm->times;
	if (!sm->exit_code && !inactive && !lft_missing) {
		bool first = !sm->up;
		sm->incomplete = 0;
		sm->up = true;
		sm->el.rereg = sm->el.trust_fabric = false; /* the ports have been told */
		if (first || sm->structural || c->lft_blocks_sent || c->port_sets || c->vl_sets)
			log_notice(
			    sm->log, "sm",
			    "subnet up: %u nodes (%u switches, %u CAs), %u ports, %u links, "
			    "%u LIDs; routed by %s; %u LFT blocks read, %u LFT blocks, %u "
			    "PortInfo and %u VL table sets sent; %u P_Key blocks read, %u "
			    "set; discovery %.3f s, LIDs %.3f s, read %.3f s, routing %.3f s, "
			    "tables %.3f s, arm %.3f s, activate %.3f s, total %.3f s",
			    c->nodes, c->switches, c->cas, c->ports, c->links, c->lids,
			    sm->engine ? sm->engine->name : "-", c->lft_blocks_read,
			    c->lft_blocks_sent, c->port_sets, c->vl_sets, c->pkey_reads,
			    c->pkey_sets, tm->discover, tm->lids, tm->read, tm->route, tm->tables,
			    tm->arm, tm->activate, tm->total);
		for (unsigned i = 0; i < sm->nlisteners; i++)
			if (sm->listeners[i].sweep_done)
				sm->listeners[i].sweep_done(sm->listeners[i].ctx,
				                            first || sm->structural);
		mcast_sweep_done(sm); /* changes that came during the sweep */
		health_settle_check(sm);
	} else if (!sm->exit_code) {
		if (inactive) {
			const struct topo_port *fp = &sm->topo.ports[first_inactive];
			const struct topo_port *pp =
			    &sm->topo.ports[fp->peer != TOPO_NONE ? fp->peer : first_inactive];
			char name[160], peer[160];
			snprintf(
			    sm->exit_reason, sizeof(sm->exit_reason),
			    "%u linked port(s) did not become ACTIVE (%.60s port %u is %s, its "
			    "peer %.60s port %u %s)",
			    inactive, sm_node_name(sm, fp->node, name, sizeof(name)), fp->num,
			    port_state_str(fp->pi.port_state),
			    sm_node_name(sm, pp->node, peer, sizeof(peer)), pp->num,
			    port_state_str(pp->pi.port_state));
		} else
			snprintf(
			    sm->exit_reason, sizeof(sm->exit_reason),
			    "%u LFT block(s) on %u switch(es) are not what routing wants: their "
			    "Sets failed",
			    lft_missing, lft_switches);
		log_warn(sm->log, "sm", "sweep done but %s; the next sweep retries",
		         sm->exit_reason);
		/* again, incrementally: the nodes of the ports left short of ACTIVE are read and
		 * set again, the LFT blocks whose Sets failed go again. A full sweep would forget
		 * every link, and on a fabric where a link flaps take the nodes behind it for
		 * lost if its probes crossed the link as it went; full only when incremental
		 * ones keep failing. */
		if (++sm->incomplete < 3) {
			mark_inactive_dirty(sm);
		} else {
			sm->full = true;
			sm->incomplete = 0;
		}
		sm->again = true;
	}
	if (sm->once && !sm->exit_code && (inactive || lft_missing || sm->probes_lost)) {
		/* MADs lost on a lossy fabric leave some ports or blocks behind, or nodes unfound
		 * behind ports that are up (the daemon finds those at its next sweep): one-shot
		 * mode sweeps again while the sweeps still get somewhere */
		uint32_t left = inactive + lft_missing + sm->probes_lost;
		if (!inactive && !lft_missing)
			snprintf(sm->exit_reason, sizeof(sm->exit_reason),
			         "%u NodeInfo or PortInfo read(s) got no answer", sm->probes_lost);
		/* again, incrementally: what failed is known (ports left INIT or ARMED are set
		 * again, LFT blocks whose Sets failed go again, the switches whose probes were
		 * lost are dirty), and a full rediscovery would lose as much anew */
		sm->full = false;
		sm->again = true;
		if (left < sm->once_best) {
			sm->once_best = left;
			sm->once_stale = 0;
		} else {
			sm->once_stale++;
		}
		if (sm->once_stale < SM_ONCE_STALE_MAX)
			log_notice(sm->log, "sm", "--once: sweeping again (%u left undone)", left);
		else
			sm->exit_code = 1;
	}
	if (sm->once && (!sm->again || sm->exit_code)) {
		ev_break(sm->loop, EVBREAK_ALL);
		return;
	}
	if (sm->again) {
		ev_timer_stop(sm->loop, &sm->kick_timer);
		ev_timer_set(&sm->kick_timer, 0.2, 0.);
		ev_timer_start(sm->loop, &sm->kick_timer);
	}
}

/* ---- light sweeps: SwitchInfo of every switch; a PortStateChange marks it dirty ---- */

/* A switch that stopped answering: gone, or hung. Gone, its neighbours' ports went down and
 * their traps would have made them dirty; they are read now as if they had, so that a loss
 * found by a poll is handled as one found by a trap (only what it broke rerouted). Hung,
 * silent_check sees it still there after that sweep. */
static void light_silent(struct sm *sm, uint32_t node)
{
	const struct topo *t = &sm->topo;
	const struct topo_node *n = &t->nodes[node];
	char name[160];
	log_notice(sm->log, "sm", "%s does not answer: its neighbours are read again",
	           sm_node_name(sm, node, name, sizeof(name)));
	uint32_t *slot = NULL;
	if (array_reserve(&sm->silent_mark, &sm->silent_cap, sm->topo.nnodes + 1ull) < 0 ||
	    !(slot = vec_push(&sm->silent))) {
		sm->full = true; /* out of memory: everything again, as before */
		return;
	}
	*slot = node;
	sm->silent_mark[node] = true;
	sm_dirty(sm, node);
	/* its switch neighbours: they would have sent the traps (a CA behind it is found
	 * gone with it, and reading one by a route through it only fails) */
	for (unsigned p = 1; p <= n->nports; p++) {
		uint32_t peer = t->ports[n->first_port + p].peer;
		if (peer != TOPO_NONE && topo_is_switch(t, t->ports[peer].node))
			sm_dirty(sm, t->ports[peer].node);
	}
}

static void on_light_switch_info(struct sm *sm, const struct mad_result *res,
                                 const struct mad_smp *smp, void *ctx)
{
	uint32_t node = *(const uint32_t *)ctx;
	if (!smp || smp->dr_status) {
		if (res->error)
			light_silent(sm, node);
		return;
	}
	struct mad_switch_info si;
	mad_switch_info_decode(smp->data, sizeof(smp->data), &si, NULL);
	if (discover_switch_info(sm, node, &si))
		sm->full = true; /* a reboot between two sweeps: its ports, keys and all */
	if (si.port_state_change && node < sm->dirty_cap)
		sm->dirty[node] = true;
}

static void light_done(struct sm *sm)
{
	bool any = sm->full;
	for (uint32_t i = 0; i < sm->topo.nnodes && i < sm->dirty_cap && !any; i++)
		any = sm->dirty[i];
	sm->busy = false;
	sm->light_sweeps++;
	if (any)
		start_sweep(sm);
	else {
		mcast_sweep_done(sm); /* joins and leaves that came during it */
		guids_sweep_done(sm);
	}
}

static void light_sweep(struct sm *sm)
{
	if (sm->state != SM_STATE_MASTER || sm->busy || !sm->up || sm_dirty_grow(sm) < 0)
		return;
	election_poll_known(sm);
	sm->busy = true;
	sm->stage = "light sweep";
	sm_phase_begin(sm, light_done);
	for (uint32_t s = 0; s < sm->topo.nsws; s++) {
		uint32_t node = sm->topo.sws[s].node;
		if (sm->topo.nodes[node].present)
			sm_send_dr(sm, node, NULL, 0, MAD_METHOD_GET, MAD_ATTR_SWITCH_INFO, 0, NULL,
			           0, on_light_switch_info, &node, sizeof(node));
	}
	sm_phase_check(sm);
}

static void light_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	light_sweep((struct sm *)((char *)w - offsetof(struct sm, light_timer)));
}

void sm_request_light_sweep(struct sm *sm)
{
	light_sweep(sm); /* a sweep under way already looks at everything a light one would */
}

void sm_request_reroute(struct sm *sm)
{
	sm->reroute = true;
	sm_request_sweep(sm, NULL, 0);
}

/* When the switch the SM hangs off resets, it forgets its LID and its table: no trap can
 * reach the SM, and the light sweep that would notice is up to sweep_interval away. The
 * SM's own port falls out of ACTIVE at once (its link retrained), and a look at it every
 * second sees it: sysfs first (cheap on hardware), and before anything is done about it the
 * port itself (a PortInfo Get with no hops, which the local HCA answers). A simulator's
 * preload (Debian's libumad2sim.so) writes sysfs once and never again, so its port reads
 * INIT there for good: it resent 134 PortInfo Sets at 1, 2, 4 and 8 s after subnet up. */
#define SM_LOCAL_WATCH_S 1.0
/* another SM holds the issm device: asked again this often */
#define SM_ISSM_RETRY_S 2.0

static void local_state(struct sm *sm, uint8_t state, uint8_t phys_state)
{
	bool was = sm->local_active;
	sm->local_active = state == PORT_STATE_ACTIVE;
	if (sm->local_active) {
		sm->local_kicks = sm->local_wait = 0;
		return;
	}
	if (was)
		log_notice(sm->log, "sm",
		           "the SM's own port left ACTIVE (state %u, physical state %u)", state,
		           phys_state);
	/* INIT: the link is up and nobody configured it (a reset switch, or one that came back
	 * before the SM looked); a sweep sets it. Asked again at 1, 2, 4 ... 16 s if it stays
	 * so, not every second. DOWN: nothing a sweep could reach. */
	if (state != PORT_STATE_INIT || !sm->up || sm->busy)
		return;
	if (sm->local_wait) {
		sm->local_wait--;
		return;
	}
	if (!sm->local_kicks)
		log_notice(sm->log, "sm",
		           "the SM's own port is INIT, configured by nobody: its switch may have "
		           "reset; sweeping");
	sm->local_wait = (1u << (sm->local_kicks < 4 ? sm->local_kicks : 4)) - 1;
	sm->local_kicks++;
	sm_request_sweep(sm, NULL, 0);
}

static void on_local_port_info(struct sm *sm, const struct mad_result *res,
                               const struct mad_smp *smp, void *ctx)
{
	(void)res;
	(void)ctx;
	struct mad_port_info pi;
	if (!smp || smp->dr_status || sm->state != SM_STATE_MASTER ||
	    mad_port_info_decode(smp->data, sizeof(smp->data), &pi, NULL) < 0)
		return;
	if (pi.port_state == PORT_STATE_ACTIVE && !sm->local_sysfs_stale) {
		sm->local_sysfs_stale = true;
		log_info(sm->log, "sm",
		         "%s: sysfs shows the local port short of ACTIVE, the port says ACTIVE: "
		         "sysfs is not kept current here (a simulator's preload); the port itself "
		         "is asked from now on",
		         sm->t->desc);
	}
	local_state(sm, pi.port_state, pi.phys_state);
}

static void local_watch_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sm *sm = (struct sm *)((char *)w - offsetof(struct sm, local_watch));
	struct mad_local_port lp;
	if (sm->state != SM_STATE_MASTER)
		return;
	bool read = !sm->local_sysfs_stale && sm->t->ops->query_port(sm->t, &lp) == 0;
	if (read && lp.state == PORT_STATE_ACTIVE) {
		local_state(sm, lp.state, lp.phys_state);
		return;
	}
	uint32_t port = sm->topo.sm_port;
	if (port == TOPO_NONE || port >= sm->topo.nports) {
		if (read)
			local_state(sm, lp.state, lp.phys_state);
		return;
	}
	sm->detached++; /* not part of any sweep's phase */
	sm_send_dr_port(sm, port, MAD_METHOD_GET, MAD_ATTR_PORT_INFO,
	                sm_port_info_mod(sm, port, false), NULL, 0, on_local_port_info, NULL, 0);
	sm->detached--;
}

static void kick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sm *sm = (struct sm *)((char *)w - offsetof(struct sm, kick_timer));
	if (sm->state != SM_STATE_MASTER && sm->state != SM_STATE_DISCOVERING)
		return; /* a standby or a disabled SM does not sweep */
	if (sm->busy) {
		sm->again = true;
		return;
	}
	start_sweep(sm);
}

/* ---- unsolicited SMPs: traps and SMInfo ---- */

static void handle_trap(struct sm *sm, const struct mad_addr *from, const uint8_t *mad, size_t len)
{
	struct mad_smp smp;
	struct mad_error err;
	if (mad_smp_decode(mad, len, &smp, &err) < 0) {
		log_rl(sm->log, &sm->rl_garbage, LOGL_WARN, "sm", "malformed trap from LID %u: %s",
		       from->lid, err.msg);
		return;
	}
	struct mad_notice no;
	uint8_t buf[80] = {0};
	memcpy(buf, smp.data, sizeof(smp.data));
	mad_notice_decode(buf, sizeof(buf), &no, NULL);
	/* TrapRepress: the same TID and attribute back to the sender */
	uint8_t rep[MAD_SIZE];
	memcpy(rep, mad, MAD_SIZE);
	rep[3] = MAD_METHOD_TRAP_REPRESS;
	mad_dispatcher_respond(sm->d, from, rep, MAD_SIZE);

	uint32_t p = no.issuer_lid < TOPO_LID_COUNT ? sm->topo.lid_port[no.issuer_lid] : TOPO_NONE;
	uint32_t node = p != TOPO_NONE ? sm->topo.ports[p].node : TOPO_NONE;
	log_rl(sm->log, &sm->rl_trap, LOGL_INFO, "sm", "trap %u from LID %u%s", no.trap_number,
	       no.issuer_lid, node == TOPO_NONE ? " (unknown LID)" : "");
	sm->traps++;
	health_trap(sm, from->lid, &no);
	for (unsigned i = 0; i < sm->nlisteners; i++)
		if (sm->listeners[i].trap)
			sm->listeners[i].trap(sm->listeners[i].ctx, &no);
	switch (no.trap_number) {
	case 128: /* link state change at a switch */
		if (node != TOPO_NONE && topo_is_switch(&sm->topo, node))
			sm_request_sweep(sm, &node, 1);
		else
			sm_request_sweep(sm, NULL, 0);
		break;
	case 1146: /* a VF came or went behind a port (IBA Annex A18) */ vports_trap(sm, p); break;
	case 144: { /* local changes: IsSM and friends, a new NodeDescription */
		struct mad_trap144 lc;
		mad_trap144_decode(no.data_details, sizeof(no.data_details), &lc, NULL);
		if (p != TOPO_NONE && lc.other_local_changes &&
		    (lc.change_flags & TRAP144_NODE_DESC_CHANGE))
			discover_node_desc(sm, node);
		if (p != TOPO_NONE)
			election_cap_changed(sm, p);
		break;
	}
	case 256: /* bad M_Key: someone tried to read or change a protected port */
		mkey_violation_trap(sm, node, &no);
		break;
	default: break;
	}
}

static void on_smp_request(struct mad_dispatcher *d, const struct mad_addr *from,
                           const uint8_t *mad, size_t len, void *ctx)
{
	(void)d;
	struct sm *sm = ctx;
	if (len < MAD_SIZE)
		return;
	uint8_t method = mad[3];
	uint16_t attr = (uint16_t)mad_get_field((void *)mad, 0, IB_MAD_ATTRID_F);
	if (method == MAD_METHOD_TRAP && attr == MAD_ATTR_NOTICE)
		handle_trap(sm, from, mad, len);
	else if (attr == MAD_ATTR_SM_INFO)
		election_handle_sm_info(sm, from, mad, len);
}

/* ---- life cycle ---- */

static void issm_cb(struct ev_loop *loop, ev_timer *w, int revents);

static struct sm *sm_create(struct ibsmd_config *cfg, const struct log *log, struct ev_loop *loop,
                            struct mad_transport *t, bool once, bool dry)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	if (!sm)
		return NULL;
	sm->cfg = cfg;
	sm->log = log;
	sm->loop = loop;
	sm->t = t;
	sm->once = once || dry;
	sm->dry_run = dry;
	sm->once_best = UINT32_MAX;
	sm->state = SM_STATE_DISCOVERING;
	sm->full = true;
	sm->send_retries = -1;
	sm->smp_room = program_room;
	sm->routing_inputs = config_routing_inputs(cfg);
	mcast_init(sm);
	election_init(sm);
	health_init(sm);
	sm->rl_trap = sm->rl_garbage = sm->rl_no_answer = sm->rl_refused = LOG_RL_INIT(20, 1000);
	sm->rl_events = LOG_RL_INIT(50, 1000);
	sm->vp.rl = LOG_RL_INIT(20, 1000);
	sm->rl_qos = sm->rl_layers = LOG_RL_INIT(5, 10000);
	if (topo_init(&sm->topo) < 0) {
		free(sm);
		return NULL;
	}
	if (t->ops->query_port(t, &sm->local) < 0)
		log_warn(log, "sm", "%s: cannot read the local port's state", t->desc);
	int rc = dry ? 0 : t->ops->set_sm(t, true); /* a dry run is no SM to the others */
	if (rc == -EAGAIN || rc == -EBUSY) {
		/* the kernel gives the issm device to one SM per port: another holds it */
		sm->issm_wait = true;
		log_err(log, "sm",
		        "%s: another SM holds this port's issm device (IsSM): this one sweeps "
		        "nothing until it lets go, asking every %.0f s; stop the other SM on this "
		        "port (systemctl stop opensm) or give this one another port (--ca/--port)",
		        t->desc, SM_ISSM_RETRY_S);
	} else if (rc < 0) {
		log_warn(log, "sm",
		         "%s: cannot set IsSM on the local port (%s): other SMs will not "
		         "see this one",
		         t->desc, strerror(-rc));
	}
	struct mad_dispatcher_opts dopts = {
	    .window = cfg->mad_window  ? cfg->mad_window
	              : t->window_hint ? t->window_hint
	                               : 64,
	    .window_per_dest = cfg->mad_window_per_node,
	    .timeout_ms = cfg->mad_timeout_ms,
	    .retries = cfg->mad_retries,
	    .log = log,
	};
	sm->d = mad_dispatcher_new(loop, t, &dopts);
	if (!sm->d) {
		sm_free(sm);
		return NULL;
	}
	mad_dispatcher_set_handler(sm->d, MAD_CLASS_SUBN_LID, on_smp_request, sm);
	mad_dispatcher_set_handler(sm->d, MAD_CLASS_SUBN_DR, on_smp_request, sm);
	if (lids_load(sm) < 0)
		log_warn(log, "lids", "cannot read %s/guid2lid: %s; LIDs start afresh",
		         cfg->state_dir, strerror(errno));
	if (mkeys_load(sm) < 0)
		log_warn(log, "mkeys",
		         "cannot read %s/mkeys: %s; ports are tried with the keys the "
		         "configuration gives",
		         cfg->state_dir, strerror(errno));
	if (tenants_load(sm) < 0)
		log_warn(log, "partitions",
		         "cannot read %s/partitions-api: %s; partitions added at run time are not "
		         "applied until it is readable",
		         cfg->state_dir, strerror(errno));
	sm_smp_init(sm);
	ev_init(&sm->kick_timer, kick_cb);
	ev_init(&sm->pkeys_timer, program_pkeys_cb);
	ev_init(&sm->light_timer, light_cb);
	ev_init(&sm->local_watch, local_watch_cb);
	ev_init(&sm->election_wait, election_wait_cb);
	ev_init(&sm->issm_timer, issm_cb);
	return sm;
}

struct sm *sm_new(struct ibsmd_config *cfg, const struct log *log, struct ev_loop *loop,
                  struct mad_transport *t, bool once)
{
	return sm_create(cfg, log, loop, t, once, false);
}

struct sm *sm_new_dry_run(struct ibsmd_config *cfg, const struct log *log, struct ev_loop *loop,
                          struct mad_transport *t)
{
	return sm_create(cfg, log, loop, t, true, true);
}

static void issm_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sm *sm = (struct sm *)((char *)w - offsetof(struct sm, issm_timer));
	int rc = sm->t->ops->set_sm(sm->t, true);
	if (rc == -EAGAIN || rc == -EBUSY)
		return;
	ev_timer_stop(sm->loop, &sm->issm_timer);
	sm->issm_wait = false;
	log_notice(sm->log, "sm", "%s: the issm device is this SM's now%s%s: sweeping", sm->t->desc,
	           rc < 0 ? " (IsSM not set: " : "", rc < 0 ? strerror(-rc) : "");
	sm_start(sm);
}

int sm_start(struct sm *sm)
{
	const struct ibsmd_config *cfg = sm->cfg;
	if (sm->issm_wait) {
		if (sm->once) {
			sm->exit_code = 1;
			snprintf(sm->exit_reason, sizeof(sm->exit_reason),
			         "another SM holds this port's issm device");
			ev_break(sm->loop, EVBREAK_ALL);
			return 0;
		}
		ev_timer_set(&sm->issm_timer, SM_ISSM_RETRY_S, SM_ISSM_RETRY_S);
		ev_timer_start(sm->loop, &sm->issm_timer);
		return 0;
	}
	if (cfg->sweep_interval_s && !sm->once) {
		ev_timer_set(&sm->light_timer, cfg->sweep_interval_s, cfg->sweep_interval_s);
		ev_timer_start(sm->loop, &sm->light_timer);
	}
	if (!sm->once) {
		ev_timer_set(&sm->local_watch, SM_LOCAL_WATCH_S, SM_LOCAL_WATCH_S);
		ev_timer_start(sm->loop, &sm->local_watch);
	}
	log_notice(sm->log, "sm",
	           "ibsmd on %s (port GUID " GUID_FMT "), routing %s, LMC %u, state in %s",
	           sm->t->desc, sm->local.port_guid, cfg->routing_engines, cfg->lmc,
	           sm->dry_run ? "none (a dry run saves nothing)" : cfg->state_dir);
	sm->started = true;
	sm->el.rereg = true; /* a fresh start: the hosts re-register with this SM */
	start_sweep(sm);
	return 0;
}

bool sm_routing_inputs_changed(const struct sm *sm)
{
	return config_routing_inputs(sm->cfg) != sm->routing_inputs;
}

void sm_config_changed(struct sm *sm)
{
	const struct ibsmd_config *cfg = sm->cfg;
	ev_timer_stop(sm->loop, &sm->light_timer);
	if (cfg->sweep_interval_s && !sm->once && !sm->stopped) {
		ev_timer_set(&sm->light_timer, cfg->sweep_interval_s, cfg->sweep_interval_s);
		ev_timer_start(sm->loop, &sm->light_timer);
	}
	/* a reload replaced the file's partitions: the API's members go back in (a SIGHUP
	 * never drops them) */
	tenants_merge(sm);
	/* another engine, roots or input file: routes computed afresh. Anything else (a
	 * priority raised to take the subnet over from OpenSM, a log level) keeps the routes
	 * the switches hold where they are valid, as a takeover does */
	uint64_t inputs = config_routing_inputs(cfg);
	if (inputs != sm->routing_inputs) {
		sm->reroute = true;
		sm->routing_inputs = inputs;
	} else {
		sm->keep_routes = true;
	}
	sm->link_recheck = true;
	sm_request_sweep(sm, NULL, 0);
}

unsigned sm_update_descs(struct sm *sm)
{
	if (sm->state != SM_STATE_MASTER || sm->stopped)
		return 0;
	unsigned n = 0;
	sm->detached++; /* no sweep's phase waits for them */
	for (uint32_t node = 0; node < sm->topo.nnodes; node++) {
		if (!sm->topo.nodes[node].present)
			continue;
		discover_node_desc(sm, node);
		n++;
	}
	sm->detached--;
	return n;
}

void sm_set_priority(struct sm *sm, uint8_t priority)
{
	sm->cfg->sm_priority = priority;
}

void sm_ports_changed(struct sm *sm)
{
	program_ports_now(sm);
}

void sm_stop(struct sm *sm)
{
	if (!sm || sm->stopped)
		return;
	sm->stopped = true;
	/* the routing thread reads the model that is about to go */
	route_wait(sm, false);
	ev_timer_stop(sm->loop, &sm->light_timer);
	ev_timer_stop(sm->loop, &sm->kick_timer);
	ev_timer_stop(sm->loop, &sm->pkeys_timer);
	ev_timer_stop(sm->loop, &sm->local_watch);
	ev_timer_stop(sm->loop, &sm->election_wait);
	ev_timer_stop(sm->loop, &sm->issm_timer);
	mcast_stop(sm);
	election_stop(sm);
	sm->phase_next = NULL;
	if (sm->d) {
		/* every callback of a transaction under way would run into state that is about
		 * to go: cancel them while everything is still there */
		mad_dispatcher_log_counters(sm->d);
		mad_dispatcher_cancel_all(sm->d);
	}
	if (sm->lft_out.active) {
		sm->lft_out.active = false;
		if (sm->pending)
			sm->pending--;
	}
	if (sm->port_out.active) {
		sm->port_out.active = false;
		if (sm->pending)
			sm->pending--;
	}
	if (sm->act_out.active) {
		sm->act_out.active = false;
		if (sm->pending)
			sm->pending--;
	}
	if (sm->read_out.active) {
		sm->read_out.active = false;
		if (sm->pending)
			sm->pending--;
	}
	sm_smp_drop_backlog(sm);
	vec_free(&sm->reprobe);
	vec_free(&sm->silent);
	vec_free(&sm->vp.queue);
	vec_free(&sm->vp.active);
	vec_free(&sm->vp.done);
	free(sm->silent_mark);
	sm->silent_mark = NULL;
	sm->silent_cap = 0;
	vec_free(&sm->rejoin_nodes);
	vec_free(&sm->read_out.sws);
	free(sm->lft_wave);
	sm->lft_wave = NULL;
	if (sm->started && !sm->dry_run) { /* a dry run keeps nothing */
		lids_save(sm);
		mkeys_save(sm);
	}
	sm->started = false;
}

void sm_free(struct sm *sm)
{
	if (!sm)
		return;
	sm_stop(sm);
	dryrun_free(sm);
	if (sm->d)
		mad_dispatcher_free(sm->d);
	sm->d = NULL;
	sm_smp_free(sm);
	route_release(sm);
	mcast_free(sm);
	election_free(sm);
	health_free(sm);
	topo_free(&sm->topo);
	u64map_free(&sm->guid2lid);
	u64map_free(&sm->guid_sets);
	u64map_free(&sm->mk.idx);
	free(sm->mk.v);
	u64map_free(&sm->mk.hop_idx);
	vec_free(&sm->mk.hops);
	free(sm->dirty);
	tenants_free(sm);
	free(sm);
}

int sm_add_listener(struct sm *sm, const struct sm_listener *l)
{
	if (sm->nlisteners >= SM_MAX_LISTENERS)
		return -1;
	sm->listeners[sm->nlisteners++] = *l;
	return 0;
}

void sm_clear_listeners(struct sm *sm)
{
	sm->nlisteners = 0;
}

struct topo *sm_fabric(struct sm *sm)
{
	return &sm->topo;
}

struct mad_dispatcher *sm_dispatcher(struct sm *sm)
{
	return sm->d;
}

const struct log *sm_log(const struct sm *sm)
{
	return sm->log;
}

const struct ibsmd_config *sm_config(const struct sm *sm)
{
	return sm->cfg;
}

struct ev_loop *sm_loop(const struct sm *sm)
{
	return sm->loop;
}

struct sm_status sm_status(const struct sm *sm)
{
	return (struct sm_status){
	    .up = sm->up,
	    .exit_code = sm->exit_code,
	    .exit_reason = sm->exit_reason,
	    .engine = sm->engine ? sm->engine->name : "-",
	    .counts = sm->counts,
	    .times = sm->times,
	    .sweeps = sm->sweeps,
	    .light_sweeps = sm->light_sweeps,
	    .traps = sm->traps,
	    .links_held = sm->health.nheld,
	    .heavy = sm->heavy,
	    .sweeping = sm->busy,
	    .routing = sm->route_job != NULL,
	    .stage = sm->busy && sm->stage ? sm->stage : "",
	};
}
