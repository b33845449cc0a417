/* The dispatcher against a fake fabric: windows, timeouts, retries, late and duplicate
 * answers, BUSY, undelivered MADs, unsolicited requests, malformed input. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "fake_transport.h"
#include "mad/dispatcher.h"
#include "mad/mad_header.h"

#define NREQ_MAX 10000

/* The fake fabric: answers requests according to the test's rules. */
struct fabric {
	struct ev_loop *loop;
	struct fake_transport *ft;
	struct mad_dispatcher *d;
	unsigned drop_first; /* drop this many attempts of every request */
	bool drop_all;
	bool duplicate;        /* answer twice */
	bool hold;             /* keep answers until release() */
	bool busy_first;       /* first attempt gets BUSY */
	bool bounce_first;     /* first attempt comes back undelivered */
	unsigned drop_percent; /* attempts lost at random (seed) */
	bool kernel;           /* a lost attempt comes back MAD_RECV_TIMED_OUT, as the kernel's */
	uint16_t silent_lid;   /* attempts to this LID and above are never answered (0: none) */
	uint32_t timeouts_seen[NREQ_MAX]; /* what each request's last attempt asked */
	unsigned seed;
	unsigned attempts[NREQ_MAX];
	/* held answers */
	struct held {
		struct mad_addr from;
		uint8_t mad[MAD_SIZE];
		uint64_t key;
	} * held;
	unsigned nheld;
	/* what the test observes */
	unsigned outstanding, outstanding_max;
	unsigned per_key[16], per_key_max[16];
	unsigned done, errors;
	int results[NREQ_MAX];
	unsigned res_attempts[NREQ_MAX];
};

static void answer_of(const uint8_t *req, uint8_t *ans, uint16_t status)
{
	memcpy(ans, req, MAD_SIZE);
	ans[3] = (uint8_t)(req[3] | MAD_METHOD_RESP);
	mad_set_field(ans, 0, IB_MAD_STATUS_F, status);
}

static void on_send(struct fake_transport *f, const struct mad_addr *to, const uint8_t *mad,
                    size_t len, void *ctx)
{
	(void)len;
	struct fabric *fb = ctx;
	unsigned id = mad_get_field((void *)mad, 0, IB_MAD_ATTRMOD_F);
	ck_assert_uint_lt(id, NREQ_MAX);
	unsigned n = ++fb->attempts[id];
	fb->timeouts_seen[id] = f->last_timeout_ms;
	struct mad_addr from = {.lid = to->lid, .qpn = 1};
	uint8_t ans[MAD_SIZE];
	if (fb->drop_all || n <= fb->drop_first || (fb->silent_lid && to->lid >= fb->silent_lid)) {
		if (fb->kernel) /* the kernel's timer ran out: the request comes back */
			fake_deliver(fb->ft, to, mad, MAD_SIZE, MAD_RECV_TIMED_OUT);
		return;
	}
	if (fb->drop_percent && (unsigned)rand_r(&fb->seed) % 100 < fb->drop_percent)
		return;
	if (fb->bounce_first && n == 1) {
		fake_deliver(fb->ft, &from, mad, MAD_SIZE, MAD_RECV_SEND_FAILED);
		return;
	}
	answer_of(mad, ans, (fb->busy_first && n == 1) ? MAD_STATUS_BUSY : 0);
	if (fb->hold) {
		fb->held = realloc(fb->held, sizeof(*fb->held) * (fb->nheld + 1));
		fb->held[fb->nheld].from = from;
		memcpy(fb->held[fb->nheld].mad, ans, MAD_SIZE);
		fb->nheld++;
		return;
	}
	fake_deliver(fb->ft, &from, ans, MAD_SIZE, 0);
	if (fb->duplicate)
		fake_deliver(fb->ft, &from, ans, MAD_SIZE, 0);
}

/* Release the oldest held answer. */
static void release_one(struct fabric *fb)
{
	ck_assert_uint_gt(fb->nheld, 0);
	fake_deliver(fb->ft, &fb->held[0].from, fb->held[0].mad, MAD_SIZE, 0);
	memmove(fb->held, fb->held + 1, sizeof(*fb->held) * (fb->nheld - 1));
	fb->nheld--;
}

struct req_ctx {
	struct fabric *fb;
	unsigned id;
	unsigned key;
};

static struct req_ctx ctxs[NREQ_MAX];

