/* The standby sync's bookkeeping (sync/journal.c) and its wire format (mad/sync_msg.c): a
 * master's journal and a standby's mirror exchanging answers as they would over the wire. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sync_msg.h"
#include "sm/saved.h"
#include "sync/auth.h"
#include "sync/journal.h"
#include "check_run.h"

static struct mad_sync_req req_of(const struct sync_mirror *m)
{
	return (struct mad_sync_req){.epoch = m->epoch,
	                             .generation = m->gen,
	                             .checksum = m->set.sum,
	                             .count = lineset_count(&m->set)};
}

struct heard {
	int plus, minus;
	char last[128];
};

static void hear(void *ctx, char op, const char *line)
{
	struct heard *h = ctx;
	if (op == '+')
		h->plus++;
	else
		h->minus++;
	snprintf(h->last, sizeof(h->last), "%c%s", op, line);
}

/* One exchange: the standby asks, the master answers, the standby applies. */
static enum sync_apply_result exchange(const struct sync_journal *j, struct sync_mirror *m,
                                       uint8_t *kind, struct heard *h)
{
	struct mad_sync_req rq = req_of(m);
	struct mad_sync_resp r;
	char *p;
	size_t len;
	ck_assert_int_eq(sync_journal_answer(j, &rq, &r, &p, &len), 0);
	ck_assert_uint_eq(r.payload_len, len);
	*kind = r.kind;
	enum sync_apply_result a = sync_mirror_apply(m, &r, p, len, hear, h);
	free(p);
	return a;
}

static void same(const struct sync_journal *j, const struct sync_mirror *m)
{
	ck_assert_uint_eq(lineset_count(&m->set), lineset_count(&j->cur));
	ck_assert(m->set.sum == j->cur.sum);
	for (uint32_t i = 0; i < j->cur.lines.n; i++)
		ck_assert(lineset_has(&m->set, j->cur.lines.v[i], strlen(j->cur.lines.v[i])));
}

static char *lines(unsigned from, unsigned to, const char *extra)
{
	char *t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);
	for (unsigned i = from; i < to; i++)
		fprintf(f, "lid 0x%016x 0x%04x\n", 0x100 + i, i + 1);
	if (extra)
		fputs(extra, f);
	fclose(f);
	return t;
}

static int update(struct sync_journal *j, char *text)
{
	int n = sync_journal_update(j, text, strlen(text));
	free(text);
	return n;
}

START_TEST(full_then_deltas_then_current)
{
	struct sync_journal j;
	struct sync_mirror m = {0};
	struct heard h = {0};
	uint8_t kind;
	sync_journal_init(&j, 0x1234, 0);
	ck_assert_int_eq(update(&j, lines(0, 100, "service 0 abcd\n")), 101);
	ck_assert_int_eq(exchange(&j, &m, &kind, &h), SYNC_APPLIED);
	ck_assert_uint_eq(kind, SYNC_FULL);
	ck_assert_int_eq(h.plus, 101);
	same(&j, &m);
	ck_assert(m.epoch == 0x1234 && m.gen == 1);

	/* a lease renewed (one item changes), ten LIDs go, five come: a delta of exactly that */
	ck_assert_int_eq(update(&j, lines(10, 105, "service 9 abcd\n")), 2 + 10 + 5);
	h = (struct heard){0};
	ck_assert_int_eq(exchange(&j, &m, &kind, &h), SYNC_APPLIED);
	ck_assert_uint_eq(kind, SYNC_DELTA);
	ck_assert_int_eq(h.plus, 6);
	ck_assert_int_eq(h.minus, 11);
	same(&j, &m);
	/* nothing new: nothing sent */
	ck_assert_int_eq(update(&j, lines(10, 105, "service 9 abcd\n")), 0);
	h = (struct heard){0};
	ck_assert_int_eq(exchange(&j, &m, &kind, &h), SYNC_APPLIED);
	ck_assert_uint_eq(kind, SYNC_CURRENT);
	ck_assert_int_eq(h.plus + h.minus, 0);
	/* several generations behind: one delta brings them all, an item added then removed
	 * in between leaves no trace */
	ck_assert_int_gt(update(&j, lines(10, 106, "service 9 abcd\nsub x\n")), 0);
	ck_assert_int_gt(update(&j, lines(10, 107, "service 9 abcd\n")), 0);
	ck_assert_int_gt(update(&j, lines(11, 107, "service 9 abcd\n")), 0);
	h = (struct heard){0};
	ck_assert_int_eq(exchange(&j, &m, &kind, &h), SYNC_APPLIED);
	ck_assert_uint_eq(kind, SYNC_DELTA);
	same(&j, &m);
	ck_assert(m.gen == j.gen);
	sync_journal_free(&j);
	sync_mirror_free(&m);
}
END_TEST

