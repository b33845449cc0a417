/* Partitions changed at run time (sm/tenants.c, issue 35) without a simulator process: the
 * "pmember" lines written and parsed back, and the SM (with its SA listening) on the fake
 * transport, its SMPs answered by fabricsim's model in process, as test_sm_phases does, so
 * that what tenants_add/_remove do is read where it lands: in the ports' P_Key tables, the
 * partitions-api file, the SA's groups and a second SM started on the same state directory.
 * The interface is the seam: nothing here reaches into struct sm. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "agents.h"
#include "check_run.h"
#include "fake_transport.h"
#include "mad/mad_header.h"
#include "mad/smp_attrs.h"
#include "sa/sa.h"
#include "sm/saved.h"
#include "sm/sm.h"
#include "sm/tenants.h"
#include "topology.h"

#define ATTR_PKEY_TABLE 0x0016
#define FILE_PKEY       0x0010 /* ibsmd.yaml's partition "storage", host-2 its member */
#define SPEC            "fattree:radix=4,levels=2" /* 4 leaves, 2 spines, 8 hosts */

struct harness {
	struct ev_loop *loop;
	struct fabric f;
	uint32_t sm_port;
	struct fake_transport *ft;
	struct ibsmd_config cfg;
	struct log log;
	struct sm *sm;
	struct sa *sa;
	uint64_t pkey_sets, other_sets; /* Sets the SM sent, P_Key tables and the rest */
	/* hold: P_Key Sets reach the ports at once, their answers wait here until released
	 * (a Set's answer still on its way when the next change comes) */
	bool hold;
	/* drop: P_Key Sets reach the ports, their answers are lost; fail_block0: P_Key block 0
	 * is refused (not applied, answered with a bad status) */
	bool drop, fail_block0;
	unsigned nheld;
	struct {
		struct mad_addr from;
		uint8_t mad[MAD_SIZE];
	} held[64];
};

static void on_send(struct fake_transport *ft, const struct mad_addr *to, const uint8_t *mad,
                    size_t len, void *ctx)
{
	(void)ft;
	struct harness *h = ctx;
	if (len != MAD_SIZE || (mad[3] & 0x80))
		return;
	if (mad[1] != MAD_CLASS_SUBN_DR && mad[1] != MAD_CLASS_SUBN_LID)
		return; /* the SA's Reports go nowhere here */
	uint8_t m[MAD_SIZE];
	memcpy(m, mad, len);
	if (m[3] == MAD_METHOD_SET) {
		if ((m[16] << 8 | m[17]) == ATTR_PKEY_TABLE)
			h->pkey_sets++;
		else
			h->other_sets++;
	}
	struct mad_addr a = {.qpn = 0};
	bool pkey_set = m[3] == MAD_METHOD_SET && (m[16] << 8 | m[17]) == ATTR_PKEY_TABLE;
	uint32_t mod = (uint32_t)m[20] << 24 | (uint32_t)m[21] << 16 | m[22] << 8 | m[23];
	if (h->fail_block0 && pkey_set && mod == 0) {
		/* a block past the table: the SMA refuses it as a port refuses what it cannot
		 * take (a bad status), and sets nothing */
		m[22] = m[23] = 0xff;
	}
	if (!sma_exchange(&h->f, h->sm_port, to->lid, m, &a.lid))
		return;
	if (h->drop && m[3] == MAD_METHOD_GET_RESP && (m[16] << 8 | m[17]) == ATTR_PKEY_TABLE)
		return;
	if (h->hold && m[3] == MAD_METHOD_GET_RESP && (m[16] << 8 | m[17]) == ATTR_PKEY_TABLE) {
		ck_assert_uint_lt(h->nheld, 64);
		h->held[h->nheld].from = a;
		memcpy(h->held[h->nheld++].mad, m, MAD_SIZE);
		return;
	}
	fake_deliver(h->ft, &a, m, MAD_SIZE, 0);
}

/* The held answers arrive, last first (answers need not come in the order of their Sets). */
static void release_held(struct harness *h)
{
	h->hold = false;
	while (h->nheld) {
		h->nheld--;
		fake_deliver(h->ft, &h->held[h->nheld].from, h->held[h->nheld].mad, MAD_SIZE, 0);
	}
}

static uint32_t host_port(struct harness *h, int host)
{
	char name[24]; /* "host-" and any int */
	snprintf(name, sizeof(name), "host-%d", host);
	uint32_t p = fabric_port(&h->f, fabric_find_node(&h->f, name), 1);
	ck_assert_uint_ne(p, FS_NONE);
	return p;
}

static uint64_t guid_of(struct harness *h, int host)
{
	return h->f.ports[host_port(h, host)].guid;
}

/* The file's partitions, as config_load would leave them: "storage" 0x0010, host-2 full,
 * with its IPoIB group. */
static void file_partitions(struct harness *h, struct ibsmd_config *c)
{
	struct config_partition *p = config_partition_add(c);
	ck_assert_ptr_nonnull(p);
	snprintf(p->name, sizeof(p->name), "storage");
	p->pkey = FILE_PKEY;
	p->ipoib = true;
	ck_assert_int_eq(config_partition_member(p, CM_GUID, guid_of(h, 2), CM_FULL), 0);
}

static void start_sm(struct harness *h)
{
	h->sm = sm_new(&h->cfg, &h->log, h->loop, &h->ft->base, false);
	ck_assert_ptr_nonnull(h->sm);
	h->sa = sa_new(h->sm);
	ck_assert_ptr_nonnull(h->sa);
	struct sm_listener l = sa_listener(h->sa);
	ck_assert_int_eq(sm_add_listener(h->sm, &l), 0);
}

static void stop_sm(struct harness *h)
{
	sm_stop(h->sm);
	sa_free(h->sa);
	sm_free(h->sm);
	h->sm = NULL;
	h->sa = NULL;
}

/* Run the loop for secs (the SM's Sets answered, its timers run). */
static void run_for(struct harness *h, double secs)
{
	ev_tstamp end = ev_time() + secs;
	while (ev_time() < end)
		ev_run(h->loop, EVRUN_NOWAIT);
}

/* A restart: a new SM on the same state directory, with ibsmd.yaml's partitions alone in a
 * configuration of its own (what the API added must come from the state file). */
static void restart(struct harness *h)
{
	stop_sm(h);
	config_free(&h->cfg);
	char dir[sizeof(h->cfg.state_dir)];
	memcpy(dir, h->cfg.state_dir, sizeof(dir));
	config_defaults(&h->cfg);
	h->cfg.mad_timeout_ms = 20;
	h->cfg.sweep_interval_s = 0;
	memcpy(h->cfg.state_dir, dir, sizeof(dir));
	file_partitions(h, &h->cfg);
	start_sm(h);
}

