/* fabricsim's agents and packet paths, case by case, in one process. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/mad.h>

#include "agents.h"
#include "mad/mad_header.h"
#include "mad/vport_attrs.h"
#include "topology.h"
#include "verify.h"

/*  H1 (2 ports, port 1 cabled) - S1 port 1;  S1 port 2 - S2 port 1;  S1 port 3 - H3;
 *  S2 port 2 - H2.  */
static const char net[] = "Switch 8 \"S1\"\n"
                          "[1] \"H1\"[1]\n"
                          "[2] \"S2\"[1]\n"
                          "[3] \"H3\"[1]\n"
                          "\n"
                          "Switch 8 \"S2\"\n"
                          "[1] \"S1\"[2]\n"
                          "[2] \"H2\"[1]\n"
                          "\n"
                          "Ca 2 \"H1\"\n"
                          "[1] \"S1\"[1]\n"
                          "Ca 1 \"H2\"\n"
                          "[1] \"S2\"[2]\n"
                          "Ca 1 \"H3\"\n"
                          "[1] \"S1\"[3]\n";

static struct fabric F;
static uint32_t H1, H2, H3, S1p0, S2p0; /* ports */

static void setup(void)
{
	struct fs_error err;
	fabric_init(&F);
	ck_assert_msg(netfile_parse(&F, "test.net", net, &err) == 0, "%s", err.msg);
	H1 = fabric_port(&F, fabric_find_node(&F, "H1"), 1);
	H2 = fabric_port(&F, fabric_find_node(&F, "H2"), 1);
	H3 = fabric_port(&F, fabric_find_node(&F, "H3"), 1);
	S1p0 = fabric_port(&F, fabric_find_node(&F, "S1"), 0);
	S2p0 = fabric_port(&F, fabric_find_node(&F, "S2"), 0);
}

static void teardown(void)
{
	fabric_free(&F);
}

static void dr_smp(uint8_t *mad, uint8_t method, uint16_t attr, uint32_t mod, const char *path)
{
	struct mad_smp smp;
	uint8_t p[64];
	int hops = mad_dr_path_parse(path, p, NULL);
	ck_assert_int_ge(hops, 0);
	ck_assert_int_eq(mad_smp_init_dr(&smp, method, attr, mod, p, (unsigned)hops, NULL), 0);
	memset(mad, 0, 256);
	mad_smp_encode(&smp, mad, 256, NULL);
}

/* Send from src along the MAD's route, let the SMA answer, bring the answer back; returns the
 * status, or -1 if the request or answer was dropped. */
static int dr_call(uint32_t src, uint8_t *mad, struct route *out)
{
	struct route r;
	if (route_dr(&F, src, mad, &r) < 0) {
		if (out)
			*out = r;
		return -1;
	}
	if (out)
		*out = r;
	if (sma_process(&F, r.arrival, mad, 0) != AGENT_REPLY)
		return -1;
	uint32_t from = fs_is_switch(&F, F.ports[r.dest].node) ? r.dest : r.arrival;
	struct route back;
	if (route_dr(&F, from, mad, &back) < 0)
		return -1;
	ck_assert_uint_eq(back.dest, fabric_lid_port(&F, src));
	ck_assert_uint_eq(mad_get_field(mad, 0, IB_DRSMP_HOPPTR_F), 0);
	return (int)mad_get_field(mad, 0, IB_DRSMP_STATUS_F);
}

static struct mad_node_info node_info_of(const uint8_t *mad)
{
	struct mad_node_info ni;
	ck_assert_int_eq(mad_node_info_decode(mad + 64, 64, &ni, NULL), 0);
	return ni;
}

/* ---- directed route ---- */

START_TEST(dr_local_node)
{
	uint8_t m[256];
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	struct mad_node_info ni = node_info_of(m);
	ck_assert_uint_eq(ni.node_type, NODE_TYPE_CA);
	ck_assert_uint_eq(ni.num_ports, 2);
	ck_assert_uint_eq(ni.local_port_num, 1);
	ck_assert_uint_eq(ni.port_guid, F.ports[H1].guid);
}
END_TEST

START_TEST(dr_hops_and_return_path)
{
	uint8_t m[256];
	struct route r;
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1");
	ck_assert_int_eq(route_dr(&F, H1, m, &r), 0);
	ck_assert_uint_eq(r.hops, 1);
	ck_assert_uint_eq(F.ports[r.arrival].num, 1); /* into S1 by port 1 */
	ck_assert_uint_eq(r.dest, S1p0);              /* S1's SMA */
	ck_assert_uint_eq(m[192 + 1], 1);             /* ReturnPath[1] */
	ck_assert_uint_eq(mad_get_field(m, 0, IB_DRSMP_HOPPTR_F), 2);

	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1,2");
	ck_assert_int_eq(dr_call(H1, m, &r), 0);
	struct mad_node_info ni = node_info_of(m);
	ck_assert_str_eq(fs_node_of(&F, r.dest)->name, "S2");
	ck_assert_uint_eq(ni.local_port_num, 1); /* entered S2 on its port 1 */
	ck_assert_uint_eq(m[192 + 2], 1);

	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1,2,2");
	ck_assert_int_eq(dr_call(H1, m, &r), 0);
	ck_assert_uint_eq(r.dest, H2);
	ck_assert_uint_eq(node_info_of(m).node_type, NODE_TYPE_CA);
}
END_TEST

START_TEST(dr_from_a_switch)
{
	uint8_t m[256];
	struct route r;
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_DESC, 0, "0,2,2");
	ck_assert_int_eq(dr_call(S1p0, m, &r), 0);
	ck_assert_uint_eq(r.dest, H2);
	ck_assert_str_eq((char *)m + 64, "H2");
}
END_TEST

START_TEST(dr_drops)
{
	uint8_t m[256];
	struct route r;
	/* a CA cannot forward */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1,3,1");
	ck_assert_int_eq(dr_call(H1, m, &r), -1);
	ck_assert_ptr_nonnull(strstr(r.why, "CA in the middle"));
	/* no such port, an empty port */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1,9");
	ck_assert_int_eq(dr_call(H1, m, &r), -1);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1,5");
	ck_assert_int_eq(dr_call(H1, m, &r), -1);
	ck_assert_ptr_nonnull(strstr(r.why, "no cable"));
	/* port 0 is not a hop */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1,0");
	ck_assert_int_eq(dr_call(H1, m, &r), -1);
	/* a pulled cable, then put back */
	fabric_set_link(&F, fabric_port(&F, fabric_find_node(&F, "S1"), 2), false);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1,2");
	ck_assert_int_eq(dr_call(H1, m, &r), -1);
	ck_assert_ptr_nonnull(strstr(r.why, "link down"));
	fabric_set_link(&F, fabric_port(&F, fabric_find_node(&F, "S1"), 2), true);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1,2");
	ck_assert_int_eq(dr_call(H1, m, &r), 0);
	/* LID-routed parts are refused, with the reason */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1");
	mad_set_field(m, 0, IB_DRSMP_DRSLID_F, 5);
	ck_assert_int_eq(route_dr(&F, H1, m, &r), -1);
	ck_assert_ptr_nonnull(strstr(r.why, "DrSLID"));
	/* an outbound SMP must start with hop pointer 0 */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1");
	mad_set_field(m, 0, IB_DRSMP_HOPPTR_F, 1);
	ck_assert_int_eq(route_dr(&F, H1, m, &r), -1);
	/* a removed node is gone until it comes back */
	uint32_t s2 = fabric_find_node(&F, "S2");
	fabric_remove_node(&F, s2);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1,2");
	ck_assert_int_eq(dr_call(H1, m, &r), -1);
	fabric_restore_node(&F, s2);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1,2");
	ck_assert_int_eq(dr_call(H1, m, &r), 0);
}
END_TEST

/* ---- SMA ---- */

static int set_port_info(uint32_t src, const char *path, uint32_t mod,
                         void (*edit)(struct mad_port_info *, void *), void *arg,
                         struct mad_port_info *after)
{
	uint8_t m[256];
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_PORT_INFO, mod, path);
	ck_assert_int_eq(dr_call(src, m, NULL), 0);
	struct mad_port_info pi;
	mad_port_info_decode(m + 64, 64, &pi, NULL);
	edit(&pi, arg);
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_PORT_INFO, mod, path);
	mad_port_info_encode(&pi, m + 64, 64, NULL);
	int st = dr_call(src, m, NULL);
	if (after)
		mad_port_info_decode(m + 64, 64, after, NULL);
	return st;
}

static void edit_state(struct mad_port_info *pi, void *arg)
{
	pi->port_state = (uint8_t)(uintptr_t)arg;
	pi->phys_state = 0;
	pi->link_width_enabled = 0;
	pi->link_speed_enabled = 0;
}

static void edit_lid(struct mad_port_info *pi, void *arg)
{
	edit_state(pi, (void *)0);
	pi->lid = (uint16_t)(uintptr_t)arg;
	pi->master_sm_lid = 1;
}

START_TEST(sma_port_states_follow_the_rules)
{
	struct mad_port_info pi;
	/* H1's port and S1's port 1 face each other, both INIT */
	ck_assert_uint_eq(F.ports[H1].pi.port_state, PORT_STATE_INIT);
	/* INIT -> ACTIVE directly: invalid, nothing changes */
	ck_assert_int_eq(set_port_info(H1, "0", 1, edit_state, (void *)4, &pi),
	                 MAD_STATUS_INVALID_FIELD);
	ck_assert_uint_eq(pi.port_state, PORT_STATE_INIT);
	/* Set INIT is never valid */
	ck_assert_int_eq(set_port_info(H1, "0", 1, edit_state, (void *)2, &pi),
	                 MAD_STATUS_INVALID_FIELD);
	/* ARMED, then ACTIVE while the neighbour is still INIT: refused */
	ck_assert_int_eq(set_port_info(H1, "0", 1, edit_state, (void *)3, &pi), 0);
	ck_assert_uint_eq(pi.port_state, PORT_STATE_ARMED);
	ck_assert_int_eq(set_port_info(H1, "0", 1, edit_state, (void *)4, &pi),
	                 MAD_STATUS_INVALID_FIELD);
	/* the neighbour arms, now both can go ACTIVE */
	ck_assert_int_eq(set_port_info(H1, "0,1", 1, edit_state, (void *)3, &pi), 0);
	ck_assert_int_eq(set_port_info(H1, "0", 1, edit_state, (void *)4, &pi), 0);
	ck_assert_uint_eq(pi.port_state, PORT_STATE_ACTIVE);
	ck_assert_int_eq(set_port_info(H1, "0,1", 1, edit_state, (void *)4, &pi), 0);
	ck_assert_uint_eq(F.ports[H1].pi.port_state, PORT_STATE_ACTIVE);
	/* DOWN: the link retrains, both ends back to INIT, the switch notes the change */
	struct fs_switch *s1 = &F.sws[fs_node_of(&F, S1p0)->sw];
	s1->si.port_state_change = 0;
	ck_assert_int_eq(set_port_info(H1, "0", 1, edit_state, (void *)1, &pi), 0);
	ck_assert_uint_eq(F.ports[H1].pi.port_state, PORT_STATE_INIT);
	ck_assert_uint_eq(F.ports[F.ports[H1].peer].pi.port_state, PORT_STATE_INIT);
	/* a switch port beyond its count: invalid field */
	uint8_t m[256];
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_PORT_INFO, 9, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_INVALID_FIELD);
}
END_TEST