static void on_done(struct mad_dispatcher *d, const struct mad_result *r, void *ctx)
{
	(void)d;
	struct req_ctx *c = ctx;
	struct fabric *fb = c->fb;
	ck_assert_int_eq(fb->results[c->id], 1); /* exactly one completion per request */
	fb->results[c->id] = r->error;
	fb->res_attempts[c->id] = r->attempts;
	if (!r->error) {
		/* the answer is this request's */
		ck_assert_uint_eq(mad_get_field((void *)r->mad, 0, IB_MAD_ATTRMOD_F), c->id);
		ck_assert_uint_eq(r->mad[3], MAD_METHOD_GET_RESP);
	} else {
		fb->errors++;
	}
	fb->outstanding--;
	fb->per_key[c->key]--;
	fb->done++;
}

static void fabric_init(struct fabric *fb, const struct mad_dispatcher_opts *o)
{
	memset(fb, 0, sizeof(*fb));
	fb->loop = ev_loop_new(EVFLAG_AUTO);
	fb->ft = fake_transport_new();
	fb->ft->on_send = on_send;
	fb->ft->ctx = fb;
	fb->d = mad_dispatcher_new(fb->loop, &fb->ft->base, o);
}

static void fabric_free(struct fabric *fb)
{
	mad_dispatcher_free(fb->d);
	mad_transport_close(&fb->ft->base);
	ev_loop_destroy(fb->loop);
	free(fb->held);
}

static void submit(struct fabric *fb, unsigned id, unsigned key, unsigned timeout_ms, int retries)
{
	struct mad_smp smp;
	mad_smp_init_lid(&smp, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, id);
	uint8_t buf[MAD_SIZE] = {0};
	mad_smp_encode(&smp, buf, sizeof(buf), NULL);
	ctxs[id] = (struct req_ctx){.fb = fb, .id = id, .key = key};
	fb->results[id] = 1;
	struct mad_request rq = {
	    .to = {.lid = (uint16_t)(10 + key)},
	    .mad = buf,
	    .len = sizeof(buf),
	    .timeout_ms = timeout_ms,
	    .retries = retries,
	    .dest_key = key,
	    .cb = on_done,
	    .ctx = &ctxs[id],
	};
	ck_assert_int_eq(mad_dispatcher_send(fb->d, &rq), 0);
	fb->outstanding++;
	if (fb->outstanding > fb->outstanding_max)
		fb->outstanding_max = fb->outstanding;
	fb->per_key[key]++;
}

/* A request in the Report lane to a subscriber at lid: 0 or what the send returned. */
static int submit_report(struct fabric *fb, unsigned id, uint16_t lid, unsigned timeout_ms,
                         int retries)
{
	struct mad_smp smp;
	mad_smp_init_lid(&smp, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, id);
	uint8_t buf[MAD_SIZE] = {0};
	mad_smp_encode(&smp, buf, sizeof(buf), NULL);
	ctxs[id] = (struct req_ctx){.fb = fb, .id = id};
	fb->results[id] = 1;
	struct mad_request rq = {
	    .to = {.lid = lid, .qpn = 1},
	    .mad = buf,
	    .len = sizeof(buf),
	    .timeout_ms = timeout_ms,
	    .retries = retries,
	    .lane = MAD_LANE_REPORT,
	    .cb = on_done,
	    .ctx = &ctxs[id],
	};
	int rc = mad_dispatcher_send(fb->d, &rq);
	if (rc == 0)
		fb->outstanding++;
	return rc;
}

static void run_for(struct fabric *fb, double s)
{
	ev_tstamp end = ev_time() + s;
	while (ev_time() < end)
		ev_run(fb->loop, EVRUN_NOWAIT);
}

static void run_until_done(struct fabric *fb, unsigned n)
{
	ev_tstamp start = ev_time();
	while (fb->done < n) {
		ev_run(fb->loop, EVRUN_ONCE);
		ck_assert_msg(ev_time() - start < 60, "requests did not finish");
	}
}

START_TEST(ten_thousand_through_window_of_64)
{
	struct fabric fb;
	struct mad_dispatcher_opts o = {.window = 64, .window_per_dest = UINT_MAX};
	fabric_init(&fb, &o);
	fb.hold = true;
	for (unsigned i = 0; i < NREQ_MAX; i++)
		submit(&fb, i, 0, 1000, 3);
	/* the fabric sees exactly the window, no more */
	ev_run(fb.loop, EVRUN_NOWAIT);
	ck_assert_uint_eq(fb.ft->sends, 64);
	ck_assert_uint_eq(mad_dispatcher_counters(fb.d)->inflight, 64);
	ck_assert_uint_eq(mad_dispatcher_counters(fb.d)->queued, NREQ_MAX - 64);
	while (fb.done < NREQ_MAX) {
		while (fb.nheld)
			release_one(&fb);
		ev_run(fb.loop, EVRUN_ONCE);
		ck_assert_uint_le(mad_dispatcher_counters(fb.d)->inflight, 64);
		ck_assert_uint_le(fb.ft->sends - fb.done, 64);
	}
	const struct mad_counters *c = mad_dispatcher_counters(fb.d);
	ck_assert_uint_eq(c->completed, NREQ_MAX);
	ck_assert_uint_eq(c->inflight_max, 64);
	ck_assert_uint_eq(c->retried, 0);
	ck_assert_uint_eq(fb.ft->sends, NREQ_MAX);
	ck_assert_uint_eq(fb.errors, 0);
	ck_assert(mad_dispatcher_idle(fb.d));
	fabric_free(&fb);
}
END_TEST