START_TEST(divergence_brings_a_full_copy)
{
	struct sync_journal j;
	struct sync_mirror m = {0};
	struct heard h = {0};
	uint8_t kind;
	sync_journal_init(&j, 7, 0);
	update(&j, lines(0, 50, NULL));
	ck_assert_int_eq(exchange(&j, &m, &kind, &h), SYNC_APPLIED);
	/* the copy changes behind the protocol's back: its checksum tells */
	lineset_add(&m.set, "alias 0x1 1 0x2", 15);
	ck_assert_int_eq(exchange(&j, &m, &kind, &h), SYNC_APPLIED);
	ck_assert_uint_eq(kind, SYNC_FULL);
	same(&j, &m);
	/* a delta onto a copy that lost an item: applied, found diverged, and the next
	 * exchange is a full copy */
	update(&j, lines(0, 51, NULL));
	ck_assert(lineset_del(&m.set, j.cur.lines.v[3], strlen(j.cur.lines.v[3])));
	struct mad_sync_req rq = req_of(&m);
	rq.checksum = j.gens.v[1 - j.base_gen].sum; /* it believes it holds generation 1 */
	rq.count = j.gens.v[1 - j.base_gen].count;
	struct mad_sync_resp r;
	char *p;
	size_t len;
	ck_assert_int_eq(sync_journal_answer(&j, &rq, &r, &p, &len), 0);
	ck_assert_uint_eq(r.kind, SYNC_DELTA);
	ck_assert_int_eq(sync_mirror_apply(&m, &r, p, len, NULL, NULL), SYNC_DIVERGED);
	free(p);
	ck_assert(m.epoch == 0);
	ck_assert_int_eq(exchange(&j, &m, &kind, &h), SYNC_APPLIED);
	ck_assert_uint_eq(kind, SYNC_FULL);
	same(&j, &m);
	/* another master (epoch): a full copy */
	struct sync_journal j2;
	sync_journal_init(&j2, 8, 0);
	update(&j2, lines(5, 20, NULL));
	h = (struct heard){0};
	ck_assert_int_eq(exchange(&j2, &m, &kind, &h), SYNC_APPLIED);
	ck_assert_uint_eq(kind, SYNC_FULL);
	ck_assert_int_eq(h.minus, 51 - 15);
	ck_assert_int_eq(h.plus, 0);
	same(&j2, &m);
	sync_journal_free(&j);
	sync_journal_free(&j2);
	sync_mirror_free(&m);
}
END_TEST

START_TEST(trimmed_journal_falls_back_to_full)
{
	struct sync_journal j;
	struct sync_mirror old = {0}, recent = {0};
	struct heard h = {0};
	uint8_t kind;
	/* 20 items: the journal's own limit (64) is above twice the items, so it rules */
	sync_journal_init(&j, 9, 64);
	update(&j, lines(0, 20, NULL));
	exchange(&j, &old, &kind, &h);
	for (unsigned g = 1; g < 40; g++) {
		update(&j, lines(g, 20 + g, NULL)); /* 2 changes a generation */
		if (g == 30)
			exchange(&j, &recent, &kind, &h);
	}
	ck_assert_uint_le(j.changes.n, 64);
	ck_assert_uint_gt(j.base_gen, 1);
	ck_assert_int_eq(exchange(&j, &old, &kind, &h), SYNC_APPLIED);
	ck_assert_uint_eq(kind, SYNC_FULL);
	ck_assert_int_eq(exchange(&j, &recent, &kind, &h), SYNC_APPLIED);
	ck_assert_uint_eq(kind, SYNC_DELTA);
	same(&j, &old);
	same(&j, &recent);
	sync_journal_free(&j);
	/* 200 items: twice the items rules, so a standby 39 generations behind gets a delta */
	struct sync_mirror behind = {0};
	sync_journal_init(&j, 10, 64);
	update(&j, lines(0, 200, NULL));
	exchange(&j, &behind, &kind, &h);
	for (unsigned g = 1; g < 40; g++)
		update(&j, lines(g, 200 + g, NULL));
	ck_assert_uint_gt(j.changes.n, 64);
	ck_assert_uint_le(j.changes.n, 400);
	ck_assert_int_eq(exchange(&j, &behind, &kind, &h), SYNC_APPLIED);
	ck_assert_uint_eq(kind, SYNC_DELTA);
	same(&j, &behind);
	sync_journal_free(&j);
	sync_mirror_free(&behind);
	sync_mirror_free(&old);
	sync_mirror_free(&recent);
}
END_TEST