static void edit_phys(struct mad_port_info *pi, void *arg)
{
	edit_state(pi, (void *)0);
	pi->phys_state = (uint8_t)(uintptr_t)arg;
}

/* IBA 14.2.5.6: PortPhysicalState Disabled holds until an SM writes Polling; the cable going
 * down and up meanwhile does not bring the link up (hardware keeps its transmitter off). The
 * journal has each step with the simulator's time, in order. */
START_TEST(sma_disabled_port_stays_disabled)
{
	struct mad_port_info pi;
	uint32_t s1p1 = F.ports[H1].peer;
	/* from an SM behind H2 (H2 - S2 - S1): a Set through the link it disables would lose
	 * its own answer */
	ck_assert_int_eq(set_port_info(H2, "0,1,1", 1, edit_phys, (void *)PHYS_STATE_DISABLED, &pi),
	                 0);
	ck_assert_uint_eq(F.ports[s1p1].pi.phys_state, PHYS_STATE_DISABLED);
	ck_assert_uint_eq(F.ports[H1].pi.port_state, PORT_STATE_DOWN);
	for (int i = 0; i < 3; i++) {
		fs_journal_add(&F, FS_J_CABLE, H1, 0);
		fabric_set_link(&F, H1, false);
		fs_journal_add(&F, FS_J_CABLE, H1, 1);
		fabric_set_link(&F, H1, true);
		ck_assert_uint_eq(F.ports[s1p1].pi.phys_state, PHYS_STATE_DISABLED);
		ck_assert_uint_eq(F.ports[s1p1].pi.port_state, PORT_STATE_DOWN);
		ck_assert_uint_eq(F.ports[H1].pi.port_state, PORT_STATE_DOWN);
		ck_assert_uint_eq(F.ports[H1].pi.phys_state, PHYS_STATE_POLLING);
	}
	/* Armed on a disabled link is invalid, as on a link that is down; Polling enables it */
	ck_assert_int_eq(set_port_info(H2, "0,1,1", 1, edit_state, (void *)3, &pi),
	                 MAD_STATUS_INVALID_FIELD);
	ck_assert_int_eq(set_port_info(H2, "0,1,1", 1, edit_phys, (void *)PHYS_STATE_POLLING, &pi),
	                 0);
	ck_assert_uint_eq(F.ports[s1p1].pi.port_state, PORT_STATE_INIT);
	ck_assert_uint_eq(F.ports[H1].pi.port_state, PORT_STATE_INIT);

	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	fs_journal_print(&F, o, 0);
	fclose(o);
	const char *want[] = {"phys S1 1 disabled", "cable H1 1 down", "cable H1 1 up",
	                      "phys S1 1 enabled"};
	const char *at = out;
	double last = 0;
	for (unsigned i = 0; i < 4; i++) {
		const char *hit = strstr(at, want[i]);
		ck_assert_msg(hit, "journal lacks \"%s\" after offset %td:\n%s", want[i], at - out,
		              out);
		at = hit;
	}
	for (const char *line = out; *line; line = strchr(line, '\n') + 1) {
		unsigned long long seq;
		double t;
		ck_assert_int_eq(sscanf(line, "%llu %lf", &seq, &t), 2);
		ck_assert(t >= last);
		last = t;
	}
	free(out);
}
END_TEST

START_TEST(sma_lids_and_switch_info)
{
	struct mad_port_info pi;
	ck_assert_int_eq(set_port_info(H1, "0", 1, edit_lid, (void *)7, &pi), 0);
	ck_assert_uint_eq(pi.lid, 7);
	ck_assert_uint_eq(fabric_port_by_lid(&F, 7), H1);
	ck_assert_int_eq(set_port_info(H1, "0", 1, edit_lid, (void *)9, &pi), 0);
	ck_assert_uint_eq(fabric_port_by_lid(&F, 7), FS_NONE);
	ck_assert_uint_eq(fabric_port_by_lid(&F, 9), H1);
	/* a multicast LID is no port's LID */
	ck_assert_int_eq(set_port_info(H1, "0", 1, edit_lid, (void *)0xc001, &pi),
	                 MAD_STATUS_INVALID_FIELD);
	/* switch external ports report the switch's LID */
	ck_assert_int_eq(set_port_info(H1, "0,1", 0, edit_lid, (void *)3, &pi), 0);
	uint8_t m[256];
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_PORT_INFO, 2, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	mad_port_info_decode(m + 64, 64, &pi, NULL);
	ck_assert_uint_eq(pi.lid, 3);
	ck_assert_uint_eq(pi.local_port_num, 1);

	/* SwitchInfo: PortStateChange is cleared by writing 1; LinearFDBTop bounded */
	struct mad_switch_info si;
	F.sws[0].si.port_state_change = 1;
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_SWITCH_INFO, 0, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	mad_switch_info_decode(m + 64, 64, &si, NULL);
	ck_assert_uint_eq(si.port_state_change, 1);
	si.linear_fdb_top = 100;
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_SWITCH_INFO, 0, "0,1");
	mad_switch_info_encode(&si, m + 64, 64, NULL);
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	mad_switch_info_decode(m + 64, 64, &si, NULL);
	ck_assert_uint_eq(si.port_state_change, 0);
	ck_assert_uint_eq(si.linear_fdb_top, 100);
	si.linear_fdb_top = 60000;
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_SWITCH_INFO, 0, "0,1");
	mad_switch_info_encode(&si, m + 64, 64, NULL);
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_INVALID_FIELD);
	/* a CA has no SwitchInfo */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_SWITCH_INFO, 0, "0");
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_UNSUP_METHOD_ATTR);
}
END_TEST

START_TEST(sma_tables)
{
	uint8_t m[256];
	/* LFT: set, read back, bounded by LinearFDBCap */
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_LFT, 2, "0,1");
	for (int i = 0; i < 64; i++)
		m[64 + i] = (uint8_t)(i % 4);
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_LFT, 2, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(m[64 + 5], 1);
	ck_assert_uint_eq(F.sws[0].lft_sets, 1);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_LFT, 768, "0,1"); /* 768 * 64 = 49152 */
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_INVALID_FIELD);
	/* an unset block reads as "no route" */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_LFT, 100, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(m[64], 0xff);

	/* MFT: positions of 16 ports; S1 has 9 ports (0-8): one position */
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_MFT, (0u << 28) | 1, "0,1");
	m[64] = 0x00;
	m[65] = 0x06;
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_MFT, (0u << 28) | 1, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(m[65], 0x06);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_MFT, (1u << 28) | 1, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_INVALID_FIELD);

	/* P_Keys: a CA port has 64 (two blocks); a switch port's by port << 16 */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_PKEY_TABLE, 0, "0");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(m[64], 0xff);
	ck_assert_uint_eq(m[65], 0xff);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_PKEY_TABLE, 2, "0");
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_INVALID_FIELD);
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_PKEY_TABLE, (2u << 16) | 0, "0,1");
	m[64] = 0x80;
	m[65] = 0x01;
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(F.ports[fabric_port(&F, fabric_find_node(&F, "S1"), 2)].pkeys[0], 0x8001);

	/* SL2VL per input/output port pair on a switch, VLArb blocks 1-4 */
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_SL2VL_TABLE, (1u << 8) | 2, "0,1");
	m[64] = 0x12;
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_SL2VL_TABLE, (1u << 8) | 2, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(m[64], 0x12);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_SL2VL_TABLE, (2u << 8) | 1, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(m[64], 0);
	/* optimized programming: every input port to output 3, then every pair */
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_SL2VL_TABLE, 0x20000 | 3, "0,1");
	m[64] = 0x34;
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_SL2VL_TABLE, (2u << 8) | 3, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(m[64], 0x34);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_SL2VL_TABLE, (2u << 8) | 1, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(m[64], 0);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_SL2VL_TABLE, 0x30000, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_INVALID_FIELD); /* Set only */
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_SL2VL_TABLE, 0x30000, "0,1");
	m[64] = 0x56;
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_SL2VL_TABLE, (2u << 8) | 1, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(m[64], 0x56);

	/* VLArb: block in the modifier's upper half, the output port in the lower */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_VLARB_TABLE, 0, "0");
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_INVALID_FIELD);
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_VLARB_TABLE, (1u << 16) | 2, "0,1");
	m[64] = 0x03;
	m[65] = 0x40;
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_VLARB_TABLE, (1u << 16) | 2, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(m[64], 0x03);
	ck_assert_uint_eq(m[65], 0x40);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_VLARB_TABLE, (1u << 16) | 1, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(m[65], 0);
	/* 8 entries per table: blocks 2 and 4 (entries 32-63) do not exist, 3 (high) does */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_VLARB_TABLE, (2u << 16) | 2, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_INVALID_FIELD);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_VLARB_TABLE, (4u << 16) | 2, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_INVALID_FIELD);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_VLARB_TABLE, (3u << 16) | 2, "0,1");
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);

	/* GUIDInfo: entry 0 is the port GUID, read-only */
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_GUID_INFO, 0, "0");
	memset(m + 64, 0x11, 16);
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	struct mad_guid_info gi;
	mad_guid_info_decode(m + 64, 64, &gi, NULL);
	ck_assert_uint_eq(gi.guid[0], F.ports[H1].guid);
	ck_assert_uint_eq(gi.guid[1], 0x1111111111111111ull);

	/* the journal has the Sets that changed a P_Key or GUIDInfo block, and not one that
	 * wrote what the block held */
	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	fs_journal_print(&F, o, 0);
	fclose(o);
	ck_assert_msg(strstr(out, " pkeys S1 2 0\n"), "%s", out);
	ck_assert_msg(strstr(out, " guids H1 1 0\n"), "%s", out);
	free(out);
	uint64_t before = F.journal.total;
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_GUID_INFO, 0, "0");
	memset(m + 64, 0x11, 16);
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_PKEY_TABLE, (2u << 16) | 0, "0,1");
	mad_pkey_table_encode(&(struct mad_pkey_table){.pkey = {0x8001}}, m + 64, 64, NULL);
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	ck_assert_uint_eq(F.journal.total, before);
}
END_TEST

START_TEST(sma_methods_and_attributes)
{
	uint8_t m[256];
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_NODE_INFO, 0, "0");
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_UNSUP_METHOD);
	dr_smp(m, MAD_METHOD_GET, 0x7777, 0, "0");
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_UNSUP_METHOD_ATTR);
	dr_smp(m, MAD_METHOD_SEND, MAD_ATTR_NODE_INFO, 0, "0");
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_UNSUP_METHOD);
	/* SMInfo belongs to the SM attached there, not the SMA */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_SM_INFO, 0, "0");
	struct route r;
	ck_assert_int_eq(route_dr(&F, H1, m, &r), 0);
	ck_assert_int_eq(sma_process(&F, r.arrival, m, 0), AGENT_NOT_MINE);
}
END_TEST

