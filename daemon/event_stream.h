/* The daemon's events as JSON lines, for whoever follows them on the control socket
 * (`ibsa watch --follow`): where a site with OpenSM loads an event plug-in into the SM, its
 * scripts read this stream instead, outside the daemon. The last EVENT_STREAM_RECENT events
 * are kept for a newcomer; each new one is written to every follower as its socket takes
 * it, and a follower that falls EVENT_STREAM_BACKLOG bytes behind is dropped rather than
 * let the daemon's memory grow. */
#ifndef IBSMD_DAEMON_EVENT_STREAM_H
#define IBSMD_DAEMON_EVENT_STREAM_H

#include <ev.h>
#include <stdint.h>
#include <stdio.h>

#include "util/log.h"

#define EVENT_STREAM_RECENT    64
#define EVENT_STREAM_FOLLOWERS 8
#define EVENT_STREAM_BACKLOG   (1u << 20)

struct event_follower;

struct event_stream {
	struct ev_loop *loop;
	char *recent[EVENT_STREAM_RECENT]; /* JSON lines, a ring: next is the oldest */
	unsigned next;
	uint64_t seq;     /* events so far: each line's "seq" */
	uint64_t dropped; /* followers dropped for falling behind */
	struct event_follower *followers[EVENT_STREAM_FOLLOWERS];
	const struct log *log; /* for its own few lines (rate limited) */
	struct log_rl rl;
};

void event_stream_init(struct event_stream *s, struct ev_loop *loop, const struct log *log);
/* Every follower's connection closed, the recent events freed. */
void event_stream_free(struct event_stream *s);
/* One event, as log_event has it, at wall-clock time `now` (seconds since the epoch). */
void event_stream_put(struct event_stream *s, double now, enum log_level level, const char *event,
                      const struct log_field *fields, unsigned nfields, const char *msg);
/* The recent events, oldest first, one JSON line each. */
void event_stream_recent(const struct event_stream *s, FILE *out);
/* fd (a connected, non-blocking stream socket; the stream owns it from now) follows: the
 * recent events, then every new one. 0; -1 when EVENT_STREAM_FOLLOWERS follow already (fd
 * is left to the caller). */
int event_stream_follow(struct event_stream *s, int fd);
/* struct log's event_hook: every log_event goes into the stream too. */
void event_stream_log_hook(void *ctx, enum log_level level, const char *event,
                           const struct log_field *fields, unsigned nfields, const char *msg);

#endif
