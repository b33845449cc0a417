/* systemd's service protocol (sd_notify): READY=1 once the first sweep has ended, STATUS=
 * lines that say what the SM is doing, WATCHDOG=1 from the event loop. Without a
 * NOTIFY_SOCKET (not run by systemd) every call does nothing. */
#ifndef IBSMD_DAEMON_NOTIFY_H
#define IBSMD_DAEMON_NOTIFY_H

#include <stdbool.h>

#include <ev.h>

#include "sm/sm.h"

struct notify {
	struct sm *sm;
	struct ev_loop *loop;
	bool ready;        /* READY=1 sent */
	ev_timer watchdog; /* at half the watchdog interval, if systemd asks for one */
};

/* Start the watchdog (if WATCHDOG_USEC asks for it) and say "starting". */
void notify_start(struct notify *n, struct sm *sm, struct ev_loop *loop);
/* The listener that sends READY and STATUS; n must outlive the SM's listeners. */
struct sm_listener notify_listener(struct notify *n);
/* Say that the configuration is being reloaded (RELOADING=1), and that it is done. */
void notify_reloading(struct notify *n, bool done);
void notify_stop(struct notify *n);
/* Before the event loop runs: the port cannot be opened yet, and why (STATUS=, and the
 * watchdog fed, since waiting is not being stuck). */
void notify_waiting(const char *why);

#endif
