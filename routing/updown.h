/* The up/down core that updn, dnup and ftree share: switches ranked by hop distance from a
 * set of roots, one total order (rank, then GUID), and per destination switch the labels
 * that make every route climb first and then only descend.
 *
 * A switch's table cannot tell how a packet arrived, so the route every switch takes towards
 * a destination must be valid however the packet got there: per destination, each switch
 * either descends all the way (DOWN) or climbs first (UP), and descends only into DOWN
 * switches. Then a packet that has moved down once only ever moves down, every route is
 * up* down* in one total order, and no cycle of channel dependencies can form on any graph. */
#ifndef IBSMD_ROUTING_UPDOWN_H
#define IBSMD_ROUTING_UPDOWN_H

#include "routing/engine.h"

enum { UD_DOWN = 1, UD_UP = 2 };
#define UD_ORDERS 8 /* orders for LMC alternates, one per VL at most */

struct updown {
	uint16_t *rank;  /* hops from the nearest root, RT_INF: not reached */
	uint32_t *order; /* NULL: ranks, then GUIDs; else this total order (updown_order_dfs) */
	uint64_t *guid;  /* node GUIDs: the tie break of the order */
	bool reverse;    /* dnup: the first phase moves away from the roots */
	uint32_t ranked; /* switches reached from the roots */
	/* per destination (updown_label) */
	uint16_t *dist;
	uint8_t *st;
	uint32_t *queue;
	uint16_t *plain; /* shortest paths, for switches without an up/down route */
	uint32_t *plain_queue;
	bool plain_done;
	uint32_t dst;
};

/* Order the switches by a depth-first walk from root (preorder), in place of ranks and GUIDs:
 * the up direction then follows the walk's tree back towards root. 0, or -1 (out of memory). */
int updown_order_dfs(struct updown *u, const struct routing_ctx *ctx, uint32_t root);

/* Rank the switches from the roots. 0, or -1 (out of memory). */
int updown_init(struct updown *u, const struct routing_ctx *ctx, const uint32_t *roots,
                uint32_t nroots, bool reverse);
void updown_free(struct updown *u);
/* updn's ids_guid_file (OpenSM's format, GUID ID a line): a listed switch's ID in place of
 * its node GUID as the tie break between switches of one rank (the higher is up). A file
 * that cannot be read is logged and the GUIDs stay. 0, or -1 (out of memory). */
int updown_read_ids(struct updown *u, const struct routing_ctx *ctx);

/* Is a -> b a move of the first phase (up: towards the roots, or away from them reversed)? */
bool updown_first_phase(const struct updown *u, uint32_t a, uint32_t b);

/* The up/down rule for LMC alternates (struct routing_alt_rules, arg: the updown, dst_state
 * UD_DOWN): a step down only onto a switch whose route descends all the way. */
int updown_alt_step(const void *arg, uint32_t v, uint32_t w, uint8_t w_state);

/* Order o (1..) for LMC alternates, after orders ord[0..o-1]: up/down from the switch
 * farthest from their roots, so that its up direction points elsewhere. 0, or -1 (no switch
 * ranked, or out of memory). */
int updown_next_order(const struct updown *ord, unsigned o, const struct routing_ctx *ctx,
                      struct updown *next);

/* Label every switch for destination switch dst. */
void updown_label(struct updown *u, const struct routing_ctx *ctx, uint32_t dst);

/* The edges (indexes into ctx->adj) switch s may take towards the labelled destination, in
 * port order; *climb says whether they are first-phase moves. 0 when s cannot reach it. */
uint32_t updown_candidates(struct updown *u, const struct routing_ctx *ctx, uint32_t s,
                           uint32_t *cand, uint32_t max, bool *climb);

/* Hosts on switch s (leaf[s]) reachable from the labelled destination's switch, which has
 * hosts too, but with no up/down route to it: the order does not suit the graph (roots that do not
 * reach all of it, dnup's order on a graph that is not a tree of tiers). Routing them by other
 * paths would risk credit loops, so the engine fails instead. */
bool updown_unroutable(struct updown *u, const struct routing_ctx *ctx, const bool *leaf,
                       uint32_t s);
void updown_why_unroutable(const struct updown *u, struct routing_ctx *ctx, uint32_t s,
                           uint32_t dst);

/* Route every destination switch (with LIDs, ranked) at every switch, spread over
 * ctx->threads in batches: prepare(arg, slot, label) once per destination after labelling
 * it, then route(arg, slot, label, s, cand, n, climb) at each other switch s with candidates,
 * in destination order at each switch. slot (below 64) tells the destinations of a batch
 * apart. route must write only s's table and loads, and prepare only its slot's data, so
 * that the result is the same whatever the number of threads. 0, or -1 with ctx->why: out of
 * memory, or a host switch with no up/down route to a destination (updown_unroutable). */
struct updown_hooks {
	void (*prepare)(void *arg, uint32_t slot, const struct updown *label);
	void (*route)(void *arg, uint32_t slot, const struct updown *label, uint32_t s,
	              const uint32_t *cand, uint32_t n, bool climb);
	void *arg;
};
#define UPDOWN_SLOTS 64
int updown_route_all(const struct updown *u, struct routing_ctx *ctx, const bool *leaf,
                     const struct updown_hooks *h);

/* Route every destination by up/down from the given roots (updn; dnup reversed), balanced
 * over the candidates by load, then the LMC alternates: on the same order, or with alt (per
 * ctx->dst entry: the order, 1 to 7, of the LIDs that got one) and orders 2 or more (at most
 * 8), LID k of each block on the order that keeps it apart best (updown_next_order). Each
 * order's routes must go on VLs of their own. 0, or -1 with ctx->why. */
int updown_route(struct routing_ctx *ctx, const char *engine, const uint32_t *roots,
                 uint32_t nroots, bool reverse, uint8_t *alt, unsigned orders);

/* updn's and dnup's engine hooks: state records which LIDs go on the second order (SL and
 * VL 1) or the third (2), taken where LMC > 0 and the switch links run two VLs (three). */
int updown_engine_route(struct routing_ctx *ctx, void *state, const char *engine,
                        const uint32_t *roots, uint32_t nroots, bool reverse);
int updown_engine_setup(struct routing_ctx *ctx, void **state);
void updown_engine_free(void *state);
uint8_t updown_engine_path_sl(const struct routing_ctx *ctx, void *state, uint16_t slid,
                              uint16_t dlid);
void updown_engine_sl2vl(const struct routing_ctx *ctx, void *state, uint32_t sw, uint8_t in,
                         uint8_t out, uint8_t vl_of_sl[16]);
unsigned updown_engine_layers(const void *state);

/* The roots from the configuration (root_guids, root_guid_file): 0 with *nroots (0 when
 * none are configured), or -1 with ctx->why. */
int routing_configured_roots(struct routing_ctx *ctx, const char *engine, uint32_t *roots,
                             uint32_t *nroots);

/* Roots found from the topology: the switches farthest from the leaves (leaf[s]: switch s
 * has endpoints that count), the spines or cores of a fat tree; failing that the graph's
 * centre. 0, or -1. */
int routing_detect_roots(const struct routing_ctx *ctx, const bool *leaf, uint32_t *roots,
                         uint32_t *nroots);

/* Leaves: switches with CA or router ports that have LIDs. */
void routing_host_switches(const struct routing_ctx *ctx, bool *leaf);

#endif
