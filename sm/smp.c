/* The SMP service below the sweep's phases: SMPs sent by directed route, by LID or to a port,
 * with the M_Keys each port should answer to; the SM's own queue beyond what the dispatcher
 * holds; the phase's count of answers still due, and requests for the next sweep. The phases
 * and the sweep pipeline (sm.c) call down into it; what it needs from above, more LFT blocks
 * when room comes, it reaches through the smp_room hook. */
#include "sm/sm_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "util/vec.h"

struct sm_req {
	struct sm *sm;
	sm_smp_fn cb;
	uint32_t ctxlen;
	bool counted; /* part of the phase under way */
	/* the M_Keys to present in turn when a port does not answer (the key it carries,
	 * the one it should carry, the static one), the one sent, and whose they are */
	uint8_t nkeys, at;
	uint64_t keys[3];
	uint64_t guid;
	uint64_t dest_key;
	uint16_t dlid; /* LID-routed to this LID; 0: directed route */
	bool pooled;   /* of REQ_CTX_POOLED bytes of context: goes back to sm->req_pool */
	struct mad_smp smp;
	uint64_t ctx[]; /* the caller's context, copied */
};

/* Requests are recycled: a sweep at 40,000 hosts makes four million of them, and glibc's
 * free of a 330-byte chunk (past its fast bins: it coalesces with the neighbours) with the
 * malloc after it was 5% of ibsmd's CPU. Those whose context fits REQ_CTX_POOLED go back
 * to a free list of at most REQ_POOL_MAX (the MAD window's worth and more); larger ones
 * are allocated and freed as they come. */
#define REQ_CTX_POOLED 64
#define REQ_POOL_MAX   8192

static struct sm_req *req_alloc(struct sm *sm, size_t ctxlen)
{
	size_t room = (ctxlen + 7) & ~(size_t)7;
	if (room > REQ_CTX_POOLED)
		return calloc(1, sizeof(struct sm_req) + room);
	struct sm_req *rq;
	if (sm->req_pool.n) {
		rq = sm->req_pool.v[--sm->req_pool.n];
		memset(rq, 0, sizeof(*rq)); /* the context is copied over, ctxlen of it read */
	} else if (!(rq = calloc(1, sizeof(struct sm_req) + REQ_CTX_POOLED))) {
		return NULL;
	}
	rq->pooled = true;
	return rq;
}

static void req_free(struct sm *sm, struct sm_req *rq)
{
	struct sm_req **slot;
	if (rq->pooled && sm->req_pool.n < REQ_POOL_MAX && (slot = vec_push(&sm->req_pool)))
		*slot = rq;
	else
		free(rq);
}

void sm_smp_free(struct sm *sm)
{
	for (uint32_t i = 0; i < sm->req_pool.n; i++)
		free(sm->req_pool.v[i]);
	vec_free(&sm->req_pool);
}

static int submit(struct sm *sm, struct sm_req *rq);
static void backlog_drain(struct sm *sm);
static void backlog_stalled(struct sm *sm);

static void on_dr_answer(struct mad_dispatcher *d, const struct mad_result *res, void *ctx)
{
	(void)d;
	struct sm_req *rq = ctx;
	struct sm *sm = rq->sm;
	if (res->error == -ETIMEDOUT && rq->at + 1 < rq->nkeys && !sm->stopped) {
		/* silence is what a wrong M_Key gets (14.2.4.1): the next key we know */
		rq->at++;
		rq->smp.mkey = rq->keys[rq->at];
		if (submit(sm, rq) == 0)
			return;
	}
	if (!res->error && rq->at > 0) {
		log_rl(sm->log, &sm->rl_no_answer, LOGL_NOTICE, "mkeys",
		       "port " GUID_FMT " answered only M_Key %u of %u we know for it (%s): it "
		       "is kept as the key in use",
		       rq->guid, rq->at + 1u, rq->nkeys,
		       rq->keys[rq->at] == sm->cfg->m_key ? "the static m_key" : "derived");
		mkey_learned(sm, rq->guid, rq->keys[rq->at]);
	}
	struct mad_smp smp;
	const struct mad_smp *sp = NULL;
	if (!res->error && res->mad) {
		struct mad_error err;
		if (mad_smp_decode(res->mad, res->len, &smp, &err) == 0) {
			/* one place for the callers to look, whichever way it was routed */
			if (smp.hdr.mgmt_class == MAD_CLASS_SUBN_LID)
				smp.dr_status = smp.hdr.status;
			sp = &smp;
		} else
			log_warn(sm->log, "sm", "malformed SMP answer: %s", err.msg);
	}
	if (sm->outstanding)
		sm->outstanding--;
	if (rq->cb && res->error != -ECANCELED)
		rq->cb(sm, res, sp, rq->ctx);
	bool counted = rq->counted;
	req_free(sm, rq);
	if (res->error != -ECANCELED)
		backlog_drain(sm);
	if (!counted) {
		/* the drain may have ended the phase's last pending unit (program_lft_more) */
		if (res->error != -ECANCELED)
			sm_phase_check(sm);
		return;
	}
	if (sm->pending)
		sm->pending--;
	if (res->error != -ECANCELED)
		sm_phase_check(sm);
}

