/* The fabric health report (`ibsa health`, control command "health"): the SM, duplicate
 * GUIDs, ports, links below their rate, error counters, routes and credit loops, and
 * partitions, each ok, warn or fail with what it found (daemon/health_report.c). */
#ifndef IBSMD_DAEMON_HEALTH_REPORT_H
#define IBSMD_DAEMON_HEALTH_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "sm/sm.h"

struct sync;
struct pm;
/* The report as text or JSON into out (pm NULL: no counters). 0 every check ok, 1 some
 * warn, 2 some fail; -1 out of memory. */
int health_report(struct sm *sm, const struct sync *sy, const struct pm *pm, FILE *out, bool json);
/* The report's findings as UFM's REST API lists alarms (GET /ufmRest/app/alarms): a JSON
 * array, one alarm per thing a check names (at most five per check, as the report shows),
 * severity Critical for a failing check's, Warning for a warning's, stamped `now` (seconds
 * since the epoch, written in UTC). How many alarms; -1 out of memory. */
int health_alarms(struct sm *sm, const struct sync *sy, const struct pm *pm, FILE *out, double now);

#endif
