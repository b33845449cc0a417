/* Metrics. The HTTP side is libmicrohttpd run from our event loop (daemon/httpd.c: its epoll
 * descriptor is one more ev_io, MHD_run does the work), so it never touches the SM from
 * another thread. */
#include "daemon/metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "cc/cc.h"
#include "pm/pm.h"
#include "util/escape.h"
#include "util/statefile.h"

#define P                   "ibsmd_"
#define METRICS_CONNECTIONS 16 /* at once, all addresses together */

static void help(FILE *out, const char *name, const char *type, const char *text)
{
	fprintf(out, "# HELP " P "%s %s\n# TYPE " P "%s %s\n", name, text, name, type);
}

static void gauge(FILE *out, const char *name, const char *text, double v)
{
	help(out, name, "gauge", text);
	fprintf(out, P "%s %.17g\n", name, v);
}

static void counter(FILE *out, const char *name, const char *text, uint64_t v)
{
	help(out, name, "counter", text);
	fprintf(out, P "%s %" PRIu64 "\n", name, v);
}

static const char *state_label(uint8_t s)
{
	switch (s) {
	case SM_STATE_MASTER: return "master";
	case SM_STATE_STANDBY: return "standby";
	case SM_STATE_DISCOVERING: return "discovering";
	default: return "not_active";
	}
}

static const uint8_t states[] = {SM_STATE_MASTER, SM_STATE_STANDBY, SM_STATE_DISCOVERING,
                                 SM_STATE_NOT_ACTIVE};

/* This SM, the subnet's size and the other SMs. */
static void render_sm(FILE *out, struct sm *sm, const struct sm_status *st)
{
	struct mad_sm_info si = sm_info(sm);
	const struct sm_counts *k = &st->counts;

	help(out, "info", "gauge", "this SM: its port GUID");
	fprintf(out, P "info{guid=\"0x%016" PRIx64 "\"} 1\n", si.guid);
	help(out, "sm_state", "gauge", "1 for the SM's state (IBA SMInfo:SMState)");
	for (size_t i = 0; i < sizeof(states); i++)
		fprintf(out, P "sm_state{state=\"%s\"} %d\n", state_label(states[i]),
		        si.state == states[i]);
	gauge(out, "sm_priority", "the SM's priority in the election", si.priority);
	gauge(out, "subnet_up", "1 once every linked port is ACTIVE", st->up);
	help(out, "nodes", "gauge", "nodes in the subnet, by type");
	fprintf(out, P "nodes{type=\"switch\"} %u\n" P "nodes{type=\"ca\"} %u\n", k->switches,
	        k->cas);
	gauge(out, "ports", "ports in the subnet", k->ports);
	gauge(out, "links", "links in the subnet", k->links);
	gauge(out, "lids", "unicast LIDs assigned", k->lids);
	help(out, "other_sms", "gauge", "other SMs this one knows, by state");
	uint32_t nrem = sm_remote_count(sm), by_state[4] = {0}, foreign = 0;
	for (uint32_t i = 0; i < nrem; i++) {
		struct sm_remote_info r;
		if (sm_remote_get(sm, i, &r)) {
			by_state[r.info.state & 3]++;
			foreign += r.rogue;
		}
	}
	for (size_t i = 0; i < sizeof(states); i++)
		fprintf(out, P "other_sms{state=\"%s\"} %u\n", state_label(states[i]),
		        by_state[states[i] & 3]);
	gauge(out, "foreign_sms", "SMs that showed another subnet's SM_Key", foreign);
}

