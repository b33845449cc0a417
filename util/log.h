/* Logging with levels and subsystem tags, to stderr or the systemd journal.
 *
 * A struct log is owned by main() and handed to every subsystem, so there is no global logger.
 * Every line about a node should name its GUID, LID or port: use the LOG_NODE_FMT helpers.
 */
#ifndef IBSMD_UTIL_LOG_H
#define IBSMD_UTIL_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>

enum log_level {
	LOGL_ERR = 3, /* syslog priorities, so the journal gets them unchanged */
	LOGL_WARN = 4,
	LOGL_NOTICE = 5,
	LOGL_INFO = 6,
	LOGL_DEBUG = 7,
};

enum log_sink {
	LOG_SINK_STDERR,
	LOG_SINK_JOURNAL,
};

struct log_field;

struct log {
	enum log_level level;
	enum log_sink sink;
	FILE *stream; /* for LOG_SINK_STDERR; NULL means stderr */
	bool timestamps;
	/* every event logged (log_event) goes here too: the daemon's event stream, which the
	 * owner of the log hooks on (NULL: none) */
	void (*event_hook)(void *ctx, enum log_level level, const char *event,
	                   const struct log_field *fields, unsigned nfields, const char *msg);
	void *event_ctx;
};

/* Initialise with the default: NOTICE to stderr. */
void log_init(struct log *lg);
/* Parse "err", "warn", "notice", "info", "debug" (or 0..4 as -v counts). -1 if unknown. */
int log_level_parse(const char *s);
const char *log_level_name(enum log_level level);

void log_msg(const struct log *lg, enum log_level level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void log_vmsg(const struct log *lg, enum log_level level, const char *subsys, const char *fmt,
              va_list ap);

static inline bool log_enabled(const struct log *lg, enum log_level level)
{
	return lg ? level <= lg->level : level <= LOGL_WARN;
}

#define log_err(lg, sub, ...)    log_msg((lg), LOGL_ERR, (sub), __VA_ARGS__)
#define log_warn(lg, sub, ...)   log_msg((lg), LOGL_WARN, (sub), __VA_ARGS__)
#define log_notice(lg, sub, ...) log_msg((lg), LOGL_NOTICE, (sub), __VA_ARGS__)
#define log_info(lg, sub, ...)   log_msg((lg), LOGL_INFO, (sub), __VA_ARGS__)
/* Debug lines are formatted only when enabled: they may sit on per-MAD paths. */
#define log_debug(lg, sub, ...)                                                                    \
	do {                                                                                       \
		if (log_enabled((lg), LOGL_DEBUG))                                                 \
			log_msg((lg), LOGL_DEBUG, (sub), __VA_ARGS__);                             \
	} while (0)

/* Events an administrator acts on (a port going down, an SM appearing, a counter threshold
 * crossed): one line of prose, plus fields a machine reads. In the journal each field is
 * IBSMD_<KEY> (upper case) beside IBSMD_EVENT=<event>; on a stream they follow the prose as
 * [event=<event> key=value ...]. */
struct log_field {
	const char *key; /* lower case, [a-z_] */
	char value[80];
};
void log_event(const struct log *lg, enum log_level level, const char *event,
               const struct log_field *fields, unsigned nfields, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Rate-limited lines, for anything the wire can trigger (a wrong SM_Key, a malformed MAD, a
 * trap storm): a token bucket per kind of message, as BIRD's log_rl. `burst` lines pass at
 * once, then one per `interval_ms`; the first line let through after a quiet spell says how
 * many were held back. The caller owns the bucket (in its own state, never global). */
struct log_rl {
	uint32_t burst, interval_ms;
	uint32_t tokens;
	uint64_t last_ns;    /* when tokens were last counted */
	uint64_t suppressed; /* held back since the last line that passed */
	bool started;
};
#define LOG_RL_INIT(b, ms) ((struct log_rl){.burst = (b), .interval_ms = (ms)})
#define LOG_RL_DEFAULT     LOG_RL_INIT(5, 1000)

/* Does the bucket let a line through at now_ns? *held gets the count held back before it. */
bool log_rl_allow(struct log_rl *rl, uint64_t now_ns, uint64_t *held);
void log_rl(const struct log *lg, struct log_rl *rl, enum log_level level, const char *subsys,
            const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* "GUID 0x0002c90300000001" in log lines. */
#define GUID_FMT "0x%016" PRIx64

#endif