static void edit_mkey(struct mad_port_info *pi, void *arg)
{
	edit_state(pi, (void *)0);
	pi->mkey = 0x1234;
	pi->mkey_protect_bits = (uint8_t)(uintptr_t)arg;
	pi->mkey_lease_period = 2;
}

START_TEST(sma_mkey_protection)
{
	uint8_t m[256];
	struct route r;
	ck_assert_int_eq(set_port_info(H1, "0", 1, edit_mkey, (void *)2, NULL), 0);
	/* protection 2: a Get with the wrong key gets no answer and counts a violation */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0");
	ck_assert_int_eq(route_dr(&F, H1, m, &r), 0);
	ck_assert_int_eq(sma_process(&F, r.arrival, m, 1000), AGENT_NO_REPLY);
	ck_assert_uint_eq(F.ports[H1].pi.mkey_violations, 1);
	/* the right key works */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0");
	mad_set_field64(m, 0, IB_MAD_MKEY_F, 0x1234);
	ck_assert_int_eq(route_dr(&F, H1, m, &r), 0);
	ck_assert_int_eq(sma_process(&F, r.arrival, m, 2000), AGENT_REPLY);
	/* the lease (2 s) runs out: protection lifts, a Get goes through */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0");
	ck_assert_int_eq(route_dr(&F, H1, m, &r), 0);
	ck_assert_int_eq(sma_process(&F, r.arrival, m, 1000 + 3000000000ull), AGENT_REPLY);
	ck_assert_uint_eq(F.ports[H1].pi.mkey_protect_bits, 0);

	/* protection 1: Get answers with the M_Key hidden; a Set with the wrong key is dropped */
	F.ports[H1].pi.mkey_protect_bits = 1;
	F.ports[H1].mkey_lease_start_ns = 0;
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_PORT_INFO, 1, "0");
	ck_assert_int_eq(route_dr(&F, H1, m, &r), 0);
	ck_assert_int_eq(sma_process(&F, r.arrival, m, 5000), AGENT_REPLY);
	ck_assert_uint_eq(mad_get_field64(m + 64, 0, IB_PORT_MKEY_F), 0);
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_PORT_INFO, 1, "0");
	ck_assert_int_eq(route_dr(&F, H1, m, &r), 0);
	ck_assert_int_eq(sma_process(&F, r.arrival, m, 6000), AGENT_NO_REPLY);
}
END_TEST

/* ---- LID routing ---- */

static void program(const char *sw, uint16_t lid, uint8_t port)
{
	struct fs_switch *s = &F.sws[F.nodes[fabric_find_node(&F, sw)].sw];
	if (!s->lft) {
		s->lft = malloc(1024);
		memset(s->lft, 0xff, 1024);
		s->lft_size = 1024;
	}
	s->lft[lid] = port;
	if (lid > s->si.linear_fdb_top)
		s->si.linear_fdb_top = lid;
}

static void give_lid(uint32_t port, uint16_t lid)
{
	uint32_t lp = fabric_lid_port(&F, port);
	F.ports[lp].pi.lid = lid;
	fabric_lid_update(&F, lp, 0, 0);
}

START_TEST(lid_routing_through_lfts)
{
	struct route r;
	give_lid(H1, 10);
	give_lid(H2, 20);
	give_lid(S1p0, 1);
	give_lid(S2p0, 2);
	/* nothing programmed: dropped at the first switch */
	ck_assert_int_eq(route_lid(&F, H1, 20, true, &r), -1);
	ck_assert_ptr_nonnull(strstr(r.why, "no LFT entry"));
	program("S1", 20, 2);
	program("S2", 20, 2);
	ck_assert_int_eq(route_lid(&F, H1, 20, true, &r), 0);
	ck_assert_uint_eq(r.dest, H2);
	ck_assert_uint_eq(r.hops, 3);
	/* data VLs need ACTIVE links: these are INIT */
	ck_assert_int_eq(route_lid(&F, H1, 20, false, &r), -1);
	ck_assert_ptr_nonnull(strstr(r.why, "ACTIVE"));
	/* a wrong table: S2 sends LID 20 back to S1, which sends it to S2: a loop */
	program("S2", 20, 1);
	ck_assert_int_eq(route_lid(&F, H1, 20, true, &r), -1);
	ck_assert_ptr_nonnull(strstr(r.why, "loop"));
	/* a table that leads to the wrong CA */
	program("S1", 20, 3);
	ck_assert_int_eq(route_lid(&F, H1, 20, true, &r), -1);
	ck_assert_ptr_nonnull(strstr(r.why, "does not own"));
	/* the switch's own LID through port 0; permissive is local */
	program("S1", 1, 0);
	ck_assert_int_eq(route_lid(&F, H1, 1, true, &r), 0);
	ck_assert_uint_eq(r.dest, S1p0);
	ck_assert_int_eq(route_lid(&F, H1, 0xffff, true, &r), 0);
	ck_assert_uint_eq(r.dest, H1);
}
END_TEST

START_TEST(pma_counts_what_crossed)
{
	uint8_t m[256];
	for (int i = 0; i < 5; i++) {
		dr_smp(m, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, "0,1,2");
		ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	}
	/* PortCounters of S1 port 2: 5 requests out, 5 answers in */
	memset(m, 0, 256);
	m[0] = 1;
	m[1] = MAD_CLASS_PERF;
	m[2] = 1;
	m[3] = MAD_METHOD_GET;
	mad_set_field(m, 0, IB_MAD_ATTRID_F, MAD_ATTR_PORT_COUNTERS);
	mad_set_field(m + 64, 0, IB_PC_PORT_SELECT_F, 2);
	ck_assert_int_eq(pma_process(&F, S1p0, m), AGENT_REPLY);
	ck_assert_uint_eq(mad_get_field(m, 0, IB_MAD_STATUS_F), 0);
	ck_assert_uint_eq(mad_get_field(m + 64, 0, IB_PC_XMT_PKTS_F), 5);
	ck_assert_uint_eq(mad_get_field(m + 64, 0, IB_PC_RCV_PKTS_F), 5);
	/* Set clears what CounterSelect selects: the symbol errors alone leave the packets */
	m[3] = MAD_METHOD_SET;
	mad_set_field(m + 64, 0, IB_PC_COUNTER_SELECT_F, 1);
	ck_assert_int_eq(pma_process(&F, S1p0, m), AGENT_REPLY);
	ck_assert_uint_eq(mad_get_field(m + 64, 0, IB_PC_XMT_PKTS_F), 5);
	m[3] = MAD_METHOD_SET;
	mad_set_field(m + 64, 0, IB_PC_COUNTER_SELECT_F, 0xffff);
	ck_assert_int_eq(pma_process(&F, S1p0, m), AGENT_REPLY);
	m[3] = MAD_METHOD_GET;
	ck_assert_int_eq(pma_process(&F, S1p0, m), AGENT_REPLY);
	ck_assert_uint_eq(mad_get_field(m + 64, 0, IB_PC_XMT_PKTS_F), 0);
}
END_TEST

/* The congestion control agent's rules (cca.c's header, from IBA Annex A10) */
static uint16_t cc_call(uint32_t mgmt, uint8_t *m, uint8_t method, uint16_t attr, uint32_t mod,
                        uint64_t key, enum agent_result want)
{
	uint8_t data[MAD_CC_DATA_SIZE];
	memcpy(data, m + MAD_CC_DATA_OFFSET, sizeof(data));
	mad_cc_request(m, method, attr, mod, key);
	memcpy(m + MAD_CC_DATA_OFFSET, data, sizeof(data));
	ck_assert_int_eq(cca_process(&F, mgmt, m), want);
	if (want == AGENT_REPLY)
		ck_assert_uint_eq(m[3], MAD_METHOD_GET_RESP);
	return (uint16_t)mad_get_field(m, 0, IB_MAD_STATUS_F);
}

