/* The standby sync's bookkeeping, apart from any MAD so that it can be tested alone.
 *
 * A master's journal holds the current items (text lines: what the state files hold) and
 * the changes that led to them, numbered by generation: from a standby's generation and
 * checksum it answers nothing, the changes since (a delta) or everything (a full copy). The
 * epoch names this master instance: a standby that holds another's items gets a full copy.
 * A standby's mirror applies those answers and checks the result against the master's
 * checksum: a mismatch means the copies diverged, and the next answer is a full copy. */
#ifndef IBSMD_SYNC_JOURNAL_H
#define IBSMD_SYNC_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/sync_msg.h"
#include "util/lineset.h"
#include "util/vec.h"

struct sync_change {
	uint64_t gen;
	char op; /* '+' or '-' */
	char *line;
};

struct sync_gen {
	uint64_t sum;
	uint32_t count;
};

struct sync_journal {
	uint64_t epoch;
	uint64_t gen;      /* the newest generation */
	uint64_t base_gen; /* deltas are possible from here on */
	struct lineset cur;
	VEC(struct sync_change) changes; /* ascending generations */
	VEC(struct sync_gen) gens;       /* the set after base_gen, base_gen + 1, ... gen */
	uint32_t max_changes;            /* beyond this (or twice the items) the oldest half goes */
};

void sync_journal_init(struct sync_journal *j, uint64_t epoch, uint32_t max_changes);
void sync_journal_free(struct sync_journal *j);
/* Make the items those of text (lines, '\n' after each): the differences become a new
 * generation. The number of changes, or -1 out of memory (the journal then starts over with
 * a new generation that no delta reaches, so every standby gets a full copy). */
int sync_journal_update(struct sync_journal *j, const char *text, size_t len);
/* The answer to a standby's request: the response header and its payload (malloc'd text,
 * NULL when empty; the caller frees it). 0, or -1 out of memory. */
int sync_journal_answer(const struct sync_journal *j, const struct mad_sync_req *rq,
                        struct mad_sync_resp *resp, char **payload, size_t *len);

/* A standby's copy. */
struct sync_mirror {
	uint64_t epoch; /* 0: holds nothing of any master yet */
	uint64_t gen;
	struct lineset set;
};

/* An item that appeared ('+') or went ('-') by an answer. */
typedef void (*sync_line_fn)(void *ctx, char op, const char *line);

enum sync_apply_result {
	SYNC_APPLIED = 0,
	SYNC_MALFORMED = -1, /* the payload is not what the protocol says: nothing applied */
	SYNC_DIVERGED = -2,  /* applied, but the checksum is not the master's: resync */
	SYNC_NOMEM = -3,
};
/* Apply an answer; fn (may be NULL) hears of every item that changed. After anything but
 * SYNC_APPLIED the mirror's epoch is 0, so that its next request gets a full copy. */
enum sync_apply_result sync_mirror_apply(struct sync_mirror *m, const struct mad_sync_resp *r,
                                         const char *payload, size_t len, sync_line_fn fn,
                                         void *ctx);
void sync_mirror_free(struct sync_mirror *m);

#endif
