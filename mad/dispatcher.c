/* Transactions, windows, timeouts and retries. See dispatcher.h. */
#include "mad/dispatcher_int.h"
#include "util/vec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mad.h>

/* Two lanes. The main one holds the SM's SMPs and every request whose peer is expected to
 * answer: `window` in flight, `window_per_dest` per destination, one FIFO. The Report lane
 * holds the SA's Reports to subscribers, whom nothing obliges to answer: a subscriber that
 * never acknowledges held 4 slots of the main window for each Report's 4 attempts (800 ms),
 * its Reports queued ahead of the SM's SMPs, and its silence passed for fabric loss (more
 * attempts and shorter waits for every SMP). In the Report lane each destination has a queue
 * of its own, served in turn, report_per_dest in flight and at most report_backlog_per_dest
 * waiting (a newer Report pushes out its oldest: a subscriber that stays silent loses old
 * news, not the others' or the SM's); report_window in flight in all, beside the main
 * window, and report_backlog waiting in all (then new ones are refused), which also keeps
 * Reports from taking the transaction slots the SM needs. Its retries are fixed and its
 * outcomes never feed the loss estimate. */

static void fifo_init(struct fifo *f)
{
	f->head = f->tail = NIL;
}

static void fifo_push(struct mad_dispatcher *d, struct fifo *f, uint32_t idx)
{
	txn_at(d, idx)->next = NIL;
	if (f->tail == NIL)
		f->head = idx;
	else
		txn_at(d, f->tail)->next = idx;
	f->tail = idx;
}

static uint32_t fifo_pop(struct mad_dispatcher *d, struct fifo *f)
{
	uint32_t idx = f->head;
	if (idx != NIL) {
		f->head = txn_at(d, idx)->next;
		if (f->head == NIL)
			f->tail = NIL;
	}
	return idx;
}

/* ---- destinations: a dense array, found by key through a GUID-style hash map ---- */

static uint32_t dest_lookup(struct mad_dispatcher *d, uint64_t key)
{
	uint32_t i = u64map_get(&d->dest_index, key);
	if (i != U64MAP_NONE)
		return i;
	if (array_reserve(&d->dests, &d->dests_cap, d->ndests + 1ull) < 0)
		return NIL;
	i = d->ndests;
	if (u64map_put(&d->dest_index, key, i) < 0)
		return NIL;
	d->ndests++;
	d->dests[i] =
	    (struct dest){.key = key, .blocked_head = NIL, .blocked_tail = NIL, .run_next = NIL};
	return i;
}

/* ---- transaction slots ---- */

static void txn_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents);

static struct txn *txn_alloc(struct mad_dispatcher *d)
{
	if (d->o.max_txns && d->live >= d->o.max_txns)
		return NULL;
	uint32_t idx = d->free_head;
	if (idx == NIL) {
		if (d->ntxn >= TXN_MAX)
			return NULL;
		if (d->ntxn == d->nchunks * TXN_CHUNK) {
			struct txn **nc = realloc(d->chunks, sizeof(*nc) * (d->nchunks + 1));
			if (!nc)
				return NULL;
			d->chunks = nc;
			d->chunks[d->nchunks] = calloc(TXN_CHUNK, sizeof(struct txn));
			if (!d->chunks[d->nchunks])
				return NULL;
			d->nchunks++;
		}
		idx = d->ntxn++;
		txn_at(d, idx)->idx = idx;
		txn_at(d, idx)->gen = d->gen_base;
	} else {
		d->free_head = txn_at(d, idx)->next;
	}
	struct txn *t = txn_at(d, idx);
	d->live++;
	t->gen = (uint16_t)((t->gen + 1) & 0xfff);
	t->d = d;
	t->next = NIL;
	t->dest = NIL;
	ev_init(&t->timer, txn_timeout_cb);
	return t;
}

static void txn_release(struct mad_dispatcher *d, struct txn *t)
{
	if (d->live)
		d->live--;
	t->state = TXN_FREE;
	t->cb = NULL;
	t->next = d->free_head;
	d->free_head = t->idx;
}