/* The sweeps: how many, what they took and sent. */
static void render_sweeps(FILE *out, const struct sm_status *st)
{
	const struct sm_counts *k = &st->counts;
	const struct sm_phase_times *tm = &st->times;

	counter(out, "sweeps_total", "sweeps started (full and partial; light ones not counted)",
	        st->sweeps);
	counter(out, "light_sweeps_total",
	        "light sweeps ended (each reads every switch's SwitchInfo)", st->light_sweeps);
	gauge(out, "sweeping", "1 while a sweep is under way", st->sweeping);
	gauge(out, "routing", "1 while a routing engine computes (off the event loop)",
	      st->routing);
	counter(out, "traps_total", "traps received from the fabric", st->traps);
	gauge(out, "links_quarantined",
	      "links disabled for flapping or babbling (link_flap_threshold, trap_flood_threshold)",
	      st->links_held);
	help(out, "sweep_phase_seconds", "gauge", "the last sweep's phases, in seconds");
	const struct {
		const char *name;
		double v;
	} phases[] = {{"discover", tm->discover}, {"lids", tm->lids},     {"read", tm->read},
	              {"route", tm->route},       {"tables", tm->tables}, {"arm", tm->arm},
	              {"activate", tm->activate}, {"total", tm->total}};
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		fprintf(out, P "sweep_phase_seconds{phase=\"%s\"} %.6f\n", phases[i].name,
		        phases[i].v);
	help(out, "sweep_sets", "gauge", "what the last sweep sent, by kind");
	fprintf(out,
	        P "sweep_sets{kind=\"lft_block\"} %u\n" P "sweep_sets{kind=\"port_info\"} %u\n" P
	          "sweep_sets{kind=\"vl_table\"} %u\n" P "sweep_sets{kind=\"pkey_block\"} %u\n",
	        k->lft_blocks_sent, k->port_sets, k->vl_sets, k->pkey_sets);
}

static void render_mads(FILE *out, const struct mad_counters *mc)
{
	counter(out, "mads_sent_total", "MADs sent, retries and RMPP segments included", mc->sent);
	counter(out, "mads_received_total", "MADs received", mc->received);
	counter(out, "mad_transactions_total", "requests sent", mc->requests);
	counter(out, "mad_retries_total", "attempts after the first", mc->retried);
	counter(out, "mad_timeouts_total", "requests unanswered after every retry", mc->timed_out);
	counter(out, "mads_unmatched_total", "answers to no request in flight (late, duplicate)",
	        mc->unmatched);
	counter(out, "mads_malformed_total", "MADs dropped as malformed", mc->malformed);
	gauge(out, "mads_in_flight", "requests waiting for an answer", mc->inflight);
	/* RMPP (the SA's tables out, large requests in): a client that stops ACKing holds a
	 * send slot until the transfer ends one of these ways, which is what these show */
	help(out, "rmpp_transfers_total", "counter", "RMPP transfers begun, by direction");
	fprintf(out,
	        P "rmpp_transfers_total{direction=\"sent\"} %" PRIu64 "\n" P
	          "rmpp_transfers_total{direction=\"received\"} %" PRIu64 "\n",
	        mc->rmpp_sent_transfers, mc->rmpp_recv_transfers);
	counter(out, "rmpp_aborted_total", "RMPP transfers aborted (timed out, or ABORT/STOP)",
	        mc->rmpp_aborted);
	counter(out, "rmpp_reclaimed_total",
	        "RMPP transfers sent whole but never ACKed, ended by the requester's next ask",
	        mc->rmpp_reclaimed);
	counter(out, "rmpp_refused_total",
	        "unasked RMPP transfers refused: too many at once from one port, or too large",
	        mc->rmpp_refused);
}

