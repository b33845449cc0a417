#include "daemon/events.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>

static void on_threshold(void *ctx, const struct pm_event *ev)
{
	struct events *e = ctx;
	e->counter_events++;
	struct log_field f[6] = {{.key = "node_guid"}, {.key = "node_desc"}, {.key = "port"},
	                         {.key = "counter"},   {.key = "delta"},     {.key = "threshold"}};
	snprintf(f[0].value, sizeof(f[0].value), "0x%016" PRIx64, ev->node_guid);
	snprintf(f[1].value, sizeof(f[1].value), "%s", ev->node_desc);
	snprintf(f[2].value, sizeof(f[2].value), "%u", ev->port_num);
	snprintf(f[3].value, sizeof(f[3].value), "%s", pm_counter_name(ev->counter));
	snprintf(f[4].value, sizeof(f[4].value), "%" PRIu64, ev->delta);
	snprintf(f[5].value, sizeof(f[5].value), "%" PRIu64, ev->threshold);
	log_event(e->log, LOGL_WARN, "counter_threshold", f, 6,
	          "port counter threshold crossed: \"%s\" (GUID 0x%016" PRIx64 ") port %u: %s "
	          "+%" PRIu64 " in %.0f s (threshold %" PRIu64 "); check that link's cable and "
	          "transceivers",
	          ev->node_desc, ev->node_guid, ev->port_num, pm_counter_name(ev->counter),
	          ev->delta, ev->seconds, ev->threshold);
}

struct pm_listener events_pm_listener(struct events *e)
{
	return (struct pm_listener){.ctx = e, .threshold = on_threshold};
}

void events_start(struct events *e, struct log *lg, struct sm *sm, struct ev_loop *loop)
{
	e->sm = sm;
	event_stream_init(&e->stream, loop, lg);
	e->rl_traps = LOG_RL_INIT(20, 100);
	lg->event_hook = event_stream_log_hook;
	lg->event_ctx = &e->stream;
	e->started = true;
}

void events_stop(struct events *e, struct log *lg)
{
	if (!e->started)
		return;
	lg->event_hook = NULL;
	lg->event_ctx = NULL;
	event_stream_free(&e->stream);
	e->started = false;
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* OpenSM's SUBNET_UP and HEAVY_SWEEP_DONE */
static void on_sweep_done(void *ctx, bool structural)
{
	struct events *e = ctx;
	struct sm_status st = sm_status(e->sm);
	const struct sm_counts *c = &st.counts;
	struct log_field f[9] = {{.key = "nodes"},  {.key = "switches"}, {.key = "cas"},
	                         {.key = "ports"},  {.key = "links"},    {.key = "lids"},
	                         {.key = "engine"}, {.key = "heavy"},    {.key = "seconds"}};
	const unsigned v[6] = {c->nodes, c->switches, c->cas, c->ports, c->links, c->lids};
	for (unsigned i = 0; i < 6; i++)
		snprintf(f[i].value, sizeof(f[i].value), "%u", v[i]);
	snprintf(f[6].value, sizeof(f[6].value), "%s", st.engine ? st.engine : "-");
	snprintf(f[7].value, sizeof(f[7].value), "%s", structural ? "true" : "false");
	snprintf(f[8].value, sizeof(f[8].value), "%.3f", st.times.total);
	char msg[160];
	snprintf(msg, sizeof(msg), "subnet up: %u nodes, %u ports, %u LIDs", c->nodes, c->ports,
	         c->lids);
	event_stream_put(&e->stream, wall_now(), LOGL_NOTICE, "subnet_up", f, 9, msg);
}

/* OpenSM's STATE_CHANGE */
static void on_state(void *ctx, uint8_t state)
{
	struct events *e = ctx;
	struct log_field f[1] = {{.key = "state"}};
	snprintf(f[0].value, sizeof(f[0].value), "%s", sm_state_name(state));
	char msg[64];
	snprintf(msg, sizeof(msg), "this SM is %s", sm_state_name(state));
	event_stream_put(&e->stream, wall_now(), LOGL_NOTICE, "sm_state", f, 1, msg);
}

/* OpenSM's TRAP */
static void on_trap(void *ctx, const struct mad_notice *n)
{
	struct events *e = ctx;
	uint64_t held;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!log_rl_allow(&e->rl_traps, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
	                  &held))
		return;
	struct log_field f[4] = {
	    {.key = "trap"}, {.key = "issuer_lid"}, {.key = "producer"}, {.key = "held_back"}};
	snprintf(f[0].value, sizeof(f[0].value), "%u", n->is_generic ? n->trap_number : 0);
	snprintf(f[1].value, sizeof(f[1].value), "%u", n->issuer_lid);
	snprintf(f[2].value, sizeof(f[2].value), "%u", n->producer_type);
	snprintf(f[3].value, sizeof(f[3].value), "%" PRIu64, held);
	char msg[96];
	if (n->is_generic)
		snprintf(msg, sizeof(msg), "trap %u from LID %u", n->trap_number, n->issuer_lid);
	else
		snprintf(msg, sizeof(msg), "vendor trap (vendor 0x%06x) from LID %u",
		         n->producer_type, n->issuer_lid);
	event_stream_put(&e->stream, wall_now(), LOGL_INFO, "trap", f, 4, msg);
}

struct sm_listener events_sm_listener(struct events *e)
{
	return (struct sm_listener){
	    .ctx = e, .sweep_done = on_sweep_done, .state_changed = on_state, .trap = on_trap};
}
