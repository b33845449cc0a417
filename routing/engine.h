/* Routing engines. Each is one file with one `const struct routing_engine`; the SM runs them
 * as a chain ("updn,minhop"): the first that succeeds routes the subnet.
 *
 * An engine reads the topology through a routing_ctx (switch graph, destinations grouped by
 * the switch they hang off, per-port load counters for balancing) and fills every switch's
 * wanted LFT (topo.sws[i].lft). Optional hooks give the SL of a path (for the SA's
 * PathRecords), SL-to-VL tables (for engines that break credit loops with VLs) and multicast
 * spanning trees. */
#ifndef IBSMD_ROUTING_ENGINE_H
#define IBSMD_ROUTING_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "fabric/fabric.h"
#include "util/log.h"
#include "util/vec.h"

#define RT_INF UINT16_MAX

struct rt_edge {
	uint32_t to;  /* neighbour switch index */
	uint8_t port; /* our port towards it */
};

struct rt_dest {
	uint16_t lid;
	uint8_t port; /* the port of the destination's own switch it leaves by (0: itself) */
};

struct routing_ctx {
	struct topo *t;
	const struct ibsmd_config *cfg;
	const struct log *log;
	uint32_t nsw;
	/* switch graph over links that are up: edges of switch s are adj[adj_start[s] ..
	 * adj_start[s + 1]) */
	uint32_t *adj_start;
	struct rt_edge *adj;
	/* destinations by switch, likewise: dst[dst_start[s] .. dst_start[s + 1]) */
	uint32_t *dst_start;
	struct rt_dest *dst;
	uint16_t max_lid;
	/* routes through each switch port so far: load[port_base[s] + port] */
	uint32_t *port_base;
	uint32_t *load;
	bool sticky; /* keep routes switches hold while they stay valid (see routing_assign) */
	/* OpenSM's unicast manager's knobs (scatter_ports, port_shifting, port_prof_ignore_file),
	 * honoured by routing_assign for the engines that run on that manager under OpenSM:
	 * minhop, updn, dnup and lash set ucast_mgr; ftree balances its own way, as OpenSM's */
	bool ucast_mgr;
	uint8_t *prof_ignored; /* [port_base[s] + port]: routes out of it weigh nothing; or NULL */
	/* guid_routing_order_file (OpenSM's unicast manager too): the ports listed are routed
	 * before every other, in the file's order. Each switch's destinations are reordered so
	 * that its listed ports' LIDs come first (dst_start[s] .. listed_end[s]); sw_order gives
	 * the destination switches in the order their first listed port has; engines with
	 * ucast_mgr route listed_pass 1 (listed LIDs only) over every switch, then 2 (the rest).
	 * NULL without the file. */
	uint32_t *sw_order, *listed_end;
	unsigned listed_pass; /* 0: every destination; 1, 2: as above */
	unsigned threads;     /* engines that spread work over CPUs: 0 all online, 1 none */
	char why[512];        /* an engine's reason for failing */
};

