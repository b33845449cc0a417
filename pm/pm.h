/* The performance manager: reads every port's PortCounters (and PortCountersExtended where
 * a node answers it) at pm_interval, with pm_window requests at most in flight and none
 * while the SM sweeps, so it never slows the SM's own work. It keeps 64-bit totals from the
 * saturating hardware counters (clearing a counter that passes half its range), data rates,
 * and calls its listener when an error counter grows by its threshold between two readings.
 * Above the SM: it reads the model and sends through the SM's dispatcher. */
#ifndef IBSMD_PM_PM_H
#define IBSMD_PM_PM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pm/counter.h"
#include "pm/rate.h"
#include "sm/sm.h"

/* One port's figures: totals since the PM first read it, and the data rates of the last
 * interval (bytes per second). */
struct pm_port_stats {
	uint64_t total[PM_NCOUNTERS];
	double xmit_rate, rcv_rate;
	bool read; /* answered at least once */
	bool ext;  /* PortCountersExtended answered: the unicast and multicast counts are real */
	/* the error counters at the first reading: what the port counted before ibsmd read it
	 * (a boot's LinkDowned), not news */
	uint64_t at_start[PM_NERRORS];
	struct pm_rate_window window; /* for rates over the last hour or two */
};

struct pm_event {
	uint32_t port; /* topo port index */
	uint64_t node_guid;
	uint8_t port_num;
	const char *node_desc;
	enum pm_counter counter;
	uint64_t delta, threshold;
	double seconds; /* between the two readings */
};

struct pm_listener {
	void *ctx;
	void (*threshold)(void *ctx, const struct pm_event *ev);
};

struct pm_stats {
	uint64_t sweeps, reads, unanswered, clears, deferred;
	double last_sweep_s;         /* from the first request to the last answer */
	uint32_t ports;              /* read in the last sweep */
	uint64_t errors[PM_NERRORS]; /* fabric-wide totals */
	/* PortCounters Gets of the last complete sweep that failed, switches' ports [0] and
	 * CAs' [1]: not answered at all (timeouts), or answered with an error status */
	uint32_t last_timeouts[2], last_errors[2];
};

struct pm;
struct pm *pm_new(struct sm *sm, const struct pm_listener *l);
/* Start (or restart, after a reload) sweeping at the configured interval. */
void pm_reconfigure(struct pm *pm);
void pm_stop(struct pm *pm);
void pm_free(struct pm *pm);
const struct pm_stats *pm_stats(const struct pm *pm);
/* A port's figures, NULL when never read. */
const struct pm_port_stats *pm_port(const struct pm *pm, uint32_t port);

#endif