struct txn *disp_find_txn(struct mad_dispatcher *d, uint64_t tid)
{
	uint32_t low = (uint32_t)tid;
	uint32_t idx = low & (TXN_MAX - 1);
	if (idx >= d->ntxn)
		return NULL;
	struct txn *t = txn_at(d, idx);
	if ((t->state != TXN_INFLIGHT && t->state != TXN_RMPP) || t->tid_low != low)
		return NULL;
	return t;
}

/* The transaction a response answers: its TID, and the class and attribute it asked, and,
 * asked by LID, from that port (a port answers from its base LID, at most 2^7 below the one
 * asked with LMC). The TID alone would let any port answer for another (a stray, late or
 * forged response), which the kernel does not prevent: it matches by TID and class. */
struct txn *disp_match_answer(struct mad_dispatcher *d, const struct mad_addr *from,
                              const struct mad_hdr *hdr)
{
	struct txn *t = disp_find_txn(d, hdr->tid);
	if (!t || t->state != TXN_INFLIGHT)
		return NULL;
	uint16_t attr = (uint16_t)(t->mad[16] << 8 | t->mad[17]);
	bool lid_routed = t->mad[1] != MAD_CLASS_SUBN_DR && t->to.lid && t->to.lid < 0xc000;
	if (hdr->mgmt_class != t->mad[1] || hdr->attr_id != attr ||
	    (lid_routed && (from->lid > t->to.lid || t->to.lid - from->lid > 127))) {
		d->c.mismatched++;
		log_rl(d->o.log, &d->rl_mismatch, LOGL_INFO, "mad",
		       "%s: a response from LID %u with TID 0x%016" PRIx64
		       " (class 0x%02x attribute 0x%04x) does not answer the request of that TID "
		       "(to LID %u, class 0x%02x attribute 0x%04x): dropped",
		       d->t->desc, from->lid, hdr->tid, hdr->mgmt_class, hdr->attr_id, t->to.lid,
		       t->mad[1], attr);
		return NULL;
	}
	return t;
}

/* ---- sending ---- */

int disp_xmit(struct mad_dispatcher *d, const struct mad_addr *to, const uint8_t *mad, size_t len,
              uint32_t timeout_ms)
{
	int r = d->t->ops->send(d->t, to, mad, len, timeout_ms);
	if (r < 0) {
		d->c.send_errors++;
		log_debug(d->o.log, "mad", "%s: send to LID %u failed: %s", d->t->desc, to->lid,
		          strerror(-r));
		return r;
	}
	d->c.sent++;
	return 0;
}

static double attempt_timeout(const struct mad_dispatcher *d, const struct txn *t);

/* On a transport that reports timeouts (the kernel's MAD layer) the kernel times each
 * attempt and gives it back; the dispatcher's timer is only a backstop for one that never
 * comes back, late enough that it never races the kernel (a resend while the kernel still
 * holds the same TID is refused anyway). */
#define MAD_BACKSTOP_S 1.0

static void txn_attempt(struct mad_dispatcher *d, struct txn *t)
{
	t->attempts++;
	t->sent_at = ev_now(d->loop);
	double wait = attempt_timeout(d, t);
	uint32_t ms = (uint32_t)(wait * 1000 + 0.999);
	/* a failed send is a lost MAD: the timer retries */
	if (disp_xmit(d, &t->to, t->mad, t->len, ms ? ms : 1) == 0 && d->t->reports_timeouts) {
		t->outstanding++;
		wait = 2 * wait + MAD_BACKSTOP_S;
	}
	ev_timer_set(&t->timer, wait, 0.);
	ev_timer_start(d->loop, &t->timer);
}

