/* The routing phase: run the configured chain of engines ("updn,minhop") on a thread of its
 * own; the first that succeeds routes the subnet, failures are logged with the reason and
 * the next is tried.
 * The engine that routed keeps its state and switch graph until the next routing: its
 * hooks give multicast trees (sm/mcast.c), switches' SL-to-VL tables (sm/vl.c) and the
 * SL of the SA's PathRecords (sm_path_sl). */
#include <pthread.h>
#include <stddef.h>
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

/* ---- the engines run on a thread of their own ----
 * Routing a large fabric takes seconds (dfsssp and nue at 11,664 hosts: 3-5 s); the event
 * loop goes on meanwhile: the SA answers from the tables the switches hold and the SLs of
 * the engine that routed them, traps and SMInfo are taken, the control socket answers.
 * What the engine reads is what the sweep left before it (nodes, ports, links, LIDs: the
 * loop changes none of them while busy, and defers multicast and settle work to the sweep's
 * end), and what it writes is its own context and the switches' wanted LFTs, which no
 * reader on the loop looks at while topo.routing is set (sa/path.c). Whatever cannot wait
 * (a reload, a step down, a dump, the end) waits for it: sm_routing_wait. */

struct route_failure {
	const struct routing_engine *e;
	char why[sizeof(((struct routing_ctx *)0)->why)];
};

#define ROUTE_MAX_FAILURES 16

struct route_job {
	struct sm *sm; /* read on the thread: cfg, log, topo; nothing the loop writes now */
	pthread_t thread;
	bool threaded; /* else it ran on the loop (no thread could start) */
	ev_async done;
	/* in: */
	const struct routing_engine *last;
	bool sticky;
	void (*then)(struct sm *sm);
	/* out: */
	struct routing_ctx ctx;
	const struct routing_engine *engine;
	void *state;
	int rc;
	bool no_memory, last_resort;
	struct route_failure failed[ROUTE_MAX_FAILURES];
	unsigned nfailed;
	double seconds;
};

/* Route with one engine: 0, or -1 with the reason kept for the loop to report and the
 * context rebuilt clean for the next one. */
static int try_engine(struct route_job *j, const struct routing_engine *e)
{
	struct sm *sm = j->sm;
	struct routing_ctx *ctx = &j->ctx;
	void *state = NULL;
	ctx->why[0] = 0;
	if ((e->setup && e->setup(ctx, &state) < 0) || e->unicast(ctx, state) < 0) {
		if (j->nfailed < ROUTE_MAX_FAILURES) {
			struct route_failure *f = &j->failed[j->nfailed++];
			f->e = e;
			snprintf(f->why, sizeof(f->why), "%s",
			         ctx->why[0] ? ctx->why : "no reason given");
		}
		if (e->teardown)
			e->teardown(state);
		/* the next engine starts from clean tables and loads */
		routing_ctx_free(ctx);
		if (routing_ctx_build(ctx, &sm->topo, sm->cfg, sm->log) < 0) {
			j->no_memory = true;
			return -2;
		}
		ctx->sticky = j->sticky;
		return -1;
	}
	if (j->last != e)
		log_notice(sm->log, "routing", "routed by %s: %s", e->name, e->summary);
	j->engine = e;
	j->state = state;
	return 0;
}

static void run_chain(struct route_job *j)
{
	struct sm *sm = j->sm;
	struct routing_ctx *ctx = &j->ctx;
	j->rc = -1;
	if (routing_ctx_build(ctx, &sm->topo, sm->cfg, sm->log) < 0) {
		j->no_memory = true;
		return;
	}
	ctx->sticky = j->sticky;
	char chain[sizeof(sm->cfg->routing_engines)];
	snprintf(chain, sizeof(chain), "%s", sm->cfg->routing_engines);
	bool tried_minhop = false;
	for (char *save = NULL, *name = strtok_r(chain, ", ", &save); name && j->rc == -1;
	     name = strtok_r(NULL, ", ", &save)) {
		const struct routing_engine *e = routing_find(name);
		if (!e) {
			log_err(sm->log, "routing", "unknown routing engine \"%s\" (known: %s)",
			        name, routing_names());
			continue;
		}
		tried_minhop |= e == &routing_minhop;
		j->rc = try_engine(j, e);
	}
	if (j->rc == -1 && !tried_minhop && sm->cfg->routing_fallback_minhop) {
		/* the last resort: every connected fabric has shortest paths, though not always
		 * free of credit loops; better routes with a risk than no routes */
		j->last_resort = true;
		j->rc = try_engine(j, &routing_minhop);
	}
}

