/* fabric/: the port predicates, paths and presence, each port's P_Keys from the partition
 * policy, alias GUIDs, the interned tables. All on hand-built fabrics (topo_fixture). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "topo_fixture.h"
#include "check_run.h"

/* sm-host -- sw0 -- sw1 -- hostB, and hostC on sw1 with its link down (Polling: cabled but
 * not up), sw1 port 3 empty */
struct small {
	struct topo t;
	uint32_t sm, sw0, sw1, b, c;
};

static void small_build(struct small *s, const struct ibsmd_config *cfg)
{
	ck_assert_int_eq(topo_init(&s->t), 0);
	s->sw0 = fix_switch(&s->t, 4);
	s->sw1 = fix_switch(&s->t, 4);
	s->sm = fix_ca(&s->t);
	s->b = fix_ca(&s->t);
	s->c = fix_ca(&s->t);
	fix_connect(&s->t, s->sm, s->sw0);
	fix_connect(&s->t, s->sw0, s->sw1);
	fix_connect(&s->t, s->sw1, s->b);
	fix_connect(&s->t, s->sw1, s->c);
	fix_finish(&s->t, s->sm, cfg);
}

static uint32_t ca_port(const struct small *s, uint32_t n)
{
	return topo_port(&s->t, n, 1);
}

/* The model keeps its own rules: a port's GUID and the index agree, a duplicate changes
 * nothing, and forgetting links leaves none one-sided. */
START_TEST(mutators_keep_the_index)
{
	struct small s;
	small_build(&s, NULL);
	struct topo *t = &s.t;
	uint32_t pb = ca_port(&s, s.b), pc = ca_port(&s, s.c);
	uint64_t gb = t->ports[pb].guid, gc = t->ports[pc].guid;
	ck_assert_uint_eq(u64map_get(&t->by_port_guid, gb), pb);
	/* c claims b's GUID: refused, both as they were */
	ck_assert_int_eq(topo_set_port_guid(t, pc, gb), -1);
	ck_assert_uint_eq(t->ports[pc].guid, gc);
	ck_assert_uint_eq(u64map_get(&t->by_port_guid, gb), pb);
	/* b's HCA replaced: the new GUID indexed, the old one gone from the index */
	ck_assert_int_eq(topo_set_port_guid(t, pb, 0xabc), 0);
	ck_assert_uint_eq(u64map_get(&t->by_port_guid, 0xabc), pb);
	ck_assert_uint_eq(u64map_get(&t->by_port_guid, gb), U64MAP_NONE);
	/* now c may take the freed GUID */
	ck_assert_int_eq(topo_set_port_guid(t, pc, gb), 0);
	ck_assert_uint_eq(u64map_get(&t->by_port_guid, gc), U64MAP_NONE);
	topo_forget_links(t);
	for (uint32_t p = 0; p < t->nports; p++)
		ck_assert_uint_eq(t->ports[p].peer, TOPO_NONE);
	topo_release_lid(t, pb);
	ck_assert_uint_eq(t->ports[pb].lid, 0);
	topo_free(t);
}
END_TEST

