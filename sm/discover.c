/* Discovery: breadth-first with directed-route SMPs, all in flight at once (the dispatcher's
 * windows pace them). A full sweep forgets every link and finds them again from the SM's own
 * node; a partial sweep re-reads the ports of the switches that reported a change and only
 * explores what is new behind them. Duplicate GUIDs, half-dead links and nodes that do not
 * answer are reported with their routes and never stop the sweep. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/sm_int.h"
#include "util/escape.h"

struct probe {
	uint32_t from_port; /* the port we leave through, TOPO_NONE for the SM's own node */
	uint8_t path[64];
	uint8_t hops;
	bool full;
};

struct port_ref {
	uint32_t port;
	bool full;
	bool ext; /* asked with SMSupportExtendedSpeeds */
};

static void path_str(const uint8_t *path, unsigned hops, char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "0");
	for (unsigned i = 1; i <= hops && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, ",%u", path[i]);
}

static void on_port_info(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                         void *ctx);

static void read_port(struct sm *sm, uint32_t node, unsigned num, bool full)
{
	struct port_ref pr = {.port = topo_port(&sm->topo, node, num), .full = full};
	uint32_t mod = sm_port_info_mod(sm, pr.port, false);
	pr.ext = (mod & PORT_INFO_AM_EXT_SPEEDS) != 0;
	sm_send_dr_port(sm, pr.port, MAD_METHOD_GET, MAD_ATTR_PORT_INFO, mod, NULL, 0, on_port_info,
	                &pr, sizeof(pr));
}

static void on_node_desc(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                         void *ctx)
{
	(void)res;
	uint32_t node = *(const uint32_t *)ctx;
	if (!smp || smp->dr_status)
		return;
	struct mad_node_desc nd;
	mad_node_desc_decode(smp->data, sizeof(smp->data), &nd, NULL);
	memcpy(sm->topo.nodes[node].desc, nd.desc, sizeof(nd.desc));
}

/* A description read on its own (trap 144): the change is said, as names feed the Slurm
 * topology and the metrics' labels. */
static void on_node_desc_changed(struct sm *sm, const struct mad_result *res,
                                 const struct mad_smp *smp, void *ctx)
{
	uint32_t node = *(const uint32_t *)ctx;
	if (node >= sm->topo.nnodes)
		return;
	char was[sizeof(sm->topo.nodes[0].desc)];
	memcpy(was, sm->topo.nodes[node].desc, sizeof(was));
	on_node_desc(sm, res, smp, ctx);
	if (!smp || smp->dr_status || !memcmp(was, sm->topo.nodes[node].desc, sizeof(was)))
		return;
	char now[4 * sizeof(was)], then[4 * sizeof(was)];
	log_rl(sm->log, &sm->rl_trap, LOGL_INFO, "sm",
	       "node " GUID_FMT ": NodeDescription now \"%s\" (was \"%s\")",
	       sm->topo.nodes[node].guid, text_desc(now, sizeof(now), sm->topo.nodes[node].desc),
	       text_desc(then, sizeof(then), was));
}

void discover_node_desc(struct sm *sm, uint32_t node)
{
	if (node >= sm->topo.nnodes || !sm->topo.nodes[node].present)
		return;
	sm_send_dr(sm, node, NULL, 0, MAD_METHOD_GET, MAD_ATTR_NODE_DESC, 0, NULL, 0,
	           on_node_desc_changed, &node, sizeof(node));
}

bool discover_switch_info(struct sm *sm, uint32_t node, const struct mad_switch_info *si)
{
	struct topo *t = &sm->topo;
	struct topo_switch *sw = &t->sws[t->nodes[node].sw];
	/* Only a Set changes LinearFDBTop, and every Set's answer is kept in sw->si: a switch
	 * that reports another value than it last did lost what we gave it (a reset between
	 * two sweeps, too quick for any sweep to find it gone). Its tables are forgotten so
	 * that all of them go out again. */
	bool reset = sw->lft_hw && si->linear_fdb_top != sw->si.linear_fdb_top;
	if (reset) {
		char name[160];
		log_notice(sm->log, "sm",
		           "%s reports LinearFDBTop %u where it held %u: it was reset; "
		           "reprogramming all of its tables",
		           sm_node_name(sm, node, name, sizeof(name)), si->linear_fdb_top,
		           sw->si.linear_fdb_top);
		topo_forget_tables(t, node);
		mcast_topology_changed(sm); /* its MFT blocks go whatever they hold */
		sm->structural = sm->route_inputs = true;
	}
	sw->si = *si;
	return reset;
}

