/* The SA's handlers against a hand-built fabric: what each requester may see (partitions,
 * an unknown requester, a trusted one), component masks, and the statuses on the wire. A
 * client dispatcher on a fake wire asks, as ibsa would; no simulator, no sweep. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "fake_transport.h"
#include "mad/dispatcher.h"
#include "mad/link_speed.h"
#include "mad/mad_header.h"
#include "mad/sa_records.h"
#include "routing/engine.h"
#include "sa/sa.h"
#include "topo_fixture.h"
#include "check_run.h"

#define SM_KEY 0x5ec1e7ull

/* two leaves under one spine, three hosts each: nodes 0-1 leaves, 2 spine, 3-8 hosts. The
 * SM on host 3; tenant A is hosts 4 and 6, tenant B hosts 5 and 7, host 8 in neither; the
 * default partition limited for all (the SM's own port stays full). */
enum { SM_HOST = 3, A1 = 4, B1 = 5, A2 = 6, B2 = 7, LONER = 8, NNODES = 9 };

static uint64_t port_guid_of(uint32_t n)
{
	return 0x1000 + (uint64_t)n * 2 + 1; /* topo_fixture's numbering */
}

struct env {
	struct ev_loop *loop;
	struct fake_transport *fc, *fs; /* client, SM/SA */
	struct mad_dispatcher *client;
	struct ibsmd_config cfg;
	struct log log;
	struct sm *sm;
	struct sa *sa;
	struct topo *t;
	uint16_t from_lid; /* ask from this LID (a VF's own), not the node's; 0: the node's */
	/* the last answer */
	bool done;
	int error;
	uint16_t status;
	uint8_t *ans;
	size_t ans_len;
};

static struct env E;

static void add_partition(const char *name, uint16_t pkey, bool all, const uint32_t *nodes,
                          unsigned n)
{
	struct config_partition *p = config_partition_add(&E.cfg);
	ck_assert_ptr_nonnull(p);
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pkey = pkey;
	if (all)
		config_partition_member(p, CM_ALL, 0, CM_LIMITED); /* as the tests meant it */
	for (unsigned i = 0; i < n; i++)
		config_partition_member(p, CM_GUID, port_guid_of(nodes[i]), CM_FULL);
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
	E.cfg.sm_key = SM_KEY;
	add_partition("Default", 0x7fff, true, NULL, 0);
	/* switches stay full members, as OpenSM's usual "ALL, ALL_SWITCHES=full" has it */
	config_partition_member(&E.cfg.partitions[0], CM_ALL_SWITCHES, 0, CM_FULL);
	const uint32_t a[] = {A1, A2}, b[] = {B1, B2};
	add_partition("A", 0x0a, false, a, 2);
	add_partition("B", 0x0b, false, b, 2);
	log_init(&E.log);
	E.log.level = LOGL_ERR;
	E.sm = sm_new(&E.cfg, &E.log, E.loop, &E.fs->base, false);
	ck_assert_ptr_nonnull(E.sm);
	E.t = sm_fabric(E.sm);
	ck_assert_uint_eq(fix_fattree(E.t, 2, 1, 3), SM_HOST);
	ck_assert_uint_eq(E.t->nnodes, NNODES);
	fix_finish(E.t, SM_HOST, &E.cfg);
	/* routed, as the SM's routing phase would leave it: the SA traces paths through the
	 * switches' tables */
	struct routing_ctx rc;
	ck_assert_int_eq(routing_ctx_build(&rc, E.t, &E.cfg, NULL), 0);
	ck_assert_int_eq(routing_minhop.unicast(&rc, NULL), 0);
	routing_ctx_free(&rc);
	E.fs->lid = E.t->ports[topo_port(E.t, SM_HOST, 1)].lid;
	E.sa = sa_new(E.sm);
	ck_assert_ptr_nonnull(E.sa);
	sa_sweep_done(E.sa); /* the first sweep's end: the clients' state is the SA's from now */
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

static uint16_t lid_of(uint32_t node)
{
	const struct topo_node *n = &E.t->nodes[node];
	return E.t->ports[n->first_port + (topo_is_switch(E.t, node) ? 0 : 1)].lid;
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

/* Ask the SA as the port of node `from` (a LID the fabric does not know when from is
 * NNODES), with an SM_Key (0: none). The record is `rec_len` wire bytes. Returns the
 * answer's status, or -1 when no answer came. */
static int ask_key(uint32_t from, uint64_t sm_key, uint8_t method, uint16_t attr, uint64_t mask,
                   const uint8_t *rec, size_t rec_len)
{
	E.fc->lid = E.from_lid ? E.from_lid : from < NNODES ? lid_of(from) : 999;
	struct mad_sa_hdr h;
	mad_sa_hdr_init(&h, method, attr, mask);
	h.sm_key = sm_key;
	uint8_t m[MAD_SIZE] = {0};
	mad_sa_hdr_encode(&h, m, sizeof(m), NULL);
	if (rec_len)
		memcpy(m + MAD_SA_HDR_END, rec, rec_len);
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

static int ask(uint32_t from, uint8_t method, uint16_t attr, uint64_t mask, const uint8_t *rec,
               size_t rec_len)
{
	return ask_key(from, 0, method, attr, mask, rec, rec_len);
}

/* Records in the last table answer, and record i. */
static unsigned nrecords(void)
{
	unsigned stride = (unsigned)mad_bits_get(E.ans, 44 * 8, 16) * 8; /* AttributeOffset */
	if (!stride || E.ans_len <= MAD_SA_HDR_END)
		return 0;
	return (unsigned)((E.ans_len - MAD_SA_HDR_END) / stride);
}

static const uint8_t *record(unsigned i)
{
	unsigned stride = (unsigned)mad_bits_get(E.ans, 44 * 8, 16) * 8;
	return E.ans + MAD_SA_HDR_END + (size_t)i * stride;
}

/* Does the last NodeRecord table hold node n's port? */
static bool table_has_node(uint32_t n)
{
	for (unsigned i = 0; i < nrecords(); i++)
		if (mad_bits_get(record(i), 0, 16) == lid_of(n))
			return true;
	return false;
}

/* A filtered build keeps only the records that match, and no more than max of them: a Get
 * holds two however many the fabric has (it used to build every record first). */
START_TEST(records_filter_keeps_what_the_answer_uses)
{
	struct sa_components c;
	sa_components_from_layout(&mad_node_record_layout, &c);
	uint8_t want[128] = {0};
	struct mad_node_record q = {.lid = 3};
	mad_node_record_encode(&q, want, sizeof(want), NULL);
	size_t size = mad_node_record_layout.size,
	       stride = mad_sa_record_stride(&mad_node_record_layout);
	for (int max = 0; max <= 2; max += 2) {
		struct sa_records r = {.size = size, .stride = stride};
		sa_records_filter(&r, &c, 1 /* LID */, want, (uint32_t)max);
		for (int i = 0; i < 1000; i++) {
			uint8_t *rec = sa_records_add(&r);
			struct mad_node_record nr = {.lid = (uint16_t)(i % 10)};
			if (rec)
				mad_node_record_encode(&nr, rec, size, NULL);
		}
		sa_records_settle(&r);
		ck_assert_uint_eq(r.n, max ? 2u : 100u);
		ck_assert(r.capped == (max != 0));
		ck_assert_uint_le(r.cap, max ? 64u : 128u); /* never the whole build */
		for (uint32_t i = 0; i < r.n; i++) {
			struct mad_node_record got;
			mad_node_record_decode(r.buf + i * stride, size, &got, NULL);
			ck_assert_uint_eq(got.lid, 3);
		}
		sa_records_free(&r);
	}
}
END_TEST

START_TEST(visibility_by_partition)
{
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0), 0);
	/* A1 sees the three switches, the SM, itself and A2: not B's hosts nor the loner
	 * (limited default members see no one through it) */
	ck_assert_uint_eq(nrecords(), 6);
	ck_assert(table_has_node(A2) && table_has_node(SM_HOST) && table_has_node(0));
	ck_assert(!table_has_node(B1) && !table_has_node(B2) && !table_has_node(LONER));
	/* B2 likewise, the other way */
	ck_assert_int_eq(ask(B2, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0), 0);
	ck_assert(table_has_node(B1) && !table_has_node(A1));
	/* the loner, a limited member only, sees the switches, the SM and itself */
	ck_assert_int_eq(ask(LONER, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0), 0);
	ck_assert_uint_eq(nrecords(), 5);
	ck_assert(table_has_node(LONER) && !table_has_node(A1));
}
END_TEST

START_TEST(unknown_requester_sees_nothing)
{
	/* a LID the SA cannot place: visibility fails closed */
	ck_assert_int_eq(ask(NNODES, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0), 0);
	ck_assert_uint_eq(nrecords(), 0);
	uint8_t rec[64] = {0};
	mad_bits_set(rec, 0, 16, lid_of(A1));
	ck_assert_int_eq(ask(NNODES, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1, rec, sizeof(rec)),
	                 MAD_STATUS_SA_NO_RECORDS);
	/* the SM's own tools, with the SM_Key, see everything */
	ck_assert_int_eq(
	    ask_key(NNODES, SM_KEY, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0), 0);
	ck_assert_uint_eq(nrecords(), NNODES);
}
END_TEST

START_TEST(component_masks_and_statuses)
{
	uint8_t rec[200] = {0};
	/* LID component (bit 0): exactly the one record */
	mad_bits_set(rec, 0, 16, lid_of(A2));
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1, rec, 108), 0);
	ck_assert_uint_eq(mad_bits_get(E.ans + MAD_SA_HDR_END, 0, 16), lid_of(A2));
	/* the same LID, invisible to the requester: no records */
	mad_bits_set(rec, 0, 16, lid_of(B1));
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1, rec, 108),
	                 MAD_STATUS_SA_NO_RECORDS);
	/* no mask: a Get matches several */
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 0, rec, 108),
	                 MAD_STATUS_SA_TOO_MANY_RECORDS);
	/* a mask bit past the record's components */
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1ull << 62, rec, 108),
	                 MAD_STATUS_SA_REQ_INVALID);
	/* a method the attribute does not take, an attribute the SA does not know */
	ck_assert_int_eq(ask(A1, MAD_METHOD_SET, MAD_ATTR_NODE_RECORD, 0, rec, 108),
	                 MAD_STATUS_UNSUP_METHOD_ATTR);
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET, 0x7777, 0, rec, 108),
	                 MAD_STATUS_UNSUP_METHOD_ATTR);
	/* P_Key tables only for trusted requesters */
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET_TABLE, MAD_ATTR_PKEY_TABLE_RECORD, 0, NULL, 0),
	                 MAD_STATUS_SA_REQ_INVALID);
	ck_assert_int_eq(
	    ask_key(A1, SM_KEY, MAD_METHOD_GET_TABLE, MAD_ATTR_PKEY_TABLE_RECORD, 0, NULL, 0), 0);
	ck_assert_uint_gt(nrecords(), 0);
	/* a wrong SM_Key: discarded unanswered, counted */
	uint64_t bad = sa_stats(E.sa)->bad_key;
	ck_assert_int_eq(
	    ask_key(A1, SM_KEY + 1, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0), -1);
	ck_assert_uint_eq(sa_stats(E.sa)->bad_key, bad + 1);
}
END_TEST

