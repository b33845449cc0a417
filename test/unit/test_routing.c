/* Routing engines on hand-built fabrics: a ring, a small fat tree, a torus, a fat tree with
 * a dead link and one with a lost spine. Every engine must reach every endpoint from every
 * switch; minhop by shortest paths; updn without a credit loop. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fabric/dump.h"
#include "routing/engine.h"
#include "routing/files.h"
#include "routing/torus_conf.h"
#include "util/vec.h"
#include "topo_fixture.h"
#include "check_run.h"

struct sl_probe {
	const struct routing_engine *e;
	void *state;
	const struct routing_ctx *ctx;
};

static uint8_t probe_sl(void *arg, uint16_t slid, uint16_t dlid)
{
	const struct sl_probe *p = arg;
	return routing_path_sl(p->e, p->state, p->ctx, slid, dlid);
}

/* the VL a hop takes, by the engine's SL-to-VL table (all inputs alike for these engines) */
static uint8_t probe_vl(void *arg, uint32_t sw, uint8_t in, uint8_t out, uint8_t sl)
{
	const struct sl_probe *p = arg;
	uint64_t packed;
	if (!routing_sl2vl(p->e, p->state, p->ctx, sw, in, out, &packed))
		return sl;
	return (uint8_t)((packed >> (4 * (15 - sl))) & 0xf);
}

/* As the SM's routing phase runs an engine, with a configuration (NULL: the defaults). 0,
 * or -1 with the engine's reason in why. With routes, what the tables do is checked with
 * the engine's SLs (its path_sl hook) and layers the number of layers it used. */
static int run_engine_full(struct topo *t, const char *name, const struct ibsmd_config *given,
                           char *why, size_t whylen, struct fix_routes *routes, unsigned *layers)
{
	const struct routing_engine *e = routing_find(name);
	ck_assert_ptr_nonnull(e);
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	if (given)
		cfg = *given;
	struct log lg;
	log_init(&lg);
	lg.level = LOGL_ERR;
	struct routing_ctx ctx;
	ck_assert_int_eq(routing_ctx_build(&ctx, t, &cfg, &lg), 0);
	void *state = NULL;
	int rc = 0;
	if ((e->setup && e->setup(&ctx, &state) < 0) || e->unicast(&ctx, state) < 0) {
		snprintf(why, whylen, "%s", ctx.why);
		rc = -1;
	}
	if (rc == 0 && routes) {
		struct sl_probe pr = {e, state, &ctx};
		fix_check_routes_vl(t, probe_sl, e->sl2vl ? probe_vl : NULL, &pr, routes);
	}
	if (layers)
		*layers = routing_layers(e, state);
	if (e->teardown)
		e->teardown(state);
	routing_ctx_free(&ctx);
	return rc;
}

static int run_engine_cfg(struct topo *t, const char *name, const struct ibsmd_config *given,
                          char *why, size_t whylen)
{
	return run_engine_full(t, name, given, why, whylen, NULL, NULL);
}

/* 0, or -1 with the engine's reason printed. */
static int run_engine(struct topo *t, const char *name)
{
	char why[512];
	int rc = run_engine_cfg(t, name, NULL, why, sizeof(why));
	if (rc < 0)
		fprintf(stderr, "%s: %s\n", name, why);
	return rc;
}

/* Routes reach every endpoint; shortest: by the fewest hops; loop_free: no credit loop with
 * the SLs the engine gives the paths (each its own VL). */
static void check(struct topo *t, const char *engine, bool shortest, bool loop_free)
{
	char why[512];
	struct fix_routes r;
	int rc = run_engine_full(t, engine, NULL, why, sizeof(why), &r, NULL);
	ck_assert_msg(rc == 0, "%s: %s", engine, why);
	ck_assert_msg(r.pairs > 0, "%s: nothing to route", engine);
	ck_assert_msg(r.unreachable == 0 && r.loops == 0,
	              "%s: %llu of %llu pairs unreachable, %llu loops (%s)", engine,
	              (unsigned long long)r.unreachable, (unsigned long long)r.pairs,
	              (unsigned long long)r.loops, r.first_problem);
	if (shortest)
		ck_assert_msg(r.longer_than_shortest == 0, "%s: %llu routes longer than shortest",
		              engine, (unsigned long long)r.longer_than_shortest);
	if (loop_free)
		ck_assert_msg(!r.credit_loop, "%s: credit loop", engine);
}

static const char *const engines[] = {"minhop", "updn",   "dnup", "ftree",
                                      "sssp",   "dfsssp", "lash", "nue"};
#define NENGINES 8
/* shortest paths on any graph (the others climb to roots); free of credit loops on any */
static const bool shortest_any[NENGINES] = {true, false, false, false, true, true, true, false};
static const bool loop_free_any[NENGINES] = {false, true, true, true, false, true, true, true};

/* The irregular graphs the engines are tried on (t initialised here): 10 to 40 switches of 16
 * ports, 4 hosts each, a spanning tree and 2 to 5 times as many random links as switches, by seed.
 */
static unsigned irregular_graph(struct topo *t, uint32_t seed)
{
	topo_init(t);
	unsigned sw = 10 + seed % 31;
	uint32_t h = fix_random(t, sw, 16, 4, sw * (2 + seed % 4), seed);
	fix_finish(t, h, NULL);
	return sw;
}

/* up/down on irregular graphs, dense ones above all (the shape of ../shared/fabrics'
 * random30-updn-loop.net, where a switch reached by a downward move used to climb again):
 * every pair reached, no credit loop, on 150 graphs of 10 to 40 switches */
START_TEST(updn_random_graphs)
{
	/* updn, dnup and ftree share the up/down core: updn and ftree route any graph; dnup's
	 * order (ranked from the hosts, here on every switch) leaves pairs without a route on
	 * most: it must then fail and say so, never route them another way */
	const char *engine = engines[1 + _i];
	unsigned bad = 0, failed = 0;
	char first[256] = "";
	for (uint32_t seed = 1; seed <= 150; seed++) {
		struct topo t;
		unsigned sw = irregular_graph(&t, seed);
		char why[512];
		if (run_engine_cfg(&t, engine, NULL, why, sizeof(why)) < 0) {
			ck_assert_msg(!strcmp(engine, "dnup"), "%s: %s", engine, why);
			ck_assert_msg(strstr(why, "no down/up route from switch"), "%s", why);
			failed++;
			topo_free(&t);
			continue;
		}
		struct fix_routes r;
		fix_check_routes(&t, &r);
		ck_assert_msg(r.unreachable == 0 && r.loops == 0, "seed %u: %llu unreachable (%s)",
		              seed, (unsigned long long)r.unreachable, r.first_problem);
		if (r.credit_loop && !bad++)
			snprintf(first, sizeof(first), "seed %u, %u switches", seed, sw);
		topo_free(&t);
	}
	ck_assert_msg(!bad, "%s: credit loops on %u of 150 random graphs, first %s", engine, bad,
	              first);
	if (!strcmp(engine, "dnup"))
		ck_assert_uint_lt(failed, 150); /* some graphs suit it */
}
END_TEST

static uint64_t lfts_seen;
static int lfts_sw(void *arg, uint64_t guid, unsigned line)
{
	(void)arg;
	(void)line;
	lfts_seen += guid;
	return 0;
}
static int lfts_entry(void *arg, uint16_t lid, uint8_t port, unsigned line)
{
	(void)arg;
	(void)line;
	lfts_seen += lid + port;
	return 0;
}

/* The worst link load of the shift permutations (host i to host i + k, for every k) along
 * the programmed tables: 1 means every one of them is free of congestion. */
static unsigned worst_shift_load(const struct topo *t)
{
	uint32_t hosts[4096], nh = 0;
	for (uint32_t p = 0; p < t->nports && nh < 4096; p++)
		if (!topo_is_switch(t, t->ports[p].node) && t->ports[p].num && t->ports[p].lid &&
		    t->ports[p].peer != TOPO_NONE)
			hosts[nh++] = p;
	uint32_t *use = calloc(t->nports, sizeof(uint32_t));
	ck_assert_ptr_nonnull(use);
	unsigned worst = 0;
	for (uint32_t k = 1; k < nh; k++) {
		memset(use, 0, t->nports * sizeof(uint32_t));
		for (uint32_t i = 0; i < nh; i++) {
			uint16_t dlid = t->ports[hosts[(i + k) % nh]].lid;
			uint32_t at = t->ports[hosts[i]].peer; /* the leaf port the host is on */
			for (unsigned hop = 0; hop < 16; hop++) {
				uint32_t n = t->ports[at].node;
				if (!topo_is_switch(t, n))
					break;
				const struct topo_switch *sw = &t->sws[t->nodes[n].sw];
				uint32_t out = topo_port(t, n, sw->lft[dlid]);
				if (t->ports[t->ports[out].peer].node != n &&
				    topo_is_switch(t, t->ports[t->ports[out].peer].node) &&
				    ++use[out] > worst)
					worst = use[out];
				at = t->ports[out].peer;
			}
		}
	}
	free(use);
	return worst;
}

/* minhop on a complete two-level fat tree: every shift permutation congestion-free, as
 * OpenSM's minhop and ftree give (it used to put up to 3 flows of one on a link at 648
 * hosts: hosts' LIDs are interleaved with their leaf's, which shifted each leaf's
 * round robin) */
START_TEST(minhop_shift_permutations)
{
	struct topo t;
	topo_init(&t);
	/* a small tree, and the 648-host one of 36-port switches */
	static const unsigned shape[2][3] = {{12, 6, 6}, {36, 18, 18}};
	uint32_t h = fix_fattree(&t, shape[_i][0], shape[_i][1], shape[_i][2]);
	fix_finish(&t, h, NULL);
	ck_assert_int_eq(run_engine(&t, "minhop"), 0);
	ck_assert_uint_eq(worst_shift_load(&t), 1);
	topo_free(&t);
}
END_TEST

/* ftree on complete trees of two and three levels: every shift permutation congestion-free
 * (minhop and updn put up to 4 and 6 flows on a link of the 3-level ones) */
START_TEST(ftree_shift_permutations)
{
	struct topo t;
	topo_init(&t);
	uint32_t h;
	if (_i == 0)
		h = fix_fattree(&t, 36, 18, 18); /* 648 hosts */
	else
		h = fix_fattree3(&t, _i == 1 ? 8 : 12); /* 128 and 432 hosts */
	fix_finish(&t, h, NULL);
	check(&t, "ftree", true, true);
	ck_assert_uint_eq(worst_shift_load(&t), 1);
	topo_free(&t);
}
END_TEST

/* A quasi fat tree: links gone between leaves and aggregation switches and between those and
 * the cores; ftree still routes every pair, shortest, free of credit loops, without falling
 * back to another engine */
/* Every 7th node's last switch-to-switch link, up to n of them, taken down. */
static unsigned cut_links(struct topo *t, unsigned n)
{
	unsigned cut = 0;
	for (uint32_t node = 0; node < t->nnodes && cut < n; node += 7) {
		if (!topo_is_switch(t, node))
			continue;
		for (unsigned p = t->nodes[node].nports; p >= 1; p--) {
			uint32_t pi = topo_port(t, node, p), peer = t->ports[pi].peer;
			if (peer != TOPO_NONE && topo_is_switch(t, t->ports[peer].node)) {
				topo_unlink(t, pi);
				t->ports[pi].pi.port_state = PORT_STATE_DOWN;
				t->ports[peer].pi.port_state = PORT_STATE_DOWN;
				cut++;
				break;
			}
		}
	}
	return cut;
}

/* The 128-host 3-level fat tree with 6 of its links down. */
static void quasi_fattree(struct topo *t)
{
	topo_init(t);
	uint32_t h = fix_fattree3(t, 8);
	ck_assert_uint_eq(cut_links(t, 6), 6);
	fix_finish(t, h, NULL);
}

START_TEST(ftree_missing_links)
{
	struct topo t;
	quasi_fattree(&t);
	check(&t, "ftree", false, true);
	topo_free(&t);
}
END_TEST

/* The file engine reads back what topo_dump_lfts wrote (opensm-lfts.dump's format), and
 * refuses, naming the file, switch and LID, tables that miss a LID, point at a port without
 * a link or loop. */
static char *dump_to_file(const struct topo *t)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/test_routing_lfts.XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	topo_dump_lfts(t, f);
	fclose(f);
	return path;
}

static void rewrite_entry(const char *path, const char *from, const char *to)
{
	char *text;
	size_t len;
	char why[256];
	ck_assert_int_eq(routing_slurp(path, 1u << 24, &text, &len, why, sizeof(why)), 0);
	char *at = strstr(text, from);
	ck_assert_ptr_nonnull(at);
	FILE *f = fopen(path, "w");
	fwrite(text, 1, (size_t)(at - text), f);
	fputs(to, f);
	fputs(at + strlen(from), f);
	fclose(f);
	free(text);
}

