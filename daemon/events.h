/* The events an administrator acts on: the performance manager's (a counter threshold
 * crossed) as structured log entries (log_event), and the stream of every event for the
 * control socket's followers (event_stream.h), fed by the log and by the SM's listener
 * (the subnet up, the SM's state, traps), as OpenSM's event plug-ins are. */
#ifndef IBSMD_DAEMON_EVENTS_H
#define IBSMD_DAEMON_EVENTS_H

#include "daemon/event_stream.h"
#include "pm/pm.h"
#include "sm/sm.h"
#include "util/log.h"

struct events {
	const struct log *log;
	uint64_t counter_events;
	struct sm *sm;
	struct event_stream stream;
	bool started;
	struct log_rl rl_traps; /* the wire sends traps: the stream gets a bounded share */
};

struct pm_listener events_pm_listener(struct events *e);
/* The stream on: lg's events go into it (lg is the daemon's, which outlives e). */
void events_start(struct events *e, struct log *lg, struct sm *sm, struct ev_loop *loop);
void events_stop(struct events *e, struct log *lg);
/* The SM's events for the stream alone (its log has them in prose already): subnet_up at
 * each sweep that ends with the subnet up, sm_state, trap. */
struct sm_listener events_sm_listener(struct events *e);

#endif