START_TEST(paths_follow_partitions)
{
	struct mad_path_record q = {.dlid = lid_of(A2), .slid = lid_of(A1)};
	uint8_t rec[200] = {0};
	mad_path_record_encode(&q, rec, sizeof(rec), NULL);
	uint64_t mask = PR_COMP_DLID | PR_COMP_SLID;
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET, MAD_ATTR_PATH_RECORD, mask, rec, 64), 0);
	struct mad_path_record r;
	mad_path_record_decode(E.ans + MAD_SA_HDR_END, MAD_SIZE - MAD_SA_HDR_END, &r, NULL);
	ck_assert_uint_eq(r.dlid, lid_of(A2));
	ck_assert_uint_eq(r.slid, lid_of(A1));
	ck_assert_uint_eq(r.pkey, 0x800a); /* the partition they share */
	/* to B1: nothing, whoever asks but the SM */
	q.dlid = lid_of(B1);
	mad_path_record_encode(&q, rec, sizeof(rec), NULL);
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET, MAD_ATTR_PATH_RECORD, mask, rec, 64),
	                 MAD_STATUS_SA_NO_RECORDS);
	ck_assert_int_eq(ask(SM_HOST, MAD_METHOD_GET, MAD_ATTR_PATH_RECORD, mask, rec, 64),
	                 MAD_STATUS_SA_NO_RECORDS);
	/* the SM itself reaches B1 (through the default partition, where it is full) */
	q.slid = lid_of(SM_HOST);
	mad_path_record_encode(&q, rec, sizeof(rec), NULL);
	ck_assert_int_eq(ask(SM_HOST, MAD_METHOD_GET, MAD_ATTR_PATH_RECORD, mask, rec, 64), 0);
	mad_path_record_decode(E.ans + MAD_SA_HDR_END, MAD_SIZE - MAD_SA_HDR_END, &r, NULL);
	ck_assert_uint_eq(r.pkey, 0xffff);
}
END_TEST

/* The PathRecord from src to dst in partition pkey, as src asks it. */
static struct mad_path_record path_in(uint32_t src, uint32_t dst, uint16_t pkey)
{
	struct mad_path_record q = {.dlid = lid_of(dst), .slid = lid_of(src), .pkey = pkey};
	uint8_t rec[200] = {0};
	mad_path_record_encode(&q, rec, sizeof(rec), NULL);
	ck_assert_int_eq(ask(src, MAD_METHOD_GET, MAD_ATTR_PATH_RECORD,
	                     PR_COMP_DLID | PR_COMP_SLID | PR_COMP_PKEY, rec, 64),
	                 0);
	struct mad_path_record r;
	mad_path_record_decode(E.ans + MAD_SA_HDR_END, MAD_SIZE - MAD_SA_HDR_END, &r, NULL);
	return r;
}

/* `from` asks the PathRecord to a GID of prefix `prefix` (interface 0x77): its status, and
 * the record in *r when there is one. */
