/* The SM's phases (discovery, LIDs, routing, tables, arm, activate) in one process: the SM on
 * the fake transport, its SMPs carried through fabricsim's model (directed and LID routes,
 * the SMA) and answered back, no simulator process, no sockets but the fake's. Each case
 * ends with fabricsim's verifier judging what the SM programmed, from outside the SM. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "agents.h"
#include "fake_transport.h"
#include "mad/dispatcher.h"
#include "mad/mad_header.h"
#include "mad/smp_attrs.h"
#include "sm/sm.h"
#include "topology.h"
#include "verify.h"
#include "check_run.h"

/* Sets of attribute lose_attr sent while lose_collect is on: the SMA takes them but its
 * answer is lost, on every attempt or on the first only (the retry then arrives after what
 * was sent later); or they are lost on the way, every attempt (SET_LOST) */
enum set_answers { SET_ANSWERED, SET_ANSWER_LOST, SET_FIRST_ANSWER_LOST, SET_LOST };

struct harness {
	struct ev_loop *loop;
	struct fabric f;
	uint32_t sm_port; /* fabricsim's port index of the SM's HCA port */
	struct fake_transport *ft;
	struct ibsmd_config cfg;
	struct log log;
	struct sm *sm;
	unsigned drop_percent; /* SMPs lost on the way out */
	unsigned seed;
	uint64_t smps, lost;
	/* the SM's last answer to an unsolicited SMP (SMInfo) */
	uint8_t resp[MAD_SIZE];
	unsigned nresp;
	uint16_t lose_attr;
	enum set_answers lose;
	bool lose_collect;
	uint64_t lost_tids[256];
	unsigned nlost_tids;
	uint64_t mft_sets; /* MFT Sets the SM sent, attempts included */
	uint64_t node_info_gets, node_desc_gets;
	uint64_t lft_gets;
};

/* A Set whose answer the harness loses (see lose_attr). */
static bool set_answer_lost(struct harness *h, const uint8_t *m)
{
	uint16_t attr = (uint16_t)(m[16] << 8 | m[17]);
	if (m[3] != MAD_METHOD_SET || attr != h->lose_attr || h->lose == SET_ANSWERED)
		return false;
	uint64_t tid = 0;
	for (int i = 8; i < 16; i++)
		tid = tid << 8 | m[i];
	for (unsigned i = 0; i < h->nlost_tids; i++)
		if (h->lost_tids[i] == tid)
			return h->lose != SET_FIRST_ANSWER_LOST; /* a retry */
	if (!h->lose_collect || h->nlost_tids == sizeof(h->lost_tids) / sizeof(uint64_t))
		return false;
	h->lost_tids[h->nlost_tids++] = tid;
	return true;
}

/* A MAD the SM sent: carried to its SMA and the answer back, or lost as a link loses it. */
static void on_send(struct fake_transport *ft, const struct mad_addr *to, const uint8_t *mad,
                    size_t len, void *ctx)
{
	(void)ft;
	struct harness *h = ctx;
	if (len != MAD_SIZE)
		return;
	uint8_t m[MAD_SIZE];
	memcpy(m, mad, len);
	uint8_t cls = m[1];
	if (m[3] & 0x80) {
		memcpy(h->resp, m, MAD_SIZE); /* an answer the SM gave (SMInfo) */
		h->nresp++;
		return;
	}
	if (cls != MAD_CLASS_SUBN_DR && cls != MAD_CLASS_SUBN_LID)
		return; /* no SA clients here: GMPs go nowhere */
	h->smps++;
	if (h->drop_percent && (unsigned)rand_r(&h->seed) % 100 < h->drop_percent) {
		h->lost++;
		return;
	}
	if (m[3] == MAD_METHOD_SET && (m[16] << 8 | m[17]) == MAD_ATTR_MFT)
		h->mft_sets++;
	if (m[3] == MAD_METHOD_GET && (m[16] << 8 | m[17]) == MAD_ATTR_NODE_INFO)
		h->node_info_gets++;
	if (m[3] == MAD_METHOD_GET && (m[16] << 8 | m[17]) == MAD_ATTR_NODE_DESC)
		h->node_desc_gets++;
	if (m[3] == MAD_METHOD_GET && (m[16] << 8 | m[17]) == MAD_ATTR_LFT)
		h->lft_gets++;
	bool lost = set_answer_lost(h, m);
	if (lost && h->lose == SET_LOST)
		return; /* the SMA never sees it */
	struct mad_addr a = {.qpn = 0};
	if (sma_exchange(&h->f, h->sm_port, to->lid, m, &a.lid) && !lost)
		fake_deliver(h->ft, &a, m, MAD_SIZE, 0);
}

static void harness_init(struct harness *h, const char *spec)
{
	memset(h, 0, sizeof(*h));
	h->seed = 42;
	h->loop = ev_loop_new(EVFLAG_AUTO);
	fabric_init(&h->f);
	struct fs_error err;
	ck_assert_msg(generate(&h->f, spec, &err) == 0, "%s", err.msg);
	h->sm_port = fabric_port(&h->f, fabric_find_node(&h->f, "host-1"), 1);
	ck_assert_uint_ne(h->sm_port, FS_NONE);
	h->ft = fake_transport_new();
	h->ft->on_send = on_send;
	h->ft->ctx = h;
	config_defaults(&h->cfg);
	h->cfg.mad_timeout_ms = 20;
	h->cfg.mad_retries = 3;
	h->cfg.sweep_interval_s = 0;
	snprintf(h->cfg.state_dir, sizeof(h->cfg.state_dir), "/tmp/test_sm_phases.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(h->cfg.state_dir));
	snprintf(h->cfg.routing_engines, sizeof(h->cfg.routing_engines), "updn,minhop");
	log_init(&h->log);
	h->log.level = LOGL_ERR;
	h->sm = sm_new(&h->cfg, &h->log, h->loop, &h->ft->base, false);
	ck_assert_ptr_nonnull(h->sm);
}

static void harness_free(struct harness *h)
{
	sm_free(h->sm);
	char cmd[320];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", h->cfg.state_dir);
	ck_assert_int_eq(system(cmd), 0);
	mad_transport_close(&h->ft->base);
	config_free(&h->cfg);
	fabric_free(&h->f);
	ev_loop_destroy(h->loop);
}

/* Run the loop until `sweeps` sweeps have ended with the subnet up, or `secs` pass. */
struct waiter {
	ev_timer w;
	struct harness *h;
	uint64_t sweeps;
};

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)revents;
	struct waiter *wt = (struct waiter *)w;
	struct sm_status st = sm_status(wt->h->sm);
	if (st.up && st.sweeps >= wt->sweeps && !st.sweeping)
		ev_break(loop, EVBREAK_ALL);
}