/* Start the SM and run until it is master with the subnet up. */
static void become_master(struct harness *h)
{
	ck_assert_int_eq(sm_start(h->sm), 0);
	for (int i = 0; i < 100000 && !(sm_status(h->sm).up && !sm_status(h->sm).sweeping &&
	                                sm_info(h->sm).state == SM_STATE_MASTER);
	     i++)
		ev_run(h->loop, EVRUN_ONCE);
	ck_assert(sm_status(h->sm).up);
	ck_assert_uint_eq(sm_info(h->sm).state, SM_STATE_MASTER);
	run_for(h, 0.05);
	h->pkey_sets = h->other_sets = 0;
}

static void harness_init(struct harness *h)
{
	memset(h, 0, sizeof(*h));
	h->loop = ev_loop_new(EVFLAG_AUTO);
	fabric_init(&h->f);
	struct fs_error err;
	ck_assert_msg(generate(&h->f, SPEC, &err) == 0, "%s", err.msg);
	h->sm_port = host_port(h, 1);
	h->ft = fake_transport_new();
	h->ft->on_send = on_send;
	h->ft->ctx = h;
	config_defaults(&h->cfg);
	h->cfg.mad_timeout_ms = 20;
	h->cfg.sweep_interval_s = 0;
	snprintf(h->cfg.state_dir, sizeof(h->cfg.state_dir), "/tmp/test_tenants.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(h->cfg.state_dir));
	file_partitions(h, &h->cfg);
	log_init(&h->log);
	h->log.level = LOGL_ERR;
	start_sm(h);
	become_master(h);
}

static void harness_free(struct harness *h)
{
	stop_sm(h);
	char cmd[320];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", h->cfg.state_dir);
	ck_assert_int_eq(system(cmd), 0);
	mad_transport_close(&h->ft->base);
	config_free(&h->cfg);
	fabric_free(&h->f);
	ev_loop_destroy(h->loop);
}

/* Does the fabric port p's P_Key table hold key (bit 15 included)? */
static bool port_has(struct harness *h, uint32_t p, uint16_t key)
{
	const struct fs_node *n = &h->f.nodes[h->f.ports[p].node];
	unsigned cap = fs_is_switch(&h->f, h->f.ports[p].node)
	                   ? h->f.sws[n->sw].si.partition_enforcement_cap
	                   : 64;
	for (unsigned i = 0; i < cap; i++)
		if (h->f.ports[p].pkeys[i] == key)
			return true;
	return false;
}

/* host's port and the switch port facing it both hold key */
static bool host_has(struct harness *h, int host, uint16_t key)
{
	uint32_t p = host_port(h, host), peer = h->f.ports[p].peer;
	bool at_host = port_has(h, p, key), at_switch = port_has(h, peer, key);
	ck_assert_msg(at_host == at_switch, "host-%d holds 0x%04x %s, its switch port %s", host,
	              key, at_host ? "yes" : "no", at_switch ? "yes" : "no");
	return at_host;
}

static int add(struct harness *h, uint16_t pkey, const uint64_t *g, unsigned n, uint8_t ms,
               bool ipoib, char *err, size_t errlen)
{
	struct tenants_add rq = {.pkey = pkey,
	                         .guids = g,
	                         .nguids = n,
	                         .membership = ms,
	                         .index0 = false,
	                         .ipoib = ipoib};
	int rc = tenants_add(h->sm, "test", &rq, err, errlen);
	run_for(h, 0.05);
	return rc;
}

/* An add by client, full members, no IPoIB */
static int add_as(struct harness *h, const char *client, uint16_t pkey, const uint64_t *g,
                  unsigned n, char *err, size_t errlen)
{
	struct tenants_add rq = {
	    .pkey = pkey, .guids = g, .nguids = n, .membership = CM_FULL, .client = client};
	int rc = tenants_add(h->sm, client, &rq, err, errlen);
	run_for(h, 0.05);
	return rc;
}

static int del(struct harness *h, uint16_t pkey, const uint64_t *g, unsigned n, char *err,
               size_t errlen)
{
	int rc = tenants_remove(h->sm, "test", pkey, g, n, err, errlen);
	run_for(h, 0.05);
	return rc;
}

static char *slurp(const char *dir, const char *name)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *s = calloc(1, 65536);
	size_t n = fread(s, 1, 65535, f);
	s[n] = 0;
	fclose(f);
	return s;
}

/* ---- the lines ---- */

/* One saved line written to a stream (line_begin), then taken back (line_end): it ends in a
 * newline, which is cut, and is of kind k. Free it. */
static char *line_buf;
static size_t line_len;
static FILE *line_begin(void)
{
	FILE *f = open_memstream(&line_buf, &line_len);
	ck_assert_ptr_nonnull(f);
	return f;
}

static char *line_end(FILE *f, enum sm_saved_kind k)
{
	fclose(f);
	char *buf = line_buf;
	ck_assert_msg(line_len && buf[line_len - 1] == '\n', "no newline: %s", buf);
	buf[line_len - 1] = 0;
	ck_assert_int_eq(sm_saved_kind(buf), k);
	return buf;
}