/* The SA's requests and answers, its Reports and what it holds. */
static void render_sa(FILE *out, struct sa *s, const struct mad_counters *mc)
{
	const struct sa_stats *sa = sa_stats(s);
	struct sa_counts sc = sa_counts(s);

	counter(out, "sa_requests_total", "SA requests received", sa->requests);
	help(out, "sa_answers_total", "counter", "SA answers by attribute and status");
	for (unsigned i = 0; i < sa->nattrs; i++) {
		const struct sa_attr_stats *a = &sa->attr[i];
		fprintf(out,
		        P "sa_answers_total{attribute=\"%s\",status=\"ok\"} %" PRIu64 "\n" P
		          "sa_answers_total{attribute=\"%s\",status=\"no_records\"} %" PRIu64 "\n" P
		          "sa_answers_total{attribute=\"%s\",status=\"busy\"} %" PRIu64 "\n" P
		          "sa_answers_total{attribute=\"%s\",status=\"error\"} %" PRIu64 "\n",
		        a->name, a->ok, a->name, a->no_records, a->name, a->busy, a->name,
		        a->error);
	}
	counter(out, "sa_malformed_total", "SA requests dropped as malformed", sa->malformed);
	counter(out, "sa_bad_sm_key_total", "SA requests discarded for a wrong SM_Key",
	        sa->bad_key);
	counter(out, "sa_reports_sent_total", "event Reports sent to subscribers",
	        sa->reports_sent);
	/* the Reports' own lane (mad/dispatcher.c): what silent subscribers hold up */
	gauge(out, "sa_reports_in_flight", "Reports waiting for a subscriber's answer",
	      mc->report_inflight);
	gauge(out, "sa_reports_waiting", "Reports queued for their subscribers", mc->report_queued);
	counter(out, "sa_reports_dropped_total",
	        "Reports dropped unsent: a subscriber's backlog or all subscribers' full",
	        mc->report_dropped);
	gauge(out, "sa_multicast_groups", "multicast groups", sc.groups);
	gauge(out, "sa_services", "registered services", sc.services);
	gauge(out, "sa_subscriptions", "event subscriptions (InformInfo)", sc.subscriptions);
	counter(out, "sa_state_writes_total", "writes of the SA's state file (sa-state)",
	        sa->state_writes);
}

/* The performance manager's sweeps and the ports' error counters. */
static void render_pm(FILE *out, const struct pm *pm, struct sm *sm)
{
	const struct pm_stats *ps = pm_stats(pm);
	counter(out, "pm_sweeps_total", "performance manager sweeps of every port's counters",
	        ps->sweeps);
	gauge(out, "pm_sweep_seconds", "the last performance manager sweep's duration",
	      ps->last_sweep_s);
	gauge(out, "pm_ports", "ports read in the last performance manager sweep", ps->ports);
	counter(out, "pm_unanswered_total", "PortCounters requests without an answer",
	        ps->unanswered);
	help(out, "port_errors_total", "counter",
	     "error counters summed over every port, since ibsmd started reading them");
	for (unsigned i = 0; i < PM_NERRORS; i++)
		fprintf(out, P "port_errors_total{counter=\"%s\"} %" PRIu64 "\n",
		        pm_counter_name((enum pm_counter)i), ps->errors[i]);
	/* per port, only those with errors: every port of a large fabric would be
	 * hundreds of thousands of series, nearly all zero */
	help(out, "port_counter_total", "counter",
	     "a port's error counter, for ports that have counted errors");
	const struct topo *t = sm_fabric(sm);
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct pm_port_stats *s = pm_port(pm, p);
		if (!s)
			continue;
		const struct topo_node *nd = &t->nodes[t->ports[p].node];
		for (unsigned i = 0; i < PM_NERRORS; i++) {
			if (!s->total[i])
				continue;
			fprintf(out,
			        P "port_counter_total{guid=\"0x%016" PRIx64
			          "\",port=\"%u\",node=\"",
			        nd->guid, t->ports[p].num);
			prom_put_label(out, nd->desc, sizeof(nd->desc));
			fprintf(out, "\",counter=\"%s\"} %" PRIu64 "\n",
			        pm_counter_name((enum pm_counter)i), s->total[i]);
		}
	}
}