START_TEST(malformed_answers_change_nothing)
{
	struct sync_journal j;
	struct sync_mirror m = {0};
	struct heard h = {0};
	uint8_t kind;
	sync_journal_init(&j, 11, 0);
	update(&j, lines(0, 10, NULL));
	exchange(&j, &m, &kind, &h);
	uint64_t sum = m.set.sum;
	struct mad_sync_resp r = {.kind = SYNC_DELTA, .epoch = 11, .from_gen = 1, .to_gen = 2};
	const char *bad[] = {"+no newline", "*x\n", "+\n", "-a\n+b", "+a\0b\n"};
	size_t len[] = {11, 3, 2, 5, 5};
	for (unsigned i = 0; i < 5; i++) {
		struct sync_mirror c = m; /* shallow: a failed apply must not touch the set */
		ck_assert_int_eq(sync_mirror_apply(&c, &r, bad[i], len[i], NULL, NULL),
		                 SYNC_MALFORMED);
		ck_assert(c.epoch == 0);
		ck_assert(m.set.sum == sum);
	}
	/* a delta from a generation the copy is not at */
	r.from_gen = 5;
	ck_assert_int_eq(sync_mirror_apply(&m, &r, "+x\n", 3, NULL, NULL), SYNC_MALFORMED);
	ck_assert(m.set.sum == sum);
	/* a full copy may not remove */
	r.kind = SYNC_FULL;
	ck_assert_int_eq(sync_mirror_apply(&m, &r, "-x\n", 3, NULL, NULL), SYNC_MALFORMED);
	r.kind = 9;
	ck_assert_int_eq(sync_mirror_apply(&m, &r, "", 0, NULL, NULL), SYNC_MALFORMED);
	ck_assert(m.set.sum == sum);
	sync_journal_free(&j);
	sync_mirror_free(&m);
}
END_TEST

START_TEST(wire_round_trip)
{
	struct mad_sync_req q = {.guid = 0x1122334455667788ull,
	                         .epoch = 0xfeedull << 40,
	                         .generation = 77,
	                         .checksum = 0x8000000000000001ull,
	                         .count = 123456,
	                         .digest = {1, 2, 0xffffffffffffffffull}},
	                    q2;
	uint8_t buf[MAD_SYNC_DATA_SIZE] = {0};
	ck_assert_int_eq(mad_sync_req_encode(&q, buf, sizeof(buf), NULL), 0);
	ck_assert_int_eq(mad_sync_req_decode(buf, sizeof(buf), &q2, NULL), 0);
	/* field by field: the structs have padding, which a decoder need not write (memcmp
	 * passed under ASan, which happened to leave both zeroed, and failed at -O2) */
	ck_assert_uint_eq(q2.guid, q.guid);
	ck_assert_uint_eq(q2.epoch, q.epoch);
	ck_assert_uint_eq(q2.generation, q.generation);
	ck_assert_uint_eq(q2.checksum, q.checksum);
	ck_assert_uint_eq(q2.count, q.count);
	ck_assert(memcmp(q2.digest, q.digest, sizeof(q.digest)) == 0);
	ck_assert_uint_eq(buf[0], 0x11); /* big-endian on the wire */
	struct mad_sync_resp r = {.kind = SYNC_DELTA,
	                          .epoch = 3,
	                          .from_gen = 4,
	                          .to_gen = 5,
	                          .checksum = 6,
	                          .count = 7,
	                          .payload_len = 8,
	                          .digest = {9, 10, 11}},
	                     r2;
	ck_assert_int_eq(mad_sync_resp_encode(&r, buf, sizeof(buf), NULL), 0);
	ck_assert_int_eq(mad_sync_resp_decode(buf, MAD_SYNC_RESP_SIZE, &r2, NULL), 0);
	ck_assert_uint_eq(r2.kind, r.kind);
	ck_assert_uint_eq(r2.epoch, r.epoch);
	ck_assert_uint_eq(r2.from_gen, r.from_gen);
	ck_assert_uint_eq(r2.to_gen, r.to_gen);
	ck_assert_uint_eq(r2.checksum, r.checksum);
	ck_assert_uint_eq(r2.count, r.count);
	ck_assert_uint_eq(r2.payload_len, r.payload_len);
	ck_assert(memcmp(r2.digest, r.digest, sizeof(r.digest)) == 0);
	ck_assert_int_lt(mad_sync_resp_decode(buf, MAD_SYNC_RESP_SIZE - 1, &r2, NULL), 0);
	uint8_t mad[256] = {0};
	mad_sync_set_oui(mad);
	ck_assert_uint_eq(mad_sync_get_oui(mad), MAD_SYNC_OUI);
	ck_assert_uint_eq(mad[36], 0);
}
END_TEST

