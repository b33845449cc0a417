/* A port's rate window: every counter's total as it was one to two windows (an hour each)
 * before the last reading, so that a rate judged over it is recent: neither the last
 * interval's burst nor diluted over the days since the PM started. The PM rolls it at each
 * reading; the health report reads rates from it. */
#ifndef IBSMD_PM_RATE_H
#define IBSMD_PM_RATE_H

#include <stdint.h>

#include "pm/counter.h"

#define PM_RATE_WINDOW_S 3600.0

struct pm_rate_window {
	uint64_t base[PM_NCOUNTERS]; /* the totals at the window's start */
	uint64_t next[PM_NCOUNTERS]; /* ... and at the start of the window to come */
	double base_at, next_at, read_at;
};

/* A reading of every total at `now` (seconds); `first`: the port's first, which starts
 * both windows. */
void pm_rate_roll(struct pm_rate_window *w, const uint64_t total[PM_NCOUNTERS], double now,
                  int first);
/* Counter k's growth since the window's start. */
uint64_t pm_rate_grown(const struct pm_rate_window *w, const uint64_t total[PM_NCOUNTERS],
                       enum pm_counter k);
/* ... an hour's worth: over less than an hour the count itself (so many within minutes is
 * at least so many an hour). */
double pm_rate_per_hour(const struct pm_rate_window *w, const uint64_t total[PM_NCOUNTERS],
                        enum pm_counter k);
/* The hours the window covers, up to the last reading. */
double pm_rate_hours(const struct pm_rate_window *w);

#endif
