/* PathRecords and MultiPathRecords at LMC 2 on a hand-built fabric whose switch tables
 * make some LID pairs independent and some not: the order of the LID pairs, their
 * Preference, and the independent sets an IndependenceSelector asks for. The SA follows
 * the tables as the switches hold them (lft_hw), written here by hand. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "fake_transport.h"
#include "mad/dispatcher.h"
#include "mad/mad_header.h"
#include "mad/sa_records.h"
#include "sa/sa.h"
#include "topo_fixture.h"
#include "check_run.h"

/* Two leaves, spine 0 cabled twice to each (cables a and b), spine 1 once to each. Host A
 * on leaf 0, hosts B and C on leaf 1; LIDs A 16-19, B 20-23, C 24-27 (LMC 2).
 *
 *   to B: leaf 0 sends offset 0 and 3 by spine 0's cable a, 1 by spine 1, 2 by cable b;
 *   to A: leaf 1 likewise, so S0/D0, S1/D1 and S2/D2 share no cable there or back, S0/D0
 *         and S2/D2 share spine 0, and S3/D3 is S0/D0 again;
 *   to C: every offset by cable a: no two paths from A to C are independent;
 *   to D (leaf 1): offsets 0 and 1 by cable a, 2 by spine 1, 3 by cable b and then spine
 *         0's cable a to leaf 1: S1/D1 shares cable a with S0/D0; S2/D2 shares none but
 *         comes back through spine 0; S1/D2 goes and comes back by spine 1 alone;
 *   to E (leaf 1): offset 0 by spine 1, 1 by cable b then spine 0's cable a to leaf 1, 2 by
 *         cable a, 3 by spine 1: S0/E0 (out by spine 1, back by cable a) shares a cable with
 *         every pair of other LIDs, but S0/E1 (spine 0) and S1/E0 (spine 1) share nothing. */
enum { LEAF0, LEAF1, SPINE0, SPINE1, A, B, C, D, E_, NNODES };
enum { LID_A = 16, LID_B = 20, LID_C = 24, LID_D = 28, LID_E = 32 };

struct env {
	struct ev_loop *loop;
	struct fake_transport *fc, *fs;
	struct mad_dispatcher *client;
	struct ibsmd_config cfg;
	struct log log;
	struct sm *sm;
	struct sa *sa;
	struct topo *t;
	bool done;
	int error;
	uint16_t status;
	uint8_t *ans;
	size_t ans_len;
};

static struct env E;

/* Switch node n's table: dlid -> port, for LIDs below 64. */
static void program(uint32_t n, const uint8_t *route /* [64], 0xff: none */)
{
	uint32_t sw = E.t->nodes[n].sw;
	ck_assert_int_eq(topo_lft_hw_reserve(E.t, sw, 64), 0);
	topo_lft_hw_store(E.t, sw, 0, route);
}

/* Route a host's four LIDs from base by ports[offset]. */
static void route4(uint8_t *r, uint16_t base, uint8_t p0, uint8_t p1, uint8_t p2, uint8_t p3)
{
	r[base] = p0;
	r[base + 1] = p1;
	r[base + 2] = p2;
	r[base + 3] = p3;
}

