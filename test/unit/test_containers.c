/* The containers of util/: the growable array, the GUID map, the index map, and the
 * rate-limit bucket of log_rl. Each is checked against a plain reference on random work. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/idxmap.h"
#include "util/lineset.h"
#include "util/ibnet.h"
#include "util/name_map.h"
#include "util/textfile.h"
#include "util/log.h"
#include "util/statefile.h"
#include "util/u64map.h"
#include "util/vec.h"
#include "check_run.h"

START_TEST(vec_grows_and_zero_fills)
{
	VEC(uint64_t) a = {0};
	for (uint32_t i = 0; i < 10000; i++) {
		uint64_t *e = vec_push(&a);
		ck_assert_ptr_nonnull(e);
		ck_assert_uint_eq(*e, 0); /* new room is zeroed */
		*e = (uint64_t)i * 3;
	}
	ck_assert_uint_eq(a.n, 10000);
	ck_assert_uint_ge(a.cap, a.n);
	/* doubling: the capacity is a power of two no larger than twice the count */
	ck_assert_uint_le(a.cap, 2 * a.n);
	for (uint32_t i = 0; i < a.n; i++)
		ck_assert_uint_eq(a.v[i], (uint64_t)i * 3);
	vec_swap_remove(&a, 0);
	ck_assert_uint_eq(a.n, 9999);
	ck_assert_uint_eq(a.v[0], 9999ull * 3);
	vec_free(&a);
	ck_assert_ptr_null(a.v);
	ck_assert_uint_eq(a.n + a.cap, 0);
}
END_TEST

START_TEST(array_reserve_keeps_contents)
{
	struct {
		uint16_t *lids;
		uint32_t cap;
	} s = {0};
	ck_assert_int_eq(array_reserve(&s.lids, &s.cap, 3), 0);
	s.lids[0] = 1, s.lids[1] = 2, s.lids[2] = 3;
	uint32_t cap = s.cap;
	ck_assert_int_eq(array_reserve(&s.lids, &s.cap, 2), 0); /* no shrink, no move */
	ck_assert_uint_eq(s.cap, cap);
	ck_assert_int_eq(array_reserve(&s.lids, &s.cap, 5000), 0);
	ck_assert_uint_ge(s.cap, 5000);
	ck_assert_uint_eq(s.lids[2], 3);
	ck_assert_uint_eq(s.lids[4999], 0);
	/* past what a 32-bit count can index: refused, array unchanged */
	uint16_t *before = s.lids;
	ck_assert_int_eq(array_reserve(&s.lids, &s.cap, (uint64_t)UINT32_MAX + 2), -1);
	ck_assert_ptr_eq(s.lids, before);
	free(s.lids);
}
END_TEST

/* the same without zero-filling: contents kept, room as asked, the same refusals */
START_TEST(array_reserve_raw_keeps_contents)
{
	struct {
		uint64_t *guids;
		uint32_t cap;
	} s = {0};
	ck_assert_int_eq(array_reserve_raw(&s.guids, &s.cap, 3), 0);
	ck_assert_uint_ge(s.cap, 3);
	for (uint32_t i = 0; i < 3; i++)
		s.guids[i] = 0x1000 + i;
	ck_assert_int_eq(array_reserve_raw(&s.guids, &s.cap, 100000), 0);
	ck_assert_uint_ge(s.cap, 100000);
	for (uint32_t i = 3; i < 100000; i++)
		s.guids[i] = 0x1000 + i; /* all of the room is writable */
	for (uint32_t i = 0; i < 100000; i++)
		ck_assert_uint_eq(s.guids[i], 0x1000 + i);
	uint64_t *before = s.guids;
	ck_assert_int_eq(array_reserve_raw(&s.guids, &s.cap, (uint64_t)UINT32_MAX + 2), -1);
	ck_assert_ptr_eq(s.guids, before);
	free(s.guids);
}
END_TEST

