/* The SM's names and events, below everything else in sm/: how a node is named in the logs,
 * structured events (rate limited: the wire can trigger them), the SM's state as SMInfo
 * reports it and the listeners told of its changes. */
#include "sm/sm_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

const char *sm_node_name(const struct sm *sm, uint32_t node, char *buf, size_t len)
{
	const struct topo_node *n = &sm->topo.nodes[node];
	if (n->desc[0])
		snprintf(buf, len, "\"%s\" (GUID " GUID_FMT ")", n->desc, n->guid);
	else
		snprintf(buf, len, "GUID " GUID_FMT, n->guid);
	return buf;
}

static void emit(const struct sm *sm, enum log_level level, const char *event,
                 const char *const *kv, uint64_t held, const char *fmt, va_list ap)
{
	struct log_field f[8];
	unsigned n = 0;
	for (; kv && kv[0] && kv[1] && n < 8; kv += 2, n++) {
		f[n].key = kv[0];
		snprintf(f[n].value, sizeof(f[n].value), "%s", kv[1]);
	}
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (held)
		log_event(sm->log, level, event, f, n,
		          "%s (%" PRIu64 " events held back before it)", msg, held);
	else
		log_event(sm->log, level, event, f, n, "%s", msg);
}

void sm_event(struct sm *sm, enum log_level level, const char *event, const char *const *kv,
              const char *fmt, ...)
{
	uint64_t held = 0;
	if (!log_enabled(sm->log, level) ||
	    !log_rl_allow(&sm->rl_events, (uint64_t)(ev_time() * 1e9), &held))
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(sm, level, event, kv, held, fmt, ap);
	va_end(ap);
}

void sm_audit(struct sm *sm, enum log_level level, const char *event, const char *const *kv,
              const char *fmt, ...)
{
	if (!log_enabled(sm->log, level))
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(sm, level, event, kv, 0, fmt, ap);
	va_end(ap);
}

void sm_set_state(struct sm *sm, uint8_t state)
{
	if (sm->state == state)
		return;
	sm->state = state;
	for (unsigned i = 0; i < sm->nlisteners; i++)
		if (sm->listeners[i].state_changed)
			sm->listeners[i].state_changed(sm->listeners[i].ctx, state);
}

struct mad_sm_info sm_info(const struct sm *sm)
{
	return (struct mad_sm_info){
	    .guid = sm->local.port_guid,
	    .sm_key = 0, /* only shown to requesters that know it */
	    .act_count = sm->act_count,
	    .priority = sm->cfg->sm_priority,
	    .state = sm->state,
	};
}