static bool run_until_up(struct harness *h, uint64_t sweeps, double secs)
{
	struct waiter wt = {.h = h, .sweeps = sweeps};
	ev_timer_init(&wt.w, tick_cb, 0.01, 0.01);
	ev_timer_start(h->loop, &wt.w);
	ev_tstamp end = ev_time() + secs;
	struct sm_status st;
	do {
		ev_run(h->loop, EVRUN_ONCE);
		st = sm_status(h->sm);
	} while (!(st.up && st.sweeps >= sweeps && !st.sweeping) && ev_time() < end);
	ev_timer_stop(h->loop, &wt.w);
	return st.up && st.sweeps >= sweeps && !st.sweeping;
}

/* A harness whose SM has brought the fabric up. */
static void harness_up(struct harness *h, const char *spec)
{
	harness_init(h, spec);
	ck_assert_int_eq(sm_start(h->sm), 0);
	ck_assert(run_until_up(h, 1, 30));
}

/* fabricsim's verifier on what the SM programmed: every linked port ACTIVE, every endpoint
 * reaches every LID, no credit loop, every LID unique. */
static void verify_clean(struct harness *h)
{
	struct verify_opts o = {.max_issues = 5};
	struct verify_report r;
	verify_run(&h->f, &o, &r);
	char first[512] = "";
	if (r.nissues)
		snprintf(first, sizeof(first), "%s", r.issues[0]);
	ck_assert_msg(r.ok, "verify: %u/%u ports active, %llu pairs unreached, credit loop %d: %s",
	              r.ports_active, r.ports_linked, (unsigned long long)r.pairs_unreached,
	              r.credit_loop, first);
	ck_assert_uint_eq(r.ports_active, r.ports_linked);
	ck_assert_uint_eq(r.lids_zero + r.lids_duplicate, 0);
	ck_assert_uint_gt(r.pairs_reached, 0);
	verify_report_free(&r);
}

START_TEST(bring_up)
{
	struct harness h;
	harness_up(&h, "fattree:radix=8,levels=2");
	struct sm_status st = sm_status(h.sm);
	ck_assert_str_eq(st.engine, "updn");
	/* 8-port two-level tree: 4 spines, 8 leaves, 32 hosts */
	ck_assert_uint_eq(st.counts.switches, 12);
	ck_assert_uint_eq(st.counts.cas, 32);
	ck_assert_uint_gt(st.counts.lft_blocks_sent, 0);
	verify_clean(&h);
	/* the model agrees: every endpoint has a LID and the model is stable */
	const struct topo *t = sm_fabric(h.sm);
	ck_assert(t->stable);
	for (uint32_t p = 0; p < t->nports; p++)
		if (topo_port_endpoint(t, p))
			ck_assert_uint_ne(t->ports[p].lid, 0);
	/* a second sweep over an unchanged fabric sends no table */
	sm_request_sweep(h.sm, NULL, 0);
	ck_assert(run_until_up(&h, st.sweeps + 1, 30));
	st = sm_status(h.sm);
	ck_assert_uint_eq(st.counts.lft_blocks_sent, 0);
	ck_assert_uint_eq(st.counts.port_sets, 0);

	/* a restart keeps every LID: a new SM on the same state directory, the fabric as the
	 * old one left it */
	uint16_t lids[64] = {0};
	uint32_t nh = 0;
	for (uint32_t n = 0; n < h.f.nnodes && nh < 64; n++)
		if (!fs_is_switch(&h.f, n))
			lids[nh++] = h.f.ports[fabric_port(&h.f, n, 1)].pi.lid;
	sm_free(h.sm);
	h.sm = sm_new(&h.cfg, &h.log, h.loop, &h.ft->base, false);
	ck_assert_int_eq(sm_start(h.sm), 0);
	ck_assert(run_until_up(&h, 1, 30));
	nh = 0;
	for (uint32_t n = 0; n < h.f.nnodes && nh < 64; n++)
		if (!fs_is_switch(&h.f, n))
			ck_assert_uint_eq(h.f.ports[fabric_port(&h.f, n, 1)].pi.lid, lids[nh++]);
	verify_clean(&h);
	harness_free(&h);
}
END_TEST

/* A new SM on a fabric another programmed (a restart, a takeover) reads the switches' LFT
 * blocks before routing, as room comes in its queue (mad_queue_max), as it writes them: not
 * all queued at once, which at 20,736 hosts left 830,000 reads to go cold in the queue and
 * read at half the simulator's rate. It writes no block, since they are right. */