static void *route_thread(void *arg)
{
	struct route_job *j = arg;
	double t0 = ev_time();
	run_chain(j);
	j->seconds = ev_time() - t0;
	ev_async_send(j->sm->loop, &j->done);
	return NULL;
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

/* On the loop, the thread joined: the new engine, state and graph replace the last ones,
 * and what the thread kept to say is said. Then the sweep goes on (unless it was
 * abandoned meanwhile: proceed false). */
static void route_finish(struct sm *sm, bool proceed)
{
	struct route_job *j = sm->route_job;
	if (j->threaded)
		pthread_join(j->thread, NULL);
	ev_async_stop(sm->loop, &j->done);
	sm->route_job = NULL;
	sm->topo.routing = false;
	for (unsigned i = 0; i < j->nfailed; i++) {
		const struct route_failure *f = &j->failed[i];
		const char *kv[] = {"engine", f->e->name, "reason", f->why, NULL};
		sm_event(sm, LOGL_WARN, "routing_fallback", kv,
		         "routing engine %s failed: %s; trying the next", f->e->name, f->why);
	}
	if (j->last_resort) {
		const char *kv[] = {"engine", "minhop", "reason",
		                    "every engine of the chain failed", NULL};
		sm_event(sm, LOGL_WARN, "routing_fallback", kv,
		         "no engine of \"%s\" routed the subnet: minhop takes over, as the last "
		         "resort (routing_fallback_minhop)",
		         sm->cfg->routing_engines);
	}
	route_release(sm);
	sm->rctx = j->ctx;
	sm->engine = j->rc == 0 ? j->engine : NULL;
	sm->engine_state = j->rc == 0 ? j->state : NULL;
	if (j->no_memory)
		log_err(sm->log, "routing", "out of memory building the switch graph");
	else if (j->rc < 0)
		log_err(sm->log, "routing", "no routing engine of \"%s\" could route the subnet",
		        sm->cfg->routing_engines);
	else
		sm->reroute = false;
	if (sm->engine)
		layers_check(sm);
	/* the vports' own LIDs leave by their physical ports' exits */
	if (j->rc == 0)
		topo_vport_lfts(&sm->topo);
	/* LinearFDBTop: the highest LID routed */
	for (uint32_t s = 0; s < sm->topo.nsws; s++)
		sm->topo.sws[s].lft_top = sm->rctx.max_lid;
	sm->route_rc = j->rc == 0 ? 0 : -1;
	sm->times.route = j->seconds;
	void (*then)(struct sm *) = j->then;
	free(j);
	if (proceed && then)
		then(sm);
}

static void route_done_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)loop;
	(void)revents;
	struct route_job *j = (struct route_job *)((char *)w - offsetof(struct route_job, done));
	route_finish(j->sm, true);
}

void route_wait(struct sm *sm, bool proceed)
{
	if (sm->route_job)
		route_finish(sm, proceed);
}

void sm_routing_wait(struct sm *sm)
{
	route_wait(sm, true);
}

int route_start(struct sm *sm, void (*then)(struct sm *sm))
{
	struct route_job *j = calloc(1, sizeof(*j));
	if (!j)
		return -1;
	j->sm = sm;
	j->then = then;
	j->last = sm->engine;
	/* Losses move only the routes they break; added capacity is balanced over. Tables
	 * just read from the switches (a takeover, a fresh start) are kept where valid. */
	j->sticky = !sm->reroute && (!(sm->grew || sm->rejoin) || sm->counts.lft_blocks_read);
	ev_async_init(&j->done, route_done_cb);
	ev_async_start(sm->loop, &j->done);
	sm->route_job = j;
	sm->topo.routing = true;
	j->threaded = pthread_create(&j->thread, NULL, route_thread, j) == 0;
	if (!j->threaded) {
		/* no thread to be had: route here, the loop waiting as it did before threads;
		 * the sweep goes on from the loop all the same */
		log_warn(sm->log, "routing",
		         "cannot start the routing thread: routing on the loop");
		route_thread(j);
	}
	return 0;
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