START_TEST(u64map_counts)
{
	/* counts per key: absent is 0, back to 0 drops the key */
	struct u64map m = {0};
	ck_assert_uint_eq(u64map_count(&m, 7), 0);
	ck_assert_uint_eq(u64map_count_add(&m, 7, 1), 1);
	ck_assert_uint_eq(u64map_count_add(&m, 7, 2), 3);
	ck_assert_uint_eq(u64map_count_add(&m, 9, 1), 1);
	ck_assert_uint_eq(u64map_count(&m, 7), 3);
	ck_assert_uint_eq(u64map_count_add(&m, 7, -3), 0);
	ck_assert_uint_eq(u64map_get(&m, 7), U64MAP_NONE); /* dropped, not kept as 0 */
	ck_assert_uint_eq(m.used, 1);
	u64map_free(&m);
}
END_TEST

START_TEST(u64map_matches_reference)
{
	enum { N = 20000 };
	uint64_t *ref = calloc(N, sizeof(*ref)); /* ref[i]: key that maps to i, 0 = none */
	struct u64map m = {0};
	srand(7);
	for (int round = 0; round < 60000; round++) {
		uint32_t i = (uint32_t)rand() % N;
		if (ref[i]) {
			ck_assert_uint_eq(u64map_get(&m, ref[i]), i);
			if (rand() & 1) {
				u64map_del(&m, ref[i]);
				ck_assert_uint_eq(u64map_get(&m, ref[i]), U64MAP_NONE);
				ref[i] = 0;
			}
		} else {
			/* GUID-like keys: a vendor prefix and a counter, the worst case for a
			 * weak hash */
			ref[i] = 0x0002c90300000000ull | ((uint64_t)i << 4) | 1;
			ck_assert_uint_eq(u64map_get(&m, ref[i]), U64MAP_NONE);
			ck_assert_int_eq(u64map_put(&m, ref[i], i), 0);
		}
	}
	uint32_t live = 0;
	for (uint32_t i = 0; i < N; i++) {
		if (ref[i]) {
			live++;
			ck_assert_uint_eq(u64map_get(&m, ref[i]), i);
		}
	}
	ck_assert_uint_eq(m.used, live);
	ck_assert_int_eq(u64map_put(&m, ref[0] ? ref[0] : 5, 77), 0); /* overwrite */
	ck_assert_uint_eq(u64map_get(&m, ref[0] ? ref[0] : 5), 77);
	u64map_clear(&m);
	ck_assert_uint_eq(m.used, 0);
	ck_assert_uint_eq(u64map_get(&m, 5), U64MAP_NONE);
	u64map_free(&m);
	free(ref);
	ck_assert_uint_ne(u64map_str_key(""), 0);
	ck_assert_uint_ne(u64map_str_key("spine-1"), u64map_str_key("spine-2"));
}
END_TEST

/* idxmap over an array of 16-byte keys (MGID-like), with swap-remove deletion as sa/mcast
 * does it */
struct key16 {
	uint8_t b[16];
};

static bool eq16(const void *key, uint32_t idx, const void *ctx)
{
	const struct key16 *arr = ctx;
	return !memcmp(key, arr[idx].b, 16);
}

static struct key16 mkkey(uint32_t n)
{
	struct key16 k = {{0xff, 0x12, 0x40, 0x1b}};
	memcpy(&k.b[12], &n, 4);
	return k;
}