static int ask_remote(uint32_t from, uint64_t prefix, struct mad_path_record *r)
{
	struct mad_path_record q = {0};
	mad_bits_set(q.sgid, 0, 64, E.cfg.subnet_prefix);
	mad_bits_set(q.sgid, 64, 64, port_guid_of(from));
	mad_bits_set(q.dgid, 0, 64, prefix);
	mad_bits_set(q.dgid, 64, 64, 0x77);
	uint8_t rec[200] = {0};
	mad_path_record_encode(&q, rec, sizeof(rec), NULL);
	int st =
	    ask(from, MAD_METHOD_GET, MAD_ATTR_PATH_RECORD, PR_COMP_SGID | PR_COMP_DGID, rec, 64);
	if (st == 0)
		mad_path_record_decode(E.ans + MAD_SA_HDR_END, MAD_SIZE - MAD_SA_HDR_END, r, NULL);
	return st;
}

/* A PathRecord to another subnet's GID goes to a router port of this one, as prefix_routes
 * say (OpenSM's prefix-routes.conf): the router's LID, the asked GID, a hop limit the
 * router may forward on; without a route, or to this subnet's unknown GIDs, INVALID_GID. */
START_TEST(prefix_routes_to_a_router)
{
	E.t->nodes[B2].type = NODE_TYPE_ROUTER; /* B1 shares partition B with it */
	const uint64_t other = 0x20010db800000001ull;
	struct mad_path_record r;
	ck_assert_int_eq(ask_remote(B1, other, &r), MAD_STATUS_SA_INVALID_GID);
	/* "* *": any prefix, the first router */
	E.cfg.prefix_routes[0] = (struct config_prefix_route){0, 0};
	E.cfg.nprefix_routes = 1;
	ck_assert_int_eq(ask_remote(B1, other, &r), 0);
	ck_assert_uint_eq(r.dlid, lid_of(B2));
	ck_assert_uint_eq(r.slid, lid_of(B1));
	ck_assert_uint_eq(mad_bits_get(r.dgid, 0, 64), other);
	ck_assert_uint_eq(mad_bits_get(r.dgid, 64, 64), 0x77);
	ck_assert_uint_eq(r.hop_limit, 0xff);
	/* this subnet's own prefix is never sent to a router */
	ck_assert_int_eq(ask_remote(B1, E.cfg.subnet_prefix, &r), MAD_STATUS_SA_INVALID_GID);
	/* a route for another prefix only */
	E.cfg.prefix_routes[0].prefix = other + 1;
	ck_assert_int_eq(ask_remote(B1, other, &r), MAD_STATUS_SA_INVALID_GID);
	/* a route naming a port that is no router is passed over for the next that matches */
	E.cfg.prefix_routes[0] = (struct config_prefix_route){other, port_guid_of(A2)};
	E.cfg.prefix_routes[1] = (struct config_prefix_route){other, port_guid_of(B2)};
	E.cfg.nprefix_routes = 2;
	ck_assert_int_eq(ask_remote(B1, other, &r), 0);
	ck_assert_uint_eq(r.dlid, lid_of(B2));
	/* a requester that shares no partition with the router learns nothing */
	ck_assert_int_eq(ask_remote(A1, other, &r), MAD_STATUS_SA_NO_RECORDS);
}
END_TEST

/* A partition's caps (UFM's mtu_limit and rate_limit, ibsmd.yaml's partition keys) lower
 * the MTU and rate of the paths on its P_Key, and its SL is theirs; other partitions' paths
 * keep what the links give. */
START_TEST(partition_caps_paths)
{
	for (uint32_t p = 0; p < E.t->nports; p++) /* the fixture's links: 4096 bytes */
		E.t->ports[p].pi.neighbor_mtu = 5;
	struct mad_path_record a = path_in(A1, A2, 0x800a), b = path_in(B1, B2, 0x800b);
	ck_assert_uint_gt(a.mtu, 3);
	ck_assert_uint_gt(mad_rate_mbps(a.rate), mad_rate_mbps(2));
	struct config_partition *pa = &E.cfg.partitions[1];
	ck_assert_uint_eq(pa->pkey, 0x0a);
	pa->mtu_limit = 3;  /* 1024 */
	pa->rate_limit = 2; /* 2.5 Gb/s */
	pa->has_sl = true;
	pa->sl = 2;
	sa_sweep_done(E.sa); /* the policy as a sweep's end (or a run-time change) hands it over */
	struct mad_path_record ca = path_in(A1, A2, 0x800a), cb = path_in(B1, B2, 0x800b);
	ck_assert_uint_eq(ca.mtu, 3);
	ck_assert_uint_eq(ca.rate, 2);
	ck_assert_uint_eq(ca.sl, 2);
	ck_assert_uint_eq(cb.mtu, b.mtu);
	ck_assert_uint_eq(cb.rate, b.rate);
	ck_assert_uint_eq(cb.sl, b.sl);
	/* a cap above what the path gives changes nothing */
	pa->mtu_limit = 5;
	pa->rate_limit = 25; /* 1600 Gb/s */
	sa_sweep_done(E.sa);
	ca = path_in(A1, A2, 0x800a);
	ck_assert_uint_eq(ca.mtu, a.mtu);
	ck_assert_uint_eq(ca.rate, a.rate);
}
END_TEST

/* The PathRecord from slid to dlid as `from` asks it: by LIDs, or by GIDs. */
static int ask_path(uint32_t from, uint32_t src, uint32_t dst, bool by_gid)
{
	struct mad_path_record q = {.dlid = lid_of(dst), .slid = lid_of(src)};
	uint64_t mask = PR_COMP_DLID | PR_COMP_SLID;
	if (by_gid) {
		mad_bits_set(q.sgid, 0, 64, E.cfg.subnet_prefix);
		mad_bits_set(q.sgid, 64, 64, port_guid_of(src));
		mad_bits_set(q.dgid, 0, 64, E.cfg.subnet_prefix);
		mad_bits_set(q.dgid, 64, 64, port_guid_of(dst));
		mask = PR_COMP_DGID | PR_COMP_SGID;
	}
	uint8_t rec[200] = {0};
	mad_path_record_encode(&q, rec, sizeof(rec), NULL);
	return ask(from, MAD_METHOD_GET, MAD_ATTR_PATH_RECORD, mask, rec, 64);
}

/* A ServiceRecord registered by `from` for its own port, in partition pkey. */
static int register_service(uint32_t from, uint64_t id, uint16_t pkey)
{
	struct mad_service_record r = {.id = id, .pkey = pkey, .lease = 0xffffffffu};
	mad_bits_set(r.gid, 0, 64, E.cfg.subnet_prefix);
	mad_bits_set(r.gid, 64, 64, port_guid_of(from));
	snprintf(r.name, sizeof(r.name), "svc-%u", from);
	uint8_t rec[MAD_SA_DATA_SIZE] = {0};
	mad_service_record_encode(&r, rec, sizeof(rec), NULL);
	/* ServiceID, ServiceGID, ServiceP_Key, ServiceLease */
	return ask(from, MAD_METHOD_SET, MAD_ATTR_SERVICE_RECORD, 0x1f, rec, sizeof(rec));
}