START_TEST(restart_reads_as_room_comes)
{
	struct harness h;
	harness_up(&h, "fattree:radix=16,levels=2");
	sm_free(h.sm);
	h.cfg.mad_queue_max = 16;
	h.sm = sm_new(&h.cfg, &h.log, h.loop, &h.ft->base, false);
	h.lft_gets = 0;
	ck_assert_int_eq(sm_start(h.sm), 0);
	ck_assert(run_until_up(&h, 1, 30));
	struct sm_status st = sm_status(h.sm);
	ck_assert_uint_gt(st.counts.lft_blocks_read, 48); /* 24 switches, 3 blocks each */
	ck_assert_uint_eq(h.lft_gets, st.counts.lft_blocks_read);
	ck_assert_uint_eq(st.counts.lft_blocks_sent, 0);
	/* the P_Key reads go at once (a block per port) and wait in the SM's queue; the LFT
	 * blocks wait for room instead */
	ck_assert_msg(st.counts.queued_peak <= st.counts.pkey_reads,
	              "%u SMPs queued at once, %u P_Key and %u LFT reads", st.counts.queued_peak,
	              st.counts.pkey_reads, st.counts.lft_blocks_read);
	verify_clean(&h);
	harness_free(&h);
}
END_TEST

/* A chain whose every engine fails ends with minhop, unless told not to: the subnet comes
 * up routed by minhop; with routing_fallback_minhop off it does not come up. (An engine
 * the chain names but ibsmd lacks fails the way a failing engine does.) */
START_TEST(minhop_last_resort)
{
	struct harness h;
	harness_init(&h, "fattree:radix=4,levels=2");
	snprintf(h.cfg.routing_engines, sizeof(h.cfg.routing_engines), "nosuch");
	ck_assert_int_eq(sm_start(h.sm), 0);
	ck_assert(run_until_up(&h, 1, 30));
	ck_assert_str_eq(sm_status(h.sm).engine, "minhop");
	verify_clean(&h);
	sm_stop(h.sm);
	harness_free(&h);

	harness_init(&h, "fattree:radix=4,levels=2");
	snprintf(h.cfg.routing_engines, sizeof(h.cfg.routing_engines), "nosuch");
	h.cfg.routing_fallback_minhop = false;
	ck_assert_int_eq(sm_start(h.sm), 0);
	ck_assert(!run_until_up(&h, 1, 2));
	sm_stop(h.sm);
	harness_free(&h);
}
END_TEST

/* The MAD layer out of room (its transactions all held, as when memory runs out): the SMPs
 * the SM cannot hand on wait in its queue and go as answers free room, none is dropped. The
 * queue above the dispatcher (mad_queue_max 64) is deeper than the dispatcher takes (8), so
 * both the direct sends and the queue's drain meet a refusal. Before, a refused SMP was
 * freed: its table never set, its owner never told (a port's P_Key Sets under way stuck). */
START_TEST(dispatcher_out_of_room)
{
	struct harness h;
	harness_init(&h, "fattree:radix=8,levels=2");
	h.cfg.mad_queue_max = 64;
	mad_dispatcher_set_max_txns(sm_dispatcher(h.sm), 8);
	ck_assert_int_eq(sm_start(h.sm), 0);
	ck_assert(run_until_up(&h, 1, 60));
	verify_clean(&h);
	/* nothing was left unset: a second sweep finds every table as it wants it */
	struct sm_status st = sm_status(h.sm);
	sm_request_sweep(h.sm, NULL, 0);
	ck_assert(run_until_up(&h, st.sweeps + 1, 60));
	st = sm_status(h.sm);
	ck_assert_uint_eq(st.counts.lft_blocks_sent, 0);
	ck_assert_uint_eq(st.counts.port_sets, 0);
	harness_free(&h);
}
END_TEST

START_TEST(lost_smps)
{
	/* one SMP in ten lost: retries and later rounds still bring everything up */
	struct harness h;
	harness_init(&h, "fattree:radix=8,levels=2");
	h.drop_percent = 10;
	ck_assert_int_eq(sm_start(h.sm), 0);
	ck_assert(run_until_up(&h, 1, 60));
	ck_assert_uint_gt(h.lost, 0);
	h.drop_percent = 0;
	verify_clean(&h);
	harness_free(&h);
}
END_TEST

START_TEST(link_down_rerouted)
{
	struct harness h;
	harness_up(&h, "fattree:radix=8,levels=2");
	/* a leaf loses an uplink: the next sweep routes around it */
	uint32_t leaf = fabric_find_node(&h.f, "leaf-1");
	uint32_t up = FS_NONE;
	for (unsigned p = 1; p <= h.f.nodes[leaf].nports && up == FS_NONE; p++) {
		uint32_t pi = fabric_port(&h.f, leaf, p), peer = h.f.ports[pi].peer;
		if (peer != FS_NONE && fs_is_switch(&h.f, h.f.ports[peer].node))
			up = pi;
	}
	ck_assert_uint_ne(up, FS_NONE);
	fabric_set_link(&h.f, up, false);
	uint64_t before = sm_status(h.sm).sweeps;
	sm_request_sweep(h.sm, NULL, 0);
	ck_assert(run_until_up(&h, before + 1, 30));
	verify_clean(&h);
	ck_assert_uint_gt(sm_status(h.sm).counts.lft_blocks_sent, 0);
	/* a host's cable goes: its port leaves the model, the rest stays clean */
	uint32_t host = fabric_port(&h.f, fabric_find_node(&h.f, "host-32"), 1);
	fabric_set_link(&h.f, host, false);
	before = sm_status(h.sm).sweeps;
	sm_request_sweep(h.sm, NULL, 0);
	ck_assert(run_until_up(&h, before + 1, 30));
	verify_clean(&h);
	const struct topo *t = sm_fabric(h.sm);
	uint32_t n = u64map_get(&t->by_guid, h.f.nodes[h.f.ports[host].node].guid);
	ck_assert(n == U64MAP_NONE || !t->nodes[n].present);
	harness_free(&h);
}
END_TEST

/* Run the loop for secs. */
static void run_for(struct harness *h, double secs)
{
	ev_tstamp end = ev_time() + secs;
	while (ev_time() < end)
		ev_run(h->loop, EVRUN_ONCE);
}