START_TEST(cca_follows_annex_a10)
{
	uint8_t m[256] = {0};
	struct mad_cc_info ci;
	/* what each node type has */
	ck_assert_uint_eq(cc_call(S1p0, m, MAD_METHOD_GET, MAD_ATTR_CC_INFO, 0, 0, AGENT_REPLY), 0);
	mad_cc_info_decode(m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, &ci, NULL);
	ck_assert_uint_eq(ci.control_table_cap, 0);
	ck_assert_uint_eq(cc_call(H1, m, MAD_METHOD_GET, MAD_ATTR_CC_INFO, 0, 0, AGENT_REPLY), 0);
	mad_cc_info_decode(m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, &ci, NULL);
	ck_assert_uint_eq(ci.control_table_cap, FS_CC_CCT_BLOCKS);
	ck_assert_uint_eq(
	    cc_call(H1, m, MAD_METHOD_GET, MAD_ATTR_CC_SWITCH_SETTING, 0, 0, AGENT_REPLY),
	    MAD_STATUS_UNSUP_METHOD_ATTR);
	ck_assert_uint_eq(
	    cc_call(S1p0, m, MAD_METHOD_GET, MAD_ATTR_CC_CA_SETTING, 0, 0, AGENT_REPLY),
	    MAD_STATUS_UNSUP_METHOD_ATTR);
	ck_assert_uint_eq(cc_call(S1p0, m, MAD_METHOD_GET, MAD_ATTR_CC_TABLE, 0, 0, AGENT_REPLY),
	                  MAD_STATUS_UNSUP_METHOD_ATTR);
	ck_assert_uint_eq(cc_call(H1, m, MAD_METHOD_SET, MAD_ATTR_CC_INFO, 0, 0, AGENT_REPLY),
	                  MAD_STATUS_UNSUP_METHOD_ATTR);
	ck_assert_uint_eq(cc_call(H1, m, MAD_METHOD_GET, 0x0077, 0, 0, AGENT_REPLY),
	                  MAD_STATUS_UNSUP_METHOD_ATTR);
	ck_assert_uint_eq(cc_call(H1, m, MAD_METHOD_GET_TABLE, MAD_ATTR_CC_INFO, 0, 0, AGENT_REPLY),
	                  MAD_STATUS_UNSUP_METHOD);
	/* a block past ControlTableCap, a CCTI_Limit past the table */
	ck_assert_uint_eq(
	    cc_call(H1, m, MAD_METHOD_GET, MAD_ATTR_CC_TABLE, FS_CC_CCT_BLOCKS, 0, AGENT_REPLY),
	    MAD_STATUS_INVALID_FIELD);
	struct mad_cc_table ct = {.ccti_limit = FS_CC_CCT_BLOCKS * 64};
	mad_cc_table_encode(&ct, m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, NULL);
	ck_assert_uint_eq(cc_call(H1, m, MAD_METHOD_SET, MAD_ATTR_CC_TABLE, 0, 0, AGENT_REPLY),
	                  MAD_STATUS_INVALID_FIELD);
	ct.ccti_limit = 70;
	ct.entry[5] = 1u << 14 | 9;
	mad_cc_table_encode(&ct, m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, NULL);
	ck_assert_uint_eq(cc_call(H1, m, MAD_METHOD_SET, MAD_ATTR_CC_TABLE, 1, 0, AGENT_REPLY), 0);
	memset(m + MAD_CC_DATA_OFFSET, 0, MAD_CC_DATA_SIZE);
	ck_assert_uint_eq(cc_call(H1, m, MAD_METHOD_GET, MAD_ATTR_CC_TABLE, 1, 0, AGENT_REPLY), 0);
	mad_cc_table_decode(m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, &ct, NULL);
	ck_assert_uint_eq(ct.ccti_limit, 70);
	ck_assert_uint_eq(ct.entry[5], 1u << 14 | 9);
	/* a class version other than 2 */
	mad_cc_request(m, MAD_METHOD_GET, MAD_ATTR_CC_INFO, 0, 0);
	m[2] = 1;
	ck_assert_int_eq(cca_process(&F, H1, m), AGENT_REPLY);
	ck_assert_uint_eq(mad_get_field(m, 0, IB_MAD_STATUS_F), MAD_STATUS_BAD_VERSION);

	/* a Set takes what its Control_Map marks valid, and answers what the node holds */
	struct mad_cc_switch_setting sw = {.control_map = MAD_CC_SW_THRESHOLD,
	                                   .threshold = 9,
	                                   .packet_size = 4,
	                                   .marking_rate = 77};
	sw.victim_mask[31] = 0x6;
	mad_cc_switch_setting_encode(&sw, m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, NULL);
	ck_assert_uint_eq(
	    cc_call(S1p0, m, MAD_METHOD_SET, MAD_ATTR_CC_SWITCH_SETTING, 0, 0, AGENT_REPLY), 0);
	mad_cc_switch_setting_decode(m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, &sw, NULL);
	ck_assert_uint_eq(sw.threshold, 9);
	ck_assert_uint_eq(sw.packet_size, 4);
	ck_assert_uint_eq(sw.marking_rate, 0);
	ck_assert_uint_eq(sw.victim_mask[31], 0);
	struct mad_cc_ca_setting ca = {.port_control = 1, .control_map = 0x2};
	ca.ccti_timer[0] = 5, ca.ccti_timer[1] = 6, ca.ccti_min[1] = 3;
	mad_cc_ca_setting_encode(&ca, m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, NULL);
	ck_assert_uint_eq(cc_call(H1, m, MAD_METHOD_SET, MAD_ATTR_CC_CA_SETTING, 0, 0, AGENT_REPLY),
	                  0);
	mad_cc_ca_setting_decode(m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, &ca, NULL);
	ck_assert_uint_eq(ca.port_control, 1);
	ck_assert_uint_eq(ca.ccti_timer[0], 0);
	ck_assert_uint_eq(ca.ccti_timer[1], 6);
	ck_assert_uint_eq(ca.ccti_min[1], 3);

	/* CC_Key: set one; a Set without it is dropped and counted, a Get answers with the
	 * key hidden, and with the protect bit a Get is dropped too */
	struct mad_cc_key_info ki = {.cc_key = 0x5eed, .protect = 0};
	mad_cc_key_info_encode(&ki, m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, NULL);
	ck_assert_uint_eq(cc_call(H1, m, MAD_METHOD_SET, MAD_ATTR_CC_KEY_INFO, 0, 0, AGENT_REPLY),
	                  0);
	ck_assert_uint_eq(
	    cc_call(H1, m, MAD_METHOD_SET, MAD_ATTR_CC_CA_SETTING, 0, 0x1, AGENT_NO_REPLY), 0);
	ck_assert_uint_eq(
	    cc_call(H1, m, MAD_METHOD_SET, MAD_ATTR_CC_KEY_INFO, 0, 0x1, AGENT_NO_REPLY), 0);
	ck_assert_uint_eq(cc_call(H1, m, MAD_METHOD_GET, MAD_ATTR_CC_KEY_INFO, 0, 0x1, AGENT_REPLY),
	                  0);
	mad_cc_key_info_decode(m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, &ki, NULL);
	ck_assert_uint_eq(ki.cc_key, 0);
	ck_assert_uint_eq(ki.violations, 2);
	ck_assert_uint_eq(
	    cc_call(H1, m, MAD_METHOD_GET, MAD_ATTR_CC_KEY_INFO, 0, 0x5eed, AGENT_REPLY), 0);
	mad_cc_key_info_decode(m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, &ki, NULL);
	ck_assert_uint_eq(ki.cc_key, 0x5eed);
	ki.protect = 1;
	mad_cc_key_info_encode(&ki, m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, NULL);
	ck_assert_uint_eq(
	    cc_call(H1, m, MAD_METHOD_SET, MAD_ATTR_CC_KEY_INFO, 0, 0x5eed, AGENT_REPLY), 0);
	ck_assert_uint_eq(
	    cc_call(H1, m, MAD_METHOD_GET, MAD_ATTR_CC_CA_SETTING, 0, 0, AGENT_NO_REPLY), 0);
	ck_assert_uint_eq(
	    cc_call(H1, m, MAD_METHOD_GET, MAD_ATTR_CC_CA_SETTING, 0, 0x5eed, AGENT_REPLY), 0);
	mad_cc_ca_setting_decode(m + MAD_CC_DATA_OFFSET, MAD_CC_DATA_SIZE, &ca, NULL);
	ck_assert_uint_eq(ca.ccti_timer[1], 6); /* the refused Set changed nothing */
	/* the switch's key is its own */
	ck_assert_uint_eq(cc_call(S1p0, m, MAD_METHOD_GET, MAD_ATTR_CC_INFO, 0, 0, AGENT_REPLY), 0);

	/* no agent: the kernel's "unsupported method/attribute" */
	F.ports[H2].cc_off = true;
	ck_assert_uint_eq(cc_call(H2, m, MAD_METHOD_GET, MAD_ATTR_CC_INFO, 0, 0, AGENT_REPLY),
	                  MAD_STATUS_UNSUP_METHOD_ATTR);
}
END_TEST

/* ---- the verifier on hand-programmed tables ---- */

static void mft_set(const char *sw, unsigned mlid_index, uint16_t mask)
{
	struct fs_switch *s = &F.sws[F.nodes[fabric_find_node(&F, sw)].sw];
	if (!s->mft)
		s->mft = calloc((size_t)FS_MFT_CAP * s->positions, sizeof(uint16_t));
	s->mft[mlid_index * s->positions] = mask;
}

static void all_active(void)
{
	for (uint32_t p = 0; p < F.nports; p++)
		if (F.ports[p].peer != FS_NONE)
			F.ports[p].pi.port_state = PORT_STATE_ACTIVE;
}

/* Every endpoint a LID, every port ACTIVE, and LFTs that reach every LID by the shortest
 * way: S1 has H1 on 1, S2 on 2, H3 on 3; S2 has S1 on 1, H2 on 2. */
static void lids_and_routes(void)
{
	give_lid(H1, 10);
	give_lid(H2, 20);
	give_lid(H3, 30);
	give_lid(S1p0, 1);
	give_lid(S2p0, 2);
	all_active();
	/* S1: H1 on 1, S2 on 2, H3 on 3; S2: S1 on 1, H2 on 2 */
	program("S1", 1, 0), program("S1", 2, 2), program("S1", 10, 1), program("S1", 20, 2);
	program("S1", 30, 3);
	program("S2", 1, 1), program("S2", 2, 0), program("S2", 10, 1), program("S2", 20, 2);
	program("S2", 30, 1);
}

START_TEST(verify_unicast_lids_and_multicast)
{
	struct verify_report r;
	lids_and_routes();
	verify_run(&F, NULL, &r);
	ck_assert_msg(r.ok, "%s", r.nissues ? r.issues[0] : "");
	ck_assert_uint_eq(r.endpoints, 5);
	ck_assert_uint_eq(r.pairs, 20);
	ck_assert_uint_eq(r.pairs_reached, 20);
	ck_assert_uint_eq(r.hops_max, 3); /* H1 -> S1 -> S2 -> H2 */
	verify_report_free(&r);

	/* a wrong entry: unreachable, named */
	program("S2", 10, 2);
	verify_run(&F, NULL, &r);
	ck_assert(!r.ok);
	ck_assert_uint_gt(r.pairs_unreached, 0);
	ck_assert_ptr_nonnull(strstr(r.issues[0], "cannot reach LID 10"));
	verify_report_free(&r);
	program("S2", 10, 1);

	/* LIDs: duplicate and misaligned */
	give_lid(H3, 20);
	F.ports[H1].pi.lmc = 1;
	F.ports[H1].pi.lid = 11;
	verify_run(&F, NULL, &r);
	ck_assert_uint_ge(r.lids_duplicate, 1);
	ck_assert_uint_eq(r.lids_misaligned, 1);
	ck_assert(!r.ok);
	verify_report_free(&r);
	F.ports[H1].pi.lmc = 0;
	F.ports[H1].pi.lid = 10;
	give_lid(H3, 30);

	/* multicast MLID 0xc000: members H1, H2, H3; S1 ports 1,2,3; S2 ports 1,2 */
	mft_set("S1", 0, (1 << 1) | (1 << 2) | (1 << 3));
	mft_set("S2", 0, (1 << 1) | (1 << 2));
	verify_run(&F, NULL, &r);
	ck_assert_msg(r.ok, "%s", r.nissues ? r.issues[0] : "");
	ck_assert_uint_eq(r.mlids, 1);
	ck_assert_uint_eq(r.mlids_bad, 0);
	ck_assert_uint_eq(r.mlid_members, 3); /* H1, H2, H3 */
	verify_report_free(&r);
	/* S2 stops forwarding to H2's port... but H2 is still a member? No: its bit is the
	 * membership. Cut the tree instead: S1 no longer sends towards S2 */
	mft_set("S1", 0, (1 << 1) | (1 << 3));
	verify_run(&F, NULL, &r);
	ck_assert_uint_eq(r.mlids_bad, 1);
	ck_assert_ptr_nonnull(strstr(r.issues[0], "not reached"));
	verify_report_free(&r);

	/* JSON carries the same verdict */
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	verify_run(&F, NULL, &r);
	verify_print_json(&r, o);
	fclose(o);
	ck_assert_ptr_nonnull(strstr(buf, "\"ok\":false"));
	ck_assert_ptr_nonnull(strstr(buf, "\"multicast\":{\"mlids\":1,\"members\":3,\"bad\":1}"));
	free(buf);
	verify_report_free(&r);
}
END_TEST