static void on_switch_info(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                           void *ctx)
{
	(void)res;
	uint32_t node = *(const uint32_t *)ctx;
	if (!smp || smp->dr_status)
		return;
	struct mad_switch_info si;
	mad_switch_info_decode(smp->data, sizeof(smp->data), &si, NULL);
	discover_switch_info(sm, node, &si);
}

/* Explore a node reached for the first time in this sweep: everything about it, and its
 * ports, whose answers lead on. */
static void explore(struct sm *sm, uint32_t node, uint32_t arrival, bool full)
{
	struct topo_node *n = &sm->topo.nodes[node];
	n->seen = sm->topo.sweep;
	sm_send_dr(sm, node, NULL, 0, MAD_METHOD_GET, MAD_ATTR_NODE_DESC, 0, NULL, 0, on_node_desc,
	           &node, sizeof(node));
	if (topo_is_switch(&sm->topo, node)) {
		sm_send_dr(sm, node, NULL, 0, MAD_METHOD_GET, MAD_ATTR_SWITCH_INFO, 0, NULL, 0,
		           on_switch_info, &node, sizeof(node));
		for (unsigned p = 0; p <= n->nports; p++)
			read_port(sm, node, p, full);
	} else {
		read_port(sm, node, sm->topo.ports[arrival].num, full);
	}
}

/* No NodeInfo, or an error status, for probe pr: probed again by another route in this
 * sweep, or the link it left by taken for half-dead. */
static void no_node_info(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                         const struct probe *pr, const char *route)
{
	struct topo *t = &sm->topo;
	if (pr->from_port != TOPO_NONE && !smp && sm->rounds < 2) {
		/* its route may cross a link that has just gone (or flaps): probed again by a
		 * new route before the node behind is taken for dead */
		uint32_t *slot = vec_push(&sm->reprobe);
		if (slot) {
			*slot = pr->from_port;
			sm->retry = true;
			return;
		}
	}
	if (pr->from_port == TOPO_NONE) {
		log_err(sm->log, "discover", "the SM's own port does not answer NodeInfo");
		return;
	}
	char name[160];
	sm_node_name(sm, t->ports[pr->from_port].node, name, sizeof(name));
	log_rl(sm->log, &sm->rl_no_answer, LOGL_WARN, "discover",
	       "no NodeInfo through %s port %u (route %s): the link is up but "
	       "nothing answers behind it (half-dead link or hung node)%s",
	       name, t->ports[pr->from_port].num, route,
	       res->error ? "" : ", the node answered with an error status");
	topo_unlink(t, pr->from_port);
	if (!smp) {
		/* the next sweep reads its ports and probes again */
		sm->probes_lost++;
		sm_dirty(sm, t->ports[pr->from_port].node);
	}
}

/* A NodeInfo that makes sense: a GUID, ports, a known type, and the port it was entered by
 * among them. Logged when not. */
static bool node_info_valid(struct sm *sm, const struct mad_node_info *ni, const char *route)
{
	if (!ni->node_guid || ni->num_ports == 0 ||
	    (ni->node_type != NODE_TYPE_CA && ni->node_type != NODE_TYPE_SWITCH &&
	     ni->node_type != NODE_TYPE_ROUTER) ||
	    (ni->node_type == NODE_TYPE_SWITCH
	         ? ni->local_port_num > ni->num_ports
	         : ni->local_port_num == 0 || ni->local_port_num > ni->num_ports)) {
		log_rl(sm->log, &sm->rl_garbage, LOGL_WARN, "discover",
		       "node at route %s answers a malformed NodeInfo (GUID " GUID_FMT
		       ", type %u, %u ports, entered on port %u): ignored",
		       route, ni->node_guid, ni->node_type, ni->num_ports, ni->local_port_num);
		return false;
	}
	return true;
}