static void build_fabric(void)
{
	struct topo *t = E.t;
	ck_assert_uint_eq(fix_switch(t, 5), LEAF0);
	ck_assert_uint_eq(fix_switch(t, 7), LEAF1);
	ck_assert_uint_eq(fix_switch(t, 4), SPINE0);
	ck_assert_uint_eq(fix_switch(t, 2), SPINE1);
	ck_assert_uint_eq(fix_ca(t), A);
	ck_assert_uint_eq(fix_ca(t), B);
	ck_assert_uint_eq(fix_ca(t), C);
	ck_assert_uint_eq(fix_ca(t), D);
	ck_assert_uint_eq(fix_ca(t), E_);
	fix_link(t, LEAF0, 1, SPINE0, 1); /* cable a */
	fix_link(t, LEAF0, 2, SPINE0, 2); /* cable b */
	fix_link(t, LEAF0, 3, SPINE1, 1);
	fix_link(t, LEAF1, 1, SPINE0, 3); /* cable a */
	fix_link(t, LEAF1, 2, SPINE0, 4); /* cable b */
	fix_link(t, LEAF1, 3, SPINE1, 2);
	fix_link(t, A, 1, LEAF0, 4);
	fix_link(t, B, 1, LEAF1, 4);
	fix_link(t, C, 1, LEAF1, 5);
	fix_link(t, D, 1, LEAF1, 6);
	fix_link(t, E_, 1, LEAF1, 7);
	fix_finish(t, A, &E.cfg);
	/* LMC 2 at the hosts, as the SM gives it: blocks aligned to four */
	for (uint32_t n = LEAF0; n <= SPINE1; n++)
		topo_assign_lid(t, topo_port(t, n, 0), (uint16_t)(1 + n), 0);
	topo_assign_lid(t, topo_port(t, A, 1), LID_A, 2);
	topo_assign_lid(t, topo_port(t, B, 1), LID_B, 2);
	topo_assign_lid(t, topo_port(t, C, 1), LID_C, 2);
	topo_assign_lid(t, topo_port(t, D, 1), LID_D, 2);
	topo_assign_lid(t, topo_port(t, E_, 1), LID_E, 2);
	topo_rebuild_lids(t);
	uint8_t r[64];
	memset(r, 0xff, sizeof(r));
	route4(r, LID_A, 4, 4, 4, 4);
	route4(r, LID_B, 1, 3, 2, 1);
	route4(r, LID_C, 1, 1, 1, 1);
	route4(r, LID_D, 1, 1, 3, 2);
	route4(r, LID_E, 3, 2, 1, 3);
	program(LEAF0, r);
	memset(r, 0xff, sizeof(r));
	route4(r, LID_A, 1, 3, 2, 1);
	route4(r, LID_B, 4, 4, 4, 4);
	route4(r, LID_C, 5, 5, 5, 5);
	route4(r, LID_D, 6, 6, 6, 6);
	route4(r, LID_E, 7, 7, 7, 7);
	program(LEAF1, r);
	memset(r, 0xff, sizeof(r));
	route4(r, LID_A, 1, 1, 2, 1);
	route4(r, LID_B, 3, 3, 4, 3);
	route4(r, LID_C, 3, 3, 3, 3);
	route4(r, LID_D, 3, 3, 3, 3);
	route4(r, LID_E, 3, 3, 3, 3);
	program(SPINE0, r);
	memset(r, 0xff, sizeof(r));
	route4(r, LID_A, 1, 1, 1, 1);
	route4(r, LID_B, 2, 2, 2, 2);
	route4(r, LID_C, 2, 2, 2, 2);
	route4(r, LID_D, 2, 2, 2, 2);
	route4(r, LID_E, 2, 2, 2, 2);
	program(SPINE1, r);
	t->generation++; /* what the SA derived before is stale */
}

static void setup(void)
{
	memset(&E, 0, sizeof(E));
	E.loop = ev_loop_new(EVFLAG_AUTO);
	E.fc = fake_transport_new();
	E.fs = fake_transport_new();
	fake_link(E.fc, E.fs);
	config_defaults(&E.cfg);
	E.cfg.state_dir[0] = 0;
	struct config_partition *p = config_partition_add(&E.cfg);
	ck_assert_ptr_nonnull(p);
	snprintf(p->name, sizeof(p->name), "Default");
	p->pkey = 0x7fff;
	config_partition_member(p, CM_ALL, 0, CM_FULL);
	log_init(&E.log);
	E.log.level = LOGL_ERR;
	E.sm = sm_new(&E.cfg, &E.log, E.loop, &E.fs->base, false);
	ck_assert_ptr_nonnull(E.sm);
	E.t = sm_fabric(E.sm);
	build_fabric();
	E.fs->lid = LID_A;
	E.sa = sa_new(E.sm);
	ck_assert_ptr_nonnull(E.sa);
	sa_sweep_done(E.sa);
	struct mad_dispatcher_opts o = {.rmpp_window = 32};
	E.client = mad_dispatcher_new(E.loop, &E.fc->base, &o);
}

static void teardown(void)
{
	mad_dispatcher_free(E.client);
	sm_stop(E.sm);
	sa_free(E.sa);
	sm_free(E.sm);
	mad_transport_close(&E.fc->base);
	mad_transport_close(&E.fs->base);
	config_free(&E.cfg);
	ev_loop_destroy(E.loop);
	free(E.ans);
}

static void on_answer(struct mad_dispatcher *d, const struct mad_result *r, void *ctx)
{
	(void)d;
	(void)ctx;
	E.done = true;
	E.error = r->error;
	E.status = r->status;
	free(E.ans);
	E.ans = NULL;
	E.ans_len = 0;
	if (!r->error) {
		E.ans = malloc(r->len);
		memcpy(E.ans, r->mad, r->len);
		E.ans_len = r->len;
	}
}