/* MLIDs whose trees fabricsim's switches hold (a member leaves no bit behind). */
static unsigned mlids_held(struct harness *h)
{
	struct verify_opts o = {.max_issues = 1};
	struct verify_report r;
	verify_run(&h->f, &o, &r);
	unsigned n = r.mlids;
	verify_report_free(&r);
	return n;
}

/* Two hosts on different leaves, as ports of the SM's model. */
static void two_members(struct harness *h, uint32_t ports[2])
{
	const struct topo *t = sm_fabric(h->sm);
	const char *hosts[2] = {"host-1", "host-32"};
	for (int i = 0; i < 2; i++) {
		uint64_t guid = h->f.nodes[fabric_find_node(&h->f, hosts[i])].guid;
		uint32_t n = u64map_get(&t->by_guid, guid);
		ck_assert_uint_ne(n, U64MAP_NONE);
		ports[i] = topo_port(t, n, 1);
	}
}

/* The group of two_members' hosts is delivered to both, and nowhere else (fabricsim verify). */
static void group_whole(struct harness *h)
{
	struct verify_opts o = {.max_issues = 1};
	struct verify_report r;
	verify_run(&h->f, &o, &r);
	ck_assert_uint_eq(r.mlid_members, 2);
	ck_assert_uint_eq(r.mlids_bad, 0);
	verify_report_free(&r);
}

/* Two hosts join MLID 0xc001; the MFT Sets of the join go out and are lost as `how`. */
static void join_losing(struct harness *h, uint32_t ports[2], enum set_answers how)
{
	two_members(h, ports);
	h->lose_attr = MAD_ATTR_MFT;
	h->lose = how;
	h->lose_collect = true;
	ck_assert_int_eq(sm_mcast_set(h->sm, SM_MLID_BASE + 1, ports, 2), 0);
	for (int i = 0; i < 5; i++)
		ev_run(h->loop, EVRUN_NOWAIT);
	h->lose_collect = false;
	ck_assert_uint_gt(h->nlost_tids, 0);
}

/* A group of two hosts on different leaves joins MLID 0xc001 while MFT answers get lost as
 * `how`, then leaves; once the SM's Sets have settled, no switch may keep its bits. */
static void mcast_join_leave(enum set_answers how)
{
	struct harness h;
	harness_up(&h, "fattree:radix=8,levels=2");
	ck_assert_uint_eq(mlids_held(&h), 0);
	uint32_t ports[2];
	join_losing(&h, ports, how);
	ck_assert_uint_eq(mlids_held(&h), 1);
	/* the members leave while the join's Sets are unanswered; the leave's are answered */
	ck_assert_int_eq(sm_mcast_set(h.sm, SM_MLID_BASE + 1, NULL, 0), 0);
	run_for(&h, 2); /* retries, failures, and what the SM sends after them */
	ck_assert_uint_eq(mlids_held(&h), 0);
	bool quiet = false; /* it settles: a second with nothing sent (a retry may be due) */
	for (int i = 0; i < 4 && !quiet; i++) {
		uint64_t sets = h.mft_sets;
		run_for(&h, 1.1);
		quiet = h.mft_sets == sets;
	}
	ck_assert(quiet);
	/* and nothing is left held up: the next join goes at once */
	ck_assert_int_eq(sm_mcast_set(h.sm, SM_MLID_BASE + 1, ports, 2), 0);
	run_for(&h, 0.2);
	ck_assert_uint_eq(mlids_held(&h), 1);
	harness_free(&h);
}

START_TEST(mcast_lost_join_sent_again)
{
	/* a join's Sets lost on the way, every attempt: they go again without a sweep */
	struct harness h;
	harness_up(&h, "fattree:radix=8,levels=2");
	uint32_t ports[2];
	join_losing(&h, ports, SET_LOST);
	ck_assert_uint_eq(mlids_held(&h), 0);
	run_for(&h, 3);
	ck_assert_uint_eq(mlids_held(&h), 1);
	group_whole(&h);
	harness_free(&h);
}
END_TEST

START_TEST(mcast_switch_reset_light_sweep)
{
	/* a leaf of the group resets (power cycle: empty tables); a light sweep finds it and
	 * the sweep it starts writes its MFT again */
	struct harness h;
	harness_up(&h, "fattree:radix=8,levels=2");
	uint32_t ports[2];
	two_members(&h, ports);
	ck_assert_int_eq(sm_mcast_set(h.sm, SM_MLID_BASE + 1, ports, 2), 0);
	run_for(&h, 0.2);
	group_whole(&h);
	struct verify_opts o = {.max_issues = 1};
	struct verify_report r;
	uint32_t leaf =
	    h.f.ports[h.f.ports[fabric_port(&h.f, fabric_find_node(&h.f, "host-1"), 1)].peer].node;
	fabric_remove_node(&h.f, leaf);
	fabric_restore_node(&h.f, leaf);
	verify_run(&h.f, &o, &r);
	ck_assert_uint_lt(r.mlid_members, 2);
	verify_report_free(&r);
	uint64_t before = sm_status(h.sm).sweeps;
	sm_request_light_sweep(h.sm);
	ck_assert(run_until_up(&h, before + 1, 30));
	run_for(&h, 0.3);
	group_whole(&h);
	verify_clean(&h);
	harness_free(&h);
}
END_TEST

