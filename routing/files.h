/* Files that engines read: GUID lists (root_guid_file, cn_guid_file, as OpenSM takes them),
 * forwarding tables in the format ibroute and OpenSM's dump_lfts print (lfts_file), and
 * OpenSM's "GUID NUMBER..." node maps (hop_weights_file, port_prof_ignore_file, ids_guid_file).
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

/* OpenSM's node maps: lines of "GUID N1 .. Nk", k fixed per file, numbers 0x or decimal;
 * blank lines and # comments are skipped. The formats:
 * - hop_weights_file: switch GUID, PORT (1-254), WEIGHT (1-255): the cost of leaving the
 *   switch by that port in the hop counts min-hop routes by (1 when not listed);
 * - port_prof_ignore_file: switch GUID, PORT: routes out of that port do not count in its
 *   load (an internal port, a link not to be balanced);
 * - ids_guid_file: switch GUID, ID (64 bits): up/down's tie break between switches of one
 *   rank, in place of the node GUID. */
#define GUID_LINE_NUMS 2
struct guid_line_fmt {
	const char *guid_what;            /* "switch GUID" */
	unsigned nums;                    /* numbers after the GUID, 1..GUID_LINE_NUMS */
	const char *what[GUID_LINE_NUMS]; /* "port 1-254": "has no port 1-254 after ..." */
	const char *name[GUID_LINE_NUMS]; /* "port": "... after the port" */
	uint64_t lo[GUID_LINE_NUMS], hi[GUID_LINE_NUMS];
	const char *usage; /* "GUID PORT WEIGHT" */
};
extern const struct guid_line_fmt routing_hop_weights_fmt, routing_port_prof_ignore_fmt,
    routing_ids_fmt;
struct guid_line {
	uint64_t guid;
	uint64_t v[GUID_LINE_NUMS];
	unsigned line;
};
/* 0 with a malloc'ed array (free it), or -1 with why ("FILE:LINE: ..."). */
int routing_parse_guid_lines(const char *text, size_t len, const char *name,
                             const struct guid_line_fmt *f, struct guid_line **out, uint32_t *n,
                             char *why, size_t whylen);
int routing_read_guid_lines(const char *path, const struct guid_line_fmt *f, struct guid_line **out,
                            uint32_t *n, char *why, size_t whylen);

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
