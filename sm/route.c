/* The routing phase: run the configured chain of engines ("updn,minhop"); the first that
 * succeeds routes the subnet, failures are logged with the reason and the next is tried.
 * The engine that routed keeps its state and switch graph until the next routing: its
 * hooks give multicast trees (sm/mcast.c), switches' SL-to-VL tables (sm/vl.c) and the
 * SL of the SA's PathRecords (sm_path_sl). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "sm/sm_int.h"
#include "util/u64map.h"

void route_release(struct sm *sm)
{
	if (sm->engine && sm->engine->teardown)
		sm->engine->teardown(sm->engine_state);
	sm->engine_state = NULL;
	sm->path_layers = 1;
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
		ctx->sticky =
		    !sm->reroute && (!(sm->grew || sm->rejoin) || sm->counts.lft_blocks_read);
		return -1;
	}
	if (last != e)
		log_notice(sm->log, "routing", "routed by %s: %s", e->name, e->summary);
	sm->engine = e;
	sm->engine_state = state;
	return 0;
}

/* After routing: the engine's layers, and whether the QoS classes the policy names fit on
 * top of them (said once per routing; the SA checks each path's class again). */
static void layers_check(struct sm *sm)
{
	sm->path_layers = routing_layers(sm->engine, sm->engine_state);
	sm->class_vls = routing_layer_vls(sm->engine, sm->engine_state);
	sm->layer_vls = routing_link_vls(&sm->rctx);
	if (sm->path_layers <= 1)
		return;
	const struct ibsmd_config *c = sm->cfg;
	unsigned top = 0;
	for (unsigned i = 0; c->qos && i < c->qos->nlevels; i++)
		if (c->qos->levels[i].sl > top)
			top = c->qos->levels[i].sl;
	for (unsigned i = 0; i < c->npartitions; i++)
		if (c->partitions[i].has_sl && c->partitions[i].sl > top)
			top = c->partitions[i].sl;
	unsigned need = (top + 1) * sm->class_vls, sls = (top + 1) * sm->path_layers;
	if (need > sm->layer_vls || sls > 16) {
		unsigned fit = sm->layer_vls / sm->class_vls;
		if (16 / sm->path_layers < fit)
			fit = 16 / sm->path_layers;
		log_err(sm->log, "routing",
		        "qos: the policy's SLs 0-%u on top of %s's %u layers need %u VLs, and the "
		        "switch links run %u%s: paths of SL %u and above keep their layer's SL",
		        top, sm->engine->name, sm->path_layers, need, sm->layer_vls,
		        sls > 16 ? " (and SLs are 16)" : "", fit);
	} else
		log_info(sm->log, "routing", "%s: %u layers%s", sm->engine->name, sm->path_layers,
		         top ? ", QoS SLs stacked on them" : "");
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
	ctx->sticky = !sm->reroute && (!(sm->grew || sm->rejoin) || sm->counts.lft_blocks_read);
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
	layers_check(sm);
	/* LinearFDBTop: the highest LID routed */
	for (uint32_t s = 0; s < sm->topo.nsws; s++)
		sm->topo.sws[s].lft_top = ctx->max_lid;
	return rc;
}

uint8_t sm_path_sl(const struct sm *sm, uint16_t slid, uint16_t dlid)
{
	return routing_path_sl(sm->engine, sm->engine_state, &sm->rctx, slid, dlid);
}

uint8_t sm_path_sl_class(struct sm *sm, uint16_t slid, uint16_t dlid, uint8_t cls)
{
	uint8_t sl = sm_path_sl(sm, slid, dlid);
	unsigned L = sm->path_layers, V = sm->class_vls ? sm->class_vls : L;
	if (L <= 1)
		return sl ? sl : cls;
	if (!cls)
		return sl;
	if ((cls + 1u) * V > sm->layer_vls || (cls + 1u) * L > 16) {
		log_rl(
		    sm->log, &sm->rl_layers, LOGL_ERR, "routing",
		    "qos: SL %u on top of %s's %u layers needs %u VLs and %u SLs, and the switch "
		    "links run %u VLs (16 SLs): paths of that SL keep their layer's",
		    cls, sm->engine ? sm->engine->name : "the engine", L, (cls + 1u) * V,
		    (cls + 1u) * L, sm->layer_vls);
		return sl;
	}
	return (uint8_t)(cls * L + sl);
}

int sm_dump_path_sl(const struct sm *sm, FILE *out)
{
	const struct topo *t = &sm->topo;
	uint32_t max = 0;
	for (uint32_t l = 1; l < TOPO_LID_COUNT; l++)
		if (t->lid_port[l] != TOPO_NONE)
			max = l;
	fprintf(out,
	        "# ibsmd path SLs: the SL of each path as the routing engine (%s) gives it\n"
	        "# rows: one hex digit per destination LID from 1 ('-': no such LID);\n"
	        "# then the row of every source LID\n",
	        sm->engine ? sm->engine->name : "none");
	fprintf(out, "max_lid 0x%04x\n", max);
	if (!max)
		return 0;
	if (!sm->engine || !sm->engine->path_sl) {
		/* no engine SLs: every path on SL 0 */
		fprintf(out, "row 0 ");
		for (uint32_t d = 1; d <= max; d++)
			fputc(t->lid_port[d] == TOPO_NONE ? '-' : '0', out);
		fputc('\n', out);
		for (uint32_t s = 1; s <= max; s++)
			if (t->lid_port[s] != TOPO_NONE)
				fprintf(out, "lid 0x%04x row 0\n", s);
		return 0;
	}
	/* rows repeat (every host of a switch has its switch's), so each is written once */
	char *rows = NULL, *row = malloc(max + 1);
	uint32_t *row_of = malloc(sizeof(uint32_t) * (max + 1));
	uint32_t nrows = 0, cap = 0;
	struct u64map seen = {0};
	int rc = -1;
	if (!row || !row_of)
		goto out;
	for (uint32_t s = 1; s <= max; s++) {
		row_of[s] = TOPO_NONE;
		if (t->lid_port[s] == TOPO_NONE)
			continue;
		for (uint32_t d = 1; d <= max; d++)
			row[d - 1] =
			    t->lid_port[d] == TOPO_NONE
			        ? '-'
			        : "0123456789abcdef"[sm_path_sl(sm, (uint16_t)s, (uint16_t)d)];
		row[max] = 0;
		uint64_t key = u64map_str_key(row);
		uint32_t r = u64map_get(&seen, key);
		if (r != U64MAP_NONE && memcmp(rows + (size_t)r * max, row, max) != 0)
			r = U64MAP_NONE; /* a hash collision: keep it apart */
		if (r == U64MAP_NONE) {
			if (nrows == cap) {
				cap = cap ? cap * 2 : 16;
				char *n = realloc(rows, (size_t)cap * max);
				if (!n)
					goto out;
				rows = n;
			}
			memcpy(rows + (size_t)nrows * max, row, max);
			r = nrows++;
			if (u64map_get(&seen, key) == U64MAP_NONE && u64map_put(&seen, key, r) < 0)
				goto out;
			fprintf(out, "row %u %s\n", r, row);
		}
		row_of[s] = r;
	}
	for (uint32_t s = 1; s <= max; s++)
		if (row_of[s] != TOPO_NONE)
			fprintf(out, "lid 0x%04x row %u\n", s, row_of[s]);
	rc = 0;
out:
	free(rows);
	free(row);
	free(row_of);
	u64map_free(&seen);
	return rc;
}