START_TEST(partition_leaks)
{
	/* A1, a limited member of the default partition and a full member of A, asked for
	 * paths between two ports of tenant B and got them (by LID, by GID, and 120 of 1,007
	 * records of a saquery -p table on a bigger fabric): a requester sees paths only
	 * between ports it shares a partition with (itself included) */
	ck_assert_int_eq(ask_path(B1, B1, B2, false), 0); /* B's own: fine */
	ck_assert_int_eq(ask_path(A1, B1, B2, false), MAD_STATUS_SA_NO_RECORDS);
	ck_assert_int_eq(ask_path(A1, B1, B2, true), MAD_STATUS_SA_NO_RECORDS);
	ck_assert_int_eq(ask_path(A1, SM_HOST, B1, false), MAD_STATUS_SA_NO_RECORDS);
	ck_assert_int_eq(ask_path(A1, A2, SM_HOST, false), 0);
	ck_assert_int_eq(ask_path(A1, A1, A2, true), 0);
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET_TABLE, MAD_ATTR_PATH_RECORD, 0, NULL, 0), 0);
	unsigned n = nrecords();
	ck_assert_uint_gt(n, 0);
	const uint16_t hidden[] = {lid_of(B1), lid_of(B2), lid_of(LONER)};
	for (unsigned i = 0; i < n; i++) {
		struct mad_path_record r;
		mad_path_record_decode(record(i), 64, &r, NULL);
		for (unsigned k = 0; k < 3; k++)
			ck_assert_msg(r.slid != hidden[k] && r.dlid != hidden[k],
			              "A1 sees a path %u -> %u", r.slid, r.dlid);
	}
	/* the SM's tools still see every path */
	ck_assert_int_eq(
	    ask_key(A1, SM_KEY, MAD_METHOD_GET_TABLE, MAD_ATTR_PATH_RECORD, 0, NULL, 0), 0);
	ck_assert_uint_gt(nrecords(), n);

	/* a service B1 registers with no partition (P_Key 0) or the default (0xffff) was
	 * listed to anyone: now to those that share a partition with B1's port */
	ck_assert_int_eq(register_service(B1, 0x100, 0), 0);
	ck_assert_int_eq(register_service(B1, 0x101, 0xffff), 0);
	ck_assert_int_eq(register_service(SM_HOST, 0x102, 0xffff), 0);
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET_TABLE, MAD_ATTR_SERVICE_RECORD, 0, NULL, 0), 0);
	ck_assert_uint_eq(nrecords(), 1); /* the SM's, a full member of the default */
	ck_assert_int_eq(ask(B2, MAD_METHOD_GET_TABLE, MAD_ATTR_SERVICE_RECORD, 0, NULL, 0), 0);
	ck_assert_uint_eq(nrecords(), 3);
	ck_assert_int_eq(ask(LONER, MAD_METHOD_GET_TABLE, MAD_ATTR_SERVICE_RECORD, 0, NULL, 0), 0);
	ck_assert_uint_eq(nrecords(), 1);
}
END_TEST

/* InformInfo Set from node `from`: subscribe (or not) to trap `trap` over LIDs lo..lo. */
static int inform(uint32_t from, bool subscribe, uint16_t trap, uint16_t lo)
{
	struct mad_inform_info in = {.is_generic = 1,
	                             .subscribe = subscribe,
	                             .type = 0xffff,
	                             .trap_number = trap,
	                             .lid_range_begin = lo,
	                             .lid_range_end = lo,
	                             .producer_type = 0xffffff,
	                             .qpn = 1}; /* the fake wire's: an unsubscription names it */
	uint8_t rec[MAD_SA_DATA_SIZE] = {0};
	mad_inform_info_encode(&in, rec, sizeof(rec), NULL);
	return ask(from, MAD_METHOD_SET, MAD_ATTR_INFORM_INFO, 0, rec, sizeof(rec));
}

START_TEST(inform_limit_per_port)
{
	/* One port asked for 20,000 subscriptions and got them all (5 -> 53 MB with Reports
	 * unacknowledged): now it gets sa_subscriptions_per_port, and NO_RESOURCES after */
	unsigned cap = E.cfg.sa_subscriptions_per_port;
	ck_assert_uint_eq(cap, 64);
	for (unsigned i = 0; i < cap; i++)
		ck_assert_int_eq(inform(A1, true, 64, (uint16_t)(1 + i)), 0);
	ck_assert_int_eq(inform(A1, true, 64, (uint16_t)(1 + cap)), MAD_STATUS_SA_NO_RESOURCES);
	ck_assert_int_eq(inform(A1, true, 65, 1), MAD_STATUS_SA_NO_RESOURCES);
	/* the same subscription again is no new one */
	ck_assert_int_eq(inform(A1, true, 64, 5), 0);
	/* another port is not held back */
	ck_assert_int_eq(inform(B1, true, 64, 1), 0);
	/* one unsubscribed makes room for one */
	ck_assert_int_eq(inform(A1, false, 64, 5), 0);
	ck_assert_int_eq(inform(A1, false, 64, 5), MAD_STATUS_SA_REQ_INVALID); /* gone */
	ck_assert_int_eq(inform(A1, true, 65, 1), 0);
	ck_assert_int_eq(inform(A1, true, 65, 2), MAD_STATUS_SA_NO_RESOURCES);
	/* the records: cap of A1's and B1's one, as the trusted SM sees them */
	ck_assert_int_eq(
	    ask_key(SM_HOST, SM_KEY, MAD_METHOD_GET_TABLE, MAD_ATTR_INFORM_INFO_RECORD, 0, NULL, 0),
	    0);
	ck_assert_uint_eq(nrecords(), cap + 1);
	/* every one of A1's can be taken back, by what it asked for */
	for (unsigned i = 0; i < cap; i++)
		if (i + 1 != 5)
			ck_assert_int_eq(inform(A1, false, 64, (uint16_t)(1 + i)), 0);
	ck_assert_int_eq(inform(A1, false, 65, 1), 0);
	ck_assert_int_eq(
	    ask_key(SM_HOST, SM_KEY, MAD_METHOD_GET_TABLE, MAD_ATTR_INFORM_INFO_RECORD, 0, NULL, 0),
	    0);
	ck_assert_uint_eq(nrecords(), 1);
}
END_TEST

/* A requester with no RMPP (a tool under libumad2sim.so, or one that died): the SA's
 * answers to it are caught on their way out and never ACKed. raw[i] is TID RAW_TID + i's. */
enum { RAW_TID = 0x9100, RAW_MAX = 64 };
static struct {
	unsigned n; /* answers seen */
	bool seen[RAW_MAX];
	uint16_t status[RAW_MAX];
	uint8_t method[RAW_MAX], rmpp_flags[RAW_MAX]; /* of its first MAD */
} R;

