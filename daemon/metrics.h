/* Prometheus metrics: the text exposition format, written every metrics_interval seconds to
 * a file for node_exporter's textfile collector, and served over HTTP (libmicrohttpd) when
 * metrics_listen names an address. Both render the same text from the same numbers. */
#ifndef IBSMD_DAEMON_METRICS_H
#define IBSMD_DAEMON_METRICS_H

#include <ev.h>
#include <stdio.h>

#include "daemon/control.h"
#include "daemon/httpd.h"

struct metrics {
	struct control *ctl; /* the daemon's parts, and the SA's request rate samples */
	struct ev_loop *loop;
	ev_timer file_timer;
	struct httpd http; /* the HTTP endpoint, when metrics_listen names one */
	char file[300];
	uint64_t written, served;
	struct log_rl rl;
};

/* Start writing the file and, if configured, serving HTTP. 0, or -1 (logged) when the
 * listen address is wrong or taken: the daemon runs on without the endpoint. */
int metrics_start(struct metrics *m, struct control *ctl, struct ev_loop *loop);
/* The interval or file changed (a reload). */
void metrics_reconfigure(struct metrics *m);
void metrics_stop(struct metrics *m);
/* Everything, in the Prometheus text format. */
void metrics_render(const struct metrics *m, FILE *out);

struct pm;
/* The ports' families in infiniband_exporter's names (daemon/metrics_ports.c), as
 * metrics_ports and metrics_max_ports choose; pm NULL: no counters. */
void metrics_render_ports(FILE *out, const struct pm *pm, const struct topo *t,
                          const struct ibsmd_config *cfg);

#endif
