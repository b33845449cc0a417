/* The runtime control socket: a local stream socket (root and control_group only) on which
 * ibsa asks the running daemon for its status, a sweep, a reroute, a log level or a dump.
 * One command line per connection, the answer, then the daemon closes it; "watch follow"
 * hands the connection to the event stream instead, which writes every event to it. */
#ifndef IBSMD_DAEMON_CONTROL_H
#define IBSMD_DAEMON_CONTROL_H

#include <ev.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "daemon/event_stream.h"
#include "daemon/reload.h"
#include "sa/sa.h"

#define CONTROL_MAX_CONNS    16
#define CONTROL_RATE_SAMPLES 13 /* every 5 s: the SA request rate over the last minute */

struct control_conn;
struct pm;
struct ccm;

struct control {
	struct reload *rl; /* the daemon's parts: SM, sync, configuration, log */
	struct sa *sa;
	struct pm *pm;               /* NULL: none */
	struct ccm *ccm;             /* NULL: none */
	struct event_stream *events; /* NULL: none */
	struct ev_loop *loop;
	int fd;
	char path[108];
	gid_t gid; /* control_group's, or (gid_t)-1 */
	ev_io accept_w;
	ev_timer sample;
	double started;
	/* SA requests counted every 5 s, for rates */
	uint64_t sa_req[CONTROL_RATE_SAMPLES];
	double sa_at[CONTROL_RATE_SAMPLES];
	unsigned nsamples, next;
	struct control_conn *conns[CONTROL_MAX_CONNS];
	struct log_rl rl_refused;
};

/* Listen on cfg->control_socket. 0; -1 (logged) when it cannot: the daemon runs on without
 * it. */
int control_start(struct control *c, struct reload *rl, struct sa *sa, struct ev_loop *loop);
void control_stop(struct control *c);
/* The listener that writes the dumps after each structural sweep (dump_after_sweep). */
struct sm_listener control_listener(struct control *c);

/* The heavy sweep's dumps (dump_after_sweep), and on request: write the OpenSM-format files
 * into dir (cfg dump_dir, else STATE_DIR/dump). 0, or -1 with the reason. */
int control_write_dumps(struct control *c, char *why, size_t len);

/* The fabric for graphviz (daemon/topology.h's topology_dot) with the links the SM holds
 * quarantined, which only the SM knows: one function, so that the control socket's
 * "topology dot" and the API's GET /topology/dot draw the same graph. 0, or -1 out of
 * memory. */
int control_topology_dot(struct sm *sm, FILE *out);

#endif
