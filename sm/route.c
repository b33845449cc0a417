/* The routing phase: run the configured chain of engines ("updn,minhop"); the first that
 * succeeds routes the subnet, failures are logged with the reason and the next is tried.
 * The engine that routed keeps its state and switch graph until the next routing: its
 * hooks give multicast trees (sm/mcast.c), switches' SL-to-VL tables (sm/vl.c) and the
 * SL of the SA's PathRecords (sm_path_sl). */
#include <stdio.h>
#include <string.h>

#include "routing/engine.h"
#include "sm/sm_int.h"

void route_release(struct sm *sm)
{
	if (sm->engine && sm->engine->teardown)
		sm->engine->teardown(sm->engine_state);
	sm->engine_state = NULL;
	routing_ctx_free(&sm->rctx);
	/* the hops between switches stay: they change with the links (mcast_topology_changed) */
}

/* Route with one engine: 0, or -1 (logged, an event) with the context rebuilt clean for the
 * next one. */
static int try_engine(struct sm *sm, const struct routing_engine *e,
                      const struct routing_engine *last)
{
	struct routing_ctx *ctx = &sm->rctx;
	void *state = NULL;
	ctx->why[0] = 0;
	if ((e->setup && e->setup(ctx, &state) < 0) || e->unicast(ctx, state) < 0) {
		const char *kv[] = {"engine", e->name, "reason",
		                    ctx->why[0] ? ctx->why : "no reason given", NULL};
		sm_event(sm, LOGL_WARN, "routing_fallback", kv,
		         "routing engine %s failed: %s; trying the next", e->name,
		         ctx->why[0] ? ctx->why : "no reason given");
		if (e->teardown)
			e->teardown(state);
		/* the next engine starts from clean tables and loads */
		routing_ctx_free(ctx);
		if (routing_ctx_build(ctx, &sm->topo, sm->cfg, sm->log) < 0)
			return -1;
		ctx->sticky = !sm->reroute && (!sm->grew || sm->counts.lft_blocks_read);
		return -1;
	}
	if (last != e)
		log_notice(sm->log, "routing", "routed by %s: %s", e->name, e->summary);
	sm->engine = e;
	sm->engine_state = state;
	return 0;
}

int route_all(struct sm *sm)
{
	struct routing_ctx *ctx = &sm->rctx;
	const struct routing_engine *last = sm->engine;
	route_release(sm);
	sm->engine = NULL;
	if (routing_ctx_build(ctx, &sm->topo, sm->cfg, sm->log) < 0) {
		routing_ctx_free(ctx);
		log_err(sm->log, "routing", "out of memory building the switch graph");
		return -1;
	}
	/* Losses move only the routes they break; added capacity is balanced over. Tables
	 * just read from the switches (a takeover, a fresh start) are kept where valid. */
	ctx->sticky = !sm->reroute && (!sm->grew || sm->counts.lft_blocks_read);
	char chain[sizeof(sm->cfg->routing_engines)];
	snprintf(chain, sizeof(chain), "%s", sm->cfg->routing_engines);
	int rc = -1;
	bool tried_minhop = false;
	for (char *save = NULL, *name = strtok_r(chain, ", ", &save); name && rc < 0;
	     name = strtok_r(NULL, ", ", &save)) {
		const struct routing_engine *e = routing_find(name);
		if (!e) {
			log_err(sm->log, "routing", "unknown routing engine \"%s\" (known: %s)",
			        name, routing_names());
			continue;
		}
		tried_minhop |= e == &routing_minhop;
		rc = try_engine(sm, e, last);
	}
	if (rc < 0 && !tried_minhop && sm->cfg->routing_fallback_minhop) {
		/* the last resort: every connected fabric has shortest paths, though not always
		 * free of credit loops; better routes with a risk than no routes */
		const char *kv[] = {"engine", "minhop", "reason",
		                    "every engine of the chain failed", NULL};
		sm_event(sm, LOGL_WARN, "routing_fallback", kv,
		         "no engine of \"%s\" routed the subnet: minhop takes over, as the last "
		         "resort (routing_fallback_minhop)",
		         sm->cfg->routing_engines);
		rc = try_engine(sm, &routing_minhop, last);
	}
	if (rc < 0)
		log_err(sm->log, "routing", "no routing engine of \"%s\" could route the subnet",
		        sm->cfg->routing_engines);
	else
		sm->reroute = false;
	/* LinearFDBTop: the highest LID routed */
	for (uint32_t s = 0; s < sm->topo.nsws; s++)
		sm->topo.sws[s].lft_top = ctx->max_lid;
	return rc;
}

uint8_t sm_path_sl(const struct sm *sm, uint16_t slid, uint16_t dlid)
{
	return routing_path_sl(sm->engine, sm->engine_state, &sm->rctx, slid, dlid);
}
