/* UFM's event shape from the stream's own JSON lines (see ufm_events.h): the stream keeps
 * its events as the lines its followers get, so they are read back here rather than kept
 * twice. */
#include "daemon/ufm_events.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *str_of(json_t *o, const char *key, const char *dflt)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v && v[0] ? v : dflt;
}

static const char *severity_of(const char *level)
{
	if (!strcmp(level, "warn"))
		return "Warning";
	if (!strcmp(level, "err"))
		return "Critical";
	return "Info";
}

/* One stream line as UFM's event; NULL when the line is not one (it always is). */
static json_t *event_of(const char *line)
{
	json_t *in = json_loads(line, 0, NULL);
	if (!json_is_object(in)) {
		json_decref(in);
		return NULL;
	}
	json_t *f = json_object_get(in, "fields");
	const char *name = str_of(in, "event", "event");
	/* "2026-12-06T03:29:00.942Z" -> "2026-12-06 03:29:00.942" */
	char stamp[32];
	snprintf(stamp, sizeof(stamp), "%s", str_of(in, "time", ""));
	char *t = strchr(stamp, 'T'), *z = strchr(stamp, 'Z');
	if (t)
		*t = ' ';
	if (z)
		*z = 0;
	const char *guid = str_of(f, "node_guid", NULL), *desc = str_of(f, "node_desc", NULL);
	if (guid && !strncmp(guid, "0x", 2))
		guid += 2;
	char path[400];
	if (desc)
		snprintf(path, sizeof(path), "default / %s", desc);
	else
		snprintf(path, sizeof(path), "%s", guid ? guid : "Grid");
	bool counter = !strcmp(name, "counter_threshold");
	json_t *out = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:s}", "id",
	                        (json_int_t)json_integer_value(json_object_get(in, "seq")), "name",
	                        name, "type", "Site", "event_type", name, "severity",
	                        severity_of(str_of(in, "level", "info")), "timestamp", stamp,
	                        "counter", counter ? str_of(f, "counter", "N/A") : "N/A",
	                        "category", counter ? "Communication Error" : "Fabric Notification",
	                        "object_name", guid ? guid : "Grid", "object_path", path,
	                        "write_to_syslog", 1, "description", str_of(in, "message", ""));
	json_decref(in);
	return out;
}

json_t *ufm_events(const struct event_stream *s)
{
	json_t *all = json_array();
	if (!all)
		return NULL;
	for (unsigned i = 0; i < EVENT_STREAM_RECENT; i++) {
		const char *line = s->recent[(s->next + i) % EVENT_STREAM_RECENT];
		json_t *e = line ? event_of(line) : NULL;
		if (e && json_array_append_new(all, e) < 0) {
			json_decref(all);
			return NULL;
		}
	}
	return all;
}
