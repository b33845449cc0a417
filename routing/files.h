/* Files that engines read: GUID lists (root_guid_file, cn_guid_file, as OpenSM takes them),
 * forwarding tables in the format ibroute and OpenSM's dump_lfts print (lfts_file), and
 * link weights (hop_weights_file).
 * Parsers of outside input: each error names the file and line; fuzzed by
 * test/fuzz/fuzz_routing_files.c. */
#ifndef IBSMD_ROUTING_FILES_H
#define IBSMD_ROUTING_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One GUID per line (hexadecimal, 0x optional); blank lines and # comments are skipped.
 * 0 with a malloc'ed array (free it), or -1 with why ("FILE:LINE: ..."). */
int routing_parse_guids(const char *text, size_t len, const char *name, uint64_t **guids,
                        uint32_t *n, char *why, size_t whylen);
int routing_read_guid_file(const char *path, uint64_t **guids, uint32_t *n, char *why,
                           size_t whylen);

/* hop_weights_file, as OpenSM reads it: "GUID PORT WEIGHT" per line, the cost (1-255, 1 when
 * not listed) of leaving switch GUID by PORT in the hop counts min-hop routes by; blank lines
 * and # comments are skipped. 0 with a malloc'ed array, or -1 with why ("FILE:LINE: ..."). */
struct hop_weight {
	uint64_t guid;
	uint8_t port, weight;
	unsigned line;
};
int routing_parse_hop_weights(const char *text, size_t len, const char *name,
                              struct hop_weight **out, uint32_t *n, char *why, size_t whylen);
int routing_read_hop_weights(const char *path, struct hop_weight **out, uint32_t *n, char *why,
                             size_t whylen);

/* An LFT dump: a header line "Unicast lids [...] of switch ... guid 0x<GUID> ..." starts a
 * switch's entries; entry lines are "0x<LID> <port> ..."; other lines are ignored. */
struct lfts_parse_cb {
	/* a switch's header: 0, or -1 to stop (with why) */
	int (*sw)(void *arg, uint64_t guid, unsigned line);
	int (*entry)(void *arg, uint16_t lid, uint8_t port, unsigned line);
};
int routing_parse_lfts(const char *text, size_t len, const char *name,
                       const struct lfts_parse_cb *cb, void *arg, char *why, size_t whylen);
/* The same, read from a file a line at a time (a dump of a large fabric is hundreds of MB). */
int routing_read_lfts(const char *path, const struct lfts_parse_cb *cb, void *arg, char *why,
                      size_t whylen);

/* The next line of text[*pos..len) into a bounded copy (longer lines are cut: no format here
 * has a meaningful field past 1 KB). false at the end. */
bool routing_next_line(const char *text, size_t len, size_t *pos, char *line, size_t size);

/* The whole of a file (NUL-terminated), at most max bytes: 0, or -1 with why. */
int routing_slurp(const char *path, size_t max, char **text, size_t *len, char *why, size_t whylen);

#endif