static int submit(struct sm *sm, struct sm_req *rq)
{
	uint8_t buf[MAD_SIZE] = {0};
	mad_smp_encode(&rq->smp, buf, sizeof(buf), NULL);
	struct mad_request req = {
	    .to = {.lid = rq->dlid ? rq->dlid : LID_PERMISSIVE, .qpn = QP0},
	    .mad = buf,
	    .len = sizeof(buf),
	    .retries = sm->send_retries,
	    .timeout_ms = sm->send_timeout_ms,
	    .dest_key = rq->dest_key,
	    .cb = on_dr_answer,
	    .ctx = rq,
	};
	return mad_dispatcher_send(sm->d, &req);
}

/* The port whose M_Key guards a node: a switch's port 0, the port a CA is entered by. */
static uint32_t key_port_of(const struct topo *t, uint32_t node)
{
	const struct topo_node *n = &t->nodes[node];
	if (n->type == NODE_TYPE_SWITCH || !n->hops)
		return n->type == NODE_TYPE_SWITCH ? n->first_port : t->sm_port;
	for (unsigned i = 1; i <= n->nports; i++) {
		const struct topo_port *p = &t->ports[n->first_port + i];
		if (p->peer == TOPO_NONE)
			continue;
		const struct topo_port *q = &t->ports[p->peer];
		if (q->num == n->path[n->hops] && t->nodes[q->node].hops + 1u == n->hops)
			return n->first_port + i;
	}
	return TOPO_NONE;
}

/* The keys to present to the port named by guid, in turn while it stays silent. Gets need
 * none below protection level 2, so only Sets then try more than the first. */
static void choose_keys(const struct sm *sm, struct sm_req *rq, uint64_t guid, uint8_t method)
{
	const struct ibsmd_config *c = sm->cfg;
	rq->guid = guid;
	rq->nkeys = 1;
	rq->at = 0;
	if (!guid) {
		rq->keys[0] = c->m_key;
		return;
	}
	uint64_t cand[3] = {mkey_in_use(sm, guid), mkey_wanted(sm, guid), c->m_key};
	rq->keys[0] = cand[0];
	if (method != MAD_METHOD_SET && c->m_key_protect < 2)
		return;
	for (unsigned i = 1; i < 3; i++) {
		bool dup = !cand[i];
		for (unsigned k = 0; k < rq->nkeys; k++)
			dup |= rq->keys[k] == cand[i];
		if (!dup)
			rq->keys[rq->nkeys++] = cand[i];
	}
}

/* The part of a request that does not depend on the route: keys, payload, callback. */
static void req_fill(struct sm *sm, struct sm_req *rq, uint64_t key_guid, uint8_t method,
                     const void *data, size_t datalen, sm_smp_fn cb, const void *ctx, size_t ctxlen)
{
	choose_keys(sm, rq, key_guid, method);
	rq->smp.mkey = rq->keys[0];
	if (data)
		memcpy(rq->smp.data, data,
		       datalen > sizeof(rq->smp.data) ? sizeof(rq->smp.data) : datalen);
	rq->sm = sm;
	rq->cb = cb;
	rq->counted = !sm->detached;
	rq->ctxlen = (uint32_t)ctxlen;
	if (ctxlen)
		memcpy(rq->ctx, ctx, ctxlen);
}

