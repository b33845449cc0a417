/* daemon/api_parse.c: the partition API's request bodies as ib-kubernetes sends them and as
 * they go wrong, P_Keys and GUIDs, and the users file (its mode, its lines, the password
 * check and its cache). */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_run.h"
#include "daemon/api_parse.h"

static int parse(const char *body, enum api_req_kind kind, struct api_pkey_req *r, char *why)
{
	why[0] = 0;
	return api_parse_pkey_req(body, strlen(body), kind, r, why, 256);
}

START_TEST(ib_kubernetes_add)
{
	/* byte for byte what its UFM plugin formats (AddGuidsToPKey) */
	const char *body = "{\"pkey\": \"0x0A0B\", \"index0\": true, \"ip_over_ib\": true, "
	                   "\"membership\": \"full\", \"guids\": [\"020000000000003e\","
	                   "\"02000FF000FF0009\",\"020000000000003e\"]}";
	struct api_pkey_req r;
	char why[256];
	ck_assert_int_eq(parse(body, API_REQ_ADD, &r, why), 0);
	ck_assert_uint_eq(r.pkey, 0x0a0b);
	ck_assert(r.index0 && r.ip_over_ib && r.full);
	ck_assert_uint_eq(r.nguids, 2); /* the repeated GUID once */
	ck_assert_uint_eq(r.guids[0], 0x020000000000003eull);
	ck_assert_uint_eq(r.guids[1], 0x02000ff000ff0009ull);
	api_pkey_req_free(&r);
}
END_TEST

START_TEST(ib_kubernetes_remove_and_defaults)
{
	struct api_pkey_req r;
	char why[256];
	ck_assert_int_eq(parse("{\"pkey\": \"0x8001\", \"guids\": [\"0x0002c90300000001\"]}",
	                       API_REQ_REMOVE, &r, why),
	                 0);
	ck_assert_uint_eq(r.pkey, 1); /* bit 15 is membership: UFM takes 0x8001 for 0x0001 */
	ck_assert_uint_eq(r.nguids, 1);
	api_pkey_req_free(&r);
	/* UFM's defaults: index0 false, ip_over_ib true, full */
	ck_assert_int_eq(parse("{\"pkey\": \"5\", \"guids\": []}", API_REQ_ADD, &r, why), 0);
	ck_assert(!r.index0 && r.ip_over_ib && r.full && r.nguids == 0);
	api_pkey_req_free(&r);
	ck_assert_int_eq(parse("{\"pkey\":\"0x5\",\"membership\":\"limited\",\"guids\":[]}",
	                       API_REQ_ADD, &r, why),
	                 0);
	ck_assert(!r.full);
	api_pkey_req_free(&r);
}
END_TEST