START_TEST(mcast_refused_not_hammered)
{
	/* a switch that refuses MFT Sets: tried again, less and less often, not in a loop
	 * (21 ports: two positions, each block two Sets a round) */
	struct harness h;
	harness_up(&h, "fattree:radix=20,levels=2");
	uint32_t ports[2];
	two_members(&h, ports);
	h.f.nodes[fabric_find_node(&h.f, "leaf-1")].refuse_attr = MAD_ATTR_MFT;
	ck_assert_int_eq(sm_mcast_set(h.sm, SM_MLID_BASE + 1, ports, 2), 0);
	run_for(&h, 4.5);
	uint32_t refused = h.f.nodes[fabric_find_node(&h.f, "leaf-1")].refused;
	ck_assert_uint_ge(refused, 4); /* again after a second */
	ck_assert_uint_le(refused, 6); /* at 0, 1, 3 s (then 7) */
	harness_free(&h);
}
END_TEST

START_TEST(mcast_waiting_switch_returns)
{
	/* a switch whose MFT Sets failed (its next try waits) goes away while it waits, and
	 * comes back reset: its MFT is written again (it used to wait forever: the retry timer
	 * stopped while it was away, and its wait outlived the reset; seen after the soak) */
	struct harness h;
	harness_up(&h, "fattree:radix=20,levels=2");
	uint32_t ports[2];
	two_members(&h, ports);
	uint32_t leaf = fabric_find_node(&h.f, "leaf-1");
	h.f.nodes[leaf].refuse_attr = MAD_ATTR_MFT;
	ck_assert_int_eq(sm_mcast_set(h.sm, SM_MLID_BASE + 1, ports, 2), 0);
	run_for(&h, 3.5); /* refused at 0, 1 and 3 s: the next try in 4 */
	h.f.nodes[leaf].refuse_attr = 0;
	fabric_remove_node(&h.f, leaf);
	uint64_t before = sm_status(h.sm).sweeps;
	sm_request_light_sweep(h.sm);
	ck_assert(run_until_up(&h, before + 1, 30));
	run_for(&h, 1.5); /* the retry timer's ticks while it is away */
	fabric_restore_node(&h.f, leaf);
	before = sm_status(h.sm).sweeps;
	sm_request_light_sweep(h.sm);
	ck_assert(run_until_up(&h, before + 1, 30));
	run_for(&h, 0.5);
	group_whole(&h);
	harness_free(&h);
}
END_TEST

START_TEST(mcast_retry_after_leave)
{
	/* a join's Set answered only on its retry, which the switch takes after the leave's */
	mcast_join_leave(SET_FIRST_ANSWER_LOST);
}
END_TEST

START_TEST(mcast_unanswered_then_leave)
{
	/* a join's Set the switch took but never answered: the SM cannot know the block */
	mcast_join_leave(SET_ANSWER_LOST);
}
END_TEST

/* An alias GUID of host-5's port is written, answers lost as `how`, and deleted before the
 * Set is answered: once the SM's Sets have settled, the port must not answer to it. */
static void alias_add_delete(enum set_answers how)
{
	struct harness h;
	harness_up(&h, "fattree:radix=8,levels=2");
	uint32_t fp = fabric_port(&h.f, fabric_find_node(&h.f, "host-5"), 1);
	struct topo *t = sm_fabric(h.sm);
	uint32_t tp = u64map_get(&t->by_port_guid, h.f.ports[fp].guid);
	ck_assert_uint_ne(tp, TOPO_NONE);
	uint64_t alias = 0x0002c9fffe00a1a5ull;
	ck_assert_int_eq(topo_alias_add(t, tp, 1, alias), 0);
	h.lose_attr = MAD_ATTR_GUID_INFO;
	h.lose = how;
	h.lose_collect = true;
	sm_aliases_changed(h.sm, tp, 0);
	h.lose_collect = false;
	ck_assert_uint_eq(h.nlost_tids, 1);
	ck_assert_ptr_nonnull(h.f.ports[fp].guids);
	ck_assert_uint_eq(h.f.ports[fp].guids[1], alias);
	topo_alias_del(t, alias);
	sm_aliases_changed(h.sm, tp, 0);
	run_for(&h, 1.5);
	ck_assert_uint_eq(h.f.ports[fp].guids[1], 0);
	harness_free(&h);
}

START_TEST(alias_lost_delete_written_by_sweep)
{
	/* an alias deleted whose Sets are all lost on the way: the port's block holds no alias
	 * of the model's any more, yet the next sweep writes it */
	struct harness h;
	harness_up(&h, "fattree:radix=8,levels=2");
	uint32_t fp = fabric_port(&h.f, fabric_find_node(&h.f, "host-5"), 1);
	struct topo *t = sm_fabric(h.sm);
	uint32_t tp = u64map_get(&t->by_port_guid, h.f.ports[fp].guid);
	uint64_t alias = 0x0002c9fffe00a1a5ull;
	ck_assert_int_eq(topo_alias_add(t, tp, 1, alias), 0);
	sm_aliases_changed(h.sm, tp, 0);
	run_for(&h, 0.1);
	ck_assert_uint_eq(h.f.ports[fp].guids[1], alias);
	h.lose_attr = MAD_ATTR_GUID_INFO;
	h.lose = SET_LOST;
	h.lose_collect = true;
	topo_alias_del(t, alias);
	sm_aliases_changed(h.sm, tp, 0);
	h.lose_collect = false;
	run_for(&h, 1.5); /* every attempt lost */
	ck_assert_uint_eq(h.f.ports[fp].guids[1], alias);
	uint64_t before = sm_status(h.sm).sweeps;
	sm_request_sweep(h.sm, NULL, 0);
	ck_assert(run_until_up(&h, before + 1, 30));
	run_for(&h, 0.2);
	ck_assert_uint_eq(h.f.ports[fp].guids[1], 0);
	harness_free(&h);
}
END_TEST

START_TEST(alias_retry_after_delete)
{
	alias_add_delete(SET_FIRST_ANSWER_LOST);
}
END_TEST

START_TEST(alias_unanswered_then_delete)
{
	alias_add_delete(SET_ANSWER_LOST);
}
END_TEST