/* Put a request at the end of the SM's own queue; the phase counts it. */
static int backlog_push(struct sm *sm, struct sm_req *rq)
{
	struct sm_req **slot = vec_push(&sm->backlog);
	if (!slot) {
		req_free(sm, rq);
		log_err(sm->log, "sm", "cannot queue an SMP: out of memory");
		return -ENOMEM;
	}
	*slot = rq;
	if (rq->counted)
		sm->pending++;
	if (sm->backlog.n - sm->backlog_head > sm->counts.queued_peak)
		sm->counts.queued_peak = sm->backlog.n - sm->backlog_head;
	return 0;
}

/* Hand a filled request to the dispatcher, or to the SM's own queue when the dispatcher holds
 * mad_queue_max already (a large fabric's tables are millions of SMPs: each would hold a
 * transaction slot and a copy of the MAD, and beyond the dispatcher's million they were
 * lost); the phase counts it either way. */
static int req_send(struct sm *sm, struct sm_req *rq)
{
	if (sm->dry_run && rq->smp.hdr.method == MAD_METHOD_SET) {
		/* the phases that Set are never entered in a dry run: this is the backstop */
		sm->dry.sets_refused++;
		log_err(sm->log, "sm",
		        "dry run: a Set of attribute 0x%04x was about to go out: refused (a bug: "
		        "please report it)",
		        rq->smp.hdr.attr_id);
		req_free(sm, rq);
		return -EPERM;
	}
	if (sm->backlog.n > sm->backlog_head || sm->outstanding >= sm->cfg->mad_queue_max)
		return backlog_push(sm, rq);
	int rc = submit(sm, rq);
	if (rc == -ENOMEM) {
		/* the MAD layer has no room (memory, or its transactions all held): the SMP
		 * waits in the SM's queue like one beyond mad_queue_max */
		rc = backlog_push(sm, rq);
		if (rc == 0)
			backlog_stalled(sm);
		return rc;
	}
	if (rc < 0) {
		req_free(sm, rq);
		log_err(sm->log, "sm", "cannot queue an SMP: %s", strerror(-rc));
		return rc;
	}
	sm->outstanding++;
	if (rq->counted)
		sm->pending++;
	return 0;
}

/* Requests from the SM's queue while the dispatcher has room. One the MAD layer has no room
 * for (-ENOMEM) stays at the head: it goes when an answer frees some, or at the retry timer
 * when none of ours is under way to bring one (its owner is never told from in here: one that
 * asked again on failure would be refused again, without end). One refused for any other
 * reason (malformed) ends as failed for the phase (counted off). */
static void backlog_drain(struct sm *sm)
{
	while (sm->backlog_head < sm->backlog.n && sm->outstanding < sm->cfg->mad_queue_max &&
	       !sm->stopped) {
		struct sm_req *rq = sm->backlog.v[sm->backlog_head];
		int rc = submit(sm, rq);
		if (rc == -ENOMEM) {
			backlog_stalled(sm);
			break;
		}
		sm->backlog_head++;
		if (rc < 0) {
			log_err(sm->log, "sm", "cannot queue an SMP: %s", strerror(-rc));
			if (rq->counted && sm->pending)
				sm->pending--;
			req_free(sm, rq);
			continue;
		}
		sm->outstanding++;
	}
	if (sm->backlog_head == sm->backlog.n && sm->backlog.n) {
		/* empty: start again at the front (the memory stays for the next sweep) */
		sm->backlog.n = 0;
		sm->backlog_head = 0;
	}
	/* the layer above fills the room (program_lft_more): a hook, never a call up */
	if (sm->smp_room)
		sm->smp_room(sm);
}

/* The MAD layer refused an SMP for room: log it (rate-limited: the wire's answers drive
 * this), and unless an answer of ours is due to drain the queue again, retry on a timer. */
#define SM_BACKLOG_RETRY_S 0.05
static void backlog_stalled(struct sm *sm)
{
	log_rl(sm->log, &sm->rl_backlog, LOGL_WARN, "sm",
	       "the MAD layer has no room for more SMPs (out of memory, or every transaction "
	       "held): %u wait in the SM's queue and go as room comes back",
	       sm->backlog.n - sm->backlog_head);
	if (!sm->outstanding && !ev_is_active(&sm->backlog_retry)) {
		ev_timer_set(&sm->backlog_retry, SM_BACKLOG_RETRY_S, 0.);
		ev_timer_start(sm->loop, &sm->backlog_retry);
	}
}