/* Ask the SA as host A; the answer's status, or -1 when none came. */
static int ask(uint8_t method, uint16_t attr, uint64_t mask, const uint8_t *rec, size_t len)
{
	E.fc->lid = LID_A;
	struct mad_sa_hdr h;
	mad_sa_hdr_init(&h, method, attr, mask);
	uint8_t m[MAD_SIZE] = {0};
	mad_sa_hdr_encode(&h, m, sizeof(m), NULL);
	memcpy(m + MAD_SA_HDR_END, rec, len);
	struct mad_request rq = {
	    .to = {.lid = E.fs->lid, .qpn = 1, .qkey = QP1_QKEY},
	    .mad = m,
	    .len = sizeof(m),
	    /* long enough that a loaded machine's scheduling never times out an answer
	     * already on its way in the same process */
	    .timeout_ms = 1000,
	    .retries = 0,
	    .cb = on_answer,
	};
	E.done = false;
	ck_assert_int_eq(mad_dispatcher_send(E.client, &rq), 0);
	ev_tstamp end = ev_time() + 10;
	while (!E.done && ev_time() < end)
		ev_run(E.loop, EVRUN_ONCE);
	ck_assert(E.done);
	return E.error ? -1 : E.status;
}

static unsigned nrecords(void)
{
	unsigned stride = (unsigned)mad_bits_get(E.ans, 44 * 8, 16) * 8; /* AttributeOffset */
	if (!stride || E.ans_len <= MAD_SA_HDR_END)
		return 0;
	return (unsigned)((E.ans_len - MAD_SA_HDR_END) / stride);
}

static struct mad_path_record path(unsigned i)
{
	unsigned stride = (unsigned)mad_bits_get(E.ans, 44 * 8, 16) * 8;
	struct mad_path_record pr;
	ck_assert_int_eq(
	    mad_path_record_decode(E.ans + MAD_SA_HDR_END + (size_t)i * stride, 64, &pr, NULL), 0);
	return pr;
}

static void gid_of(uint32_t node, uint8_t *gid)
{
	mad_bits_set(gid, 0, 64, 0xfe80000000000000ull);
	mad_bits_set(gid, 64, 64, E.t->ports[topo_port(E.t, node, 1)].guid);
}

/* (SLID offset, DLID offset, Preference) of each record, in order */
struct want {
	unsigned so, dof, pref;
};

/* the first n records of the answer */
static void expect_paths(uint16_t sbase, uint16_t dbase, const struct want *w, unsigned n)
{
	ck_assert_uint_ge(nrecords(), n);
	for (unsigned i = 0; i < n; i++) {
		struct mad_path_record pr = path(i);
		ck_assert_msg(pr.slid == sbase + w[i].so && pr.dlid == dbase + w[i].dof &&
		                  pr.preference == w[i].pref,
		              "record %u: %u -> %u preference %u, want %u -> %u preference %u", i,
		              pr.slid, pr.dlid, pr.preference, sbase + w[i].so, dbase + w[i].dof,
		              w[i].pref);
	}
}

/* PathRecords from A to host dst by GIDs (method: Get or GetTable); the answer's status. */
static int ask_paths(uint32_t dst, uint8_t method)
{
	struct mad_path_record q = {0};
	gid_of(A, q.sgid);
	gid_of(dst, q.dgid);
	uint8_t rec[64] = {0};
	mad_path_record_encode(&q, rec, sizeof(rec), NULL);
	return ask(method, MAD_ATTR_PATH_RECORD, PR_COMP_SGID | PR_COMP_DGID, rec, sizeof(rec));
}

/* S0/D0 ... S3/D3 first with Preference 0, then the rest source by source with 2, as
 * OpenSM lists them (it listed S0/D0, S0/D1, ... before) */
START_TEST(path_table_orders_lmc_pairs)
{
	ck_assert_int_eq(ask_paths(B, MAD_METHOD_GET_TABLE), 0);
	const struct want w[] = {
	    {0, 0, 0}, {1, 1, 0}, {2, 2, 0}, {3, 3, 0}, {0, 1, 2}, {0, 2, 2}, {0, 3, 2}, {1, 0, 2},
	    {1, 2, 2}, {1, 3, 2}, {2, 0, 2}, {2, 1, 2}, {2, 3, 2}, {3, 0, 2}, {3, 1, 2}, {3, 2, 2},
	};
	ck_assert_uint_eq(nrecords(), 16);
	expect_paths(LID_A, LID_B, w, 16);
	/* a Get answers the first: S0/D0 */
	ck_assert_int_eq(ask_paths(B, MAD_METHOD_GET), 0);
	ck_assert_uint_eq(path(0).slid, LID_A);
	ck_assert_uint_eq(path(0).dlid, LID_B);
}
END_TEST