START_TEST(file_engine)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_fattree(&t, 4, 2, 2);
	fix_finish(&t, h, NULL);
	ck_assert_int_eq(run_engine(&t, "updn"), 0);
	const char *path = dump_to_file(&t);
	uint8_t saved[4][64];
	for (unsigned s = 0; s < 4; s++)
		memcpy(saved[s], t.sws[s].lft, 64);
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	snprintf(cfg.lfts_file, sizeof(cfg.lfts_file), "%s", path);
	char why[512];
	ck_assert_int_eq(run_engine_cfg(&t, "file", &cfg, why, sizeof(why)), 0);
	for (unsigned s = 0; s < 4; s++)
		ck_assert_mem_eq(saved[s], t.sws[s].lft, 64);

	/* leaf 0 (switch 0) sends a host of leaf 1 to its other spine: taken as written */
	uint16_t far = t.ports[topo_port(&t, h + 2, 1)].lid;
	uint8_t was = t.sws[0].lft[far], other = was == 1 ? 2 : 1;
	char from[32], to[32];
	snprintf(from, sizeof(from), "0x%04x %03u", far, was);
	snprintf(to, sizeof(to), "0x%04x %03u", far, other);
	rewrite_entry(path, from, to);
	ck_assert_int_eq(run_engine_cfg(&t, "file", &cfg, why, sizeof(why)), 0);
	ck_assert_uint_eq(t.sws[0].lft[far], other);
	struct fix_routes r;
	fix_check_routes(&t, &r);
	ck_assert_msg(r.unreachable == 0, "%s", r.first_problem);

	/* a port the switch does not have (leaf ports 1-2 lead to spines, 3-4 to hosts) */
	snprintf(from, sizeof(from), "0x%04x %03u", far, other);
	snprintf(to, sizeof(to), "0x%04x %03u", far, 5);
	rewrite_entry(path, from, to);
	ck_assert_int_eq(run_engine_cfg(&t, "file", &cfg, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, path) && strstr(why, "port 5; it has 4 ports"), "%s", why);

	/* a missing entry */
	snprintf(from, sizeof(from), "0x%04x %03u", far, 5);
	rewrite_entry(path, from, "# removed");
	ck_assert_int_eq(run_engine_cfg(&t, "file", &cfg, why, sizeof(why)), -1);
	snprintf(to, sizeof(to), "no entry for LID 0x%04x", far);
	ck_assert_msg(strstr(why, to), "%s", why);

	/* a loop: leaf 0 sends it to spine 1 and spine 1 back to leaf 0 */
	rewrite_entry(path, "# removed", from);
	ck_assert_int_eq(run_engine_cfg(&t, "file", &cfg, why, sizeof(why)), -1);
	unlink(path);

	/* no file */
	snprintf(cfg.lfts_file, sizeof(cfg.lfts_file), "/nonexistent/lfts");
	ck_assert_int_eq(run_engine_cfg(&t, "file", &cfg, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "/nonexistent/lfts: No such file"), "%s", why);
	topo_free(&t);
}
END_TEST

static void expect_lfts_error(const char *text, const char *want)
{
	struct lfts_parse_cb cb = {.sw = lfts_sw, .entry = lfts_entry};
	char why[256] = "";
	ck_assert_int_eq(routing_parse_lfts(text, strlen(text), "f", &cb, NULL, why, sizeof(why)),
	                 -1);
	ck_assert_msg(strstr(why, want), "\"%s\" does not say \"%s\"", why, want);
}