START_TEST(mcast_members_listed)
{
	/* MLID 0xc001: H1 behind S1 port 1, S1 itself (port 0), H2 behind S2 port 2, and the
	 * link between them (S1 port 2, S2 port 1), which delivers to no end port */
	mft_set("S1", 1, (1 << 0) | (1 << 1) | (1 << 2));
	mft_set("S2", 1, (1 << 1) | (1 << 2));
	/* 0xc003: only a tree bit; 0xc005: H3, whose cable is pulled */
	mft_set("S1", 3, 1 << 2);
	mft_set("S1", 5, 1 << 3);
	fabric_set_link(&F, H3, false);
	uint64_t g[3] = {F.ports[H1].guid, F.ports[H2].guid, F.ports[S1p0].guid};
	for (int i = 0; i < 3; i++) /* in order */
		for (int j = i + 1; j < 3; j++)
			if (g[j] < g[i]) {
				uint64_t x = g[i];
				g[i] = g[j];
				g[j] = x;
			}
	char want[256];
	snprintf(want, sizeof(want), "0xc001 0x%016llx 0x%016llx 0x%016llx\n0xc003\n0xc005\n",
	         (unsigned long long)g[0], (unsigned long long)g[1], (unsigned long long)g[2]);
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	verify_print_mcast(&F, o);
	fclose(o);
	ck_assert_str_eq(buf, want);
	free(buf);
	/* a switch out of the fabric delivers nothing */
	fabric_remove_node(&F, fabric_find_node(&F, "S2"));
	o = open_memstream(&buf, &len);
	verify_print_mcast(&F, o);
	fclose(o);
	uint64_t a = F.ports[H1].guid, b = F.ports[S1p0].guid;
	snprintf(want, sizeof(want), "0xc001 0x%016llx 0x%016llx\n0xc003\n0xc005\n",
	         (unsigned long long)(a < b ? a : b), (unsigned long long)(a < b ? b : a));
	ck_assert_str_eq(buf, want);
	free(buf);
}
END_TEST

START_TEST(verify_finds_a_credit_loop)
{
	/* a ring of three switches, each with a host; every switch sends the host two hops
	 * away the long way round: S->next->next, all clockwise: a cyclic dependency */
	static const char ring[] = "Switch 4 \"A\"\n[1] \"B\"[2]\n[2] \"C\"[1]\n[3] \"HA\"[1]\n"
	                           "Switch 4 \"B\"\n[1] \"C\"[2]\n[3] \"HB\"[1]\n"
	                           "Switch 4 \"C\"\n[3] \"HC\"[1]\n"
	                           "Ca 1 \"HA\"\nCa 1 \"HB\"\nCa 1 \"HC\"\n";
	fabric_free(&F);
	fabric_init(&F);
	struct fs_error err;
	ck_assert_msg(netfile_parse(&F, "ring", ring, &err) == 0, "%s", err.msg);
	all_active();
	const char *sw[3] = {"A", "B", "C"}, *host[3] = {"HA", "HB", "HC"};
	for (int i = 0; i < 3; i++) {
		give_lid(fabric_port(&F, fabric_find_node(&F, sw[i]), 0), (uint16_t)(1 + i));
		give_lid(fabric_port(&F, fabric_find_node(&F, host[i]), 1), (uint16_t)(10 + i));
	}
	/* clockwise A->B->C->A: A port 1 to B, B port 1 to C, C port 1 to A */
	for (int s = 0; s < 3; s++) {
		for (int h = 0; h < 3; h++) {
			program(sw[s], (uint16_t)(10 + h), h == s ? 3 : 1);
			program(sw[s], (uint16_t)(1 + h), h == s ? 0 : 1);
		}
	}
	struct verify_report r;
	verify_run(&F, NULL, &r);
	ck_assert_uint_eq(r.pairs_unreached, 0);
	ck_assert_uint_eq(r.hops_max, 4); /* HA -> A -> B -> C -> HC */
	ck_assert(r.credit_loop);
	ck_assert_ptr_nonnull(strstr(r.cycle, "VL0"));
	verify_report_free(&r);
	/* the same routes split over two VLs by SL2VL at one switch break the cycle */
	struct fs_switch *b = &F.sws[F.nodes[fabric_find_node(&F, "B")].sw];
	unsigned np = 5;
	b->sl2vl = calloc((size_t)np * np, 8);
	/* B: from A (in port 2) on to C (out port 1), SL0 -> VL1 */
	b->sl2vl[((size_t)2 * np + 1) * 8] = 0x10;
	/* ... but the B-C link runs VL0 only (OperVLs 1): SL0 would be dropped there */
	uint32_t b1 = fabric_port(&F, fabric_find_node(&F, "B"), 1);
	uint32_t c2 = fabric_port(&F, fabric_find_node(&F, "C"), 2);
	F.ports[b1].pi.oper_vls = F.ports[c2].pi.oper_vls = 1;
	verify_run(&F, NULL, &r);
	ck_assert(!r.credit_loop);
	ck_assert_uint_eq(r.vl_unrun, 1);
	ck_assert(!r.ok);
	ck_assert_ptr_nonnull(strstr(r.issues[0], "\"B\" port 1 on VL 1"));
	verify_report_free(&r);
	/* with VL0-1 on that link the fabric passes */
	F.ports[b1].pi.oper_vls = F.ports[c2].pi.oper_vls = 2;
	verify_run(&F, NULL, &r);
	ck_assert(!r.credit_loop);
	ck_assert_uint_eq(r.vl_unrun, 0);
	ck_assert(r.ok);
	verify_report_free(&r);
}
END_TEST

/* Alternate paths at LMC 1 on six switches: links A-B, A-C, B-C, B-D, C-D, B-F, F-D and
 * the bridge D-E; hosts HA on A, HD on D, HE on E. Each case unplugs the host it leaves
 * out, so that its figures are the whole fabric's. */
static const char apm_net[] = "Switch 8 \"A\"\n[1] \"B\"[1]\n[2] \"C\"[1]\n[8] \"HA\"[1]\n"
                              "Switch 8 \"B\"\n[2] \"D\"[1]\n[3] \"C\"[3]\n[4] \"F\"[1]\n"
                              "Switch 8 \"C\"\n[2] \"D\"[2]\n"
                              "Switch 8 \"D\"\n[3] \"E\"[1]\n[4] \"F\"[2]\n[8] \"HD\"[1]\n"
                              "Switch 8 \"E\"\n[8] \"HE\"[1]\n"
                              "Switch 8 \"F\"\n"
                              "Ca 1 \"HA\"\nCa 1 \"HD\"\nCa 1 \"HE\"\n";

static uint32_t apm_host(const char *name, uint16_t lid)
{
	uint32_t p = fabric_port(&F, fabric_find_node(&F, name), 1);
	F.ports[p].pi.lid = lid;
	F.ports[p].pi.lmc = 1;
	return p;
}

/* Routes to LID lid along the switches named, each "switch:port" */
static void apm_route(uint16_t lid, const char *hops)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", hops);
	for (char *save, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char sw[8];
		unsigned port;
		ck_assert_int_eq(sscanf(t, "%7[^:]:%u", sw, &port), 2);
		program(sw, lid, (uint8_t)port);
	}
}

START_TEST(verify_alternate_paths)
{
	fabric_free(&F);
	fabric_init(&F);
	struct fs_error err;
	ck_assert_msg(netfile_parse(&F, "apm", apm_net, &err) == 0, "%s", err.msg);
	all_active();
	uint32_t ha = apm_host("HA", 4), hd = apm_host("HD", 8), he = apm_host("HE", 12);
	/* to HA (4, 5): from D by B and by C; from E through D */
	apm_route(4, "A:8 B:1 C:1 D:1 E:1 F:1");
	apm_route(5, "A:8 B:1 C:1 D:2 E:1 F:1");
	/* to HD (8, 9): from A by B and by C */
	apm_route(8, "A:1 B:2 C:2 D:8 E:1 F:2");
	apm_route(9, "A:2 B:2 C:2 D:8 E:1 F:2");
	/* to HE (12, 13): from A by B and by C, then both over the bridge D-E */
	apm_route(12, "A:1 B:2 C:2 D:3 E:8 F:2");
	apm_route(13, "A:2 B:2 C:2 D:3 E:8 F:2");
	struct verify_report r;

	/* two parallel paths, A-B-D and A-C-D, both ways: every pair has a switch-disjoint
	 * alternate */
	F.ports[he].unplugged = true;
	verify_run(&F, NULL, &r);
	ck_assert_msg(r.pairs_unreached == 0, "%s", r.nissues ? r.issues[0] : "");
	ck_assert(r.apm_checked);
	ck_assert_uint_eq(r.apm_lmc, 1);
	ck_assert_uint_eq(r.apm_pairs, 2);
	ck_assert_uint_eq(r.apm_link_disjoint, 2);
	ck_assert_uint_eq(r.apm_switch_disjoint, 2);
	ck_assert_uint_eq(r.apm_possible, 2); /* A and D: no bridge between them */
	ck_assert_uint_eq(r.apm_possible_link_disjoint, 2);
	ck_assert_double_eq_tol(r.apm_routes_mean, 2.0, 1e-9);
	ck_assert_uint_eq(r.apm_spof_pairs, 0);
	ck_assert_str_eq(r.apm_example, "");
	verify_report_free(&r);

	/* HA and HE: two routes each way, but both over the bridge D-E: no alternate */
	F.ports[he].unplugged = false;
	F.ports[hd].unplugged = true;
	verify_run(&F, NULL, &r);
	ck_assert_uint_eq(r.apm_pairs, 2);
	ck_assert_uint_eq(r.apm_link_disjoint, 0);
	ck_assert_uint_eq(r.apm_switch_disjoint, 0);
	ck_assert_uint_eq(r.apm_possible, 0); /* the bridge parts every pair */
	ck_assert_uint_eq(r.apm_possible_link_disjoint, 0);
	ck_assert_double_eq_tol(r.apm_routes_mean, 2.0, 1e-9);
	ck_assert_uint_eq(r.apm_spof_pairs, 2);
	ck_assert_str_eq(r.apm_spof_link, "\"D\"/3 - \"E\"/1");
	ck_assert_ptr_nonnull(strstr(r.apm_example, "none link-disjoint"));
	verify_report_free(&r);

	/* HA to LID 9 the long way, A-C-B-F-D: no link in common with A-B-D, but switch B */
	F.ports[hd].unplugged = false;
	F.ports[he].unplugged = true;
	apm_route(9, "A:2 C:3 B:4 F:2");
	verify_run(&F, NULL, &r);
	ck_assert_uint_eq(r.pairs_unreached, 0);
	ck_assert_uint_eq(r.apm_pairs, 2);
	ck_assert_uint_eq(r.apm_link_disjoint, 2);
	ck_assert_uint_eq(r.apm_switch_disjoint, 1); /* HD to HA still by B and by C */
	/* the long way is an alternate's: the primary routes' figures leave it out */
	ck_assert_uint_ge(r.pairs_nonminimal, 1);
	ck_assert_uint_eq(r.base_pairs, 14); /* every endpoint, switches too, to HA and HD */
	ck_assert_uint_eq(r.base_nonminimal, 0);
	verify_report_free(&r);

	/* both LIDs of HD the same way from A: one route, the pair named */
	apm_route(9, "A:1 B:2");
	verify_run(&F, NULL, &r);
	ck_assert_uint_eq(r.apm_link_disjoint, 1);
	ck_assert_double_eq_tol(r.apm_routes_mean, 1.5, 1e-9);
	ck_assert_uint_eq(r.apm_possible_link_disjoint, 1);
	ck_assert_uint_eq(r.apm_spof_pairs, 1); /* A-B and B-D, on HA to HD's one route */
	ck_assert_str_eq(r.apm_example, "\"HA\" -> \"HD\" (LID 8): 1 route(s), none link-disjoint");
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	verify_print_json(&r, o);
	fclose(o);
	ck_assert_ptr_nonnull(strstr(buf, "\"apm\":{\"checked\":true,\"lmc\":1,\"pairs\":2,"
	                                  "\"link_disjoint\":1,\"switch_disjoint\":1,"));
	ck_assert_ptr_nonnull(strstr(buf, "\"possible\":2,\"possible_link_disjoint_pct\":50.00,"));
	free(buf);
	verify_report_free(&r);

	/* without LMC nothing is measured */
	F.ports[ha].pi.lmc = F.ports[hd].pi.lmc = F.ports[he].pi.lmc = 0;
	verify_run(&F, NULL, &r);
	ck_assert(!r.apm_checked);
	verify_report_free(&r);
}
END_TEST