static void catch_answer(struct fake_transport *f, const struct mad_addr *to, const uint8_t *mad,
                         size_t len, void *ctx)
{
	(void)f;
	(void)to;
	(void)ctx;
	uint64_t tid = mad_bits_get(mad, 64, 64);
	if (len < MAD_SA_HDR_END || tid < RAW_TID || tid >= RAW_TID + RAW_MAX)
		return;
	unsigned i = (unsigned)(tid - RAW_TID);
	if (R.seen[i])
		return; /* a later segment or a resend */
	R.seen[i] = true;
	R.status[i] = (uint16_t)mad_bits_get(mad, 32, 16);
	R.method[i] = mad[3];
	R.rmpp_flags[i] = mad[26];
	R.n++;
}

static void raw_init(void)
{
	memset(&R, 0, sizeof(R));
	E.fs->on_send = catch_answer;
}

/* A NodeRecord GetTable from node's port under TID RAW_TID + i: of one LID (one segment) or
 * of all it may see (several). Returns when the SA has answered it, or 10 s on. */
static void raw_ask(uint32_t node, unsigned i, uint16_t only_lid, bool wait)
{
	struct mad_sa_hdr h;
	mad_sa_hdr_init(&h, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, only_lid ? 1 : 0);
	h.hdr.tid = RAW_TID + i;
	uint8_t m[MAD_SIZE] = {0};
	mad_sa_hdr_encode(&h, m, sizeof(m), NULL);
	mad_bits_set(m + MAD_SA_HDR_END, 0, 16, only_lid);
	struct mad_addr from = {.lid = lid_of(node), .qpn = 1, .qkey = QP1_QKEY};
	fake_deliver(E.fs, &from, m, sizeof(m), 0);
	ev_tstamp end = ev_time() + 10;
	while (wait && !R.seen[i] && ev_time() < end)
		ev_run(E.loop, EVRUN_ONCE);
}

static bool raw_table_sent(unsigned i)
{
	return R.seen[i] && R.status[i] == 0 && R.method[i] == MAD_METHOD_GET_TABLE_RESP;
}

START_TEST(serial_tables_unacked)
{
	/* A script's saquery one at a time under Debian's ibsim, whose libumad2sim.so ACKs
	 * nothing: each one-segment answer held one of the port's 16 transfers until it timed
	 * out, and the 17th question got BUSY. Each new question shows the last was taken. */
	raw_init();
	for (unsigned i = 0; i < 50; i++) {
		raw_ask(A1, i, lid_of(A1), true);
		ck_assert_msg(raw_table_sent(i), "question %u: status 0x%04x method 0x%02x", i,
		              R.status[i], R.method[i]);
		ck_assert_int_eq(R.rmpp_flags[i] & RMPP_FLAG_LAST,
		                 RMPP_FLAG_LAST); /* one segment */
	}
	ck_assert_uint_le(mad_dispatcher_rmpp_active(sm_dispatcher(E.sm)), 1);
}
END_TEST

START_TEST(parallel_tables_bounded)
{
	/* A port that opens many transfers at once and ACKs none is still held to its share:
	 * the rest refused NO_RESOURCES, with a line naming it; another port is not held back */
	char *logbuf = NULL;
	size_t loglen = 0;
	E.log.stream = open_memstream(&logbuf, &loglen);
	E.log.level = LOGL_WARN;
	raw_init();
	for (unsigned i = 0; i < 20; i++)
		raw_ask(A1, i, 0, false);
	ev_tstamp end = ev_time() + 10;
	while (R.n < 20 && ev_time() < end)
		ev_run(E.loop, EVRUN_ONCE);
	unsigned sent = 0, refused = 0;
	for (unsigned i = 0; i < 20; i++) {
		if (raw_table_sent(i)) {
			sent++;
			ck_assert_int_eq(R.rmpp_flags[i] & RMPP_FLAG_LAST,
			                 0); /* several segments */
		}
		refused += R.status[i] == MAD_STATUS_SA_NO_RESOURCES;
	}
	ck_assert_uint_eq(sent, 16);
	ck_assert_uint_eq(refused, 4);
	/* a new question does not end transfers that still wait for ACKs of their segments */
	raw_ask(A1, 20, lid_of(A1), true);
	ck_assert_uint_eq(R.status[20], MAD_STATUS_SA_NO_RESOURCES);
	raw_ask(B1, 21, lid_of(B1), true);
	ck_assert(raw_table_sent(21));
	fflush(E.log.stream);
	char want[96];
	snprintf(want, sizeof(want), "LID %u (port GUID 0x%016llx) has 16 table transfers",
	         lid_of(A1), (unsigned long long)port_guid_of(A1));
	ck_assert_msg(strstr(logbuf, want) && strstr(logbuf, "answered NO_RESOURCES"), "log: %s",
	              logbuf);
	fclose(E.log.stream);
	E.log.stream = NULL;
	free(logbuf);
}
END_TEST

/* A ServiceRecord `from` registers (or deletes) for node `owner`'s port, with the SM_Key or
 * not. */
static int service_for(uint32_t from, uint32_t owner, uint64_t id, bool set, uint64_t key)
{
	struct mad_service_record r = {.id = id, .pkey = 0xffff, .lease = 0xffffffffu};
	mad_bits_set(r.gid, 0, 64, E.cfg.subnet_prefix);
	mad_bits_set(r.gid, 64, 64, port_guid_of(owner));
	uint8_t rec[MAD_SA_DATA_SIZE] = {0};
	mad_service_record_encode(&r, rec, sizeof(rec), NULL);
	return ask_key(from, key, set ? MAD_METHOD_SET : MAD_METHOD_DELETE, MAD_ATTR_SERVICE_RECORD,
	               set ? 0x17 : 0x7, rec, sizeof(rec));
}

START_TEST(service_limit_per_port)
{
	/* One port could register SA_MAX_SERVICES (65,536) and leave none for anyone: now
	 * it gets sa_services_per_port, counted against the port that asks */
	ck_assert_uint_eq(E.cfg.sa_services_per_port, 256);
	E.cfg.sa_services_per_port = 3; /* live: the SA reads the configuration it runs with */
	for (uint64_t id = 0x200; id < 0x203; id++)
		ck_assert_int_eq(service_for(A1, A1, id, true, 0), 0);
	ck_assert_int_eq(service_for(A1, A1, 0x203, true, 0), MAD_STATUS_SA_NO_RESOURCES);
	/* nor for another port, nor with the SM_Key (as subscriptions): the asker's room */
	ck_assert_int_eq(service_for(A1, A2, 0x203, true, 0), MAD_STATUS_SA_NO_RESOURCES);
	ck_assert_int_eq(service_for(A1, A1, 0x203, true, SM_KEY), MAD_STATUS_SA_NO_RESOURCES);
	/* a renewal is no new one */
	ck_assert_int_eq(service_for(A1, A1, 0x201, true, 0), 0);
	/* the others are not held back, nor is A2 whose GID A1 tried */
	ck_assert_int_eq(service_for(B1, B1, 0x300, true, 0), 0);
	ck_assert_int_eq(service_for(A2, A2, 0x400, true, 0), 0);
	/* one deleted makes room for one */
	ck_assert_int_eq(service_for(A1, A1, 0x201, false, 0), 0);
	ck_assert_int_eq(service_for(A1, A2, 0x203, true, 0), 0);
	ck_assert_int_eq(service_for(A1, A1, 0x204, true, 0), MAD_STATUS_SA_NO_RESOURCES);
	/* the one A1 registered for A2 is A1's: A2 deleting it gives A1 the room */
	ck_assert_int_eq(service_for(A2, A2, 0x203, false, 0), 0);
	ck_assert_int_eq(service_for(A1, A1, 0x204, true, 0), 0);
	/* a lease that ends gives it back too */
	struct mad_service_record r = {.id = 0x205, .pkey = 0xffff, .lease = 0};
	mad_bits_set(r.gid, 0, 64, E.cfg.subnet_prefix);
	mad_bits_set(r.gid, 64, 64, port_guid_of(B1));
	uint8_t rec[MAD_SA_DATA_SIZE] = {0};
	mad_service_record_encode(&r, rec, sizeof(rec), NULL);
	E.cfg.sa_services_per_port = 2; /* B1 holds 0x300: room for one */
	ck_assert_int_eq(ask(B1, MAD_METHOD_SET, MAD_ATTR_SERVICE_RECORD, 0x17, rec, sizeof(rec)),
	                 0);
	ck_assert_int_eq(service_for(B1, B1, 0x301, true, 0), 0); /* 0x205's lease ended */
	ck_assert_int_eq(service_for(B1, B1, 0x302, true, 0), MAD_STATUS_SA_NO_RESOURCES);
}
END_TEST