START_TEST(files_parse)
{
	const char *ok = "# roots\n0x0002c90300000001\n\n  0002c90300000002 # spine 2\n";
	uint64_t *g;
	uint32_t n;
	char why[256];
	ck_assert_int_eq(routing_parse_guids(ok, strlen(ok), "r", &g, &n, why, sizeof(why)), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(g[1], 0x0002c90300000002ull);
	free(g);
	const char *bad = "0x1\nspine-2\n";
	ck_assert_int_eq(routing_parse_guids(bad, strlen(bad), "r", &g, &n, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "r:2: \"spine-2\" is not a GUID (one per line, hexadecimal)");
	const char *two = "0x1 0x2\n";
	ck_assert_int_eq(routing_parse_guids(two, strlen(two), "r", &g, &n, why, sizeof(why)), -1);

	/* hop_weights_file: GUID PORT WEIGHT, OpenSM's numbers (0x or decimal) */
	const char *hw = "# weights\n0x0002c90300000011 5 10 # slow cable\n\n11\t0x6\t255\n";
	struct guid_line *w;
	const struct guid_line_fmt *fw = &routing_hop_weights_fmt;
	ck_assert_int_eq(
	    routing_parse_guid_lines(hw, strlen(hw), "w", fw, &w, &n, why, sizeof(why)), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(w[0].guid, 0x0002c90300000011ull);
	ck_assert_uint_eq(w[0].v[0], 5);
	ck_assert_uint_eq(w[0].v[1], 10);
	ck_assert_uint_eq(w[1].v[0], 6);
	ck_assert_uint_eq(w[1].v[1], 255);
	ck_assert_uint_eq(w[1].line, 4);
	free(w);
	static const char *const bad_hw[][2] = {
	    {"0x11 5\n", "w:1: \"0x11 5\" has no weight 1-255 after the port"},
	    {"0x11 0 3\n", "w:1: \"0x11 0 3\" has no port 1-254 after the GUID"},
	    {"0x11 5 256\n", "w:1: \"0x11 5 256\" has no weight 1-255 after the port"},
	    {"\n0x11 5 0\n", "w:2: \"0x11 5 0\" has no weight 1-255 after the port"},
	    {"spine 5 3\n", "w:1: \"spine 5 3\" is not a switch GUID"},
	    {"0x11 5 3 4\n", "w:1: \"0x11 5 3 4\" has more than the 3 fields of a line (lines are "
	                     "GUID PORT WEIGHT)"},
	};
	for (size_t i = 0; i < sizeof(bad_hw) / sizeof(bad_hw[0]); i++) {
		ck_assert_int_eq(routing_parse_guid_lines(bad_hw[i][0], strlen(bad_hw[i][0]), "w",
		                                          fw, &w, &n, why, sizeof(why)),
		                 -1);
		ck_assert_msg(strncmp(why, bad_hw[i][1], strlen(bad_hw[i][1])) == 0, "%s", why);
	}

	/* ids_guid_file: GUID ID, 64-bit IDs; port_prof_ignore_file: GUID PORT */
	const char *ids = "0x11 0xffffffffffffffff\n0x12 7 # spine\n";
	ck_assert_int_eq(routing_parse_guid_lines(ids, strlen(ids), "i", &routing_ids_fmt, &w, &n,
	                                          why, sizeof(why)),
	                 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(w[0].v[0], UINT64_MAX);
	ck_assert_uint_eq(w[1].v[0], 7);
	free(w);
	const char *big = "0x11 0x1ffffffffffffffff\n";
	ck_assert_int_eq(routing_parse_guid_lines(big, strlen(big), "i", &routing_ids_fmt, &w, &n,
	                                          why, sizeof(why)),
	                 -1);
	ck_assert_str_eq(why, "i:1: \"0x11 0x1ffffffffffffffff\" has no number (the switch's ID) "
	                      "after the GUID (lines are GUID ID)");
	const char *pp = "0x11 3\n0x11 255\n";
	ck_assert_int_eq(routing_parse_guid_lines(pp, strlen(pp), "p",
	                                          &routing_port_prof_ignore_fmt, &w, &n, why,
	                                          sizeof(why)),
	                 -1);
	ck_assert_str_eq(why, "p:2: \"0x11 255\" has no port 1-254 after the GUID (lines are GUID "
	                      "PORT)");

	const char *lfts = "Unicast lids [0x0-0x3] of switch Lid 1 guid 0x0000000000000011 (s):\n"
	                   "  Lid  Out   Destination\n"
	                   "0x0001 000 : (Switch portguid 0x11: 's')\n"
	                   "0x0002 003 : (Channel Adapter portguid 0x2: 'h')\n"
	                   "2 valid lids dumped\n";
	struct lfts_parse_cb cb = {.sw = lfts_sw, .entry = lfts_entry};
	lfts_seen = 0;
	ck_assert_int_eq(routing_parse_lfts(lfts, strlen(lfts), "f", &cb, NULL, why, sizeof(why)),
	                 0);
	ck_assert_uint_eq(lfts_seen, 0x11 + 1 + 0 + 2 + 3);
	expect_lfts_error("0x0001 001\n", "f:1: an entry before any");
	expect_lfts_error("Unicast lids [0-1] of switch Lid 1\n", "f:1: a switch header without");
	expect_lfts_error("Unicast lids guid 0x11\n0x0001 300\n", "f:2: LID 0x0001: the port");
	expect_lfts_error("Unicast lids guid 0x11\n0xc001 1\n", "f:2: LID 0xc001 is not a unicast");
	expect_lfts_error("Unicast lids guid 0x11\n0xzz 1\n", "f:2: \"0xzz 1\" is not");
}
END_TEST

START_TEST(ring)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_ring(&t, 6, 2);
	fix_finish(&t, h, NULL);
	/* minhop on a ring has shortest paths but (as everywhere on rings) credit loops */
	check(&t, "minhop", true, false);
	/* the checker sees that loop: a test of the test */
	struct fix_routes r;
	fix_check_routes(&t, &r);
	ck_assert(r.credit_loop);
	check(&t, "updn", false, true);
	check(&t, "dnup", false, true);
	check(&t, "ftree", false, true);
	check(&t, "sssp", true, false);
	check(&t, "dfsssp", true, true);
	check(&t, "lash", true, true);
	check(&t, "nue", true, true);
	topo_free(&t);
}
END_TEST

/* dfsssp on the irregular graphs up/down is tested on: every pair by a shortest path, no
 * credit loop once each path runs on its layer's VL; on some graphs the shortest paths have
 * loops on one VL (the layers are needed), on none are more than 8 needed. With one VL
 * allowed, a graph with loops fails with the reason. */
START_TEST(dfsssp_random_graphs)
{
	/* and lash: minhop's shortest paths on the same layers */
	const char *engine = _i ? "lash" : "dfsssp";
	unsigned layered = 0, refused = 0;
	for (uint32_t seed = 1; seed <= 150; seed++) {
		struct topo t;
		irregular_graph(&t, seed);
		char why[512];
		struct fix_routes r;
		unsigned layers = 0;
		int rc = run_engine_full(&t, engine, NULL, why, sizeof(why), &r, &layers);
		ck_assert_msg(rc == 0, "%s, seed %u: %s", engine, seed, why);
		ck_assert_msg(r.unreachable == 0 && r.loops == 0, "seed %u: %s", seed,
		              r.first_problem);
		ck_assert_msg(r.longer_than_shortest == 0, "seed %u: %llu routes not shortest",
		              seed, (unsigned long long)r.longer_than_shortest);
		ck_assert_msg(!r.credit_loop, "seed %u: credit loop with %u layers", seed, layers);
		ck_assert_uint_le(layers, 8);
		if (layers > 1) {
			layered++;
			/* the same tables on one VL have a loop: the layers are not for show */
			struct fix_routes flat;
			fix_check_routes(&t, &flat);
			ck_assert_msg(flat.credit_loop,
			              "seed %u: %u layers for a loop-free routing", seed, layers);
			struct ibsmd_config cfg;
			config_defaults(&cfg);
			cfg.routing_max_vls = 1;
			ck_assert_int_eq(run_engine_cfg(&t, engine, &cfg, why, sizeof(why)), -1);
			ck_assert_msg(strstr(why, "need more than 1 virtual layers to be free of "
			                          "credit loops, and routing_max_vls allows 1 VL"),
			              "%s", why);
			refused++;
		}
		topo_free(&t);
	}
	ck_assert_uint_gt(layered, 10);
	ck_assert_uint_eq(refused, layered);
}
END_TEST

/* nue on the same graphs with 1, 2 and 8 VLs: always routed, every pair reached, no credit
 * loop with each path on its destination's layer, never more layers than allowed; with 8 the
 * routes are shortest on most graphs, and more VLs never leave more routes longer. */
START_TEST(nue_random_graphs)
{
	static const unsigned budgets[] = {1, 2, 8};
	unsigned all_shortest = 0;
	for (uint32_t seed = 1; seed <= 150; seed++) {
		struct topo t;
		irregular_graph(&t, seed);
		uint64_t longer_before = UINT64_MAX;
		for (unsigned b = 0; b < 3; b++) {
			struct ibsmd_config cfg;
			config_defaults(&cfg);
			cfg.routing_max_vls = (uint8_t)budgets[b];
			char why[512];
			struct fix_routes r;
			unsigned layers = 0;
			int rc = run_engine_full(&t, "nue", &cfg, why, sizeof(why), &r, &layers);
			ck_assert_msg(rc == 0, "seed %u, %u VLs: %s", seed, budgets[b], why);
			ck_assert_msg(r.unreachable == 0 && r.loops == 0, "seed %u: %s", seed,
			              r.first_problem);
			ck_assert_msg(!r.credit_loop, "seed %u, %u VLs: credit loop with %u layers",
			              seed, budgets[b], layers);
			ck_assert_uint_le(layers, budgets[b]);
			if (b == 2) {
				ck_assert_msg(r.longer_than_shortest <= longer_before,
				              "seed %u: 8 VLs leave %llu routes longer, 1 VL %llu",
				              seed, (unsigned long long)r.longer_than_shortest,
				              (unsigned long long)longer_before);
				all_shortest += r.longer_than_shortest == 0;
			}
			if (b == 0)
				longer_before = r.longer_than_shortest;
		}
		topo_free(&t);
	}
	ck_assert_uint_gt(all_shortest, 100);
}
END_TEST

/* dor and torus on meshes and tori cabled by port pairs: every pair by a shortest path, no
 * credit loop with each hop on the VL the engine's tables give it (datelines: 2 VLs), the
 * same tables on one VL loop on every torus with a ring of 5 or more; SLs: one dateline bit
 * per dimension. */
/* Route t with engine (case k of a test): every LID reached, no forwarding loop, no credit
 * loop with the engine's SLs and VLs; the routes and layers for more checks. */
/* Route with routing_max_vls max_vls (0: the links' VLs), and want every route whole and
 * no credit loop. */
static void route_clean_vls(struct topo *t, const char *engine, unsigned max_vls, unsigned k,
                            struct fix_routes *r, unsigned *layers)
{
	char why[512];
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	cfg.routing_max_vls = (uint8_t)max_vls;
	ck_assert_msg(run_engine_full(t, engine, &cfg, why, sizeof(why), r, layers) == 0,
	              "%s, case %u: %s", engine, k, why);
	ck_assert_msg(r->unreachable == 0 && r->loops == 0, "%s, case %u: %s", engine, k,
	              r->first_problem);
	ck_assert_msg(!r->credit_loop, "%s, case %u: credit loop", engine, k);
}

static void route_clean(struct topo *t, const char *engine, unsigned k, struct fix_routes *r,
                        unsigned *layers)
{
	route_clean_vls(t, engine, 0, k, r, layers);
}

START_TEST(grid_engines)
{
	const char *engine = _i ? "torus" : "dor";
	static const struct {
		unsigned n[3], nd;
		bool torus;
	} cases[] = {{{4, 4}, 2, true},     {{3, 3, 3}, 3, true}, {{4, 4, 4}, 3, true},
	             {{4, 3, 5}, 3, false}, {{5, 4}, 2, true},    {{6, 2, 3}, 3, true}};
	for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct topo t;
		topo_init(&t);
		uint32_t h = fix_grid(&t, cases[k].n, cases[k].nd, cases[k].torus, 1);
		fix_finish(&t, h, NULL);
		struct fix_routes r;
		unsigned layers = 0;
		route_clean(&t, engine, k, &r, &layers);
		ck_assert_msg(r.longer_than_shortest == 0, "%s, case %u: %llu not shortest", engine,
		              k, (unsigned long long)r.longer_than_shortest);
		ck_assert_uint_eq(layers, cases[k].torus ? 1u << cases[k].nd : 1u);
		/* rings of 3 never chain two hops of one dimension, and on rings of 4 the paths
		 * of 2 hops go the way that stays off the dateline (as OpenSM's torus-2QoS), so
		 * that no chain closes either: the loop to break is on rings of 5 or more */
		if (cases[k].torus &&
		    (cases[k].n[0] > 4 || cases[k].n[1] > 4 || cases[k].n[2] > 4)) {
			struct fix_routes flat;
			fix_check_routes(&t, &flat);
			ck_assert_msg(flat.credit_loop, "case %u: a torus without datelines", k);
		}
		topo_free(&t);
	}
}
END_TEST

/* ---- OpenSM's balancing knobs: scatter_ports, port_shifting, port_prof_ignore_file,
 * ids_guid_file ---- */

/* text into a fresh temporary file named in path (the caller unlinks it) */
static void temp_file(char *path, size_t size, const char *text)
{
	snprintf(path, size, "/tmp/ibsmd-knob-XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* node a's port towards node b (0: none) */
static unsigned port_towards(const struct topo *t, uint32_t a, uint32_t b)
{
	const struct topo_node *n = &t->nodes[a];
	for (unsigned p = 1; p <= n->nports; p++) {
		uint32_t peer = t->ports[n->first_port + p].peer;
		if (peer != TOPO_NONE && t->ports[peer].node == b)
			return p;
	}
	return 0;
}

/* the LID of the first host on switch node s */
static uint16_t host_lid_on(const struct topo *t, uint32_t s)
{
	const struct topo_node *n = &t->nodes[s];
	for (unsigned p = 1; p <= n->nports; p++) {
		uint32_t peer = t->ports[n->first_port + p].peer;
		if (peer != TOPO_NONE && !topo_is_switch(t, t->ports[peer].node))
			return t->ports[peer].lid;
	}
	return 0;
}

/* every switch's table, concatenated (free it) */
static uint8_t *tables_of(const struct topo *t, size_t *len)
{
	size_t n = 0;
	for (uint32_t s = 0; s < t->nsws; s++)
		n += t->sws[s].lft_size;
	uint8_t *all = malloc(n + 1), *at = all;
	ck_assert_ptr_nonnull(all);
	for (uint32_t s = 0; s < t->nsws; s++, at += t->sws[s - 1].lft_size)
		memcpy(at, t->sws[s].lft, t->sws[s].lft_size);
	*len = n;
	return all;
}

/* route t with engine under cfg: every pair reached by shortest paths where shortest; the
 * tables (free them) */
static uint8_t *knob_tables(struct topo *t, const char *engine, const struct ibsmd_config *cfg,
                            bool shortest, size_t *len)
{
	char why[512];
	struct fix_routes r;
	ck_assert_msg(run_engine_full(t, engine, cfg, why, sizeof(why), &r, NULL) == 0, "%s: %s",
	              engine, why);
	ck_assert_msg(r.unreachable == 0 && r.loops == 0, "%s: %s", engine, r.first_problem);
	if (shortest)
		ck_assert_uint_eq(r.longer_than_shortest, 0);
	return tables_of(t, len);
}

/* scatter_ports draws among the least loaded ports from its seed: the same seed the same
 * tables, another seed others, all shortest; port_shifting moves the scan's start; ftree
 * and lash, which OpenSM does not run on its unicast manager, ignore both */
START_TEST(opensm_balance_knobs)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_fattree(&t, 6, 4, 8);
	fix_finish(&t, h, NULL);
	struct ibsmd_config plain, c7, c8, shift;
	config_defaults(&plain);
	c7 = c8 = shift = plain;
	c7.scatter_ports = 7;
	c8.scatter_ports = 8;
	shift.port_shifting = true;
	static const char *const ucast[] = {"minhop", "updn", "dnup"};
	for (unsigned e = 0; e < 3; e++) {
		bool sh = e == 0;
		size_t n0, n7, n7b, n8, ns;
		uint8_t *t0 = knob_tables(&t, ucast[e], &plain, sh, &n0);
		uint8_t *t7 = knob_tables(&t, ucast[e], &c7, sh, &n7);
		uint8_t *t7b = knob_tables(&t, ucast[e], &c7, sh, &n7b);
		uint8_t *t8 = knob_tables(&t, ucast[e], &c8, sh, &n8);
		uint8_t *ts = knob_tables(&t, ucast[e], &shift, sh, &ns);
		ck_assert(n0 == n7 && n7 == n7b && n7 == n8 && n8 == ns);
		ck_assert_msg(memcmp(t7, t7b, n7) == 0, "%s: one seed, two routings", ucast[e]);
		ck_assert_msg(memcmp(t0, t7, n0) != 0, "%s: scatter_ports changed nothing",
		              ucast[e]);
		ck_assert_msg(memcmp(t7, t8, n7) != 0, "%s: two seeds, one routing", ucast[e]);
		ck_assert_msg(memcmp(t0, ts, n0) != 0, "%s: port_shifting changed nothing",
		              ucast[e]);
		free(t0), free(t7), free(t7b), free(t8), free(ts);
	}
	static const char *const own[] = {"ftree", "lash"};
	for (unsigned e = 0; e < 2; e++) {
		size_t n0, n7;
		uint8_t *t0 = knob_tables(&t, own[e], &plain, false, &n0);
		c7.port_shifting = true;
		uint8_t *t7 = knob_tables(&t, own[e], &c7, false, &n7);
		c7.port_shifting = false;
		ck_assert_msg(n0 == n7 && memcmp(t0, t7, n0) == 0, "%s took OpenSM's knobs",
		              own[e]);
		free(t0), free(t7);
	}
	topo_free(&t);
}
END_TEST

/* port_prof_ignore_file: routes out of a listed port weigh nothing on its load, so minhop
 * sends a leaf's remote LIDs that way, where it would split them over its uplinks */
START_TEST(port_prof_ignore)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_fattree(&t, 4, 2, 6);
	fix_finish(&t, h, NULL);
	uint32_t leaf0 = 0, spine0 = 4;
	unsigned up0 = port_towards(&t, leaf0, spine0);
	ck_assert_uint_ne(up0, 0);
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	char line[64];
	snprintf(line, sizeof(line), "# internal\n0x%" PRIx64 " %u\n0x9999 1\n",
	         t.nodes[leaf0].guid, up0);
	temp_file(cfg.port_prof_ignore_file, sizeof(cfg.port_prof_ignore_file), line);
	unsigned via[2] = {0, 0}, remote = 0;
	for (unsigned run = 0; run < 2; run++) {
		size_t n;
		free(knob_tables(&t, "minhop", run ? &cfg : NULL, true, &n));
		const struct topo_switch *sw = &t.sws[t.nodes[leaf0].sw];
		remote = 0;
		for (uint32_t l = 1; l < 4; l++) { /* the hosts of leaves 1-3 */
			uint32_t s = l;
			for (unsigned p = 1; p <= t.nodes[s].nports; p++) {
				uint32_t peer = t.ports[t.nodes[s].first_port + p].peer;
				if (peer == TOPO_NONE || topo_is_switch(&t, t.ports[peer].node))
					continue;
				remote++;
				via[run] += sw->lft[t.ports[peer].lid] == up0;
			}
		}
	}
	ck_assert_uint_eq(remote, 18);
	ck_assert_uint_eq(via[0], 9);          /* split evenly over the two uplinks */
	ck_assert_uint_ge(via[1], remote - 1); /* all but the first LID, which the rank sent */
	/* a file that is not one: logged, and every port counts again */
	unlink(cfg.port_prof_ignore_file);
	temp_file(cfg.port_prof_ignore_file, sizeof(cfg.port_prof_ignore_file), "leaf-0 3\n");
	size_t n0, n1;
	uint8_t *t0 = knob_tables(&t, "minhop", NULL, true, &n0);
	uint8_t *t1 = knob_tables(&t, "minhop", &cfg, true, &n1);
	ck_assert(n0 == n1 && memcmp(t0, t1, n0) == 0);
	free(t0), free(t1);
	unlink(cfg.port_prof_ignore_file);
	topo_free(&t);
}
END_TEST

/* ids_guid_file: updn breaks ties between switches of one rank by the IDs, as OpenSM's
 * updn; on a ring of 5 rooted at switch 0, switches 2 and 3 share rank 2: the higher ID is
 * up, so 1 -> 2 -> 3 (down, then down again) is an up/down path only while 3's ID is the
 * higher, else 3's host is reached the long way round (1 -> 0 -> 4 -> 3) */
START_TEST(updn_ids)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_ring(&t, 5, 1);
	fix_finish(&t, h, NULL);
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	cfg.root_guids[0] = t.nodes[0].guid;
	cfg.nroots = 1;
	uint16_t dlid = host_lid_on(&t, 3);
	unsigned to2 = port_towards(&t, 1, 2), to0 = port_towards(&t, 1, 0);
	ck_assert(dlid && to2 && to0);
	size_t n;
	free(knob_tables(&t, "updn", &cfg, false, &n));
	ck_assert_uint_eq(t.sws[t.nodes[1].sw].lft[dlid], to2); /* GUIDs: 3's is the higher */
	char text[128];
	snprintf(text, sizeof(text), "0x%" PRIx64 " 100\n0x%" PRIx64 " 0x10 # spine\n",
	         t.nodes[2].guid, t.nodes[3].guid);
	temp_file(cfg.ids_guid_file, sizeof(cfg.ids_guid_file), text);
	free(knob_tables(&t, "updn", &cfg, false, &n));
	ck_assert_uint_eq(t.sws[t.nodes[1].sw].lft[dlid], to0);
	unlink(cfg.ids_guid_file);
	topo_free(&t);
}
END_TEST

/* guid_routing_order_file: the ports listed are routed first, in the file's order, so they
 * take the balanced spread. On a fat tree with two spines a leaf's hosts alternate over the
 * uplinks by their place at their leaf (after the leaf's own LID): hosts 0 and 2 of leaf 1
 * land on the same uplink of leaf 0; listed, they are leaf 1's first two and split. minhop
 * and updn alike; a file that is not one leaves the natural order. */
START_TEST(guid_routing_order)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_fattree(&t, 4, 2, 6);
	fix_finish(&t, h, NULL);
	uint32_t a = h + 6, b = h + 8; /* hosts 0 and 2 of leaf 1 */
	uint16_t la = t.ports[t.nodes[a].first_port + 1].lid,
	         lb = t.ports[t.nodes[b].first_port + 1].lid;
	ck_assert(la && lb);
	struct ibsmd_config cfg, bad;
	config_defaults(&cfg);
	bad = cfg;
	char text[160];
	snprintf(text, sizeof(text),
	         "0x%016" PRIx64 "\n# not here\n0x00000000deadbeef\n0x%016" PRIx64 "\n",
	         t.ports[t.nodes[b].first_port + 1].guid, t.ports[t.nodes[a].first_port + 1].guid);
	temp_file(cfg.guid_routing_order_file, sizeof(cfg.guid_routing_order_file), text);
	temp_file(bad.guid_routing_order_file, sizeof(bad.guid_routing_order_file), "host-1\n");
	static const char *const eng[] = {"minhop", "updn"};
	for (unsigned e = 0; e < 2; e++) {
		size_t n0, n1, n2;
		uint8_t *t0 = knob_tables(&t, eng[e], NULL, e == 0, &n0);
		const uint8_t *lft = t.sws[t.nodes[0].sw].lft;
		ck_assert_msg(lft[la] == lft[lb],
		              "%s: the natural order splits them already: the test "
		              "proves nothing",
		              eng[e]);
		free(knob_tables(&t, eng[e], &cfg, e == 0, &n1));
		ck_assert_msg(lft[la] != lft[lb],
		              "%s: listed first, hosts 0 and 2 share leaf 0's uplink", eng[e]);
		uint8_t *t2 = knob_tables(&t, eng[e], &bad, e == 0, &n2);
		ck_assert(n0 == n2 && memcmp(t0, t2, n0) == 0);
		free(t0), free(t2);
	}
	unlink(cfg.guid_routing_order_file);
	unlink(bad.guid_routing_order_file);
	topo_free(&t);
}
END_TEST

/* I/O nodes off the spines, with cn_guid_file naming the compute nodes (OpenSM's io_guid_file
 * and max_reverse_hops case): up/down alone cannot join two spines' I/O nodes, nor reach
 * them from each other; ibsmd's ftree reaches every pair anyway (where up/down has no
 * route, the shortest path), which OpenSM's gives only with max_reverse_hops. */
START_TEST(ftree_io_nodes)
{
	struct topo t;
	topo_init(&t);
	uint32_t leaves[4], spines[2], first = TOPO_NONE;
	for (unsigned i = 0; i < 4; i++)
		leaves[i] = fix_switch(&t, 2 + 3);
	for (unsigned i = 0; i < 2; i++)
		spines[i] = fix_switch(&t, 4 + 1);
	for (unsigned l = 0; l < 4; l++)
		for (unsigned s = 0; s < 2; s++)
			fix_connect(&t, leaves[l], spines[s]);
	char cn[1024] = "";
	size_t at = 0;
	for (unsigned l = 0; l < 4; l++)
		for (unsigned h = 0; h < 3; h++) {
			uint32_t ca = fix_ca(&t);
			first = first == TOPO_NONE ? ca : first;
			fix_connect(&t, leaves[l], ca);
			at += (size_t)snprintf(cn + at, sizeof(cn) - at, "0x%" PRIx64 "\n",
			                       t.nodes[ca].guid);
		}
	for (unsigned s = 0; s < 2; s++)
		fix_connect(&t, spines[s], fix_ca(&t)); /* an I/O node on each spine */
	fix_finish(&t, first, NULL);
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	temp_file(cfg.cn_guid_file, sizeof(cfg.cn_guid_file), cn);
	char why[512];
	struct fix_routes r;
	ck_assert_msg(run_engine_full(&t, "ftree", &cfg, why, sizeof(why), &r, NULL) == 0, "%s",
	              why);
	ck_assert_msg(r.unreachable == 0 && r.loops == 0, "%llu unreachable: %s",
	              (unsigned long long)r.unreachable, r.first_problem);
	unlink(cfg.cn_guid_file);
	topo_free(&t);
}
END_TEST