static void backlog_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sm *sm = (struct sm *)((char *)w - offsetof(struct sm, backlog_retry));
	backlog_drain(sm);
	sm_phase_check(sm); /* the last of a phase may have gone */
}

void sm_smp_init(struct sm *sm)
{
	ev_init(&sm->backlog_retry, backlog_retry_cb);
	sm->rl_backlog = LOG_RL_INIT(20, 1000);
}

bool sm_has_room(const struct sm *sm)
{
	return sm->backlog.n == sm->backlog_head && sm->outstanding < sm->cfg->mad_queue_max &&
	       !sm->stopped;
}

/* At stop: what waits in the SM's queue never goes; the phase stops counting it. */
void sm_smp_drop_backlog(struct sm *sm)
{
	ev_timer_stop(sm->loop, &sm->backlog_retry);
	for (uint32_t i = sm->backlog_head; i < sm->backlog.n; i++) {
		if (sm->backlog.v[i]->counted && sm->pending)
			sm->pending--;
		req_free(sm, sm->backlog.v[i]);
	}
	vec_free(&sm->backlog);
	sm->backlog_head = 0;
}

static int send_dr(struct sm *sm, uint32_t node, uint32_t key_port, uint64_t key_guid,
                   const uint8_t *path, unsigned hops, uint8_t method, uint16_t attr, uint32_t mod,
                   const void *data, size_t datalen, sm_smp_fn cb, const void *ctx, size_t ctxlen)
{
	const struct topo_node *n = node != TOPO_NONE ? &sm->topo.nodes[node] : NULL;
	if (n) {
		path = n->path;
		hops = n->hops;
	}
	struct sm_req *rq = req_alloc(sm, ctxlen);
	if (!rq)
		return -1;
	struct mad_error err;
	if (mad_smp_init_dr(&rq->smp, method, attr, mod, path, hops, &err) < 0) {
		log_err(sm->log, "sm", "%s", err.msg);
		req_free(sm, rq);
		return -1;
	}
	/* the SM's own port is known before anything is discovered */
	uint64_t kg = key_port != TOPO_NONE ? mkey_guid(&sm->topo, key_port)
	              : key_guid            ? key_guid
	              : !hops               ? sm->local.port_guid
	                                    : 0;
	req_fill(sm, rq, kg, method, data, datalen, cb, ctx, ctxlen);
	/* the window per destination: the node itself, or the last node before a probe */
	if (n) {
		rq->dest_key = (uint64_t)node + 1;
	} else if (hops) {
		rq->dest_key = 0x100000000ull | (uint64_t)(hops > 1 ? path[hops - 1] : 0);
		rq->dest_key ^= (uint64_t)hops << 40;
	}
	return req_send(sm, rq);
}

int sm_send_dr(struct sm *sm, uint32_t node, const uint8_t *path, unsigned hops, uint8_t method,
               uint16_t attr, uint32_t mod, const void *data, size_t datalen, sm_smp_fn cb,
               const void *ctx, size_t ctxlen)
{
	uint32_t kp = node != TOPO_NONE ? key_port_of(&sm->topo, node) : TOPO_NONE;
	return send_dr(sm, node, kp, 0, path, hops, method, attr, mod, data, datalen, cb, ctx,
	               ctxlen);
}

int sm_send_lid(struct sm *sm, uint16_t lid, uint64_t key_guid, uint8_t method, uint16_t attr,
                uint32_t mod, const void *data, size_t datalen, sm_smp_fn cb, const void *ctx,
                size_t ctxlen)
{
	struct sm_req *rq = req_alloc(sm, ctxlen);
	if (!rq)
		return -1;
	mad_smp_init_lid(&rq->smp, method, attr, mod);
	req_fill(sm, rq, key_guid, method, data, datalen, cb, ctx, ctxlen);
	rq->dlid = lid;
	rq->dest_key = 0x200000000ull | lid;
	return req_send(sm, rq);
}

int sm_send_dr_probe(struct sm *sm, uint64_t key_guid, const uint8_t *path, unsigned hops,
                     uint8_t method, uint16_t attr, uint32_t mod, sm_smp_fn cb, const void *ctx,
                     size_t ctxlen)
{
	return send_dr(sm, TOPO_NONE, TOPO_NONE, key_guid, path, hops, method, attr, mod, NULL, 0,
	               cb, ctx, ctxlen);
}