/* Each refused with a reason naming what is wrong. */
START_TEST(bad_bodies)
{
	static const struct {
		const char *body, *says;
		enum api_req_kind kind;
	} cases[] = {
	    {"", "not JSON", API_REQ_ADD},
	    {"{\"pkey\": \"0x1\", \"guids\": [", "not JSON", API_REQ_ADD},
	    {"[1, 2]", "JSON object", API_REQ_ADD},
	    {"{\"guids\": []}", "\"pkey\" is missing", API_REQ_ADD},
	    {"{\"pkey\": \"0x1\"}", "\"guids\" is missing", API_REQ_REMOVE},
	    {"{\"pkey\": \"0x7fff\", \"guids\": []}", "\"pkey\"", API_REQ_ADD},
	    {"{\"pkey\": \"0x0\", \"guids\": []}", "\"pkey\"", API_REQ_ADD},
	    {"{\"pkey\": \"0x10000\", \"guids\": []}", "\"pkey\"", API_REQ_ADD},
	    {"{\"pkey\": 10, \"guids\": []}", "\"pkey\"", API_REQ_ADD},
	    {"{\"pkey\": \"0x1\", \"pkey\": \"0x2\", \"guids\": []}", "duplicate", API_REQ_ADD},
	    {"{\"pkey\": \"0x1\", \"guids\": \"0x1\"}", "\"guids\": expected a list", API_REQ_ADD},
	    {"{\"pkey\": \"0x1\", \"guids\": [\"123\"]}", "\"guids\"[0]", API_REQ_ADD},
	    {"{\"pkey\": \"0x1\", \"guids\": [\"0x0000000000000000\"]}", "\"guids\"[0]",
	     API_REQ_ADD},
	    {"{\"pkey\": \"0x1\", \"guids\": [\"00000000000000001\"]}", "\"guids\"[0]",
	     API_REQ_ADD},
	    {"{\"pkey\": \"0x1\", \"guids\": [1]}", "\"guids\"[0]", API_REQ_ADD},
	    {"{\"pkey\": \"0x1\", \"guids\": [], \"membership\": \"both\"}", "\"membership\"",
	     API_REQ_ADD},
	    {"{\"pkey\": \"0x1\", \"guids\": [], \"index0\": \"yes\"}", "\"index0\"", API_REQ_ADD},
	    {"{\"pkey\": \"0x1\", \"guids\": [], \"mtu_limit\": 4}",
	     "\"mtu_limit\": not a parameter", API_REQ_ADD},
	    /* a remove takes no add parameters */
	    {"{\"pkey\": \"0x1\", \"guids\": [], \"index0\": true}", "\"index0\": not a parameter",
	     API_REQ_REMOVE},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct api_pkey_req r;
		char why[256];
		ck_assert_msg(parse(cases[i].body, cases[i].kind, &r, why) < 0, "%s taken",
		              cases[i].body);
		ck_assert_msg(strstr(why, cases[i].says), "%s: \"%s\", not \"%s\"", cases[i].body,
		              why, cases[i].says);
		api_pkey_req_free(&r);
	}
}
END_TEST

/* UFM's "memberships": one per GUID in "guids", in its order (a GUID given twice takes the
 * later's); "membership" beside it, or a list of another length, is refused. PUT (set)
 * takes the add's parameters. */
