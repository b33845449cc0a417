/* The subnet administrator: SA queries on QP1, answered from the SM's own tables.
 *
 * Records are built from the topology the SM keeps (nodes, ports, links, LIDs, programmed
 * tables); a query's component mask selects among them by comparing the masked components on
 * the wire. Get answers one record (or NO_RECORDS / TOO_MANY_RECORDS), GetTable all of them
 * by RMPP. */
#ifndef IBSMD_SA_SA_H
#define IBSMD_SA_SA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mad/mad_layout.h"

#include "mad/sa_records.h"
#include "sm/sm.h"

/* A record's components, in component-mask bit order: their bit ranges on the wire. */
struct sa_component {
	uint16_t bitoff, bitlen;
	bool subset; /* matches when the record has every bit the request sets (CapabilityMask) */
};

struct sa_components {
	struct sa_component c[96];
	unsigned n;
};

/* Derive the components of a record layout: its fields in wire order, reserved gaps as
 * components of their own, embedded tables as one component (IBA 15.2.5). */
void sa_components_from_layout(const struct mad_layout *l, struct sa_components *out);
/* Do the masked components of two wire records agree? */
bool sa_components_match(const struct sa_components *c, uint64_t mask, const uint8_t *a,
                         const uint8_t *b);

/* A growing buffer of wire records of one size.
 *
 * With a filter (sa_records_filter) it keeps only records whose masked components match the
 * request's, checking each when the next is added (builders encode a record after adding
 * it), and at most `max` of them: past that sa_records_add returns NULL and `capped` is set.
 * A Get then holds two records at most, however many the fabric has, and a table no more
 * than one transfer carries. */
struct sa_records {
	uint8_t *buf;
	size_t size, stride; /* record size on the wire, and padded to 8 */
	uint32_t n, cap;
	const struct sa_components *filt; /* NULL: every record is kept */
	uint64_t mask;
	const uint8_t *want;
	uint32_t max; /* 0: no bound */
	bool pending; /* the last record is not checked against the filter yet */
	bool capped;  /* more records than max were offered */
};
uint8_t *sa_records_add(struct sa_records *r);
void sa_records_filter(struct sa_records *r, const struct sa_components *c, uint64_t mask,
                       const uint8_t *want, uint32_t max);
/* Check the last record added (after a filtered build). */
void sa_records_settle(struct sa_records *r);
void sa_records_free(struct sa_records *r);

struct sa;
struct sa *sa_new(struct sm *sm);
void sa_free(struct sa *sa);
/* The hooks main registers with the SM (sm_add_listener): sweeps done, traps. */
struct sm_listener sa_listener(struct sa *sa);
/* After a sweep that left the subnet up: Reports for ports that came into or went out of
 * service, subscriptions of ports that left dropped. */
void sa_sweep_done(struct sa *sa);

/* A trap the SM received (a switch's link change, a port's capability change...) as Reports
 * to the ports that subscribed to it. */
struct mad_notice;
void sa_forward_trap(struct sa *sa, const struct mad_notice *trap);

/* Answers by attribute and outcome (the metrics' "SA requests by attribute and status") */
#define SA_STATS_MAX_ATTRS 24
struct sa_attr_stats {
	uint16_t id;
	const char *name; /* "PathRecord"...; "other" for attributes the SA does not serve */
	uint64_t ok, no_records, busy, error;
};

/* Statistics for logs and tests */
struct sa_stats {
	struct sa_attr_stats attr[SA_STATS_MAX_ATTRS];
	unsigned nattrs;
	uint64_t requests, answered, no_records, errors, malformed;
	uint64_t reports_sent, reports_lost;
	uint64_t bad_key; /* requests discarded for a wrong SM_Key */
	uint64_t busy;    /* tables refused with BUSY: too many transfers under way */
	uint64_t path_cache_hits;
	uint64_t state_writes; /* the state file written whole */
};
const struct sa_stats *sa_stats(const struct sa *sa);
/* What the SA holds now: multicast groups, services, event subscriptions. */
struct sa_counts {
	uint32_t groups, services, subscriptions;
};
struct sa_counts sa_counts(const struct sa *sa);

/* What clients created (services, groups and members, subscriptions, alias GUIDs), as the
 * state file's lines, for the standby sync (sync/): is it the SA's own yet (a master's, after
 * its first sweep), a count that moves with every change, all its lines, and, on a standby,
 * the master's copy to keep (saved, and applied after the first sweep as master). */
bool sa_state_ready(const struct sa *sa);
uint64_t sa_state_changes(const struct sa *sa);
/* Changes not in the state file yet (a save is at most a second away). */
bool sa_state_unsaved(const struct sa *sa);
void sa_state_write(struct sa *sa, FILE *f);
int sa_state_replace(struct sa *sa, const char *const *lines, uint32_t n);

/* A ServiceRecord this SA shows for the SM itself, never saved nor synced: what it offers
 * other SMs (the standby sync). Only a query that selects its ServiceID sees it. ServiceGID
 * is the SM's port GID, ServiceP_Key the default partition, the lease infinite; id, name and
 * data come from the record given. */
void sa_service_builtin(struct sa *sa, const struct mad_service_record *r);

#endif