static void pump(struct mad_dispatcher *d)
{
	while (d->c.inflight < d->o.window) {
		uint32_t idx = fifo_pop(d, &d->ready);
		if (idx == NIL)
			idx = fifo_pop(d, &d->pending);
		if (idx == NIL)
			break;
		struct txn *t = txn_at(d, idx);
		if (t->dest != NIL) {
			struct dest *ds = &d->dests[t->dest];
			if (ds->inflight >= d->o.window_per_dest) {
				struct fifo f = {ds->blocked_head, ds->blocked_tail};
				fifo_push(d, &f, idx);
				ds->blocked_head = f.head;
				ds->blocked_tail = f.tail;
				continue;
			}
			ds->inflight++;
		}
		d->c.queued--;
		d->c.inflight++;
		if (d->c.inflight > d->c.inflight_max)
			d->c.inflight_max = d->c.inflight;
		t->state = TXN_INFLIGHT;
		txn_attempt(d, t);
	}
}

/* ---- the Report lane ---- */

static void lane_make_runnable(struct mad_dispatcher *d, uint32_t di)
{
	struct dest *ds = &d->dests[di];
	if (ds->runnable || !ds->nblocked || ds->inflight >= d->o.report_per_dest)
		return;
	ds->runnable = true;
	ds->run_next = NIL;
	if (d->run_tail == NIL)
		d->run_head = di;
	else
		d->dests[d->run_tail].run_next = di;
	d->run_tail = di;
}

static uint32_t lane_pop_waiting(struct mad_dispatcher *d, struct dest *ds)
{
	struct fifo f = {ds->blocked_head, ds->blocked_tail};
	uint32_t idx = fifo_pop(d, &f);
	ds->blocked_head = f.head;
	ds->blocked_tail = f.tail;
	ds->nblocked--;
	d->c.report_queued--;
	return idx;
}

/* One request from each runnable destination in turn, so that a destination with a long
 * backlog does not delay the others. */
static void pump_reports(struct mad_dispatcher *d)
{
	while (d->c.report_inflight < d->o.report_window && d->run_head != NIL) {
		uint32_t di = d->run_head;
		struct dest *ds = &d->dests[di];
		d->run_head = ds->run_next;
		if (d->run_head == NIL)
			d->run_tail = NIL;
		ds->runnable = false;
		struct txn *t = txn_at(d, lane_pop_waiting(d, ds));
		ds->inflight++;
		d->c.report_inflight++;
		t->state = TXN_INFLIGHT;
		txn_attempt(d, t);
		lane_make_runnable(d, di);
	}
}

/* End a waiting Report unsent. */
static void lane_drop_oldest(struct mad_dispatcher *d, uint32_t di)
{
	struct txn *t = txn_at(d, lane_pop_waiting(d, &d->dests[di]));
	d->c.report_dropped++;
	struct mad_result res = {.error = -ENOBUFS, .from = t->to, .tid = t->tid};
	mad_result_fn cb = t->cb;
	void *ctx = t->ctx;
	txn_release(d, t);
	if (cb)
		cb(d, &res, ctx);
}

static void lane_submit(struct mad_dispatcher *d, struct txn *t)
{
	struct dest *ds = &d->dests[t->dest];
	struct fifo f = {ds->blocked_head, ds->blocked_tail};
	fifo_push(d, &f, t->idx);
	ds->blocked_head = f.head;
	ds->blocked_tail = f.tail;
	ds->nblocked++;
	d->c.report_queued++;
	uint32_t di = t->dest;
	if (ds->nblocked > d->o.report_backlog_per_dest)
		lane_drop_oldest(d, di);
	lane_make_runnable(d, di);
	pump_reports(d);
}

/* Under loss the default retries are not enough: at 50% loss each way an attempt is
 * answered one time in four, and four attempts fail 32% of the time, so that a sweep of
 * a few thousand MADs always leaves some undone and sweeps again and again. A request with
 * the default retries gets as many attempts as make its failure unlikely (1 in 1,000) at
 * the rate of answers seen lately, at most MAD_ADAPT_MAX_ATTEMPTS; a fabric that answers
 * 90% of attempts or more keeps the default, so that a node that is gone is given up on
 * as soon as before. */
#define MAD_ADAPT_MAX_ATTEMPTS 16
#define MAD_ADAPT_DECAY        0.998 /* per finished transaction: the last ~500 weigh */