START_TEST(per_destination_window)
{
	struct fabric fb;
	struct mad_dispatcher_opts o = {.window = 64, .window_per_dest = 2};
	fabric_init(&fb, &o);
	fb.hold = true;
	for (unsigned i = 0; i < 500; i++)
		submit(&fb, i, 1 + i % 5, 1000, 3);
	unsigned max_seen = 0;
	while (fb.done < 500) {
		ev_run(fb.loop, EVRUN_NOWAIT);
		/* at most 2 unanswered per destination, 10 overall */
		unsigned held_per[16] = {0};
		for (unsigned k = 0; k < fb.nheld; k++)
			held_per[10 + 0 + (fb.held[k].from.lid - 10)]++;
		for (unsigned k = 0; k < 16; k++)
			ck_assert_uint_le(held_per[k], 2);
		ck_assert_uint_le(mad_dispatcher_counters(fb.d)->inflight, 10);
		if (mad_dispatcher_counters(fb.d)->inflight > max_seen)
			max_seen = mad_dispatcher_counters(fb.d)->inflight;
		if (fb.nheld)
			release_one(&fb);
		ev_run(fb.loop, EVRUN_ONCE);
	}
	ck_assert_uint_eq(max_seen, 10);
	ck_assert_uint_eq(fb.errors, 0);
	fabric_free(&fb);
}
END_TEST

/* max_txns bounds the transactions held, queued or in flight: one more is refused with
 * -ENOMEM (its callback never runs), and room comes back as answers end them. */
START_TEST(max_txns_bounds_what_is_held)
{
	struct fabric fb;
	struct mad_dispatcher_opts o = {.max_txns = 3};
	fabric_init(&fb, &o);
	fb.hold = true;
	for (unsigned i = 0; i < 3; i++)
		submit(&fb, i, 0, 1000, 3);
	struct mad_smp smp;
	mad_smp_init_lid(&smp, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 3);
	uint8_t buf[MAD_SIZE] = {0};
	mad_smp_encode(&smp, buf, sizeof(buf), NULL);
	ctxs[3] = (struct req_ctx){.fb = &fb, .id = 3};
	fb.results[3] = 1;
	struct mad_request rq = {
	    .to = {.lid = 10}, .mad = buf, .len = sizeof(buf), .cb = on_done, .ctx = &ctxs[3]};
	ck_assert_int_eq(mad_dispatcher_send(fb.d, &rq), -ENOMEM);
	while (fb.nheld < 3)
		ev_run(fb.loop, EVRUN_ONCE);
	release_one(&fb);
	run_until_done(&fb, 1);
	submit(&fb, 3, 0, 1000, 3); /* room again */
	ck_assert_int_eq(fb.results[3], 1);
	mad_dispatcher_set_max_txns(fb.d, 0);
	submit(&fb, 4, 0, 1000, 3); /* unbounded */
	submit(&fb, 5, 0, 1000, 3);
	while (fb.done < 6) {
		if (fb.nheld)
			release_one(&fb);
		ev_run(fb.loop, EVRUN_ONCE);
	}
	ck_assert_uint_eq(fb.errors, 0);
	fabric_free(&fb);
}
END_TEST

START_TEST(lost_answers_are_retried)
{
	struct fabric fb;
	fabric_init(&fb, NULL);
	fb.drop_first = 2;
	for (unsigned i = 0; i < 200; i++)
		submit(&fb, i, 0, 5, 3);
	run_until_done(&fb, 200);
	for (unsigned i = 0; i < 200; i++) {
		ck_assert_int_eq(fb.results[i], 0);
		ck_assert_uint_eq(fb.res_attempts[i], 3);
	}
	ck_assert_uint_eq(mad_dispatcher_counters(fb.d)->retried, 400);
	ck_assert_uint_eq(mad_dispatcher_counters(fb.d)->timed_out, 0);
	fabric_free(&fb);
}
END_TEST

