/* config/: defaults, a full YAML file, and bad files refused with FILE:LINE and the reason,
 * leaving nothing half-read that matters. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "check_run.h"

static char path[64];

/* Write text to a fresh file and load it over the defaults. */
static int load(struct ibsmd_config *c, const char *text, char *err, size_t errlen)
{
	snprintf(path, sizeof(path), "/tmp/test_config.XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	config_defaults(c);
	err[0] = 0;
	int rc = config_load(c, path, err, errlen);
	unlink(path);
	return rc;
}

START_TEST(defaults_are_sane)
{
	struct ibsmd_config c;
	config_defaults(&c);
	char err[256];
	ck_assert_int_eq(config_check(&c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.routing_engines, "minhop");
	ck_assert_uint_eq(c.lmc, 0);
	ck_assert_uint_ge(c.lid_max, c.lid_min);
	ck_assert_uint_gt(c.mad_timeout_ms, 0);
	ck_assert_uint_eq(c.npartitions, 0);
	config_free(&c);
}
END_TEST

START_TEST(full_file)
{
	struct ibsmd_config c;
	char err[256];
	ck_assert_msg(load(&c,
	                   "# a site's configuration\n"
	                   "routing_engine: updn,minhop\n"
	                   "root_guids: [0x0002c90300000001, 0x0002c90300000002]\n"
	                   "lmc: 2\n"
	                   "sweep_interval: 15\n"
	                   "sm_key: 0x1234\n"
	                   "sm_priority: 7\n"
	                   "log_level: info\n"
	                   "default_ipoib_rate: 40\n"
	                   "partitions:\n"
	                   "  - name: Default\n"
	                   "    pkey: 0x7fff\n"
	                   "    members: all\n"
	                   "    membership: limited\n"
	                   "  - name: storage\n"
	                   "    pkey: 0x8010\n"
	                   "    members: [0x10, 0x11]\n"
	                   "    ipoib: true\n"
	                   "    mtu: 4096\n",
	                   err, sizeof(err)) == 0,
	              "%s", err);
	ck_assert_str_eq(c.routing_engines, "updn,minhop");
	ck_assert_uint_eq(c.nroots, 2);
	ck_assert_uint_eq(c.root_guids[1], 0x0002c90300000002ull);
	ck_assert_uint_eq(c.lmc, 2);
	ck_assert_uint_eq(c.sweep_interval_s, 15);
	ck_assert_uint_eq(c.sm_key, 0x1234);
	ck_assert_uint_eq(c.sm_priority, 7);
	ck_assert_int_eq(c.log_level, LOGL_INFO);
	ck_assert_uint_eq(c.npartitions, 2);
	const struct config_partition *d = &c.partitions[0], *s = &c.partitions[1];
	ck_assert_uint_eq(d->nmembers, 1);
	ck_assert_uint_eq(d->members[0].kind, CM_ALL);
	ck_assert_uint_eq(d->defmember, CM_LIMITED);
	ck_assert(d->ipoib); /* the default partition keeps its broadcast group unless told */
	ck_assert_str_eq(s->name, "storage");
	ck_assert_uint_eq(s->pkey, 0x0010); /* the membership bit is per member, not the key's */
	ck_assert_uint_eq(s->nmembers, 2);
	ck_assert_uint_eq(s->defmember, CM_FULL);
	ck_assert_uint_eq(s->members[1].kind, CM_GUID);
	ck_assert_uint_eq(s->members[1].guid, 0x11);
	ck_assert_uint_eq(s->ipoib_mtu, 5); /* IBA code for 4096 */
	ck_assert_int_eq(config_check(&c, err, sizeof(err)), 0);
	config_free(&c);
}
END_TEST

/* Each bad file: refused, with the file, the line and what is wrong. */
static const struct {
	const char *text, *line, *says;
} bad[] = {
    {"lmc: 8\n", ":1:", "lmc"},
    {"routing_engine: updn\nsweep_intervall: 10\n", ":2:", "unknown option \"sweep_intervall\""},
    {"sm_priority: high\n", ":1:", "sm_priority"},
    {"log_level: loud\n", ":1:", "log_level"},
    {"partitions:\n  - name: a\n    members: all\n", ":2:", "no pkey"},
    {"partitions:\n  - name: a\n    pkey: 0\n    members: all\n", ":3:", "pkey: 0"},
    {"partitions:\n  - name: a\n    pkey: 1\n    membership: half\n    members: all\n",
     ":4:", "full, limited or both"},
    {"partitions: 3\n", ":1:", "expected a list"},
    {"lmc: [1\n", ":", "expected"},
    {"- a list\n", ":1:", "mapping"},
    {"default_ipoib_rate: 7\n", ":1:", "rate"},
    {"sa_services_per_port: 0\n", ":1:", "sa_services_per_port"},
    {"sm_priority: 1\nsa_groups_per_port: 16384\n", ":2:", "sa_groups_per_port"},
    {"virt_max_ports_in_process: 0\n", ":1:", "virt_max_ports_in_process"},
    {"sm_priority: 2\nvirt_max_lids_per_port: 70000\n", ":2:", "virt_max_lids_per_port"},
    {"api_max_partitions: 16384\n", ":1:", "api_max_partitions"},
    {"head_of_queue_lifetime: 32\n", ":1:", "head_of_queue_lifetime"},
    {"lmc: 0\nleaf_vl_stall_count: 8\n", ":2:", "leaf_vl_stall_count"},
    {"link_width_enabled: 256\n", ":1:", "link_width_enabled"},
    {"prefix_routes: \"* *\"\n", ":1:", "a list"},
    {"prefix_routes:\n  - \"* 0xzz\"\n", ":2:", "PREFIX ROUTER"},
    {"prefix_routes:\n  - \"0x10\"\n", ":2:", "PREFIX ROUTER"},
    {"prefix_routes:\n  - \"0x10 * extra\"\n", ":2:", "PREFIX ROUTER"},
    {"link_speed_ext_enabled: 32\n", ":1:", "link_speed_ext_enabled"},
    {"partitions:\n  - {name: a, pkey: 2, members: all, mtu_limit: 3000}\n", ":2:", "mtu_limit"},
    {"partitions:\n  - {name: a, pkey: 2, members: all, rate_limit: 7}\n", ":2:", "rate_limit"},
};

START_TEST(bad_file_named)
{
	struct ibsmd_config c;
	char err[256];
	ck_assert_int_eq(load(&c, bad[_i].text, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, path) == err, "no file name in \"%s\"", err);
	ck_assert_msg(strstr(err, bad[_i].line), "no line %s in \"%s\"", bad[_i].line, err);
	ck_assert_msg(strstr(err, bad[_i].says) || strcasestr(err, bad[_i].says),
	              "\"%s\" does not say %s", err, bad[_i].says);
	config_free(&c);
}
END_TEST

START_TEST(checks_across_keys)
{
	struct ibsmd_config c;
	char err[256];
	ck_assert_int_eq(load(&c, "lid_min: 100\nlid_max: 50\n", err, sizeof(err)), 0);
	ck_assert_int_eq(config_check(&c, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "100-50"));
	config_free(&c);
	ck_assert_int_eq(load(&c, "lmc: 3\nlid_min: 1\nlid_max: 4\n", err, sizeof(err)), 0);
	ck_assert_int_eq(config_check(&c, err, sizeof(err)), -1);
	config_free(&c);
	ck_assert_int_eq(load(&c,
	                      "partitions:\n"
	                      "  - {name: a, pkey: 0x10, members: all}\n"
	                      "  - {name: b, pkey: 0x8010, members: all}\n",
	                      err, sizeof(err)),
	                 0);
	ck_assert_int_eq(config_check(&c, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "0x0010"));
	config_free(&c);
	/* IBA's reserved link speeds and widths, which a port would refuse */
	const char *reserved[] = {"link_speed_enabled: 9\n", "lmc: 0\nlink_width_enabled: 32\n",
	                          "link_speed_ext_enabled: 16\n"};
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_int_eq(load(&c, reserved[i], err, sizeof(err)), 0);
		ck_assert_int_eq(config_check(&c, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, i == 1 ? ":2:" : ":1:") && strstr(err, "is reserved"),
		              "%s", err);
		config_free(&c);
	}
	/* prefix routes as OpenSM's file has them: hex with or without 0x, * for any */
	ck_assert_int_eq(load(&c,
	                      "prefix_routes: [\"* *\", \"fe8000000000abcd 0x0002c903000000a1\"]\n",
	                      err, sizeof(err)),
	                 0);
	ck_assert_uint_eq(c.nprefix_routes, 2);
	ck_assert_uint_eq(c.prefix_routes[0].prefix, 0);
	ck_assert_uint_eq(c.prefix_routes[0].router, 0);
	ck_assert_uint_eq(c.prefix_routes[1].prefix, 0xfe8000000000abcdull);
	ck_assert_uint_eq(c.prefix_routes[1].router, 0x0002c903000000a1ull);
	config_free(&c);
	ck_assert_int_eq(load(&c,
	                      "link_speed_enabled: 15\nlink_width_enabled: 2\n"
	                      "link_speed_ext_enabled: 30\n",
	                      err, sizeof(err)),
	                 0);
	ck_assert_int_eq(config_check(&c, err, sizeof(err)), 0);
	config_free(&c);
	/* the partition API: a certificate without its key, and no users file */
	ck_assert_int_eq(load(&c, "api_tls_cert: /etc/c.pem\n", err, sizeof(err)), 0);
	ck_assert_int_eq(config_check(&c, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":1:"));
	ck_assert_ptr_nonnull(strstr(err, "api_tls_cert and api_tls_key: give both"));
	config_free(&c);
	/* virtualization: one of three words, named with its line */
	ck_assert_int_eq(load(&c, "sm_priority: 1\nvirtualization: on\n", err, sizeof(err)), 0);
	ck_assert_int_eq(config_check(&c, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":2:"));
	ck_assert_ptr_nonnull(strstr(err, "manage, disable or ignore"));
	config_free(&c);
	ck_assert_int_eq(load(&c, "virtualization: ignore\n", err, sizeof(err)), 0);
	ck_assert_int_eq(config_check(&c, err, sizeof(err)), 0);
	config_free(&c);
	/* metrics_ports: one of three words, named with its line */
	ck_assert_int_eq(load(&c, "sm_priority: 1\nmetrics_ports: hcas\n", err, sizeof(err)), 0);
	ck_assert_int_eq(config_check(&c, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":2:"));
	ck_assert_ptr_nonnull(strstr(err, "not none, switches or all"));
	config_free(&c);
	ck_assert_int_eq(load(&c, "api_listen: \"127.0.0.1:8443\"\n", err, sizeof(err)), 0);
	ck_assert_int_eq(config_check(&c, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "api_listen without api_users_file"));
	config_free(&c);
	ck_assert_int_eq(
	    load(&c, "api_listen: \"127.0.0.1:8443\"\napi_users_file: /etc/u\n", err, sizeof(err)),
	    0);
	ck_assert_int_eq(config_check(&c, err, sizeof(err)), 0);
	config_free(&c);
	/* a file that does not exist: its name and the system's reason */
	config_defaults(&c);
	ck_assert_int_eq(config_load(&c, "/nonexistent/ibsmd.yaml", err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/ibsmd.yaml: No such file"));
	config_free(&c);
	/* an empty file keeps the defaults */
	ck_assert_int_eq(load(&c, "", err, sizeof(err)), 0);
	ck_assert_str_eq(c.routing_engines, "minhop");
	config_free(&c);
}
END_TEST

/* A secret file with these contents and mode; its path in secret_path. */
static char secret_path[64];
static void write_secret(const char *text, mode_t mode)
{
	snprintf(secret_path, sizeof(secret_path), "/tmp/test_secret.XXXXXX");
	int fd = mkstemp(secret_path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

static int load_secret(struct ibsmd_config *c, char *err, size_t len)
{
	char text[160];
	snprintf(text, sizeof(text), "m_key_protect: 2\nm_key_secret: %s\n", secret_path);
	int rc = load(c, text, err, len);
	unlink(secret_path);
	return rc;
}

START_TEST(m_key_secret)
{
	struct ibsmd_config a, b, c;
	char err[512];
	/* one secret, with or without its newline, is one key; another secret is another */
	write_secret("0123456789abcdef0123456789abcdef\n", 0600);
	ck_assert_int_eq(load_secret(&a, err, sizeof(err)), 0);
	ck_assert(a.has_m_key_secret);
	write_secret("0123456789abcdef0123456789abcdef", 0400);
	ck_assert_int_eq(load_secret(&b, err, sizeof(err)), 0);
	ck_assert_mem_eq(a.m_key_secret_key, b.m_key_secret_key, sizeof(a.m_key_secret_key));
	ck_assert_uint_eq(config_digest(&a, CONFIG_DIGEST_KEYS),
	                  config_digest(&b, CONFIG_DIGEST_KEYS));
	write_secret("0123456789abcdef0123456789abcdeF", 0600);
	ck_assert_int_eq(load_secret(&c, err, sizeof(err)), 0);
	ck_assert_uint_ne(config_digest(&a, CONFIG_DIGEST_KEYS),
	                  config_digest(&c, CONFIG_DIGEST_KEYS));
	/* the contents never stay in the configuration */
	ck_assert_ptr_null(memmem(&a, sizeof(a), "0123456789abcdef", 16));
	config_free(&a);
	config_free(&b);
	config_free(&c);

	/* what an administrator gets wrong: named with the file and line, and what to do */
	write_secret("0123456789abcdef0123456789abcdef", 0644);
	ck_assert_int_eq(load_secret(&a, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ":2:") && strstr(err, "chmod 600"), "%s", err);
	config_free(&a);
	write_secret("too short\n", 0600);
	ck_assert_int_eq(load_secret(&a, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ":2:") && strstr(err, "at least 16"), "%s", err);
	config_free(&a);
	ck_assert_int_eq(load(&a, "m_key_secret: /nonexistent/secret\n", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ":1:") && strstr(err, "/nonexistent/secret"), "%s", err);
	config_free(&a);
}
END_TEST

/* A reload compares option by option and moves the changed ones in: partitions change hands
 * (no copy left behind to free twice), the rest is copied, equal options stay equal. */
START_TEST(reload_compare_and_take)
{
	struct ibsmd_config run, fresh;
	char err[256];
	ck_assert_int_eq(load(&run,
	                      "sweep_interval: 10\nlmc: 0\npartitions:\n"
	                      "  - {name: a, pkey: 0x8001, members: [0x1, 0x2]}\n",
	                      err, sizeof(err)),
	                 0);
	ck_assert_int_eq(load(&fresh,
	                      "sweep_interval: 3\nlmc: 2\npartitions:\n"
	                      "  - {name: a, pkey: 0x8001, members: [0x1, 0x2, 0x3]}\n",
	                      err, sizeof(err)),
	                 0);
	ck_assert(config_key_equal(&run, &fresh, CK_ROUTING_ENGINE));
	ck_assert(!config_key_equal(&run, &fresh, CK_SWEEP_INTERVAL));
	ck_assert(!config_key_equal(&run, &fresh, CK_LMC));
	ck_assert(!config_key_equal(&run, &fresh, CK_PARTITIONS));
	ck_assert(config_key_live(CK_PARTITIONS) && config_key_live(CK_SWEEP_INTERVAL));
	ck_assert(!config_key_live(CK_LMC) && !config_key_live(CK_STATE_DIR));
	config_key_take(&run, &fresh, CK_PARTITIONS);
	config_key_take(&run, &fresh, CK_SWEEP_INTERVAL);
	ck_assert_uint_eq(run.sweep_interval_s, 3);
	ck_assert_uint_eq(run.partitions[0].nmembers, 3);
	ck_assert_uint_eq(run.partitions[0].members[2].guid, 3);
	ck_assert_uint_eq(fresh.npartitions, 0);
	ck_assert_uint_eq(run.lmc, 0);
	ck_assert_uint_eq(run.where[CK_SWEEP_INTERVAL].line, 1);
	config_free(&fresh);
	config_free(&run);
}
END_TEST

/* congestion_control: OpenSM's settings as one mapping; what --dump-config writes reads
 * back the same; mistakes named with their line and column */
START_TEST(congestion_control_option)
{
	struct ibsmd_config c, back;
	char err[256];
	ck_assert_int_eq(load(&c,
	                      "congestion_control:\n"
	                      "  enable: true\n"
	                      "  cc_key: 0x1234\n"
	                      "  max_outstanding_mads: 16\n"
	                      "  switch:\n"
	                      "    control_map: 0x1f\n"
	                      "    victim_mask: 0x106\n"
	                      "    threshold: 15\n"
	                      "    packet_size: 8\n"
	                      "    credit_starvation_return_delay: \"1:2\"\n"
	                      "    marking_rate: 100\n"
	                      "  ca:\n"
	                      "    port_control: 1\n"
	                      "    control_map: 0x3\n"
	                      "    sl:\n"
	                      "      - {sl: 1, ccti_timer: 500, ccti_increase: 2, ccti_min: 1}\n"
	                      "  cct: \"0:0,1:1,2:3\"\n",
	                      err, sizeof(err)),
	                 0);
	ck_assert(c.cc.enable);
	ck_assert_uint_eq(c.cc.cc_key, 0x1234);
	ck_assert_uint_eq(c.cc.max_outstanding, 16);
	ck_assert_uint_eq(c.cc.sw.control_map, 0x1f);
	ck_assert_uint_eq(c.cc.sw.victim_mask[31], 0x06);
	ck_assert_uint_eq(c.cc.sw.victim_mask[30], 0x01);
	ck_assert_uint_eq(c.cc.sw.threshold, 15);
	ck_assert_uint_eq(c.cc.sw.cs_return_delay, 1u << 14 | 2);
	ck_assert_uint_eq(c.cc.ca.ccti_timer[1], 500);
	ck_assert_uint_eq(c.cc.ca.ccti_min[1], 1);
	ck_assert_uint_eq(c.cc.cct_len, 3);
	ck_assert_uint_eq(c.cc.cct[2], 2u << 14 | 3);
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	config_dump(&c, m);
	fclose(m);
	ck_assert_int_eq(load(&back, text, err, sizeof(err)), 0);
	ck_assert_msg(config_key_equal(&c, &back, CK_CONGESTION_CONTROL), "%s", text);
	ck_assert(config_key_live(CK_CONGESTION_CONTROL));
	free(text);
	config_free(&back);
	config_free(&c);
	/* the defaults: off, OpenSM's 500 in flight */
	config_defaults(&c);
	ck_assert(!c.cc.enable);
	ck_assert_uint_eq(c.cc.max_outstanding, 500);
	config_free(&c);
	static const struct {
		const char *text, *want;
	} refused[] = {
	    {"congestion_control:\n  switch:\n    threshold: 16\n",
	     ":3:16: threshold: 16 is above"},
	    {"congestion_control:\n  cct: [\"4:1\"]\n", ":2:9: congestion_control: cct: \"4:1\""},
	    {"congestion_control:\n  cct: \"1:1,,2:2\"\n", "an empty or overlong entry"},
	    {"congestion_control:\n  switch: {victim_mask: 0xg}\n", "is not a port mask"},
	    {"congestion_control:\n  ca:\n    sl:\n      - {ccti_timer: 1}\n",
	     ":4:9: congestion_control: ca: sl: an entry without its sl"},
	    {"congestion_control:\n  ca: {sl: [{sl: 2}, {sl: 2}]}\n", "SL 2 is given twice"},
	    {"congestion_control:\n  enabled: true\n", "unknown key \"enabled\""},
	    {"congestion_control: true\n", ":1:21: congestion_control: a mapping"},
	    {"congestion_control:\n  max_outstanding_mads: 0\n", "at least 1"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ck_assert_int_eq(load(&c, refused[i].text, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, refused[i].want), "%s: got \"%s\"", refused[i].text, err);
		config_free(&c);
	}
}
END_TEST

/* An option twice in one file is a mistake: which one would win is not obvious. */
START_TEST(key_twice)
{
	struct ibsmd_config c;
	char err[256];
	ck_assert_int_eq(load(&c, "lmc: 1\nsweep_interval: 3\nlmc: 2\n", err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":3:1: lmc is given twice (first on line 1)"));
	config_free(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("all");
	tcase_add_test(tc, defaults_are_sane);
	tcase_add_test(tc, full_file);
	tcase_add_loop_test(tc, bad_file_named, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, checks_across_keys);
	tcase_add_test(tc, m_key_secret);
	tcase_add_test(tc, reload_compare_and_take);
	tcase_add_test(tc, key_twice);
	tcase_add_test(tc, congestion_control_option);
	suite_add_tcase(s, tc);
	return check_run(s);
}