START_TEST(idxmap_follows_swap_remove)
{
	enum { N = 5000 };
	struct key16 *arr = calloc(N, sizeof(*arr));
	uint32_t *name = calloc(N, sizeof(*name)); /* which n each slot holds */
	uint32_t n = 0;
	struct idxmap m = {0};
	for (uint32_t i = 0; i < N; i++) {
		arr[n] = mkkey(i);
		name[n] = i;
		ck_assert_int_eq(idxmap_add(&m, idxmap_hash_bytes(arr[n].b, 16), n), 0);
		n++;
	}
	/* remove every third, moving the last element into the hole */
	for (uint32_t i = 0; i < N; i += 3) {
		struct key16 k = mkkey(i);
		uint32_t h = idxmap_hash_bytes(k.b, 16);
		uint32_t at = idxmap_find(&m, h, &k, eq16, arr);
		ck_assert_uint_ne(at, IDXMAP_NONE);
		ck_assert_uint_eq(name[at], i);
		idxmap_del(&m, h, at);
		n--;
		if (at != n) {
			idxmap_move(&m, idxmap_hash_bytes(arr[n].b, 16), n, at);
			arr[at] = arr[n];
			name[at] = name[n];
		}
	}
	for (uint32_t i = 0; i < N; i++) {
		struct key16 k = mkkey(i);
		uint32_t at = idxmap_find(&m, idxmap_hash_bytes(k.b, 16), &k, eq16, arr);
		if (i % 3 == 0) {
			ck_assert_uint_eq(at, IDXMAP_NONE);
		} else {
			ck_assert_uint_ne(at, IDXMAP_NONE);
			ck_assert_uint_eq(name[at], i);
		}
	}
	ck_assert_uint_eq(m.used, n);
	idxmap_free(&m);
	free(arr);
	free(name);
}
END_TEST

START_TEST(log_rl_bucket)
{
	struct log_rl rl = LOG_RL_INIT(3, 1000);
	uint64_t held = 0, t = 1000000000ull, ms = 1000000ull;
	for (int i = 0; i < 3; i++) {
		ck_assert(log_rl_allow(&rl, t, &held));
		ck_assert_uint_eq(held, 0);
	}
	/* the burst is spent: a storm within the interval is held back */
	for (int i = 0; i < 50; i++)
		ck_assert(!log_rl_allow(&rl, t + (uint64_t)i * ms, &held));
	/* one interval later one line passes and tells how many were held */
	ck_assert(log_rl_allow(&rl, t + 1000 * ms, &held));
	ck_assert_uint_eq(held, 50);
	ck_assert(!log_rl_allow(&rl, t + 1001 * ms, &held));
	/* a long quiet spell refills the bucket, but no more than the burst */
	for (int i = 0; i < 3; i++)
		ck_assert(log_rl_allow(&rl, t + 100000 * ms, &held));
	ck_assert(!log_rl_allow(&rl, t + 100000 * ms, &held));

	/* the logging call itself: the held-back count reaches the line */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct log lg;
	log_init(&lg);
	lg.stream = f;
	struct log_rl r2 = LOG_RL_INIT(2, 60000);
	for (int i = 0; i < 100; i++)
		log_rl(&lg, &r2, LOGL_WARN, "sa", "malformed request %d", i);
	fclose(f);
	int lines = 0;
	for (char *p = buf; (p = strchr(p, '\n')); p++)
		lines++;
	ck_assert_int_eq(lines, 2); /* a storm of 100 makes two lines within a minute */
	ck_assert_ptr_nonnull(strstr(buf, "malformed request 0"));
	ck_assert_ptr_nonnull(strstr(buf, "malformed request 1"));
	free(buf);
}
END_TEST

/* The set against a reference (an array of flags over a fixed universe of lines), through adds
 * and deletes in random order: membership, count and an order-independent checksum. */