START_TEST(memberships_and_set)
{
	struct api_pkey_req r;
	char why[256];
	ck_assert_int_eq(parse("{\"pkey\": \"0x12\", \"guids\": [\"0000000000000001\", "
	                       "\"0000000000000002\", \"0000000000000001\"], \"memberships\": "
	                       "[\"full\", \"limited\", \"limited\"], \"index0\": true}",
	                       API_REQ_SET, &r, why),
	                 0);
	ck_assert_uint_eq(r.nguids, 2);
	ck_assert_ptr_nonnull(r.fulls);
	ck_assert(!r.fulls[0] && !r.fulls[1] && r.index0);
	api_pkey_req_free(&r);
	ck_assert_int_eq(
	    parse("{\"pkey\": \"0x12\", \"guids\": [\"0000000000000001\"]}", API_REQ_ADD, &r, why),
	    0);
	ck_assert_ptr_null(r.fulls); /* not given: "membership" for all */
	api_pkey_req_free(&r);
	static const struct {
		const char *body, *says;
	} bad[] = {
	    {"{\"pkey\": \"0x1\", \"guids\": [\"0000000000000001\"], \"memberships\": "
	     "[\"full\"], \"membership\": \"full\"}",
	     "one or the other"},
	    {"{\"pkey\": \"0x1\", \"guids\": [\"0000000000000001\"], \"memberships\": []}",
	     "0 entries for 1 GUIDs"},
	    {"{\"pkey\": \"0x1\", \"guids\": [\"0000000000000001\"], \"memberships\": "
	     "[\"both\"]}",
	     "\"memberships\"[0]"},
	    {"{\"pkey\": \"0x1\", \"guids\": [], \"memberships\": \"full\"}", "expected a list"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(parse(bad[i].body, API_REQ_ADD, &r, why) < 0, "%s taken",
		              bad[i].body);
		ck_assert_msg(strstr(why, bad[i].says), "%s: \"%s\"", bad[i].body, why);
		api_pkey_req_free(&r);
	}
	ck_assert_int_lt(parse("{\"pkey\": \"0x1\", \"guids\": [], \"memberships\": []}",
	                       API_REQ_REMOVE, &r, why),
	                 0);
	api_pkey_req_free(&r);
}
END_TEST

/* DELETE .../pkeys/PKEY/guids/G1,G2: the path's GUIDs */
START_TEST(guid_lists)
{
	struct api_pkey_req r;
	char why[256];
	ck_assert_int_eq(api_parse_guid_list("0002c90300000001,0x0002C90300000002,0002c90300000001",
	                                     &r, why, sizeof(why)),
	                 0);
	ck_assert_uint_eq(r.nguids, 2);
	ck_assert_uint_eq(r.guids[1], 0x0002c90300000002ull);
	api_pkey_req_free(&r);
	const char *bad[] = {"",
	                     ",",
	                     "0002c90300000001,",
	                     "123",
	                     "0002c90300000001;x",
	                     "00000000000000000000000000000001"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(api_parse_guid_list(bad[i], &r, why, sizeof(why)) < 0, "\"%s\" taken",
		              bad[i]);
		ck_assert_msg(strstr(why, "GUID"), "%s", why);
		api_pkey_req_free(&r);
	}
}
END_TEST

START_TEST(too_many_guids)
{
	size_t cap = 64 + (API_MAX_GUIDS + 1) * 20;
	char *body = malloc(cap);
	size_t n = (size_t)snprintf(body, cap, "{\"pkey\": \"0x1\", \"guids\": [");
	for (unsigned i = 0; i <= API_MAX_GUIDS; i++)
		n += (size_t)snprintf(body + n, cap - n, "%s\"%016x\"", i ? "," : "", i + 1);
	snprintf(body + n, cap - n, "]}");
	struct api_pkey_req r;
	char why[256];
	ck_assert_int_lt(parse(body, API_REQ_ADD, &r, why), 0);
	ck_assert_ptr_nonnull(strstr(why, "at most"));
	api_pkey_req_free(&r);
	free(body);
}
END_TEST

START_TEST(pkeys_and_guids)
{
	uint16_t pk;
	uint64_t g;
	ck_assert_int_eq(api_parse_pkey("0x0a0b", &pk), 0);
	ck_assert_uint_eq(pk, 0x0a0b);
	ck_assert_int_eq(api_parse_pkey("A0B", &pk), 0);
	ck_assert_int_eq(api_parse_pkey("0x7ffe", &pk), 0);
	ck_assert_int_lt(api_parse_pkey("0xffff", &pk), 0); /* 0x7fff with bit 15 */
	ck_assert_int_lt(api_parse_pkey("", &pk), 0);
	ck_assert_int_lt(api_parse_pkey("0x", &pk), 0);
	ck_assert_int_lt(api_parse_pkey("0x0a0b?x", &pk), 0);
	ck_assert_int_eq(api_parse_guid("0x0002C90300000001", &g), 0);
	ck_assert_uint_eq(g, 0x0002c90300000001ull);
	ck_assert_int_lt(api_parse_guid("02:00:00:00:00:00:00:3e", &g), 0);
}
END_TEST

/* A hash at libsodium's minimum cost: the test checks the logic, not the cost. */
static void user_line(char *out, size_t len, const char *name, const char *pass)
{
	char hash[crypto_pwhash_STRBYTES];
	ck_assert_int_eq(crypto_pwhash_str(hash, pass, strlen(pass), crypto_pwhash_OPSLIMIT_MIN,
	                                   crypto_pwhash_MEMLIMIT_MIN),
	                 0);
	snprintf(out, len, "%s:%s\n", name, hash);
}

/* UFM's /pkeys/add as its guide's example has it, and qos_conf as NVIDIA's client sends it */
START_TEST(partition_requests)
{
	struct api_partition_req r;
	char why[256] = "";
	const char *add = "{\"pkey\":\"0x12\",\"index0\":false,\"ip_over_ib\":true,"
	                  "\"mtu_limit\":2,\"service_level\":0,\"rate_limit\":2.5,"
	                  "\"partition_name\":\"user_partition\"}";
	ck_assert_int_eq(api_parse_partition_req(add, strlen(add), false, &r, why, sizeof(why)), 0);
	ck_assert_uint_eq(r.pkey, 0x12);
	ck_assert(r.has_index0 && !r.index0 && r.has_ipoib && r.ipoib);
	ck_assert(r.has_mtu && r.has_rate && r.has_sl && r.has_name);
	ck_assert_uint_eq(r.mtu, 4);  /* 2 KB: 2048 */
	ck_assert_uint_eq(r.rate, 2); /* 2.5 Gb/s */
	ck_assert_uint_eq(r.sl, 0);
	ck_assert_str_eq(r.name, "user_partition");
	const char *only = "{\"pkey\":\"0x8013\"}"; /* everything else kept or defaulted */
	ck_assert_int_eq(api_parse_partition_req(only, strlen(only), false, &r, why, sizeof(why)),
	                 0);
	ck_assert_uint_eq(r.pkey, 0x13);
	ck_assert(!r.has_index0 && !r.has_ipoib && !r.has_mtu && !r.has_rate && !r.has_sl &&
	          !r.has_name);
	const char *qos = "{\"pkey\":\"0x2fb\",\"mtu_limit\":4,\"service_level\":5,"
	                  "\"rate_limit\":200}";
	ck_assert_int_eq(api_parse_partition_req(qos, strlen(qos), true, &r, why, sizeof(why)), 0);
	ck_assert_uint_eq(r.mtu, 5);   /* 4 KB: 4096 */
	ck_assert_uint_eq(r.rate, 17); /* 200 Gb/s */
	ck_assert_uint_eq(r.sl, 5);
	const struct {
		const char *body;
		bool qos;
		const char *says;
	} bad[] = {
	    {"{\"index0\":true}", false, "\"pkey\" is missing"},
	    {"{\"pkey\":\"0x7fff\"}", false, "\"pkey\""},
	    {"{\"pkey\":\"0x12\",\"mtu_limit\":3}", false, "\"mtu_limit\""},
	    {"{\"pkey\":\"0x12\",\"mtu_limit\":\"2\"}", false, "\"mtu_limit\""},
	    {"{\"pkey\":\"0x12\",\"rate_limit\":7}", false, "\"rate_limit\""},
	    {"{\"pkey\":\"0x12\",\"rate_limit\":-1}", false, "\"rate_limit\""},
	    {"{\"pkey\":\"0x12\",\"rate_limit\":1e300}", false, "\"rate_limit\""},
	    {"{\"pkey\":\"0x12\",\"service_level\":16}", false, "\"service_level\""},
	    {"{\"pkey\":\"0x12\",\"service_level\":1.5}", false, "\"service_level\""},
	    {"{\"pkey\":\"0x12\",\"partition_name\":\"\"}", false, "\"partition_name\""},
	    {"{\"pkey\":\"0x12\",\"guids\":[]}", false, "members are added with POST"},
	    {"{\"pkey\":\"0x12\",\"index0\":true,\"mtu_limit\":2}", true, "\"index0\""},
	    {"{\"pkey\":\"0x12\"}", true, "nothing to change"},
	    {"[\"pkey\"]", false, "a JSON object"},
	    {"{\"pkey\":\"0x12\",\"pkey\":\"0x13\"}", false, "not JSON"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = 0;
		ck_assert_msg(api_parse_partition_req(bad[i].body, strlen(bad[i].body), bad[i].qos,
		                                      &r, why, sizeof(why)) < 0,
		              "taken: %s", bad[i].body);
		ck_assert_msg(strstr(why, bad[i].says), "%s: \"%s\" does not say %s", bad[i].body,
		              why, bad[i].says);
	}
}
END_TEST

START_TEST(users_check)
{
	char text[1024], a[300], b[300], why[256];
	user_line(a, sizeof(a), "alice", "s3cret");
	user_line(b, sizeof(b), "bob@site", "other");
	snprintf(text, sizeof(text), "# users\n\n%s%s", a, b);
	struct api_users u;
	ck_assert_int_eq(api_users_parse(&u, text, strlen(text), "users", why, sizeof(why)), 0);
	ck_assert_uint_eq(u.n, 2);
	ck_assert_int_eq(api_users_check(&u, "nobody", "s3cret", true), API_AUTH_UNKNOWN_USER);
	ck_assert_int_eq(api_users_check(&u, "alice", "wrong", true), API_AUTH_BAD_PASSWORD);
	/* without the full check nothing is known yet */
	ck_assert_int_eq(api_users_check(&u, "alice", "s3cret", false), API_AUTH_NEED_VERIFY);
	ck_assert_int_eq(api_users_check(&u, "alice", "s3cret", true), API_AUTH_OK);
	/* then the cache knows that password, and only it */
	ck_assert_int_eq(api_users_check(&u, "alice", "s3cret", false), API_AUTH_CACHED);
	ck_assert_int_eq(api_users_check(&u, "alice", "s3cret ", false), API_AUTH_NEED_VERIFY);
	ck_assert_int_eq(api_users_check(&u, "bob@site", "s3cret", true), API_AUTH_BAD_PASSWORD);
	ck_assert_int_eq(api_users_check(&u, "bob@site", "other", true), API_AUTH_OK);
	api_users_free(&u);
}
END_TEST

START_TEST(users_bad_lines)
{
	char a[300], text[1024], why[256];
	user_line(a, sizeof(a), "alice", "x");
	static const struct {
		const char *text, *says;
	} cases[] = {
	    {"", "no users"},
	    {"# only a comment\n", "no users"},
	    {"alice\n", "users:1: expected NAME:HASH"},
	    {"al ice:$argon2id$v=19$m=8,t=1,p=1$x$y\n", "users:1: expected NAME:HASH"},
	    {":$argon2id$v=19$m=8,t=1,p=1$x$y\n", "users:1: expected NAME:HASH"},
	    {"\nalice:plaintext\n", "users:2: the hash"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct api_users u;
		ck_assert_int_lt(api_users_parse(&u, cases[i].text, strlen(cases[i].text), "users",
		                                 why, sizeof(why)),
		                 0);
		ck_assert_msg(strstr(why, cases[i].says), "\"%s\": %s", cases[i].text, why);
	}
	snprintf(text, sizeof(text), "%s%s", a, a);
	struct api_users u;
	ck_assert_int_lt(api_users_parse(&u, text, strlen(text), "users", why, sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "users:2: user \"alice\" given twice"));
}
END_TEST

START_TEST(users_file_mode)
{
	char path[] = "/tmp/test_api_users.XXXXXX", line[300], why[512];
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	user_line(line, sizeof(line), "alice", "pw");
	ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	close(fd);
	struct api_users u;
	chmod(path, 0644);
	ck_assert_int_lt(api_users_load(&u, path, why, sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "mode 0644"));
	ck_assert_ptr_nonnull(strstr(why, path));
	chmod(path, 0640);
	ck_assert_int_lt(api_users_load(&u, path, why, sizeof(why)), 0);
	chmod(path, 0600);
	ck_assert_int_eq(api_users_load(&u, path, why, sizeof(why)), 0);
	ck_assert_int_eq(api_users_check(&u, "alice", "pw", true), API_AUTH_OK);
	api_users_free(&u);
	unlink(path);
	ck_assert_int_lt(api_users_load(&u, path, why, sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "No such file"));
}
END_TEST

int main(void)
{
	if (sodium_init() < 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("api_parse");
	TCase *tc = tcase_create("api_parse");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ib_kubernetes_add);
	tcase_add_test(tc, ib_kubernetes_remove_and_defaults);
	tcase_add_test(tc, bad_bodies);
	tcase_add_test(tc, too_many_guids);
	tcase_add_test(tc, memberships_and_set);
	tcase_add_test(tc, guid_lists);
	tcase_add_test(tc, pkeys_and_guids);
	tcase_add_test(tc, partition_requests);
	tcase_add_test(tc, users_check);
	tcase_add_test(tc, users_bad_lines);
	tcase_add_test(tc, users_file_mode);
	suite_add_tcase(s, tc);
	return check_run(s);
}