/* A MultiPathRecord from A to the given hosts, IndependenceSelector sel (-1: not asked). */
static int ask_mpr(const uint32_t *dsts, unsigned nd, int sel)
{
	struct mad_multipath_record mp = {.sgid_count = 1, .dgid_count = (uint8_t)nd};
	gid_of(A, mp.gid[0]);
	for (unsigned i = 0; i < nd; i++)
		gid_of(dsts[i], mp.gid[1 + i]);
	uint64_t mask = 1ull << 19 | 1ull << 20;
	if (sel >= 0) {
		mp.independence_selector = (uint8_t)sel;
		mask |= 1ull << 17;
	}
	uint8_t rec[MAD_SA_DATA_SIZE] = {0};
	ck_assert_int_eq(mad_multipath_record_encode(&mp, rec, sizeof(rec), NULL), 0);
	return ask(MAD_METHOD_GET_MULTI, MAD_ATTR_MULTIPATH_RECORD, mask, rec, sizeof(rec));
}

START_TEST(multipath_without_selector_keeps_the_order)
{
	const uint32_t d[] = {B};
	ck_assert_int_eq(ask_mpr(d, 1, -1), 0);
	ck_assert_uint_eq(nrecords(), 16);
	for (unsigned k = 0; k < 4; k++) {
		ck_assert_uint_eq(path(k).slid, LID_A + k);
		ck_assert_uint_eq(path(k).dlid, LID_B + k);
		ck_assert_uint_eq(path(k).preference, 0);
		ck_assert_uint_eq(path(k).num_path, 0);
	}
	ck_assert_uint_eq(path(4).preference, 2);
}
END_TEST

/* link: S0/D0, S1/D1, S2/D2 share no cable there or back; S3/D3 is S0/D0's route and every
 * other pair crosses a cable of the three. node: S2/D2 crosses spine 0 as S0/D0 does. */
START_TEST(multipath_independent_sets)
{
	const uint32_t d[] = {B};
	ck_assert_int_eq(ask_mpr(d, 1, 1), 0);
	ck_assert_uint_eq(nrecords(), 16);
	const struct want link[] = {{0, 0, 0}, {1, 1, 0}, {2, 2, 0}, {3, 3, 1}, {0, 1, 2}};
	expect_paths(LID_A, LID_B, link, 5);
	for (unsigned i = 0; i < nrecords(); i++)
		ck_assert_uint_eq(path(i).num_path, 3);

	ck_assert_int_eq(ask_mpr(d, 1, 2), 0);
	ck_assert_uint_eq(nrecords(), 16);
	ck_assert_uint_eq(path(0).num_path, 2);
	ck_assert_uint_eq(path(0).slid, LID_A);
	ck_assert_uint_eq(path(0).dlid, LID_B);
	ck_assert_uint_eq(path(1).slid, LID_A + 1);
	ck_assert_uint_eq(path(1).dlid, LID_B + 1);
	ck_assert_uint_eq(path(1).preference, 0);
	/* S2/D2 follows, outside the set */
	ck_assert_uint_eq(path(2).slid, LID_A + 2);
	ck_assert_uint_ge(path(2).preference, 1);
}
END_TEST

/* A MultiPathRecord from A to host dst with IndependenceSelector sel: 16 records, the set
 * (its size in NumbPath) with Preference 0, the rest 1 or more. Returns the set's size. */
static unsigned ask_set(uint32_t dst, int sel)
{
	const uint32_t d[] = {dst};
	ck_assert_int_eq(ask_mpr(d, 1, sel), 0);
	ck_assert_uint_eq(nrecords(), 16);
	unsigned n = path(0).num_path;
	for (unsigned i = 0; i < 16; i++) {
		ck_assert_uint_eq(path(i).num_path, n);
		if (i < n)
			ck_assert_uint_eq(path(i).preference, 0);
		else
			ck_assert_uint_ge(path(i).preference, 1);
	}
	return n;
}

