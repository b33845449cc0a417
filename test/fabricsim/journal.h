/* fabricsim's journal: what happened to the fabric and when, by the simulator's own clock.
 * Tests judge properties about time ("disabled for the whole hold time", "no table written
 * while the cable flapped") on these timestamps rather than on their own pace, which a
 * loaded machine stretches. A ring of the last FS_JOURNAL_CAP events; each has a sequence
 * number, so a reader asks for what came after the last one it saw. */
#ifndef FABRICSIM_JOURNAL_H
#define FABRICSIM_JOURNAL_H

#include <stdint.h>
#include <stdio.h>

#define FS_JOURNAL_CAP 65536u

enum fs_journal_kind {
	FS_J_CABLE, /* ctl link down|up: arg 1 up, 0 down (port) */
	FS_J_NODE,  /* ctl node remove|add: arg 1 added, 0 removed (node) */
	FS_J_PHYS,  /* an SM's PortInfo Set disabled (arg 0) or enabled (arg 1) a port */
	FS_J_STATE, /* an SM's PortInfo Set changed PortState: arg the new state (port) */
	FS_J_LFT,   /* an LFT block Set: arg the block (port 0 of the switch) */
	FS_J_PKEY,  /* a P_Key table Set that changed the block: arg the block (port) */
	FS_J_GUIDS, /* a GUIDInfo Set that changed the block: arg the block (port) */
	/* a vport's P_Key block changed by a Set: arg vport << 16 | block (physical port) */
	FS_J_VPKEY,
	FS_J_VSTATE, /* an SM's Set changed a vport's state: arg vport << 8 | state */
	FS_J_VPORT,  /* ctl vport add|remove: arg vport << 1 | 1 added, 0 removed */
};

struct fs_journal_entry {
	double t;       /* CLOCK_REALTIME, seconds */
	uint32_t where; /* port index, or node index for FS_J_NODE */
	uint32_t arg;
	uint8_t kind;
};

struct fs_journal {
	struct fs_journal_entry *ring; /* FS_JOURNAL_CAP entries, allocated at the first event */
	uint64_t total;                /* events ever recorded: the next one's sequence number */
};

struct fabric;
void fs_journal_add(struct fabric *f, enum fs_journal_kind kind, uint32_t where, uint32_t arg);
/* Print the events with sequence numbers >= since still in the ring, one a line:
 * "SEQ TIME KIND NODE PORT DETAIL" (TIME: seconds since the epoch, microseconds), after a
 * line "# lost N events ..." when some of them are no longer in the ring. */
void fs_journal_print(const struct fabric *f, FILE *o, uint64_t since);
void fs_journal_free(struct fs_journal *j);

#endif