static unsigned adapted_attempts(const struct mad_dispatcher *d)
{
	double answered = d->est_answered / d->est_attempts; /* per attempt */
	if (answered >= 0.9)
		return 0;
	double fail = 1 - answered, p = 1;
	unsigned n = 0;
	while (p > 1e-3 && n < MAD_ADAPT_MAX_ATTEMPTS) {
		p *= fail;
		n++;
	}
	return n;
}

/* While MADs get lost, a lost attempt held its place in the window for the whole timeout
 * (200 ms) where answers come in a few: the window, not the fabric, set the pace (20 s of
 * discovery for 648 hosts at 50% loss). Then an attempt waits as long as answers take (the
 * smoothed round trip and four times its variation, as TCP's RTO, at least
 * MAD_RTO_MIN_S), doubled at each retry up to the configured timeout, so that a slow
 * answerer is still waited for. A fabric that answers keeps the configured timeout. */
#define MAD_RTO_MIN_S 0.02

static double attempt_timeout(const struct mad_dispatcher *d, const struct txn *t)
{
	double cap = t->timeout_ms / 1000.0;
	if (!t->adaptive || !d->rtt_known || d->est_answered / d->est_attempts >= 0.9)
		return cap;
	double rto = d->srtt + 4 * d->rttvar;
	if (rto < MAD_RTO_MIN_S)
		rto = MAD_RTO_MIN_S;
	for (unsigned k = 1; k < t->attempts && rto < cap; k++)
		rto *= 2;
	return rto < cap ? rto : cap;
}

static void rtt_sample(struct mad_dispatcher *d, double r)
{
	if (!d->rtt_known) {
		d->srtt = r;
		d->rttvar = r / 2;
		d->rtt_known = true;
		return;
	}
	double dev = d->srtt > r ? d->srtt - r : r - d->srtt;
	d->rttvar = 0.75 * d->rttvar + 0.25 * dev;
	d->srtt = 0.875 * d->srtt + 0.125 * r;
}

static void estimate(struct mad_dispatcher *d, unsigned attempts, bool answered)
{
	d->est_attempts = d->est_attempts * MAD_ADAPT_DECAY + attempts;
	d->est_answered = d->est_answered * MAD_ADAPT_DECAY + answered;
}

double mad_dispatcher_answer_rate(const struct mad_dispatcher *d)
{
	return d->est_answered / d->est_attempts;
}

void disp_txn_finish(struct mad_dispatcher *d, struct txn *t, int error, uint16_t status,
                     const uint8_t *mad, size_t len, const struct mad_addr *from)
{
	ev_timer_stop(d->loop, &t->timer);
	bool report = t->report;
	if (report) {
		d->c.report_inflight--;
		d->dests[t->dest].inflight--;
		lane_make_runnable(d, t->dest);
	} else {
		d->c.inflight--;
	}
	if (t->dest != NIL && !report) {
		struct dest *ds = &d->dests[t->dest];
		ds->inflight--;
		if (ds->blocked_head != NIL) {
			struct fifo f = {ds->blocked_head, ds->blocked_tail};
			fifo_push(d, &d->ready, fifo_pop(d, &f));
			ds->blocked_head = f.head;
			ds->blocked_tail = f.tail;
		}
	}
	if (error == -ETIMEDOUT)
		d->c.timed_out++;
	else if (!error)
		d->c.completed++;
	/* a subscriber's silence says nothing of the fabric's losses */
	if ((error == -ETIMEDOUT || !error) && t->attempts && !report)
		estimate(d, t->attempts, !error);
	/* Karn: a retried one's answer may be to any attempt */
	if (!error && t->attempts == 1 && !report)
		rtt_sample(d, ev_now(d->loop) - t->sent_at);

	struct mad_result res = {
	    .error = error,
	    .status = status,
	    .mad = mad,
	    .len = len,
	    .attempts = t->attempts,
	    .tid = t->tid,
	};
	if (from)
		res.from = *from;
	else
		res.from = t->to;
	mad_result_fn cb = t->cb;
	void *ctx = t->ctx;
	txn_release(d, t);
	if (cb)
		cb(d, &res, ctx);
	pump(d);
	pump_reports(d);
}