/* MCMemberRecord from node `from` for `member`'s port: join (creating group g when it is the
 * first) or leave, as a full member. */
static int group_for(uint32_t from, uint32_t member, unsigned g, bool join)
{
	struct mad_mcmember_record r = {
	    .qkey = 0x1234, .pkey = 0xffff, .join_state = 1, .scope = 5};
	static const uint8_t base[16] = {0xff, 0x15, 0x12, 0x34};
	memcpy(r.mgid, base, 16);
	r.mgid[15] = (uint8_t)g;
	mad_bits_set(r.port_gid, 0, 64, E.cfg.subnet_prefix);
	mad_bits_set(r.port_gid, 64, 64, port_guid_of(member));
	uint64_t mask = MCM_COMP_MGID | MCM_COMP_PORT_GID | MCM_COMP_JOIN_STATE;
	if (join)
		mask |= MCM_COMP_QKEY | MCM_COMP_TCLASS | MCM_COMP_PKEY | MCM_COMP_FLOW_LABEL |
		        MCM_COMP_SL;
	uint8_t rec[MAD_SA_DATA_SIZE] = {0};
	mad_mcmember_record_encode(&r, rec, sizeof(rec), NULL);
	return ask(from, join ? MAD_METHOD_SET : MAD_METHOD_DELETE, MAD_ATTR_MCMEMBER_RECORD, mask,
	           rec, sizeof(rec));
}

START_TEST(group_limit_per_port)
{
	/* One port could create groups until no MLID was left for anyone: now it creates
	 * sa_groups_per_port, and joins groups that exist without limit */
	ck_assert_uint_eq(E.cfg.sa_groups_per_port, 64);
	E.cfg.sa_groups_per_port = 2;
	for (uint32_t i = 0; i < E.t->nsws; i++)
		E.t->sws[i].si.multicast_fdb_cap = 64; /* the fixture's switches say none */
	ck_assert_int_eq(group_for(A1, A1, 1, true), 0);
	ck_assert_int_eq(group_for(A1, A1, 2, true), 0);
	ck_assert_int_eq(group_for(A1, A1, 3, true), MAD_STATUS_SA_NO_RESOURCES);
	/* a proxy join that would create one is the asker's too */
	ck_assert_int_eq(group_for(A1, A2, 3, true), MAD_STATUS_SA_NO_RESOURCES);
	/* another port creates; A1 joins what exists */
	ck_assert_int_eq(group_for(B1, B1, 3, true), 0);
	ck_assert_int_eq(group_for(A1, A1, 3, true), 0);
	ck_assert_int_eq(group_for(B1, B1, 2, true), 0);
	/* a group counts for its creator while it exists, whoever is in it */
	ck_assert_int_eq(group_for(A1, A1, 2, false), 0); /* B1 keeps group 2 */
	ck_assert_int_eq(group_for(A1, A1, 4, true), MAD_STATUS_SA_NO_RESOURCES);
	ck_assert_int_eq(group_for(B1, B1, 2, false), 0); /* gone: A1 has room */
	ck_assert_int_eq(group_for(A1, A1, 4, true), 0);
	ck_assert_int_eq(group_for(A1, A1, 5, true), MAD_STATUS_SA_NO_RESOURCES);
	/* B1's creation is B1's, though B1 left and A1 holds it */
	ck_assert_int_eq(group_for(B1, B1, 3, false), 0);
	ck_assert_int_eq(group_for(B1, B1, 6, true), 0);
	ck_assert_int_eq(group_for(B1, B1, 7, true), MAD_STATUS_SA_NO_RESOURCES);
	ck_assert_int_eq(group_for(A1, A1, 3, false), 0); /* group 3 goes */
	ck_assert_int_eq(group_for(B1, B1, 7, true), 0);
}
END_TEST

/* A VF behind LONER's port, ACTIVE, with LID lid of its own routed through the port. */
static uint32_t vport_at_loner(uint64_t guid, uint16_t lid)
{
	uint32_t lp = topo_port(E.t, LONER, 1);
	uint32_t v = topo_vport_put(E.t, lp, 1, guid, true, 0, 0, PORT_STATE_ACTIVE);
	ck_assert_uint_ne(v, TOPO_NONE);
	E.t->vports.v[v].pkey_cap = 32;
	ck_assert_int_eq(topo_vport_assign_lid(E.t, v, lid), 0);
	topo_vport_lfts(E.t);
	return v;
}

/* A vport (an SR-IOV VF) behind LONER's port with a LID of its own, in a partition its port is
 * not in: PathRecords to it by GID and by its LID answer with its LID, its GID and that
 * partition's key; it joins that partition's multicast group by its GID (its own keys
 * decide, not its port's), where its port's own GID is refused. */