int sm_send_dr_port(struct sm *sm, uint32_t port, uint8_t method, uint16_t attr, uint32_t mod,
                    const void *data, size_t datalen, sm_smp_fn cb, const void *ctx, size_t ctxlen)
{
	const struct topo *t = &sm->topo;
	const struct topo_port *p = &t->ports[port];
	if (topo_is_switch(t, p->node))
		return sm_send_dr(sm, p->node, NULL, 0, method, attr, mod, data, datalen, cb, ctx,
		                  ctxlen);
	if (port == t->sm_port || p->peer == TOPO_NONE)
		return send_dr(sm, p->node, port, 0, NULL, 0, method, attr, mod, data, datalen, cb,
		               ctx, ctxlen);
	const struct topo_node *peer = &t->nodes[t->ports[p->peer].node];
	if (peer->hops >= MAD_DR_MAX_HOPS)
		return -1;
	uint8_t path[64];
	memcpy(path, peer->path, peer->hops + 1u);
	path[peer->hops + 1] = t->ports[p->peer].num;
	return send_dr(sm, TOPO_NONE, port, 0, path, peer->hops + 1u, method, attr, mod, data,
	               datalen, cb, ctx, ctxlen);
}

uint32_t sm_port_info_mod(const struct sm *sm, uint32_t port, bool set)
{
	const struct topo *t = &sm->topo;
	const struct topo_port *p = &t->ports[port];
	const struct topo_node *n = &t->nodes[p->node];
	if (n->pi_no_ext_am)
		return p->num;
	if (!set)
		return p->num | PORT_INFO_AM_EXT_SPEEDS;
	/* a switch's capabilities are port 0's */
	uint32_t caps = n->type == NODE_TYPE_SWITCH ? t->ports[n->first_port].pi.capability_mask
	                                            : p->pi.capability_mask;
	return caps & PORT_CAP_HAS_EXT_SPEEDS ? p->num | PORT_INFO_AM_EXT_SPEEDS : p->num;
}

/* ---- phase accounting ---- */

void sm_phase_begin(struct sm *sm, void (*next)(struct sm *sm))
{
	sm->phase_next = next;
	sm->phase_failures = 0;
	sm->phase_start = ev_time();
}

void sm_phase_check(struct sm *sm)
{
	if (sm->pending || !sm->phase_next)
		return;
	void (*next)(struct sm *) = sm->phase_next;
	sm->phase_next = NULL;
	next(sm);
}

/* ---- requests for the next sweep ---- */

int sm_dirty_grow(struct sm *sm)
{
	return array_reserve(&sm->dirty, &sm->dirty_cap, sm->topo.nnodes + 1ull);
}

void sm_dirty(struct sm *sm, uint32_t node)
{
	if (sm_dirty_grow(sm) == 0)
		sm->dirty[node] = true;
	else
		sm->full = true; /* out of memory: everything again */
}

#define SM_TRAP_GRACE_S 0.005

void sm_request_sweep(struct sm *sm, const uint32_t *switch_nodes, uint32_t n)
{
	if (!switch_nodes) {
		sm->full = true;
	} else if (sm_dirty_grow(sm) == 0) {
		for (uint32_t i = 0; i < n; i++)
			sm->dirty[switch_nodes[i]] = true;
	} else {
		sm->full = true;
	}
	if (sm->state != SM_STATE_MASTER && sm->state != SM_STATE_DISCOVERING)
		return;
	if (sm->busy) {
		sm->again = true;
		return;
	}
	/* a moment's grace gathers the traps of one event into one sweep: both ends of a link
	 * see it go within a millisecond or two and trap at once; one that comes later finds
	 * the sweep under way and asks for another (again). 50 ms was half of a host link's
	 * handling at 2,592 hosts; none at all would leave a lost switch's other neighbours,
	 * trapping a moment after the first, to a second sweep 200 ms later. */
	if (!ev_is_active(&sm->kick_timer)) {
		ev_timer_set(&sm->kick_timer, SM_TRAP_GRACE_S, 0.);
		ev_timer_start(sm->loop, &sm->kick_timer);
	}
}