/* The MACs: a request or an answer is taken only as it was made, by a holder of the same
 * key, for the port it names and (an answer) for the request it answers. */
START_TEST(macs_bind_key_guids_nonce_and_bytes)
{
	struct ibsmd_config c;
	config_defaults(&c);
	c.sm_key = 0x5ec1e7;
	struct sync_auth a, other;
	ck_assert_int_eq(sync_auth_init(&a, &c), 0);
	c.sm_key = 0x5ec1e8;
	ck_assert_int_eq(sync_auth_init(&other, &c), 0);
	ck_assert(!a.from_secret);

	uint8_t req[MAD_SYNC_DATA_SIZE] = {0};
	struct mad_sync_req q = {.guid = 0x100003, .epoch = 9, .generation = 4};
	ck_assert_int_eq(mad_sync_req_encode(&q, req, sizeof(req), NULL), 0);
	memset(req + MAD_SYNC_REQ_NONCE_AT, 0xa5, MAD_SYNC_NONCE_BYTES);
	sync_auth_sign_req(&a, 0x100001, req);
	ck_assert(sync_auth_check_req(&a, 0x100001, req));
	ck_assert(!sync_auth_check_req(&a, 0x100005, req));     /* meant for another master */
	ck_assert(!sync_auth_check_req(&other, 0x100001, req)); /* another subnet's key */
	req[0] ^= 1;                                            /* another requester GUID */
	ck_assert(!sync_auth_check_req(&a, 0x100001, req));
	req[0] ^= 1;
	req[MAD_SYNC_REQ_NONCE_AT] ^= 1;
	ck_assert(!sync_auth_check_req(&a, 0x100001, req));
	req[MAD_SYNC_REQ_NONCE_AT] ^= 1;
	req[MAD_SYNC_DATA_SIZE - 1] ^= 1; /* even the reserved bytes are covered */
	ck_assert(!sync_auth_check_req(&a, 0x100001, req));
	req[MAD_SYNC_DATA_SIZE - 1] ^= 1;
	memset(req + MAD_SYNC_REQ_MAC_AT, 0, MAD_SYNC_MAC_BYTES); /* no MAC at all */
	ck_assert(!sync_auth_check_req(&a, 0x100001, req));

	uint8_t nonce[MAD_SYNC_NONCE_BYTES], nonce2[MAD_SYNC_NONCE_BYTES];
	memset(nonce, 1, sizeof(nonce));
	memset(nonce2, 2, sizeof(nonce2));
	uint8_t body[MAD_SYNC_RESP_SIZE + 5] = {0};
	struct mad_sync_resp r = {.kind = SYNC_FULL, .payload_len = 5, .count = 1};
	ck_assert_int_eq(mad_sync_resp_encode(&r, body, MAD_SYNC_RESP_SIZE, NULL), 0);
	memcpy(body + MAD_SYNC_RESP_SIZE, "+a 1\n", 5);
	sync_auth_sign_resp(&a, 0x100003, nonce, body, sizeof(body));
	ck_assert(sync_auth_check_resp(&a, 0x100003, nonce, body, sizeof(body)));
	ck_assert(!sync_auth_check_resp(&a, 0x100003, nonce2, body, sizeof(body))); /* replayed */
	ck_assert(!sync_auth_check_resp(&a, 0x100005, nonce, body, sizeof(body)));  /* not ours */
	ck_assert(!sync_auth_check_resp(&other, 0x100003, nonce, body, sizeof(body)));
	ck_assert(!sync_auth_check_resp(&a, 0x100003, nonce, body, sizeof(body) - 1));
	ck_assert(!sync_auth_check_resp(&a, 0x100003, nonce, body, 10)); /* shorter than a header */
	body[MAD_SYNC_RESP_SIZE + 1] = 'b';                              /* a changed line */
	ck_assert(!sync_auth_check_resp(&a, 0x100003, nonce, body, sizeof(body)));
	sync_auth_wipe(&a);
	sync_auth_wipe(&other);
}
END_TEST