struct routing_engine {
	const char *name;
	const char *summary;
	/* Prepare per-run state (optional). 0, or -1 with ctx->why. */
	int (*setup)(struct routing_ctx *ctx, void **state);
	/* Fill every present switch's LFT. 0, or -1 with ctx->why (the chain moves on). */
	int (*unicast)(struct routing_ctx *ctx, void *state);
	/* The SL for traffic slid -> dlid (optional: SL 0 without it). */
	uint8_t (*path_sl)(const struct routing_ctx *ctx, void *state, uint16_t slid,
	                   uint16_t dlid);
	/* The SL-to-VL table of switch sw for in_port -> out_port (optional). */
	void (*sl2vl)(const struct routing_ctx *ctx, void *state, uint32_t sw, uint8_t in_port,
	              uint8_t out_port, uint8_t vl_of_sl[16]);
	/* sl2vl's table depends only on the number of VLs the output's link runs: the SM then
	 * sets it for all inputs at once (a Set per switch, not per port pair) */
	bool sl2vl_by_vls;
	/* sl2vl's table depends only on the switch and the output: one Set per output */
	bool sl2vl_by_output;
	/* ... unless this hook (optional) says that this routing's tables at switch sw depend
	 * on the input too (torus beside a missing switch): then a Set per input/output pair */
	bool (*sl2vl_by_input)(const void *state, uint32_t sw);
	/* Multicast tree connecting the member switches (optional: routing_mcast_default
	 * otherwise). up_port has ctx->nsw entries, all RT_NO_PORT on entry: set the root's to
	 * 0 and every other tree switch's to its port towards its parent. 0, or -1 to leave it
	 * to the default. */
	int (*mcast_tree)(const struct routing_ctx *ctx, void *state, const uint32_t *member_sw,
	                  uint32_t nmembers, uint8_t *up_port);
	/* How many SL/VL layers the routes need to be free of credit loops (optional: 1).
	 * Layer l is SL l; the SM stacks QoS SLs on top (sm/route.c). */
	unsigned (*layers)(const void *state);
	/* The VLs those layers take (optional: one each). QoS class c takes VLs c x this up. */
	unsigned (*layer_vls)(const void *state);
	void (*teardown)(void *state);
};

extern const struct routing_engine routing_minhop;
extern const struct routing_engine routing_updn;
extern const struct routing_engine routing_dnup;
extern const struct routing_engine routing_ftree;
extern const struct routing_engine routing_file;
extern const struct routing_engine routing_sssp;
extern const struct routing_engine routing_dfsssp;
extern const struct routing_engine routing_lash;
extern const struct routing_engine routing_nue;
extern const struct routing_engine routing_dor;
extern const struct routing_engine routing_torus;

const struct routing_engine *routing_find(const char *name);
/* Names of all engines, for help texts: "minhop, updn" */
const char *routing_names(void);

/* Build the context from the topology (switch graph, destinations, LFT arrays). 0 or -1. */
int routing_ctx_build(struct routing_ctx *ctx, struct topo *t, const struct ibsmd_config *cfg,
                      const struct log *log);
void routing_ctx_free(struct routing_ctx *ctx);
/* Every switch's table empty (0xff) and every port's load 0, as routing_ctx_build() leaves
 * them: for an engine that routes a second time from scratch. */
void routing_ctx_clean(struct routing_ctx *ctx);

/* An engine's switch map (hop_weights_file, port_prof_ignore_file, ids_guid_file: lines of
 * format f, routing/files.h): each line naming a switch of the fabric (and, with port, a
 * port it has as the line's first number) goes to take(arg, switch index, line); the other
 * lines are counted in one log line. A file that cannot be read, or a line not in the
 * format, is logged as an error with its file and line and then what happens instead
 * ("routing without hop weights until it is fixed"), as OpenSM goes on without the file.
 * 1 when the file was read, 0 when path is empty or the file was refused. */
struct guid_line;
struct guid_line_fmt;
int routing_switch_map(const struct routing_ctx *ctx, const char *path,
                       const struct guid_line_fmt *f, bool port,
                       void (*take)(void *arg, uint32_t sw, const struct guid_line *l), void *arg,
                       const char *then);

/* Hops between every pair of switches (n x n bytes, RT_HOPS_INF: unreached), by one
 * routing_bfs per switch: what multicast roots are chosen by. */
#define RT_HOPS_INF 0xff
#define RT_NO_PORT  0xff
struct routing_hops {
	uint8_t *d;
	uint32_t n;
};
int routing_hops_build(const struct routing_ctx *ctx, struct routing_hops *h);
void routing_hops_free(struct routing_hops *h);
/* minhop's routes without the LMC alternates (routing/minhop.c): every LID along a shortest
 * path, balanced over the equal ports; what lash lays on virtual layers. weights: a port
 * costs what hop_weights_file says, and OpenSM's balancing knobs apply (ctx->ucast_mgr):
 * minhop's; OpenSM's lash takes neither. 0, or -1 (why). */
int routing_minhop_routes(struct routing_ctx *ctx, bool weights);

/* The default multicast tree (routing/mcast.c): rooted at the switch whose farthest member
 * switch is nearest, shortest branches from each member to it. up_port as for the hook. */