START_TEST(lineset_matches_reference)
{
	enum { N = 3000 };
	static bool in[N];
	memset(in, 0, sizeof(in));
	struct lineset s = {0}, t = {0};
	char buf[64];
	unsigned seed = 7;
	uint32_t count = 0;
	for (int step = 0; step < 40000; step++) {
		unsigned k = (unsigned)rand_r(&seed) % N;
		int n = snprintf(buf, sizeof(buf), "member %u x", k);
		if (rand_r(&seed) % 3) {
			int r = lineset_add(&s, buf, (size_t)n);
			ck_assert_int_eq(r, in[k] ? 0 : 1);
			count += !in[k];
			in[k] = true;
		} else {
			ck_assert(lineset_del(&s, buf, (size_t)n) == in[k]);
			count -= in[k];
			in[k] = false;
		}
	}
	ck_assert_uint_eq(lineset_count(&s), count);
	/* the same lines added in the other order give the same checksum */
	for (int k = N - 1; k >= 0; k--) {
		int n = snprintf(buf, sizeof(buf), "member %d x", k);
		ck_assert(lineset_has(&s, buf, (size_t)n) == in[k]);
		if (in[k])
			ck_assert_int_eq(lineset_add_owned(&t, strndup(buf, (size_t)n)), 1);
	}
	ck_assert_uint_eq(lineset_count(&t), count);
	ck_assert(s.sum == t.sum);
	/* one line more or less shows in the checksum */
	ck_assert_int_eq(lineset_add(&t, "extra", 5), 1);
	ck_assert(s.sum != t.sum);
	ck_assert(lineset_del(&t, "extra", 5));
	ck_assert(s.sum == t.sum);
	/* a prefix of a line is another line */
	ck_assert(!lineset_has(&t, "member", 6));
	lineset_free(&s);
	lineset_free(&t);
}
END_TEST

/* A state file appears whole, with the mode asked for, in a directory made for it, whatever
 * a stale temporary file left; a failed begin says why and leaves nothing. */
