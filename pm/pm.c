/* The performance manager's sweep: a cursor over the ports with links, a window of
 * requests, and a pause while the SM sweeps (checked before every send, so a trap's repair
 * waits for at most pm_window answers already on their way). */
#include "pm/pm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/mad_types.h"
#include "mad/perf.h"
#include "util/vec.h"

enum { EXT_UNKNOWN, EXT_YES, EXT_NO };

struct pm_port_state {
	struct pm_port_stats s;
	uint64_t guid; /* the port this slot was for: a reused index starts afresh */
	uint8_t num;
	uint64_t last[PM_NCOUNTERS]; /* the last raw readings */
	bool have_last, have_last_data;
	double last_at, last_data_at;
};

struct pm {
	struct sm *sm;
	struct topo *t;
	struct mad_dispatcher *d;
	const struct log *log;
	const struct ibsmd_config *cfg;
	struct ev_loop *loop;
	struct pm_listener l;
	ev_timer sweep_timer, resume_timer;
	struct pm_port_state *ports;
	uint32_t ports_cap;
	uint8_t *node_ext;
	uint32_t node_ext_cap;
	uint32_t *targets;
	uint32_t targets_cap;
	uint32_t ntargets, next;
	unsigned inflight;
	bool active, stopped;
	double started;
	uint32_t timeouts[2], errors[2]; /* this sweep's, as pm_stats.last_* */
	struct pm_stats st;
	struct log_rl rl;
};

struct pm_req {
	struct pm *pm;
	uint32_t port;
	uint16_t clear; /* a Set: the CounterSelect it cleared */
};

static const char *const names[PM_NCOUNTERS] = {"symbol_errors",
                                                "link_error_recovery",
                                                "link_downed",
                                                "rcv_errors",
                                                "rcv_remote_phys_errors",
                                                "rcv_switch_relay_errors",
                                                "xmit_discards",
                                                "xmit_constraint_errors",
                                                "rcv_constraint_errors",
                                                "local_link_integrity_errors",
                                                "excessive_buffer_overruns",
                                                "vl15_dropped",
                                                "xmit_data_bytes",
                                                "rcv_data_bytes",
                                                "xmit_pkts",
                                                "rcv_pkts",
                                                "xmit_wait",
                                                "xmit_unicast_pkts",
                                                "rcv_unicast_pkts",
                                                "xmit_multicast_pkts",
                                                "rcv_multicast_pkts"};

const char *pm_counter_name(enum pm_counter c)
{
	return c < PM_NCOUNTERS ? names[c] : "?";
}

static uint32_t threshold_of(const struct pm *pm, enum pm_counter c)
{
	const struct ibsmd_config *cfg = pm->cfg;
	switch (c) {
	case PM_SYMBOL_ERRORS: return cfg->pm_threshold_symbol_errors;
	case PM_LINK_DOWNED: return cfg->pm_threshold_link_downed;
	case PM_RCV_ERRORS: return cfg->pm_threshold_rcv_errors;
	case PM_EXCESSIVE_BUFFER_OVERRUNS: return cfg->pm_threshold_excessive_buffer_overruns;
	case PM_XMIT_DISCARDS: return cfg->pm_threshold_xmit_discards;
	case PM_XMIT_WAIT: return cfg->pm_threshold_xmit_wait;
	default: return 0;
	}
}

static void pump(struct pm *pm);

static int send_req(struct pm *pm, uint32_t port, uint8_t method, uint16_t attr, uint16_t clear,
                    mad_result_fn cb)
{
	const struct topo *t = pm->t;
	uint16_t lid = t->ports[topo_lid_port(t, port)].lid;
	struct pm_req *rq = malloc(sizeof(*rq));
	if (!rq)
		return -ENOMEM;
	*rq = (struct pm_req){.pm = pm, .port = port, .clear = clear};
	uint8_t mad[MAD_SIZE];
	size_t len = mad_perf_request(mad, method, attr, t->ports[port].num, clear);
	struct mad_request r = {.to = {.lid = lid, .qpn = 1, .qkey = QP1_QKEY},
	                        .mad = mad,
	                        .len = len,
	                        .timeout_ms = 500,
	                        .retries = 1,
	                        .cb = cb,
	                        .ctx = rq};
	int rc = mad_dispatcher_send(pm->d, &r);
	if (rc < 0) {
		free(rq);
		return rc;
	}
	pm->inflight++;
	return 0;
}

