/* The status, gathered from the SM, the dispatcher, the SA and the sync into one struct of
 * numbers first, then printed as text or JSON, so both say the same. */
#include "daemon/status.h"

#include <inttypes.h>
#include <string.h>

#include "daemon/control.h"
#include "cc/cc.h"
#include "pm/pm.h"

/* SA requests per second over the samples (up to a minute), or since the start. */
static double sa_rate(const struct control *c, uint64_t now_requests, double now)
{
	if (!c->nsamples)
		return now > c->started ? (double)now_requests / (now - c->started) : 0.;
	unsigned oldest = c->nsamples < CONTROL_RATE_SAMPLES ? 0 : c->next;
	double dt = now - c->sa_at[oldest];
	return dt > 0.5 ? (double)(now_requests - c->sa_req[oldest]) / dt : 0.;
}

/* The JSON's SA, performance manager and sync parts. */
static void json_tail(const struct control *c, FILE *out, double rate)
{
	const struct sa_stats *sa = sa_stats(c->sa);
	const struct sync_stats *sy = sync_stats(c->rl->sync);
	fprintf(out,
	        "\"sa\":{\"requests\":%" PRIu64 ",\"answered\":%" PRIu64 ",\"no_records\":%" PRIu64
	        ",\"errors\":%" PRIu64 ",\"malformed\":%" PRIu64 ",\"busy\":%" PRIu64
	        ",\"bad_sm_key\":%" PRIu64 ",\"requests_per_s\":%.1f,\"state_writes\":%" PRIu64
	        ",\"state_unsaved\":%s,\"reports_sent\":%" PRIu64 "},",
	        sa->requests, sa->answered, sa->no_records, sa->errors, sa->malformed, sa->busy,
	        sa->bad_key, rate, sa->state_writes, sa_state_unsaved(c->sa) ? "true" : "false",
	        sa->reports_sent);
	if (c->pm)
		fprintf(out, "\"pm\":{\"sweeps\":%" PRIu64 ",\"ports\":%u},",
		        pm_stats(c->pm)->sweeps, pm_stats(c->pm)->ports);
	if (c->ccm) {
		const struct ccm_stats *cs = ccm_stats(c->ccm);
		fprintf(out,
		        "\"cc\":{\"passes\":%" PRIu64 ",\"sets\":%" PRIu64 ",\"programmed\":%u,"
		        "\"unavailable\":%u,\"refused\":%" PRIu64 ",\"timeouts\":%" PRIu64 "},",
		        cs->passes, cs->sets, cs->programmed, cs->unavailable, cs->refused,
		        cs->timeouts);
	}
	fprintf(out,
	        "\"sync\":{\"items\":%u,\"generation\":%" PRIu64 ",\"in_step\":%s,"
	        "\"config_differs\":%s,\"served_full\":%" PRIu64 ",\"served_delta\":%" PRIu64
	        ",\"got_full\":%" PRIu64 ",\"got_delta\":%" PRIu64 "}}\n",
	        sy->items, sy->gen, sy->in_step ? "true" : "false",
	        sync_config_differs(c->rl->sync) ? "true" : "false", sy->served_full,
	        sy->served_delta, sy->got_full, sy->got_delta);
}

/* The status's "sweeps" object and the traps and quarantined links after it. */
static void json_sweeps(FILE *out, const struct sm_status *st)
{
	const struct sm_counts *k = &st->counts;
	const struct sm_phase_times *tm = &st->times;
	fprintf(out,
	        "\"sweeps\":{\"count\":%" PRIu64 ",\"light\":%" PRIu64
	        ",\"sweeping\":%s,\"routing\":%s,\"stage\":\"%s\","
	        "\"last\":{\"discover\":%.6f,\"lids\":%.6f,\"read\":%.6f,\"route\":%.6f,"
	        "\"tables\":%.6f,\"arm\":%.6f,\"activate\":%.6f,\"total\":%.6f},"
	        "\"lft_blocks_sent\":%u,\"port_sets\":%u,\"vl_sets\":%u},"
	        "\"traps\":%" PRIu64 ",\"links_quarantined\":%u,",
	        st->sweeps, st->light_sweeps, st->sweeping ? "true" : "false",
	        st->routing ? "true" : "false", st->stage, tm->discover, tm->lids, tm->read,
	        tm->route, tm->tables, tm->arm, tm->activate, tm->total, k->lft_blocks_sent,
	        k->port_sets, k->vl_sets, st->traps, st->links_held);
}

