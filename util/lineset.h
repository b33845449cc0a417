/* A set of text lines (no newline in them), with a checksum of the set that does not depend on
 * the order the lines came in: the sum of their 64-bit hashes. Two copies of a set kept on
 * different machines agree when their checksums and counts do (the standby sync's test).
 * Lines live in one array, found through util/idxmap. */
#ifndef IBSMD_UTIL_LINESET_H
#define IBSMD_UTIL_LINESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/idxmap.h"
#include "util/vec.h"

struct lineset {
	VEC(char *) lines;
	struct idxmap map;
	uint64_t sum;
};

/* The 64-bit hash a line adds to the checksum (FNV-1a, then a final mix). */
uint64_t lineset_hash(const char *line, size_t len);
/* 1 added, 0 already there, -1 out of memory. */
int lineset_add(struct lineset *s, const char *line, size_t len);
/* Takes a line the caller allocated (malloc) instead of copying it: 1 added (the set owns it
 * now), 0 already there (freed), -1 out of memory (freed). */
int lineset_add_owned(struct lineset *s, char *line);
/* true when it was there (and is gone). */
bool lineset_del(struct lineset *s, const char *line, size_t len);
bool lineset_has(const struct lineset *s, const char *line, size_t len);
static inline uint32_t lineset_count(const struct lineset *s)
{
	return s->lines.n;
}
void lineset_clear(struct lineset *s);
void lineset_free(struct lineset *s);

#endif
