/* A topology file in ibnetdiscover's format (what infiniband-diags' ibnetdiscover writes and
 * `ibsa dump topology` too): its nodes by GUID with their descriptions, and its cables as
 * node and port at both ends; and the differences between a fabric a site saved and the one
 * running now, for `ibsa health --compare`. Parser of outside input: every error names the
 * file and line; fuzzed by test/fuzz/fuzz_name_map.c (its odd first byte). */
#ifndef IBSMD_UTIL_IBNET_H
#define IBSMD_UTIL_IBNET_H

#include <stddef.h>
#include <stdint.h>

#include "util/u64map.h"

struct ibnet_node {
	uint64_t guid;
	uint8_t type; /* 1 CA, 2 switch, 3 router (NodeInfo's NodeType) */
	uint8_t nports;
	char desc[65]; /* the NodeDescription in the node line's comment, "" if none */
};

struct ibnet {
	struct ibnet_node *nodes;
	uint32_t n, cap;
	struct u64map by_guid; /* node GUID -> index */
	struct u64map by_id;   /* the file's name of a node ("S-0002c9..." or a net file's) */
	/* (index + 1) << 8 | port -> the far end, its index << 8 | port */
	struct u64map links;
};

/* 0 with t filled (free it), or -1 with why ("NAME:LINE: ..."), t left empty. */
int ibnet_parse(struct ibnet *t, const char *text, size_t len, const char *name, char *why,
                size_t whylen);
int ibnet_read(struct ibnet *t, const char *path, char *why, size_t whylen);
void ibnet_free(struct ibnet *t);

/* The far end of a node's port: 0 with *guid and *port, -1 if the port has no cable. */
int ibnet_peer(const struct ibnet *t, uint32_t node, unsigned port, uint64_t *guid,
               uint8_t *port_out);

enum ibnet_diff {
	IBNET_NODE_MISSING, /* saved, not in the fabric */
	IBNET_NODE_EXTRA,   /* in the fabric, not saved */
	IBNET_LINK_MISSING, /* a saved cable whose port has none now */
	IBNET_LINK_EXTRA,   /* a cable at a port the saved fabric had free */
	IBNET_MISWIRED,     /* the port's cable goes elsewhere than saved */
};

struct ibnet_change {
	enum ibnet_diff kind;
	uint64_t guid; /* the node (and port, for links) it is about */
	uint8_t port;
	uint64_t want_guid, got_guid; /* the far end saved, and now (0: none) */
	uint8_t want_port, got_port;
};

/* Every difference of live from saved, each told to fn once (a cable once, from the end
 * with the lower GUID, then port); the count. Nodes are matched by GUID. */
unsigned ibnet_compare(const struct ibnet *saved, const struct ibnet *live,
                       void (*fn)(void *ctx, const struct ibnet_change *c), void *ctx);

#endif