/* Virtual ports (IBA Annex A18) on hosts with SR-IOV: the SM enables virtualization, gives
 * the VFs that ask for one a LID routed to their port, brings every vport (PFs included) to
 * ACTIVE; a VF that appears later is followed on its trap 1146 by an incremental sweep that
 * reads no node again; one that goes leaves the model and gives its LID back. */
static uint32_t host_port(struct harness *h, const char *name)
{
	return fabric_port(&h->f, fabric_find_node(&h->f, name), 1);
}

static void vports_verified(struct harness *h, unsigned vports, unsigned lids)
{
	struct verify_opts o = {.max_issues = 5};
	struct verify_report r;
	verify_run(&h->f, &o, &r);
	ck_assert_msg(r.ok, "verify: %s", r.nissues ? r.issues[0] : "");
	ck_assert_uint_eq(r.vports, vports);
	ck_assert_uint_eq(r.vports_active, vports);
	ck_assert_uint_eq(r.vport_lids, lids);
	ck_assert_uint_eq(r.vport_lids_unreached, 0);
	verify_report_free(&r);
}

START_TEST(vports_managed)
{
	struct harness h;
	char why[128];
	harness_init(&h, "fattree:radix=4,levels=2,vports=8"); /* 8 hosts */
	ck_assert_int_eq(fabric_vport_add(&h.f, host_port(&h, "host-2"), 1, 0, true, why, 128), 0);
	ck_assert_int_eq(fabric_vport_add(&h.f, host_port(&h, "host-2"), 2, 0, false, why, 128), 0);
	ck_assert_int_eq(fabric_vport_add(&h.f, host_port(&h, "host-3"), 1, 0, true, why, 128), 0);
	ck_assert_int_eq(sm_start(h.sm), 0);
	ck_assert(run_until_up(&h, 1, 30));
	verify_clean(&h);
	vports_verified(&h, 8 + 3, 2);
	const struct topo *t = sm_fabric(h.sm);
	ck_assert_uint_eq(t->vports.n, 3);
	uint32_t p2 = host_port(&h, "host-2");
	ck_assert_uint_ne(fabric_vport_lid(&h.f, p2, 1), h.f.ports[p2].pi.lid);
	ck_assert_uint_eq(fabric_vport_lid(&h.f, p2, 2), h.f.ports[p2].pi.lid);
	/* the SM's model agrees with the HCA */
	uint32_t v = topo_vport_by_guid(t, h.f.ports[p2].vports[1].guid);
	ck_assert_uint_ne(v, TOPO_NONE);
	ck_assert_uint_eq(topo_vport_lid(t, v), fabric_vport_lid(&h.f, p2, 1));

	/* a VF comes: its trap, one incremental sweep, no node read again */
	uint32_t p4 = host_port(&h, "host-4");
	ck_assert_int_eq(fabric_vport_add(&h.f, p4, 3, 0, true, why, 128), 0);
	struct sm_status st = sm_status(h.sm);
	uint64_t reads = h.node_info_gets;
	uint8_t m[256];
	sma_build_trap(&h.f, p4, 1146, 77, m);
	struct mad_addr from = {.lid = h.f.ports[p4].pi.lid, .qpn = 0};
	fake_deliver(h.ft, &from, m, MAD_SIZE, 0);
	ck_assert(run_until_up(&h, st.sweeps + 1, 30));
	ck_assert_uint_eq(h.node_info_gets, reads);
	vports_verified(&h, 8 + 4, 3);
	ck_assert_uint_eq(h.f.ports[p4].vport_change, false);

	/* ... and goes */
	uint16_t gone_lid = fabric_vport_lid(&h.f, p4, 3);
	ck_assert_int_eq(fabric_vport_remove(&h.f, p4, 3, why, 128), 0);
	st = sm_status(h.sm);
	sma_build_trap(&h.f, p4, 1146, 78, m);
	fake_deliver(h.ft, &from, m, MAD_SIZE, 0);
	ck_assert(run_until_up(&h, st.sweeps + 1, 30));
	ck_assert_uint_eq(t->vports.n, 3);
	ck_assert_uint_eq(topo_vport_by_lid(t, gone_lid), TOPO_NONE);
	vports_verified(&h, 8 + 3, 2);
	harness_free(&h);
}
END_TEST

/* A host's NodeDescription changes (its driver sets a new name) and its port says so with
 * trap 144, OtherLocalChanges and NodeDescriptionChange: the SM reads that node's
 * description again at once, without a sweep. A trap 144 without the flag (IsSM changed)
 * reads none. */
START_TEST(node_desc_followed)
{
	struct harness h;
	harness_up(&h, "fattree:radix=4,levels=2");
	uint32_t p3 = host_port(&h, "host-3");
	struct fs_node *n3 = &h.f.nodes[h.f.ports[p3].node];
	const struct topo *t = sm_fabric(h.sm);
	uint32_t tn = u64map_get(&t->by_guid, n3->guid);
	ck_assert_uint_ne(tn, U64MAP_NONE);
	const char *renamed = "gpu-node-3 mlx5_0";
	snprintf(n3->desc, sizeof(n3->desc), "%s", renamed);
	uint64_t sweeps = sm_status(h.sm).sweeps, reads = h.node_desc_gets;
	uint8_t m[256];
	struct mad_addr from = {.lid = h.f.ports[p3].pi.lid, .qpn = 0};
	h.f.ports[p3].trap144_flags = 0;
	sma_build_trap(&h.f, p3, 144, 90, m);
	fake_deliver(h.ft, &from, m, MAD_SIZE, 0);
	run_for(&h, 0.2);
	ck_assert_uint_eq(h.node_desc_gets, reads);
	ck_assert_str_ne(t->nodes[tn].desc, renamed);
	h.f.ports[p3].trap144_flags = TRAP144_NODE_DESC_CHANGE;
	sma_build_trap(&h.f, p3, 144, 91, m);
	fake_deliver(h.ft, &from, m, MAD_SIZE, 0);
	for (int i = 0; i < 200 && strcmp(t->nodes[tn].desc, renamed); i++)
		run_for(&h, 0.01);
	ck_assert_str_eq(t->nodes[tn].desc, renamed);
	ck_assert_uint_eq(h.node_desc_gets, reads + 1);
	ck_assert_uint_eq(sm_status(h.sm).sweeps, sweeps);
	harness_free(&h);
}
END_TEST