/* The SM's item lines, which the state files and the sync share: each reads back what it
 * wrote, and a line of another kind or out of range is refused. */
START_TEST(saved_lines_read_back)
{
	char buf[256];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	ck_assert_ptr_nonnull(f);
	sm_saved_put_lid(f, 0x100003, 0x2a);
	sm_saved_put_mkey(f, 0x100003, 0x5eed);
	sm_saved_put_hop(f, 0x200000, 7, 0x100005);
	fclose(f);
	/* byte for byte what the mkeys files and the standbys of earlier versions hold */
	ck_assert_str_eq(buf, "lid 0x0000000000100003 0x002a\n"
	                      "mkey 0x0000000000100003 0x0000000000005eed\n"
	                      "hop 0x0000000000200000 7 0x0000000000100005\n");
	char *save, *line = strtok_r(buf, "\n", &save);
	uint64_t g, k;
	uint16_t lid;
	uint8_t port;
	ck_assert_int_eq(sm_saved_kind(line), SM_SAVED_LID);
	ck_assert(sm_saved_parse_lid(line, &g, &lid) && g == 0x100003 && lid == 0x2a);
	ck_assert(!sm_saved_parse_mkey(line, &g, &k));
	line = strtok_r(NULL, "\n", &save);
	ck_assert_int_eq(sm_saved_kind(line), SM_SAVED_MKEY);
	ck_assert(sm_saved_parse_mkey(line, &g, &k) && g == 0x100003 && k == 0x5eed);
	line = strtok_r(NULL, "\n", &save);
	ck_assert_int_eq(sm_saved_kind(line), SM_SAVED_HOP);
	ck_assert(sm_saved_parse_hop(line, &g, &port, &k) && g == 0x200000 && port == 7 &&
	          k == 0x100005);
	char one[64];
	ck_assert_int_eq(sm_saved_lid_line(one, sizeof(one), 0x100003, 0x2a),
	                 (int)strlen("lid 0x0000000000100003 0x002a"));
	ck_assert(!sm_saved_parse_lid("lid 0x100003 0xc000", &g, &lid)); /* multicast */
	ck_assert(!sm_saved_parse_hop("hop 0x200000 0 0x100005", &g, &port, &k));
	ck_assert(!sm_saved_parse_hop("hop 0x200000 255 0x100005", &g, &port, &k));
	ck_assert_int_eq(sm_saved_kind("service 0x1 2"), SM_SAVED_NONE);
	ck_assert_int_eq(sm_saved_kind("lids 0x1 2"), SM_SAVED_NONE); /* a word, not a prefix */
	ck_assert(!sm_saved_parse_hop("mkey 0x200000 7 0x100005", &g, &port, &k));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sync");
	TCase *tc = tcase_create("all");
	tcase_add_test(tc, full_then_deltas_then_current);
	tcase_add_test(tc, divergence_brings_a_full_copy);
	tcase_add_test(tc, trimmed_journal_falls_back_to_full);
	tcase_add_test(tc, malformed_answers_change_nothing);
	tcase_add_test(tc, wire_round_trip);
	tcase_add_test(tc, macs_bind_key_guids_nonce_and_bytes);
	tcase_add_test(tc, saved_lines_read_back);
	suite_add_tcase(s, tc);
	return check_run(s);
}