/* The node in the model by its GUID, added when new (*is_new), with the port GUID of a CA
 * or router port. TOPO_NONE, logged, for a duplicate node or port GUID or out of memory. */
static uint32_t place_node(struct sm *sm, const struct mad_node_info *ni, const char *route,
                           bool *is_new)
{
	struct topo *t = &sm->topo;
	uint32_t node = u64map_get(&t->by_guid, ni->node_guid);
	*is_new = node == U64MAP_NONE;
	if (!*is_new) {
		struct topo_node *n = &t->nodes[node];
		if (n->type != ni->node_type || n->nports != ni->num_ports) {
			sm_anomaly(sm,
			           "node GUID " GUID_FMT " is a %s with %u ports at route %s "
			           "and a %s with %u ports elsewhere",
			           ni->node_guid, node_type_str(ni->node_type), ni->num_ports,
			           route, node_type_str(n->type), n->nports);
			log_err(
			    sm->log, "discover",
			    "duplicate node GUID " GUID_FMT ": a %s with %u ports at route %s, "
			    "and a %s with %u ports at route(s) seen before: the second is left "
			    "out; fix the GUIDs",
			    ni->node_guid, node_type_str(ni->node_type), ni->num_ports, route,
			    node_type_str(n->type), n->nports);
			return TOPO_NONE;
		}
	} else {
		node = topo_add_node(t, ni);
		if (node == TOPO_NONE) {
			log_err(sm->log, "discover", "out of memory at route %s", route);
			return TOPO_NONE;
		}
	}
	if (t->nodes[node].type != NODE_TYPE_SWITCH &&
	    topo_set_port_guid(t, topo_port(t, node, ni->local_port_num), ni->port_guid) < 0) {
		log_err(sm->log, "discover", "duplicate port GUID " GUID_FMT " at route %s",
		        ni->port_guid, route);
		sm_anomaly(sm, "port GUID " GUID_FMT " at route %s is another port's",
		           ni->port_guid, route);
		return TOPO_NONE;
	}
	return node;
}

/* What the link from pr->from_port to arrival tells before it is recorded: a port reached
 * from two places, or (partial sweep) a link that came up. */
static void link_events(struct sm *sm, const struct probe *pr, const struct mad_node_info *ni,
                        uint32_t arrival)
{
	struct topo *t = &sm->topo;
	uint32_t was = t->ports[arrival].peer;
	if (was != TOPO_NONE && was != pr->from_port && !pr->full &&
	    t->nodes[t->ports[was].node].seen == t->sweep) {
		char a[160], b[160];
		sm_node_name(sm, t->ports[was].node, a, sizeof(a));
		sm_node_name(sm, t->ports[pr->from_port].node, b, sizeof(b));
		log_warn(sm->log, "discover",
		         "port %u of " GUID_FMT " is reached both from %s and from %s: "
		         "duplicate GUID or miscabled fabric",
		         ni->local_port_num, ni->node_guid, a, b);
	}
	if (pr->full || t->ports[pr->from_port].peer == arrival)
		return;
	sm->structural = sm->route_inputs = true;
	char name[160], g[20], pn[4], fg[20], fpn[4];
	const struct topo_port *near = &t->ports[pr->from_port];
	snprintf(g, sizeof(g), "0x%016" PRIx64, t->nodes[near->node].guid);
	snprintf(pn, sizeof(pn), "%u", near->num);
	snprintf(fg, sizeof(fg), "0x%016" PRIx64, ni->node_guid);
	snprintf(fpn, sizeof(fpn), "%u", ni->local_port_num);
	const char *kv[] = {"node_guid", g,   "node_desc", t->nodes[near->node].desc,
	                    "port",      pn,  "peer_guid", fg,
	                    "peer_port", fpn, NULL};
	sm_event(sm, LOGL_NOTICE, "link_up", kv, "link up at %s port %u",
	         sm_node_name(sm, near->node, name, sizeof(name)), near->num);
	/* a link that was not there before adds capacity: routes are balanced over it, now,
	 * or (held until ACTIVE) in the pass that lets it in */
	if (!health_link_event(sm, pr->from_port, arrival, true))
		sm->grew = true;
}