/* The congestion control manager's work. */
static void render_cc(FILE *out, const struct ccm *ccm)
{
	const struct ccm_stats *cs = ccm_stats(ccm);
	counter(out, "cc_passes_total", "congestion control passes (a sweep's end, a reload)",
	        cs->passes);
	counter(out, "cc_sets_total", "congestion control settings Sets sent", cs->sets);
	counter(out, "cc_refused_total", "congestion control requests answered with an error",
	        cs->refused);
	counter(out, "cc_timeouts_total", "congestion control requests without an answer",
	        cs->timeouts);
	help(out, "cc_ports", "gauge",
	     "ports holding the congestion control settings, and ports left alone (no CC agent, "
	     "or no answers)");
	fprintf(out, P "cc_ports{state=\"programmed\"} %u\n", cs->programmed);
	fprintf(out, P "cc_ports{state=\"unavailable\"} %u\n", cs->unavailable);
}

/* AddressSanitizer's count of its allocator's live bytes, present only in its builds. */
extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

/* Bytes in live allocations: what a leak grows, where RSS also keeps what the allocator
 * holds for reuse. glibc's in-use chunks (headers included), or under ASan (whose arenas
 * replace glibc's) the bytes asked for; 0 where the C library cannot say. */
static uint64_t heap_in_use(void)
{
	if (__sanitizer_get_current_allocated_bytes)
		return __sanitizer_get_current_allocated_bytes();
#ifdef __GLIBC__
#if __GLIBC_PREREQ(2, 33)
	struct mallinfo2 mi = mallinfo2();
	return (uint64_t)mi.uordblks + mi.hblkhd;
#else
	struct mallinfo mi = mallinfo(); /* int fields: wrong past 2 GB, enough for a trend */
	return (uint64_t)(unsigned)mi.uordblks + (unsigned)mi.hblkhd;
#endif
#else
	return 0;
#endif
}

void metrics_render(const struct metrics *m, FILE *out)
{
	const struct control *c = m->ctl;
	struct sm *sm = c->rl->sm;
	struct sm_status st = sm_status(sm);
	const struct mad_counters *mc = mad_dispatcher_counters(sm_dispatcher(sm));
	const struct sync_stats *sy = sync_stats(c->rl->sync);

	render_sm(out, sm, &st);
	render_sweeps(out, &st);
	render_mads(out, mc);
	render_sa(out, c->sa, mc);
	if (c->pm)
		render_pm(out, c->pm, sm);
	if (c->ccm && c->rl->cfg->cc.enable)
		render_cc(out, c->ccm);
	gauge(out, "sync_items", "items of state mirrored to standbys (held, or copied)",
	      sy->items);
	gauge(out, "sync_in_step", "standby: 1 when its copy equals the master's", sy->in_step);
	gauge(out, "sync_config_differs", "1 when a peer SM is configured differently",
	      sync_config_differs(c->rl->sync));
	gauge(out, "heap_bytes", "bytes in the daemon's live heap allocations (0: not known here)",
	      (double)heap_in_use());
	metrics_render_ports(out, c->pm, sm_fabric(sm), c->rl->cfg);
}

/* ---- the file ---- */

static void file_path(struct metrics *m)
{
	const struct ibsmd_config *cfg = m->ctl->rl->cfg;
	if (cfg->metrics_file[0])
		snprintf(m->file, sizeof(m->file), "%s", cfg->metrics_file);
	else
		snprintf(m->file, sizeof(m->file), "%s/ibsmd.prom", cfg->state_dir);
}

static void write_file(struct metrics *m)
{
	char dir[300], *slash;
	snprintf(dir, sizeof(dir), "%s", m->file);
	slash = strrchr(dir, '/');
	const char *name = slash ? slash + 1 : dir;
	if (slash)
		*slash = 0;
	struct statefile sf;
	/* node_exporter reads the file whole or not at all only if it is renamed into place */
	if (statefile_begin(&sf, slash ? dir : ".", name, 0644) < 0) {
		log_rl(m->ctl->rl->log, &m->rl, LOGL_WARN, "metrics", "cannot write %s: %s",
		       m->file, strerror(errno));
		return;
	}
	metrics_render(m, sf.f);
	if (statefile_commit(&sf) < 0) {
		log_rl(m->ctl->rl->log, &m->rl, LOGL_WARN, "metrics", "cannot write %s: %s",
		       m->file, strerror(errno));
		return;
	}
	m->written++;
}