START_TEST(unanswered_fail_after_retries)
{
	struct fabric fb;
	fabric_init(&fb, NULL);
	fb.drop_all = true;
	ev_tstamp start = ev_time();
	for (unsigned i = 0; i < 100; i++)
		submit(&fb, i, 0, 10, 2);
	run_until_done(&fb, 100);
	ev_tstamp took = ev_time() - start;
	for (unsigned i = 0; i < 100; i++) {
		ck_assert_int_eq(fb.results[i], -ETIMEDOUT);
		ck_assert_uint_eq(fb.res_attempts[i], 3);
		ck_assert_uint_eq(fb.attempts[i], 3);
	}
	ck_assert_uint_eq(mad_dispatcher_counters(fb.d)->timed_out, 100);
	/* 100 requests, 64 at a time, 3 attempts of 10 ms: two rounds of ~30 ms */
	ck_assert_double_ge(took, 0.055);
	ck_assert_double_lt(took, 5.0);
	fabric_free(&fb);
}
END_TEST

/* A fabric that loses 60% of attempts: with the default retries (3), 13% of requests
 * would fail (0.6^4) and each lost attempt would hold its place in the window for the whole
 * 200 ms timeout, 2,000 requests taking over 9 s. Requests with the defaults get more
 * attempts and waits as long as answers take; explicit ones keep what they asked. */
START_TEST(lossy_fabric_adapts_retries_and_timeouts)
{
	struct fabric fb;
	struct mad_dispatcher_opts o = {.timeout_ms = 200, .retries = 3};
	fabric_init(&fb, &o);
	fb.drop_percent = 60;
	fb.seed = 7;
	ck_assert_double_eq(mad_dispatcher_answer_rate(fb.d), 1.0);
	ev_tstamp start = ev_time();
	for (unsigned i = 0; i < 2000; i++)
		submit(&fb, i, i % 16, 0, -1);
	run_until_done(&fb, 2000);
	ev_tstamp took = ev_time() - start;
	const struct mad_counters *c = mad_dispatcher_counters(fb.d);
	/* the first few hundred run before the loss is seen: 13% of those may fail */
	ck_assert_uint_lt(c->timed_out, 60);
	ck_assert_uint_gt(c->retried_lossy, 100);
	unsigned most = 0, lost = 0;
	for (unsigned i = 0; i < 2000; i++) {
		most = fb.res_attempts[i] > most ? fb.res_attempts[i] : most;
		lost += fb.attempts[i] - (fb.results[i] == 0);
	}
	ck_assert_uint_gt(most, 4);
	ck_assert_uint_le(most, 16);
	double rate = mad_dispatcher_answer_rate(fb.d);
	ck_assert_double_gt(rate, 0.3);
	ck_assert_double_lt(rate, 0.5);
	/* lost attempts waited 20 ms, doubled at each retry, not 200 ms each: with the
	 * configured timeout the lost attempts alone would hold the 64 places of the window
	 * for lost x 0.2 / 64 s (9.8 s here); it takes two thirds of that, timers firing
	 * late under load or not */
	ck_assert_double_lt(took, 0.85 * lost * 0.2 / 64);

	/* an explicit retry count is kept: 0.6^3 of these fail */
	unsigned before = (unsigned)c->timed_out;
	fb.done = 0;
	for (unsigned i = 0; i < 500; i++)
		submit(&fb, i, i % 16, 20, 2);
	run_until_done(&fb, 500);
	for (unsigned i = 0; i < 500; i++)
		ck_assert_uint_le(fb.res_attempts[i], 3);
	ck_assert_uint_gt((unsigned)c->timed_out - before, 50);
	fabric_free(&fb);
}
END_TEST

START_TEST(duplicate_answers_ignored)
{
	struct fabric fb;
	fabric_init(&fb, NULL);
	fb.duplicate = true;
	for (unsigned i = 0; i < 300; i++)
		submit(&fb, i, 0, 1000, 3);
	run_until_done(&fb, 300);
	/* let the duplicates arrive */
	for (int i = 0; i < 10; i++)
		ev_run(fb.loop, EVRUN_NOWAIT);
	ck_assert_uint_eq(fb.errors, 0);
	ck_assert_uint_eq(mad_dispatcher_counters(fb.d)->completed, 300);
	ck_assert_uint_eq(mad_dispatcher_counters(fb.d)->unmatched, 300);
	fabric_free(&fb);
}
END_TEST

