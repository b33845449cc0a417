/* The dry run's verdict: after one sweep of Gets and the engine chain, the tables ibsmd
 * would write compared with what the switches hold, and both checked (routing/check.h).
 * See sm_new_dry_run. */
#include "sm/sm_int.h"

#include <stdlib.h>
#include <string.h>

#include "routing/check.h"
#include "util/vec.h"

/* The running SM's tables: what the switches hold (0xfe where a block could not be read). */
static uint8_t lft_theirs(const struct topo *t, uint32_t sw, uint16_t dlid)
{
	return topo_lft_hw(t, sw, dlid);
}

static uint8_t lft_ours(const struct topo *t, uint32_t sw, uint16_t dlid)
{
	const struct topo_switch *s = &t->sws[sw];
	return s->lft && dlid < s->lft_size ? s->lft[dlid] : 0xff;
}

static uint8_t sl_ours(void *arg, uint16_t slid, uint16_t dlid)
{
	return sm_path_sl(arg, slid, dlid);
}

void dryrun_finish(struct sm *sm)
{
	struct sm_dry_report *r = &sm->dry;
	const struct routing_ctx *ctx = &sm->rctx;
	struct topo *t = &sm->topo;
	r->engine = sm->engine ? sm->engine->name : "none";
	VEC(struct sm_dry_switch) changed = {0};
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		const struct topo_switch *sw = &t->sws[s];
		const struct topo_node *n = &t->nodes[sw->node];
		if (!n->present)
			continue;
		r->switches++;
		r->switches_unread += !sw->lft_hw;
		struct sm_dry_switch one = {.guid = n->guid};
		snprintf(one.desc, sizeof(one.desc), "%s", n->desc);
		for (uint32_t d = 0; d < ctx->dst_start[ctx->nsw]; d++) {
			uint16_t lid = ctx->dst[d].lid;
			one.entries++;
			one.changed += lft_ours(t, s, lid) != lft_theirs(t, s, lid);
		}
		r->entries += one.entries;
		r->entries_changed += one.changed;
		if (!one.changed)
			continue;
		r->switches_changed++;
		struct sm_dry_switch *slot = vec_push(&changed);
		if (slot)
			*slot = one;
	}
	r->sws = changed.v;
	r->nsws = changed.n;
	if (routing_check(ctx, lft_theirs, NULL, NULL, &r->theirs) < 0 ||
	    routing_check(ctx, lft_ours, sl_ours, sm, &r->ours) < 0)
		log_err(sm->log, "sm", "dry run: out of memory checking the tables");
	r->our_layers = routing_layers(sm->engine, sm->engine_state);
	r->link_vls = routing_link_vls(ctx);
	r->done = sm->route_rc == 0;
}

const struct sm_dry_report *sm_dry_report(const struct sm *sm)
{
	return &sm->dry;
}

void dryrun_free(struct sm *sm)
{
	free(sm->dry.sws);
	memset(&sm->dry, 0, sizeof(sm->dry));
}

/* ---- the health report's question (daemon/health_report.c) ---- */

int sm_check_tables(struct sm *sm, uint64_t budget, struct routing_check *out)
{
	if (sm->busy)
		return 2;    /* the model moves under the walk: the tables settle at its end */
	sm_routing_wait(sm); /* the tables the routing thread fills are the ones walked */
	const struct routing_ctx *ctx = &sm->rctx;
	if (!sm->engine || !ctx->nsw || !ctx->dst_start)
		return -1;
	if ((uint64_t)ctx->nsw * ctx->dst_start[ctx->nsw] > budget)
		return 1;
	return routing_check(ctx, lft_ours, sl_ours, sm, out) < 0 ? -1 : 0;
}