/* ---- torus_config: OpenSM's torus-2QoS.conf ---- */

/* conf written to a file named in cfg->torus_config (the caller unlinks it). */
static void conf_file(struct ibsmd_config *cfg, const char *text)
{
	config_defaults(cfg);
	snprintf(cfg->torus_config, sizeof(cfg->torus_config), "/tmp/ibsmd-torus-XXXXXX");
	int fd = mkstemp(cfg->torus_config);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* OpenSM's torus-2QoS: does the shorter way from i to j round a ring of n cross its
 * dateline (between n-1 and 0)? A tie does not. */
static bool wraps(int i, int j, int n)
{
	int d = i > j ? i - j : j - i;
	return d > n - d;
}

static int mod(int v, int n)
{
	return ((v % n) + n) % n;
}

/* Every pair of hosts' path SL on the 4x5x3 fixture torus (switch base + i at fixture
 * coordinates f) against the file's coordinates: its x is the fixture's dimension 1 pointed
 * minus, y dimension 0, z dimension 2 pointed minus, the origin at switch `seed` moved by
 * the datelines dl; bit a of the SL: the shorter way along axis a crosses its dateline. */
static void check_conf_sls(struct topo *t, const struct ibsmd_config *cfg, uint32_t base,
                           uint32_t seed, const int dl[3], bool z_ring)
{
	const unsigned n[3] = {4, 5, 3};
	const struct routing_engine *e = routing_find("torus");
	struct log lg;
	log_init(&lg);
	lg.level = LOGL_ERR;
	struct routing_ctx ctx;
	ck_assert_int_eq(routing_ctx_build(&ctx, t, cfg, &lg), 0);
	void *state = NULL;
	ck_assert_int_eq(e->setup(&ctx, &state), 0);
	ck_assert_msg(e->unicast(&ctx, state) == 0, "torus with torus_config: %s", ctx.why);
	int s0 = (int)((seed - base) % n[0]), s1 = (int)((seed - base) / n[0] % n[1]),
	    s2 = (int)((seed - base) / (n[0] * n[1]));
	unsigned checked = 0;
	for (uint32_t a = 0; a < t->nnodes; a++) {
		if (topo_is_switch(t, a))
			continue;
		for (uint32_t b = 0; b < t->nnodes; b++) {
			if (topo_is_switch(t, b) || a == b)
				continue;
			int c[2][3];
			for (int k = 0; k < 2; k++) {
				uint32_t hp = t->nodes[k ? b : a].first_port + 1;
				int i = (int)(t->ports[t->ports[hp].peer].node - base);
				int f0 = i % 4, f1 = i / 4 % 5, f2 = i / 20;
				c[k][0] = mod(-(f1 - s1) - dl[0], 5);
				c[k][1] = mod((f0 - s0) - dl[1], 4);
				c[k][2] = mod(-(f2 - s2) - dl[2], 3);
			}
			uint8_t want =
			    (uint8_t)(wraps(c[0][0], c[1][0], 5) | wraps(c[0][1], c[1][1], 4) << 1 |
			              (z_ring && wraps(c[0][2], c[1][2], 3)) << 2);
			uint16_t la = t->ports[t->nodes[a].first_port + 1].lid,
			         lb = t->ports[t->nodes[b].first_port + 1].lid;
			uint8_t sl = routing_path_sl(e, state, &ctx, la, lb);
			ck_assert_msg(sl == want,
			              "LID %u -> %u: SL %u, OpenSM's torus-2QoS gives %u", la, lb,
			              sl, want);
			checked++;
		}
	}
	ck_assert_uint_eq(checked, 60u * 59u);
	e->teardown(state);
	routing_ctx_free(&ctx);
}

/* torus with OpenSM's torus-2QoS.conf: the first whole seed (the first names a switch that
 * is not there) is the origin moved by its datelines and points the axes, which need not be
 * ibsmd's own choice (here x is the cabling's second dimension, pointed the other way); each
 * path's SL then carries the dateline bits OpenSM's torus-2QoS gives (ties stay off the
 * dateline); the routes stay shortest and free of credit loops. A ring the file calls a mesh
 * is a line (no dateline bit); a shape that is not the cabling's fails the engine, naming
 * the axis. */
START_TEST(torus_config_seeds)
{
	const unsigned n[3] = {4, 5, 3};
	struct topo t;
	topo_init(&t);
	uint32_t base = t.nnodes;
	uint32_t h = fix_grid(&t, n, 3, true, 1);
	fix_finish(&t, h, NULL);
	/* the seed: fixture (1, 2, 1); x plus is the fixture's y minus, y plus its x plus, z
	 * minus its z plus */
	uint32_t seed = base + 1 + 4 * 2 + 20 * 1;
	uint64_t g = t.nodes[seed].guid, gx = t.nodes[seed - 4].guid, gy = t.nodes[seed + 1].guid,
	         gz = t.nodes[seed + 20].guid;
	const int dl[3] = {2, -1, 0};
	for (int z_ring = 1; z_ring >= 0; z_ring--) {
		char text[1024];
		snprintf(text, sizeof(text),
		         "# a torus site's file\n"
		         "torus 5 4 %s\n"
		         "xp_link 0xdead0001 0xdead0002  # a switch long gone\n"
		         "next_seed\n"
		         "xp_link 0x%llx 0x%llx\n"
		         "yp_link 0x%llx 0x%llx\n"
		         "zm_link 0x%llx 0x%llx\n"
		         "x_dateline %d\ny_dateline %d\n"
		         "portgroup_max_ports 16\nport_order 1 2 1\n",
		         z_ring ? "3" : "3m", (unsigned long long)g, (unsigned long long)gx,
		         (unsigned long long)g, (unsigned long long)gy, (unsigned long long)g,
		         (unsigned long long)gz, dl[0], dl[1]);
		struct ibsmd_config cfg;
		conf_file(&cfg, text);
		check_conf_sls(&t, &cfg, base, seed, dl, z_ring);
		struct fix_routes r;
		char why[512];
		ck_assert_int_eq(run_engine_full(&t, "torus", &cfg, why, sizeof(why), &r, NULL), 0);
		/* a ring routed as a line takes the long way where the closing link is shorter */
		ck_assert_msg(!r.credit_loop && !r.unreachable && !r.loops &&
		                  (!z_ring || !r.longer_than_shortest),
		              "torus with torus_config: %s", r.first_problem);
		unlink(cfg.torus_config);
	}
	struct ibsmd_config cfg;
	conf_file(&cfg, "torus 4 5 4\n"); /* no seed: the cabling's own axes, z one too long */
	char why[512];
	ck_assert_int_eq(run_engine_cfg(&t, "torus", &cfg, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "torus_config says 4 switches along z"), "%s", why);
	unlink(cfg.torus_config);
	topo_free(&t);
}
END_TEST

/* torus-2QoS.conf as OpenSM reads it, and each mistake named with its line. */
START_TEST(torus_config_parse)
{
	struct torus_conf c;
	char why[256];
	const char ok[] = "# comment\n\nmesh 3T 4 5 trailing words\nxp_link 0x10 0x11\n"
	                  "ym_link 0x10 17\nx_dateline -2\nnext_seed\nzp_link 0x20 0x21\n"
	                  "port_order 3 1 3 2\nmax_changes 8\n";
	ck_assert_msg(torus_conf_parse(ok, strlen(ok), "t.conf", &c, why, sizeof(why)) == 0, "%s",
	              why);
	ck_assert(c.ring[0] && !c.ring[1] && !c.ring[2]);
	ck_assert_uint_eq(c.radix[2], 5);
	ck_assert_uint_eq(c.nseeds, 2);
	ck_assert_uint_eq(c.seed[0].from, 0x10);
	ck_assert_uint_eq(c.seed[0].minus[1], 17); /* OpenSM's numbers: 17 is decimal */
	ck_assert_int_eq(c.seed[0].dateline[0], -2);
	ck_assert_uint_eq(c.seed[1].plus[2], 0x21);
	ck_assert_uint_eq(c.nport_order, 3);
	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"torus 4 4\n", "t.conf:1: z radix is missing"},
	    {"xp_link 1 2\n", "t.conf:1: \"xp_link\" before the torus or mesh line"},
	    {"torus 4 4 4\nxp_link 1 2\nym_link 3 4\n", "t.conf:3: ym_link starts at"},
	    {"torus 4 4 4\nx_dateline 4\n", "t.conf:2: x_dateline: \"4\" is not a position"},
	    {"torus 4 4 4\ntorus 4 4 4\n", "t.conf:2: a second torus or mesh line"},
	    {"torus 4 4q 4\n", "t.conf:1: y radix: 1 to 4096"},
	    {"torus 4 4 4\nq_link 1 2\n", "t.conf:2: \"q_link\" is not a torus-2QoS.conf keyword"},
	    {"torus 4 4 4\nport_order 0\n", "t.conf:2: port_order: \"0\""},
	    {"# nothing\n", "t.conf: no torus or mesh line"},
	    /* a seed without links would leave the origin to chance */
	    {"torus 4 4 4\nnext_seed\nxp_link 1 2\n", "t.conf: seed 1 has no link"},
	    {"torus 4 4 4\nxp_link 1 2\nnext_seed\n", "t.conf: seed 2 has no link"},
	    {"torus 4 4 4\nx_dateline 1\n", "t.conf: seed 1 has no link"},
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(torus_conf_parse(bad[i].text, strlen(bad[i].text), "t.conf", &c,
		                                  why, sizeof(why)),
		                 -1);
		ck_assert_msg(!strncmp(why, bad[i].want, strlen(bad[i].want)), "case %u: %s", i,
		              why);
	}
}
END_TEST

/* LMC alternates on grids: the later LIDs of a block go by up/down orders, each on an SL and
 * a VL of its own above the dimension order's (8 VLs: 6 orders on a torus, whose datelines
 * take 2, 7 on a mesh), so the engines stay free of credit loops and every pair of host
 * switches has two LIDs whose paths share no link. The reverse dimension order (before)
 * left the pairs along one dimension on one route: 54 of every switch's 63 on a 4x4x4
 * torus, 50 of 59 on a 4x3x5 mesh. */
static double disjoint_share(const struct topo *t);
static void set_lmc(struct topo *t, uint8_t lmc);

START_TEST(grid_lmc_alternates)
{
	const char *engine = _i ? "torus" : "dor";
	static const struct {
		unsigned n[3];
		bool torus;
		double share;
	} cases[] = {{{4, 4, 4}, true, 1.0}, {{4, 3, 5}, false, 1.0}};
	for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct topo t;
		topo_init(&t);
		uint32_t h = fix_grid(&t, cases[k].n, 3, cases[k].torus, 1);
		fix_finish(&t, h, NULL);
		set_lmc(&t, 2);
		struct fix_routes r;
		unsigned layers = 0;
		route_clean(&t, engine, k, &r, &layers);
		ck_assert_uint_eq(layers, cases[k].torus ? 8u + 6u : 1u + 7u);
		double share = disjoint_share(&t);
		fprintf(stderr, "grid_lmc_alternates: %s, case %u: %.3f link-disjoint\n", engine, k,
		        share);
		ck_assert_msg(share >= cases[k].share - 1e-9,
		              "%s, case %u: %.3f link-disjoint (want %.3f)", engine, k, share,
		              cases[k].share);
		topo_free(&t);
	}
}
END_TEST

/* A failed link: torus routes around it, free of credit loops; dor refuses, naming it. A
 * failed switch anywhere, or two in a row along the last dimension: torus routes round
 * them, free of credit loops; two apart: torus refuses saying why, nue routes. Not a grid:
 * both refuse. */
