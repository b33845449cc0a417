/* sd_notify from the event loop. The watchdog is fed by a timer of the same loop that does
 * the SM's work, so a loop stuck in a computation or a blocking call stops feeding it and
 * systemd restarts the daemon, which is the point of having one. */
#include "daemon/notify.h"

#include <inttypes.h>
#include <stdio.h>

#include <systemd/sd-daemon.h>

/* STATUS= as systemctl status shows it: the state and the subnet in one line. */
static void send_status(struct notify *n, const char *extra)
{
	struct sm_status st = sm_status(n->sm);
	struct mad_sm_info si = sm_info(n->sm);
	const struct sm_counts *c = &st.counts;
	char line[256];
	if (si.state == SM_STATE_MASTER && st.up)
		snprintf(line, sizeof(line),
		         "MASTER: %u nodes (%u switches, %u CAs), %u LIDs; sweeps: %" PRIu64
		         ", the last took %.3f s%s",
		         c->nodes, c->switches, c->cas, c->lids, st.sweeps, st.times.total, extra);
	else if (si.state == SM_STATE_STANDBY) {
		uint64_t guid = 0;
		uint16_t lid = sm_master_lid(n->sm, &guid);
		snprintf(line, sizeof(line), "STANDBY: master LID %u, GUID 0x%016" PRIx64 "%s", lid,
		         guid, extra);
	} else
		snprintf(line, sizeof(line), "%s: sweeping%s", sm_state_name(si.state), extra);
	if (!n->ready) {
		sd_notifyf(0, "READY=1\nSTATUS=%s", line);
		n->ready = true;
	} else {
		sd_notifyf(0, "STATUS=%s", line);
	}
}

static void on_sweep_done(void *ctx, bool structural)
{
	(void)structural;
	send_status(ctx, "");
}

static void on_state_changed(void *ctx, uint8_t state)
{
	struct notify *n = ctx;
	/* ready as a standby at once; as a master only when its first sweep has ended */
	if (state == SM_STATE_STANDBY || n->ready)
		send_status(n, "");
}

struct sm_listener notify_listener(struct notify *n)
{
	return (struct sm_listener){
	    .ctx = n, .sweep_done = on_sweep_done, .state_changed = on_state_changed};
}

static void watchdog_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	sd_notify(0, "WATCHDOG=1");
}

void notify_start(struct notify *n, struct sm *sm, struct ev_loop *loop)
{
	n->sm = sm;
	n->loop = loop;
	n->ready = false;
	ev_init(&n->watchdog, watchdog_cb);
	uint64_t usec = 0;
	if (sd_watchdog_enabled(0, &usec) > 0 && usec) {
		double half = (double)usec / 2e6;
		ev_timer_set(&n->watchdog, 0., half);
		ev_timer_start(loop, &n->watchdog);
	}
	sd_notify(0, "STATUS=starting: sweeping the fabric");
}

void notify_reloading(struct notify *n, bool done)
{
	if (!done) {
		sd_notify(0, "RELOADING=1\nSTATUS=reloading the configuration");
		return;
	}
	if (n->ready)
		send_status(n, " (configuration reloaded)");
	sd_notify(0, "READY=1");
}

void notify_stop(struct notify *n)
{
	if (n->loop)
		ev_timer_stop(n->loop, &n->watchdog);
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: saving state");
}

void notify_waiting(const char *why)
{
	sd_notifyf(0, "STATUS=waiting for the InfiniBand port: %s\nWATCHDOG=1", why);
}