START_TEST(predicates)
{
	struct small s;
	small_build(&s, NULL);
	struct topo *t = &s.t;
	uint32_t sw0_0 = topo_port(t, s.sw0, 0), sw1_4 = topo_port(t, s.sw1, 4);
	uint32_t cp = ca_port(&s, s.c), bp = ca_port(&s, s.b);

	/* switch port 0: an endpoint, managed, never "should be active" (it has no link) */
	ck_assert(topo_port_endpoint(t, sw0_0));
	ck_assert(topo_port_managed(t, sw0_0));
	ck_assert(topo_port_in_service(t, sw0_0));
	ck_assert(!topo_port_linked(t, sw0_0));
	ck_assert(!topo_port_should_be_active(t, sw0_0));
	/* an unused switch port: seen, nothing else */
	ck_assert(topo_port_seen(t, sw1_4));
	ck_assert(!topo_port_linked(t, sw1_4) && !topo_port_endpoint(t, sw1_4));
	ck_assert(!topo_port_managed(t, sw1_4));
	/* a CA port with an ACTIVE link and a LID: all of them */
	ck_assert(topo_port_endpoint(t, bp) && topo_port_in_service(t, bp));
	ck_assert(topo_port_managed(t, bp) && !topo_port_should_be_active(t, bp));

	/* C's link comes up only to Init: an endpoint, managed, not in service, should be
	 * active */
	t->ports[cp].pi.port_state = PORT_STATE_INIT;
	ck_assert(topo_port_endpoint(t, cp) && topo_port_managed(t, cp));
	ck_assert(!topo_port_in_service(t, cp));
	ck_assert(topo_port_should_be_active(t, cp));
	/* ... Polling (physically down): not managed, still cabled */
	t->ports[cp].pi.port_state = PORT_STATE_DOWN;
	ck_assert(!topo_port_managed(t, cp) && topo_port_linked(t, cp));
	/* no LID: endpoint (it should get one) but not in service */
	t->ports[bp].lid = 0;
	ck_assert(topo_port_endpoint(t, bp) && !topo_port_in_service(t, bp));
	/* the SM's own port is an endpoint even unlinked (the SM alone on a cable-less host) */
	uint32_t smp = ca_port(&s, s.sm);
	topo_unlink(t, smp);
	ck_assert(topo_port_endpoint(t, smp));
	/* never-read PortInfo: nothing */
	t->ports[bp].known = false;
	ck_assert(!topo_port_seen(t, bp) && !topo_port_endpoint(t, bp));
	topo_free(t);
}
END_TEST

START_TEST(paths_and_presence)
{
	struct small s;
	small_build(&s, NULL);
	struct topo *t = &s.t;
	/* directed routes from the SM: sw0 one hop out of the SM's port 1, B three hops */
	ck_assert_uint_eq(t->nodes[s.sw0].hops, 1);
	ck_assert_uint_eq(t->nodes[s.sw0].path[1], 1);
	ck_assert_uint_eq(t->nodes[s.b].hops, 3);
	ck_assert_uint_eq(t->nodes[s.b].path[2], 2); /* sw0 port 2 to sw1 */
	ck_assert_uint_eq(t->nodes[s.b].path[3], 2); /* sw1 port 2 to B */
	/* the LID table maps each LID back to its port */
	uint32_t bp = ca_port(&s, s.b);
	ck_assert_uint_eq(t->lid_port[t->ports[bp].lid], bp);

	/* the inter-switch cable goes: sw1 and its hosts leave, their links are dropped */
	topo_unlink(t, topo_port(t, s.sw0, 2));
	ck_assert_uint_eq(topo_update_paths(t, true), 3);
	ck_assert(!t->nodes[s.sw1].present && !t->nodes[s.b].present);
	ck_assert(t->nodes[s.sw0].present && t->nodes[s.sm].present);
	ck_assert_uint_eq(t->ports[bp].peer, TOPO_NONE);
	ck_assert(!topo_port_seen(t, bp));
	topo_rebuild_lids(t);
	ck_assert_uint_eq(t->lid_port[t->ports[bp].lid], TOPO_NONE);
	/* counted once: a second pass loses nobody new */
	ck_assert_uint_eq(topo_update_paths(t, true), 0);
	topo_free(t);
}
END_TEST

static void add_partition(struct ibsmd_config *c, const char *name, uint16_t pkey, bool all,
                          bool all_full, const uint64_t *guids, const bool *full, unsigned n)
{
	struct config_partition *p = config_partition_add(c);
	ck_assert_ptr_nonnull(p);
	strcpy(p->name, name);
	p->pkey = pkey;
	if (all)
		config_partition_member(p, CM_ALL, 0, all_full ? CM_FULL : CM_LIMITED);
	for (unsigned i = 0; i < n; i++)
		config_partition_member(p, CM_GUID, guids[i], full[i] ? CM_FULL : CM_LIMITED);
}