START_TEST(pmember_lines)
{
	const struct sm_saved_pmember cases[] = {
	    {0x0001, 0x0002c90300000001ull, CM_FULL, false, false, ""},
	    {0x7ffe, 0xffffffffffffffffull, CM_LIMITED, true, true, "https:alice@example.org"},
	    {0x0a0b, 0x1ull, CM_FULL, true, false, "uid:0"},
	    {0x1234, 0x0123456789abcdefull, CM_LIMITED, false, true, ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = line_begin();
		sm_saved_put_pmember(f, &cases[i]);
		char *buf = line_end(f, SM_SAVED_PMEMBER);
		struct sm_saved_pmember m;
		ck_assert_msg(sm_saved_parse_pmember(buf, &m), "not parsed back: %s", buf);
		ck_assert_uint_eq(m.pkey, cases[i].pkey);
		ck_assert_uint_eq(m.guid, cases[i].guid);
		ck_assert_uint_eq(m.membership, cases[i].membership);
		ck_assert_int_eq(m.index0, cases[i].index0);
		ck_assert_int_eq(m.ipoib, cases[i].ipoib);
		ck_assert_str_eq(m.client, cases[i].client);
		free(buf);
	}
	/* a line of a file written before the client was kept: no client */
	struct sm_saved_pmember old;
	ck_assert(sm_saved_parse_pmember("pmember 0x0005 0x0000000000000009 full 0 1", &old));
	ck_assert_str_eq(old.client, "");
	/* what a damaged file or a foreign peer may hold: never a member */
	const char *bad[] = {
	    "pmember 0x0000 0x0000000000000001 full 0 0",  /* no partition's key */
	    "pmember 0x7fff 0x0000000000000001 full 0 0",  /* the default partition */
	    "pmember 0x8001 0x0000000000000001 full 0 0",  /* bit 15: not in the file */
	    "pmember 0x0001 0x0000000000000000 full 0 0",  /* no GUID */
	    "pmember 0x0001 0x0000000000000001 both 0 0",  /* not the API's membership */
	    "pmember 0x0001 0x0000000000000001 full 2 0",  /* a flag not 0 or 1 */
	    "pmember 0x0001 0x0000000000000001 full 0 7",  /* idem */
	    "pmember 0x0001 0x0000000000000001 full 0",    /* cut short */
	    "pmembers 0x0001 0x0000000000000001 full 0 0", /* another word */
	    "lid 0x0000000000000001 0x0001",               /* another kind */
	    "pmember",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sm_saved_pmember m;
		ck_assert_msg(!sm_saved_parse_pmember(bad[i], &m), "taken: %s", bad[i]);
	}
}
END_TEST

/* ---- validation ---- */

static void expect_refused(struct harness *h, int rc, int want, const char *err, const char *words,
                           uint64_t changes)
{
	ck_assert_msg(rc == want, "rc %d, not %d: %s", rc, want, err);
	ck_assert_msg(strstr(err, words), "\"%s\" does not say \"%s\"", err, words);
	ck_assert_uint_eq(tenants_changes(h->sm), changes);
	ck_assert_uint_eq(h->pkey_sets + h->other_sets, 0);
}

START_TEST(validation)
{
	struct harness h;
	harness_init(&h);
	char err[256];
	uint64_t g3 = guid_of(&h, 3), g2 = guid_of(&h, 2), c0 = tenants_changes(h.sm);
	uint64_t one[] = {g3}, unknown[] = {g3, 0x00123456789ull}, zero[] = {0}, file[] = {g2};
	expect_refused(&h, add(&h, 0x0000, one, 1, CM_FULL, false, err, sizeof(err)),
	               TENANTS_INVALID, err, "not a partition's", c0);
	/* bit 15 is dropped: 0x8000 is P_Key 0 */
	expect_refused(&h, add(&h, 0x8000, one, 1, CM_FULL, false, err, sizeof(err)),
	               TENANTS_INVALID, err, "not a partition's", c0);
	expect_refused(&h, add(&h, 0x7fff, one, 1, CM_FULL, false, err, sizeof(err)),
	               TENANTS_INVALID, err, "default partition", c0);
	expect_refused(&h, add(&h, 0xffff, one, 1, CM_FULL, false, err, sizeof(err)),
	               TENANTS_INVALID, err, "default partition", c0);
	expect_refused(&h, add(&h, 0x0a0b, one, 1, CM_BOTH, false, err, sizeof(err)),
	               TENANTS_INVALID, err, "full or limited", c0);
	expect_refused(&h, add(&h, 0x0a0b, one, 1, 0, false, err, sizeof(err)), TENANTS_INVALID,
	               err, "full or limited", c0);
	/* with api_max_pending 0, one unknown GUID among good ones: nothing changed */
	h.cfg.api_max_pending = 0;
	expect_refused(&h, add(&h, 0x0a0b, unknown, 2, CM_FULL, false, err, sizeof(err)),
	               TENANTS_REFUSED, err, "api_max_pending is 0", c0);
	h.cfg.api_max_pending = 256;
	expect_refused(&h, add(&h, 0x0a0b, zero, 1, CM_FULL, false, err, sizeof(err)),
	               TENANTS_INVALID, err, "0 and all ones are reserved", c0);
	uint64_t ones[] = {g3, UINT64_MAX};
	expect_refused(&h, add(&h, 0x0a0b, ones, 2, CM_FULL, false, err, sizeof(err)),
	               TENANTS_INVALID, err, "0xffffffffffffffff", c0);
	expect_refused(&h, add(&h, 0x0a0b, one, 0, CM_FULL, false, err, sizeof(err)),
	               TENANTS_INVALID, err, "no GUIDs", c0);
	expect_refused(
	    &h, add(&h, 0x0a0b, one, TENANTS_MAX_GUIDS + 1, CM_FULL, false, err, sizeof(err)),
	    TENANTS_INVALID, err, "too many", c0);
	/* the file's own member: neither changed nor removed here */
	expect_refused(&h, add(&h, FILE_PKEY, file, 1, CM_LIMITED, false, err, sizeof(err)),
	               TENANTS_REFUSED, err, "in ibsmd.yaml", c0);
	expect_refused(&h, del(&h, FILE_PKEY, file, 1, err, sizeof(err)), TENANTS_REFUSED, err,
	               "in ibsmd.yaml", c0);
	expect_refused(&h, del(&h, 0x0a0b, one, 1, err, sizeof(err)), TENANTS_NOT_FOUND, err,
	               "no partition", c0);
	struct tenants_partition p;
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_NOT_FOUND);
	ck_assert_int_eq(tenants_get(h.sm, 0, &p, err, sizeof(err)), TENANTS_INVALID);
	char *file_now = slurp(h.cfg.state_dir, "partitions-api");
	ck_assert_msg(!file_now, "a refused change was written: %s", file_now);

	/* an alias GUID of host-5's port is taken, and its port gets the key; the P_Key with
	 * bit 15 set names the same partition */
	uint64_t alias = 0x0002c9fffe00a1a5ull;
	struct topo *t = sm_fabric(h.sm);
	uint32_t tp = u64map_get(&t->by_port_guid, guid_of(&h, 5));
	ck_assert_uint_ne(tp, TOPO_NONE);
	ck_assert_int_eq(topo_alias_add(t, tp, 1, alias), 0);
	uint64_t a[] = {alias};
	ck_assert_int_eq(add(&h, 0x8a0b, a, 1, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	ck_assert_uint_eq(tenants_changes(h.sm), c0 + 1);
	ck_assert(host_has(&h, 5, 0x8a0b));
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_OK);
	ck_assert_uint_eq(p.nmembers, 1);
	ck_assert_uint_eq(p.members[0].guid, alias);
	ck_assert(p.members[0].from_api && p.members[0].in_fabric && !p.from_file);
	ck_assert_str_eq(p.name, "api_0x0a0b");
	tenants_partition_free(&p);
	harness_free(&h);
}
END_TEST

/* ---- applied: only the P_Key tables that change ---- */

START_TEST(applied_incrementally)
{
	struct harness h;
	harness_init(&h);
	char err[256];
	uint64_t two[] = {guid_of(&h, 3), guid_of(&h, 4)}, lim[] = {guid_of(&h, 6)};
	ck_assert_int_eq(add(&h, 0x0a0b, two, 2, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	ck_assert_msg(strstr(err, "partition created"), "%s", err);
	ck_assert(host_has(&h, 3, 0x8a0b) && host_has(&h, 4, 0x8a0b));
	ck_assert(!host_has(&h, 5, 0x8a0b) && !host_has(&h, 5, 0x0a0b));
	/* two hosts' tables and the two switch ports facing them; nothing else */
	ck_assert_uint_le(h.pkey_sets, 4);
	ck_assert_uint_gt(h.pkey_sets, 0);
	ck_assert_uint_eq(h.other_sets, 0);
	h.pkey_sets = 0;
	ck_assert_int_eq(add(&h, 0x0a0b, lim, 1, CM_LIMITED, false, err, sizeof(err)), TENANTS_OK);
	ck_assert(host_has(&h, 6, 0x0a0b) && !host_has(&h, 6, 0x8a0b));
	ck_assert_uint_le(h.pkey_sets, 2);
	/* a GUID already a member takes the new membership */
	h.pkey_sets = 0;
	ck_assert_int_eq(add(&h, 0x0a0b, lim, 1, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	ck_assert(host_has(&h, 6, 0x8a0b) && !host_has(&h, 6, 0x0a0b));
	ck_assert_uint_le(h.pkey_sets, 2);
	/* an add that changes nothing sends nothing */
	h.pkey_sets = 0;
	ck_assert_int_eq(add(&h, 0x0a0b, lim, 1, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	ck_assert_uint_eq(h.pkey_sets + h.other_sets, 0);
	/* remove: that host's tables only; a GUID not a member is no error */
	uint64_t four[] = {guid_of(&h, 4), guid_of(&h, 7)};
	ck_assert_int_eq(del(&h, 0x0a0b, four, 2, err, sizeof(err)), TENANTS_OK);
	ck_assert_msg(strstr(err, "1 of 2"), "%s", err);
	ck_assert(!host_has(&h, 4, 0x8a0b) && host_has(&h, 3, 0x8a0b));
	ck_assert_uint_le(h.pkey_sets, 2);
	ck_assert_uint_eq(h.other_sets, 0);
	ck_assert_int_eq(del(&h, 0x0a0b, four, 2, err, sizeof(err)), TENANTS_OK);
	ck_assert_msg(strstr(err, "none of the 2"), "%s", err);
	/* an API member of the file's partition: added beside the file's, removable */
	uint64_t g7[] = {guid_of(&h, 7)};
	ck_assert_int_eq(add(&h, FILE_PKEY, g7, 1, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	ck_assert(host_has(&h, 7, 0x8000 | FILE_PKEY) && host_has(&h, 2, 0x8000 | FILE_PKEY));
	ck_assert_int_eq(del(&h, FILE_PKEY, g7, 1, err, sizeof(err)), TENANTS_OK);
	ck_assert(!host_has(&h, 7, 0x8000 | FILE_PKEY) && host_has(&h, 2, 0x8000 | FILE_PKEY));
	struct tenants_partition p;
	ck_assert_int_eq(tenants_get(h.sm, FILE_PKEY, &p, err, sizeof(err)), TENANTS_OK);
	ck_assert(p.from_file && p.nmembers == 1 && !p.members[0].from_api);
	tenants_partition_free(&p);
	/* the last members leave: the partition is gone, and its key from every port */
	uint64_t rest[] = {guid_of(&h, 3), guid_of(&h, 6)};
	ck_assert_int_eq(del(&h, 0x0a0b, rest, 2, err, sizeof(err)), TENANTS_OK);
	ck_assert_msg(strstr(err, "partition gone"), "%s", err);
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_NOT_FOUND);
	for (int host = 1; host <= 8; host++)
		ck_assert(!host_has(&h, host, 0x8a0b) && !host_has(&h, host, 0x0a0b));
	harness_free(&h);
}
END_TEST

/* A change that comes while the Sets of the one before are unanswered (500 API calls from 10
 * clients do that): the ports end as the last change says. Seen in CI: a port's P_Key Set
 * went, the next change put the port's keys back to what it held before the first, and as
 * the answer had not come yet the SM thought the port already held them and sent nothing;
 * the port kept the first change's keys for good. */
START_TEST(changes_while_sets_in_flight)
{
	struct harness h;
	harness_init(&h);
	char err[256];
	uint64_t g3[] = {guid_of(&h, 3)}, g4[] = {guid_of(&h, 4)};
	/* add, then remove before the add's answers came: host-3 back to no key */
	h.hold = true;
	ck_assert_int_eq(
	    tenants_add(h.sm, "test",
	                &(struct tenants_add){
	                    .pkey = 0x0a0c, .guids = g3, .nguids = 1, .membership = CM_FULL},
	                err, sizeof(err)),
	    TENANTS_OK);
	ck_assert_uint_gt(h.nheld, 0);
	ck_assert(host_has(&h, 3, 0x8a0c)); /* the Sets landed; their answers wait */
	ck_assert_int_eq(tenants_remove(h.sm, "test", 0x0a0c, g3, 1, err, sizeof(err)), TENANTS_OK);
	release_held(&h);
	run_for(&h, 0.1);
	ck_assert_msg(!host_has(&h, 3, 0x8a0c), "host-3 kept the key of a change undone");
	/* full, then limited, then full again, each before the last one's answers */
	h.hold = true;
	uint8_t ms[] = {CM_FULL, CM_LIMITED, CM_FULL, CM_LIMITED};
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_int_eq(
		    tenants_add(h.sm, "test",
		                &(struct tenants_add){
		                    .pkey = 0x0a0d, .guids = g4, .nguids = 1, .membership = ms[i]},
		                err, sizeof(err)),
		    TENANTS_OK);
		run_for(&h, 0.005);
	}
	release_held(&h);
	run_for(&h, 0.1);
	ck_assert_msg(host_has(&h, 4, 0x0a0d) && !host_has(&h, 4, 0x8a0d),
	              "host-4 is not the limited member the last change made it");
	/* and what the SM believes the ports hold is what they hold: the next change that
	 * differs from it goes out */
	ck_assert_int_eq(add(&h, 0x0a0d, g4, 1, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	ck_assert(host_has(&h, 4, 0x8a0d) && !host_has(&h, 4, 0x0a0d));
	harness_free(&h);
}
END_TEST

/* A P_Key Set whose answer is lost may still have landed: the SM must not go on believing
 * the port holds what it held before, or a later change back to that table is never sent
 * (a switch port facing a host kept a key the host had lost). */
START_TEST(lost_answers_leave_tables_unknown)
{
	struct harness h;
	harness_init(&h);
	char err[256];
	uint64_t g3[] = {guid_of(&h, 3)};
	h.drop = true;
	ck_assert_int_eq(
	    tenants_add(h.sm, "test",
	                &(struct tenants_add){
	                    .pkey = 0x0a0e, .guids = g3, .nguids = 1, .membership = CM_FULL},
	                err, sizeof(err)),
	    TENANTS_OK);
	run_for(&h, 0.5); /* every try of each Set times out */
	h.drop = false;
	ck_assert(host_has(&h, 3, 0x8a0e)); /* they landed */
	ck_assert_int_eq(del(&h, 0x0a0e, g3, 1, err, sizeof(err)), TENANTS_OK);
	run_for(&h, 0.1);
	ck_assert_msg(!host_has(&h, 3, 0x8a0e), "a table whose Set went unanswered was taken "
	                                        "as unchanged");
	harness_free(&h);
}
END_TEST

/* A table of several blocks: when one block is refused, the others' answers (the last one
 * above all) do not vouch for the whole table, which goes again with the next change. */
START_TEST(refused_block_fails_the_table)
{
	struct harness h;
	harness_init(&h);
	char err[256];
	uint64_t g3[] = {guid_of(&h, 3)}, g5[] = {guid_of(&h, 5)};
	/* 40 partitions: host-3's table takes two blocks */
	for (uint16_t k = 0; k < 40; k++)
		ck_assert_int_eq(
		    add(&h, (uint16_t)(0x0b00 + k), g3, 1, CM_FULL, false, err, sizeof(err)),
		    TENANTS_OK);
	uint32_t p = host_port(&h, 3);
	ck_assert(port_has(&h, p, 0x8b00) && port_has(&h, p, 0x8b27));
	/* host-3 leaves the first: every key after it moves down, both blocks change; block 0
	 * is refused, block 1 set */
	h.fail_block0 = true;
	ck_assert_int_eq(del(&h, 0x0b00, g3, 1, err, sizeof(err)), TENANTS_OK);
	run_for(&h, 0.1);
	h.fail_block0 = false;
	ck_assert(port_has(&h, p, 0x8b00)); /* block 0 as it was */
	/* a change elsewhere: host-3's table, not known to be set, goes again */
	ck_assert_int_eq(add(&h, 0x0a0f, g5, 1, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	run_for(&h, 0.1);
	ck_assert_msg(!port_has(&h, p, 0x8b00), "host-3's refused block was taken as set");
	for (uint16_t k = 1; k < 40; k++)
		ck_assert_msg(port_has(&h, p, (uint16_t)(0x8b00 + k)), "host-3 lost 0x%04x",
		              0x8b00 + k);
	harness_free(&h);
}
END_TEST

/* ---- durable: the file, a restart, a reload ---- */

static void same_lists(struct tenants_partition *a, unsigned na, struct tenants_partition *b,
                       unsigned nb)
{
	ck_assert_uint_eq(na, nb);
	for (unsigned i = 0; i < na; i++) {
		ck_assert_str_eq(a[i].name, b[i].name);
		ck_assert_uint_eq(a[i].pkey, b[i].pkey);
		ck_assert_int_eq(a[i].from_file, b[i].from_file);
		ck_assert_int_eq(a[i].index0, b[i].index0);
		ck_assert_int_eq(a[i].ipoib, b[i].ipoib);
		ck_assert_uint_eq(a[i].nmembers, b[i].nmembers);
		for (unsigned k = 0; k < a[i].nmembers; k++) {
			ck_assert_uint_eq(a[i].members[k].guid, b[i].members[k].guid);
			ck_assert_uint_eq(a[i].members[k].kind, b[i].members[k].kind);
			ck_assert_uint_eq(a[i].members[k].membership, b[i].members[k].membership);
			ck_assert_int_eq(a[i].members[k].from_api, b[i].members[k].from_api);
		}
	}
}

/* No temporary file of the fsync/rename path is left in the state directory. */
static void no_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	while ((e = readdir(d)))
		ck_assert_msg(!strstr(e->d_name, "partitions-api.tmp") &&
		                  !strstr(e->d_name, ".partitions-api"),
		              "left behind: %s", e->d_name);
	closedir(d);
}

START_TEST(saved_and_reloaded)
{
	struct harness h;
	harness_init(&h);
	char err[256];
	uint64_t g34[] = {guid_of(&h, 3), guid_of(&h, 4)}, g5[] = {guid_of(&h, 5)};
	struct tenants_add rq = {.pkey = 0x0a0b,
	                         .guids = g34,
	                         .nguids = 2,
	                         .membership = CM_FULL,
	                         .index0 = true,
	                         .ipoib = true};
	ck_assert_int_eq(tenants_add(h.sm, "test", &rq, err, sizeof(err)), TENANTS_OK);
	ck_assert_int_eq(add(&h, 0x0123, g5, 1, CM_LIMITED, false, err, sizeof(err)), TENANTS_OK);
	ck_assert_int_eq(add(&h, FILE_PKEY, g5, 1, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	no_tmp(h.cfg.state_dir);
	/* the file holds exactly the members, each line parsed back as the sync's lines are */
	char *text = slurp(h.cfg.state_dir, "partitions-api");
	ck_assert_ptr_nonnull(text);
	unsigned lines = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		if (l[0] == '#')
			continue;
		struct sm_saved_pmember m;
		ck_assert_msg(sm_saved_parse_pmember(l, &m), "%s", l);
		lines++;
	}
	free(text);
	ck_assert_uint_eq(lines, 4);
	char *each = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&each, &len);
	tenants_each(h.sm, f);
	fclose(f);
	text = slurp(h.cfg.state_dir, "partitions-api");
	ck_assert_msg(strstr(text, each), "the file:\n%s\ndoes not hold the sync's lines:\n%s",
	              text, each);
	free(text);
	free(each);

	struct tenants_partition *before, *after;
	unsigned nb, na;
	ck_assert_int_eq(tenants_list(h.sm, &before, &nb, err, sizeof(err)), TENANTS_OK);
	ck_assert_uint_eq(nb, 3);

	/* a reload (SIGHUP) with ibsmd.yaml unchanged: the partitions are equal and the digest
	 * standbys compare is the same, so no sweep; taken anyway, the API's members stay */
	struct ibsmd_config fresh;
	config_defaults(&fresh);
	file_partitions(&h, &fresh);
	ck_assert(config_key_equal(&h.cfg, &fresh, CK_PARTITIONS));
	ck_assert_uint_eq(config_digest(&h.cfg, CONFIG_DIGEST_PARTITIONS),
	                  config_digest(&fresh, CONFIG_DIGEST_PARTITIONS));
	sm_routing_wait(h.sm);
	config_key_take(&h.cfg, &fresh, CK_PARTITIONS);
	config_free(&fresh);
	sm_config_changed(h.sm);
	ck_assert_int_eq(tenants_list(h.sm, &after, &na, err, sizeof(err)), TENANTS_OK);
	same_lists(before, nb, after, na);
	tenants_list_free(after, na);
	run_for(&h, 0.5);

	/* a restart: a new SM on the same state directory, ibsmd.yaml's partitions only in its
	 * configuration, reads the API's back */
	restart(&h);
	ck_assert_int_eq(tenants_list(h.sm, &after, &na, err, sizeof(err)), TENANTS_OK);
	same_lists(before, nb, after, na);
	tenants_list_free(after, na);
	tenants_list_free(before, nb);
	harness_free(&h);
}
END_TEST

/* ---- a write that fails ---- */

START_TEST(failed_write_undoes)
{
	struct harness h;
	harness_init(&h);
	char err[256];
	uint64_t g3[] = {guid_of(&h, 3)}, g4[] = {guid_of(&h, 4)};
	ck_assert_int_eq(add(&h, 0x0a0b, g3, 1, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	char *saved = slurp(h.cfg.state_dir, "partitions-api");
	ck_assert_ptr_nonnull(saved);
	uint64_t c0 = tenants_changes(h.sm);
	/* the state directory now under a regular file: no write can succeed (root included) */
	char dir[sizeof(h.cfg.state_dir)];
	memcpy(dir, h.cfg.state_dir, sizeof(dir));
	int n = snprintf(h.cfg.state_dir, sizeof(h.cfg.state_dir), "%s/partitions-api/x", dir);
	ck_assert_int_lt(n, (int)sizeof(h.cfg.state_dir));
	h.pkey_sets = h.other_sets = 0;
	h.log.level = LOGL_ERR - 1; /* the refused writes' errors are expected here */
	ck_assert_int_eq(add(&h, 0x0a0b, g4, 1, CM_FULL, false, err, sizeof(err)), TENANTS_FAILED);
	ck_assert_msg(strstr(err, "nothing changed"), "%s", err);
	ck_assert_int_eq(add(&h, 0x0a0b, g3, 1, CM_LIMITED, false, err, sizeof(err)),
	                 TENANTS_FAILED);
	ck_assert_int_eq(del(&h, 0x0a0b, g3, 1, err, sizeof(err)), TENANTS_FAILED);
	ck_assert_int_eq(add(&h, 0x0c0d, g4, 1, CM_FULL, true, err, sizeof(err)), TENANTS_FAILED);
	/* as it was: the members, the ports, the count the sync follows */
	ck_assert_uint_eq(tenants_changes(h.sm), c0);
	ck_assert_uint_eq(h.pkey_sets + h.other_sets, 0);
	struct tenants_partition p;
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_OK);
	ck_assert(p.nmembers == 1 && p.members[0].guid == g3[0] &&
	          p.members[0].membership == CM_FULL);
	tenants_partition_free(&p);
	ck_assert_int_eq(tenants_get(h.sm, 0x0c0d, &p, err, sizeof(err)), TENANTS_NOT_FOUND);
	ck_assert(host_has(&h, 3, 0x8a0b) && !host_has(&h, 4, 0x8a0b));
	memcpy(h.cfg.state_dir, dir, sizeof(dir));
	h.log.level = LOGL_ERR;
	char *now = slurp(h.cfg.state_dir, "partitions-api");
	ck_assert_str_eq(now, saved);
	free(now);
	free(saved);
	/* writable again: the same request goes through */
	ck_assert_int_eq(add(&h, 0x0a0b, g4, 1, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	ck_assert(host_has(&h, 4, 0x8a0b));
	harness_free(&h);
}
END_TEST

/* ---- the IPoIB broadcast group follows the partition ---- */

/* ---- pending members: GUIDs added before the fabric shows them ---- */

static bool member_in_fabric(struct harness *h, uint16_t pkey, uint64_t guid)
{
	struct tenants_partition p;
	char err[256];
	ck_assert_int_eq(tenants_get(h->sm, pkey, &p, err, sizeof(err)), TENANTS_OK);
	int found = -1;
	for (unsigned i = 0; i < p.nmembers; i++)
		if (p.members[i].guid == guid)
			found = p.members[i].in_fabric;
	tenants_partition_free(&p);
	ck_assert_msg(found >= 0, "0x%016" PRIx64 " is no member of 0x%04x", guid, pkey);
	return found;
}

/* ib-kubernetes adds a pod's VF GUID before the CNI writes it into the VF: the member is
 * kept pending (stored, reported not in the fabric, nothing sent) and its port's table
 * gets the key when the GUID appears as an alias of that port; the alias going takes the
 * key away. Each client may park api_max_pending GUIDs, no more. */
START_TEST(pending_members)
{
	struct harness h;
	harness_init(&h);
	h.cfg.api_max_pending = 2;
	char err[256];
	uint64_t vf1[] = {0x0002c9fffe00b001ull}, vf2[] = {0x0002c9fffe00b002ull},
	         vf3[] = {0x0002c9fffe00b003ull};
	ck_assert_int_eq(add_as(&h, "https:alice", 0x0a0c, vf1, 1, err, sizeof(err)), TENANTS_OK);
	ck_assert_msg(strstr(err, "1 pending"), "%s", err);
	ck_assert(!member_in_fabric(&h, 0x0a0c, vf1[0]));
	ck_assert_uint_eq(h.pkey_sets + h.other_sets, 0);
	ck_assert_int_eq(add_as(&h, "https:alice", 0x0a0c, vf2, 1, err, sizeof(err)), TENANTS_OK);
	/* alice's third would pass the limit; the same GUID again is no new one; bob has his own */
	uint64_t c0 = tenants_changes(h.sm);
	expect_refused(&h, add_as(&h, "https:alice", 0x0a0c, vf3, 1, err, sizeof(err)),
	               TENANTS_REFUSED, err, "https:alice has 2 GUID(s) pending", c0);
	ck_assert_int_eq(add_as(&h, "https:alice", 0x0a0c, vf1, 1, err, sizeof(err)), TENANTS_OK);
	ck_assert_int_eq(add_as(&h, "https:bob", 0x0a0c, vf3, 1, err, sizeof(err)), TENANTS_OK);
	char *saved = slurp(h.cfg.state_dir, "partitions-api");
	ck_assert_ptr_nonnull(saved);
	ck_assert_msg(strstr(saved, "0x0002c9fffe00b001 full 0 0 https:alice"), "%s", saved);
	free(saved);

	/* the VF gets its GUID: host-5's port and the switch port facing it take the key */
	struct topo *t = sm_fabric(h.sm);
	uint32_t tp = u64map_get(&t->by_port_guid, guid_of(&h, 5));
	ck_assert(!host_has(&h, 5, 0x8a0c));
	ck_assert_int_eq(topo_alias_add(t, tp, 1, vf1[0]), 0);
	sm_aliases_changed(h.sm, tp, 0);
	run_for(&h, 0.05);
	ck_assert(host_has(&h, 5, 0x8a0c));
	ck_assert(member_in_fabric(&h, 0x0a0c, vf1[0]));
	/* no longer pending: alice may park another */
	ck_assert_int_eq(add_as(&h, "https:alice", 0x0a0c, vf3, 1, err, sizeof(err)), TENANTS_OK);
	/* the VF goes: the key goes with it */
	topo_alias_del(t, vf1[0]);
	sm_aliases_changed(h.sm, tp, 0);
	run_for(&h, 0.05);
	ck_assert(!host_has(&h, 5, 0x8a0c));
	ck_assert(!member_in_fabric(&h, 0x0a0c, vf1[0]));
	/* a pending GUID is removed like any member */
	ck_assert_int_eq(del(&h, 0x0a0c, vf2, 1, err, sizeof(err)), TENANTS_OK);
	ck_assert_msg(strstr(err, "1 of 1"), "%s", err);
	harness_free(&h);
}
END_TEST

/* UFM's PUT (set): the partition's API members become exactly those given, each with its
 * own membership; DELETE takes the partition with every API member, and refuses the
 * file's. */
START_TEST(set_and_delete)
{
	struct harness h;
	harness_init(&h);
	char err[256];
	uint64_t two[] = {guid_of(&h, 3), guid_of(&h, 4)},
	         other[] = {guid_of(&h, 4), guid_of(&h, 6)};
	ck_assert_int_eq(add(&h, 0x0a0b, two, 2, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	uint8_t ms[] = {CM_LIMITED, CM_FULL};
	struct tenants_add set = {.pkey = 0x0a0b,
	                          .guids = other,
	                          .nguids = 2,
	                          .membership = CM_FULL,
	                          .memberships = ms,
	                          .replace = true};
	ck_assert_int_eq(tenants_add(h.sm, "test", &set, err, sizeof(err)), TENANTS_OK);
	ck_assert_msg(strstr(err, "1 other(s) removed"), "%s", err);
	run_for(&h, 0.05);
	ck_assert(!host_has(&h, 3, 0x8a0b) && !host_has(&h, 3, 0x0a0b));
	ck_assert(host_has(&h, 4, 0x0a0b) && !host_has(&h, 4, 0x8a0b)); /* limited now */
	ck_assert(host_has(&h, 6, 0x8a0b));
	/* the file's partition: its API members can be set, the partition not deleted */
	uint64_t g7[] = {guid_of(&h, 7)};
	ck_assert_int_eq(add(&h, FILE_PKEY, g7, 1, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	uint64_t c0 = tenants_changes(h.sm);
	h.pkey_sets = h.other_sets = 0;
	expect_refused(&h, tenants_delete(h.sm, "test", FILE_PKEY, err, sizeof(err)),
	               TENANTS_REFUSED, err, "defined in ibsmd.yaml", c0);
	ck_assert(host_has(&h, 7, FILE_PKEY | 0x8000));
	ck_assert_int_eq(tenants_delete(h.sm, "test", 0x0a0b, err, sizeof(err)), TENANTS_OK);
	ck_assert_msg(strstr(err, "2 member(s)"), "%s", err);
	run_for(&h, 0.05);
	ck_assert(!host_has(&h, 4, 0x0a0b) && !host_has(&h, 6, 0x8a0b));
	struct tenants_partition p;
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_NOT_FOUND);
	ck_assert_int_eq(tenants_delete(h.sm, "test", 0x0a0b, err, sizeof(err)), TENANTS_NOT_FOUND);
	harness_free(&h);
}
END_TEST

START_TEST(ipoib_group_follows)
{
	struct harness h;
	harness_init(&h);
	char err[256];
	uint32_t g0 = sa_counts(h.sa).groups; /* the default's and storage's */
	ck_assert_uint_ge(g0, 2);
	uint64_t g3[] = {guid_of(&h, 3)}, g4[] = {guid_of(&h, 4)};
	ck_assert_int_eq(add(&h, 0x0a0b, g3, 1, CM_FULL, true, err, sizeof(err)), TENANTS_OK);
	ck_assert_uint_eq(sa_counts(h.sa).groups, g0 + 1);
	ck_assert_int_eq(add(&h, 0x0a0b, g4, 1, CM_FULL, true, err, sizeof(err)), TENANTS_OK);
	ck_assert_uint_eq(sa_counts(h.sa).groups, g0 + 1);
	ck_assert_int_eq(del(&h, 0x0a0b, g3, 1, err, sizeof(err)), TENANTS_OK);
	ck_assert_uint_eq(sa_counts(h.sa).groups, g0 + 1); /* a member is left */
	/* the last member leaves: the partition and its broadcast group go */
	ck_assert_int_eq(del(&h, 0x0a0b, g4, 1, err, sizeof(err)), TENANTS_OK);
	ck_assert_uint_eq(sa_counts(h.sa).groups, g0);
	/* and after a sweep it does not come back, nor do the file's and default's go */
	sm_request_sweep(h.sm, NULL, 0);
	uint64_t sweeps = sm_status(h.sm).sweeps;
	for (int i = 0;
	     i < 100000 && (sm_status(h.sm).sweeps == sweeps || sm_status(h.sm).sweeping); i++)
		ev_run(h.loop, EVRUN_ONCE);
	ck_assert_uint_eq(sa_counts(h.sa).groups, g0);
	/* ip_over_ib turned off by a later add: the group goes, the partition stays */
	ck_assert_int_eq(add(&h, 0x0c0d, g3, 1, CM_FULL, true, err, sizeof(err)), TENANTS_OK);
	ck_assert_uint_eq(sa_counts(h.sa).groups, g0 + 1);
	ck_assert_int_eq(add(&h, 0x0c0d, g4, 1, CM_FULL, false, err, sizeof(err)), TENANTS_OK);
	ck_assert_uint_eq(sa_counts(h.sa).groups, g0);
	/* the file's partition keeps its group when its API members leave */
	ck_assert_int_eq(add(&h, FILE_PKEY, g3, 1, CM_FULL, true, err, sizeof(err)), TENANTS_OK);
	ck_assert_int_eq(del(&h, FILE_PKEY, g3, 1, err, sizeof(err)), TENANTS_OK);
	ck_assert_uint_eq(sa_counts(h.sa).groups, g0);
	harness_free(&h);
}
END_TEST

/* ---- partitions the API defines (UFM's /pkeys/add, qos_conf) ---- */

START_TEST(partition_lines)
{
	const struct sm_saved_partition cases[] = {
	    {0x0001, false, true, 0, 0, SM_SAVED_NO_SL, "api_0x0001", ""},
	    {0x7ffe, true, false, 5, 16, 15, "tenant-a.gpu_1", "https:alice@example.org"},
	    {0x0a0b, false, false, 4, 2, 0, "x", "uid:0"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = line_begin();
		sm_saved_put_partition(f, &cases[i]);
		char *buf = line_end(f, SM_SAVED_PARTITION);
		struct sm_saved_partition r;
		ck_assert_msg(sm_saved_parse_partition(buf, &r), "not parsed back: %s", buf);
		ck_assert_uint_eq(r.pkey, cases[i].pkey);
		ck_assert_int_eq(r.index0, cases[i].index0);
		ck_assert_int_eq(r.ipoib, cases[i].ipoib);
		ck_assert_uint_eq(r.mtu, cases[i].mtu);
		ck_assert_uint_eq(r.rate, cases[i].rate);
		ck_assert_uint_eq(r.sl, cases[i].sl);
		ck_assert_str_eq(r.name, cases[i].name);
		ck_assert_str_eq(r.client, cases[i].client);
		struct sm_saved_pmember m;
		ck_assert(!sm_saved_parse_pmember(buf, &m));
		free(buf);
	}
	const char *bad[] = {
	    "apartition 0x0000 0 1 0 0 16 a",   /* no partition's key */
	    "apartition 0x7fff 0 1 0 0 16 a",   /* the default partition */
	    "apartition 0x0001 2 1 0 0 16 a",   /* a flag not 0 or 1 */
	    "apartition 0x0001 0 1 6 0 16 a",   /* no MTU code */
	    "apartition 0x0001 0 1 4 1 16 a",   /* no rate code */
	    "apartition 0x0001 0 1 4 300 16 a", /* idem */
	    "apartition 0x0001 0 1 4 3 17 a",   /* no SL */
	    "apartition 0x0001 0 1 4 3 1 a/b",  /* a name the line cannot hold */
	    "apartition 0x0001 0 1 4 3 1",      /* cut short */
	    "pmember 0x0001 0x0000000000000001 full 0 0",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sm_saved_partition r;
		ck_assert_msg(!sm_saved_parse_partition(bad[i], &r), "taken: %s", bad[i]);
	}
}
END_TEST

static int define(struct harness *h, const struct tenants_define *d, char *err, size_t errlen)
{
	int rc = tenants_define(h->sm, "test", d, err, errlen);
	run_for(h, 0.05);
	return rc;
}

/* A partition defined without members stays until deleted; its QoS reaches the running
 * policy (the SA's caps and its IPoIB group); ibsmd.yaml's and the limit are kept. */
START_TEST(defined_partitions)
{
	struct harness h;
	harness_init(&h);
	char err[256];
	uint32_t g0 = sa_counts(h.sa).groups;
	struct tenants_define d = {.pkey = 0x0a0b,
	                           .name = "tenant-a",
	                           .has_mtu = true,
	                           .mtu = 4,
	                           .has_rate = true,
	                           .rate = 2,
	                           .has_sl = true,
	                           .sl = 3};
	ck_assert_int_eq(define(&h, &d, err, sizeof(err)), TENANTS_OK);
	ck_assert_msg(strstr(err, "partition created \"tenant-a\"") && strstr(err, "2.5 Gb/s"),
	              "%s", err);
	struct tenants_partition p;
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_OK);
	ck_assert(p.defined && !p.from_file && p.ipoib && !p.index0 && p.has_sl);
	ck_assert_uint_eq(p.nmembers, 0);
	ck_assert_uint_eq(p.mtu_limit, 4);
	ck_assert_uint_eq(p.rate_limit, 2);
	ck_assert_uint_eq(p.ipoib_mtu, 4);
	ck_assert_uint_eq(p.ipoib_rate, 2);
	ck_assert_uint_eq(p.sl, 3);
	ck_assert_str_eq(p.name, "tenant-a");
	tenants_partition_free(&p);
	ck_assert_uint_eq(sa_counts(h.sa).groups, g0 + 1); /* its IPoIB group, no member yet */
	/* a member comes and goes: the partition stays */
	uint64_t g3[] = {guid_of(&h, 3)};
	ck_assert_int_eq(add(&h, 0x0a0b, g3, 1, CM_FULL, true, err, sizeof(err)), TENANTS_OK);
	ck_assert(host_has(&h, 3, 0x8a0b));
	ck_assert_int_eq(del(&h, 0x0a0b, g3, 1, err, sizeof(err)), TENANTS_OK);
	ck_assert_msg(!strstr(err, "partition gone"), "%s", err);
	ck_assert(!host_has(&h, 3, 0x8a0b));
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_OK);
	tenants_partition_free(&p);
	/* qos_conf: only what it gives changes */
	struct tenants_define q = {.pkey = 0x0a0b, .qos_only = true, .has_rate = true, .rate = 16};
	ck_assert_int_eq(define(&h, &q, err, sizeof(err)), TENANTS_OK);
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_OK);
	ck_assert_uint_eq(p.rate_limit, 16);
	ck_assert_uint_eq(p.mtu_limit, 4);
	ck_assert_uint_eq(p.sl, 3);
	ck_assert_str_eq(p.name, "tenant-a");
	tenants_partition_free(&p);
	/* refused, nothing changed: qos_conf of no partition, ibsmd.yaml's, a bad name, a bad
	 * MTU code, past api_max_partitions */
	uint64_t c0 = tenants_changes(h.sm);
	h.pkey_sets = h.other_sets = 0;
	q.pkey = 0x0c0d;
	expect_refused(&h, define(&h, &q, err, sizeof(err)), TENANTS_NOT_FOUND, err, "no partition",
	               c0);
	struct tenants_define f = {.pkey = FILE_PKEY, .has_sl = true, .sl = 1};
	expect_refused(&h, define(&h, &f, err, sizeof(err)), TENANTS_REFUSED, err,
	               "defined in ibsmd.yaml", c0);
	struct tenants_define bad = {.pkey = 0x0c0d, .name = "a b"};
	expect_refused(&h, define(&h, &bad, err, sizeof(err)), TENANTS_INVALID, err,
	               "partition name", c0);
	bad = (struct tenants_define){.pkey = 0x0c0d, .has_mtu = true, .mtu = 6};
	expect_refused(&h, define(&h, &bad, err, sizeof(err)), TENANTS_INVALID, err, "out of range",
	               c0);
	h.cfg.api_max_partitions = 1;
	struct tenants_define more = {.pkey = 0x0c0d};
	expect_refused(&h, define(&h, &more, err, sizeof(err)), TENANTS_REFUSED, err,
	               "api_max_partitions (1)", c0);
	uint64_t g4[] = {guid_of(&h, 4)};
	expect_refused(&h, add(&h, 0x0c0d, g4, 1, CM_FULL, false, err, sizeof(err)),
	               TENANTS_REFUSED, err, "api_max_partitions", c0);
	/* a member of ibsmd.yaml's partition is no partition of the API's own */
	ck_assert_int_eq(add(&h, FILE_PKEY, g4, 1, CM_FULL, true, err, sizeof(err)), TENANTS_OK);
	h.cfg.api_max_partitions = 1024;
	/* the lines a standby gets bring the same partition; a restart reads it back */
	char *each = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&each, &len);
	tenants_each(h.sm, fp);
	fclose(fp);
	ck_assert_msg(strstr(each, "apartition 0x0a0b 0 1 4 16 3 tenant-a"), "%s", each);
	restart(&h);
	become_master(&h);
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_OK);
	ck_assert(p.defined);
	ck_assert_uint_eq(p.rate_limit, 16);
	tenants_partition_free(&p);
	/* a standby's '-' of a line no longer held changes nothing; of the one held, it goes */
	char *line = strtok(each, "\n");
	tenants_apply(h.sm, '-', "apartition 0x0a0b 0 1 4 2 3 tenant-a");
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_OK);
	tenants_partition_free(&p);
	tenants_apply(h.sm, '-', line);
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_NOT_FOUND);
	tenants_apply(h.sm, '+', line);
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_OK);
	tenants_partition_free(&p);
	free(each);
	/* deleted: gone with its group */
	ck_assert_int_eq(tenants_delete(h.sm, "test", 0x0a0b, err, sizeof(err)), TENANTS_OK);
	run_for(&h, 0.05);
	ck_assert_int_eq(tenants_get(h.sm, 0x0a0b, &p, err, sizeof(err)), TENANTS_NOT_FOUND);
	ck_assert_uint_eq(sa_counts(h.sa).groups, g0);
	harness_free(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tenants");
	TCase *tc = tcase_create("all");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, pmember_lines);
	tcase_add_test(tc, validation);
	tcase_add_test(tc, applied_incrementally);
	tcase_add_test(tc, changes_while_sets_in_flight);
	tcase_add_test(tc, lost_answers_leave_tables_unknown);
	tcase_add_test(tc, refused_block_fails_the_table);
	tcase_add_test(tc, saved_and_reloaded);
	tcase_add_test(tc, failed_write_undoes);
	tcase_add_test(tc, ipoib_group_follows);
	tcase_add_test(tc, pending_members);
	tcase_add_test(tc, set_and_delete);
	tcase_add_test(tc, partition_lines);
	tcase_add_test(tc, defined_partitions);
	suite_add_tcase(s, tc);
	return check_run(s);
}