/* Two cables between the same two switches are two links: no bridge, and an alternate
 * over the other cable is apart. A third switch hangs off B by one cable (a bridge). */
static const char apm_parallel_net[] = "Switch 8 \"A\"\n[1] \"B\"[1]\n[2] \"B\"[2]\n[8] \"HA\"[1]\n"
                                       "Switch 8 \"B\"\n[3] \"C\"[1]\n[8] \"HB\"[1]\n"
                                       "Switch 8 \"C\"\n[8] \"HC\"[1]\n"
                                       "Ca 1 \"HA\"\nCa 1 \"HB\"\nCa 1 \"HC\"\n";

START_TEST(verify_alternate_paths_parallel_cables)
{
	fabric_free(&F);
	fabric_init(&F);
	struct fs_error err;
	ck_assert_msg(netfile_parse(&F, "apm-parallel", apm_parallel_net, &err) == 0, "%s",
	              err.msg);
	all_active();
	apm_host("HA", 4);
	apm_host("HB", 8);
	apm_host("HC", 12);
	/* to HA: from B over either cable; to HB: from A over either; to HC over B-C */
	apm_route(4, "A:8 B:1 C:1");
	apm_route(5, "A:8 B:2 C:1");
	apm_route(8, "A:1 B:8 C:1");
	apm_route(9, "A:2 B:8 C:1");
	apm_route(12, "A:1 B:3 C:8");
	apm_route(13, "A:2 B:3 C:8");
	struct verify_report r;
	verify_run(&F, NULL, &r);
	ck_assert_msg(r.pairs_unreached == 0, "%s", r.nissues ? r.issues[0] : "");
	ck_assert_uint_eq(r.apm_pairs, 6);
	/* A-B both ways apart over the two cables; the four pairs with C cross the bridge */
	ck_assert_uint_eq(r.apm_link_disjoint, 2);
	ck_assert_uint_eq(r.apm_possible, 2);
	ck_assert_uint_eq(r.apm_possible_link_disjoint, 2);
	verify_report_free(&r);
}
END_TEST

/* ---- building fabrics ---- */

/* ---- virtual ports (Annex A18) ---- */

#define TO_H2 "0,1,2,2"

static unsigned vport_traps;
static void count_vport_trap(struct fabric *f, uint32_t port, void *ctx)
{
	(void)f;
	(void)ctx;
	ck_assert_uint_eq(port, H2);
	vport_traps++;
}

static int vport_set(uint16_t attr, uint32_t mod, const void *val)
{
	uint8_t m[256];
	dr_smp(m, MAD_METHOD_SET, attr, mod, TO_H2);
	if (attr == MAD_ATTR_VIRT_INFO)
		mad_virt_info_encode(val, m + 64, 64, NULL);
	else if (attr == MAD_ATTR_VPORT_INFO)
		mad_vport_info_encode(val, m + 64, 64, NULL);
	else
		mad_pkey_table_encode(val, m + 64, 64, NULL);
	return dr_call(H1, m, NULL);
}

static struct mad_virt_info virt_info(void)
{
	uint8_t m[256];
	struct mad_virt_info vi;
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_VIRT_INFO, 0, TO_H2);
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	mad_virt_info_decode(m + 64, 64, &vi, NULL);
	return vi;
}

static struct mad_vport_info vport_info(unsigned index)
{
	uint8_t m[256];
	struct mad_vport_info vp;
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_VPORT_INFO, mad_vport_am(index), TO_H2);
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	mad_vport_info_decode(m + 64, 64, &vp, NULL);
	return vp;
}

static uint8_t vport_state_of(unsigned index)
{
	uint8_t m[256];
	struct mad_vport_state vs;
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_VPORT_STATE, index / MAD_VPORT_STATE_BLOCK, TO_H2);
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	mad_vport_state_decode(m + 64, 64, &vs, NULL);
	return vs.state[index % MAD_VPORT_STATE_BLOCK];
}

static unsigned desc_changes;
static void count_desc_change(struct fabric *f, uint32_t node, void *ctx)
{
	(void)f;
	(void)node;
	(void)ctx;
	desc_changes++;
}

/* Trap 144 of a port whose node took a new NodeDescription: the model tells the server
 * (which sends it from each port with IsOtherLocalChangesNoticeSupported, as a CA port
 * advertises), and the Notice carries OtherLocalChanges and NodeDescriptionChange where
 * IBA 14.2.5.1 puts them (byte 5 bit 0; bytes 10-11), the LID and CapabilityMask too. */
START_TEST(node_desc_change_trap)
{
	F.on_desc_change = count_desc_change;
	desc_changes = 0;
	uint32_t n = F.ports[H2].node;
	fabric_set_desc(&F, n, "renamed host");
	ck_assert_uint_eq(desc_changes, 1);
	ck_assert_str_eq(F.nodes[n].desc, "renamed host");
	ck_assert(F.ports[H2].pi.capability_mask & PORT_CAP_IS_OTHER_LOCAL_CHANGES_NOTICE);
	for (int flagged = 0; flagged < 2; flagged++) {
		F.ports[H2].trap144_flags = flagged ? TRAP144_NODE_DESC_CHANGE : 0;
		uint8_t m[256];
		sma_build_trap(&F, H2, 144, 5, m);
		struct mad_smp smp;
		ck_assert_int_eq(mad_smp_decode(m, sizeof(m), &smp, NULL), 0);
		uint8_t buf[80] = {0};
		memcpy(buf, smp.data, sizeof(smp.data));
		struct mad_notice no;
		mad_notice_decode(buf, sizeof(buf), &no, NULL);
		ck_assert_uint_eq(no.trap_number, 144);
		const uint8_t *d = no.data_details;
		ck_assert_uint_eq(d[2] << 8 | d[3], F.ports[H2].pi.lid);
		ck_assert_uint_eq(d[5], flagged ? 1 : 0);
		ck_assert_uint_eq(d[10] << 8 | d[11], flagged ? 1 : 0);
		uint32_t cap = (uint32_t)d[6] << 24 | (uint32_t)d[7] << 16 | d[8] << 8 | d[9];
		ck_assert_uint_eq(cap, F.ports[H2].pi.capability_mask);
		struct mad_trap144 t;
		mad_trap144_decode(d, sizeof(no.data_details), &t, NULL);
		ck_assert_uint_eq(t.other_local_changes, flagged ? 1 : 0);
		ck_assert_uint_eq(t.change_flags, flagged ? TRAP144_NODE_DESC_CHANGE : 0);
		ck_assert_uint_eq(t.capability_mask, cap);
	}
	F.ports[H2].trap144_flags = 0;
	F.on_desc_change = NULL;
}
END_TEST