START_TEST(pkeys_from_policy)
{
	/* GUIDs are known before building: the fixture derives them from node indexes */
	struct small s;
	small_build(&s, NULL);
	uint64_t gb = s.t.ports[ca_port(&s, s.b)].guid, gc = s.t.ports[ca_port(&s, s.c)].guid;
	topo_free(&s.t);

	struct ibsmd_config cfg;
	config_defaults(&cfg);
	/* the default partition with B full, everyone else limited; tenant 0x10 with B full
	 * and C limited; 0x20 everyone limited */
	uint64_t g1[] = {gb};
	bool f1[] = {true};
	add_partition(&cfg, "Default", 0x7fff, false, false, g1, f1, 1);
	uint64_t g2[] = {gb, gc};
	bool f2[] = {true, false};
	add_partition(&cfg, "tenant", 0x10, false, false, g2, f2, 2);
	add_partition(&cfg, "all", 0x20, true, false, NULL, NULL, 0);
	small_build(&s, &cfg);
	struct topo *t = &s.t;
	uint32_t bp = ca_port(&s, s.b), cp = ca_port(&s, s.c), smp = ca_port(&s, s.sm);

	unsigned n;
	const uint16_t *pk = topo_port_pkeys(t, bp, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(pk[0], 0xffff); /* listed as a full default member */
	ck_assert_uint_eq(pk[1], 0x8010);
	ck_assert_uint_eq(pk[2], 0x0020);
	pk = topo_port_pkeys(t, cp, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(pk[0], 0x7fff); /* default limited: tenants cannot meet there */
	ck_assert_uint_eq(pk[1], 0x0010);
	pk = topo_port_pkeys(t, smp, &n);
	ck_assert_uint_eq(pk[0], 0xffff); /* the SM's own port stays full */
	ck_assert_uint_eq(n, 2);          /* default and "all" */

	bool full;
	ck_assert(topo_port_has_pkey(t, cp, 0x8010, &full) && !full);
	ck_assert(!topo_port_has_pkey(t, smp, 0x10, &full));
	/* B and C share 0x10 with B full; C and the SM share only the default, with the SM
	 * full; two limited members share nothing */
	ck_assert_uint_eq(topo_shared_pkey(t, bp, cp), 0xffff);
	ck_assert_uint_eq(topo_shared_pkey(t, cp, smp), 0xffff);
	t->pkeys[t->ports[smp].pkey_at] = 0x7fff;
	ck_assert_uint_eq(topo_shared_pkey(t, cp, smp), 0);

	/* the switch port facing B enforces B's keys; one facing a switch enforces nothing */
	uint16_t sk[32];
	ck_assert_uint_eq(topo_switch_port_pkeys(t, topo_port(t, s.sw1, 2), sk, 32), 3);
	ck_assert_uint_eq(sk[1], 0x8010);
	ck_assert_uint_eq(topo_switch_port_pkeys(t, topo_port(t, s.sw1, 1), sk, 32), 0);
	/* more keys than the switch can enforce: none (the port goes unenforced) */
	t->sws[t->nodes[s.sw1].sw].si.partition_enforcement_cap = 2;
	ck_assert_uint_eq(topo_switch_port_pkeys(t, topo_port(t, s.sw1, 2), sk, 32), 0);

	/* the policy changes: rematerialised, no stale key left */
	cfg.partitions[1].nmembers = 1; /* C leaves the tenant */
	ck_assert_int_eq(topo_pkeys_update(t, &cfg), 0);
	ck_assert(!topo_port_has_pkey(t, cp, 0x10, &full));
	ck_assert(topo_port_has_pkey(t, bp, 0x10, &full) && full);

	/* indx0 puts a partition's key first; "both" gives both keys; the last entry naming a
	 * port decides (C: listed limited by all_cas, then full by its GUID) */
	cfg.partitions[2].indx0 = true;
	struct config_partition *pb = config_partition_add(&cfg);
	pb->pkey = 0x30;
	config_partition_member(pb, CM_GUID, gb, CM_BOTH);
	config_partition_member(pb, CM_ALL_CAS, 0, CM_LIMITED);
	config_partition_member(pb, CM_GUID, gc, CM_FULL);
	ck_assert_int_eq(topo_pkeys_update(t, &cfg), 0);
	pk = topo_port_pkeys(t, bp, &n);
	/* indx0: "all" (limited) at index 0; the tenant's key stays where it was, the default
	 * goes to the first free index */
	ck_assert_uint_eq(pk[0], 0x0020);
	ck_assert_uint_eq(pk[1], 0x8010);
	ck_assert_uint_eq(pk[2], 0xffff);
	ck_assert(topo_port_has_pkey(t, bp, 0x30, &full) && !full); /* all_cas came after */
	ck_assert(topo_port_has_pkey(t, cp, 0x30, &full) && full);
	/* "both": both keys, when it is the last word */
	pb->members[1].kind = CM_SELF;
	ck_assert_int_eq(topo_pkeys_update(t, &cfg), 0);
	pk = topo_port_pkeys(t, bp, &n);
	unsigned both = 0;
	for (unsigned i = 0; i < n; i++)
		both += (pk[i] & 0x7fff) == 0x30;
	ck_assert_uint_eq(both, 2);
	config_free(&cfg);
	topo_free(t);
}
END_TEST

/* A key keeps its index while others come and go: a QP or an IPoIB child interface holds
 * its P_Key by index (OpenSM's keep_pkey_indexes, its default) */
START_TEST(pkey_indexes_kept)
{
	struct small s;
	small_build(&s, NULL);
	uint64_t gb = s.t.ports[ca_port(&s, s.b)].guid;
	topo_free(&s.t);
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	uint64_t g[] = {gb};
	bool limited[] = {false};
	add_partition(&cfg, "a", 0x10, false, false, g, limited, 1);
	add_partition(&cfg, "b", 0x20, false, false, g, limited, 1);
	add_partition(&cfg, "c", 0x30, false, false, g, limited, 1);
	small_build(&s, &cfg);
	struct topo *t = &s.t;
	uint32_t bp = ca_port(&s, s.b);
	unsigned n;
	const uint16_t *pk = topo_port_pkeys(t, bp, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(pk[1], 0x0010);
	ck_assert_uint_eq(pk[2], 0x0020);
	ck_assert_uint_eq(pk[3], 0x0030);

	/* b leaves the port: a hole at 2, c stays at 3 */
	cfg.partitions[1].nmembers = 0;
	ck_assert_int_eq(topo_pkeys_update(t, &cfg), 0);
	pk = topo_port_pkeys(t, bp, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(pk[0], 0xffff);
	ck_assert_uint_eq(pk[1], 0x0010);
	ck_assert_uint_eq(pk[2], 0);
	ck_assert_uint_eq(pk[3], 0x0030);
	bool is_full;
	ck_assert(!topo_port_has_pkey(t, bp, 0x20, &is_full));
	ck_assert(!topo_port_has_pkey(t, bp, 0, &is_full)); /* a hole is no key */
	ck_assert(topo_port_has_pkey(t, bp, 0x30, &is_full) && !is_full);
	/* the switch port facing it enforces its keys by value: no hole there */
	uint16_t sk[32];
	ck_assert_uint_eq(topo_switch_port_pkeys(t, topo_port(t, s.sw1, 2), sk, 32), 3);
	ck_assert_uint_eq(sk[2], 0x0030);

	/* a new key takes the hole; c's membership changes without moving it */
	cfg.partitions[1].nmembers = 1;
	cfg.partitions[1].pkey = 0x40;
	cfg.partitions[2].members[0].membership = CM_FULL;
	ck_assert_int_eq(topo_pkeys_update(t, &cfg), 0);
	pk = topo_port_pkeys(t, bp, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(pk[2], 0x0040);
	ck_assert_uint_eq(pk[3], 0x8030);

	/* the last key leaving shortens the table */
	cfg.partitions[2].nmembers = 0;
	ck_assert_int_eq(topo_pkeys_update(t, &cfg), 0);
	pk = topo_port_pkeys(t, bp, &n);
	ck_assert_uint_eq(n, 3);

	/* after a restart the model has no placement: the port's own table, read, is kept
	 * (a key the policy no longer gives becomes a hole), once */
	uint16_t held[32] = {0xffff, 0, 0x0040, 0x0077, 0x0010};
	topo_pkeys_held(t, bp, held);
	cfg.partitions[2].nmembers = 1;
	ck_assert_int_eq(topo_pkeys_update(t, &cfg), 0);
	ck_assert_uint_eq(t->pkeys_held.n, 0);
	pk = topo_port_pkeys(t, bp, &n);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(pk[1], 0x8030); /* new to it: the first free index */
	ck_assert_uint_eq(pk[2], 0x0040);
	ck_assert_uint_eq(pk[3], 0);
	ck_assert_uint_eq(pk[4], 0x0010);
	config_free(&cfg);
	topo_free(t);
}
END_TEST

/* OpenSM's ALL_CAS and ALL_ROUTERS: a router's port is in the second, not the first */
START_TEST(all_routers_apart_from_cas)
{
	struct small s;
	small_build(&s, NULL);
	topo_free(&s.t);
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	struct config_partition *cas = config_partition_add(&cfg),
	                        *rts = config_partition_add(&cfg);
	cas->pkey = 0x10;
	config_partition_member(cas, CM_ALL_CAS, 0, CM_FULL);
	rts->pkey = 0x20;
	config_partition_member(rts, CM_ALL_ROUTERS, 0, CM_FULL);
	small_build(&s, &cfg);
	struct topo *t = &s.t;
	t->nodes[s.c].type = NODE_TYPE_ROUTER;
	ck_assert_int_eq(topo_pkeys_update(t, &cfg), 0);
	bool full;
	uint32_t bp = ca_port(&s, s.b), rp = ca_port(&s, s.c);
	ck_assert(topo_port_has_pkey(t, bp, 0x10, &full) && full);
	ck_assert(!topo_port_has_pkey(t, bp, 0x20, &full));
	ck_assert(topo_port_has_pkey(t, rp, 0x20, &full) && full);
	ck_assert(!topo_port_has_pkey(t, rp, 0x10, &full));
	ck_assert(!topo_port_has_pkey(t, topo_port(t, s.sw1, 0), 0x20, &full));
	config_free(&cfg);
	topo_free(t);
}
END_TEST

START_TEST(aliases)
{
	struct small s;
	small_build(&s, NULL);
	struct topo *t = &s.t;
	uint32_t bp = ca_port(&s, s.b), cp = ca_port(&s, s.c);
	uint64_t gb = t->ports[bp].guid;

	ck_assert(!topo_guid_free(t, gb));                   /* a port GUID */
	ck_assert(!topo_guid_free(t, t->nodes[s.sw0].guid)); /* a node GUID */
	ck_assert(!topo_guid_free(t, 0));
	ck_assert(topo_guid_free(t, 0xa11a5));
	uint64_t before = t->alias_changes;
	ck_assert_int_eq(topo_alias_add(t, bp, 1, 0xa11a5), 0);
	ck_assert_int_eq(topo_alias_add(t, bp, 9, 0xa11a6), 0);
	ck_assert_int_eq(topo_alias_add(t, cp, 1, 0xa11a7), 0);
	ck_assert_uint_eq(t->alias_changes, before + 3);
	ck_assert(!topo_guid_free(t, 0xa11a5));
	ck_assert_uint_eq(topo_alias_port(t, 0xa11a6), bp);
	ck_assert_uint_eq(topo_alias_at(t, bp, 9), 0xa11a6);
	ck_assert_uint_eq(topo_alias_at(t, bp, 2), 0);

	struct mad_guid_info g;
	topo_guid_info_block(t, bp, 0, &g);
	ck_assert_uint_eq(g.guid[0], gb);
	ck_assert_uint_eq(g.guid[1], 0xa11a5);
	ck_assert_uint_eq(g.guid[2], 0);
	topo_guid_info_block(t, bp, 1, &g);
	ck_assert_uint_eq(g.guid[0], 0); /* index 8: not the port GUID */
	ck_assert_uint_eq(g.guid[1], 0xa11a6);

	/* delete the first: the last moves into its place, both indexes follow */
	topo_alias_del(t, 0xa11a5);
	ck_assert(topo_guid_free(t, 0xa11a5));
	ck_assert_uint_eq(topo_alias_at(t, bp, 1), 0);
	ck_assert_uint_eq(topo_alias_at(t, cp, 1), 0xa11a7);
	ck_assert_uint_eq(topo_alias_port(t, 0xa11a7), cp);

	/* C's host leaves the fabric: its alias goes with it, B's stays */
	topo_unlink(t, cp);
	topo_update_paths(t, true);
	ck_assert_uint_eq(topo_aliases_follow(t), 1);
	ck_assert_uint_eq(topo_alias_port(t, 0xa11a7), TOPO_NONE);
	ck_assert_uint_eq(topo_alias_at(t, bp, 9), 0xa11a6);
	ck_assert_uint_eq(t->aliases.n, 1);
	topo_free(t);
}
END_TEST

START_TEST(interned_tables)
{
	struct small s;
	small_build(&s, NULL);
	struct topo *t = &s.t;
	struct mad_vlarb_table a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.vl[0] = 0, a.weight[0] = 64;
	b.vl[0] = 1, b.weight[0] = 32;
	uint16_t ia = topo_vlarb_intern(t, &a);
	ck_assert_uint_eq(ia, 1);
	ck_assert_uint_eq(topo_vlarb_intern(t, &b), 2);
	ck_assert_uint_eq(topo_vlarb_intern(t, &a), ia); /* same table, same index */
	ck_assert_uint_eq(t->nvlarb, 2);
	ck_assert_uint_eq(topo_sl2vl_intern(t, 0x0123456701234567ull), 1);
	ck_assert_uint_eq(topo_sl2vl_intern(t, 0x0123456701234567ull), 1);

	/* a switch's table for in 1 -> out 2, read back by port; unknown elsewhere */
	struct topo_switch *sw = &t->sws[t->nodes[s.sw0].sw];
	unsigned np = t->nodes[s.sw0].nports + 1u;
	sw->sl2vl = calloc(np * np, sizeof(uint16_t));
	sw->sl2vl[1 * np + 2] = topo_sl2vl_intern(t, 0x1111111111111111ull);
	ck_assert_uint_eq(topo_switch_sl2vl(t, sw, np, 1, 2), 0x1111111111111111ull);
	ck_assert_uint_eq(topo_switch_sl2vl(t, sw, np, 2, 1), TOPO_SL2VL_UNKNOWN);
	uint32_t out = topo_port(t, s.sw0, 2);
	ck_assert_uint_eq(topo_sl2vl_of(t, out, 1), 0x1111111111111111ull);
	ck_assert_uint_eq(topo_sl2vl_of(t, out, 3), 0);
	ck_assert_uint_eq(topo_sl2vl_of(t, out, 200), 0); /* an in port past the switch */
	/* a CA port's own table */
	uint32_t bp = ca_port(&s, s.b);
	t->ports[bp].sl2vl = 0x2222222222222222ull;
	ck_assert_uint_eq(topo_sl2vl_of(t, bp, 0), 0x2222222222222222ull);

	/* the node is reset: everything it held is forgotten and will be sent again */
	t->ports[out].vlarb[0] = ia;
	t->ports[out].pkey_sig = 77;
	topo_forget_tables(t, s.sw0);
	ck_assert_ptr_null(sw->sl2vl);
	ck_assert_uint_eq(t->ports[out].vlarb[0], 0);
	ck_assert_uint_eq(t->ports[out].pkey_sig, 0);
	ck_assert_uint_eq(topo_sl2vl_of(t, out, 1), 0);

	/* the LFT as programmed */
	uint16_t lid = t->ports[bp].lid;
	ck_assert_uint_eq(topo_lft_hw(t, sw - t->sws, lid), 0xff); /* never programmed */
	uint32_t si = (uint32_t)(sw - t->sws);
	ck_assert_int_eq(topo_lft_hw_reserve(t, si, 64), 0);
	ck_assert_uint_eq(sw->lft_hw_size, 64);
	ck_assert_uint_eq(topo_lft_hw(t, si, lid), 0xfe); /* held, not known yet: written */
	uint8_t block[64];
	memset(block, 2, sizeof(block));
	topo_lft_hw_store(t, si, 0, block); /* as the switch acknowledged it */
	ck_assert_uint_eq(topo_lft_hw(t, si, lid), 2);
	ck_assert_uint_eq(topo_lft_hw(t, si, 100), 0xff); /* past the table */
	topo_lft_hw_store(t, si, 1, block);               /* past it too: ignored */
	ck_assert_uint_eq(sw->lft_hw_size, 64);
	/* growing keeps what is known, and what it adds is unknown */
	ck_assert_int_eq(topo_lft_hw_reserve(t, si, 128), 0);
	ck_assert_uint_eq(topo_lft_hw(t, si, lid), 2);
	ck_assert_uint_eq(topo_lft_hw(t, si, 100), 0xfe);
	ck_assert_int_eq(topo_lft_hw_reserve(t, si, 64), 0); /* never shrinks */
	ck_assert_uint_eq(sw->lft_hw_size, 128);
	topo_set_pkey_sig(t, out, 99);
	ck_assert_uint_eq(t->ports[out].pkey_sig, 99);
	/* a switch reset empties its LFT and MFT: our copies of both are forgotten, so that
	 * every block goes out again (an MFT block taken as known would never be resent) */
	sw->mft_mlids = 64;
	sw->mft_known = calloc(2, sizeof(bool));
	sw->mft_known[0] = sw->mft_known[1] = true;
	topo_forget_tables(t, s.sw0);
	ck_assert_ptr_null(sw->lft_hw);
	ck_assert_uint_eq(sw->lft_hw_size, 0);
	ck_assert_uint_eq(topo_lft_hw(t, sw - t->sws, lid), 0xff);
	ck_assert(!sw->mft_known[0] && !sw->mft_known[1]);
	ck_assert_uint_eq(t->ports[out].pkey_sig, 0);
	topo_free(t);
}
END_TEST

START_TEST(guid_maps_scale)
{
	/* 20,000 CAs under 250 leaves and 2 spines: every GUID found through the maps */
	struct topo t;
	ck_assert_int_eq(topo_init(&t), 0);
	uint32_t first = fix_fattree(&t, 250, 2, 80);
	fix_finish(&t, first, NULL);
	ck_assert_uint_eq(t.nnodes, 252 + 20000);
	for (uint32_t n = 0; n < t.nnodes; n++) {
		ck_assert_uint_eq(u64map_get(&t.by_guid, t.nodes[n].guid), n);
		if (!topo_is_switch(&t, n)) {
			uint32_t p = topo_port(&t, n, 1);
			ck_assert_uint_eq(u64map_get(&t.by_port_guid, t.ports[p].guid), p);
			ck_assert(topo_port_in_service(&t, p));
		}
	}
	topo_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fabric");
	TCase *tc = tcase_create("all");
	tcase_add_test(tc, mutators_keep_the_index);
	tcase_add_test(tc, predicates);
	tcase_add_test(tc, paths_and_presence);
	tcase_add_test(tc, pkeys_from_policy);
	tcase_add_test(tc, pkey_indexes_kept);
	tcase_add_test(tc, all_routers_apart_from_cas);
	tcase_add_test(tc, aliases);
	tcase_add_test(tc, interned_tables);
	tcase_add_test(tc, guid_maps_scale);
	suite_add_tcase(s, tc);
	return check_run(s);
}
