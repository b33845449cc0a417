#include "util/log.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include <systemd/sd-journal.h>

#include "util/escape.h"

static const char *const level_names[] = {
    [LOGL_ERR] = "err",   [LOGL_WARN] = "warn",   [LOGL_NOTICE] = "notice",
    [LOGL_INFO] = "info", [LOGL_DEBUG] = "debug",
};

void log_init(struct log *lg)
{
	memset(lg, 0, sizeof(*lg));
	lg->level = LOGL_NOTICE;
	lg->sink = LOG_SINK_STDERR;
}

int log_level_parse(const char *s)
{
	for (int l = LOGL_ERR; l <= LOGL_DEBUG; l++)
		if (level_names[l] && strcmp(s, level_names[l]) == 0)
			return l;
	if (strcmp(s, "error") == 0)
		return LOGL_ERR;
	if (strcmp(s, "warning") == 0)
		return LOGL_WARN;
	return -1;
}

const char *log_level_name(enum log_level level)
{
	if (level < LOGL_ERR || level > LOGL_DEBUG)
		return "?";
	return level_names[level];
}

void log_vmsg(const struct log *lg, enum log_level level, const char *subsys, const char *fmt,
              va_list ap)
{
	if (!log_enabled(lg, level))
		return;
	char raw[1024], esc[1024];
	vsnprintf(raw, sizeof(raw), fmt, ap);
	/* arguments may be wire text (a NodeDescription): a newline in one must not start
	 * a line that looks like ours */
	const char *msg = log_needs_escape(raw) ? log_escape(esc, sizeof(esc), raw) : raw;

	if (lg && lg->sink == LOG_SINK_JOURNAL) {
		sd_journal_send("MESSAGE=%s: %s", subsys, msg, "PRIORITY=%d", (int)level,
		                "IBSMD_SUBSYSTEM=%s", subsys, NULL);
		return;
	}
	FILE *out = (lg && lg->stream) ? lg->stream : stderr;
	char stamp[40] = "";
	if (lg && lg->timestamps) {
		struct timespec ts;
		struct tm tm;
		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		size_t n = strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
		snprintf(stamp + n, sizeof(stamp) - n, ".%03ld ", ts.tv_nsec / 1000000);
	}
	fprintf(out, "%s%s %s: %s\n", stamp, log_level_name(level), subsys, msg);
}

void log_msg(const struct log *lg, enum log_level level, const char *subsys, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(lg, level, subsys, fmt, ap);
	va_end(ap);
}

bool log_rl_allow(struct log_rl *rl, uint64_t now_ns, uint64_t *held)
{
	uint64_t per = (uint64_t)(rl->interval_ms ? rl->interval_ms : 1) * 1000000u;
	if (!rl->started) {
		rl->started = true;
		rl->tokens = rl->burst ? rl->burst : 1;
		rl->last_ns = now_ns;
	} else if (now_ns > rl->last_ns) {
		uint64_t add = (now_ns - rl->last_ns) / per;
		if (add) {
			uint64_t t = rl->tokens + add;
			rl->tokens = t > rl->burst ? (rl->burst ? rl->burst : 1) : (uint32_t)t;
			rl->last_ns += add * per;
		}
	}
	if (!rl->tokens) {
		rl->suppressed++;
		return false;
	}
	rl->tokens--;
	*held = rl->suppressed;
	rl->suppressed = 0;
	return true;
}

void log_rl(const struct log *lg, struct log_rl *rl, enum log_level level, const char *subsys,
            const char *fmt, ...)
{
	if (!log_enabled(lg, level))
		return;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t held;
	if (!log_rl_allow(rl, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, &held))
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (held)
		log_msg(lg, level, subsys, "%s (%" PRIu64 " similar lines held back)", msg, held);
	else
		log_msg(lg, level, subsys, "%s", msg);
}

void log_event(const struct log *lg, enum log_level level, const char *event,
               const struct log_field *fields, unsigned nfields, const char *fmt, ...)
{
	if (!log_enabled(lg, level))
		return;
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (nfields > 16)
		nfields = 16;
	if (lg && lg->event_hook)
		lg->event_hook(lg->event_ctx, level, event, fields, nfields, msg);
	if (lg && lg->sink == LOG_SINK_JOURNAL) {
		/* one journal entry with every field, so "journalctl IBSMD_EVENT=..." finds it */
		char bufs[20][160];
		struct iovec iov[20];
		unsigned n = 0;
		n++; /* MESSAGE, below: it gets a buffer of its own */
		snprintf(bufs[n++], sizeof(bufs[0]), "PRIORITY=%d", (int)level);
		snprintf(bufs[n++], sizeof(bufs[0]), "IBSMD_SUBSYSTEM=event");
		snprintf(bufs[n++], sizeof(bufs[0]), "IBSMD_EVENT=%s", event);
		for (unsigned i = 0; i < nfields; i++) {
			char key[48], val[sizeof(fields[i].value)];
			size_t k = 0;
			for (const char *c = fields[i].key; *c && k < sizeof(key) - 1; c++)
				key[k++] = (char)toupper((unsigned char)*c);
			key[k] = 0;
			snprintf(bufs[n++], sizeof(bufs[0]), "IBSMD_%s=%s", key,
			         log_escape(val, sizeof(val), fields[i].value));
		}
		for (unsigned i = 0; i < n; i++) {
			iov[i].iov_base = bufs[i];
			iov[i].iov_len = strlen(bufs[i]);
		}
		/* MESSAGE may be longer than a field buffer: give it its own */
		char mbuf[800], esc[768];
		snprintf(mbuf, sizeof(mbuf), "MESSAGE=event: %s",
		         log_escape(esc, sizeof(esc), msg));
		iov[0].iov_base = mbuf;
		iov[0].iov_len = strlen(mbuf);
		sd_journal_sendv(iov, (int)n);
		return;
	}
	char tail[1024];
	size_t at = (size_t)snprintf(tail, sizeof(tail), " [event=%s", event);
	for (unsigned i = 0; i < nfields && at < sizeof(tail); i++)
		at += (size_t)snprintf(tail + at, sizeof(tail) - at, " %s=%s", fields[i].key,
		                       fields[i].value);
	if (at < sizeof(tail))
		snprintf(tail + at, sizeof(tail) - at, "]");
	log_msg(lg, level, "event", "%s%s", msg, tail);
}