/* Explore what is new, what came back, and (full sweep) everything once; and a switch at
 * the far end of a link that came up, which may have come up with it (a reset between two
 * sweeps: its SwitchInfo tells). Else a CA port not read yet is read. */
static void explore_found(struct sm *sm, const struct probe *pr, const struct mad_smp *smp,
                          const struct mad_node_info *ni, uint32_t node, uint32_t arrival,
                          bool is_new, bool new_link, const char *route)
{
	struct topo *t = &sm->topo;
	struct topo_node *n = &t->nodes[node];
	if (is_new || !n->present || (pr->full && n->seen != t->sweep) ||
	    (new_link && n->type == NODE_TYPE_SWITCH && n->seen != t->sweep)) {
		if (!is_new && !n->present) {
			/* back after an absence: whatever it held was lost with its power */
			topo_forget_tables(t, node);
			if (n->sw != TOPO_NONE) {
				sm->structural = sm->route_inputs = true;
				mcast_topology_changed(sm);
			}
		}
		/* under protection level 2 only the right M_Key gets an answer: the one it
		 * echoes is its key (a port without one answers any, and its PortInfo, read
		 * next, says so) */
		if (sm->cfg->m_key_protect >= 2 && smp->mkey)
			mkey_learned(sm, ni->port_guid, smp->mkey);
		memcpy(n->path, pr->path, sizeof(n->path));
		n->hops = pr->hops;
		n->ni = *ni;
		n->present = true;
		if (is_new || !pr->full) {
			char name[160];
			log_info(sm->log, "discover", "found %s %s at route %s",
			         node_type_str(n->type), sm_node_name(sm, node, name, sizeof(name)),
			         route);
		}
		explore(sm, node, arrival, pr->full);
	} else if (n->type != NODE_TYPE_SWITCH && !t->ports[arrival].known) {
		read_port(sm, node, ni->local_port_num, pr->full);
	}
}

static void on_node_info(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                         void *ctx)
{
	const struct probe *pr = ctx;
	struct topo *t = &sm->topo;
	char route[200];
	path_str(pr->path, pr->hops, route, sizeof(route));
	if (!smp || smp->dr_status) {
		no_node_info(sm, res, smp, pr, route);
		return;
	}
	struct mad_node_info ni;
	mad_node_info_decode(smp->data, sizeof(smp->data), &ni, NULL);
	if (!node_info_valid(sm, &ni, route))
		return;
	bool is_new;
	uint32_t node = place_node(sm, &ni, route, &is_new);
	if (node == TOPO_NONE)
		return;
	uint32_t arrival = topo_port(t, node, ni.local_port_num);
	bool new_link =
	    pr->from_port != TOPO_NONE && !pr->full && t->ports[pr->from_port].peer != arrival;
	if (pr->from_port != TOPO_NONE) {
		link_events(sm, pr, &ni, arrival);
		topo_link(t, pr->from_port, arrival);
	} else {
		t->sm_node = node;
		t->sm_port =
		    t->nodes[node].type == NODE_TYPE_SWITCH ? t->nodes[node].first_port : arrival;
	}
	explore_found(sm, pr, smp, &ni, node, arrival, is_new, new_link, route);
}

static void probe(struct sm *sm, uint32_t from_port, bool full)
{
	struct topo *t = &sm->topo;
	const struct topo_node *n = &t->nodes[t->ports[from_port].node];
	if (n->hops >= MAD_DR_MAX_HOPS) {
		log_warn(sm->log, "discover",
		         "fabric deeper than 63 hops: nothing found beyond " GUID_FMT " port %u",
		         n->guid, t->ports[from_port].num);
		return;
	}
	struct probe pr = {.from_port = from_port, .hops = (uint8_t)(n->hops + 1), .full = full};
	memcpy(pr.path, n->path, n->hops + 1u);
	pr.path[pr.hops] = t->ports[from_port].num;
	/* whose M_Key to present: the port that was there, else where the master said */
	uint32_t last = t->ports[from_port].last_peer;
	uint64_t kg = last != TOPO_NONE ? mkey_guid(t, last)
	                                : mkey_hop_hint(sm, n->guid, t->ports[from_port].num);
	sm_send_dr_probe(sm, kg, pr.path, pr.hops, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0,
	                 on_node_info, &pr, sizeof(pr));
}

