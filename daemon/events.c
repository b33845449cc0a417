#include "daemon/events.h"

#include <inttypes.h>
#include <stdio.h>

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