START_TEST(late_answer_does_not_complete_a_newer_request)
{
	struct fabric fb;
	struct mad_dispatcher_opts o = {.window = 1};
	fabric_init(&fb, &o);
	fb.hold = true;
	submit(&fb, 1, 0, 10, 0);
	run_until_done(&fb, 1);
	ck_assert_int_eq(fb.results[1], -ETIMEDOUT);
	ck_assert_uint_eq(fb.nheld, 1); /* the answer to request 1, held back */
	/* request 2 reuses the transaction slot of request 1 */
	submit(&fb, 2, 0, 5000, 0);
	ev_run(fb.loop, EVRUN_NOWAIT);
	ck_assert_uint_eq(fb.nheld, 2);
	release_one(&fb); /* the late answer to 1 */
	for (int i = 0; i < 5; i++)
		ev_run(fb.loop, EVRUN_NOWAIT);
	ck_assert_int_eq(fb.results[2], 1); /* still waiting */
	ck_assert_uint_eq(mad_dispatcher_counters(fb.d)->unmatched, 1);
	release_one(&fb);
	run_until_done(&fb, 2);
	ck_assert_int_eq(fb.results[2], 0);
	fabric_free(&fb);
}
END_TEST

START_TEST(busy_is_retried)
{
	struct fabric fb;
	fabric_init(&fb, NULL);
	fb.busy_first = true;
	for (unsigned i = 0; i < 10; i++)
		submit(&fb, i, 0, 5, 3);
	run_until_done(&fb, 10);
	for (unsigned i = 0; i < 10; i++) {
		ck_assert_int_eq(fb.results[i], 0);
		ck_assert_uint_eq(fb.attempts[i], 2);
	}
	ck_assert_uint_eq(mad_dispatcher_counters(fb.d)->busy, 10);
	fabric_free(&fb);
}
END_TEST

START_TEST(undelivered_is_retried_at_once)
{
	struct fabric fb;
	fabric_init(&fb, NULL);
	fb.bounce_first = true;
	ev_tstamp start = ev_time();
	for (unsigned i = 0; i < 10; i++)
		submit(&fb, i, 0, 2000, 3);
	run_until_done(&fb, 10);
	ck_assert_double_lt(ev_time() - start, 1.0); /* no 2 s timeout waited */
	for (unsigned i = 0; i < 10; i++)
		ck_assert_int_eq(fb.results[i], 0);
	ck_assert_uint_eq(mad_dispatcher_counters(fb.d)->send_errors, 10);
	fabric_free(&fb);
}
END_TEST

/* On the kernel's MAD layer (a transport that reports timeouts) every request goes with its
 * timeout, the kernel's ETIMEDOUT return is the attempt's end (a retry at once, not after the
 * dispatcher's own wait), and the dispatcher never resends while the kernel holds the
 * request: three attempts for two retries, whatever the timers do. */
START_TEST(kernel_timeouts_drive_retries)
{
	struct fabric fb;
	fabric_init(&fb, NULL);
	fb.ft->base.reports_timeouts = true;
	fb.kernel = true;
	fb.drop_first = 2;
	ev_tstamp start = ev_time();
	for (unsigned i = 0; i < 50; i++)
		submit(&fb, i, 0, 300, 2);
	run_until_done(&fb, 50);
	/* each attempt's end came from the kernel, not from 300 ms timers */
	ck_assert_double_lt(ev_time() - start, 0.25);
	for (unsigned i = 0; i < 50; i++) {
		ck_assert_int_eq(fb.results[i], 0);
		ck_assert_uint_eq(fb.attempts[i], 3);
		ck_assert_uint_eq(fb.timeouts_seen[i], 300);
	}
	ck_assert_uint_eq(mad_dispatcher_counters(fb.d)->retried, 100);
	fabric_free(&fb);

	/* the kernel keeps a request it has not timed out: no resend by the dispatcher at
	 * the request's own timeout, only the backstop's much later */
	fabric_init(&fb, NULL);
	fb.ft->base.reports_timeouts = true;
	fb.drop_all = true; /* and fb.kernel off: nothing comes back */
	start = ev_time();
	submit(&fb, 0, 0, 20, 1);
	ev_tstamp deadline = start + 0.5;
	while (ev_time() < deadline)
		ev_run(fb.loop, EVRUN_NOWAIT);
	ck_assert_uint_eq(fb.attempts[0], 1);
	run_until_done(&fb, 1);
	ck_assert_int_eq(fb.results[0], -ETIMEDOUT);
	ck_assert_uint_eq(fb.attempts[0], 2);
	fabric_free(&fb);
}
END_TEST