START_TEST(vports_follow_the_rules)
{
	uint8_t m[256];
	char why[128];
	F.on_vport_change = count_vport_trap;
	vport_traps = 0;
	/* without SR-IOV the attributes are unsupported, and PortInfo says so */
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_VIRT_INFO, 0, TO_H2);
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_UNSUP_METHOD_ATTR);
	ck_assert_int_eq(fabric_vport_add(&F, H2, 1, 0, false, why, sizeof(why)), -1);
	ck_assert_int_eq(fabric_virt_cap(&F, S1p0, 8), -1);
	ck_assert_int_eq(fabric_virt_cap(&F, H2, 8), 0);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_PORT_INFO, 1, TO_H2);
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	struct mad_port_info pi;
	mad_port_info_decode(m + 64, 64, &pi, NULL);
	ck_assert(pi.capability_mask2 & MAD_CAP2_VIRT_SUPPORTED);

	/* off: vport 0 is the physical port, a VF reads Down and takes no Set; no trap */
	ck_assert_int_eq(
	    fabric_vport_add(&F, H2, 1, 0x0002c903000a0001ull, false, why, sizeof(why)), 0);
	ck_assert_int_eq(fabric_vport_add(&F, H2, 1, 0, false, why, sizeof(why)), -1);
	ck_assert_int_eq(fabric_vport_add(&F, H2, 0, 0, false, why, sizeof(why)), -1);
	ck_assert_int_eq(fabric_vport_add(&F, H2, 8, 0, false, why, sizeof(why)), -1);
	ck_assert_int_eq(
	    fabric_vport_add(&F, H2, 2, 0x0002c903000a0001ull, false, why, sizeof(why)), -1);
	ck_assert_uint_eq(vport_traps, 0);
	ck_assert_uint_eq(vport_state_of(0), F.ports[H2].pi.port_state);
	ck_assert_uint_eq(vport_state_of(1), PORT_STATE_DOWN);
	struct mad_vport_info vp = {.state = PORT_STATE_ACTIVE};
	ck_assert_int_eq(vport_set(MAD_ATTR_VPORT_INFO, 1, &vp), MAD_STATUS_INVALID_FIELD);
	struct mad_virt_info vi = virt_info();
	ck_assert_uint_eq(vi.vport_cap, 8);
	ck_assert_uint_eq(vi.enable, 0);
	ck_assert_uint_eq(vi.vport_state_change, 1);

	/* enabled: VPortStateChange cleared by writing 1; the PF and the VF in Init */
	vi.enable = 1;
	ck_assert_int_eq(vport_set(MAD_ATTR_VIRT_INFO, 0, &vi), 0);
	vi = virt_info();
	ck_assert_uint_eq(vi.enable, 1);
	ck_assert_uint_eq(vi.vport_state_change, 0);
	ck_assert_uint_eq(vi.vport_index_top, 1);
	ck_assert_uint_eq(vport_state_of(0), PORT_STATE_INIT);
	vp = vport_info(1);
	ck_assert_uint_eq(vp.state, PORT_STATE_INIT);
	ck_assert_uint_eq(vp.port_guid, 0x0002c903000a0001ull);
	ck_assert_uint_eq(vport_info(0).port_guid, F.ports[H2].guid);

	/* Active only while the physical port is; Down is not the SM's to set */
	vp = (struct mad_vport_info){.state = PORT_STATE_ACTIVE};
	ck_assert_int_eq(vport_set(MAD_ATTR_VPORT_INFO, 1, &vp), MAD_STATUS_INVALID_FIELD);
	ck_assert_uint_eq(vport_info(1).state, PORT_STATE_INIT);
	all_active();
	ck_assert_int_eq(vport_set(MAD_ATTR_VPORT_INFO, 1, &vp), 0);
	ck_assert_uint_eq(vport_state_of(1), PORT_STATE_ACTIVE);
	vp.state = PORT_STATE_DOWN;
	ck_assert_int_eq(vport_set(MAD_ATTR_VPORT_INFO, 1, &vp), MAD_STATUS_INVALID_FIELD);
	ck_assert_uint_eq(vport_state_of(1), PORT_STATE_ACTIVE);

	/* a VF that asks for a LID gets the SM's; the others use the port's */
	give_lid(H2, 20);
	ck_assert_int_eq(fabric_vport_add(&F, H2, 2, 0, true, why, sizeof(why)), 0);
	ck_assert_uint_eq(vport_traps, 1);
	ck_assert_uint_eq(virt_info().vport_state_change, 1);
	ck_assert_uint_eq(vport_info(2).lid_required, 1);
	vp = (struct mad_vport_info){.lid = 40};
	ck_assert_int_eq(vport_set(MAD_ATTR_VPORT_INFO, 2, &vp), 0);
	ck_assert_uint_eq(fabric_vport_lid(&F, H2, 2), 40);
	ck_assert_uint_eq(fabric_port_by_lid(&F, 40), H2);
	ck_assert_uint_eq(fabric_vport_lid(&F, H2, 1), 20);
	vp.lid = 0xc000;
	ck_assert_int_eq(vport_set(MAD_ATTR_VPORT_INFO, 2, &vp), MAD_STATUS_INVALID_FIELD);
	ck_assert_uint_eq(fabric_vport_lid(&F, H2, 2), 40);

	/* P_Key tables: a VF's own, the PF's is the port's; bounded by VPartitionCap */
	struct mad_pkey_table pk = {.pkey = {0xffff, 0x8001}};
	ck_assert_int_eq(vport_set(MAD_ATTR_VPORT_PKEY_TABLE, mad_vport_block_am(1, 0), &pk), 0);
	ck_assert_uint_eq(F.ports[H2].vports[1].pkeys[1], 0x8001);
	ck_assert_uint_eq(F.ports[H2].pkeys[1], 0);
	ck_assert_int_eq(vport_set(MAD_ATTR_VPORT_PKEY_TABLE, mad_vport_block_am(1, 2), &pk),
	                 MAD_STATUS_INVALID_FIELD);
	ck_assert_int_eq(vport_set(MAD_ATTR_VPORT_PKEY_TABLE, mad_vport_block_am(3, 0), &pk),
	                 MAD_STATUS_INVALID_FIELD);
	ck_assert_int_eq(vport_set(MAD_ATTR_VPORT_PKEY_TABLE, mad_vport_block_am(0, 0), &pk), 0);
	ck_assert_uint_eq(F.ports[H2].pkeys[1], 0x8001);

	/* read-only attributes */
	dr_smp(m, MAD_METHOD_SET, MAD_ATTR_VPORT_STATE, 0, TO_H2);
	ck_assert_int_eq(dr_call(H1, m, NULL), MAD_STATUS_UNSUP_METHOD_ATTR);
	dr_smp(m, MAD_METHOD_GET, MAD_ATTR_VNODE_INFO, 1, TO_H2);
	ck_assert_int_eq(dr_call(H1, m, NULL), 0);
	struct mad_vnode_info vn;
	mad_vnode_info_decode(m + 64, 64, &vn, NULL);
	ck_assert_uint_eq(vn.partition_cap, FS_VPORT_PKEYS);
	ck_assert_uint_eq(vn.local_port_num, 1);

	/* the physical link going down takes the VFs back to Init */
	fabric_set_link(&F, H2, false);
	fabric_set_link(&F, H2, true);
	all_active();
	ck_assert_uint_eq(vport_info(1).state, PORT_STATE_INIT);
	ck_assert_uint_eq(virt_info().vport_state_change, 1);

	/* a VF going: Down, its LID free, a trap */
	ck_assert_int_eq(fabric_vport_remove(&F, H2, 2, why, sizeof(why)), 0);
	ck_assert_int_eq(fabric_vport_remove(&F, H2, 2, why, sizeof(why)), -1);
	ck_assert_uint_eq(vport_traps, 2);
	ck_assert_uint_eq(vport_state_of(2), PORT_STATE_DOWN);
	ck_assert_uint_eq(fabric_port_by_lid(&F, 40), FS_NONE);
	F.on_vport_change = NULL;
}
END_TEST

START_TEST(verify_vports)
{
	char why[128];
	struct verify_report r;
	lids_and_routes();
	fabric_virt_cap(&F, H2, 4);
	ck_assert_int_eq(fabric_vport_add(&F, H2, 1, 0, true, why, sizeof(why)), 0);
	/* virtualization left off: the VF does not work */
	verify_run(&F, NULL, &r);
	ck_assert(!r.ok);
	ck_assert_ptr_nonnull(strstr(r.issues[0], "virtualization not enabled"));
	verify_report_free(&r);
	/* on, and up, but its LID not given */
	F.ports[H2].virt_enable = true;
	F.ports[H2].vports[0].state = PORT_STATE_ACTIVE;
	F.ports[H2].vports[1].state = PORT_STATE_ACTIVE;
	verify_run(&F, NULL, &r);
	ck_assert(!r.ok);
	ck_assert_uint_eq(r.vports, 2);
	ck_assert_uint_eq(r.vports_active, 2);
	ck_assert_ptr_nonnull(strstr(r.issues[0], "not given"));
	verify_report_free(&r);
	/* a LID that one switch does not route */
	F.ports[H2].vports[1].lid = 21;
	F.lid_port[21] = H2;
	program("S2", 21, 2);
	verify_run(&F, NULL, &r);
	ck_assert(!r.ok);
	ck_assert_uint_eq(r.vport_lids_unreached, 1);
	ck_assert_ptr_nonnull(strstr(r.issues[0], "from \"S1\""));
	verify_report_free(&r);
	program("S1", 21, 2);
	verify_run(&F, NULL, &r);
	ck_assert_msg(r.ok, "%s", r.nissues ? r.issues[0] : "");
	ck_assert_uint_eq(r.vport_lids, 1);
	verify_report_free(&r);
}
END_TEST

START_TEST(netfile_errors_name_file_and_line)
{
	static const struct {
		const char *text, *expect;
	} bad[] = {
	    {"Switch 4 \"A\"\n[1] \"B\"[1]\n", "t.net:2: link to unknown node \"B\""},
	    {"Switch 4 \"A\"\n[5] \"A\"[1]\n", "t.net:2: port 5 does not exist"},
	    {"Switch 4 \"A\"\n[1] \"B\"[1]\n[2] \"B\"[1]\nCa 1 \"B\"\n", "already cabled"},
	    {"Switch 4 \"A\"\n[1] \"A\"[2] w=40\n", "t.net:2: bad w= value"},
	    {"Router 4 \"A\"\n", "t.net:1: expected Switch"},
	    {"Switch 4 \"A\"\nSwitch 4 \"A\"\n", "t.net:2: node \"A\" defined twice"},
	    {"frobnicate=1\n", "t.net:1: unknown setting"},
	    {"[1] \"A\"[1]\n", "t.net:1: port line before"},
	    {"Switch 0 \"A\"\n", "t.net:1: bad port count"},
	    {"\n# nothing\n", "no nodes"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fabric f;
		struct fs_error err = {""};
		fabric_init(&f);
		ck_assert_int_eq(netfile_parse(&f, "t.net", bad[i].text, &err), -1);
		ck_assert_msg(strstr(err.msg, bad[i].expect), "case %zu: \"%s\"", i, err.msg);
		fabric_free(&f);
	}
}
END_TEST

/* f written as a net file and read back into g */
static void written_and_read_back(const struct fabric *f, struct fabric *g)
{
	struct fs_error err;
	char path[] = "/tmp/fabricsim-netfile-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_msg(netfile_write(f, path, &err) == 0, "%s", err.msg);
	fabric_init(g);
	ck_assert_msg(netfile_load(g, path, &err) == 0, "%s", err.msg);
	unlink(path);
}

START_TEST(ibnetdiscover_format)
{
	static const char dump[] =
	    "vendid=0x2c9\ndevid=0xb924\nsysimgguid=0x2c90000000001\n"
	    "switchguid=0x2c90000000001(2c90000000001)\n"
	    "Switch\t24 \"S-0002c90000000001\"\t\t# \"ISR9024 Voltaire\" enhanced port 0 lid 1 lmc "
	    "0\n"
	    "[1]\t\"H-0002c90000000002\"[1](2c90000000003) \t\t# \"host a\" lid 3 4xDDR\n"
	    "\n"
	    "vendid=0x2c9\ndevid=0x6282\ncaguid=0x2c90000000002\n"
	    "Ca\t2 \"H-0002c90000000002\"\t\t# \"host a\"\n"
	    "[1](2c90000000003) \t\"S-0002c90000000001\"[1]\t\t# lid 3 lmc 0 \"ISR9024 Voltaire\" "
	    "lid 1 4xDDR\n";
	struct fabric f;
	struct fs_error err;
	fabric_init(&f);
	ck_assert_msg(netfile_parse(&f, "d", dump, &err) == 0, "%s", err.msg);
	uint32_t h = fabric_find_node(&f, "H-0002c90000000002");
	ck_assert_uint_eq(f.nodes[h].guid, 0x2c90000000002ull);
	ck_assert_str_eq(f.nodes[h].desc, "host a");
	uint32_t p = fabric_port(&f, h, 1);
	ck_assert_uint_eq(f.ports[p].guid, 0x2c90000000003ull);
	ck_assert_uint_eq(f.ports[p].pi.link_speed_active, 2); /* DDR */
	ck_assert_uint_eq(f.ports[p].pi.link_width_active, 2); /* 4x */
	uint32_t sw = fabric_find_node(&f, "S-0002c90000000001");
	ck_assert_uint_eq(f.nodes[sw].vendor_id, 0x2c9);
	/* "enhanced port 0" in the comment: SwitchInfo says so, and a written file keeps it */
	ck_assert_uint_eq(f.sws[f.nodes[sw].sw].si.enhanced_port0, 1);
	struct fabric g;
	written_and_read_back(&f, &g);
	uint32_t sw2 = fabric_find_node(&g, "S-0002c90000000001");
	ck_assert_uint_eq(g.sws[g.nodes[sw2].sw].si.enhanced_port0, 1);
	fabric_free(&g);
	fabric_free(&f);
}
END_TEST

/* Mixed ends, a 2x split port, a cable that trains low, XDR, and what an SM without
 * SMSupportExtendedSpeeds sees */
START_TEST(netfile_link_speeds)
{
	static const char speeds[] = "Switch 4 \"sw\"\n"
	                             "[1] \"a\"[1] # 4xNDR\n"
	                             "[2] \"b\"[1] train=4xEDR # 4xHDR\n"
	                             "[3] \"c\"[1] # 4xXDR\n"
	                             "Ca 1 \"a\"\n[1] \"sw\"[1] # 2xNDR\n"
	                             "Ca 1 \"b\"\n[1] \"sw\"[2] # 4xHDR\n"
	                             "Ca 1 \"c\"\n[1] \"sw\"[3] # 4xXDR\n";
	struct fabric f;
	struct fs_error err;
	fabric_init(&f);
	ck_assert_msg(netfile_parse(&f, "n", speeds, &err) == 0, "%s", err.msg);
	uint32_t a = fabric_port(&f, fabric_find_node(&f, "a"), 1);
	uint32_t b = fabric_port(&f, fabric_find_node(&f, "b"), 1);
	uint32_t c = fabric_port(&f, fabric_find_node(&f, "c"), 1);
	/* the split host: 2x at NDR, on both ends */
	ck_assert_uint_eq(f.ports[a].pi.link_width_active, LINK_WIDTH_2X);
	ck_assert_uint_eq(mad_link_speed_active(&f.ports[a].pi), LINK_NDR);
	ck_assert_uint_eq(mad_link_speed_active(&f.ports[f.ports[a].peer].pi), LINK_NDR);
	ck_assert(f.ports[a].pi.capability_mask2 & PORT_CAP2_WIDTH_2X);
	/* the cable: EDR where both ends run HDR */
	ck_assert_uint_eq(mad_link_speed_active(&f.ports[b].pi), LINK_EDR);
	uint8_t w;
	unsigned sp;
	fabric_link_best(&f, b, &w, &sp);
	ck_assert_uint_eq(w, LINK_WIDTH_4X);
	ck_assert_uint_eq(sp, LINK_HDR);
	ck_assert_uint_eq(mad_link_rate(&f.ports[b].pi), 16); /* 100 Gb/s */
	/* XDR in its own fields */
	ck_assert_uint_eq(f.ports[c].pi.link_speed_ext_active2, 1);
	ck_assert_uint_eq(mad_link_rate(&f.ports[c].pi), 23); /* 800 Gb/s */
	/* the switch advertises extended speeds on port 0, where a switch's capabilities are */
	uint32_t sw0 = fabric_port(&f, fabric_find_node(&f, "sw"), 0);
	ck_assert(f.ports[sw0].pi.capability_mask & PORT_CAP_HAS_EXT_SPEEDS);
	/* without bit 31 an SM sees no NDR or XDR */
	uint8_t raw[64];
	struct mad_port_info pi;
	sma_port_info_raw(&f, a, a, false, raw);
	mad_port_info_decode(raw, 64, &pi, NULL);
	ck_assert_uint_eq(pi.link_speed_ext_active, 0);
	ck_assert_uint_eq(pi.link_speed_ext_supported, 7);
	sma_port_info_raw(&f, c, c, false, raw);
	mad_port_info_decode(raw, 64, &pi, NULL);
	ck_assert_uint_eq(pi.link_speed_ext_active2, 0);
	ck_assert_uint_eq(mad_link_speed_active(&pi), LINK_QDR);
	sma_port_info_raw(&f, a, a, true, raw);
	mad_port_info_decode(raw, 64, &pi, NULL);
	ck_assert_uint_eq(mad_link_speed_active(&pi), LINK_NDR);
	/* written out and read back, the same links */
	struct fabric g;
	written_and_read_back(&f, &g);
	for (uint32_t p = 0; p < f.nports; p++) {
		ck_assert_uint_eq(g.ports[p].pi.link_width_active, f.ports[p].pi.link_width_active);
		ck_assert_uint_eq(mad_link_speed_active(&g.ports[p].pi),
		                  mad_link_speed_active(&f.ports[p].pi));
	}
	fabric_free(&g);
	fabric_free(&f);
}
END_TEST

static unsigned count(const struct fabric *f, uint8_t type)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < f->nnodes; i++)
		n += f->nodes[i].type == type && f->nodes[i].present;
	return n;
}