static void txn_retry_or_fail(struct mad_dispatcher *d, struct txn *t)
{
	if (t->retries_left == 0 && t->adaptive && t->attempts < adapted_attempts(d)) {
		d->c.retried_lossy++;
		t->retries_left = 1;
	}
	if (t->retries_left == 0) {
		log_debug(d->o.log, "mad",
		          "TID 0x%016" PRIx64 " attr 0x%04x to LID %u: no answer after %u attempts",
		          t->tid, mad_get_field(t->mad, 0, IB_MAD_ATTRID_F), t->to.lid,
		          t->attempts);
		disp_txn_finish(d, t, -ETIMEDOUT, 0, NULL, 0, NULL);
		return;
	}
	t->retries_left--;
	d->c.retried++;
	ev_timer_stop(d->loop, &t->timer);
	txn_attempt(d, t);
}

static void txn_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct txn *t = (struct txn *)((char *)w - offsetof(struct txn, timer));
	if (t->state == TXN_INFLIGHT)
		txn_retry_or_fail(t->d, t);
}

void mad_dispatcher_set_max_txns(struct mad_dispatcher *d, unsigned n)
{
	d->o.max_txns = n;
}

int mad_dispatcher_send(struct mad_dispatcher *d, const struct mad_request *req)
{
	if (!req->mad || req->len < MAD_HDR_SIZE)
		return -EINVAL;
	if (req->len > MAD_SIZE)
		return -EMSGSIZE; /* RMPP-segmented requests are not needed by any user yet */
	bool report = req->lane == MAD_LANE_REPORT;
	if (report && d->c.report_queued >= d->o.report_backlog) {
		d->c.report_dropped++;
		return -ENOBUFS;
	}
	struct txn *t = txn_alloc(d);
	if (!t)
		return -ENOMEM;
	t->tid_low = ((uint32_t)t->gen << TXN_IDX_BITS) | t->idx;
	t->tid = t->tid_low; /* the upper 32 bits belong to the kernel or simulator */
	memcpy(t->mad, req->mad, req->len);
	t->len = req->len;
	mad_set_field64(t->mad, 0, IB_MAD_TRID_F, t->tid);
	t->to = req->to;
	t->timeout_ms = req->timeout_ms ? req->timeout_ms : d->o.timeout_ms;
	t->retries_left = req->retries >= 0 ? (unsigned)req->retries : d->o.retries;
	t->adaptive = req->retries < 0 && !req->timeout_ms && !report;
	t->report = report;
	t->attempts = 0;
	t->outstanding = 0;
	t->cb = req->cb;
	t->ctx = req->ctx;
	uint64_t key = req->dest_key;
	if (!key && req->mad[1] != MAD_CLASS_SUBN_DR)
		key = (1ull << 32) | req->to.lid; /* apart from caller keys, which are small */
	if (report) /* apart from the main lane's: a lane's room is its own */
		key = (2ull << 32) | (req->dest_key ? req->dest_key : req->to.lid);
	if (key) {
		t->dest = dest_lookup(d, key);
		if (t->dest == NIL) {
			txn_release(d, t);
			return -ENOMEM;
		}
	}
	t->state = TXN_QUEUED;
	d->c.requests++;
	if (report) {
		lane_submit(d, t);
		return 0;
	}
	d->c.queued++;
	fifo_push(d, &d->pending, t->idx);
	pump(d);
	return 0;
}

/* ---- receiving ---- */

static void count_status(struct mad_dispatcher *d, uint16_t status)
{
	unsigned code = (status >> 2) & 7, cls = (status >> 8) & 0x7f;
	if (code)
		d->c.status_code[code]++;
	if (cls)
		d->c.status_class[cls]++;
}

