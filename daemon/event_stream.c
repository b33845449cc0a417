/* The daemon's events as JSON lines to followers (see event_stream.h). */
#include "daemon/event_stream.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/escape.h"

struct event_follower {
	struct event_stream *s;
	int fd;
	unsigned slot;
	ev_io io;
	char *buf; /* what the socket has not taken yet: buf[at..len) */
	size_t len, at, cap;
};

void event_stream_init(struct event_stream *s, struct ev_loop *loop, const struct log *log)
{
	memset(s, 0, sizeof(*s));
	s->loop = loop;
	s->log = log;
	s->rl = LOG_RL_DEFAULT;
}

static void follower_close(struct event_follower *f)
{
	ev_io_stop(f->s->loop, &f->io);
	close(f->fd);
	f->s->followers[f->slot] = NULL;
	free(f->buf);
	free(f);
}

void event_stream_free(struct event_stream *s)
{
	for (unsigned i = 0; i < EVENT_STREAM_FOLLOWERS; i++)
		if (s->followers[i])
			follower_close(s->followers[i]);
	for (unsigned i = 0; i < EVENT_STREAM_RECENT; i++) {
		free(s->recent[i]);
		s->recent[i] = NULL;
	}
}

/* Watch for the peer going (readable: EOF), and for room when there is something to write. */
static void follower_watch(struct event_follower *f)
{
	int want = EV_READ | (f->at < f->len ? EV_WRITE : 0);
	if ((f->io.events & (EV_READ | EV_WRITE)) == want && ev_is_active(&f->io))
		return;
	ev_io_stop(f->s->loop, &f->io);
	ev_io_set(&f->io, f->fd, want);
	ev_io_start(f->s->loop, &f->io);
}

/* Write what the socket takes. false when the follower went (closed here). */
static bool follower_flush(struct event_follower *f)
{
	while (f->at < f->len) {
		ssize_t n = write(f->fd, f->buf + f->at, f->len - f->at);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			follower_close(f);
			return false;
		}
		f->at += (size_t)n;
	}
	if (f->at == f->len)
		f->at = f->len = 0;
	follower_watch(f);
	return true;
}

static void follower_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	struct event_follower *f = w->data;
	if (revents & EV_READ) {
		/* a follower says nothing: anything read is dropped, EOF ends it */
		char junk[256];
		ssize_t n = read(f->fd, junk, sizeof(junk));
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			follower_close(f);
			return;
		}
	}
	if (revents & EV_WRITE)
		follower_flush(f);
}

/* line (len bytes) queued for f; false when f was dropped for falling behind */
static bool follower_add(struct event_follower *f, const char *line, size_t len)
{
	if (f->len - f->at + len > EVENT_STREAM_BACKLOG) {
		f->s->dropped++;
		log_rl(f->s->log, &f->s->rl, LOGL_WARN, "control",
		       "dropped an event follower %u KiB behind: it does not read its socket",
		       EVENT_STREAM_BACKLOG / 1024);
		follower_close(f);
		return false;
	}
	if (f->at && f->len + len > f->cap) { /* room at the front first */
		memmove(f->buf, f->buf + f->at, f->len - f->at);
		f->len -= f->at;
		f->at = 0;
	}
	if (f->len + len > f->cap) {
		size_t cap = f->cap ? f->cap : 4096;
		while (cap < f->len + len)
			cap *= 2;
		char *b = realloc(f->buf, cap);
		if (!b) {
			follower_close(f);
			return false;
		}
		f->buf = b;
		f->cap = cap;
	}
	memcpy(f->buf + f->len, line, len);
	f->len += len;
	return true;
}

/* The event as one JSON line (newline included), malloc'ed; NULL out of memory. */
static char *json_line(uint64_t seq, double now, enum log_level level, const char *event,
                       const struct log_field *fields, unsigned nfields, const char *msg)
{
	char *line = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&line, &len);
	if (!out)
		return NULL;
	time_t secs = (time_t)now;
	struct tm tm;
	gmtime_r(&secs, &tm);
	char stamp[32];
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(out, "{\"seq\":%" PRIu64 ",\"time\":\"%s.%03dZ\",\"level\":\"%s\",\"event\":", seq,
	        stamp, (int)((now - (double)secs) * 1000) % 1000, log_level_name(level));
	json_put_str(out, event, 64);
	fputs(",\"message\":", out);
	json_put_str(out, msg, 1024);
	fputs(",\"fields\":{", out);
	for (unsigned i = 0; i < nfields; i++) {
		fputs(i ? "," : "", out);
		json_put_str(out, fields[i].key, 64);
		fputc(':', out);
		json_put_str(out, fields[i].value, sizeof(fields[i].value));
	}
	fputs("}}\n", out);
	if (fclose(out) != 0) {
		free(line);
		return NULL;
	}
	return line;
}

void event_stream_put(struct event_stream *s, double now, enum log_level level, const char *event,
                      const struct log_field *fields, unsigned nfields, const char *msg)
{
	char *line = json_line(++s->seq, now, level, event, fields, nfields, msg);
	if (!line)
		return;
	size_t len = strlen(line);
	for (unsigned i = 0; i < EVENT_STREAM_FOLLOWERS; i++) {
		struct event_follower *f = s->followers[i];
		if (f && follower_add(f, line, len))
			follower_flush(f);
	}
	free(s->recent[s->next]);
	s->recent[s->next] = line;
	s->next = (s->next + 1) % EVENT_STREAM_RECENT;
}

void event_stream_recent(const struct event_stream *s, FILE *out)
{
	for (unsigned i = 0; i < EVENT_STREAM_RECENT; i++) {
		const char *line = s->recent[(s->next + i) % EVENT_STREAM_RECENT];
		if (line)
			fputs(line, out);
	}
}

int event_stream_follow(struct event_stream *s, int fd)
{
	unsigned slot = 0;
	while (slot < EVENT_STREAM_FOLLOWERS && s->followers[slot])
		slot++;
	if (slot == EVENT_STREAM_FOLLOWERS)
		return -1;
	struct event_follower *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->s = s;
	f->fd = fd;
	f->slot = slot;
	ev_init(&f->io, follower_cb);
	f->io.data = f;
	s->followers[slot] = f;
	for (unsigned i = 0; i < EVENT_STREAM_RECENT; i++) {
		const char *line = s->recent[(s->next + i) % EVENT_STREAM_RECENT];
		if (line && !follower_add(f, line, strlen(line)))
			return 0; /* closed: the fd is gone with it */
	}
	follower_flush(f);
	return 0;
}

void event_stream_log_hook(void *ctx, enum log_level level, const char *event,
                           const struct log_field *fields, unsigned nfields, const char *msg)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	event_stream_put(ctx, (double)ts.tv_sec + ts.tv_nsec / 1e9, level, event, fields, nfields,
	                 msg);
}
