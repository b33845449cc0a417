/* The events an administrator acts on, as structured log entries (log_event): from the
 * performance manager (a counter threshold crossed) for now. */
#ifndef IBSMD_DAEMON_EVENTS_H
#define IBSMD_DAEMON_EVENTS_H

#include "pm/pm.h"
#include "util/log.h"

struct events {
	const struct log *log;
	uint64_t counter_events;
};

struct pm_listener events_pm_listener(struct events *e);

#endif