static void handle_mad(struct mad_dispatcher *d, const struct mad_addr *from, const uint8_t *mad,
                       size_t len, unsigned flags)
{
	struct mad_hdr hdr;
	struct mad_error err;
	if (mad_hdr_decode(mad, len, &hdr, &err) < 0 || hdr.base_version != MAD_BASE_VERSION) {
		d->c.malformed++;
		log_debug(d->o.log, "mad", "%s: dropped a MAD from LID %u: %s", d->t->desc,
		          from->lid,
		          hdr.base_version != MAD_BASE_VERSION ? "bad BaseVersion" : err.msg);
		return;
	}
	if (flags & MAD_RECV_TIMED_OUT) {
		/* The kernel gave a request back unanswered: that attempt's timeout. One the
		 * backstop already resent is over too, and its successor still runs. */
		struct txn *t = mad_is_response(hdr.method) ? NULL : disp_find_txn(d, hdr.tid);
		if (!t || t->state != TXN_INFLIGHT)
			return;
		if (t->outstanding > 1) {
			t->outstanding--;
			return;
		}
		t->outstanding = 0;
		txn_retry_or_fail(d, t);
		return;
	}
	if (flags & MAD_RECV_SEND_FAILED) {
		/* Our own MAD came back undelivered: a lost attempt. */
		d->c.send_errors++;
		struct txn *t = mad_is_response(hdr.method) ? NULL : disp_find_txn(d, hdr.tid);
		if (t && t->state == TXN_INFLIGHT)
			txn_retry_or_fail(d, t);
		return;
	}
	size_t rmpp_hdr = mad_rmpp_hdr_len(hdr.mgmt_class);
	/* RMPPVersion 0 is no RMPP transfer, whatever the flags say: OpenSM's vendor layer
	 * leaves the version for the kernel to fill in, and under libumad2sim.so no kernel
	 * does, so its one-MAD answers arrive that way */
	if (rmpp_hdr && len >= MAD_RMPP_HDR_END &&
	    (mad_get_field((void *)mad, 0, IB_SA_RMPP_FLAGS_F) & RMPP_FLAG_ACTIVE) &&
	    mad_get_field((void *)mad, 0, IB_SA_RMPP_VERS_F) != 0) {
		rmpp_input(d, from, mad, len, &hdr);
		return;
	}
	if (!mad_is_response(hdr.method) && hdr.method != MAD_METHOD_TRAP_REPRESS) {
		if (d->handlers[hdr.mgmt_class].fn) {
			d->handlers[hdr.mgmt_class].fn(d, from, mad, len,
			                               d->handlers[hdr.mgmt_class].ctx);
		} else {
			d->c.unhandled++;
			log_debug(d->o.log, "mad", "%s: no handler for %s %s from LID %u",
			          d->t->desc, mad_class_str(hdr.mgmt_class),
			          mad_method_str(hdr.method), from->lid);
		}
		return;
	}
	struct txn *t = disp_match_answer(d, from, &hdr);
	if (!t) {
		d->c.unmatched++;
		return;
	}
	uint16_t status = hdr.status;
	if (hdr.mgmt_class == MAD_CLASS_SUBN_DR)
		status = (uint16_t)mad_get_field((void *)mad, 0, IB_DRSMP_STATUS_F);
	count_status(d, status);
	if ((status & MAD_STATUS_BUSY) && t->retries_left) {
		/* BUSY asks us to come back later: the timeout path resends. The answer ended
		 * the attempt the kernel held. */
		d->c.busy++;
		if (t->outstanding)
			t->outstanding--;
		ev_timer_stop(d->loop, &t->timer);
		ev_timer_set(&t->timer, t->timeout_ms / 1000.0, 0.);
		ev_timer_start(d->loop, &t->timer);
		return;
	}
	disp_txn_finish(d, t, 0, status, mad, len, from);
}

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)revents;
	struct mad_dispatcher *d =
	    (struct mad_dispatcher *)((char *)w - offsetof(struct mad_dispatcher, io));
	/* Bounded, so timers and other watchers get their turn under a flood; at the bound it
	 * comes back next round by itself: what the transport has read ahead (a batch of
	 * datagrams, packed ones of 32 MADs) makes the fd no longer readable, and waiting for
	 * it to be stranded up to a thousand MADs until the next came (seen: 90 of 400 SA
	 * requests of a flood never answered). */
	for (int i = 0;; i++) {
		if (i == 256) {
			ev_feed_event(loop, w, EV_READ);
			break;
		}
		struct mad_addr from;
		size_t len = 0;
		unsigned flags = 0;
		int r = d->t->ops->recv(d->t, &from, d->rxbuf, sizeof(d->rxbuf), &len, &flags);
		if (r == 0)
			break;
		if (r < 0) {
			d->c.malformed++;
			continue;
		}
		d->c.received++;
		handle_mad(d, &from, d->rxbuf, len, flags);
	}
}