START_TEST(grid_failures)
{
	static const unsigned n[3] = {4, 4, 4};
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_grid(&t, n, 3, true, 1);
	/* switch (1,2,3) loses its plus-y link (port 1 + 2 + 2 = 5) */
	uint32_t sw = 1 + 4 * (2 + 4 * 3), p = topo_port(&t, sw, 5), peer = t.ports[p].peer;
	topo_unlink(&t, p);
	t.ports[p].pi.port_state = t.ports[peer].pi.port_state = PORT_STATE_DOWN;
	fix_finish(&t, h, NULL);
	char why[512];
	struct fix_routes r;
	ck_assert_int_eq(run_engine_full(&t, "dor", NULL, why, sizeof(why), NULL, NULL), -1);
	ck_assert_msg(strstr(why, "has no link in dimension 1 (port 5)"), "%s", why);
	ck_assert_int_eq(run_engine_full(&t, "torus", NULL, why, sizeof(why), &r, NULL), 0);
	ck_assert_msg(r.unreachable == 0 && r.loops == 0, "%s", r.first_problem);
	ck_assert_msg(!r.credit_loop, "torus around a failed link: credit loop");
	topo_free(&t);

	/* one switch dies, anywhere (every place of a 4x4x4 and a 5x4x3 torus, and of a 6x6
	 * one): torus routes round it, every pair reached, no credit loop with its SL-to-VL
	 * tables by input port; so does one in a row along z with it */
	static const unsigned sizes[3][3] = {{4, 4, 4}, {5, 4, 3}, {6, 6, 1}};
	for (unsigned k = 0; k < 3; k++) {
		unsigned nd = sizes[k][2] > 1 ? 3 : 2,
		         npos = sizes[k][0] * sizes[k][1] * sizes[k][2];
		for (unsigned pass = 0; pass < 2; pass++)
			for (uint32_t dead = 0; dead < npos; dead++) {
				if (pass && nd < 3)
					break;
				/* the second pass: its neighbour along z dies too */
				uint32_t gone[2] = {dead,
				                    (dead + sizes[k][0] * sizes[k][1]) % npos};
				if (gone[0] == 0 || (pass && gone[1] == 0))
					continue; /* the SM's host hangs off switch 0 */
				topo_init(&t);
				h = fix_grid(&t, sizes[k], nd, true, 1);
				for (unsigned g = 0; g <= pass; g++)
					for (unsigned q = 0; q <= t.nodes[gone[g]].nports; q++)
						topo_unlink(&t, t.nodes[gone[g]].first_port + q);
				fix_finish(&t, h, NULL);
				ck_assert_msg(run_engine_full(&t, "torus", NULL, why, sizeof(why),
				                              &r, NULL) == 0,
				              "torus %u, switch %u (+%u) dead: %s", k, dead, pass,
				              why);
				ck_assert_msg(r.unreachable == 0 && r.loops == 0 && !r.credit_loop,
				              "torus %u, switch %u (+%u) dead: %s%s", k, dead, pass,
				              r.first_problem, r.credit_loop ? " credit loop" : "");
				topo_free(&t);
			}
	}
	/* two apart: refused with the reason, nue routes */
	topo_init(&t);
	h = fix_grid(&t, n, 3, true, 1);
	static const uint32_t apart[2] = {2 + 4 * (2 + 4 * 2), 0 + 4 * (1 + 4 * 3)};
	for (unsigned g = 0; g < 2; g++)
		for (unsigned q = 0; q <= t.nodes[apart[g]].nports; q++)
			topo_unlink(&t, t.nodes[apart[g]].first_port + q);
	fix_finish(&t, h, NULL);
	ck_assert_int_eq(run_engine_full(&t, "torus", NULL, why, sizeof(why), NULL, NULL), -1);
	ck_assert_msg(strstr(why, "2 switches missing"), "%s", why);
	ck_assert_int_eq(run_engine_full(&t, "nue", NULL, why, sizeof(why), &r, NULL), 0);
	ck_assert_msg(r.unreachable == 0 && !r.credit_loop, "nue: %s", r.first_problem);
	topo_free(&t);

	/* a fat tree is no grid */
	topo_init(&t);
	h = fix_fattree(&t, 4, 2, 2);
	fix_finish(&t, h, NULL);
	ck_assert_int_eq(run_engine_full(&t, "dor", NULL, why, sizeof(why), NULL, NULL), -1);
	ck_assert_msg(strstr(why, "dor: "), "%s", why);
	topo_free(&t);
}
END_TEST

/* minhop, updn, dnup and ftree spread their switches over threads: the tables are the same
 * with one thread and with four, on fat trees (the larger with more destination switches
 * than one batch of up/down labels) and on a random graph (dnup fails there the same way). */
static uint8_t *engine_tables(const struct routing_engine *e, struct topo *t, unsigned threads,
                              size_t *len, int *rc)
{
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	struct routing_ctx ctx;
	ck_assert_int_eq(routing_ctx_build(&ctx, t, &cfg, NULL), 0);
	ctx.threads = threads;
	void *state = NULL;
	*rc = e->setup ? e->setup(&ctx, &state) : 0;
	if (*rc == 0)
		*rc = e->unicast(&ctx, state);
	if (e->teardown)
		e->teardown(state);
	*len = (size_t)t->nsws * t->sws[0].lft_size;
	uint8_t *all = malloc(*len);
	for (uint32_t s = 0; s < t->nsws; s++)
		memcpy(all + (size_t)s * t->sws[0].lft_size, t->sws[s].lft, t->sws[0].lft_size);
	routing_ctx_free(&ctx);
	return all;
}

/* The names that errors and --help list are every engine's (lash was once left out) */
START_TEST(engine_names_listed)
{
	const struct routing_engine *all[] = {&routing_minhop, &routing_updn, &routing_dnup,
	                                      &routing_ftree,  &routing_sssp, &routing_dfsssp,
	                                      &routing_lash,   &routing_nue,  &routing_dor,
	                                      &routing_torus,  &routing_file};
	char names[256];
	snprintf(names, sizeof(names), ", %s,", routing_names());
	unsigned listed = 1;
	for (const char *c = names + 2; *c; c++)
		listed += *c == ',' && c[1];
	ck_assert_uint_eq(listed, sizeof(all) / sizeof(all[0]));
	for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		char word[32];
		snprintf(word, sizeof(word), " %s,", all[i]->name);
		ck_assert_msg(strstr(names, word), "%s is not listed in \"%s\"", all[i]->name,
		              names);
		ck_assert_ptr_eq(routing_find(all[i]->name), all[i]);
	}
}
END_TEST

START_TEST(engine_threads)
{
	const struct routing_engine *spread[] = {&routing_minhop, &routing_updn, &routing_dnup,
	                                         &routing_ftree,  &routing_sssp, &routing_dfsssp,
	                                         &routing_lash,   &routing_nue};
	/* at LMC 2 too: the LMC alternates run over the CPUs in parts of fixed destination
	 * switches, each spreading its own LIDs' loads */
	for (unsigned k = 0; k < 6; k++) {
		struct topo t;
		topo_init(&t);
		uint32_t h = k % 3 == 2   ? fix_random(&t, 40, 16, 4, 120, 11)
		             : k % 3 == 1 ? fix_fattree3(&t, 12)
		                          : fix_fattree3(&t, 8);
		fix_finish(&t, h, NULL);
		if (k >= 3)
			set_lmc(&t, 2);
		for (unsigned i = 0; i < sizeof(spread) / sizeof(spread[0]); i++) {
			size_t a, b;
			int rc1, rc4;
			uint8_t *one = engine_tables(spread[i], &t, 1, &a, &rc1),
			        *four = engine_tables(spread[i], &t, 4, &b, &rc4);
			ck_assert_int_eq(rc1, rc4);
			ck_assert_uint_eq(a, b);
			ck_assert_msg(rc1 < 0 || !memcmp(one, four, a),
			              "case %u: %s's tables differ with 4 threads", k,
			              spread[i]->name);
			free(one);
			free(four);
		}
		topo_free(&t);
	}
}
END_TEST

/* minhop as written plainly: a BFS per switch, each switch's candidates to each destination
 * switch found by scanning its neighbours, routing_assign without a memo. The engine builds
 * the hops on every CPU, finds the candidates a neighbour's row at a time and carries what
 * routing_assign derives from one destination to the next: none of that may change a route,
 * with or without the tables the switches hold (sticky). */
static void minhop_plain(struct routing_ctx *ctx)
{
	uint32_t ns = ctx->nsw;
	uint16_t *dist = malloc(sizeof(uint16_t) * ns * ns);
	uint32_t *queue = malloc(sizeof(uint32_t) * (ns + 1)), cand[256];
	for (uint32_t r = 0; r < ns; r++)
		routing_bfs(ctx, r, dist + (size_t)r * ns, queue);
	for (uint32_t t = 0; t < ns; t++)
		if (ctx->dst_start[t] != ctx->dst_start[t + 1])
			routing_assign_local(ctx, t);
	for (uint32_t s = 0; s < ns; s++)
		for (uint32_t t = 0; t < ns; t++) {
			const uint16_t *ds = dist + (size_t)s * ns;
			if (t == s || ctx->dst_start[t] == ctx->dst_start[t + 1] || ds[t] == RT_INF)
				continue;
			uint32_t n = 0;
			for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++)
				if (dist[(size_t)ctx->adj[e].to * ns + t] + 1u == ds[t])
					cand[n++] = e;
			routing_assign(ctx, s, t, cand, n);
		}
	free(dist);
	free(queue);
}

static uint8_t *minhop_tables(struct topo *t, bool plain, bool sticky, unsigned threads)
{
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	struct routing_ctx ctx;
	ck_assert_int_eq(routing_ctx_build(&ctx, t, &cfg, NULL), 0);
	ctx.threads = threads;
	ctx.sticky = sticky;
	if (plain)
		minhop_plain(&ctx);
	else
		ck_assert_int_eq(routing_minhop_routes(&ctx, false), 0);
	size_t sz = t->sws[0].lft_size;
	uint8_t *all = malloc((size_t)t->nsws * sz);
	for (uint32_t s = 0; s < t->nsws; s++)
		memcpy(all + (size_t)s * sz, t->sws[s].lft, sz);
	routing_ctx_free(&ctx);
	return all;
}

START_TEST(minhop_as_plain)
{
	for (unsigned k = 0; k < 3; k++) {
		struct topo t;
		topo_init(&t);
		/* radix 16 with extra links: switches of more than 8 switch neighbours (the
		 * candidates' second byte of bits) */
		uint32_t h = k == 2   ? fix_random(&t, 40, 16, 4, 120, 11)
		             : k == 1 ? fix_fattree3(&t, 12)
		                      : fix_fattree3(&t, 8);
		fix_finish(&t, h, NULL);
		unsigned wide = 0;
		for (uint32_t s = 0; s < t.nsws; s++) {
			unsigned links = 0;
			const struct topo_node *n = &t.nodes[t.sws[s].node];
			for (unsigned p = 1; p <= n->nports; p++) {
				uint32_t peer = t.ports[n->first_port + p].peer;
				links +=
				    peer != TOPO_NONE && topo_is_switch(&t, t.ports[peer].node);
			}
			wide += links > 8;
		}
		if (k == 2)
			ck_assert_uint_gt(wide, 0);
		for (int sticky = 0; sticky < 2; sticky++) {
			if (sticky) {
				/* held tables: every third entry a port that is no candidate,
				 * the rest each switch's last routes (valid or not by now) */
				uint8_t *last = minhop_tables(&t, true, false, 1);
				size_t sz = t.sws[0].lft_size;
				for (uint32_t s = 0; s < t.nsws; s++) {
					ck_assert_int_eq(topo_lft_hw_reserve(&t, s, (uint32_t)sz),
					                 0);
					for (size_t l = 0; l < sz; l++)
						t.sws[s].lft_hw[l] =
						    l % 3 ? last[s * sz + l] : (uint8_t)(l % 7 + 1);
				}
				free(last);
			}
			uint8_t *want = minhop_tables(&t, true, sticky, 1);
			for (unsigned threads = 1; threads <= 2; threads++) {
				uint8_t *got = minhop_tables(&t, false, sticky, threads);
				for (uint32_t s = 0; s < t.nsws; s++) {
					size_t sz = t.sws[0].lft_size;
					ck_assert_msg(!memcmp(got + s * sz, want + s * sz, sz),
					              "case %u sticky %d threads %u: switch %u's "
					              "table differs from minhop written plainly",
					              k, sticky, threads, s);
				}
				free(got);
			}
			free(want);
		}
		topo_free(&t);
	}
}
END_TEST

START_TEST(fat_tree)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_fattree(&t, 4, 2, 3);
	fix_finish(&t, h, NULL);
	check(&t, engines[_i], true, true);
	topo_free(&t);
}
END_TEST

START_TEST(torus)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_torus(&t, 4, 4, 1);
	fix_finish(&t, h, NULL);
	/* minhop and sssp: shortest, with the torus's credit loops; the up/down engines
	 * without loops, and longer; dfsssp both, with its layers */
	check(&t, engines[_i], shortest_any[_i], loop_free_any[_i]);
	topo_free(&t);
}
END_TEST

START_TEST(fat_tree_dead_link)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_fattree(&t, 4, 2, 2);
	/* leaf 0's link to spine 0 is gone: traffic to and from leaf 0 takes spine 1 */
	uint32_t leaf0 = 0;
	for (unsigned p = 1; p <= t.nodes[leaf0].nports; p++) {
		uint32_t pi = topo_port(&t, leaf0, p), peer = t.ports[pi].peer;
		if (peer != TOPO_NONE && topo_is_switch(&t, t.ports[peer].node)) {
			topo_unlink(&t, pi);
			t.ports[pi].pi.port_state = t.ports[peer].pi.port_state = PORT_STATE_DOWN;
			break;
		}
	}
	fix_finish(&t, h, NULL);
	check(&t, engines[_i], true, true);
	topo_free(&t);
}
END_TEST

START_TEST(fat_tree_lost_spine)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_fattree(&t, 3, 3, 2);
	/* spine 1 (node 4) dies: every leaf keeps two spines */
	struct topo_node *sp = &t.nodes[4];
	for (unsigned p = 0; p <= sp->nports; p++)
		topo_unlink(&t, sp->first_port + p);
	fix_finish(&t, h, NULL);
	ck_assert(!t.nodes[4].present);
	check(&t, engines[_i], true, true);
	topo_free(&t);
}
END_TEST

START_TEST(lmc_blocks_spread)
{
	/* LMC 1: each host's two LIDs leave its leaf by different spines */
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_fattree(&t, 2, 2, 2);
	fix_finish(&t, h, NULL);
	uint16_t lid = 2;
	for (uint32_t p = 0; p < t.nports; p++) {
		if (!t.ports[p].lid)
			continue;
		t.ports[p].lmc = topo_is_switch(&t, t.ports[p].node) ? 0 : 1;
		t.ports[p].lid = lid;
		lid = (uint16_t)(lid + (1u << t.ports[p].lmc) + (t.ports[p].lmc ? 0 : 1));
		lid = (uint16_t)((lid + 1) & ~1u);
	}
	topo_rebuild_lids(&t);
	ck_assert_int_eq(run_engine(&t, engines[_i]), 0);
	struct fix_routes r;
	fix_check_routes(&t, &r);
	ck_assert_msg(r.unreachable == 0, "%s", r.first_problem);
	/* at a leaf, a remote host's two LIDs go up by two different ports */
	uint32_t far = topo_port(&t, h + 3, 1); /* a host on the other leaf */
	uint16_t base = t.ports[far].lid;
	const struct topo_switch *leaf0 = &t.sws[0];
	ck_assert_uint_ne(leaf0->lft[base], leaf0->lft[base + 1]);
	topo_free(&t);
}
END_TEST