START_TEST(vport_paths_and_joins)
{
	const uint64_t vguid = 0x0002c9030a000001ull;
	vport_at_loner(vguid, 40);
	struct config_partition *pt = config_partition_add(&E.cfg);
	ck_assert_ptr_nonnull(pt);
	snprintf(pt->name, sizeof(pt->name), "V");
	pt->pkey = 0x0c;
	config_partition_member(pt, CM_GUID, port_guid_of(A1), CM_FULL);
	config_partition_member(pt, CM_GUID, vguid, CM_FULL);
	ck_assert_int_eq(topo_pkeys_update(E.t, &E.cfg), 0);

	for (int by_lid = 0; by_lid < 2; by_lid++) {
		struct mad_path_record q = {.slid = lid_of(A1), .dlid = 40};
		uint64_t mask = PR_COMP_SLID | PR_COMP_DLID;
		if (!by_lid) {
			mad_bits_set(q.sgid, 0, 64, E.cfg.subnet_prefix);
			mad_bits_set(q.sgid, 64, 64, port_guid_of(A1));
			mad_bits_set(q.dgid, 0, 64, E.cfg.subnet_prefix);
			mad_bits_set(q.dgid, 64, 64, vguid);
			mask = PR_COMP_SGID | PR_COMP_DGID;
		}
		uint8_t rec[200] = {0};
		mad_path_record_encode(&q, rec, sizeof(rec), NULL);
		ck_assert_int_eq(ask(A1, MAD_METHOD_GET, MAD_ATTR_PATH_RECORD, mask, rec, 64), 0);
		struct mad_path_record pr;
		mad_path_record_decode(E.ans + MAD_SA_HDR_END, 64, &pr, NULL);
		ck_assert_uint_eq(pr.dlid, 40);
		ck_assert_uint_eq(pr.slid, lid_of(A1));
		ck_assert_uint_eq(mad_bits_get(pr.dgid, 64, 64), vguid);
		ck_assert_uint_eq(pr.pkey, 0x800c);
	}

	for (uint32_t i = 0; i < E.t->nsws; i++)
		E.t->sws[i].si.multicast_fdb_cap = 64; /* the fixture's switches say none */
	for (int own = 0; own < 2; own++) {
		struct mad_mcmember_record r = {
		    .qkey = 0x1234, .pkey = 0x800c, .join_state = 1, .scope = 5};
		static const uint8_t base[16] = {0xff, 0x15, 0x12, 0x34};
		memcpy(r.mgid, base, 16);
		r.mgid[15] = 0x0c;
		mad_bits_set(r.port_gid, 0, 64, E.cfg.subnet_prefix);
		mad_bits_set(r.port_gid, 64, 64, own ? port_guid_of(LONER) : vguid);
		uint64_t mask = MCM_COMP_MGID | MCM_COMP_PORT_GID | MCM_COMP_JOIN_STATE |
		                MCM_COMP_QKEY | MCM_COMP_TCLASS | MCM_COMP_PKEY |
		                MCM_COMP_FLOW_LABEL | MCM_COMP_SL;
		uint8_t rec[MAD_SA_DATA_SIZE] = {0};
		mad_mcmember_record_encode(&r, rec, sizeof(rec), NULL);
		ck_assert_int_eq(
		    ask(LONER, MAD_METHOD_SET, MAD_ATTR_MCMEMBER_RECORD, mask, rec, sizeof(rec)),
		    own ? MAD_STATUS_SA_REQ_INVALID : 0);
	}
}
END_TEST

/* The record of the last table answer whose NodeRecord names port GUID g, or NULL. */
static const uint8_t *vf_record(uint64_t g)
{
	for (unsigned i = 0; i < nrecords(); i++) {
		struct mad_node_record nr;
		mad_node_record_decode(record(i), mad_node_record_layout.size, &nr, NULL);
		if (nr.info.port_guid == g)
			return record(i);
	}
	return NULL;
}

/* A VF asking from a LID of its own sees by its own P_Keys: the ports of its partitions,
 * not those its physical function shares with others (a tenant's VM must not learn the
 * host's other tenants). The PF, asking from its own LID, sees as before. The VF's own
 * NodeRecord goes to those it shares a partition with. */
START_TEST(vport_requester_sees_its_own)
{
	const uint64_t vguid = 0x0002c9030a000002ull;
	uint32_t v = vport_at_loner(vguid, 41);
	const uint32_t with_a1[] = {A1}, with_b1[] = {B1, LONER};
	add_partition("V", 0x0c, false, with_a1, 1);
	config_partition_member(&E.cfg.partitions[E.cfg.npartitions - 1], CM_GUID, vguid, CM_FULL);
	add_partition("W", 0x0d, false, with_b1, 2); /* the PF's own tenant */
	ck_assert_int_eq(topo_pkeys_update(E.t, &E.cfg), 0);

	E.from_lid = 41;
	ck_assert_int_eq(ask(LONER, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0), 0);
	ck_assert_msg(table_has_node(A1) && !table_has_node(B1),
	              "the VF sees A1 %d (its partition), B1 %d (its PF's)", table_has_node(A1),
	              table_has_node(B1));
	uint8_t rec[64] = {0};
	mad_bits_set(rec, 0, 16, lid_of(B1));
	ck_assert_int_eq(ask(LONER, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1, rec, sizeof(rec)),
	                 MAD_STATUS_SA_NO_RECORDS);
	E.from_lid = 0;
	ck_assert_int_eq(ask(LONER, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0), 0);
	ck_assert(table_has_node(B1) && !table_has_node(A1));

	/* the VF's own NodeRecord, once its virtual node is read: to those sharing a
	 * partition with it (A1), at its LID, with its node's and port's GUIDs */
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0), 0);
	ck_assert(!vf_record(vguid)); /* not read yet: none */
	topo_vport_set_node(E.t, v, 0x0002c9030b000002ull, 1, 1, 32);
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0), 0);
	const uint8_t *vr = vf_record(vguid);
	ck_assert_ptr_nonnull(vr);
	struct mad_node_record nr;
	mad_node_record_decode(vr, mad_node_record_layout.size, &nr, NULL);
	ck_assert_uint_eq(nr.lid, 41);
	ck_assert_uint_eq(nr.info.node_guid, 0x0002c9030b000002ull);
	ck_assert_uint_eq(nr.info.node_type, NODE_TYPE_CA);
	ck_assert_uint_eq(nr.info.partition_cap, 32);
	ck_assert_int_eq(ask(B1, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0), 0);
	ck_assert(!vf_record(vguid)); /* B1 shares nothing with the VF */
	uint8_t q[64] = {0};
	mad_bits_set(q, 0, 16, 41);
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1, q, sizeof(q)), 0);
}
END_TEST

/* A VF with a LID of its own is a port of its own to the SA: its PortInfoRecord (its LID,
 * its state, no M_Key), its GUIDInfoRecord (its GUID at index 0), its P_KeyTableRecord (the
 * keys the policy gives it, to a trusted requester) and its NodeRecord with its virtual
 * node's own description, all at its LID, to those it shares a partition with. */
