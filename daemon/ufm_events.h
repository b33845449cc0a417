/* The daemon's recent events (event_stream.h) as UFM's REST API lists events
 * (GET /ufmRest/app/events), for tools that speak UFM. */
#ifndef IBSMD_DAEMON_UFM_EVENTS_H
#define IBSMD_DAEMON_UFM_EVENTS_H

#include <jansson.h>

#include "daemon/event_stream.h"

/* A JSON array, oldest first: id (the stream's seq), name and event_type (the event's
 * name), type "Site", severity (Critical for errors, Warning, Info), timestamp
 * ("YYYY-MM-DD HH:MM:SS.mmm", UTC), counter (a counter_threshold's counter, else "N/A"),
 * category, object_name (the node's GUID as UFM writes it, or "Grid"), object_path,
 * write_to_syslog (true: the journal has every event) and description (the message).
 * NULL out of memory. */
json_t *ufm_events(const struct event_stream *s);

#endif
