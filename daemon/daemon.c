/* The daemon's parts wired together and torn down again (see daemon.h). */
#include "daemon/daemon.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>

#include "mad/dispatcher.h"

static void stop_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)revents;
	(void)w;
	ev_break(loop, EVBREAK_ALL);
}

static void hup_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)loop;
	(void)revents;
	struct reload *r = w->data;
	log_notice(r->log, "config", "SIGHUP: reading the configuration again");
	if (reload_apply(r) < 0)
		sm_request_sweep(r->sm, NULL, 0); /* a SIGHUP still rediscovers the fabric */
}

/* The SM and, on it, the SA, the sync and the PM (the PM not for --once); each NULL when the
 * one below it is. */
static void create_parts(struct daemon *d)
{
	d->loop = ev_default_loop(EVFLAG_AUTO);
	d->sm = sm_new(&d->cfg, d->log, d->loop, d->transport, d->once);
	d->sa = d->sm ? sa_new(d->sm) : NULL;
	d->sync = d->sa ? sync_new(d->sm, d->sa) : NULL;
	d->events = (struct events){.log = d->log};
	d->pm_hooks = events_pm_listener(&d->events);
	d->pm = d->sync && !d->once ? pm_new(d->sm, &d->pm_hooks) : NULL;
	d->ccm = d->sync && !d->once ? ccm_new(d->sm) : NULL;
	d->reload = (struct reload){.settings = d->settings,
	                            .cfg = &d->cfg,
	                            .log = d->log,
	                            .verbose = d->verbose,
	                            .sm = d->sm,
	                            .sync = d->sync,
	                            .notify = &d->notify,
	                            .metrics = &d->metrics,
	                            .pm = d->pm};
	reload_names(&d->reload);
}

/* The services around the SM, and everything that hears from it as its listeners. -1 when
 * the partition API is configured and cannot be served as configured. */
static int wire_parts(struct daemon *d)
{
	int rc = 0;
	notify_start(&d->notify, d->sm, d->loop);
	if (!d->once) {
		/* without either the daemon still runs */
		control_start(&d->control, &d->reload, d->sa, d->loop);
		d->control.pm = d->pm;
		d->control.ccm = d->ccm;
		events_start(&d->events, d->log, d->sm, d->loop);
		d->control.events = &d->events.stream;
		metrics_start(&d->metrics, &d->control, d->loop);
		pm_reconfigure(d->pm);
		/* but not without the API an orchestrator was told to use, nor with it open */
		rc = api_start(&d->api, &d->control, d->loop);
	}
	struct sm_listener hooks = sa_listener(d->sa), sync_hooks = sync_listener(d->sync),
	                   nt_hooks = notify_listener(&d->notify),
	                   ctl_hooks = control_listener(&d->control);
	sm_add_listener(d->sm, &hooks);
	sm_add_listener(d->sm, &sync_hooks);
	sm_add_listener(d->sm, &nt_hooks);
	if (!d->once) {
		struct sm_listener ev_hooks = events_sm_listener(&d->events);
		sm_add_listener(d->sm, &ctl_hooks);
		sm_add_listener(d->sm, &ev_hooks);
		if (d->ccm) {
			struct sm_listener cc_hooks = ccm_listener(d->ccm);
			sm_add_listener(d->sm, &cc_hooks);
		}
	}
	return rc;
}

int daemon_start(struct daemon *d)
{
	create_parts(d);
	if (d->sync && wire_parts(d) < 0)
		return -1;
	if (!d->sync || sm_start(d->sm) < 0)
		return -1;
	ev_signal_init(&d->sigint, stop_cb, SIGINT);
	ev_signal_init(&d->sigterm, stop_cb, SIGTERM);
	ev_signal_init(&d->sighup, hup_cb, SIGHUP);
	d->sighup.data = &d->reload;
	ev_signal_start(d->loop, &d->sigint);
	ev_signal_start(d->loop, &d->sigterm);
	ev_signal_start(d->loop, &d->sighup);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* --once's summary on standard output: 0 when the subnet is up, 1 with the reason. */
static int report_once(struct daemon *d)
{
	struct sm_status st = sm_status(d->sm);
	const struct sm_counts *c = &st.counts;
	if (!st.up || st.exit_code) {
		printf("subnet not up: %s\n", st.exit_reason[0] ? st.exit_reason : "unknown");
		return 1;
	}
	printf("subnet up: %u nodes (%u switches, %u CAs), %u ports, %u links, %u "
	       "LIDs, routed by %s in %.3f s (total %.3f s)\n",
	       c->nodes, c->switches, c->cas, c->ports, c->links, c->lids, st.engine,
	       st.times.route, st.times.total);
	const struct mad_counters *mc = mad_dispatcher_counters(sm_dispatcher(d->sm));
	if (st.sweeps > 1 || mc->retried || mc->timed_out)
		printf("MADs: %" PRIu64 " sent in %" PRIu64 " sweep(s), %" PRIu64
		       " retried (%" PRIu64 " beyond mad_retries for the loss), %" PRIu64
		       " unanswered after all retries; %.0f%% of attempts answered "
		       "lately\n",
		       mc->sent, st.sweeps, mc->retried, mc->retried_lossy, mc->timed_out,
		       100 * mad_dispatcher_answer_rate(sm_dispatcher(d->sm)));
	/* the files OpenSM's --once leaves too, for ibdmchk and the like */
	char why[512];
	d->control.rl = &d->reload;
	if (d->cfg.dump_after_sweep && control_write_dumps(&d->control, why, sizeof(why)) < 0)
		log_warn(d->log, "control", "dump_after_sweep: %s", why);
	return 0;
}

int daemon_run(struct daemon *d)
{
	ev_run(d->loop, 0);
	return d->once ? report_once(d) : 0;
}

void daemon_stop(struct daemon *d)
{
	if (d->loop) {
		pm_stop(d->pm);
		ccm_stop(d->ccm);
		api_stop(&d->api);
		metrics_stop(&d->metrics);
		control_stop(&d->control);
		events_stop(&d->events, d->log);
		notify_stop(&d->notify);
		/* in this order: transactions end while the SA and the sync their callbacks use
		 * are there */
		sync_stop(d->sync);
		sm_stop(d->sm);
		if (d->sm)
			sm_clear_listeners(d->sm);
		pm_free(d->pm);
		ccm_free(d->ccm);
		sync_free(d->sync);
		sa_free(d->sa);
		sm_free(d->sm);
	}
	mad_transport_close(d->transport);
	name_map_free(&d->reload.names);
	config_free(&d->cfg);
}