static void on_port_info(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                         void *ctx)
{
	(void)res;
	const struct port_ref *pr = ctx;
	struct topo *t = &sm->topo;
	struct topo_port *port = &t->ports[pr->port];
	struct topo_node *n = &t->nodes[port->node];
	if (smp && pr->ext &&
	    (smp->dr_status & MAD_STATUS_INVALID_FIELD) == MAD_STATUS_INVALID_FIELD) {
		/* an SMA older than the extended speeds: ask it the old way from now on */
		char name[160];
		if (!n->pi_no_ext_am) /* once per node, not per port */
			log_rl(sm->log, &sm->rl_garbage, LOGL_NOTICE, "discover",
			       "%s refuses PortInfo with SMSupportExtendedSpeeds (an SMA older "
			       "than IBA "
			       "1.5): asked without it, and speeds beyond HDR stay hidden on it",
			       sm_node_name(sm, port->node, name, sizeof(name)));
		n->pi_no_ext_am = true;
		read_port(sm, port->node, port->num, pr->full);
		return;
	}
	if (!smp || smp->dr_status) {
		if (!pr->full && !smp && sm->rounds < 2) {
			/* its route may cross the link that just failed: again, by a new route */
			sm_dirty(sm, port->node);
			sm->retry = true;
			return;
		}
		if (!smp) {
			/* the next sweep reads it again */
			sm->probes_lost++;
			sm_dirty(sm, port->node);
		}
		char name[160];
		log_rl(sm->log, &sm->rl_no_answer, LOGL_WARN, "discover",
		       "no PortInfo for %s port %u%s",
		       sm_node_name(sm, port->node, name, sizeof(name)), port->num,
		       smp ? ": error status" : "");
		return;
	}
	bool was_up = topo_port_up(port);
	bool was_active = port->known && port->pi.port_state == PORT_STATE_ACTIVE;
	mad_port_info_decode(smp->data, sizeof(smp->data), &port->pi, NULL);
	port->known = true;
	/* a key the port shows (it is unprotected, or we presented it) is the key it carries */
	if (port->pi.mkey && (n->type != NODE_TYPE_SWITCH || port->num == 0))
		mkey_learned(sm, mkey_guid(t, pr->port), port->pi.mkey);
	bool forwards = n->type == NODE_TYPE_SWITCH || pr->port == t->sm_port;
	if (port->num == 0 && n->type == NODE_TYPE_SWITCH)
		return;
	if (!topo_port_up(port)) {
		if (port->peer != TOPO_NONE) {
			char name[160], g[20], pn[4], fg[20], fpn[4];
			const struct topo_port *far = &t->ports[port->peer];
			snprintf(g, sizeof(g), "0x%016" PRIx64, t->nodes[port->node].guid);
			snprintf(pn, sizeof(pn), "%u", port->num);
			snprintf(fg, sizeof(fg), "0x%016" PRIx64, t->nodes[far->node].guid);
			snprintf(fpn, sizeof(fpn), "%u", far->num);
			const char *kv[] = {
			    "node_guid", g,   "node_desc", t->nodes[port->node].desc,
			    "port",      pn,  "peer_guid", fg,
			    "peer_port", fpn, NULL};
			sm_event(sm, LOGL_NOTICE, "link_down", kv, "link down at %s port %u",
			         sm_node_name(sm, port->node, name, sizeof(name)), port->num);
			health_link_event(sm, pr->port, port->peer, false);
			/* the far end went down with it, whether or not we read it again */
			t->ports[port->peer].pi.port_state = PORT_STATE_DOWN;
			topo_unlink(t, pr->port);
			sm->structural = true;
			/* a host's link changes no route between switches (its LID stays where it
			 * was, unreachable with it): a link between two switches does */
			if (topo_is_switch(t, port->node) && topo_is_switch(t, far->node))
				sm->route_inputs = true;
		}
		return;
	}
	if (was_active && port->pi.port_state == PORT_STATE_INIT && port->peer != TOPO_NONE &&
	    port->num != 0 && forwards) {
		/* ACTIVE when last seen, INIT now: the link went down and came back up between
		 * two looks (faster than the traps tell), a flap like any other. Counted at the
		 * switch's end only: a CA read across that link (a host that power-cycled) would
		 * count the same flap again, with the CA's port as the near end. */
		health_link_event(sm, pr->port, port->peer, false);
		health_link_event(sm, pr->port, port->peer, true);
	}
	if (!forwards)
		return;
	/* look behind every up port whose far end is not known yet (a full sweep forgot all
	 * links but the one it came in by) */
	if (port->peer == TOPO_NONE) {
		if (!pr->full && !was_up)
			sm->structural = sm->route_inputs = true;
		probe(sm, pr->port, pr->full);
	}
}