int routing_mcast_default(const struct routing_ctx *ctx, const struct routing_hops *h,
                          const uint32_t *member_sw, uint32_t nmembers, uint8_t *up_port);
/* The engine's tree when it has one, the default otherwise. */
int routing_mcast_tree(const struct routing_engine *e, void *state, const struct routing_ctx *ctx,
                       const struct routing_hops *h, const uint32_t *member_sw, uint32_t nmembers,
                       uint8_t *up_port);

/* The SL of traffic slid -> dlid by the engine's path_sl hook, 0 without one. */
uint8_t routing_path_sl(const struct routing_engine *e, void *state, const struct routing_ctx *ctx,
                        uint16_t slid, uint16_t dlid);
/* A switch's SL-to-VL table for in -> out by the engine's sl2vl hook, packed as on the wire
 * (SL0 in the top nibble); false without one. */
bool routing_sl2vl(const struct routing_engine *e, void *state, const struct routing_ctx *ctx,
                   uint32_t sw, uint8_t in, uint8_t out, uint64_t *packed);

/* The layers the engine's routes need (its layers hook, else 1), and the VLs they take (its
 * layer_vls hook, else one per layer). */
unsigned routing_layers(const struct routing_engine *e, const void *state);
unsigned routing_layer_vls(const struct routing_engine *e, const void *state);
/* Data VLs the link at a port runs (VLCap of both ends): 1, 2, 4, 8 or 15. */
unsigned routing_port_vls(const struct topo *t, uint32_t port);
/* The fewest data VLs any switch-to-switch link runs (what layers may use); 15 without any
 * such link. */
unsigned routing_link_vls(const struct routing_ctx *ctx);

/* SL-to-VL for engines that keep `layers` layers apart on SLs 0..layers-1 (and QoS classes
 * stacked on them): SL s on VL s on every switch link (they run at least the layers); where
 * an output runs fewer VLs (a host's link, past the last switch-to-switch hop, where no
 * dependency follows) SLs fold onto its layer, then onto the VLs it runs. */
void routing_layer_sl2vl(const struct routing_ctx *ctx, uint32_t sw, uint8_t out, unsigned layers,
                         uint8_t vl_of_sl[16]);

/* BFS hop counts from switch `from` over the switch graph into dist[] (RT_INF: unreached). */
void routing_bfs(const struct routing_ctx *ctx, uint32_t from, uint16_t *dist, uint32_t *queue);

/* Route every LID of destination switch t at switch s through the least loaded of the
 * candidate edges (indexes into adj), and count the load. With ctx->sticky, a route the
 * switch already holds is kept while it is still a candidate. */
void routing_assign(struct routing_ctx *ctx, uint32_t s, uint32_t t, const uint32_t *cand,
                    uint32_t ncand);
/* The same for a caller that routes many destinations at one switch in turn, where the
 * candidates of one are often those of the last (a leaf's uplinks for every remote leaf):
 * what routing_assign derives from the candidates is kept in memo and used again while they
 * stay the same. Only routing_assign_memo may change s's loads between two calls with one
 * memo; zero it before the first. */
struct routing_assign_memo {
	bool valid, on;
	uint8_t last;
	uint32_t s, ncand, low, nlow;
	uint32_t cand[256];
	uint8_t of[256];
	uint8_t port[256]; /* cand[i]'s port */
};
void routing_assign_memo(struct routing_ctx *ctx, uint32_t s, uint32_t t, const uint32_t *cand,
                         uint32_t ncand, struct routing_assign_memo *memo);
/* At t itself: its LIDs leave by their own ports. */
void routing_assign_local(struct routing_ctx *ctx, uint32_t t);

/* ---- alternate routes for LMC blocks (routing/lmc.c) ---- */

/* An engine's rule for the alternates: switch v may forward to neighbour w, whose own route
 * on is in state w_state; the state of v's route then, or -1 when the rule forbids the step.
 * dst_state: the destination switch's. */
