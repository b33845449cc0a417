/* Two snapshots a window apart: a rate over the older one covers one to two windows of
 * readings. Kept apart from pm.c so that it is tested without a fabric or a clock. */
#include "pm/rate.h"

#include <string.h>

void pm_rate_roll(struct pm_rate_window *w, const uint64_t total[PM_NCOUNTERS], double now,
                  int first)
{
	if (first) {
		memcpy(w->base, total, sizeof(w->base));
		memcpy(w->next, total, sizeof(w->next));
		w->base_at = w->next_at = now;
	} else if (now - w->next_at >= PM_RATE_WINDOW_S) {
		memcpy(w->base, w->next, sizeof(w->base));
		w->base_at = w->next_at;
		memcpy(w->next, total, sizeof(w->next));
		w->next_at = now;
	}
	w->read_at = now;
}

uint64_t pm_rate_grown(const struct pm_rate_window *w, const uint64_t total[PM_NCOUNTERS],
                       enum pm_counter k)
{
	/* totals only grow; a port slot reused for another port starts afresh in pm.c */
	return total[k] >= w->base[k] ? total[k] - w->base[k] : 0;
}

double pm_rate_hours(const struct pm_rate_window *w)
{
	return (w->read_at - w->base_at) / 3600.;
}

double pm_rate_per_hour(const struct pm_rate_window *w, const uint64_t total[PM_NCOUNTERS],
                        enum pm_counter k)
{
	double secs = w->read_at - w->base_at;
	return (double)pm_rate_grown(w, total, k) / (secs < PM_RATE_WINDOW_S ? 1. : secs / 3600.);
}