/* A response is its request's answer only with the class and attribute asked and from the
 * port asked (by LID; LMC puts a port's LIDs at most 127 above its base, none below): a
 * stray or forged one naming the TID is dropped, and the real answer still completes it. */
START_TEST(answers_match_class_attribute_and_source)
{
	struct fabric fb;
	fabric_init(&fb, NULL);
	fb.hold = true;
	submit(&fb, 0, 0, 2000, 0); /* NodeInfo to LID 10 */
	ev_run(fb.loop, EVRUN_NOWAIT);
	ck_assert_uint_eq(fb.nheld, 1);
	uint8_t forged[MAD_SIZE];
	struct mad_addr from = fb.held[0].from;
	/* another attribute */
	memcpy(forged, fb.held[0].mad, MAD_SIZE);
	mad_set_field(forged, 0, IB_MAD_ATTRID_F, MAD_ATTR_PORT_INFO);
	fake_deliver(fb.ft, &from, forged, MAD_SIZE, 0);
	/* another class */
	memcpy(forged, fb.held[0].mad, MAD_SIZE);
	forged[1] = MAD_CLASS_SUBN_ADM;
	fake_deliver(fb.ft, &from, forged, MAD_SIZE, 0);
	/* from another port: a LID above the one asked */
	memcpy(forged, fb.held[0].mad, MAD_SIZE);
	struct mad_addr other = {.lid = 11, .qpn = 0};
	fake_deliver(fb.ft, &other, forged, MAD_SIZE, 0);
	for (int i = 0; i < 5; i++)
		ev_run(fb.loop, EVRUN_NOWAIT);
	ck_assert_uint_eq(fb.done, 0);
	ck_assert_uint_eq(mad_dispatcher_counters(fb.d)->mismatched, 3);
	release_one(&fb);
	run_until_done(&fb, 1);
	ck_assert_int_eq(fb.results[0], 0);
	fabric_free(&fb);
}
END_TEST

struct handler_seen {
	unsigned calls;
	struct mad_addr from;
};

static void sa_request_handler(struct mad_dispatcher *d, const struct mad_addr *from,
                               const uint8_t *mad, size_t len, void *ctx)
{
	struct handler_seen *h = ctx;
	h->calls++;
	h->from = *from;
	uint8_t ans[MAD_SIZE];
	ck_assert_uint_eq(len, MAD_SIZE);
	answer_of(mad, ans, MAD_STATUS_SA_NO_RECORDS);
	ck_assert_int_eq(mad_dispatcher_respond(d, from, ans, MAD_SIZE), 0);
}

static void capture_send(struct fake_transport *f, const struct mad_addr *to, const uint8_t *mad,
                         size_t len, void *ctx)
{
	(void)f;
	(void)to;
	memcpy(ctx, mad, len);
}

START_TEST(requests_reach_their_handler_and_junk_is_counted)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct fake_transport *ft = fake_transport_new();
	uint8_t sent[MAD_SIZE] = {0};
	ft->on_send = capture_send;
	ft->ctx = sent;
	struct mad_dispatcher *d = mad_dispatcher_new(loop, &ft->base, NULL);
	struct handler_seen h = {0};
	mad_dispatcher_set_handler(d, MAD_CLASS_SUBN_ADM, sa_request_handler, &h);

	struct mad_sa_hdr sa;
	mad_sa_hdr_init(&sa, MAD_METHOD_GET, MAD_ATTR_PATH_RECORD, 0x30);
	sa.hdr.tid = 0x1234000000000077ull;
	uint8_t req[MAD_SIZE] = {0};
	mad_sa_hdr_encode(&sa, req, sizeof(req), NULL);
	struct mad_addr from = {.lid = 9, .qpn = 1};
	fake_deliver(ft, &from, req, sizeof(req), 0);

	/* junk: too short, bad base version, an unhandled class, an unmatched answer */
	fake_deliver(ft, &from, req, 10, 0);
	uint8_t bad[MAD_SIZE];
	memcpy(bad, req, MAD_SIZE);
	bad[0] = 7;
	fake_deliver(ft, &from, bad, MAD_SIZE, 0);
	memcpy(bad, req, MAD_SIZE);
	bad[1] = 0x04;
	fake_deliver(ft, &from, bad, MAD_SIZE, 0);
	memcpy(bad, req, MAD_SIZE);
	bad[3] = MAD_METHOD_GET_RESP;
	fake_deliver(ft, &from, bad, MAD_SIZE, 0);
	for (int i = 0; i < 5; i++)
		ev_run(loop, EVRUN_NOWAIT);

	ck_assert_uint_eq(h.calls, 1);
	ck_assert_uint_eq(h.from.lid, 9);
	/* the answer went out with the request's TID, untouched, and its status */
	ck_assert_uint_eq(mad_get_field64(sent, 0, IB_MAD_TRID_F), 0x1234000000000077ull);
	ck_assert_uint_eq(mad_get_field(sent, 0, IB_MAD_STATUS_F), MAD_STATUS_SA_NO_RECORDS);
	/* a response waits for nothing: no timeout for the kernel */
	ck_assert_uint_eq(ft->last_timeout_ms, 0);
	const struct mad_counters *c = mad_dispatcher_counters(d);
	ck_assert_uint_eq(c->malformed, 2);
	ck_assert_uint_eq(c->unhandled, 1);
	ck_assert_uint_eq(c->unmatched, 1);
	mad_dispatcher_free(d);
	mad_transport_close(&ft->base);
	ev_loop_destroy(loop);
}
END_TEST