/* A host's root makes VFs, and each may ask for a LID: virt_max_lids_per_port bounds what one
 * port's VFs take of the LID space. Three ask on host-2, two get one. */
START_TEST(vports_lids_bounded)
{
	struct harness h;
	char why[128];
	harness_init(&h, "fattree:radix=4,levels=2,vports=8");
	h.cfg.virt_max_lids_per_port = 2;
	uint32_t p2 = host_port(&h, "host-2");
	for (unsigned i = 1; i <= 3; i++)
		ck_assert_int_eq(fabric_vport_add(&h.f, p2, i, 0, true, why, 128), 0);
	ck_assert_int_eq(sm_start(h.sm), 0);
	ck_assert(run_until_up(&h, 1, 30));
	const struct topo *t = sm_fabric(h.sm);
	unsigned own = 0;
	for (uint32_t v = 0; v < t->vports.n; v++)
		own += t->vports.v[v].lid != 0;
	ck_assert_uint_eq(t->vports.n, 3);
	ck_assert_uint_eq(own, 2);
	unsigned held = 0;
	for (unsigned i = 1; i <= 3; i++)
		held += fabric_vport_lid(&h.f, p2, i) != 0;
	ck_assert_uint_eq(held, 2);
	harness_free(&h);
}
END_TEST

/* Deliver an SMInfo request to the SM as from LID 7 and decode its one answer. */
static struct mad_smp sm_info_exchange(struct harness *h, const struct mad_smp *smp)
{
	uint8_t m[MAD_SIZE] = {0};
	mad_smp_encode(smp, m, sizeof(m), NULL);
	struct mad_addr from = {.lid = 7, .qpn = 0};
	unsigned before = h->nresp;
	fake_deliver(h->ft, &from, m, MAD_SIZE, 0);
	for (int i = 0; i < 100 && h->nresp == before; i++)
		ev_run(h->loop, EVRUN_NOWAIT);
	ck_assert_uint_eq(h->nresp, before + 1);
	struct mad_smp a;
	ck_assert_int_ge(mad_smp_decode(h->resp, MAD_SIZE, &a, NULL), 0);
	ck_assert_uint_eq(a.hdr.method, MAD_METHOD_GET_RESP);
	return a;
}

/* Ask the SM for its SMInfo by a LID-routed Get carrying key in its SMInfo and mkey in its
 * header; the answer's SMInfo. */
static struct mad_sm_info ask_sm_info(struct harness *h, uint64_t key, uint64_t mkey)
{
	struct mad_smp smp;
	mad_smp_init_lid(&smp, MAD_METHOD_GET, MAD_ATTR_SM_INFO, 0);
	smp.mkey = mkey;
	struct mad_sm_info q = {.sm_key = key};
	mad_sm_info_encode(&q, smp.data, sizeof(smp.data), NULL);
	struct mad_smp a = sm_info_exchange(h, &smp);
	ck_assert_uint_eq(a.hdr.status, 0);
	struct mad_sm_info si;
	mad_sm_info_decode(a.data, sizeof(a.data), &si, NULL);
	return si;
}

START_TEST(sm_info_keys)
{
	/* The SM_Key goes only to a requester that proves it may have it: without M_Key
	 * protection a Get with neither key learns nothing (any host could ask), unless the
	 * administrator chose OpenSM's way (show_sm_key) */
	struct harness h;
	harness_init(&h, "fattree:radix=4,levels=2");
	h.cfg.sm_key = 0x5ec1e7;
	h.cfg.sm_priority = 9;
	struct mad_sm_info si = ask_sm_info(&h, 0, 0);
	ck_assert_uint_eq(si.sm_key, 0);
	ck_assert_uint_eq(si.priority, 9);
	si = ask_sm_info(&h, 0x1234, 0);
	ck_assert_uint_eq(si.sm_key, 0);
	h.cfg.show_sm_key = true;
	si = ask_sm_info(&h, 0, 0);
	ck_assert_uint_eq(si.sm_key, 0x5ec1e7);
	h.cfg.show_sm_key = false;
	uint32_t act = si.act_count;
	/* with M_Key protection, only to one that shows the M_Key or the SM_Key */
	h.cfg.m_key = 0xabcdef;
	h.cfg.m_key_protect = 1;
	si = ask_sm_info(&h, 0, 0);
	ck_assert_uint_eq(si.sm_key, 0);
	si = ask_sm_info(&h, 0x1234, 0x1234);
	ck_assert_uint_eq(si.sm_key, 0);
	si = ask_sm_info(&h, 0, 0xabcdef);
	ck_assert_uint_eq(si.sm_key, 0x5ec1e7);
	si = ask_sm_info(&h, 0x5ec1e7, 0);
	ck_assert_uint_eq(si.sm_key, 0x5ec1e7);
	ck_assert_uint_gt(si.act_count, act);
	harness_free(&h);
}
END_TEST

/* Send the SM an SMInfo Set with this modifier from an SM claiming `state`, showing key;
 * the answer's status, and the SMInfo it answered in *out. */
static uint16_t set_sm_info(struct harness *h, uint32_t mod, uint8_t state, uint64_t key,
                            struct mad_sm_info *out)
{
	struct mad_smp smp;
	mad_smp_init_lid(&smp, MAD_METHOD_SET, MAD_ATTR_SM_INFO, mod);
	struct mad_sm_info q = {.guid = 0x777, .sm_key = key, .priority = 15, .state = state};
	mad_sm_info_encode(&q, smp.data, sizeof(smp.data), NULL);
	struct mad_smp a = sm_info_exchange(h, &smp);
	mad_sm_info_decode(a.data, sizeof(a.data), out, NULL);
	return a.hdr.status;
}