void status_write(const struct control *c, FILE *out, bool json)
{
	struct sm *sm = c->rl->sm;
	struct sm_status st = sm_status(sm);
	struct mad_sm_info si = sm_info(sm);
	const struct topo *t = sm_fabric(sm);
	uint16_t lid = t->sm_port != TOPO_NONE ? t->ports[t->sm_port].lid : 0;
	/* a standby assigns no LIDs: its port's own, as the port holds it */
	if (!lid && t->sm_port != TOPO_NONE)
		lid = t->ports[t->sm_port].pi.lid;
	const struct mad_counters *mc = mad_dispatcher_counters(sm_dispatcher(sm));
	const struct sa_stats *sa = sa_stats(c->sa);
	const struct sync_stats *sy = sync_stats(c->rl->sync);
	const struct sm_counts *k = &st.counts;
	const struct sm_phase_times *tm = &st.times;
	double now = ev_now(c->loop);
	double rate = sa_rate(c, sa->requests, now);
	uint64_t mguid = 0;
	uint16_t mlid = sm_master_lid(sm, &mguid);
	uint32_t nrem = sm_remote_count(sm);
	if (json) {
		fprintf(out,
		        "{\"state\":\"%s\",\"priority\":%u,\"guid\":\"0x%016" PRIx64
		        "\",\"lid\":%u,\"uptime_s\":%.0f,",
		        sm_state_name(si.state), si.priority, si.guid, lid, now - c->started);
		if (si.state == SM_STATE_STANDBY)
			fprintf(out, "\"master\":{\"lid\":%u,\"guid\":\"0x%016" PRIx64 "\"},", mlid,
			        mguid);
		fprintf(
		    out,
		    "\"subnet\":{\"up\":%s,\"nodes\":%u,\"switches\":%u,\"cas\":%u,\"ports\":%u,"
		    "\"links\":%u,\"lids\":%u,\"engine\":\"%s\"},",
		    st.up ? "true" : "false", k->nodes, k->switches, k->cas, k->ports, k->links,
		    k->lids, st.engine ? st.engine : "");
		json_sweeps(out, &st);
		fprintf(out, "\"sms\":[");
		for (uint32_t i = 0; i < nrem; i++) {
			struct sm_remote_info r;
			if (!sm_remote_get(sm, i, &r))
				continue;
			fprintf(out,
			        "%s{\"guid\":\"0x%016" PRIx64
			        "\",\"lid\":%u,\"state\":\"%s\",\"priority\":%u,"
			        "\"answered\":%s,\"foreign\":%s}",
			        i ? "," : "", r.info.guid, r.lid, sm_state_name(r.info.state),
			        r.info.priority, r.answered ? "true" : "false",
			        r.rogue ? "true" : "false");
		}
		fprintf(out,
		        "],\"mads\":{\"sent\":%" PRIu64 ",\"received\":%" PRIu64
		        ",\"requests\":%" PRIu64 ",\"completed\":%" PRIu64 ",\"retried\":%" PRIu64
		        ",\"timed_out\":%" PRIu64 ",\"unmatched\":%" PRIu64
		        ",\"malformed\":%" PRIu64 ",\"inflight\":%u},",
		        mc->sent, mc->received, mc->requests, mc->completed, mc->retried,
		        mc->timed_out, mc->unmatched, mc->malformed, mc->inflight);
		json_tail(c, out, rate);
		return;
	}
	fprintf(out, "state:      %s, priority %u, port GUID 0x%016" PRIx64 ", LID %u, up %.0f s\n",
	        sm_state_name(si.state), si.priority, si.guid, lid, now - c->started);
	if (si.state == SM_STATE_STANDBY)
		fprintf(out, "master:     LID %u, GUID 0x%016" PRIx64 "\n", mlid, mguid);
	fprintf(out,
	        "subnet:     %s: %u nodes (%u switches, %u CAs), %u ports, %u links, %u LIDs, "
	        "routed by %s\n",
	        st.up ? "up" : "not up", k->nodes, k->switches, k->cas, k->ports, k->links, k->lids,
	        st.engine ? st.engine : "-");
	fprintf(out,
	        "sweeps:     %" PRIu64 "%s%s%s; %" PRIu64
	        " light ones ended; the last: discover %.3f s, LIDs %.3f s, read %.3f s, "
	        "route %.3f s, "
	        "tables %.3f s, arm %.3f s, activate %.3f s, total %.3f s\n",
	        st.sweeps, st.sweeping ? " (one under way: " : "", st.sweeping ? st.stage : "",
	        st.sweeping ? ")" : "", st.light_sweeps, tm->discover, tm->lids, tm->read,
	        tm->route, tm->tables, tm->arm, tm->activate, tm->total);
	fprintf(out, "traps:      %" PRIu64 " received; %u link(s) quarantined\n", st.traps,
	        st.links_held);
	for (uint32_t i = 0; i < nrem; i++) {
		struct sm_remote_info r;
		if (sm_remote_get(sm, i, &r))
			fprintf(out,
			        "other SM:   GUID 0x%016" PRIx64 " LID %u %s priority %u%s%s\n",
			        r.info.guid, r.lid, sm_state_name(r.info.state), r.info.priority,
			        r.answered ? "" : " (not answering)", r.rogue ? " FOREIGN" : "");
	}
	fprintf(out,
	        "MADs:       %" PRIu64 " sent, %" PRIu64 " received, %" PRIu64 " retried, %" PRIu64
	        " timed out, %u in flight\n",
	        mc->sent, mc->received, mc->retried, mc->timed_out, mc->inflight);
	fprintf(out,
	        "SA:         %" PRIu64 " requests (%.1f/s over the last minute), %" PRIu64
	        " answered, %" PRIu64 " no records, %" PRIu64 " errors, %" PRIu64 " malformed\n",
	        sa->requests, rate, sa->answered, sa->no_records, sa->errors, sa->malformed);
	fprintf(out, "SA state:   written %" PRIu64 " times%s\n", sa->state_writes,
	        sa_state_unsaved(c->sa) ? ", changes waiting to be written" : "");
	if (c->pm)
		fprintf(out, "PM:         %" PRIu64 " sweeps, %u ports read in the last\n",
		        pm_stats(c->pm)->sweeps, pm_stats(c->pm)->ports);
	if (c->ccm && c->rl->cfg->cc.enable) {
		const struct ccm_stats *cs = ccm_stats(c->ccm);
		fprintf(out,
		        "CC:         %u ports hold the settings, %u left alone; %" PRIu64
		        " Sets in %" PRIu64 " passes\n",
		        cs->programmed, cs->unavailable, cs->sets, cs->passes);
	}
	fprintf(out, "sync:       %u items, generation %" PRIu64 "%s%s\n", sy->items, sy->gen,
	        si.state == SM_STATE_STANDBY
	            ? (sy->in_step ? ", in step with the master" : ", behind")
	            : "",
	        sync_config_differs(c->rl->sync) ? ", CONFIGURED DIFFERENTLY from its peer" : "");
}
