/* A set of unicast forwarding tables checked from the SM's own model, as fabricsim verify
 * checks them from outside: every endpoint reaches every destination LID along the tables,
 * no walk comes back to a switch it crossed (a forwarding loop), and no SL layer's channel
 * dependency graph has a cycle (a credit loop). The dry run (sm/dryrun.c) checks the running
 * SM's tables and its own this way. */
#ifndef IBSMD_ROUTING_CHECK_H
#define IBSMD_ROUTING_CHECK_H

#include <stdint.h>

#include "routing/engine.h"

/* The output port of switch sw for dlid in the tables checked (0xff: none). */
typedef uint8_t (*routing_lft_fn)(const struct topo *t, uint32_t sw, uint16_t dlid);
/* The SL (the layer) of the path slid -> dlid; NULL: every path on SL 0. */
typedef uint8_t (*routing_sl_fn)(void *arg, uint16_t slid, uint16_t dlid);

struct routing_check {
	uint64_t pairs;       /* source endpoint x destination LID, an endpoint's own left out */
	uint64_t unreachable; /* ... not reached along the tables */
	uint64_t loops;       /* walks (switch x LID) that came back to a switch */
	uint16_t layers;      /* SL layers the paths use (bit l: SL l) */
	uint16_t cyclic;      /* ... whose dependency graph has a cycle */
	uint16_t example_src, example_dst; /* an unreachable pair (LIDs), 0: none */
};

/* Check the tables lft gives over ctx's switch graph and destinations. 0, or -1 when out of
 * memory. */
int routing_check(const struct routing_ctx *ctx, routing_lft_fn lft, routing_sl_fn sl, void *sl_arg,
                  struct routing_check *out);

#endif