struct routing_alt_rules {
	int (*step)(const void *arg, uint32_t v, uint32_t w, uint8_t w_state);
	const void *arg;
	uint8_t dst_state;
};
struct routing_alt_change {
	uint32_t sw;
	uint16_t lid;
	uint8_t port; /* what it held before */
};
/* The entries the alternates changed, to put back (an engine whose layering fails). */
struct routing_alt_undo {
	VEC(struct routing_alt_change) changes;
};
/* After an engine routed every LID: route each CA port's LIDs 2i+1 away from its LIDs 2i
 * (no shared link from any switch, no shared switch where the graph allows), within rules
 * (NULL: any step). undo (optional) records the changes; alt (optional, one per ctx->dst
 * entry, false on entry) is set for the destinations given alternates. What it found is
 * logged. 0, or -1 (out of memory, ctx->why). */
/* Has some CA port more than one LID (LMC > 0)? */
bool routing_lmc_any(const struct routing_ctx *ctx);
/* The place of ctx->dst entry d (of destination switch t) in its CA port's block of LIDs: 0
 * for the base LID and for a switch's own LIDs. */
unsigned routing_lmc_index(const struct routing_ctx *ctx, uint32_t t, uint32_t d);
int routing_lmc_alternates(struct routing_ctx *ctx, const struct routing_alt_rules *rules,
                           struct routing_alt_undo *undo, bool *alt);
/* ... for the LIDs only[d] of ctx->dst only (the others as they are). */
int routing_lmc_alternates_only(struct routing_ctx *ctx, const struct routing_alt_rules *rules,
                                struct routing_alt_undo *undo, bool *alt, const bool *only);
/* Rules to choose among LID by LID (an engine with several up/down orders, each on a VL of
 * its own): entry d is routed by rules[first[d]] (first NULL: rules[0]) and, where that
 * leaves a host switch without a link-disjoint pair, the others are grown too and the one
 * that promises the fewest such switches is routed in full; the tables keep whichever
 * leaves fewer, and chosen[d] (optional) its index, for the destinations given alternates
 * of their own. */
struct routing_alt_choice {
	const struct routing_alt_rules *rules; /* NULL: any step (then nrules 1) */
	unsigned nrules;
	const uint8_t *first;
	uint8_t *chosen;
	/* optional, per entry: the host switches (not across a bridge) left without a pair of
	 * the block's LIDs apart once that LID is routed (on its block's last LID: the
	 * block's shortfall) */
	uint32_t *open;
	bool quiet; /* no log line (an engine's trial) */
};
int routing_lmc_alternates_choice(struct routing_ctx *ctx, const struct routing_alt_choice *c,
                                  struct routing_alt_undo *undo, bool *alt, const bool *only);
/* Over the tables as they are: host switch x CA port block pairs, the host switch not
 * across a bridge from the port's switch (*possible), and those with two of the block's
 * LIDs whose paths share no switch-to-switch link (*apart): what an engine weighs one way
 * of laying its routes against another by. 0, or -1 out of memory. */
int routing_lmc_apart(struct routing_ctx *ctx, uint64_t *possible, uint64_t *apart);
/* Entry d of destination switch t, a later LID of its CA port's block, takes the block's
 * first LID's routes (loads moved; undo, optional, records the changes): the last resort of
 * an engine whose layers take no route of its own for it, as a copy adds no channel
 * dependency. 0, or -1 out of memory. */
int routing_lmc_follow_first(struct routing_ctx *ctx, struct routing_alt_undo *undo, uint32_t t,
                             uint32_t d);
/* Put back what the alternates changed (undo emptied). */
void routing_lmc_revert(struct routing_ctx *ctx, struct routing_alt_undo *undo);
/* ... for the LIDs marked in lids (indexed by LID) only. */
void routing_lmc_revert_lids(struct routing_ctx *ctx, struct routing_alt_undo *undo,
                             const bool *lids);
/* ... for one LID only (an engine that cannot fit that alternate in its layers). */
void routing_lmc_revert_lid(struct routing_ctx *ctx, struct routing_alt_undo *undo, uint16_t lid);

#endif