START_TEST(statefile_whole_or_not)
{
	char dir[] = "/tmp/test_statefile.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char sub[64], stale[128];
	snprintf(sub, sizeof(sub), "%s/state", dir);
	struct statefile sf;
	ck_assert_int_eq(statefile_begin(&sf, sub, "keys", 0600), 0);
	fputs("one\n", sf.f);
	ck_assert_int_eq(statefile_commit(&sf), 0);
	/* again over a stale world-readable temporary file */
	snprintf(stale, sizeof(stale), "%s/keys.tmp", sub);
	FILE *f = fopen(stale, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	chmod(stale, 0644);
	ck_assert_int_eq(statefile_begin(&sf, sub, "keys", 0600), 0);
	fputs("two\n", sf.f);
	ck_assert_int_eq(statefile_commit(&sf), 0);
	struct stat st;
	ck_assert_int_eq(stat(sf.path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	/* a stale temporary file is not written through but removed when the state is loaded */
	ck_assert_int_eq(access(stale, F_OK), 0);
	statefile_discard_tmp(sub, "keys");
	ck_assert_int_ne(access(stale, F_OK), 0);
	char line[16] = {0};
	f = fopen(sf.path, "r");
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	fclose(f);
	ck_assert_str_eq(line, "two\n");
	unlink(sf.path);
	rmdir(sub);
	rmdir(dir);
	ck_assert_int_eq(statefile_begin(&sf, "/nonexistent/dir/below", "keys", 0600), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

static char *slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Only a name of the writer's own making is written to: a symlink planted at the fixed name
 * older versions used ("keys.tmp") must not lead the write (as root) to its target, and the
 * file still appears whole; an existing file is replaced by rename, not rewritten in place. */
START_TEST(statefile_ignores_planted_symlink)
{
	char dir[] = "/tmp/test_statefile.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char victim[128], link[128], target[128], buf[64];
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(link, sizeof(link), "%s/keys.tmp", dir);
	snprintf(target, sizeof(target), "%s/keys", dir);
	FILE *f = fopen(victim, "w");
	ck_assert_ptr_nonnull(f);
	fputs("precious\n", f);
	fclose(f);
	ck_assert_int_eq(symlink(victim, link), 0);
	f = fopen(target, "w");
	ck_assert_ptr_nonnull(f);
	fputs("old\n", f);
	fclose(f);
	struct stat before, after;
	ck_assert_int_eq(stat(target, &before), 0);

	struct statefile sf;
	ck_assert_int_eq(statefile_begin(&sf, dir, "keys", 0600), 0);
	fputs("new\n", sf.f);
	fflush(sf.f);
	/* until the commit, readers see the old file whole */
	ck_assert_str_eq(slurp(target, buf, sizeof(buf)), "old\n");
	ck_assert_int_eq(statefile_commit(&sf), 0);

	ck_assert_str_eq(slurp(victim, buf, sizeof(buf)), "precious\n");
	ck_assert_str_eq(slurp(target, buf, sizeof(buf)), "new\n");
	ck_assert_int_eq(lstat(target, &after), 0);
	ck_assert(S_ISREG(after.st_mode));
	ck_assert_uint_ne(after.st_ino, before.st_ino); /* a new file renamed into place */
	ck_assert_uint_eq(after.st_mode & 0777, 0600);
	/* the planted link is someone else's to remove; nothing of the writer's is left */
	ck_assert_int_eq(lstat(link, &after), 0);
	ck_assert(S_ISLNK(after.st_mode));
	ck_assert_int_eq(unlink(link), 0);
	ck_assert_int_eq(unlink(target), 0);
	ck_assert_int_eq(unlink(victim), 0);
	ck_assert_int_eq(rmdir(dir), 0); /* fails if a temporary file was left */
}
END_TEST

/* A node-name-map as ibnetdiscover reads it: quoted and bare names, comments, the first line
 * of a GUID winning; a bad line refuses the whole map, naming the line. */
START_TEST(name_map_reads_ibnetdiscover_format)
{
	struct name_map m;
	char why[200];
	const char ok[] = "# map\n\n0x0002c90300a00010 \"ib-leaf-01\"\n"
	                  "0x0002c90300a00011 \"SW2 (Rack 3)\" # switch\n"
	                  "  0x11   gpu-002 mlx5_0   # bare, trailing blanks cut\n"
	                  "0x0002c90300a00010 \"second line of a GUID\"\n";
	ck_assert_int_eq(name_map_parse(&m, ok, strlen(ok), "map", why, sizeof(why)), 0);
	ck_assert_uint_eq(m.n, 3);
	ck_assert_str_eq(name_map_get(&m, 0x0002c90300a00010ull), "ib-leaf-01");
	ck_assert_str_eq(name_map_get(&m, 0x0002c90300a00011ull), "SW2 (Rack 3)");
	ck_assert_str_eq(name_map_get(&m, 0x11), "gpu-002 mlx5_0");
	ck_assert_ptr_null(name_map_get(&m, 0x12));
	name_map_free(&m);
	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"0x10 \"a\"\nleaf \"b\"\n", "map:2: \"leaf \"b\"\" does not start with a node GUID"},
	    {"0x10 \"open\n", "map:1: the name has no closing quote"},
	    {"0x10\n", "map:1: GUID 0x0000000000000010: no name"},
	    {"0 \"zero\"\n", "map:1: \"0 \"zero\"\" does not start"},
	    {"0x10z \"a\"\n", "map:1: \"0x10z"},
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(
		    name_map_parse(&m, bad[i].text, strlen(bad[i].text), "map", why, sizeof(why)),
		    -1);
		ck_assert_msg(!strncmp(why, bad[i].want, strlen(bad[i].want)), "case %u: %s", i,
		              why);
		ck_assert_uint_eq(m.n, 0);
	}
}
END_TEST

/* An ibnetdiscover topology read back, and compared with the fabric as it is: a node gone,
 * a node new, a cable moved to another port (each end told), a cable pulled (once); bad
 * files refused naming the line. */
static const char topo_saved[] =
    "# Topology file\n\nvendid=0x2c9\ndevid=0xc738\n"
    "switchguid=0x10(10)\n"
    "Switch\t8 \"S-0000000000000010\"\t\t# \"leaf-1\" enhanced port 0 lid 1 lmc 0\n"
    "[1]\t\"H-0000000000000020\"[1](21) \t\t# \"host-1\" lid 3 4xHDR\n"
    "[2][ext 2]\t\"H-0000000000000030\"[1](31) \t\t# \"host-2\" lid 4 4xHDR\n"
    "[3]\t\"H-0000000000000040\"[1](41)\n\n"
    "caguid=0x20\nCa\t2 \"H-0000000000000020\"\t\t# \"host-1\"\n"
    "[1](21) \t\"S-0000000000000010\"[1]\t\t# lid 3 lmc 0 \"leaf-1\" lid 1 4xHDR\n\n"
    "caguid=0x30\nCa\t1 \"H-0000000000000030\"\t\t# \"host-2\"\n"
    "[1](31) \t\"S-0000000000000010\"[2]\n"
    "caguid=0x40\r\nCa\t1 \"H-0000000000000040\"\t\t# \"host-3\"\r\n";

struct diffs {
	unsigned n;
	struct ibnet_change c[8];
};
static void note_diff(void *ctx, const struct ibnet_change *c)
{
	struct diffs *d = ctx;
	if (d->n < 8)
		d->c[d->n] = *c;
	d->n++;
}

START_TEST(ibnet_reads_and_compares)
{
	struct ibnet a, b;
	char why[200];
	ck_assert_int_eq(ibnet_parse(&a, topo_saved, strlen(topo_saved), "saved", why, sizeof(why)),
	                 0);
	ck_assert_uint_eq(a.n, 4);
	ck_assert_str_eq(a.nodes[0].desc, "leaf-1");
	ck_assert_uint_eq(a.nodes[0].type, 2);
	uint64_t g;
	uint8_t p;
	ck_assert_int_eq(ibnet_peer(&a, 0, 2, &g, &p), 0);
	ck_assert_uint_eq(g, 0x30);
	ck_assert_uint_eq(p, 1);
	ck_assert_int_eq(ibnet_peer(&a, 0, 4, &g, &p), -1);
	/* the fabric now: host-2's cable on leaf-1 port 5, host-3's pulled, host-1 gone, host-9
	 * new on port 1 */
	const char now[] = "switchguid=0x10\nSwitch\t8 \"leaf-1\"\t\t# \"leaf-1\"\n"
	                   "[5]\t\"host-2\"[1]\n[1]\t\"host-9\"[1]\n"
	                   "caguid=0x30\nCa\t1 \"host-2\"\n[1]\t\"leaf-1\"[5]\n"
	                   "caguid=0x40\nCa\t1 \"host-3\"\n"
	                   "caguid=0x90\nCa\t1 \"host-9\"\n";
	ck_assert_int_eq(ibnet_parse(&b, now, strlen(now), "now", why, sizeof(why)), 0);
	struct diffs d = {0};
	ck_assert_uint_eq(ibnet_compare(&a, &a, note_diff, &d), 0);
	ck_assert_uint_eq(ibnet_compare(&a, &b, note_diff, &d), 6);
	/* leaf-1: port 2 (host-2's) empty, port 5 new: the cable moved, and host-2's end says
	 * where from; port 3's cable pulled (told once); host-1 gone; host-9 new */
	bool moved = false, pulled = false, gone = false, extra_node = false, extra_link = false;
	for (unsigned i = 0; i < d.n; i++) {
		const struct ibnet_change *c = &d.c[i];
		if (c->kind == IBNET_MISWIRED && c->guid == 0x30 && c->want_guid == 0x10 &&
		    c->want_port == 2 && c->got_guid == 0x10 && c->got_port == 5)
			moved = true;
		if (c->kind == IBNET_LINK_MISSING && c->guid == 0x10 && c->port == 3 &&
		    c->want_guid == 0x40)
			pulled = true;
		if (c->kind == IBNET_NODE_MISSING && c->guid == 0x20)
			gone = true;
		if (c->kind == IBNET_NODE_EXTRA && c->guid == 0x90)
			extra_node = true;
		if (c->kind == IBNET_MISWIRED && c->guid == 0x10 && c->port == 5)
			extra_link = true;
		if (c->kind == IBNET_LINK_EXTRA && c->guid == 0x10 && c->port == 5)
			extra_link = true;
	}
	ck_assert(moved && pulled && gone && extra_node && extra_link);
	ibnet_free(&b);
	ibnet_free(&a);
	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"Ca\t1 \"a\"\n", "t:1: a Ca line without the caguid= line before it"},
	    {"caguid=0x1\nCa\t1 \"a\"\n[2]\t\"a\"[1]\n", "t:3: port 2 of a node with 1 ports"},
	    {"caguid=0x1\nCa\t1 \"a\"\n[1]\t\"b\"[1]\n", "t:3: the far end is not a node"},
	    {"caguid=0x1\nCa\t1 \"a\"\ncaguid=0x1\nCa\t1 \"b\"\n",
	     "t:4: node GUID 0x0000000000000001 is listed twice"},
	    {"switchguid=0x1\nSwitch\t2 \"s\"\n[1]\t\"s\"[2]\n[2]\t\"s\"[2]\n",
	     "t:4: a port cabled to itself"},
	    {"caguid=0x1\nCa\t1 \"a\"\nlink a b\n", "t:3: not a line of an ibnetdiscover"},
	    {"caguid=zz\n", "t:1: not a GUID"},
	    {"caguid=0x1\n", "t:1: a GUID line without its node line"},
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(
		    ibnet_parse(&a, bad[i].text, strlen(bad[i].text), "t", why, sizeof(why)), -1);
		ck_assert_msg(!strncmp(why, bad[i].want, strlen(bad[i].want)), "case %u: %s", i,
		              why);
		ck_assert_uint_eq(a.n, 0);
	}
}
END_TEST

/* A whole file read: its bytes and a NUL after them, a missing file and one past the bound
 * refused naming the file */
START_TEST(textfile_reads_whole_files)
{
	char path[] = "/tmp/ibsmd-textfile-XXXXXX", why[200], *text;
	size_t len;
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	char big[100000];
	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(write(fd, big, sizeof(big)), (ssize_t)sizeof(big));
	close(fd);
	ck_assert_int_eq(textfile_read(path, 1u << 20, &text, &len, why, sizeof(why)), 0);
	ck_assert_uint_eq(len, sizeof(big));
	ck_assert_uint_eq(text[len], 0);
	ck_assert_uint_eq(strspn(text, "x"), sizeof(big));
	free(text);
	ck_assert_int_eq(textfile_read(path, 50000, &text, &len, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "larger than"));
	ck_assert_ptr_null(text);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(textfile_read(path, 1u << 20, &text, &len, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "No such file"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("containers");
	TCase *tc = tcase_create("all");
	tcase_add_test(tc, vec_grows_and_zero_fills);
	tcase_add_test(tc, array_reserve_keeps_contents);
	tcase_add_test(tc, array_reserve_raw_keeps_contents);
	tcase_add_test(tc, u64map_matches_reference);
	tcase_add_test(tc, u64map_counts);
	tcase_add_test(tc, idxmap_follows_swap_remove);
	tcase_add_test(tc, log_rl_bucket);
	tcase_add_test(tc, lineset_matches_reference);
	tcase_add_test(tc, statefile_whole_or_not);
	tcase_add_test(tc, statefile_ignores_planted_symlink);
	tcase_add_test(tc, name_map_reads_ibnetdiscover_format);
	tcase_add_test(tc, ibnet_reads_and_compares);
	tcase_add_test(tc, textfile_reads_whole_files);
	suite_add_tcase(s, tc);
	return check_run(s);
}