static struct pm_port_state *state_of(struct pm *pm, uint32_t port)
{
	if (array_reserve(&pm->ports, &pm->ports_cap, (uint64_t)port + 1) < 0)
		return NULL;
	struct pm_port_state *ps = &pm->ports[port];
	uint64_t guid = topo_port_guid(pm->t, port);
	if (ps->guid != guid || ps->num != pm->t->ports[port].num) {
		memset(ps, 0, sizeof(*ps));
		ps->guid = guid;
		ps->num = pm->t->ports[port].num;
	}
	return ps;
}

/* A counter's growth since the last reading: a reading below the last means it was
 * cleared (by us, another tool, a reset), so all of it is new. */
static uint64_t grown(uint64_t cur, uint64_t last)
{
	return cur >= last ? cur - last : cur;
}

/* The sweep ended when every port was asked and every answer came. */
static void sweep_end(struct pm *pm)
{
	if (!pm->active || pm->next < pm->ntargets || pm->inflight)
		return;
	pm->active = false;
	pm->st.sweeps++;
	pm->st.last_sweep_s = ev_now(pm->loop) - pm->started;
	memcpy(pm->st.last_timeouts, pm->timeouts, sizeof(pm->timeouts));
	memcpy(pm->st.last_errors, pm->errors, sizeof(pm->errors));
	log_debug(pm->log, "pm", "sweep %" PRIu64 ": %u ports in %.3f s", pm->st.sweeps,
	          pm->st.ports, pm->st.last_sweep_s);
}

static void finish_one(struct pm *pm)
{
	pm->inflight--;
	sweep_end(pm);
	pump(pm);
}

/* The end of a request: its port, the request freed; false when the dispatcher cancelled
 * it (at shutdown: nothing more to do). */
static bool req_end(void *ctx, const struct mad_result *res, struct pm **pm, uint32_t *port)
{
	struct pm_req *rq = ctx;
	*pm = rq->pm;
	*port = rq->port;
	free(rq);
	return res->error != -ECANCELED;
}

/* The attribute of a good answer, or NULL (no answer, an error status, cut short). */
static const uint8_t *answer_data(const struct mad_result *res, size_t *len)
{
	if (res->error || (res->status & 0x7fff) || res->len < MAD_SIZE)
		return NULL;
	*len = res->len - MAD_PERF_DATA_OFFSET;
	return res->mad + MAD_PERF_DATA_OFFSET;
}

static void on_clear(struct mad_dispatcher *d, const struct mad_result *res, void *ctx)
{
	(void)d;
	struct pm_req *rq = ctx;
	struct pm *pm = rq->pm;
	if (res->error != -ECANCELED && !res->error && !(res->status & 0x7fff) &&
	    (uint64_t)rq->port < pm->ports_cap) {
		struct pm_port_state *ps = &pm->ports[rq->port];
		for (unsigned c = 0; c < 16; c++)
			if (rq->clear >> c & 1)
				ps->last[c < PM_NERRORS ? c : PM_XMIT_DATA + (c - 12)] = 0;
		pm->st.clears++;
	}
	free(rq);
	if (res->error != -ECANCELED)
		finish_one(pm);
}