START_TEST(sm_info_sets)
{
	/* SMInfo Sets follow IBA's transitions with OpenSM's sender rules; a foreign key
	 * changes nothing */
	struct harness h;
	harness_init(&h, "fattree:radix=4,levels=2");
	h.cfg.sm_key = 0x5ec1e7;
	ck_assert_int_eq(sm_start(h.sm), 0);
	ck_assert(run_until_up(&h, 1, 30));
	struct mad_sm_info si;
	ck_assert_uint_eq(sm_info(h.sm).state, SM_STATE_MASTER);
	/* HANDOVER must come from a master, ACKNOWLEDGE from a standby */
	ck_assert_uint_eq(set_sm_info(&h, 1, SM_STATE_STANDBY, 0x5ec1e7, &si),
	                  MAD_STATUS_INVALID_FIELD);
	ck_assert_uint_eq(set_sm_info(&h, 2, SM_STATE_MASTER, 0x5ec1e7, &si),
	                  MAD_STATUS_INVALID_FIELD);
	/* unknown modifiers, and DISCOVER to a master, are refused */
	ck_assert_uint_eq(set_sm_info(&h, 9, SM_STATE_MASTER, 0x5ec1e7, &si),
	                  MAD_STATUS_INVALID_FIELD);
	ck_assert_uint_eq(set_sm_info(&h, 5, SM_STATE_MASTER, 0x5ec1e7, &si),
	                  MAD_STATUS_INVALID_FIELD);
	/* another subnet's key: refused, state unchanged, no key shown */
	ck_assert_uint_eq(set_sm_info(&h, 4, SM_STATE_MASTER, 0xbad, &si),
	                  MAD_STATUS_INVALID_FIELD);
	ck_assert_uint_eq(si.sm_key, 0);
	ck_assert_uint_eq(sm_info(h.sm).state, SM_STATE_MASTER);
	/* key 0 from an SM that never answered, from a LID that is not its port's: neither
	 * DISABLE nor STANDBY nor HANDOVER is obeyed (any host could send them) */
	ck_assert_uint_eq(set_sm_info(&h, 3, SM_STATE_MASTER, 0, &si), MAD_STATUS_INVALID_FIELD);
	ck_assert_uint_eq(set_sm_info(&h, 4, SM_STATE_MASTER, 0, &si), MAD_STATUS_INVALID_FIELD);
	ck_assert_uint_eq(sm_info(h.sm).state, SM_STATE_MASTER);
	/* a master with our key says STANDBY: this one stands by */
	ck_assert_uint_eq(set_sm_info(&h, 4, SM_STATE_MASTER, 0x5ec1e7, &si), 0);
	ck_assert_uint_eq(sm_info(h.sm).state, SM_STATE_STANDBY);
	/* ... HANDOVER: master again, answered as master */
	ck_assert_uint_eq(set_sm_info(&h, 1, SM_STATE_MASTER, 0x5ec1e7, &si), 0);
	ck_assert_uint_eq(si.state, SM_STATE_MASTER);
	ck_assert_uint_eq(sm_info(h.sm).state, SM_STATE_MASTER);
	/* DISABLE: NOT-ACTIVE, and then DISCOVER brings it back to DISCOVERING */
	ck_assert_uint_eq(set_sm_info(&h, 3, SM_STATE_MASTER, 0x5ec1e7, &si), 0);
	ck_assert_uint_eq(sm_info(h.sm).state, SM_STATE_NOT_ACTIVE);
	ck_assert_uint_eq(set_sm_info(&h, 1, SM_STATE_MASTER, 0x5ec1e7, &si),
	                  MAD_STATUS_INVALID_FIELD);
	ck_assert_uint_eq(set_sm_info(&h, 5, SM_STATE_MASTER, 0x5ec1e7, &si), 0);
	ck_assert_uint_eq(sm_info(h.sm).state, SM_STATE_DISCOVERING);
	/* no other SM answers in this fabric: the sweep makes it master again */
	for (int i = 0; i < 2000 && sm_info(h.sm).state != SM_STATE_MASTER; i++)
		ev_run(h.loop, EVRUN_ONCE);
	ck_assert_uint_eq(sm_info(h.sm).state, SM_STATE_MASTER);
	harness_free(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sm_phases");
	TCase *tc = tcase_create("all");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, bring_up);
	tcase_add_test(tc, vports_managed);
	tcase_add_test(tc, vports_lids_bounded);
	tcase_add_test(tc, node_desc_followed);
	tcase_add_test(tc, lost_smps);
	tcase_add_test(tc, dispatcher_out_of_room);
	tcase_add_test(tc, restart_reads_as_room_comes);
	tcase_add_test(tc, minhop_last_resort);
	tcase_add_test(tc, link_down_rerouted);
	tcase_add_test(tc, sm_info_keys);
	tcase_add_test(tc, sm_info_sets);
	tcase_add_test(tc, mcast_waiting_switch_returns);
	tcase_add_test(tc, mcast_retry_after_leave);
	tcase_add_test(tc, mcast_unanswered_then_leave);
	tcase_add_test(tc, mcast_lost_join_sent_again);
	tcase_add_test(tc, mcast_refused_not_hammered);
	tcase_add_test(tc, mcast_switch_reset_light_sweep);
	tcase_add_test(tc, alias_retry_after_delete);
	tcase_add_test(tc, alias_lost_delete_written_by_sweep);
	tcase_add_test(tc, alias_unanswered_then_delete);
	suite_add_tcase(s, tc);
	return check_run(s);
}