/* CA ports get 2^lmc LIDs (aligned blocks), switches one. */
static void set_lmc(struct topo *t, uint8_t lmc)
{
	uint16_t lid = 1;
	for (uint32_t p = 0; p < t->nports; p++) {
		if (!t->ports[p].lid)
			continue;
		uint8_t l = topo_is_switch(t, t->ports[p].node) ? 0 : lmc;
		lid = (uint16_t)((lid + (1u << l) - 1) & ~((1u << l) - 1));
		t->ports[p].lid = lid;
		t->ports[p].lmc = l;
		lid = (uint16_t)(lid + (1u << l));
	}
	topo_rebuild_lids(t);
	t->generation++;
}

/* The links (lower topo port index of each) a packet crosses from switch node s to lid,
 * by the wanted tables; 0 when it does not get there. */
static unsigned path_links(const struct topo *t, uint32_t s, uint16_t lid, uint32_t *links)
{
	uint32_t dst = t->lid_port[lid], n = 0;
	uint32_t dsw = topo_is_switch(t, t->ports[dst].node) ? t->ports[dst].node
	                                                     : t->ports[t->ports[dst].peer].node;
	while (s != dsw) {
		if (n == 64)
			return 0;
		uint8_t out = t->sws[t->nodes[s].sw].lft[lid];
		if (!out || out == 0xff)
			return 0;
		uint32_t p = topo_port(t, s, out), q = t->ports[p].peer;
		links[n++] = p < q ? p : q;
		s = t->ports[q].node;
	}
	return n;
}

/* Of every (host switch, other switch's CA port) pair, the share where two of the port's
 * LIDs are reached by paths sharing no link (counted by walking the tables, not by
 * routing/lmc.c's own count). */
static double disjoint_share(const struct topo *t)
{
	uint64_t pairs = 0, apart = 0;
	for (uint32_t s = 0; s < t->nnodes; s++) {
		if (!topo_is_switch(t, s))
			continue;
		bool hosts = false;
		for (unsigned i = 1; i <= t->nodes[s].nports && !hosts; i++) {
			uint32_t q = t->ports[topo_port(t, s, i)].peer;
			hosts = q != TOPO_NONE && !topo_is_switch(t, t->ports[q].node);
		}
		if (!hosts)
			continue;
		for (uint32_t p = 0; p < t->nports; p++) {
			const struct topo_port *pp = &t->ports[p];
			if (!pp->lid || !pp->lmc || topo_is_switch(t, pp->node) ||
			    t->ports[pp->peer].node == s)
				continue;
			uint32_t links[8][64];
			unsigned n[8], nl = 1u << pp->lmc;
			for (unsigned k = 0; k < nl && k < 8; k++) {
				n[k] = path_links(t, s, (uint16_t)(pp->lid + k), links[k]);
				ck_assert_msg(n[k], "switch %u: LID %u not reached", s,
				              pp->lid + k);
			}
			bool found = false;
			for (unsigned j = 0; j < nl && !found; j++)
				for (unsigned k = j + 1; k < nl && !found; k++) {
					bool shared = false;
					for (unsigned x = 0; x < n[j]; x++)
						for (unsigned y = 0; y < n[k]; y++)
							shared |= links[j][x] == links[k][y];
					found = !shared;
				}
			pairs++;
			apart += found;
		}
	}
	ck_assert_uint_gt(pairs, 0);
	return (double)apart / (double)pairs;
}

/* LMC alternates (routing/lmc.c): on graphs where every pair of switches has two
 * link-disjoint paths, two of a port's four LIDs are reached by paths sharing no link from
 * most host switches, as far as each engine's rule lets them; every LID is still reached,
 * and the engines free of credit loops stay so with the alternates. The shares are floors
 * just under what each gives today (on a ring a destination's tree of routes can go the long
 * way round for only part of it: LIDs 1 and 3 go round opposite ways between them). */
START_TEST(lmc_alternates)
{
	static const struct {
		const char *engine;
		double ring, torus;
	} want[] = {{"minhop", 1.0, 0.99},
	            {"sssp", 1.0, 0.99},
	            {"dfsssp", 1.0, 0.99},
	            {"updn", 0.55, 0.95},
	            {"nue", 1.0, 0.95}};
	for (unsigned g = 0; g < 2; g++) {
		struct topo t;
		topo_init(&t);
		uint32_t h = g == 0 ? fix_ring(&t, 6, 2) : fix_torus(&t, 4, 4, 2);
		fix_finish(&t, h, NULL);
		set_lmc(&t, 2);
		for (unsigned e = 0; e < sizeof(want) / sizeof(want[0]); e++) {
			char why[512];
			struct fix_routes r;
			int rc =
			    run_engine_full(&t, want[e].engine, NULL, why, sizeof(why), &r, NULL);
			ck_assert_msg(rc == 0, "%s: %s", want[e].engine, why);
			ck_assert_msg(r.unreachable == 0 && r.loops == 0, "%s: %s", want[e].engine,
			              r.first_problem);
			if (strcmp(want[e].engine, "minhop") && strcmp(want[e].engine, "sssp"))
				ck_assert_msg(!r.credit_loop, "%s: credit loop with the alternates",
				              want[e].engine);
			double share = disjoint_share(&t), floor = g ? want[e].torus : want[e].ring;
			fprintf(stderr, "lmc_alternates: %s on the %s: %.3f link-disjoint\n",
			        want[e].engine, g ? "4x4 torus" : "6-switch ring", share);
			ck_assert_msg(share >= floor,
			              "%s on the %s: %.3f link-disjoint (want %.2f)",
			              want[e].engine, g ? "torus" : "ring", share, floor);
		}
		topo_free(&t);
	}
}
END_TEST

/* Is the switch graph still connected without the link at topo port skip (and its peer)? */
static bool connected_without(const struct topo *t, uint32_t skip)
{
	uint32_t *seen = calloc(t->nnodes, sizeof(uint32_t)),
	         *q = malloc(sizeof(uint32_t) * t->nnodes);
	uint32_t head = 0, tail = 0, start = TOPO_NONE, nsw = 0, reached = 0;
	for (uint32_t n = 0; n < t->nnodes; n++)
		if (topo_is_switch(t, n)) {
			nsw++;
			if (start == TOPO_NONE)
				start = n;
		}
	seen[start] = 1;
	q[tail++] = start;
	while (head < tail) {
		uint32_t n = q[head++];
		reached++;
		for (unsigned i = 1; i <= t->nodes[n].nports; i++) {
			uint32_t p = topo_port(t, n, i), peer = t->ports[p].peer;
			if (peer == TOPO_NONE || p == skip || peer == skip)
				continue;
			uint32_t m = t->ports[peer].node;
			if (topo_is_switch(t, m) && !seen[m]) {
				seen[m] = 1;
				q[tail++] = m;
			}
		}
	}
	free(seen);
	free(q);
	return reached == nsw;
}

static bool two_edge_connected(const struct topo *t)
{
	for (uint32_t p = 0; p < t->nports; p++) {
		uint32_t peer = t->ports[p].peer;
		if (peer != TOPO_NONE && topo_is_switch(t, t->ports[p].node) &&
		    topo_is_switch(t, t->ports[peer].node) && !connected_without(t, p))
			return false;
	}
	return true;
}

/* The aim on graphs the test has not seen before: on random 2-edge-connected graphs
 * generated from a fresh seed each run (IBSMD_TEST_SEED repeats one), 95% of host pairs or
 * more have a link-disjoint alternate at LMC 2 with every engine for any graph. */
START_TEST(lmc_alternates_fresh_seeds)
{
	const char *env = getenv("IBSMD_TEST_SEED");
	uint32_t seed = env ? (uint32_t)strtoul(env, NULL, 0) : (uint32_t)time(NULL);
	fprintf(stderr, "lmc_alternates_fresh_seeds: IBSMD_TEST_SEED=%u\n", seed);
	unsigned tested = 0;
	for (uint32_t k = 0; k < 40 && tested < 4; k++) {
		struct topo t;
		topo_init(&t);
		unsigned sw = 16 + (seed + k) % 24;
		uint32_t h = fix_random(&t, sw, 16, 2, sw * 2, seed + k);
		fix_finish(&t, h, NULL);
		if (!two_edge_connected(&t)) {
			topo_free(&t);
			continue;
		}
		set_lmc(&t, 2);
		/* minhop and sssp take any path; the deadlock-free engines keep their rule
		 * (updn's orders, one per VL, the layered engines' layers). Over 720 graphs
		 * (2026-11-28, seeds 1000-1890 and 5000-5890 step 10) the least shares were
		 * minhop 97.7%, sssp and dfsssp 98.6%, updn 97.6%, nue 97.3% (94.7% before its
		 * alternates chose among up/down orders in the layers its trees left empty;
		 * updn 91.5% with LID k on order k): the aim, 95%. updn gave 94.2% on a
		 * 16-switch graph of 64 more (IBSMD_TEST_SEED=3024), where every order rooted
		 * at the switch farthest from the roots before left a switch without an
		 * alternate apart to 7 others; its last order is now chosen for the blocks
		 * the others leave short (100% there) */
		static const struct {
			const char *engine;
			double floor;
			bool free_of_loops;
		} want[] = {{"minhop", 0.95, false},
		            {"sssp", 0.95, false},
		            {"updn", 0.95, true},
		            {"dfsssp", 0.95, true},
		            {"nue", 0.95, true}};
		for (unsigned e = 0; e < sizeof(want) / sizeof(want[0]); e++) {
			char why[512];
			struct fix_routes r;
			ck_assert_msg(run_engine_full(&t, want[e].engine, NULL, why, sizeof(why),
			                              &r, NULL) == 0,
			              "%s, seed %u: %s", want[e].engine, seed + k, why);
			ck_assert_msg(r.unreachable == 0 && r.loops == 0, "%s, seed %u: %s",
			              want[e].engine, seed + k, r.first_problem);
			ck_assert_msg(!want[e].free_of_loops || !r.credit_loop,
			              "%s, seed %u: credit loop with the alternates",
			              want[e].engine, seed + k);
			double share = disjoint_share(&t);
			fprintf(stderr, "  seed %u, %u switches: %s %.3f link-disjoint\n", seed + k,
			        sw, want[e].engine, share);
			ck_assert_msg(
			    share >= want[e].floor,
			    "%s on random graph seed %u (%u switches): %.3f link-disjoint "
			    "(want %.2f)",
			    want[e].engine, seed + k, sw, share, want[e].floor);
		}
		tested++;
		topo_free(&t);
	}
	ck_assert_uint_ge(tested, 2);
}
END_TEST

/* updn and dnup put LID k of each block on up/down order k, on SL and VL k, as far as the
 * switch links run VLs (up to 4 orders): with 2 VLs LIDs 1-3 on a second order, with 8 LIDs
 * 1, 2 and 3 each on its own; with one VL they keep the one order (fewer apart). Either way
 * the fabric stays free of credit loops. */
START_TEST(updown_lmc_orders)
{
	const char *engine = _i ? "dnup" : "updn";
	/* vl_cap 1: VL0; 2: VL0-1; 4: VL0-7 */
	static const struct {
		uint8_t vl_cap;
		unsigned layers;
		double floor;
	} cases[] = {{4, 4, 0.95}, {2, 2, 0.95}, {1, 1, 0.75}};
	for (unsigned k = 0; k < 3; k++) {
		struct topo t;
		topo_init(&t);
		uint32_t h = fix_torus(&t, 4, 4, 2);
		fix_finish(&t, h, NULL);
		for (uint32_t p = 0; p < t.nports; p++)
			t.ports[p].pi.vl_cap = cases[k].vl_cap;
		set_lmc(&t, 2);
		struct fix_routes r;
		unsigned layers = 0;
		route_clean(&t, engine, k, &r, &layers);
		ck_assert_uint_eq(layers, cases[k].layers);
		double share = disjoint_share(&t);
		fprintf(stderr, "updown_lmc_orders: %s, vl_cap %u: %u layers, %.3f link-disjoint\n",
		        engine, cases[k].vl_cap, layers, share);
		ck_assert_msg(share >= cases[k].floor, "%s, vl_cap %u: %.3f link-disjoint", engine,
		              cases[k].vl_cap, share);
		topo_free(&t);
	}
}
END_TEST

/* sssp and dfsssp spread a block's later LIDs over the other shortest ways of the first
 * LID's Dijkstra: on a 3-level fat tree every host switch's paths to the block's LIDs keep
 * apart as the engine laid them, so dfsssp's layering of them needs no more layers than at
 * LMC 0 (one). Before, a Dijkstra per LID crossed the first LID's paths, lmc.c grew trees
 * of its own for them, and dfsssp took 4 layers at LMC 2. */
START_TEST(sssp_lmc_spread)
{
	const char *engine = _i ? "dfsssp" : "sssp";
	for (uint8_t lmc = 0; lmc <= 2; lmc += 2) {
		struct topo t;
		topo_init(&t);
		uint32_t h = fix_fattree3(&t, 8);
		fix_finish(&t, h, NULL);
		set_lmc(&t, lmc);
		struct fix_routes r;
		unsigned layers = 0;
		route_clean(&t, engine, lmc, &r, &layers);
		double share = lmc ? disjoint_share(&t) : 1.0;
		fprintf(stderr, "sssp_lmc_spread: %s, LMC %u: %u layer(s), %.3f link-disjoint\n",
		        engine, lmc, layers, share);
		ck_assert_uint_eq(layers, 1);
		ck_assert_msg(share >= 1.0, "%s: %.3f link-disjoint", engine, share);
		topo_free(&t);
	}
}
END_TEST

/* updn (and dnup, on the trees it is for) chooses each alternate LID's up/down order: LID k tries
 * order k first and, where a host switch is left without a pair of its block's LIDs apart, the
 * other orders (as many as the VLs, up to 8, or routing_max_vls allow). On these random graphs LID
 * k on order k alone left 91.5-94.3% of host pairs with a link-disjoint alternate; the choice gives
 * 100%, free of credit loops. routing_max_vls 3 keeps it to 3 VLs (before, updn took 4 whatever
 * it said). On the fourth graph every order rooted at the switch farthest from the roots
 * before left one switch without an alternate apart to 7 others (94.2%): the last order is
 * now rooted where it re-routes the blocks left short best (100%; 1081 at 3 VLs 94.1 ->
 * 100%). */