/* every path to C crosses leaf 0's cable a: a set of one, and the record count says so */
START_TEST(multipath_no_independent_pair)
{
	const uint32_t d[] = {C};
	for (int sel = 1; sel <= 2; sel++) {
		ck_assert_uint_eq(ask_set(C, sel), 1);
		ck_assert_uint_eq(path(0).slid, LID_A);
		ck_assert_uint_eq(path(0).dlid, LID_C);
	}
	/* two destinations: B's three, and none of C's is free of them */
	const uint32_t bc[] = {B, C};
	ck_assert_int_eq(ask_mpr(bc, 2, 1), 0);
	ck_assert_uint_eq(nrecords(), 32);
	ck_assert_uint_eq(path(0).num_path, 3);
	/* selector 3 is reserved */
	ck_assert_int_eq(ask_mpr(d, 1, 3), MAD_STATUS_SA_REQ_INVALID);
}
END_TEST

/* An APM client takes the first two: where S1/D1 shares a cable with S0/D0 (there or
 * back), the pair that shares nothing with it leads instead, no switch before no cable
 * (S1/D2: spine 1 alone; S2/D2 comes back through spine 0), then the rest of the diagonal
 * and the others as before. (S0/D0 then S1/D1 before: a cable in common.) */
START_TEST(path_table_leads_with_an_independent_pair)
{
	ck_assert_int_eq(ask_paths(D, MAD_METHOD_GET_TABLE), 0);
	ck_assert_uint_eq(nrecords(), 16);
	const struct want w[] = {
	    {0, 0, 0}, {1, 2, 0}, {1, 1, 0}, {2, 2, 0}, {3, 3, 0}, {0, 1, 2}, {0, 2, 2}, {0, 3, 2},
	    {1, 0, 2}, {1, 3, 2}, {2, 0, 2}, {2, 1, 2}, {2, 3, 2}, {3, 0, 2}, {3, 1, 2}, {3, 2, 2},
	};
	expect_paths(LID_A, LID_D, w, 16);
	/* a Get still answers S0/D0 */
	ck_assert_int_eq(ask_paths(D, MAD_METHOD_GET), 0);
	ck_assert_uint_eq(path(0).slid, LID_A);
	ck_assert_uint_eq(path(0).dlid, LID_D);
}
END_TEST

/* Where nothing is independent of S0/E0 there and back, two other pairs that are lead:
 * S0/E1 (spine 0) and S1/E0 (spine 1), the first such in the table's order. */
START_TEST(path_table_leads_without_the_base_pair)
{
	ck_assert_int_eq(ask_paths(E_, MAD_METHOD_GET_TABLE), 0);
	ck_assert_uint_eq(nrecords(), 16);
	const struct want w[] = {{0, 1, 0}, {1, 0, 0}, {0, 0, 0}, {1, 1, 0}, {2, 2, 0}, {3, 3, 0}};
	expect_paths(LID_A, LID_E, w, 6);
	for (unsigned i = 6; i < 16; i++)
		ck_assert_uint_eq(path(i).preference, 2);
	/* a Get answers one record: S0/E0, the shortest, not a lead */
	ck_assert_int_eq(ask_paths(E_, MAD_METHOD_GET), 0);
	ck_assert_uint_eq(path(0).slid, LID_A);
	ck_assert_uint_eq(path(0).dlid, LID_E);
}
END_TEST

/* IndependenceSelector 1 to E: the set grown from S0/E0 is S0/E0 alone, but other pairs
 * are independent of each other: the SA finds such a set (a set of one before). */
START_TEST(multipath_set_without_the_first_path)
{
	for (int sel = 1; sel <= 2; sel++) {
		unsigned n = ask_set(E_, sel);
		ck_assert_uint_ge(n, 2);
		/* the set leaves S0/E0 out: it shares a cable with every other pair */
		for (unsigned i = 0; i < n; i++)
			ck_assert(!(path(i).slid == LID_A && path(i).dlid == LID_E));
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sa_mpath");
	TCase *tc = tcase_create("all");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, path_table_orders_lmc_pairs);
	tcase_add_test(tc, multipath_without_selector_keeps_the_order);
	tcase_add_test(tc, multipath_independent_sets);
	tcase_add_test(tc, multipath_no_independent_pair);
	tcase_add_test(tc, path_table_leads_with_an_independent_pair);
	tcase_add_test(tc, path_table_leads_without_the_base_pair);
	tcase_add_test(tc, multipath_set_without_the_first_path);
	suite_add_tcase(s, tc);
	return check_run(s);
}