static void on_ext(struct mad_dispatcher *d, const struct mad_result *res, void *ctx)
{
	(void)d;
	struct pm *pm;
	uint32_t port;
	if (!req_end(ctx, res, &pm, &port))
		return;
	uint32_t node = pm->t->ports[port].node;
	struct mad_port_counters_ext x;
	size_t len = 0;
	const uint8_t *data = answer_data(res, &len);
	if (!data || mad_port_counters_ext_decode(data, len, &x, NULL) < 0) {
		/* a node that does not answer it gets the 32-bit counters from now on */
		if (!res->error && node < pm->node_ext_cap)
			pm->node_ext[node] = EXT_NO;
		finish_one(pm);
		return;
	}
	if (node < pm->node_ext_cap)
		pm->node_ext[node] = EXT_YES;
	struct pm_port_state *ps = state_of(pm, port);
	if (ps) {
		ps->s.ext = true;
		double now = ev_now(pm->loop);
		static const unsigned which[8] = {PM_XMIT_DATA,  PM_RCV_DATA,   PM_XMIT_PKTS,
		                                  PM_RCV_PKTS,   PM_XMIT_UPKTS, PM_RCV_UPKTS,
		                                  PM_XMIT_MPKTS, PM_RCV_MPKTS};
		uint64_t cur[8] = {x.xmit_data,  x.rcv_data,  x.xmit_pkts,  x.rcv_pkts,
		                   x.xmit_upkts, x.rcv_upkts, x.xmit_mpkts, x.rcv_mpkts};
		uint64_t dx = 0, dr = 0;
		for (unsigned i = 0; i < 8; i++) {
			unsigned c = which[i];
			uint64_t g = grown(cur[i], ps->last[c]);
			if (c == PM_XMIT_DATA || c == PM_RCV_DATA)
				g *= 4; /* words on the wire */
			ps->s.total[c] += g;
			ps->last[c] = cur[i];
			if (c == PM_XMIT_DATA)
				dx = g;
			if (c == PM_RCV_DATA)
				dr = g;
		}
		if (ps->have_last_data && now > ps->last_data_at) {
			ps->s.xmit_rate = (double)dx / (now - ps->last_data_at);
			ps->s.rcv_rate = (double)dr / (now - ps->last_data_at);
		}
		ps->have_last_data = true;
		ps->last_data_at = now;
	}
	finish_one(pm);
}