static void file_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	write_file(w->data);
}

void metrics_reconfigure(struct metrics *m)
{
	if (!m->loop)
		return;
	file_path(m);
	ev_timer_stop(m->loop, &m->file_timer);
	unsigned s = m->ctl->rl->cfg->metrics_interval_s;
	if (s) {
		ev_timer_set(&m->file_timer, 0., (double)s);
		ev_timer_start(m->loop, &m->file_timer);
	}
}

/* ---- HTTP ---- */

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **state)
{
	(void)version;
	(void)upload_data;
	struct metrics *m = cls;
	/* answered on the last call, once the request is all in (a body is read and dropped):
	 * MHD closes a connection answered before, and a scraper would open a new one for every
	 * scrape */
	static const char headers_seen;
	if (!*state) {
		*state = (void *)&headers_seen;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	char *buf = NULL;
	size_t len = 0;
	unsigned code = MHD_HTTP_OK;
	FILE *out = open_memstream(&buf, &len);
	if (!out)
		return MHD_NO;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		code = MHD_HTTP_METHOD_NOT_ALLOWED;
		fprintf(out, "only GET\n");
	} else if (!strcmp(url, "/metrics")) {
		metrics_render(m, out);
		m->served++;
	} else {
		code = MHD_HTTP_NOT_FOUND;
		fprintf(out, "ibsmd: the metrics are at /metrics\n");
	}
	if (fclose(out) != 0) {
		free(buf);
		return MHD_NO;
	}
	struct MHD_Response *r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	enum MHD_Result ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

int metrics_start(struct metrics *m, struct control *ctl, struct ev_loop *loop)
{
	memset(m, 0, sizeof(*m));
	m->ctl = ctl;
	m->loop = loop;
	m->rl = LOG_RL_INIT(1, 60000);
	ev_init(&m->file_timer, file_cb);
	m->file_timer.data = m;
	metrics_reconfigure(m);
	if (m->file[0]) { /* what a killed predecessor left half written */
		char dir[300], *slash;
		snprintf(dir, sizeof(dir), "%s", m->file);
		slash = strrchr(dir, '/');
		if (slash) {
			*slash = 0;
			statefile_discard_tmp(dir, slash + 1);
		} else {
			statefile_discard_tmp(".", dir);
		}
	}
	const struct ibsmd_config *cfg = ctl->rl->cfg;
	const struct log *lg = ctl->rl->log;
	if (!cfg->metrics_listen[0])
		return 0;
	struct sockaddr_storage ss;
	char why[256];
	if (httpd_parse_listen(cfg->metrics_listen, &ss, why, sizeof(why)) < 0) {
		log_err(lg, "metrics", "metrics_listen %s: no HTTP endpoint", why);
		return -1;
	}
	if (httpd_listen(&m->http, &ss, why, sizeof(why)) < 0) {
		log_err(lg, "metrics", "cannot serve metrics on %s: %s; no HTTP endpoint",
		        cfg->metrics_listen, why);
		return -1;
	}
	struct MHD_Daemon *mhd =
	    MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL, on_request, m,
	                     MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_CONNECTIONS,
	                     MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->metrics_per_address,
	                     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
	if (!mhd) {
		log_err(lg, "metrics", "cannot serve metrics on %s: %s; no HTTP endpoint",
		        cfg->metrics_listen, strerror(errno));
		httpd_detach(&m->http);
		return -1;
	}
	httpd_attach(&m->http, mhd, loop, lg, "metrics",
	             (struct httpd_limits){METRICS_CONNECTIONS, cfg->metrics_per_address,
	                                   "metrics_per_address"});
	log_notice(lg, "metrics", "serving Prometheus metrics on http://%s/metrics",
	           cfg->metrics_listen);
	return 0;
}

void metrics_stop(struct metrics *m)
{
	if (!m->loop)
		return;
	ev_timer_stop(m->loop, &m->file_timer);
	httpd_detach(&m->http);
	m->loop = NULL;
}