START_TEST(free_cancels_everything_once)
{
	struct fabric fb;
	fabric_init(&fb, NULL);
	fb.hold = true;
	for (unsigned i = 0; i < 100; i++)
		submit(&fb, i, 0, 1000, 3);
	ev_run(fb.loop, EVRUN_NOWAIT);
	mad_dispatcher_free(fb.d);
	fb.d = NULL;
	ck_assert_uint_eq(fb.done, 100);
	for (unsigned i = 0; i < 100; i++)
		ck_assert_int_eq(fb.results[i], -ECANCELED);
	mad_transport_close(&fb.ft->base);
	ev_loop_destroy(fb.loop);
	free(fb.held);
}
END_TEST

/* 40 subscribers that never acknowledge, 30 Reports each, and then 500 SMPs: the SMPs get
 * the whole main window at once and finish in a few loop turns. In one lane the Reports
 * held the window 4 attempts x 200 ms at a time (1,200 of them, 64 at a time: 15 s before
 * the SMPs' turn), and their silence lowered the answer rate the SMPs' retries adapt to. */
START_TEST(reports_have_a_lane_of_their_own)
{
	struct fabric fb;
	struct mad_dispatcher_opts o = {.window = 64, .window_per_dest = 4};
	fabric_init(&fb, &o);
	fb.silent_lid = 1000;
	for (unsigned i = 0; i < 1200; i++)
		ck_assert_int_eq(submit_report(&fb, i, (uint16_t)(1000 + i % 40), 0, -1), 0);
	ev_run(fb.loop, EVRUN_NOWAIT);
	const struct mad_counters *c = mad_dispatcher_counters(fb.d);
	ck_assert_uint_eq(c->report_inflight, 16); /* report_window */
	ck_assert_uint_eq(c->report_queued, 1200 - 16);
	ck_assert_uint_eq(c->inflight, 0);
	ck_assert_uint_eq(c->queued, 0);
	ck_assert_uint_eq(fb.ft->sends, 16);
	ev_tstamp start = ev_time();
	for (unsigned i = 2000; i < 2500; i++)
		submit(&fb, i, 1 + i % 5, 0, -1);
	while (fb.done < 500) {
		ev_run(fb.loop, EVRUN_ONCE);
		ck_assert_uint_le(c->report_inflight, 16);
	}
	ck_assert_double_lt(ev_time() - start, 0.15); /* a Report's first timeout is 0.2 s */
	for (unsigned i = 2000; i < 2500; i++)
		ck_assert_int_eq(fb.results[i], 0);
	/* one Report in flight per subscriber, each tried 4 times (retries fixed at 3): 16
	 * subscribers' first Reports time out at 0.8 s; the answer rate stays the SMPs' */
	run_for(&fb, 1.0);
	ck_assert_uint_ge(c->timed_out, 16);
	for (unsigned i = 0; i < 1200; i++)
		ck_assert_uint_le(fb.attempts[i], 4);
	ck_assert_double_eq(mad_dispatcher_answer_rate(fb.d), 1.0);
	ck_assert_uint_eq(c->retried_lossy, 0);
	ck_assert(!mad_dispatcher_idle(fb.d));
	fabric_free(&fb);
}
END_TEST

/* A subscriber's backlog: a newer Report pushes out its oldest waiting one (ended with
 * -ENOBUFS); the lane's whole backlog full, a new Report is refused. */
