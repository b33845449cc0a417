#include "journal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <time.h>

#include "fabric.h"

void fs_journal_add(struct fabric *f, enum fs_journal_kind kind, uint32_t where, uint32_t arg)
{
	struct fs_journal *j = &f->journal;
	if (!j->ring && !(j->ring = calloc(FS_JOURNAL_CAP, sizeof(*j->ring))))
		return; /* out of memory: the journal is for tests, the fabric goes on */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct fs_journal_entry *e = &j->ring[j->total++ % FS_JOURNAL_CAP];
	e->t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	e->where = where;
	e->arg = arg;
	e->kind = (uint8_t)kind;
}

static const char *const state_names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE"};

static void print_one(const struct fabric *f, FILE *o, uint64_t seq,
                      const struct fs_journal_entry *e)
{
	fprintf(o, "%" PRIu64 " %.6f ", seq, e->t);
	if (e->kind == FS_J_NODE) {
		fprintf(o, "node %s - %s\n", f->nodes[e->where].name, e->arg ? "add" : "remove");
		return;
	}
	const struct fs_port *p = &f->ports[e->where];
	const char *node = f->nodes[p->node].name;
	switch (e->kind) {
	case FS_J_CABLE:
		fprintf(o, "cable %s %u %s\n", node, p->num, e->arg ? "up" : "down");
		break;
	case FS_J_PHYS:
		fprintf(o, "phys %s %u %s\n", node, p->num, e->arg ? "enabled" : "disabled");
		break;
	case FS_J_STATE:
		fprintf(o, "state %s %u %s\n", node, p->num,
		        e->arg < 5 ? state_names[e->arg] : "?");
		break;
	case FS_J_LFT: fprintf(o, "lft %s %u %" PRIu32 "\n", node, p->num, e->arg); break;
	case FS_J_PKEY: fprintf(o, "pkeys %s %u %" PRIu32 "\n", node, p->num, e->arg); break;
	case FS_J_GUIDS: fprintf(o, "guids %s %u %" PRIu32 "\n", node, p->num, e->arg); break;
	case FS_J_VPKEY:
		fprintf(o, "vpkeys %s %u %" PRIu32 " %" PRIu32 "\n", node, p->num, e->arg >> 16,
		        e->arg & 0xffff);
		break;
	case FS_J_VSTATE:
		fprintf(o, "vstate %s %u %" PRIu32 " %s\n", node, p->num, e->arg >> 8,
		        (e->arg & 0xff) < 5 ? state_names[e->arg & 0xff] : "?");
		break;
	case FS_J_VPORT:
		fprintf(o, "vport %s %u %" PRIu32 " %s\n", node, p->num, e->arg >> 1,
		        e->arg & 1 ? "add" : "remove");
		break;
	default: fprintf(o, "? %s %u %" PRIu32 "\n", node, p->num, e->arg); break;
	}
}

void fs_journal_print(const struct fabric *f, FILE *o, uint64_t since)
{
	const struct fs_journal *j = &f->journal;
	uint64_t first = j->total > FS_JOURNAL_CAP ? j->total - FS_JOURNAL_CAP : 0;
	if (since < first) {
		/* said, so that a check of "nothing happened" cannot pass on what was dropped */
		fprintf(o, "# lost %" PRIu64 " events before %" PRIu64 " (the ring keeps %u)\n",
		        first - since, first, FS_JOURNAL_CAP);
		since = first;
	}
	for (uint64_t s = since; s < j->total; s++)
		print_one(f, o, s, &j->ring[s % FS_JOURNAL_CAP]);
}

void fs_journal_free(struct fs_journal *j)
{
	free(j->ring);
	j->ring = NULL;
	j->total = 0;
}