START_TEST(updown_lmc_order_choice)
{
	static const uint32_t seeds[] = {1344, 1081, 1421, 3024};
	for (unsigned k = 0; k < sizeof(seeds) / sizeof(seeds[0]); k++) {
		static const unsigned max_vls[] = {0, 3};
		for (unsigned m = 0; m < 2; m++) {
			struct topo t;
			topo_init(&t);
			unsigned sw = 16 + seeds[k] % 24;
			uint32_t h = fix_random(&t, sw, 16, 2, sw * 2, seeds[k]);
			fix_finish(&t, h, NULL);
			ck_assert(two_edge_connected(&t));
			set_lmc(&t, 2);
			struct fix_routes r;
			unsigned layers = 0;
			route_clean_vls(&t, "updn", max_vls[m], seeds[k], &r, &layers);
			ck_assert_uint_le(layers, max_vls[m] ? max_vls[m] : 8);
			double share = disjoint_share(&t);
			fprintf(
			    stderr,
			    "updown_lmc_order_choice: updn, seed %u, max VLs %u: %u layers, %.3f "
			    "link-disjoint\n",
			    seeds[k], max_vls[m], layers, share);
			if (!m)
				ck_assert_msg(share >= 0.95, "updn, seed %u: %.3f link-disjoint",
				              seeds[k], share);
			topo_free(&t);
		}
	}
}
END_TEST

/* nue where its own trees fill every layer it has, the escape layer too: at LMC > 0 it
 * keeps the escape layer for the escape routes and the alternates that follow the escape
 * tree's up/down order, so that they always find a layer. Before that, on a 200-switch
 * random graph with 8 VLs 4.5% of host pairs had a link-disjoint alternate. Here dense
 * random graphs with 2 VLs, whose trees fill both layers at LMC 0: 47% before, 98-99% now. */
START_TEST(nue_lmc_full_layers)
{
	for (uint32_t seed = 1; seed <= 3; seed++) {
		struct topo t;
		topo_init(&t);
		uint32_t h = fix_random(&t, 40, 16, 2, 40 * 5, seed);
		fix_finish(&t, h, NULL);
		struct ibsmd_config cfg;
		config_defaults(&cfg);
		cfg.routing_max_vls = 2;
		char why[512];
		struct fix_routes r;
		unsigned layers = 0;
		ck_assert_int_eq(run_engine_full(&t, "nue", &cfg, why, sizeof(why), &r, &layers),
		                 0);
		ck_assert_uint_eq(layers, 2); /* both layers hold trees at LMC 0 */
		set_lmc(&t, 2);
		ck_assert_msg(run_engine_full(&t, "nue", &cfg, why, sizeof(why), &r, &layers) == 0,
		              "seed %u: %s", seed, why);
		ck_assert_msg(r.unreachable == 0 && r.loops == 0, "seed %u: %s", seed,
		              r.first_problem);
		ck_assert_msg(!r.credit_loop, "seed %u: credit loop with the alternates", seed);
		ck_assert_uint_le(layers, 2);
		double share = disjoint_share(&t);
		fprintf(stderr, "nue_lmc_full_layers: seed %u: %.3f link-disjoint\n", seed, share);
		ck_assert_msg(share >= 0.9, "seed %u: %.3f link-disjoint", seed, share);
		topo_free(&t);
	}
}
END_TEST

/* A fat tree with links missing (128 hosts, 6 links down) at LMC 2: every host switch keeps
 * a link- and switch-disjoint alternate with every engine. nue's spread later LIDs that its
 * trees' layer refused, though apart already, took their block's first LID's routes until
 * they were laid in any layer that takes them: 88.8% of host pairs here, 97.3% on
 * fabricsim's fattree:radix=8,levels=3,missing-links=8,seed=1. */
START_TEST(lmc_fattree_missing_links)
{
	struct topo t;
	quasi_fattree(&t);
	ck_assert(two_edge_connected(&t));
	set_lmc(&t, 2);
	static const char *const names[] = {"minhop", "updn", "dfsssp", "nue"};
	for (unsigned e = 0; e < 4; e++) {
		char why[512];
		struct fix_routes r;
		ck_assert_msg(run_engine_full(&t, names[e], NULL, why, sizeof(why), &r, NULL) == 0,
		              "%s: %s", names[e], why);
		ck_assert_msg(r.unreachable == 0 && r.loops == 0, "%s: %s", names[e],
		              r.first_problem);
		ck_assert_msg(e == 0 || !r.credit_loop, "%s: credit loop", names[e]);
		double share = disjoint_share(&t);
		fprintf(stderr, "lmc_fattree_missing_links: %s %.3f link-disjoint\n", names[e],
		        share);
		ck_assert_msg(share >= 1.0, "%s: %.3f link-disjoint", names[e], share);
	}
	topo_free(&t);
}
END_TEST

/* dfsssp and nue where their layers do not take most free alternates (random graphs of 60
 * switches, 4 hosts each, a spanning tree and 60 more links: bridges, few ways round): those
 * left over go by up/down orders, each in a layer the primary routes left empty (dfsssp:
 * every layer above theirs; nue: those its trees left), and the share of host pairs with a
 * link-disjoint alternate comes within a few points of minhop's, which has no rule to keep.
 * With one order for all of them: dfsssp 0.65-0.85 against minhop's 0.90-0.97, nue
 * 0.66-0.85; then dfsssp 0.83-0.96, nue 0.81-0.86 (seed 1: nue's trees fill every layer);
 * now nue 0.81-0.96, its trees laid again compact on seeds 1, 3 and 4, kept on 1 and 3 (seed 4
 * puts the first trees back: the second routing's try and its undo both run here). */
START_TEST(layered_lmc_orders)
{
	for (uint32_t seed = 1; seed <= 4; seed++) {
		struct topo t;
		topo_init(&t);
		uint32_t h = fix_random(&t, 60, 36, 4, 60, seed);
		fix_finish(&t, h, NULL);
		set_lmc(&t, 2);
		static const char *const names[] = {"minhop", "dfsssp", "nue"};
		double share[3];
		for (unsigned e = 0; e < 3; e++) {
			char why[512];
			struct fix_routes r;
			unsigned layers = 0;
			ck_assert_msg(
			    run_engine_full(&t, names[e], NULL, why, sizeof(why), &r, &layers) == 0,
			    "%s, seed %u: %s", names[e], seed, why);
			ck_assert_msg(r.unreachable == 0 && r.loops == 0, "%s, seed %u: %s",
			              names[e], seed, r.first_problem);
			ck_assert_msg(e == 0 || !r.credit_loop, "%s, seed %u: credit loop",
			              names[e], seed);
			share[e] = disjoint_share(&t);
			fprintf(stderr,
			        "layered_lmc_orders: seed %u: %s %.3f link-disjoint, %u layers\n",
			        seed, names[e], share[e], layers);
		}
		ck_assert_msg(share[1] >= share[0] - 0.08, "seed %u: dfsssp %.3f, minhop %.3f",
		              seed, share[1], share[0]);
		ck_assert_msg(share[2] >= share[0] - 0.10, "seed %u: nue %.3f, minhop %.3f", seed,
		              share[2], share[0]);
		topo_free(&t);
	}
}
END_TEST

/* dfsssp at LMC 2 where its shortest paths take every VL it may use (routing_max_vls set to
 * the layers they need at LMC 0): no layer is left for alternates of their own, and a later
 * LID whose own routes fit no layer takes its block's first LID's routes, which fit where
 * that LID's do. Before, such LIDs kept sssp's spread routes, which needed more layers, and
 * the engine failed (the SM then fell back to minhop, with credit loops). */
START_TEST(dfsssp_lmc_full_layers)
{
	unsigned tried = 0;
	for (uint32_t seed = 1; seed <= 40 && tried < 6; seed++) {
		struct topo t;
		irregular_graph(&t, seed);
		char why[512];
		struct fix_routes r;
		unsigned layers = 0;
		ck_assert_int_eq(run_engine_full(&t, "dfsssp", NULL, why, sizeof(why), &r, &layers),
		                 0);
		if (layers < 2) {
			topo_free(&t);
			continue;
		}
		tried++;
		struct ibsmd_config cfg;
		config_defaults(&cfg);
		cfg.routing_max_vls = (uint8_t)layers;
		set_lmc(&t, 2);
		unsigned budget = layers;
		ck_assert_msg(run_engine_full(&t, "dfsssp", &cfg, why, sizeof(why), &r, &layers) ==
		                  0,
		              "seed %u, %u VLs: %s", seed, budget, why);
		ck_assert_msg(r.unreachable == 0 && r.loops == 0, "seed %u: %s", seed,
		              r.first_problem);
		ck_assert_msg(!r.credit_loop, "seed %u: credit loop", seed);
		ck_assert_uint_le(layers, budget);
		fprintf(stderr, "dfsssp_lmc_full_layers: seed %u, %u VLs: %.3f link-disjoint\n",
		        seed, budget, disjoint_share(&t));
		topo_free(&t);
	}
	ck_assert_uint_ge(tried, 6);
}
END_TEST

/* routing_lmc_apart, what nue weighs two ways of laying its trees by: a ring of 6 switches
 * and a seventh hanging off it by one link (a bridge), 2 hosts on each, LMC 2. Of the
 * 7 x 14 - 14 (host switch, other switch's CA port) pairs, the 24 across the bridge can have
 * no alternate apart; each of the other 60 has one the other way round the ring. */
START_TEST(lmc_apart_count)
{
	struct topo t;
	topo_init(&t);
	uint32_t sw[7], first = TOPO_NONE;
	for (unsigned i = 0; i < 7; i++)
		sw[i] = fix_switch(&t, 5);
	for (unsigned i = 0; i < 6; i++)
		fix_connect(&t, sw[i], sw[(i + 1) % 6]);
	fix_connect(&t, sw[0], sw[6]);
	for (unsigned i = 0; i < 7; i++)
		for (unsigned k = 0; k < 2; k++) {
			uint32_t ca = fix_ca(&t);
			fix_connect(&t, sw[i], ca);
			if (first == TOPO_NONE)
				first = ca;
		}
	fix_finish(&t, first, NULL);
	set_lmc(&t, 2);
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	struct routing_ctx ctx;
	ck_assert_int_eq(routing_ctx_build(&ctx, &t, &cfg, NULL), 0);
	uint64_t possible, apart;
	ck_assert_int_eq(routing_find("minhop")->unicast(&ctx, NULL), 0);
	ck_assert_int_eq(routing_lmc_apart(&ctx, &possible, &apart), 0);
	ck_assert_uint_eq(possible, 60);
	ck_assert_uint_eq(apart, 60); /* minhop routes the alternates too */
	/* every later LID on its block's first LID's routes: none apart */
	for (uint32_t t0 = 0; t0 < ctx.nsw; t0++)
		for (uint32_t d = ctx.dst_start[t0]; d < ctx.dst_start[t0 + 1]; d++)
			ck_assert_int_eq(routing_lmc_follow_first(&ctx, NULL, t0, d), 0);
	ck_assert_int_eq(routing_lmc_apart(&ctx, &possible, &apart), 0);
	ck_assert_uint_eq(possible, 60);
	ck_assert_uint_eq(apart, 0);
	routing_ctx_free(&ctx);
	topo_free(&t);
}
END_TEST

/* dfsssp on a random graph of n switches (4 hosts each, seed) with 3 VLs at LMC 2: every pair
 * reached, no credit loop, at most 3 layers. Returns the share of host pairs with a
 * link-disjoint alternate; *lmc0_layers: the layers at LMC 0 (not routed there when NULL). */
static double dfsssp_lmc2_share(uint32_t n, uint32_t seed, unsigned *lmc0_layers)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_random(&t, n, 16, 4, n * 3, seed);
	fix_finish(&t, h, NULL);
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	cfg.routing_max_vls = 3;
	char why[512];
	struct fix_routes r;
	unsigned layers = 0;
	if (lmc0_layers) {
		ck_assert_int_eq(
		    run_engine_full(&t, "dfsssp", &cfg, why, sizeof(why), &r, lmc0_layers), 0);
	}
	set_lmc(&t, 2);
	ck_assert_msg(run_engine_full(&t, "dfsssp", &cfg, why, sizeof(why), &r, &layers) == 0, "%s",
	              why);
	ck_assert_msg(r.unreachable == 0 && r.loops == 0 && !r.credit_loop, "%s%s", r.first_problem,
	              r.credit_loop ? " (credit loop)" : "");
	ck_assert_uint_le(layers, 3);
	double share = disjoint_share(&t);
	topo_free(&t);
	return share;
}

/* dfsssp at LMC > 0 where its primary routes take every layer in the order it lays them
 * (a random graph of 40 switches, 3 VLs): the alternates' up/down order had no layer of its
 * own and went path by path into what the primary routes' layers took, 79.2% of host pairs
 * apart. Laid again hardest first (relay_primaries), the primary routes take 2 layers and
 * leave the order the third: 97.0% (99.1% with that order depth first). */
START_TEST(dfsssp_lmc_relaid)
{
	unsigned lmc0_layers = 0;
	double share = dfsssp_lmc2_share(40, 9, &lmc0_layers);
	ck_assert_uint_eq(lmc0_layers, 3); /* every layer at LMC 0 */
	fprintf(stderr, "dfsssp_lmc_relaid: %.3f link-disjoint\n", share);
	ck_assert_msg(share >= 0.95, "%.3f link-disjoint", share);
}
END_TEST

/* dfsssp at LMC > 0 where its primary routes leave one layer to the alternates' up/down
 * order (a random graph of 32 switches, 3 VLs): ranked by hops from its root, the order
 * gave 95.2% of host pairs an alternate apart; in depth-first order from the same root,
 * 99.3%. (Over 27 such graphs of 30-49 switches with 3 or 4 VLs whose share changed: up to
 * 4.1 points more on 23, up to 1.3 less on 4.) */
START_TEST(dfsssp_lmc_order_dfs)
{
	double share = dfsssp_lmc2_share(32, 22, NULL);
	fprintf(stderr, "dfsssp_lmc_order_dfs: %.3f link-disjoint\n", share);
	ck_assert_msg(share >= 0.98, "%.3f link-disjoint", share);
}
END_TEST

