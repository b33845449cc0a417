/* Standby sync: the master keeps every standby ibsmd current with what must survive a
 * takeover, in band, over ibsmd's vendor MAD class (mad/sync_msg.h), by RMPP.
 *
 * What is synced is what the state files hold: the LIDs handed out (guid2lid), and what
 * clients created in the SA (services with their leases, multicast groups with their MLIDs and
 * members, InformInfo subscriptions, alias GUIDs). A standby asks its master every poll
 * interval with its epoch, generation and checksum; it gets a full copy first, then the
 * changes; a checksum that disagrees brings a full copy again. The standby writes the copy
 * into its own state directory and, when it becomes master, starts from it: no LID or MLID
 * changes, and clients keep their services, groups and subscriptions.
 *
 * A layer above the SM and the SA; main wires it in as a listener of the SM. */
#ifndef IBSMD_SYNC_SYNC_H
#define IBSMD_SYNC_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa/sa.h"
#include "sm/sm.h"

struct sync;

struct sync *sync_new(struct sm *sm, struct sa *sa);
struct sm_listener sync_listener(struct sync *s);
/* The configuration was reloaded: what it tells peers about partitions, routing and keys. */
void sync_config_changed(struct sync *s);
/* Stop timers and requests (before the SM's dispatcher is cancelled). */
void sync_stop(struct sync *s);
void sync_free(struct sync *s);

struct sync_stats {
	/* as a master */
	uint64_t served_full, served_delta, served_current, refused;
	/* as a standby */
	uint64_t got_full, got_delta, got_current, diverged, malformed, failed;
	/* both: requests or answers without this subnet's MAC (sync/auth.h) */
	uint64_t unauthenticated;
	uint32_t items; /* items held (master: its own; standby: its copy) */
	uint64_t gen;   /* generation reached */
	bool in_step;   /* standby: the last answer left the copy equal to the master's */
};
const struct sync_stats *sync_stats(const struct sync *s);

/* A standby asking this master for the copy, and which of its configuration's digests
 * (partitions, routing, keys) are unlike the master's. */
struct sync_standby {
	uint64_t guid;
	uint16_t lid;
	uint8_t differs; /* bit i: the i-th digest of sync_differs_text; 0: configured alike */
};
/* Master: the standbys that asked within the last three poll intervals, the first max of
 * them in out; how many there are. Not master: 0. */
unsigned sync_standbys(const struct sync *s, struct sync_standby *out, unsigned max);
/* Master: a current standby is configured differently; standby: the master is. */
bool sync_config_differs(const struct sync *s);
/* "partitions, keys" for a digest mask, in buf. */
const char *sync_differs_text(uint8_t mask, char *buf, size_t len);

#endif