static void on_counters(struct mad_dispatcher *d, const struct mad_result *res, void *ctx)
{
	(void)d;
	struct pm *pm;
	uint32_t port;
	if (!req_end(ctx, res, &pm, &port))
		return;
	struct mad_port_counters pc;
	size_t len = 0;
	const uint8_t *data = answer_data(res, &len);
	if (!data || mad_port_counters_decode(data, len, &pc, NULL) < 0) {
		pm->st.unanswered++;
		unsigned ca = !topo_is_switch(pm->t, pm->t->ports[port].node);
		if (res->error)
			pm->timeouts[ca]++;
		else
			pm->errors[ca]++;
		log_rl(pm->log, &pm->rl, LOGL_INFO, "pm", "no PortCounters from LID %u port %u: %s",
		       pm->t->ports[topo_lid_port(pm->t, port)].lid, pm->t->ports[port].num,
		       res->error ? strerror(-res->error) : mad_status_str(res->status));
		finish_one(pm);
		return;
	}
	pm->st.reads++;
	pm->st.ports++;
	struct pm_port_state *ps = state_of(pm, port);
	if (!ps) {
		finish_one(pm);
		return;
	}
	const uint64_t cur[PM_XMIT_WAIT + 1] = {
	    [PM_SYMBOL_ERRORS] = pc.symbol_errors,
	    [PM_LINK_ERROR_RECOVERY] = pc.link_error_recovery,
	    [PM_LINK_DOWNED] = pc.link_downed,
	    [PM_RCV_ERRORS] = pc.rcv_errors,
	    [PM_RCV_REMOTE_PHYS_ERRORS] = pc.rcv_remote_phys_errors,
	    [PM_RCV_SWITCH_RELAY_ERRORS] = pc.rcv_switch_relay_errors,
	    [PM_XMIT_DISCARDS] = pc.xmit_discards,
	    [PM_XMIT_CONSTRAINT_ERRORS] = pc.xmit_constraint_errors,
	    [PM_RCV_CONSTRAINT_ERRORS] = pc.rcv_constraint_errors,
	    [PM_LOCAL_LINK_INTEGRITY_ERRORS] = pc.local_link_integrity_errors,
	    [PM_EXCESSIVE_BUFFER_OVERRUNS] = pc.excessive_buffer_overruns,
	    [PM_VL15_DROPPED] = pc.vl15_dropped,
	    [PM_XMIT_DATA] = pc.xmit_data,
	    [PM_RCV_DATA] = pc.rcv_data,
	    [PM_XMIT_PKTS] = pc.xmit_pkts,
	    [PM_RCV_PKTS] = pc.rcv_pkts,
	    [PM_XMIT_WAIT] = pc.xmit_wait};
	/* each field's width: past half of it, the counter is cleared before it saturates */
	static const uint64_t max[PM_XMIT_WAIT + 1] = {
	    0xffff, 0xff, 0xff,   0xffff,     0xffff,     0xffff,     0xffff,     0xff,      0xff,
	    0xf,    0xf,  0xffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff};
	uint32_t node = pm->t->ports[port].node;
	bool ext = node < pm->node_ext_cap && pm->node_ext[node] != EXT_NO;
	double now = ev_now(pm->loop);
	uint16_t clear = 0;
	uint64_t dx = 0, dr = 0;
	for (unsigned c = 0; c <= PM_XMIT_WAIT; c++) {
		bool traffic = c >= PM_XMIT_DATA && c <= PM_RCV_PKTS;
		if (traffic && ext)
			continue; /* PortCountersExtended counts these, without saturating */
		uint64_t g = grown(cur[c], ps->last[c]);
		ps->s.total[c] += (c == PM_XMIT_DATA || c == PM_RCV_DATA) ? g * 4 : g;
		if (c == PM_XMIT_DATA)
			dx = g * 4;
		else if (c == PM_RCV_DATA)
			dr = g * 4;
		ps->last[c] = cur[c];
		if (c < PM_NERRORS && !ps->have_last)
			ps->s.at_start[c] = ps->s.total[c];
		if (c < PM_NERRORS || c == PM_XMIT_WAIT) {
			if (c < PM_NERRORS)
				pm->st.errors[c] += g;
			uint32_t th = threshold_of(pm, (enum pm_counter)c);
			if (ps->have_last && th && g >= th && pm->l.threshold) {
				struct pm_event ev = {.port = port,
				                      .node_guid = pm->t->nodes[node].guid,
				                      .port_num = pm->t->ports[port].num,
				                      .node_desc = pm->t->nodes[node].desc,
				                      .counter = (enum pm_counter)c,
				                      .delta = g,
				                      .threshold = th,
				                      .seconds = now - ps->last_at};
				pm->l.threshold(pm->l.ctx, &ev);
			}
		}
		if (c <= PM_RCV_PKTS && cur[c] >= (max[c] + 1) / 2) {
			/* CounterSelect: bits 0-11 the errors, 12-15 the data counters */
			unsigned bit = c < PM_NERRORS ? c : 12 + (c - PM_XMIT_DATA);
			clear |= (uint16_t)(1u << bit);
		}
	}
	if (!ext && ps->have_last && now > ps->last_at) {
		ps->s.xmit_rate = (double)dx / (now - ps->last_at);
		ps->s.rcv_rate = (double)dr / (now - ps->last_at);
	}
	pm_rate_roll(&ps->s.window, ps->s.total, now, !ps->have_last);
	ps->have_last = true;
	ps->last_at = now;
	ps->s.read = true;
	if (clear)
		send_req(pm, port, MAD_METHOD_SET, MAD_ATTR_PORT_COUNTERS, clear, on_clear);
	if (ext)
		send_req(pm, port, MAD_METHOD_GET, MAD_ATTR_PORT_COUNTERS_EXT, 0, on_ext);
	finish_one(pm);
}

static void pump(struct pm *pm)
{
	if (pm->stopped || !pm->active)
		return;
	unsigned window = pm->cfg->pm_window ? pm->cfg->pm_window : 1;
	while (pm->inflight < window && pm->next < pm->ntargets) {
		if (sm_status(pm->sm).sweeping) {
			/* the SM's work first: try again shortly */
			pm->st.deferred++;
			if (!ev_is_active(&pm->resume_timer)) {
				ev_timer_set(&pm->resume_timer, 0.1, 0.);
				ev_timer_start(pm->loop, &pm->resume_timer);
			}
			return;
		}
		uint32_t p = pm->targets[pm->next++];
		if (p >= pm->t->nports || !topo_port_linked(pm->t, p))
			continue; /* gone since the sweep began */
		if (send_req(pm, p, MAD_METHOD_GET, MAD_ATTR_PORT_COUNTERS, 0, on_counters) < 0)
			break;
	}
	sweep_end(pm);
}

