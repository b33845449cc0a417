/* The daemon as main wires it: the SM, the SA and the standby sync (the SA and the sync as
 * the SM's listeners; the SM knows nothing of either), the PM, the control socket, the
 * metrics and the service manager's notifications, on one event loop. */
#ifndef IBSMD_DAEMON_DAEMON_H
#define IBSMD_DAEMON_DAEMON_H

#include <ev.h>
#include <stdbool.h>

#include "config/config.h"
#include "daemon/api.h"
#include "daemon/control.h"
#include "daemon/events.h"
#include "daemon/metrics.h"
#include "daemon/notify.h"
#include "daemon/reload.h"
#include "daemon/settings.h"
#include "mad/transport.h"
#include "cc/cc.h"
#include "pm/pm.h"
#include "sa/sa.h"
#include "sm/sm.h"
#include "sync/sync.h"

struct daemon {
	/* main's, set before daemon_start */
	struct log *log;
	const struct settings *settings;
	int verbose;                     /* -v given this many times */
	bool once;                       /* --once: sweep, program, report and exit */
	struct ibsmd_config cfg;         /* daemon_stop frees it */
	struct mad_transport *transport; /* opened by main; daemon_stop closes it */

	/* daemon_start's; the SM, the SA and the sync read cfg and the transport in place */
	struct ev_loop *loop; /* NULL: never started */
	struct sm *sm;
	struct sa *sa;
	struct sync *sync;
	struct pm *pm;
	struct pm_listener pm_hooks;
	struct ccm *ccm; /* congestion control (NULL with --once) */
	struct events events;
	struct notify notify;
	struct metrics metrics;
	struct api api;
	struct control control;
	struct reload reload;
	ev_signal sigint, sigterm, sighup;
};

/* Create and wire the parts and start the SM. 0; -1 when the SM cannot start (whatever was
 * made stays for daemon_stop). */
int daemon_start(struct daemon *d);
/* Run the loop until a signal or the SM ends it; with --once, print the summary. The exit
 * code: 0, or 1 when --once left the subnet not up. */
int daemon_run(struct daemon *d);
/* Undo whatever was done, at any stage from a daemon only configured to a running one. */
void daemon_stop(struct daemon *d);

#endif