START_TEST(generators)
{
	static const struct {
		const char *spec;
		unsigned hosts, switches;
	} g[] = {
	    {"fattree:radix=8,levels=2", 32, 12},
	    {"fattree:radix=36,levels=2", 648, 54},
	    {"fattree:radix=8,levels=3", 128, 80},
	    {"fattree:radix=36,levels=3,hosts=5184", 5184, 16 * 36 + 18 * 18},
	    {"fattree:radix=8,levels=2,hca-ports=2", 16, 12},
	    {"torus:dims=4x4x4,hosts=2", 128, 64},
	    {"mesh:dims=3x5,hosts=1", 15, 15},
	    {"dragonfly:groups=5,routers=4,hosts=2,global=1", 40, 20},
	    {"random:switches=20,radix=12,hosts=60,seed=9", 60, 20},
	};
	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		struct fabric f;
		struct fs_error err;
		fabric_init(&f);
		ck_assert_msg(generate(&f, g[i].spec, &err) == 0, "%s: %s", g[i].spec, err.msg);
		ck_assert_msg(count(&f, NODE_TYPE_CA) == g[i].hosts, "%s: %u hosts", g[i].spec,
		              count(&f, NODE_TYPE_CA));
		ck_assert_msg(count(&f, NODE_TYPE_SWITCH) == g[i].switches, "%s: %u switches",
		              g[i].spec, count(&f, NODE_TYPE_SWITCH));
		/* every host is cabled, links are symmetric, GUIDs unique */
		for (uint32_t p = 0; p < f.nports; p++) {
			if (f.ports[p].peer != FS_NONE)
				ck_assert_uint_eq(f.ports[f.ports[p].peer].peer, p);
			if (!fs_is_switch(&f, f.ports[p].node) && f.ports[p].num == 1)
				ck_assert_uint_ne(f.ports[p].peer, FS_NONE);
		}
		ck_assert_uint_eq(f.by_node_guid.used, f.nnodes);
		fabric_free(&f);
	}
	/* the same spec gives the same fabric */
	struct fabric a, b;
	struct fs_error err;
	fabric_init(&a);
	fabric_init(&b);
	generate(&a, "random:switches=30,radix=10,hosts=50,seed=4", &err);
	generate(&b, "random:switches=30,radix=10,hosts=50,seed=4", &err);
	ck_assert_uint_eq(a.nports, b.nports);
	for (uint32_t p = 0; p < a.nports; p++)
		ck_assert_uint_eq(a.ports[p].peer, b.ports[p].peer);
	fabric_free(&a);
	fabric_free(&b);
	/* a broken spec says what is wrong */
	fabric_init(&a);
	ck_assert_int_eq(generate(&a, "fattree:radix=7", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "even"));
	ck_assert_int_eq(generate(&a, "cube:radix=3", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown generator"));
	ck_assert_int_eq(generate(&a, "fattree:radix=8,hosts=1000", &err), -1);
	/* a few bytes asking for a million nodes (fuzz_netfile: 2.3 GB, out of memory) are
	 * refused before anything is made */
	const char *huge[] = {
	    "torus:dims=61x33x8,hosts=62", "fattree:radix=254,levels=3,hosts=1000000",
	    "mesh:dims=64x64x64,hosts=1", "random:switches=1000000,radix=8,hosts=1",
	    "dragonfly:groups=1000,routers=64,global=16,hosts=8"};
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		ck_assert_msg(generate(&a, huge[i], &err) == -1, "%s made", huge[i]);
		ck_assert_msg(strstr(err.msg, "more than 200000"), "%s: %s", huge[i], err.msg);
		ck_assert_uint_eq(a.nnodes, 0);
	}
	/* few nodes, many ports: 16,129 core switches of radix 254 */
	ck_assert_int_eq(generate(&a, "fattree:radix=254,levels=3,hosts=1", &err), -1);
	ck_assert_msg(strstr(err.msg, "ports, more than 1000000"), "%s", err.msg);
	fabric_free(&a);
	/* the largest fabric the tests use still comes: 40,000 hosts on 64-port switches */
	fabric_init(&a);
	ck_assert_msg(generate(&a, "fattree:radix=64,levels=3,hosts=40000", &err) == 0, "%s",
	              err.msg);
	ck_assert_uint_eq(a.nnodes, 1024 + 40 * 64 + 40000);
	fabric_free(&a);

	/* the same in YAML, and YAML mistakes with their line */
	char path[] = "/tmp/fabricsim-test-XXXXXX.yaml";
	int fd = mkstemps(path, 5);
	ck_assert_int_ge(fd, 0);
	FILE *fp = fdopen(fd, "w");
	fputs("# a torus\ngenerator: torus\ndims: 3x3x3\nhosts: 2\n", fp);
	fclose(fp);
	fabric_init(&a);
	ck_assert_msg(generate_yaml(&a, path, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(count(&a, NODE_TYPE_CA), 54);
	fabric_free(&a);
	fp = fopen(path, "w");
	fputs("generator: torus\ndims: [3, 3]\n", fp);
	fclose(fp);
	fabric_init(&a);
	ck_assert_int_eq(generate_yaml(&a, path, &err), -1);
	ck_assert_msg(strstr(err.msg, ":2: expected one mapping"), "%s", err.msg);
	fabric_free(&a);
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fabricsim");
	TCase *dr = tcase_create("directed route");
	tcase_add_checked_fixture(dr, setup, teardown);
	tcase_add_test(dr, dr_local_node);
	tcase_add_test(dr, dr_hops_and_return_path);
	tcase_add_test(dr, dr_from_a_switch);
	tcase_add_test(dr, dr_drops);
	suite_add_tcase(s, dr);
	TCase *sma = tcase_create("sma");
	tcase_add_checked_fixture(sma, setup, teardown);
	tcase_add_test(sma, sma_port_states_follow_the_rules);
	tcase_add_test(sma, sma_disabled_port_stays_disabled);
	tcase_add_test(sma, sma_lids_and_switch_info);
	tcase_add_test(sma, sma_tables);
	tcase_add_test(sma, sma_methods_and_attributes);
	tcase_add_test(sma, sma_mkey_protection);
	tcase_add_test(sma, lid_routing_through_lfts);
	tcase_add_test(sma, pma_counts_what_crossed);
	tcase_add_test(sma, cca_follows_annex_a10);
	tcase_add_test(sma, verify_unicast_lids_and_multicast);
	tcase_add_test(sma, mcast_members_listed);
	tcase_add_test(sma, verify_finds_a_credit_loop);
	tcase_add_test(sma, verify_alternate_paths);
	tcase_add_test(sma, verify_alternate_paths_parallel_cables);
	tcase_add_test(sma, vports_follow_the_rules);
	tcase_add_test(sma, node_desc_change_trap);
	tcase_add_test(sma, verify_vports);
	suite_add_tcase(s, sma);
	TCase *build = tcase_create("building");
	tcase_set_timeout(build, 60);
	tcase_add_test(build, netfile_errors_name_file_and_line);
	tcase_add_test(build, ibnetdiscover_format);
	tcase_add_test(build, netfile_link_speeds);
	tcase_add_test(build, generators);
	suite_add_tcase(s, build);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