START_TEST(report_backlog_drops_the_oldest)
{
	struct fabric fb;
	struct mad_dispatcher_opts o = {.report_backlog_per_dest = 8, .report_backlog = 20};
	fabric_init(&fb, &o);
	fb.silent_lid = 1000;
	for (unsigned i = 0; i < 10; i++) /* 0 in flight, 1..9 wait: 1 pushed out */
		ck_assert_int_eq(submit_report(&fb, i, 1000, 1000, 0), 0);
	const struct mad_counters *c = mad_dispatcher_counters(fb.d);
	ck_assert_uint_eq(c->report_inflight, 1);
	ck_assert_uint_eq(c->report_queued, 8);
	ck_assert_uint_eq(c->report_dropped, 1);
	ck_assert_int_eq(fb.results[1], -ENOBUFS);
	for (unsigned i = 0; i < 10; i++)
		if (i != 1)
			ck_assert_int_eq(fb.results[i], 1);
	for (unsigned i = 10; i < 22; i++) /* 10 in flight, 11..13 pushed out */
		ck_assert_int_eq(submit_report(&fb, i, 1001, 1000, 0), 0);
	for (unsigned i = 11; i < 14; i++)
		ck_assert_int_eq(fb.results[i], -ENOBUFS);
	ck_assert_uint_eq(c->report_queued, 16);
	for (unsigned i = 22; i < 27; i++) /* 22 in flight, 23..26 wait: 20 in all */
		ck_assert_int_eq(submit_report(&fb, i, 1002, 1000, 0), 0);
	ck_assert_uint_eq(c->report_queued, 20);
	ck_assert_int_eq(submit_report(&fb, 27, 1003, 1000, 0), -ENOBUFS);
	ck_assert_uint_eq(c->report_dropped, 5);
	ck_assert_uint_eq(c->report_inflight, 3);
	ck_assert_uint_eq(fb.ft->sends, 3);
	fabric_free(&fb);
}
END_TEST

/* Subscribers take turns: one that answers is served while two silent ones hold long
 * backlogs and the whole lane window (2). In one queue it came after all 200. */
START_TEST(reports_take_turns_per_subscriber)
{
	struct fabric fb;
	struct mad_dispatcher_opts o = {.report_window = 2};
	fabric_init(&fb, &o);
	fb.silent_lid = 1000;
	for (unsigned i = 0; i < 200; i++)
		ck_assert_int_eq(submit_report(&fb, i, (uint16_t)(1000 + i % 2), 20, 0), 0);
	ev_tstamp start = ev_time();
	ck_assert_int_eq(submit_report(&fb, 500, 20, 20, 0), 0);
	while (fb.results[500] == 1) {
		ev_run(fb.loop, EVRUN_ONCE);
		ck_assert_double_lt(ev_time() - start, 1.0);
	}
	ck_assert_int_eq(fb.results[500], 0);
	ck_assert_uint_le(fb.done, 4);
	fabric_free(&fb);
}
END_TEST

START_TEST(bad_requests_refused)
{
	struct fabric fb;
	fabric_init(&fb, NULL);
	uint8_t big[300] = {0};
	struct mad_request rq = {.mad = big, .len = sizeof(big), .cb = on_done};
	ck_assert_int_eq(mad_dispatcher_send(fb.d, &rq), -EMSGSIZE);
	rq.len = 10;
	ck_assert_int_eq(mad_dispatcher_send(fb.d, &rq), -EINVAL);
	rq.mad = NULL;
	ck_assert_int_eq(mad_dispatcher_send(fb.d, &rq), -EINVAL);
	fabric_free(&fb);
}
END_TEST

static Suite *dispatcher_suite(void)
{
	Suite *s = suite_create("dispatcher");
	TCase *tc = tcase_create("transactions");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, ten_thousand_through_window_of_64);
	tcase_add_test(tc, per_destination_window);
	tcase_add_test(tc, max_txns_bounds_what_is_held);
	tcase_add_test(tc, lost_answers_are_retried);
	tcase_add_test(tc, unanswered_fail_after_retries);
	tcase_add_test(tc, lossy_fabric_adapts_retries_and_timeouts);
	tcase_add_test(tc, duplicate_answers_ignored);
	tcase_add_test(tc, late_answer_does_not_complete_a_newer_request);
	tcase_add_test(tc, busy_is_retried);
	tcase_add_test(tc, undelivered_is_retried_at_once);
	tcase_add_test(tc, kernel_timeouts_drive_retries);
	tcase_add_test(tc, answers_match_class_attribute_and_source);
	tcase_add_test(tc, requests_reach_their_handler_and_junk_is_counted);
	tcase_add_test(tc, free_cancels_everything_once);
	tcase_add_test(tc, bad_requests_refused);
	tcase_add_test(tc, reports_have_a_lane_of_their_own);
	tcase_add_test(tc, report_backlog_drops_the_oldest);
	tcase_add_test(tc, reports_take_turns_per_subscriber);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dispatcher_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