/* The changes the alternates make are recorded and put back exactly, loads included. */
START_TEST(lmc_alternates_revert)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_ring(&t, 6, 2);
	fix_finish(&t, h, NULL);
	set_lmc(&t, 1);
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	struct log lg;
	log_init(&lg);
	lg.level = LOGL_ERR;
	struct routing_ctx ctx;
	ck_assert_int_eq(routing_ctx_build(&ctx, &t, &cfg, &lg), 0);
	uint32_t nl = ctx.port_base[ctx.nsw];
	uint8_t *lft0 = malloc((size_t)ctx.nsw * (ctx.max_lid + 1u));
	uint32_t *load0 = malloc(sizeof(uint32_t) * (nl + 1));
	ck_assert_int_eq(routing_find("minhop")->unicast(&ctx, NULL), 0);
	for (uint32_t sw = 0; sw < ctx.nsw; sw++)
		memcpy(lft0 + (size_t)sw * (ctx.max_lid + 1u), t.sws[sw].lft, ctx.max_lid + 1u);
	memcpy(load0, ctx.load, sizeof(uint32_t) * nl);
	/* a second pass finds them in place: nothing to change */
	struct routing_alt_undo undo = {0};
	bool *alt = calloc(ctx.dst_start[ctx.nsw] + 1, sizeof(bool));
	ck_assert_int_eq(routing_lmc_alternates(&ctx, NULL, &undo, alt), 0);
	ck_assert_uint_eq(undo.changes.n, 0);
	uint32_t alts = 0;
	for (uint32_t d = 0; d < ctx.dst_start[ctx.nsw]; d++)
		alts += alt[d];
	ck_assert_uint_eq(alts, 12); /* every host's odd LID */
	/* undo what a change would do, by hand: the revert puts the entry and load back */
	struct routing_alt_change *c = vec_push(&undo.changes);
	uint16_t lid = ctx.dst[1].lid;
	*c = (struct routing_alt_change){0, lid, t.sws[0].lft[lid]};
	uint8_t other = t.sws[0].lft[lid] == ctx.adj[ctx.adj_start[0]].port
	                    ? ctx.adj[ctx.adj_start[0] + 1].port
	                    : ctx.adj[ctx.adj_start[0]].port;
	ctx.load[ctx.port_base[0] + t.sws[0].lft[lid]]--;
	ctx.load[ctx.port_base[0] + other]++;
	t.sws[0].lft[lid] = other;
	routing_lmc_revert(&ctx, &undo);
	ck_assert_uint_eq(undo.changes.n, 0);
	for (uint32_t sw = 0; sw < ctx.nsw; sw++)
		ck_assert_mem_eq(lft0 + (size_t)sw * (ctx.max_lid + 1u), t.sws[sw].lft,
		                 ctx.max_lid + 1u);
	ck_assert_mem_eq(load0, ctx.load, sizeof(uint32_t) * nl);
	free(alt);
	free(lft0);
	free(load0);
	routing_ctx_free(&ctx);
	topo_free(&t);
}
END_TEST

/* Follow a tree's parent ports: every member reaches the root, no switch is visited twice on
 * the way (no cycle), and the root is the only switch with port 0. */
static void check_tree(const struct topo *t, const struct routing_ctx *ctx, const uint8_t *up,
                       const uint32_t *members, uint32_t n)
{
	uint32_t roots = 0;
	for (uint32_t s = 0; s < ctx->nsw; s++)
		roots += up[s] == 0;
	ck_assert_uint_eq(roots, 1);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t s = members[k], steps = 0;
		while (up[s] != 0) {
			ck_assert_uint_ne(up[s], RT_NO_PORT);
			ck_assert_uint_le(++steps, ctx->nsw);
			uint32_t p = topo_port(t, t->sws[s].node, up[s]);
			uint32_t peer = t->ports[p].peer;
			ck_assert_uint_ne(peer, TOPO_NONE);
			ck_assert(topo_is_switch(t, t->ports[peer].node));
			s = t->nodes[t->ports[peer].node].sw;
		}
	}
}

/* The switch graph of a finished fabric and the hops between its switches. */
static void graph_and_hops(struct topo *t, struct routing_ctx *ctx, struct routing_hops *hops)
{
	static struct ibsmd_config cfg;
	config_defaults(&cfg);
	ck_assert_int_eq(routing_ctx_build(ctx, t, &cfg, NULL), 0);
	ck_assert_int_eq(routing_hops_build(ctx, hops), 0);
}

START_TEST(mcast_default_tree)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_fattree(&t, 6, 3, 1);
	fix_finish(&t, h, NULL);
	struct routing_ctx ctx;
	struct routing_hops hops = {0};
	graph_and_hops(&t, &ctx, &hops);
	/* leaves are switches 0-5, spines 6-8: leaf to leaf is 2 hops, via a spine */
	ck_assert_uint_eq(hops.d[0 * hops.n + 5], 2);
	ck_assert_uint_eq(hops.d[0 * hops.n + 6], 1);
	uint8_t up[16];
	uint32_t members[] = {0, 2, 5};
	ck_assert_int_eq(routing_mcast_tree(NULL, NULL, &ctx, &hops, members, 3, up), 0);
	check_tree(&t, &ctx, up, members, 3);
	/* the root is a spine (one hop from every leaf), and no leaf outside the group is in
	 * the tree */
	for (uint32_t s = 6; s < 9; s++)
		if (up[s] == 0)
			goto rooted;
	ck_abort_msg("the root is not a spine");
rooted:
	ck_assert_uint_eq(up[1], RT_NO_PORT);
	ck_assert_uint_eq(up[3], RT_NO_PORT);
	routing_hops_free(&hops);
	routing_ctx_free(&ctx);
	topo_free(&t);
}
END_TEST

START_TEST(mcast_tree_split_graph)
{
	/* two trees with no cable between them (as the graph is while a link is down and
	 * the sweep has not dropped the far side yet): the members the root can reach still
	 * get their tree */
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_fattree(&t, 2, 1, 1);
	fix_fattree(&t, 2, 1, 1);
	fix_finish(&t, h, NULL);
	for (uint32_t n = 0; n < t.nnodes; n++)
		t.nodes[n].present = true; /* the SM's view: all still there */
	struct routing_ctx ctx;
	struct routing_hops hops = {0};
	graph_and_hops(&t, &ctx, &hops);
	ck_assert_uint_eq(ctx.nsw, 6);
	uint32_t members[] = {0, 1, 3}; /* two leaves of the first tree, one of the second */
	uint8_t up[6];
	ck_assert_int_eq(routing_mcast_tree(NULL, NULL, &ctx, &hops, members, 3, up), 0);
	uint32_t reach[] = {0, 1};
	check_tree(&t, &ctx, up, reach, 2);
	ck_assert_uint_eq(up[3], RT_NO_PORT);
	routing_hops_free(&hops);
	routing_ctx_free(&ctx);
	topo_free(&t);
}
END_TEST

/* An engine with every hook, as a QoS engine would have them: the shared helpers must call
 * them, and fall back to the default tree when the engine's tree fails. */
static int hook_calls;
static int stub_unicast(struct routing_ctx *ctx, void *state)
{
	(void)ctx;
	(void)state;
	return 0;
}
static uint8_t stub_sl(const struct routing_ctx *ctx, void *state, uint16_t slid, uint16_t dlid)
{
	(void)ctx;
	(void)state;
	hook_calls++;
	return (uint8_t)((slid + dlid) % 16);
}
static void stub_sl2vl(const struct routing_ctx *ctx, void *state, uint32_t sw, uint8_t in,
                       uint8_t out, uint8_t vl[16])
{
	(void)ctx;
	(void)state;
	for (unsigned i = 0; i < 16; i++)
		vl[i] = (uint8_t)((i + sw + in + out) % 2);
}
static int stub_tree(const struct routing_ctx *ctx, void *state, const uint32_t *m, uint32_t n,
                     uint8_t *up)
{
	(void)ctx;
	(void)m;
	(void)n;
	hook_calls++;
	if (state)
		return -1; /* "cannot": the default takes over */
	up[m[0]] = 0;      /* a tree of one: the engine's own, recognisable */
	return 0;
}
static const struct routing_engine stub = {
    .name = "stub",
    .unicast = stub_unicast,
    .path_sl = stub_sl,
    .sl2vl = stub_sl2vl,
    .mcast_tree = stub_tree,
};

START_TEST(hooks_are_called)
{
	struct topo t;
	topo_init(&t);
	uint32_t h = fix_fattree(&t, 2, 1, 1);
	fix_finish(&t, h, NULL);
	struct routing_ctx ctx;
	struct routing_hops hops = {0};
	graph_and_hops(&t, &ctx, &hops);
	hook_calls = 0;
	ck_assert_uint_eq(routing_path_sl(&stub, NULL, &ctx, 3, 4), 7);
	ck_assert_uint_eq(routing_path_sl(&routing_minhop, NULL, &ctx, 3, 4), 0); /* no hook */
	uint64_t v;
	ck_assert(routing_sl2vl(&stub, NULL, &ctx, 1, 0, 2, &v));
	ck_assert_uint_eq(v, 0x1010101010101010ull); /* SL0 -> VL1 in the top nibble */
	ck_assert(!routing_sl2vl(&routing_minhop, NULL, &ctx, 1, 0, 2, &v)); /* no hook */
	uint8_t up[4];
	uint32_t members[] = {0, 1};
	ck_assert_int_eq(routing_mcast_tree(&stub, NULL, &ctx, &hops, members, 2, up), 0);
	ck_assert_uint_eq(up[0], 0);
	ck_assert_uint_eq(up[1], RT_NO_PORT); /* the engine's tree, not the default */
	ck_assert_int_eq(routing_mcast_tree(&stub, &hook_calls, &ctx, &hops, members, 2, up), 0);
	check_tree(&t, &ctx, up, members, 2); /* the default, joining both leaves */
	ck_assert_uint_eq(up[2], 0);          /* through the spine */
	ck_assert_int_eq(hook_calls, 3);
	routing_hops_free(&hops);
	routing_ctx_free(&ctx);
	topo_free(&t);
}
END_TEST

START_TEST(chain_names)
{
	ck_assert_ptr_nonnull(routing_find("minhop"));
	ck_assert_ptr_nonnull(routing_find("updn"));
	ck_assert_ptr_nonnull(routing_find("dnup"));
	ck_assert_ptr_nonnull(routing_find("ftree"));
	ck_assert_ptr_nonnull(routing_find("sssp"));
	ck_assert_ptr_nonnull(routing_find("dfsssp"));
	ck_assert_ptr_nonnull(routing_find("nue"));
	ck_assert_ptr_nonnull(routing_find("dor"));
	ck_assert_ptr_nonnull(routing_find("torus"));
	ck_assert_ptr_nonnull(routing_find("file"));
	ck_assert_ptr_null(routing_find("nonsense"));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("routing");
	TCase *tc = tcase_create("engines");
	tcase_set_timeout(tc, 120); /* 150 random graphs under the sanitizers take seconds */
	/* LMC alternates (routing/lmc.c): CK_RUN_CASE=lmc runs them alone */
	TCase *lmc = tcase_create("lmc");
	tcase_set_timeout(lmc, 120);
	tcase_add_test(lmc, lmc_alternates);
	tcase_add_test(lmc, lmc_alternates_revert);
	tcase_add_test(lmc, lmc_alternates_fresh_seeds);
	tcase_add_test(lmc, lmc_apart_count);
	tcase_add_test(lmc, dfsssp_lmc_relaid);
	tcase_add_test(lmc, dfsssp_lmc_order_dfs);
	tcase_add_test(lmc, layered_lmc_orders);
	tcase_add_test(lmc, lmc_fattree_missing_links);
	tcase_add_test(lmc, updown_lmc_order_choice);
	tcase_add_loop_test(lmc, sssp_lmc_spread, 0, 2);
	tcase_add_test(lmc, dfsssp_lmc_full_layers);
	tcase_add_loop_test(lmc, grid_lmc_alternates, 0, 2);
	tcase_add_loop_test(lmc, updown_lmc_orders, 0, 2);
	tcase_add_test(lmc, nue_lmc_full_layers);
	suite_add_tcase(s, lmc);
	tcase_add_test(tc, ring);
	tcase_add_loop_test(tc, updn_random_graphs, 0, 3);
	tcase_add_loop_test(tc, dfsssp_random_graphs, 0, 2);
	tcase_add_test(tc, nue_random_graphs);
	tcase_add_loop_test(tc, grid_engines, 0, 2);
	tcase_add_test(tc, grid_failures);
	tcase_add_test(tc, torus_config_seeds);
	tcase_add_test(tc, torus_config_parse);
	tcase_add_test(tc, engine_names_listed);
	tcase_add_test(tc, engine_threads);
	tcase_add_test(tc, minhop_as_plain);
	tcase_add_loop_test(tc, minhop_shift_permutations, 0, 2);
	tcase_add_loop_test(tc, ftree_shift_permutations, 0, 3);
	tcase_add_test(tc, ftree_missing_links);
	tcase_add_test(tc, file_engine);
	tcase_add_test(tc, files_parse);
	tcase_add_test(tc, opensm_balance_knobs);
	tcase_add_test(tc, port_prof_ignore);
	tcase_add_test(tc, updn_ids);
	tcase_add_test(tc, guid_routing_order);
	tcase_add_test(tc, ftree_io_nodes);
	tcase_add_loop_test(tc, fat_tree, 0, NENGINES);
	tcase_add_loop_test(tc, torus, 0, NENGINES);
	tcase_add_loop_test(tc, fat_tree_dead_link, 0, NENGINES);
	tcase_add_loop_test(tc, fat_tree_lost_spine, 0, NENGINES);
	tcase_add_loop_test(tc, lmc_blocks_spread, 0, NENGINES);

	tcase_add_test(tc, mcast_default_tree);
	tcase_add_test(tc, mcast_tree_split_graph);
	tcase_add_test(tc, hooks_are_called);
	tcase_add_test(tc, chain_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite());
}