static void resume_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	pump(w->data);
}

static void sweep_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)revents;
	struct pm *pm = w->data;
	if (pm->active || pm->stopped)
		return; /* the last sweep is still going: the interval is too short for it */
	struct mad_sm_info si = sm_info(pm->sm);
	struct sm_status st = sm_status(pm->sm);
	if (si.state != SM_STATE_MASTER || !st.up)
		return;
	const struct topo *t = pm->t;
	/* every port's state at once, not doubling as the sweep reaches higher indexes: the
	 * first sweep of a large fabric, paused by every SM sweep, can take minutes, and the
	 * heap grew in steps all along it */
	if (array_reserve(&pm->targets, &pm->targets_cap, t->nports + 1ull) < 0 ||
	    array_reserve(&pm->node_ext, &pm->node_ext_cap, t->nnodes + 1ull) < 0 ||
	    array_reserve(&pm->ports, &pm->ports_cap, t->nports + 1ull) < 0)
		return;
	pm->ntargets = 0;
	for (uint32_t p = 0; p < t->nports; p++) {
		if (!topo_port_linked(t, p) || !t->ports[topo_lid_port(t, p)].lid)
			continue;
		if (pm->cfg->pm_ignore_cas && !topo_is_switch(t, t->ports[p].node))
			continue; /* OpenSM's perfmgr_ignore_cas: the hosts' own ports are theirs */
		pm->targets[pm->ntargets++] = p;
	}
	pm->next = 0;
	pm->st.ports = 0;
	memset(pm->timeouts, 0, sizeof(pm->timeouts));
	memset(pm->errors, 0, sizeof(pm->errors));
	pm->active = true;
	pm->started = ev_now(loop);
	pump(pm);
}

struct pm *pm_new(struct sm *sm, const struct pm_listener *l)
{
	struct pm *pm = calloc(1, sizeof(*pm));
	if (!pm)
		return NULL;
	pm->sm = sm;
	pm->t = sm_fabric(sm);
	pm->d = sm_dispatcher(sm);
	pm->log = sm_log(sm);
	pm->cfg = sm_config(sm);
	pm->loop = sm_loop(sm);
	if (l)
		pm->l = *l;
	pm->rl = LOG_RL_DEFAULT;
	ev_init(&pm->sweep_timer, sweep_cb);
	pm->sweep_timer.data = pm;
	ev_init(&pm->resume_timer, resume_cb);
	pm->resume_timer.data = pm;
	return pm;
}

void pm_reconfigure(struct pm *pm)
{
	if (!pm || pm->stopped)
		return;
	ev_timer_stop(pm->loop, &pm->sweep_timer);
	if (pm->cfg->pm_interval_s) {
		double s = (double)pm->cfg->pm_interval_s;
		ev_timer_set(&pm->sweep_timer, s, s);
		ev_timer_start(pm->loop, &pm->sweep_timer);
	}
}

void pm_stop(struct pm *pm)
{
	if (!pm || pm->stopped)
		return;
	pm->stopped = true;
	ev_timer_stop(pm->loop, &pm->sweep_timer);
	ev_timer_stop(pm->loop, &pm->resume_timer);
}

void pm_free(struct pm *pm)
{
	if (!pm)
		return;
	free(pm->ports);
	free(pm->node_ext);
	free(pm->targets);
	free(pm);
}

const struct pm_stats *pm_stats(const struct pm *pm)
{
	return &pm->st;
}

const struct pm_port_stats *pm_port(const struct pm *pm, uint32_t port)
{
	if ((uint64_t)port >= pm->ports_cap || !pm->ports[port].s.read)
		return NULL;
	return &pm->ports[port].s;
}