static uint32_t present_switches(const struct topo *t)
{
	uint32_t n = 0;
	for (uint32_t s = 0; s < t->nsws; s++)
		n += t->nodes[t->sws[s].node].present;
	return n;
}

static void discover_end(struct sm *sm)
{
	struct topo *t = &sm->topo;
	if (t->sm_node == TOPO_NONE) {
		snprintf(sm->exit_reason, sizeof(sm->exit_reason),
		         "the SM's own port did not answer: nothing discovered");
		return;
	}
	uint32_t sws_before = present_switches(t);
	uint32_t lost = topo_update_paths(t, true);
	if (lost) {
		log_notice(sm->log, "discover", "%u node(s) no longer reachable", lost);
		sm->structural = true;
		if (present_switches(t) != sws_before)
			sm->route_inputs = true; /* switches went: routes move off them */
	}
	if (topo_aliases_follow(t))
		sm->structural = true;
	if (topo_pkeys_update(t, sm->cfg) < 0)
		log_err(sm->log, "discover", "out of memory: ports keep last sweep's P_Keys");
	struct sm_counts *c = &sm->counts;
	memset(c, 0, sizeof(*c));
	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct topo_node *n = &t->nodes[i];
		if (!n->present)
			continue;
		c->nodes++;
		if (n->type == NODE_TYPE_SWITCH)
			c->switches++;
		else
			c->cas++;
		for (unsigned p = n->type == NODE_TYPE_SWITCH ? 0 : 1; p <= n->nports; p++) {
			const struct topo_port *port = &t->ports[n->first_port + p];
			if (!port->known)
				continue;
			c->ports++;
			if (port->peer != TOPO_NONE && port->peer > n->first_port + p)
				c->links++;
		}
	}
}

void discover_reroute(struct sm *sm)
{
	topo_update_paths(&sm->topo, false);
}

void discover_full(struct sm *sm)
{
	struct topo *t = &sm->topo;
	t->sweep++;
	sm->rounds = 1; /* its next rounds (discover_switches) keep what it found */
	sm->structural = sm->route_inputs = false;
	/* a full sweep balances the routes afresh, but for a reload that changed no routing
	 * input: a priority raised or lowered to hand the subnet over keeps every route */
	sm->grew = !sm->keep_routes;
	sm->keep_routes = false;
	/* forget the links: this sweep finds them again */
	topo_forget_links(t);
	struct probe pr = {.from_port = TOPO_NONE, .hops = 0, .full = true};
	sm_send_dr(sm, TOPO_NONE, pr.path, 0, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, NULL, 0,
	           on_node_info, &pr, sizeof(pr));
}

static void on_psc_cleared(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                           void *ctx)
{
	(void)res;
	uint32_t node = *(const uint32_t *)ctx;
	if (smp && !smp->dr_status)
		mad_switch_info_decode(smp->data, sizeof(smp->data),
		                       &sm->topo.sws[sm->topo.nodes[node].sw].si, NULL);
}