START_TEST(vport_port_records)
{
	const uint64_t vguid = 0x0002c9030a000003ull;
	uint32_t v = vport_at_loner(vguid, 42);
	const uint32_t with_a1[] = {A1};
	add_partition("V", 0x0c, false, with_a1, 1);
	config_partition_member(&E.cfg.partitions[E.cfg.npartitions - 1], CM_GUID, vguid, CM_FULL);
	ck_assert_int_eq(topo_pkeys_update(E.t, &E.cfg), 0);
	topo_vport_set_node(E.t, v, 0x0002c9030b000003ull, 2, 2, 32);
	topo_vport_set_guid_cap(E.t, v, 8);
	topo_vport_set_desc(E.t, v, "vm-7 mlx5_0");

	uint8_t q[MAD_SA_DATA_SIZE] = {0};
	mad_bits_set(q, 0, 16, 42);
	ck_assert_int_eq(ask(A1, MAD_METHOD_GET, MAD_ATTR_PORT_INFO_RECORD, 1, q, sizeof(q)), 0);
	struct mad_port_info_record pr;
	mad_port_info_record_decode(E.ans + MAD_SA_HDR_END, MAD_SA_DATA_SIZE, &pr, NULL);
	ck_assert_uint_eq(pr.lid, 42);
	ck_assert_uint_eq(pr.port_num, 2);
	ck_assert_uint_eq(pr.info.lid, 42);
	ck_assert_uint_eq(pr.info.lmc, 0);
	ck_assert_uint_eq(pr.info.port_state, PORT_STATE_ACTIVE);
	ck_assert_uint_eq(pr.info.guid_cap, 8);
	ck_assert_uint_eq(pr.info.mkey, 0);
	/* B1 shares nothing with the VF: nothing about it */
	ck_assert_int_eq(ask(B1, MAD_METHOD_GET, MAD_ATTR_PORT_INFO_RECORD, 1, q, sizeof(q)),
	                 MAD_STATUS_SA_NO_RECORDS);

	ck_assert_int_eq(ask(A1, MAD_METHOD_GET, MAD_ATTR_GUID_INFO_RECORD, 0x3, q, sizeof(q)), 0);
	struct mad_guid_info_record gr;
	mad_guid_info_record_decode(E.ans + MAD_SA_HDR_END, MAD_SA_DATA_SIZE, &gr, NULL);
	ck_assert_uint_eq(gr.lid, 42);
	ck_assert_uint_eq(gr.info.guid[0], vguid);

	ck_assert_int_eq(
	    ask_key(A1, SM_KEY, MAD_METHOD_GET, MAD_ATTR_PKEY_TABLE_RECORD, 1, q, sizeof(q)), 0);
	struct mad_pkey_table_record kr;
	mad_pkey_table_record_decode(E.ans + MAD_SA_HDR_END, MAD_SA_DATA_SIZE, &kr, NULL);
	ck_assert_uint_eq(kr.lid, 42);
	ck_assert_uint_eq(kr.port_num, 2);
	bool has = false;
	for (unsigned i = 0; i < 32; i++)
		has |= kr.table.pkey[i] == 0x800c;
	ck_assert_msg(has, "the VF's P_Key table record lacks its partition's key");

	ck_assert_int_eq(ask(A1, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1, q, sizeof(q)), 0);
	struct mad_node_record nr;
	mad_node_record_decode(E.ans + MAD_SA_HDR_END, MAD_SA_DATA_SIZE, &nr, NULL);
	ck_assert_uint_eq(nr.info.port_guid, vguid);
	ck_assert_str_eq(nr.desc.desc, "vm-7 mlx5_0");
}
END_TEST

/* The clients' state as lines (sa/state.c), one kind each: what the state file and the
 * standby sync carry. */
static char *state_text(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	sa_state_write(E.sa, f);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

/* Every kind of line, as written before the kinds had one table: the file and the sync must
 * not change a byte, and what is written is read back to the same lines (a standby's copy
 * after a handover). */
static const char state_golden[] =
    "service 0.000 0000000000000200fe800000000000000000000000001009ffff0000ffffffff000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000 0x0000000000001009\n"
    "service 0.000 0000000000000300fe80000000000000000000000000100bffff0000ffffffff000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000 0x000000000000100d\n"
    "group 0 ff151234000000000000000000000001fe80000000000000000000000000100900001234c000"
    "8000ffff80800000000051000000 0x0000000000001009\n"
    "member ff151234000000000000000000000001 0x0000000000001009 fe80000000000000000000000"
    "0001009 5 1 0\n"
    "member ff151234000000000000000000000001 0x000000000000100d fe80000000000000000000000"
    "000100d 5 1 0\n"
    "group 0 ff151234000000000000000000000002fe80000000000000000000000000100b00001234c001"
    "8000ffff80800000000051000000 0x000000000000100b\n"
    "member ff151234000000000000000000000002 0x000000000000100b fe80000000000000000000000"
    "000100b 5 1 0\n"
    "sub 0x0000000000001009 000000000000000000000000000000000001000100000101ffff004000000"
    "10000ffffff 0\n"
    "sub 0x000000000000100b 000000000000000000000000000000000002000200000101ffff004100000"
    "10000ffffff 0\n"
    "alias 0x0000000000001009 1 0x02c9000000000042\n";

START_TEST(state_lines_round_trip)
{
	for (uint32_t i = 0; i < E.t->nsws; i++)
		E.t->sws[i].si.multicast_fdb_cap = 64;
	ck_assert_int_eq(service_for(A1, A1, 0x200, true, 0), 0);
	ck_assert_int_eq(service_for(A2, B1, 0x300, true, SM_KEY), 0);
	ck_assert_int_eq(group_for(A1, A1, 1, true), 0);
	ck_assert_int_eq(group_for(A2, A2, 1, true), 0);
	ck_assert_int_eq(group_for(B1, B1, 2, true), 0);
	ck_assert_int_eq(inform(A1, true, 64, 1), 0);
	ck_assert_int_eq(inform(B1, true, 65, 2), 0);
	struct mad_guid_info_record g = {.lid = lid_of(A1)};
	g.info.guid[1] = 0x02c9000000000042ull;
	uint8_t rec[MAD_SA_DATA_SIZE] = {0};
	mad_guid_info_record_encode(&g, rec, sizeof(rec), NULL);
	ck_assert_int_eq(
	    ask(A1, MAD_METHOD_SET, MAD_ATTR_GUID_INFO_RECORD, 0x3 | 1u << 5, rec, sizeof(rec)), 0);
	char *text = state_text();
	ck_assert_str_eq(text, state_golden);
	/* a handover forgets every kind; the master's copy comes back as the same lines */
	struct sm_listener l = sa_listener(E.sa);
	l.state_changed(l.ctx, SM_STATE_STANDBY);
	char *none = state_text();
	ck_assert_str_eq(none, "");
	free(none);
	const char *lines[16];
	uint32_t n = 0;
	for (char *s = strtok(text, "\n"); s && n < 16; s = strtok(NULL, "\n"))
		lines[n++] = s;
	ck_assert_int_eq(sa_state_replace(E.sa, lines, n), 0);
	sa_sweep_done(E.sa);
	char *again = state_text();
	ck_assert_str_eq(again, state_golden);
	free(again);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sa_handlers");
	TCase *tc = tcase_create("all");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, vport_paths_and_joins);
	tcase_add_test(tc, vport_requester_sees_its_own);
	tcase_add_test(tc, vport_port_records);
	tcase_add_test(tc, records_filter_keeps_what_the_answer_uses);
	tcase_add_test(tc, visibility_by_partition);
	tcase_add_test(tc, unknown_requester_sees_nothing);
	tcase_add_test(tc, component_masks_and_statuses);
	tcase_add_test(tc, paths_follow_partitions);
	tcase_add_test(tc, partition_caps_paths);
	tcase_add_test(tc, inform_limit_per_port);
	tcase_add_test(tc, service_limit_per_port);
	tcase_add_test(tc, group_limit_per_port);
	tcase_add_test(tc, partition_leaks);
	tcase_add_test(tc, state_lines_round_trip);
	tcase_add_test(tc, prefix_routes_to_a_router);
	tcase_add_test(tc, serial_tables_unacked);
	tcase_add_test(tc, parallel_tables_bounded);
	suite_add_tcase(s, tc);
	return check_run(s);
}