static void flush_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	(void)loop;
	(void)revents;
	struct mad_dispatcher *d =
	    (struct mad_dispatcher *)((char *)w - offsetof(struct mad_dispatcher, flush));
	mad_transport_flush(d->t);
}

/* ---- life cycle and the rest of the API ---- */

struct mad_dispatcher *mad_dispatcher_new(struct ev_loop *loop, struct mad_transport *t,
                                          const struct mad_dispatcher_opts *opts)
{
	struct mad_dispatcher *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	/* Two short-lived clients in a row (ibsa runs) would otherwise reuse the same TIDs,
	 * and a responder keeping RMPP sessions or duplicate state by TID would mistake the
	 * second for a retry of the first */
	d->gen_base = (uint16_t)(((uint32_t)time(NULL) ^ ((uint32_t)getpid() << 4)) & 0xfff);
	d->loop = loop;
	d->t = t;
	if (opts)
		d->o = *opts;
	if (!d->o.window)
		d->o.window = 64;
	if (!d->o.window_per_dest)
		d->o.window_per_dest = 4;
	if (!d->o.timeout_ms)
		d->o.timeout_ms = 200;
	if (!d->o.retries)
		d->o.retries = 3;
	if (!d->o.rmpp_window)
		d->o.rmpp_window = 32;
	if (!d->o.rmpp_timeout_ms)
		d->o.rmpp_timeout_ms = 200;
	if (!d->o.rmpp_retries)
		d->o.rmpp_retries = 5;
	if (!d->o.rmpp_recv_max)
		d->o.rmpp_recv_max = 256;
	if (!d->o.rmpp_recv_per_peer)
		d->o.rmpp_recv_per_peer = 8;
	if (!d->o.rmpp_recv_bytes)
		d->o.rmpp_recv_bytes = 65536;
	if (!d->o.report_window)
		d->o.report_window = 16;
	if (!d->o.report_per_dest)
		d->o.report_per_dest = 1;
	if (!d->o.report_backlog_per_dest)
		d->o.report_backlog_per_dest = 1024;
	if (!d->o.report_backlog)
		d->o.report_backlog = 65536;
	d->rl_rmpp = LOG_RL_INIT(10, 10000);
	d->rl_mismatch = LOG_RL_INIT(10, 10000);
	d->est_attempts = d->est_answered = 32; /* a fabric answers until it is seen not to */
	d->free_head = NIL;
	fifo_init(&d->pending);
	fifo_init(&d->ready);
	d->run_head = d->run_tail = NIL;
	ev_io_init(&d->io, io_cb, t->ops->fd(t), EV_READ);
	/* After a stall (a loaded machine, a long step on the loop) the MADs that came in and
	 * the time-outs that expired meanwhile are due together: libev runs the later-queued
	 * timers first within a priority, which would time out answers already received. */
	ev_set_priority(&d->io, EV_MAXPRI);
	ev_io_start(loop, &d->io);
	if (t->ops->flush) {
		ev_prepare_init(&d->flush, flush_cb);
		ev_prepare_start(loop, &d->flush);
		t->batch = true;
	}
	return d;
}