/* A dirty switch's SwitchInfo: see whether it was reset, clear its PortStateChange, then
 * read its ports (after the clearing, so that a change while they are read sets it again). */
static void on_dirty_switch_info(struct sm *sm, const struct mad_result *res,
                                 const struct mad_smp *smp, void *ctx)
{
	(void)res;
	uint32_t node = *(const uint32_t *)ctx;
	struct topo_node *n = &sm->topo.nodes[node];
	if (!smp || smp->dr_status) {
		if (!smp && sm->rounds < 2) {
			/* its route may cross the link that just failed: again, by a new route */
			sm_dirty(sm, node);
			sm->retry = true;
		}
		return;
	}
	struct mad_switch_info si;
	mad_switch_info_decode(smp->data, sizeof(smp->data), &si, NULL);
	discover_switch_info(sm, node, &si);
	if (node < sm->silent_cap)
		sm->silent_mark[node] = false; /* it answers: not hung (its route had broken) */
	if (!sm->dry_run) {
		si.port_state_change = 1; /* writing 1 clears it */
		uint8_t data[64] = {0};
		mad_switch_info_encode(&si, data, sizeof(data), NULL);
		sm_send_dr(sm, node, NULL, 0, MAD_METHOD_SET, MAD_ATTR_SWITCH_INFO, 0, data,
		           sizeof(data), on_psc_cleared, &node, sizeof(node));
	}
	/* port 0 too while it has gone unread (a lost answer): it carries the switch's LID */
	for (unsigned p = sm->topo.ports[n->first_port].known ? 1 : 0; p <= n->nports; p++)
		read_port(sm, node, p, false);
}

/* The switches marked dirty: re-read their ports, explore what is new, and clear their
 * PortStateChange so the next light sweep sees only new changes. */
void discover_switches(struct sm *sm)
{
	struct topo *t = &sm->topo;
	if (sm->rounds++ == 0) {
		t->sweep++;
		sm->structural = sm->route_inputs = false;
		sm->grew = false;
	}
	sm->retry = false;
	/* the probes that got no answer in the first round, by the new routes */
	for (uint32_t i = 0; i < sm->reprobe.n; i++) {
		uint32_t p = sm->reprobe.v[i];
		const struct topo_port *port = &t->ports[p];
		if (t->nodes[port->node].present && port->peer == TOPO_NONE && topo_port_up(port))
			probe(sm, p, sm->heavy);
	}
	sm->reprobe.n = 0;
	for (uint32_t i = 0; i < t->nnodes && i < sm->dirty_cap; i++) {
		if (!sm->dirty[i])
			continue;
		sm->dirty[i] = false;
		struct topo_node *n = &t->nodes[i];
		if (!n->present)
			continue;
		if (n->type != NODE_TYPE_SWITCH) {
			/* a CA whose PortInfo was lost: its linked ports again */
			for (unsigned p = 1; p <= n->nports; p++)
				if (t->ports[n->first_port + p].peer != TOPO_NONE)
					read_port(sm, i, p, false);
			continue;
		}
		n->seen = t->sweep;
		/* read before clearing PortStateChange: a Set would write our LinearFDBTop back
		 * over a reset switch's and hide the reset */
		sm_send_dr(sm, i, NULL, 0, MAD_METHOD_GET, MAD_ATTR_SWITCH_INFO, 0, NULL, 0,
		           on_dirty_switch_info, &i, sizeof(i));
	}
}

void discover_finish(struct sm *sm)
{
	discover_end(sm);
}

/* ---- what the health report asks of the sweep (daemon/health_report.c) ---- */

void sm_anomaly(struct sm *sm, const char *fmt, ...)
{
	struct sm_anomalies *a = &sm->anomalies;
	a->total++;
	if (a->n == SM_ANOMALIES_KEPT)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->what[a->n++], sizeof(a->what[0]), fmt, ap);
	va_end(ap);
}

const struct sm_anomalies *sm_anomalies(const struct sm *sm)
{
	return &sm->anomalies;
}