void mad_dispatcher_cancel_all(struct mad_dispatcher *d)
{
	rmpp_free_all(d);
	/* End every transaction once, in flight or queued. */
	for (uint32_t i = 0; i < d->ntxn; i++) {
		struct txn *t = txn_at(d, i);
		if (t->state == TXN_FREE)
			continue;
		ev_timer_stop(d->loop, &t->timer);
		mad_result_fn cb = t->cb;
		struct mad_result res = {.error = -ECANCELED, .from = t->to, .tid = t->tid};
		t->state = TXN_FREE;
		if (cb)
			cb(d, &res, t->ctx);
	}
}

void mad_dispatcher_free(struct mad_dispatcher *d)
{
	if (!d)
		return;
	ev_io_stop(d->loop, &d->io);
	if (d->t->ops->flush) {
		mad_transport_flush(d->t);
		ev_prepare_stop(d->loop, &d->flush);
		d->t->batch = false;
	}
	mad_dispatcher_cancel_all(d);
	for (uint32_t i = 0; i < d->nchunks; i++)
		free(d->chunks[i]);
	free(d->chunks);
	free(d->dests);
	u64map_free(&d->dest_index);
	free(d);
}

void mad_dispatcher_set_handler(struct mad_dispatcher *d, uint8_t mgmt_class, mad_request_fn fn,
                                void *ctx)
{
	d->handlers[mgmt_class].fn = fn;
	d->handlers[mgmt_class].ctx = ctx;
}

int mad_dispatcher_respond(struct mad_dispatcher *d, const struct mad_addr *to, const uint8_t *mad,
                           size_t len)
{
	if (len > MAD_SIZE || len < MAD_HDR_SIZE)
		return -EMSGSIZE;
	return disp_xmit(d, to, mad, len, 0);
}

int mad_dispatcher_respond_rmpp(struct mad_dispatcher *d, const struct mad_addr *to,
                                const uint8_t *hdr, size_t hdr_len, const uint8_t *data,
                                size_t data_len)
{
	return rmpp_send(d, to, hdr, hdr_len, data, data_len);
}

const struct mad_counters *mad_dispatcher_counters(const struct mad_dispatcher *d)
{
	return &d->c;
}

bool mad_dispatcher_idle(const struct mad_dispatcher *d)
{
	return d->c.inflight == 0 && d->c.queued == 0 && d->c.report_inflight == 0 &&
	       d->c.report_queued == 0 && rmpp_active(d) == 0;
}

void mad_dispatcher_log_counters(const struct mad_dispatcher *d)
{
	const struct mad_counters *c = &d->c;
	log_info(d->o.log, "mad",
	         "%s: sent %" PRIu64 " received %" PRIu64 " transactions %" PRIu64
	         " answered %" PRIu64 " retried %" PRIu64 " timed out %" PRIu64
	         " unmatched %" PRIu64 " malformed %" PRIu64 " send errors %" PRIu64
	         " busy %" PRIu64 " RMPP sent %" PRIu64 " received %" PRIu64 " aborted %" PRIu64
	         " max in flight %u; Reports in flight %u waiting %u dropped %" PRIu64,
	         d->t->desc, c->sent, c->received, c->requests, c->completed, c->retried,
	         c->timed_out, c->unmatched, c->malformed, c->send_errors, c->busy,
	         c->rmpp_sent_transfers, c->rmpp_recv_transfers, c->rmpp_aborted, c->inflight_max,
	         c->report_inflight, c->report_queued, c->report_dropped);
	for (unsigned i = 1; i < 8; i++)
		if (c->status_code[i])
			log_info(d->o.log, "mad", "answers with status 0x%04x (%s): %" PRIu64,
			         i << 2, mad_status_str((uint16_t)(i << 2)), c->status_code[i]);
	for (unsigned i = 1; i < 128; i++)
		if (c->status_class[i])
			log_info(d->o.log, "mad", "answers with status 0x%04x (%s): %" PRIu64,
			         i << 8, mad_status_str((uint16_t)(i << 8)), c->status_class[i]);
}
