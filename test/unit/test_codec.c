/* The MAD codec against byte vectors written from the spec's layouts (IBA vol. 1 ch. 13-15),
 * independent of our field tables; table-wide properties; malformed input. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "mad/attr_table.h"
#include "mad/cc.h"
#include "mad/mad_header.h"
#include "mad/sa_records.h"
#include "mad/link_speed.h"
#include "mad/smp_attrs.h"
#include "mad/vport_attrs.h"

static void put16(uint8_t *b, size_t o, uint16_t v)
{
	b[o] = (uint8_t)(v >> 8);
	b[o + 1] = (uint8_t)v;
}

static void put24(uint8_t *b, size_t o, uint32_t v)
{
	b[o] = (uint8_t)(v >> 16);
	b[o + 1] = (uint8_t)(v >> 8);
	b[o + 2] = (uint8_t)v;
}

static void put32(uint8_t *b, size_t o, uint32_t v)
{
	put16(b, o, (uint16_t)(v >> 16));
	put16(b, o + 2, (uint16_t)v);
}

static void put64(uint8_t *b, size_t o, uint64_t v)
{
	put32(b, o, (uint32_t)(v >> 32));
	put32(b, o + 4, (uint32_t)v);
}

static void gid(uint8_t *g, uint8_t seed)
{
	for (int i = 0; i < 16; i++)
		g[i] = (uint8_t)(seed + i * 7);
}

/* Encode the decoded struct again: the bytes must come back exactly. */
#define ROUND_TRIP(prefix, type, bytes, size)                                                      \
	do {                                                                                       \
		struct type x_;                                                                    \
		uint8_t again_[512] = {0};                                                         \
		ck_assert_int_eq(prefix##_decode(bytes, size, &x_, NULL), 0);                      \
		ck_assert_int_eq(prefix##_encode(&x_, again_, size, NULL), 0);                     \
		ck_assert_mem_eq(again_, bytes, size);                                             \
	} while (0)

START_TEST(node_info_spec)
{
	uint8_t b[40] = {0};
	b[0] = 1;
	b[1] = 1;
	b[2] = 2;
	b[3] = 36;
	put64(b, 4, 0x0002c90300001234ull);
	put64(b, 12, 0x0002c90300005678ull);
	put64(b, 20, 0x0002c9030000abcdull);
	put16(b, 28, 8);
	put16(b, 30, 0xc738);
	put32(b, 32, 0x000000a1);
	b[36] = 17;
	put24(b, 37, 0x0002c9);
	struct mad_node_info ni;
	ck_assert_int_eq(mad_node_info_decode(b, sizeof(b), &ni, NULL), 0);
	ck_assert_uint_eq(ni.base_version, 1);
	ck_assert_uint_eq(ni.node_type, 2);
	ck_assert_uint_eq(ni.num_ports, 36);
	ck_assert_uint_eq(ni.system_image_guid, 0x0002c90300001234ull);
	ck_assert_uint_eq(ni.node_guid, 0x0002c90300005678ull);
	ck_assert_uint_eq(ni.port_guid, 0x0002c9030000abcdull);
	ck_assert_uint_eq(ni.partition_cap, 8);
	ck_assert_uint_eq(ni.device_id, 0xc738);
	ck_assert_uint_eq(ni.revision, 0xa1);
	ck_assert_uint_eq(ni.local_port_num, 17);
	ck_assert_uint_eq(ni.vendor_id, 0x0002c9);
	ROUND_TRIP(mad_node_info, mad_node_info, b, 40);
}
END_TEST

START_TEST(node_desc_spec)
{
	uint8_t b[64] = {0};
	memset(b, 'x', 64); /* a full 64-byte description has no terminator on the wire */
	memcpy(b, "sw-leaf-01 ", 11);
	struct mad_node_desc nd;
	ck_assert_int_eq(mad_node_desc_decode(b, sizeof(b), &nd, NULL), 0);
	ck_assert_uint_eq(strlen(nd.desc), 64);
	ck_assert_int_eq(strncmp(nd.desc, "sw-leaf-01 xx", 13), 0);
	ROUND_TRIP(mad_node_desc, mad_node_desc, b, 64);
}
END_TEST

START_TEST(port_info_spec)
{
	uint8_t b[64] = {0};
	put64(b, 0, 0x1122334455667788ull); /* M_Key */
	put64(b, 8, 0xfe80000000000000ull); /* GidPrefix */
	put16(b, 16, 0x1234);               /* LID */
	put16(b, 18, 0x0001);               /* MasterSMLID */
	put32(b, 20, 0x0251084a);           /* CapabilityMask */
	put16(b, 24, 0x0007);               /* DiagCode */
	put16(b, 26, 0x00ff);               /* M_KeyLeasePeriod */
	b[28] = 3;                          /* LocalPortNum */
	b[29] = 3;                          /* LinkWidthEnabled */
	b[30] = 0x13;                       /* LinkWidthSupported */
	b[31] = 2;                          /* LinkWidthActive */
	b[32] = (7 << 4) | 4;               /* LinkSpeedSupported | PortState ACTIVE */
	b[33] = (5 << 4) | 2;               /* PortPhysicalState LinkUp | LinkDownDefaultState */
	b[34] = (2 << 6) | 5;               /* M_KeyProtectBits | LMC */
	b[35] = (4 << 4) | 7;               /* LinkSpeedActive | LinkSpeedEnabled */
	b[36] = (5 << 4) | 9;               /* NeighborMTU | MasterSMSL */
	b[37] = (4 << 4) | 1;               /* VLCap | InitType */
	b[38] = 0xaa;                       /* VLHighLimit */
	b[39] = 8;                          /* VLArbitrationHighCap */
	b[40] = 16;                         /* VLArbitrationLowCap */
	b[41] = (3 << 4) | 5;               /* InitTypeReply | MTUCap */
	b[42] = (6 << 5) | 19;              /* VLStallCount | HOQLife */
	b[43] = (4 << 4) | 0xa;             /* OperationalVLs | PartEnfIn,Out,FilterRawIn,Out */
	put16(b, 44, 11);                   /* M_KeyViolations */
	put16(b, 46, 12);                   /* P_KeyViolations */
	put16(b, 48, 13);                   /* Q_KeyViolations */
	b[50] = 32;                         /* GUIDCap */
	b[51] = 0x80 | (2 << 5) | 18;    /* ClientReregister | MPKTrapSuppression | SubnetTimeOut */
	b[52] = 17;                      /* RespTimeValue */
	b[53] = (9 << 4) | 6;            /* LocalPhyErrors | OverrunErrors */
	put16(b, 54, 0x0102);            /* MaxCreditHint */
	b[56] = (1 << 5) | (1 << 3) | 1; /* reserved | ExtActive2 | ExtSupported2 | ExtEnabled2 */
	put24(b, 57, 0x0a0b0c);          /* LinkRoundTripLatency */
	put16(b, 60, 0x0012);            /* CapabilityMask2 */
	b[62] = (2 << 4) | 3;            /* LinkSpeedExtActive | Supported */
	b[63] = 0x1f;                    /* LinkSpeedExtEnabled (5 bits) */

	struct mad_port_info p;
	ck_assert_int_eq(mad_port_info_decode(b, sizeof(b), &p, NULL), 0);
	ck_assert_uint_eq(p.mkey, 0x1122334455667788ull);
	ck_assert_uint_eq(p.gid_prefix, 0xfe80000000000000ull);
	ck_assert_uint_eq(p.lid, 0x1234);
	ck_assert_uint_eq(p.master_sm_lid, 1);
	ck_assert_uint_eq(p.capability_mask, 0x0251084a);
	ck_assert_uint_eq(p.diag_code, 7);
	ck_assert_uint_eq(p.mkey_lease_period, 0xff);
	ck_assert_uint_eq(p.local_port_num, 3);
	ck_assert_uint_eq(p.link_width_enabled, 3);
	ck_assert_uint_eq(p.link_width_supported, 0x13);
	ck_assert_uint_eq(p.link_width_active, 2);
	ck_assert_uint_eq(p.link_speed_supported, 7);
	ck_assert_uint_eq(p.port_state, 4);
	ck_assert_uint_eq(p.phys_state, 5);
	ck_assert_uint_eq(p.link_down_default_state, 2);
	ck_assert_uint_eq(p.mkey_protect_bits, 2);
	ck_assert_uint_eq(p.lmc, 5);
	ck_assert_uint_eq(p.link_speed_active, 4);
	ck_assert_uint_eq(p.link_speed_enabled, 7);
	ck_assert_uint_eq(p.neighbor_mtu, 5);
	ck_assert_uint_eq(p.master_sm_sl, 9);
	ck_assert_uint_eq(p.vl_cap, 4);
	ck_assert_uint_eq(p.init_type, 1);
	ck_assert_uint_eq(p.vl_high_limit, 0xaa);
	ck_assert_uint_eq(p.vl_arb_high_cap, 8);
	ck_assert_uint_eq(p.vl_arb_low_cap, 16);
	ck_assert_uint_eq(p.init_type_reply, 3);
	ck_assert_uint_eq(p.mtu_cap, 5);
	ck_assert_uint_eq(p.vl_stall_count, 6);
	ck_assert_uint_eq(p.hoq_life, 19);
	ck_assert_uint_eq(p.oper_vls, 4);
	ck_assert_uint_eq(p.partition_enforcement_inbound, 1);
	ck_assert_uint_eq(p.partition_enforcement_outbound, 0);
	ck_assert_uint_eq(p.filter_raw_inbound, 1);
	ck_assert_uint_eq(p.filter_raw_outbound, 0);
	ck_assert_uint_eq(p.mkey_violations, 11);
	ck_assert_uint_eq(p.pkey_violations, 12);
	ck_assert_uint_eq(p.qkey_violations, 13);
	ck_assert_uint_eq(p.guid_cap, 32);
	ck_assert_uint_eq(p.client_reregister, 1);
	ck_assert_uint_eq(p.mcast_pkey_trap_suppression, 2);
	ck_assert_uint_eq(p.subnet_timeout, 18);
	ck_assert_uint_eq(p.resp_time_value, 17);
	ck_assert_uint_eq(p.local_phy_errors, 9);
	ck_assert_uint_eq(p.overrun_errors, 6);
	ck_assert_uint_eq(p.max_credit_hint, 0x0102);
	ck_assert_uint_eq(p.link_round_trip_latency, 0x0a0b0c);
	ck_assert_uint_eq(p.capability_mask2, 0x12);
	ck_assert_uint_eq(p.link_speed_ext_active, 2);
	ck_assert_uint_eq(p.link_speed_ext_supported, 3);
	ck_assert_uint_eq(p.link_speed_ext_enabled, 0x1f);
	ck_assert_uint_eq(p.link_speed_ext_active2, 1);
	ck_assert_uint_eq(p.link_speed_ext_supported2, 1);
	ck_assert_uint_eq(p.link_speed_ext_enabled2, 1);
	ROUND_TRIP(mad_port_info, mad_port_info, b, 64);
}
END_TEST

/* Every width at every speed against the IBA rate table (the verbs library's figures) */
START_TEST(link_rates)
{
	static const struct {
		unsigned lanes;
		enum link_speed s;
		uint8_t code;
		uint32_t mbps;
	} v[] = {
	    {1, LINK_SDR, 2, 2500},
	    {4, LINK_SDR, 3, 10000},
	    {12, LINK_SDR, 4, 30000},
	    {2, LINK_SDR, 5, 5000},
	    {8, LINK_DDR, 7, 40000},
	    {12, LINK_QDR, 10, 120000},
	    {1, LINK_FDR, 11, 14062},
	    {4, LINK_FDR, 12, 56250},
	    {2, LINK_FDR, 19, 28125},
	    {12, LINK_FDR, 14, 168750},
	    {1, LINK_EDR, 15, 25781},
	    {4, LINK_EDR, 16, 103125},
	    {12, LINK_EDR, 18, 309375},
	    {2, LINK_EDR, 20, 53125},
	    {1, LINK_HDR, 20, 53125},
	    {4, LINK_HDR, 17, 206250},
	    {2, LINK_HDR, 16, 103125},
	    {8, LINK_HDR, 21, 425000},
	    {12, LINK_HDR, 22, 637500},
	    {4, LINK_NDR, 21, 425000},
	    {2, LINK_NDR, 17, 206250},
	    {8, LINK_NDR, 23, 850000},
	    {12, LINK_NDR, 24, 1275000},
	    {1, LINK_XDR, 17, 206250},
	    {4, LINK_XDR, 23, 850000},
	    {8, LINK_XDR, 25, 1700000},
	    /* 2,400 Gb/s has no code: the largest below stands in */
	    {12, LINK_XDR, 25, 1700000},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t c = mad_rate_code(v[i].lanes, v[i].s);
		ck_assert_msg(c == v[i].code, "%ux%s: code %u, want %u", v[i].lanes,
		              mad_link_speed_name(v[i].s), c, v[i].code);
		ck_assert_uint_eq(mad_rate_mbps(c), v[i].mbps);
		/* and through PortInfo, as the SA reads a port */
		struct mad_port_info pi = {.link_width_active =
		                               mad_link_width_of_lanes(v[i].lanes)};
		mad_link_speed_set_active(&pi, v[i].s);
		ck_assert_uint_eq(mad_link_speed_active(&pi), v[i].s);
		ck_assert_uint_eq(mad_link_rate(&pi), v[i].code);
	}
	/* codes order by bandwidth, not by number */
	ck_assert_int_lt(mad_rate_cmp(11, 7), 0);    /* 14 < 40 */
	ck_assert_uint_eq(mad_rate_step(7, 1), 20);  /* 40 -> 50 */
	ck_assert_uint_eq(mad_rate_step(7, -1), 4);  /* 40 -> 30 */
	ck_assert_uint_eq(mad_rate_step(4, -1), 19); /* 30 -> 28 */
	ck_assert_uint_eq(mad_rate_step(25, 1), 0);
	ck_assert_uint_eq(mad_rate_step(2, -1), 0);
	ck_assert_uint_eq(mad_rate_mbps(0), 0);
	ck_assert_uint_eq(mad_rate_mbps(1), 0);
	ck_assert_uint_eq(mad_rate_mbps(26), 0);
	ck_assert_uint_eq(mad_rate_parse("1600"), 25);
	ck_assert_uint_eq(mad_rate_parse("2.5"), 2);
	ck_assert_uint_eq(mad_rate_parse("2400"), 0);
	ck_assert_int_eq(mad_link_speed_parse("ndr"), LINK_NDR);
	ck_assert_int_eq(mad_link_speed_parse("NDRX"), -1);
	/* a port down runs no rate */
	struct mad_port_info down = {0};
	ck_assert_uint_eq(mad_link_rate(&down), 0);
	/* widths by lanes: 2x is the highest bit but not the widest */
	ck_assert_uint_eq(mad_link_width_widest(LINK_WIDTH_2X | LINK_WIDTH_4X), LINK_WIDTH_4X);
	ck_assert_uint_eq(mad_link_width_widest(LINK_WIDTH_2X | LINK_WIDTH_1X), LINK_WIDTH_2X);
	/* supported speeds set the capability bits the SM looks for */
	struct mad_port_info pi = {0};
	mad_link_speeds_set_supported(&pi, 0xff);
	ck_assert(pi.capability_mask & PORT_CAP_HAS_EXT_SPEEDS);
	ck_assert(pi.capability_mask & PORT_CAP_HAS_CAP_MASK2);
	ck_assert(pi.capability_mask2 & PORT_CAP2_SPEED_NDR);
	ck_assert(pi.capability_mask2 & PORT_CAP2_SPEED_XDR);
	ck_assert_uint_eq(mad_link_speeds_supported(&pi), 0xff);
	mad_link_speeds_set_supported(&pi, 7);
	ck_assert(!(pi.capability_mask & PORT_CAP_HAS_EXT_SPEEDS));
}
END_TEST

START_TEST(switch_info_spec)
{
	uint8_t b[20] = {0};
	put16(b, 0, 49152);
	put16(b, 2, 0);
	put16(b, 4, 4096);
	put16(b, 6, 0x0143);
	b[8] = 0xff;
	b[9] = 0xfe;
	b[10] = 0xfd;
	b[11] = (18 << 3) | (1 << 2) | 2; /* LifeTimeValue | PortStateChange | OptSL2VL */
	put16(b, 12, 1);
	put16(b, 14, 32);
	b[16] =
	    0xa8; /* InboundEnf 1, OutboundEnf 0, FilterRawIn 1, FilterRawOut 0, EnhancedPort0 1 */
	put16(b, 18, 0xc003);
	struct mad_switch_info s;
	ck_assert_int_eq(mad_switch_info_decode(b, sizeof(b), &s, NULL), 0);
	ck_assert_uint_eq(s.linear_fdb_cap, 49152);
	ck_assert_uint_eq(s.multicast_fdb_cap, 4096);
	ck_assert_uint_eq(s.linear_fdb_top, 0x143);
	ck_assert_uint_eq(s.default_port, 0xff);
	ck_assert_uint_eq(s.default_mcast_primary_port, 0xfe);
	ck_assert_uint_eq(s.default_mcast_not_primary_port, 0xfd);
	ck_assert_uint_eq(s.life_time_value, 18);
	ck_assert_uint_eq(s.port_state_change, 1);
	ck_assert_uint_eq(s.optimized_sl2vl_programming, 2);
	ck_assert_uint_eq(s.lids_per_port, 1);
	ck_assert_uint_eq(s.partition_enforcement_cap, 32);
	ck_assert_uint_eq(s.inbound_enforcement_cap, 1);
	ck_assert_uint_eq(s.outbound_enforcement_cap, 0);
	ck_assert_uint_eq(s.filter_raw_inbound_cap, 1);
	ck_assert_uint_eq(s.filter_raw_outbound_cap, 0);
	ck_assert_uint_eq(s.enhanced_port0, 1);
	ck_assert_uint_eq(s.multicast_fdb_top, 0xc003);
	ROUND_TRIP(mad_switch_info, mad_switch_info, b, 20);
}
END_TEST

/* The virtualization attributes at the offsets NVIDIA's headers and ibutils2's layouts give
 * (docs: mad/vport_attrs.h). */
START_TEST(vport_attrs_spec)
{
	uint8_t b[64] = {0};
	put16(b, 0, 64);
	put16(b, 2, 7);
	b[4] = 0x80 | 0x20; /* Enable, VPortStateChange */
	b[6] = 0;
	struct mad_virt_info vi;
	ck_assert_int_eq(mad_virt_info_decode(b, sizeof(b), &vi, NULL), 0);
	ck_assert_uint_eq(vi.vport_cap, 64);
	ck_assert_uint_eq(vi.vport_index_top, 7);
	ck_assert_uint_eq(vi.enable, 1);
	ck_assert_uint_eq(vi.vclient_reregister, 0);
	ck_assert_uint_eq(vi.vport_state_change, 1);
	ROUND_TRIP(mad_virt_info, mad_virt_info, b, 64);

	memset(b, 0, sizeof(b));
	b[0] = (4 << 4) | 0x08 | 0x04; /* Active, ClientReregister, LIDRequired */
	b[1] = 8;
	put16(b, 2, 0x0011);
	put16(b, 4, 3);
	put16(b, 6, 5);
	put16(b, 8, 0x1234);
	put16(b, 10, 2);
	put64(b, 12, 0x0002c90300aabbccull);
	put64(b, 20, 0x1122334455667788ull);
	struct mad_vport_info vp;
	ck_assert_int_eq(mad_vport_info_decode(b, sizeof(b), &vp, NULL), 0);
	ck_assert_uint_eq(vp.state, 4);
	ck_assert_uint_eq(vp.client_reregister, 1);
	ck_assert_uint_eq(vp.lid_required, 1);
	ck_assert_uint_eq(vp.guid_cap, 8);
	ck_assert_uint_eq(vp.capability_mask, 0x11);
	ck_assert_uint_eq(vp.pkey_violations, 3);
	ck_assert_uint_eq(vp.qkey_violations, 5);
	ck_assert_uint_eq(vp.lid, 0x1234);
	ck_assert_uint_eq(vp.lid_by_index, 2);
	ck_assert_uint_eq(vp.port_guid, 0x0002c90300aabbccull);
	ck_assert_uint_eq(vp.profile, 0x1122334455667788ull);
	ROUND_TRIP(mad_vport_info, mad_vport_info, b, 64);

	memset(b, 0, sizeof(b));
	put16(b, 0, 128);
	b[2] = 1;
	b[3] = 1;
	put64(b, 4, 0x0002c90300000001ull);
	struct mad_vnode_info vn;
	ck_assert_int_eq(mad_vnode_info_decode(b, sizeof(b), &vn, NULL), 0);
	ck_assert_uint_eq(vn.partition_cap, 128);
	ck_assert_uint_eq(vn.local_port_num, 1);
	ck_assert_uint_eq(vn.num_ports, 1);
	ck_assert_uint_eq(vn.node_guid, 0x0002c90300000001ull);
	ROUND_TRIP(mad_vnode_info, mad_vnode_info, b, 64);

	memset(b, 0, sizeof(b));
	b[0] = 0x41;  /* vport 0 Active, vport 1 Down */
	b[63] = 0x24; /* vport 126 Init, vport 127 Active */
	struct mad_vport_state vs;
	ck_assert_int_eq(mad_vport_state_decode(b, sizeof(b), &vs, NULL), 0);
	ck_assert_uint_eq(vs.state[0], 4);
	ck_assert_uint_eq(vs.state[1], 1);
	ck_assert_uint_eq(vs.state[126], 2);
	ck_assert_uint_eq(vs.state[127], 4);
	ROUND_TRIP(mad_vport_state, mad_vport_state, b, 64);

	unsigned v, blk;
	mad_vport_block_am_split(mad_vport_block_am(70, 3), &v, &blk);
	ck_assert_uint_eq(v, 70);
	ck_assert_uint_eq(blk, 3);
	ck_assert_uint_eq(mad_vport_am(70), 70);
}
END_TEST

START_TEST(tables_spec)
{
	uint8_t b[64];
	for (int i = 0; i < 64; i++)
		b[i] = (uint8_t)(i * 3 + 1);

	struct mad_pkey_table pk;
	ck_assert_int_eq(mad_pkey_table_decode(b, 64, &pk, NULL), 0);
	for (int i = 0; i < 32; i++)
		ck_assert_uint_eq(pk.pkey[i], (uint16_t)(b[2 * i] << 8 | b[2 * i + 1]));
	ROUND_TRIP(mad_pkey_table, mad_pkey_table, b, 64);

	struct mad_lft_block lft;
	ck_assert_int_eq(mad_lft_block_decode(b, 64, &lft, NULL), 0);
	ck_assert_mem_eq(lft.port, b, 64);
	ROUND_TRIP(mad_lft_block, mad_lft_block, b, 64);

	struct mad_mft_block mft;
	ck_assert_int_eq(mad_mft_block_decode(b, 64, &mft, NULL), 0);
	ck_assert_uint_eq(mft.mask[31], (uint16_t)(b[62] << 8 | b[63]));
	ROUND_TRIP(mad_mft_block, mad_mft_block, b, 64);

	struct mad_guid_info gi;
	ck_assert_int_eq(mad_guid_info_decode(b, 64, &gi, NULL), 0);
	ck_assert_uint_eq(gi.guid[1] >> 56, b[8]);
	ck_assert_uint_eq(gi.guid[7] & 0xff, b[63]);
	ROUND_TRIP(mad_guid_info, mad_guid_info, b, 64);

	/* SL2VL: SL0 in the high nibble of byte 0 */
	uint8_t s2v[8] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
	struct mad_sl2vl_table sv;
	ck_assert_int_eq(mad_sl2vl_table_decode(s2v, 8, &sv, NULL), 0);
	for (int sl = 0; sl < 16; sl++)
		ck_assert_uint_eq(sv.vl[sl], sl);
	ROUND_TRIP(mad_sl2vl_table, mad_sl2vl_table, s2v, 8);

	/* VLArb: each entry 4 reserved bits, VL (4), Weight (8) */
	uint8_t va[64] = {0};
	for (int i = 0; i < 32; i++) {
		va[2 * i] = (uint8_t)(i % 15);
		va[2 * i + 1] = (uint8_t)(255 - i);
	}
	struct mad_vlarb_table vt;
	ck_assert_int_eq(mad_vlarb_table_decode(va, 64, &vt, NULL), 0);
	for (int i = 0; i < 32; i++) {
		ck_assert_uint_eq(vt.vl[i], i % 15);
		ck_assert_uint_eq(vt.weight[i], 255 - i);
	}
	ROUND_TRIP(mad_vlarb_table, mad_vlarb_table, va, 64);
}
END_TEST

START_TEST(sm_info_and_notice_spec)
{
	uint8_t b[80] = {0};
	put64(b, 0, 0x0002c90300000001ull);
	put64(b, 8, 0xdeadbeefcafef00dull);
	put32(b, 16, 77);
	b[20] = (14 << 4) | 3; /* Priority | SMState MASTER */
	struct mad_sm_info si;
	ck_assert_int_eq(mad_sm_info_decode(b, 21, &si, NULL), 0);
	ck_assert_uint_eq(si.guid, 0x0002c90300000001ull);
	ck_assert_uint_eq(si.sm_key, 0xdeadbeefcafef00dull);
	ck_assert_uint_eq(si.act_count, 77);
	ck_assert_uint_eq(si.priority, 14);
	ck_assert_uint_eq(si.state, 3);
	ROUND_TRIP(mad_sm_info, mad_sm_info, b, 21);

	memset(b, 0, sizeof(b));
	b[0] = 0x80 | 1;              /* IsGeneric | Type urgent */
	put24(b, 1, 2);               /* ProducerType: switch */
	put16(b, 4, 128);             /* TrapNumber */
	put16(b, 6, 0x0007);          /* IssuerLID */
	put16(b, 8, 0x8000 | 0x1234); /* NoticeToggle | NoticeCount (15 bits) */
	put16(b, 10, 0x0007);         /* data details: LIDADDR of trap 128 */
	gid(b + 64, 5);               /* IssuerGID */
	struct mad_notice n;
	ck_assert_int_eq(mad_notice_decode(b, 80, &n, NULL), 0);
	ck_assert_uint_eq(n.is_generic, 1);
	ck_assert_uint_eq(n.type, 1);
	ck_assert_uint_eq(n.producer_type, 2);
	ck_assert_uint_eq(n.trap_number, 128);
	ck_assert_uint_eq(n.issuer_lid, 7);
	ck_assert_uint_eq(n.toggle, 1);
	ck_assert_uint_eq(n.count, 0x1234);
	ck_assert_uint_eq(n.data_details[1], 7);
	ck_assert_mem_eq(n.issuer_gid, b + 64, 16);
	ROUND_TRIP(mad_notice, mad_notice, b, 80);
}
END_TEST

START_TEST(class_port_info_spec)
{
	uint8_t b[72] = {0};
	b[0] = 1;
	b[1] = 2;
	put16(b, 2, 0x2602);
	put32(b, 4, (0x1234567u << 5) | 18); /* CapabilityMask2 (27) | RespTimeValue (5) */
	gid(b + 8, 1);
	put32(b, 24, (7u << 24) | (3u << 20) | 0x12345); /* TC | SL | FL */
	put16(b, 28, 0x55);
	put16(b, 30, 0xffff);
	put32(b, 32, 0x00abcdef); /* reserved 8 | QP 24 */
	put32(b, 36, 0x80010000);
	gid(b + 40, 9);
	put16(b, 60, 0x66);
	b[64] = 64;
	put24(b, 65, 1);
	put32(b, 68, 0x80010000);
	struct mad_class_port_info c;
	ck_assert_int_eq(mad_class_port_info_decode(b, 72, &c, NULL), 0);
	ck_assert_uint_eq(c.class_version, 2);
	ck_assert_uint_eq(c.capability_mask, 0x2602);
	ck_assert_uint_eq(c.capability_mask2, 0x1234567);
	ck_assert_uint_eq(c.resp_time_value, 18);
	ck_assert_mem_eq(c.redirect_gid, b + 8, 16);
	ck_assert_uint_eq(c.redirect_tc, 7);
	ck_assert_uint_eq(c.redirect_sl, 3);
	ck_assert_uint_eq(c.redirect_fl, 0x12345);
	ck_assert_uint_eq(c.redirect_lid, 0x55);
	ck_assert_uint_eq(c.redirect_qp, 0xabcdef);
	ck_assert_uint_eq(c.trap_lid, 0x66);
	ck_assert_uint_eq(c.trap_hl, 64);
	ck_assert_uint_eq(c.trap_qp, 1);
	ck_assert_uint_eq(c.trap_qkey, 0x80010000);
	ROUND_TRIP(mad_class_port_info, mad_class_port_info, b, 72);
}
END_TEST

START_TEST(path_record_spec)
{
	uint8_t b[64] = {0};
	put64(b, 0, 0x1000000000000001ull);                 /* ServiceID */
	gid(b + 8, 0x10);                                   /* DGID */
	gid(b + 24, 0x20);                                  /* SGID */
	put16(b, 40, 0x0042);                               /* DLID */
	put16(b, 42, 0x0017);                               /* SLID */
	put32(b, 44, 0x80000000u | (0xabcdeu << 8) | 0x40); /* RawTraffic | FlowLabel | HopLimit */
	b[48] = 0x12;                                       /* TClass */
	b[49] = 0x80 | 0x7f;                                /* Reversible | NumbPath */
	put16(b, 50, 0x8001);                               /* P_Key */
	put16(b, 52, (0x123 << 4) | 0xa);                   /* QoSClass | SL */
	b[54] = (2 << 6) | 4;                               /* MTUSelector exactly | MTU 2048 */
	b[55] = (1 << 6) | 16;                              /* RateSelector less than | Rate */
	b[56] = (3 << 6) | 19; /* PacketLifeTimeSelector | PacketLifeTime */
	b[57] = 1;             /* Preference */
	struct mad_path_record pr;
	ck_assert_int_eq(mad_path_record_decode(b, 64, &pr, NULL), 0);
	ck_assert_uint_eq(pr.service_id, 0x1000000000000001ull);
	ck_assert_mem_eq(pr.dgid, b + 8, 16);
	ck_assert_mem_eq(pr.sgid, b + 24, 16);
	ck_assert_uint_eq(pr.dlid, 0x42);
	ck_assert_uint_eq(pr.slid, 0x17);
	ck_assert_uint_eq(pr.raw_traffic, 1);
	ck_assert_uint_eq(pr.flow_label, 0xabcde);
	ck_assert_uint_eq(pr.hop_limit, 0x40);
	ck_assert_uint_eq(pr.tclass, 0x12);
	ck_assert_uint_eq(pr.reversible, 1);
	ck_assert_uint_eq(pr.num_path, 0x7f);
	ck_assert_uint_eq(pr.pkey, 0x8001);
	ck_assert_uint_eq(pr.qos_class, 0x123);
	ck_assert_uint_eq(pr.sl, 0xa);
	ck_assert_uint_eq(pr.mtu_selector, 2);
	ck_assert_uint_eq(pr.mtu, 4);
	ck_assert_uint_eq(pr.rate_selector, 1);
	ck_assert_uint_eq(pr.rate, 16);
	ck_assert_uint_eq(pr.pkt_life_selector, 3);
	ck_assert_uint_eq(pr.pkt_life, 19);
	ck_assert_uint_eq(pr.preference, 1);
	ROUND_TRIP(mad_path_record, mad_path_record, b, 64);
}
END_TEST

START_TEST(mcmember_record_spec)
{
	uint8_t b[52] = {0};
	uint8_t mgid[16] = {0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0,    0,
	                    0,    0,    0,    0,    0xff, 0xff, 0xff, 0xff};
	memcpy(b, mgid, 16);
	gid(b + 16, 0x30);
	put32(b, 32, 0x0000000b); /* Q_Key */
	put16(b, 36, 0xc000);     /* MLID */
	b[38] = (2 << 6) | 4;     /* MTUSelector | MTU */
	b[39] = 0x21;             /* TClass */
	put16(b, 40, 0xffff);     /* P_Key */
	b[42] = (2 << 6) | 3;     /* RateSelector | Rate */
	b[43] = (1 << 6) | 18;    /* PacketLifeTimeSelector | PacketLifeTime */
	put32(b, 44, (5u << 28) | (0x54321u << 8) | 0x33); /* SL | FlowLabel | HopLimit */
	b[48] = (2 << 4) | 1; /* Scope link-local | JoinState full member */
	b[49] = 0x80;         /* ProxyJoin */
	struct mad_mcmember_record m;
	ck_assert_int_eq(mad_mcmember_record_decode(b, 52, &m, NULL), 0);
	ck_assert_mem_eq(m.mgid, mgid, 16);
	ck_assert_mem_eq(m.port_gid, b + 16, 16);
	ck_assert_uint_eq(m.qkey, 0xb);
	ck_assert_uint_eq(m.mlid, 0xc000);
	ck_assert_uint_eq(m.mtu_selector, 2);
	ck_assert_uint_eq(m.mtu, 4);
	ck_assert_uint_eq(m.tclass, 0x21);
	ck_assert_uint_eq(m.pkey, 0xffff);
	ck_assert_uint_eq(m.rate_selector, 2);
	ck_assert_uint_eq(m.rate, 3);
	ck_assert_uint_eq(m.pkt_life_selector, 1);
	ck_assert_uint_eq(m.pkt_life, 18);
	ck_assert_uint_eq(m.sl, 5);
	ck_assert_uint_eq(m.flow_label, 0x54321);
	ck_assert_uint_eq(m.hop_limit, 0x33);
	ck_assert_uint_eq(m.scope, 2);
	ck_assert_uint_eq(m.join_state, 1);
	ck_assert_uint_eq(m.proxy_join, 1);
	ROUND_TRIP(mad_mcmember_record, mad_mcmember_record, b, 52);
}
END_TEST

START_TEST(service_and_inform_spec)
{
	uint8_t b[176] = {0};
	put64(b, 0, 0x1000000000000abcull);
	gid(b + 8, 0x40);
	put16(b, 24, 0xffff);
	put32(b, 28, 0xffffffff); /* infinite lease */
	gid(b + 32, 0x50);        /* ServiceKey */
	memcpy(b + 48, "ibsmd-test-service", 18);
	for (int i = 0; i < 16; i++)
		b[112 + i] = (uint8_t)i;
	put16(b, 128, 0x1616);
	put32(b, 144 + 12, 0x32323232);
	put64(b, 168, 0x6464646464646464ull);
	struct mad_service_record sr;
	ck_assert_int_eq(mad_service_record_decode(b, 176, &sr, NULL), 0);
	ck_assert_uint_eq(sr.id, 0x1000000000000abcull);
	ck_assert_uint_eq(sr.pkey, 0xffff);
	ck_assert_uint_eq(sr.lease, 0xffffffff);
	ck_assert_mem_eq(sr.key, b + 32, 16);
	ck_assert_str_eq(sr.name, "ibsmd-test-service");
	ck_assert_uint_eq(sr.data8[15], 15);
	ck_assert_uint_eq(sr.data16[0], 0x1616);
	ck_assert_uint_eq(sr.data32[3], 0x32323232);
	ck_assert_uint_eq(sr.data64[1], 0x6464646464646464ull);
	ROUND_TRIP(mad_service_record, mad_service_record, b, 176);

	uint8_t ii[60] = {0};
	gid(ii, 0x60);    /* SubscriberGID */
	put16(ii, 16, 3); /* Enum */
	uint8_t *inf = ii + 24;
	gid(inf, 0x70);
	put16(inf, 16, 1);
	put16(inf, 18, 0xbfff);
	inf[22] = 1; /* IsGeneric */
	inf[23] = 1; /* Subscribe */
	put16(inf, 24, 0xffff);
	put16(inf, 26, 64);
	put32(inf, 28, (0x123456u << 8) | 19); /* QPN | reserved | RespTimeValue */
	put32(inf, 32, 0x00000004);            /* reserved | ProducerType */
	struct mad_inform_info_record r;
	ck_assert_int_eq(mad_inform_info_record_decode(ii, 60, &r, NULL), 0);
	ck_assert_mem_eq(r.subscriber_gid, ii, 16);
	ck_assert_uint_eq(r.subscriber_enum, 3);
	ck_assert_mem_eq(r.info.gid, inf, 16);
	ck_assert_uint_eq(r.info.lid_range_begin, 1);
	ck_assert_uint_eq(r.info.lid_range_end, 0xbfff);
	ck_assert_uint_eq(r.info.is_generic, 1);
	ck_assert_uint_eq(r.info.subscribe, 1);
	ck_assert_uint_eq(r.info.type, 0xffff);
	ck_assert_uint_eq(r.info.trap_number, 64);
	ck_assert_uint_eq(r.info.qpn, 0x123456);
	ck_assert_uint_eq(r.info.resp_time_value, 19);
	ck_assert_uint_eq(r.info.producer_type, 4);
	ROUND_TRIP(mad_inform_info_record, mad_inform_info_record, ii, 60);
}
END_TEST

START_TEST(records_embedding_attributes)
{
	uint8_t b[108] = {0};
	put16(b, 0, 0x0033);
	b[4] = 1;
	b[6] = 1; /* NodeType CA, at NodeInfo byte 2 */
	put64(b, 4 + 12, 0x0002c90300000099ull);
	memcpy(b + 44, "host-99 mlx5_0", 14);
	struct mad_node_record nr;
	ck_assert_int_eq(mad_node_record_decode(b, 108, &nr, NULL), 0);
	ck_assert_uint_eq(nr.lid, 0x33);
	ck_assert_uint_eq(nr.info.node_type, 1);
	ck_assert_uint_eq(nr.info.node_guid, 0x0002c90300000099ull);
	ck_assert_str_eq(nr.desc.desc, "host-99 mlx5_0");
	ROUND_TRIP(mad_node_record, mad_node_record, b, 108);

	uint8_t p[68] = {0};
	put16(p, 0, 0x0044);
	p[2] = 7;
	put16(p, 4 + 16, 0x0044);
	p[4 + 32] = 4; /* PortState ACTIVE */
	struct mad_port_info_record pir;
	ck_assert_int_eq(mad_port_info_record_decode(p, 68, &pir, NULL), 0);
	ck_assert_uint_eq(pir.lid, 0x44);
	ck_assert_uint_eq(pir.port_num, 7);
	ck_assert_uint_eq(pir.info.lid, 0x44);
	ck_assert_uint_eq(pir.info.port_state, 4);
	ck_assert_uint_eq(mad_sa_record_stride(&mad_port_info_record_layout), 72);

	uint8_t l[8] = {0};
	put16(l, 0, 5);
	l[2] = 3;
	l[3] = 9;
	put16(l, 4, 6);
	struct mad_link_record lr;
	ck_assert_int_eq(mad_link_record_decode(l, 8, &lr, NULL), 0);
	ck_assert_uint_eq(lr.from_lid, 5);
	ck_assert_uint_eq(lr.from_port, 3);
	ck_assert_uint_eq(lr.to_port, 9);
	ck_assert_uint_eq(lr.to_lid, 6);

	uint8_t m[72] = {0};
	put16(m, 0, 0x12);
	put16(m, 2, (3u << 12) | 0x1ff); /* Position | reserved | BlockNum (9 bits) */
	put16(m, 8, 0x0006);
	struct mad_mft_record mr;
	ck_assert_int_eq(mad_mft_record_decode(m, 72, &mr, NULL), 0);
	ck_assert_uint_eq(mr.position, 3);
	ck_assert_uint_eq(mr.block_num, 0x1ff);
	ck_assert_uint_eq(mr.mft.mask[0], 6);
	ROUND_TRIP(mad_mft_record, mad_mft_record, m, 72);

	uint8_t pk[72] = {0};
	put16(pk, 0, 0x21);
	put16(pk, 2, 1);
	pk[4] = 5;
	put16(pk, 8, 0xffff);
	struct mad_pkey_table_record pkr;
	ck_assert_int_eq(mad_pkey_table_record_decode(pk, 72, &pkr, NULL), 0);
	ck_assert_uint_eq(pkr.block_num, 1);
	ck_assert_uint_eq(pkr.port_num, 5);
	ck_assert_uint_eq(pkr.table.pkey[0], 0xffff);
	ROUND_TRIP(mad_pkey_table_record, mad_pkey_table_record, pk, 72);
}
END_TEST

START_TEST(multipath_record_spec)
{
	uint8_t b[200] = {0};
	put32(b, 0, (0x11111u << 8) | 0xff); /* FlowLabel | HopLimit */
	b[5] = 0x80 | 4;                     /* Reversible | NumbPath */
	put16(b, 6, 0x7fff);
	put16(b, 8, 0x0003); /* SL 3 */
	b[13] = 0x10;        /* ServiceID high byte */
	b[14] = 1 << 6;      /* IndependenceSelector */
	b[15] = 2;
	b[16] = 3;
	put32(b, 17, 0x00000000);
	b[23] = 0x42; /* ServiceID low bytes end */
	for (int i = 0; i < 5; i++)
		gid(b + 24 + 16 * i, (uint8_t)(0x80 + i));
	struct mad_multipath_record r;
	ck_assert_int_eq(mad_multipath_record_decode(b, 200, &r, NULL), 0);
	ck_assert_uint_eq(r.flow_label, 0x11111);
	ck_assert_uint_eq(r.hop_limit, 0xff);
	ck_assert_uint_eq(r.reversible, 1);
	ck_assert_uint_eq(r.num_path, 4);
	ck_assert_uint_eq(r.pkey, 0x7fff);
	ck_assert_uint_eq(r.sl, 3);
	ck_assert_uint_eq(r.service_id_hi8, 0x10);
	ck_assert_uint_eq(r.service_id_lo56, 0x42);
	ck_assert_uint_eq(r.independence_selector, 1);
	ck_assert_uint_eq(r.sgid_count, 2);
	ck_assert_uint_eq(r.dgid_count, 3);
	ck_assert_mem_eq(r.gid[4], b + 24 + 64, 16);
	uint8_t again[200] = {0};
	ck_assert_int_eq(mad_multipath_record_encode(&r, again, sizeof(again), NULL), 0);
	ck_assert_mem_eq(again, b, 24 + 5 * 16);

	/* counts that do not fit: rejected with the reason, never read past the buffer */
	struct mad_error err;
	b[15] = 9;
	b[16] = 3;
	ck_assert_int_eq(mad_multipath_record_decode(b, 200, &r, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "exceeds"));
	b[15] = 2;
	b[16] = 3;
	ck_assert_int_eq(mad_multipath_record_decode(b, 24 + 4 * 16, &r, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "5 GIDs need"));
}
END_TEST

START_TEST(headers_spec)
{
	uint8_t m[256] = {0};
	m[0] = 1;
	m[1] = 0x81;
	m[2] = 1;
	m[3] = 0x81;             /* GetResp */
	put16(m, 4, 0x8000 | 4); /* D bit | status */
	m[6] = 2;                /* HopPointer */
	m[7] = 3;                /* HopCount */
	put64(m, 8, 0x0000000500000007ull);
	put16(m, 16, 0x0015);
	put32(m, 20, 0x00000003);
	put64(m, 24, 0xabcdef);
	put16(m, 32, 0xffff); /* DrSLID */
	put16(m, 34, 0xffff); /* DrDLID */
	m[64] = 0x42;         /* data */
	m[129] = 1;
	m[130] = 5;
	m[131] = 9; /* InitialPath */
	m[193] = 2; /* ReturnPath */
	struct mad_smp s;
	ck_assert_int_eq(mad_smp_decode(m, 256, &s, NULL), 0);
	ck_assert_uint_eq(s.hdr.mgmt_class, 0x81);
	ck_assert_uint_eq(s.hdr.method, 0x81);
	ck_assert_uint_eq(s.hdr.tid, 0x0000000500000007ull);
	ck_assert_uint_eq(s.hdr.attr_id, 0x15);
	ck_assert_uint_eq(s.hdr.attr_mod, 3);
	ck_assert_uint_eq(s.direction, 1);
	ck_assert_uint_eq(s.dr_status, 4);
	ck_assert_uint_eq(s.hop_ptr, 2);
	ck_assert_uint_eq(s.hop_cnt, 3);
	ck_assert_uint_eq(s.mkey, 0xabcdef);
	ck_assert_uint_eq(s.dr_slid, 0xffff);
	ck_assert_uint_eq(s.initial_path[3], 9);
	ck_assert_uint_eq(s.return_path[1], 2);
	ck_assert_uint_eq(s.data[0], 0x42);
	ROUND_TRIP(mad_smp, mad_smp, m, 256);

	/* SA header and RMPP header */
	uint8_t sa[256] = {0};
	sa[0] = 1;
	sa[1] = 3;
	sa[2] = 2;
	sa[3] = 0x92;
	sa[24] = 1;                 /* RMPPVersion */
	sa[25] = 1;                 /* RMPPType DATA */
	sa[26] = (0x1f << 3) | 0x3; /* RRespTime | Flags Active+First */
	sa[27] = 0;
	put32(sa, 28, 1);   /* SegmentNumber */
	put32(sa, 32, 660); /* PayloadLength */
	put64(sa, 36, 0x1122334455667788ull);
	put16(sa, 44, 9);    /* AttributeOffset */
	put64(sa, 48, 0x30); /* ComponentMask */
	struct mad_sa_hdr h;
	ck_assert_int_eq(mad_sa_hdr_decode(sa, 256, &h, NULL), 0);
	ck_assert_uint_eq(h.hdr.method, 0x92);
	ck_assert_uint_eq(h.rmpp.version, 1);
	ck_assert_uint_eq(h.rmpp.type, 1);
	ck_assert_uint_eq(h.rmpp.resp_time, 0x1f);
	ck_assert_uint_eq(h.rmpp.flags, 3);
	ck_assert_uint_eq(h.rmpp.data1, 1);
	ck_assert_uint_eq(h.rmpp.data2, 660);
	ck_assert_uint_eq(h.sm_key, 0x1122334455667788ull);
	ck_assert_uint_eq(h.attr_offset, 9);
	ck_assert_uint_eq(h.comp_mask, 0x30);
	ROUND_TRIP(mad_sa_hdr, mad_sa_hdr, sa, 56);
}
END_TEST

START_TEST(lid_routed_smp_keeps_status)
{
	struct mad_smp s;
	mad_smp_init_lid(&s, MAD_METHOD_SET, MAD_ATTR_PORT_INFO, 1);
	s.hdr.status = 0x001c;
	s.hop_cnt = 9; /* must not be written for a LID-routed SMP */
	uint8_t b[256] = {0};
	ck_assert_int_eq(mad_smp_encode(&s, b, 256, NULL), 0);
	ck_assert_uint_eq(b[1], 0x01);
	ck_assert_uint_eq(b[5], 0x1c);
	ck_assert_uint_eq(b[7], 0);
}
END_TEST

/* ---- table-wide properties ---- */

static const struct mad_layout *const *all_tables[] = {mad_smp_layouts, mad_sa_layouts,
                                                       mad_cc_layouts};

static void field_span(const struct mad_layout *l, const struct mad_field *f, uint8_t *span,
                       size_t cap)
{
	uint8_t host[2048];
	memset(host, 0, sizeof(host));
	size_t width = f->type == MF_U8    ? 1
	               : f->type == MF_U16 ? 2
	               : f->type == MF_U32 ? 4
	               : f->type == MF_U64 ? 8
	                                   : f->bytes;
	size_t n = f->count > 1 ? f->count : 1;
	memset(host + f->off, 0xff, width * n);
	struct mad_layout one = *l;
	one.nfields = 1;
	one.fields = f;
	memset(span, 0, cap);
	ck_assert_int_eq(mad_layout_encode(&one, host, span, cap, NULL), 0);
}

/* The Congestion Control attributes as IBA A10.4.3 lays them out (bytes written by hand,
 * not by libibmad), and the CC_Key's place in the MAD. */
START_TEST(cc_attrs_spec)
{
	uint8_t b[192] = {0};
	put16(b, 0, 0x0001);
	b[2] = 2; /* ControlTableCap */
	struct mad_cc_info ci;
	ck_assert_int_eq(mad_cc_info_decode(b, sizeof(b), &ci, NULL), 0);
	ck_assert_uint_eq(ci.info, 1);
	ck_assert_uint_eq(ci.control_table_cap, 2);

	memset(b, 0, sizeof(b));
	put64(b, 0, 0x1122334455667788ull);
	b[8] = 0x80; /* CC_KeyProtectBit */
	put16(b, 10, 60);
	put16(b, 12, 3);
	struct mad_cc_key_info ki;
	ck_assert_int_eq(mad_cc_key_info_decode(b, sizeof(b), &ki, NULL), 0);
	ck_assert_uint_eq(ki.cc_key, 0x1122334455667788ull);
	ck_assert_uint_eq(ki.protect, 1);
	ck_assert_uint_eq(ki.lease_period, 60);
	ck_assert_uint_eq(ki.violations, 3);
	ROUND_TRIP(mad_cc_key_info, mad_cc_key_info, b, 16);

	memset(b, 0, sizeof(b));
	put32(b, 0, 0x1f);
	b[4 + 31] = 0x06;  /* victim mask: ports 1 and 2 */
	b[36 + 30] = 0x01; /* credit mask: port 8 */
	b[68] = 0xa0;      /* Threshold 10 in the upper nibble */
	b[69] = 8;         /* Packet_Size */
	b[70] = 0x30;      /* CS_Threshold 3 in the upper nibble */
	put16(b, 72, (uint16_t)(1u << 14 | 5));
	put16(b, 74, 100);
	struct mad_cc_switch_setting sw;
	ck_assert_int_eq(mad_cc_switch_setting_decode(b, sizeof(b), &sw, NULL), 0);
	ck_assert_uint_eq(sw.control_map, 0x1f);
	ck_assert_uint_eq(sw.victim_mask[31], 0x06);
	ck_assert_uint_eq(sw.credit_mask[30], 0x01);
	ck_assert_uint_eq(sw.threshold, 10);
	ck_assert_uint_eq(sw.packet_size, 8);
	ck_assert_uint_eq(sw.cs_threshold, 3);
	ck_assert_uint_eq(sw.cs_return_delay, 1u << 14 | 5);
	ck_assert_uint_eq(sw.marking_rate, 100);
	ROUND_TRIP(mad_cc_switch_setting, mad_cc_switch_setting, b, 76);

	memset(b, 0, sizeof(b));
	put16(b, 0, 1);       /* Port_Control */
	put16(b, 2, 0x0003);  /* Control_Map: SLs 0 and 1 */
	put16(b, 4 + 8, 500); /* SL 1: CCTI_Timer */
	b[4 + 8 + 2] = 2;     /* CCTI_Increase */
	b[4 + 8 + 3] = 7;     /* Trigger_Threshold */
	b[4 + 8 + 4] = 1;     /* CCTI_Min */
	struct mad_cc_ca_setting ca;
	ck_assert_int_eq(mad_cc_ca_setting_decode(b, sizeof(b), &ca, NULL), 0);
	ck_assert_uint_eq(ca.port_control, 1);
	ck_assert_uint_eq(ca.control_map, 3);
	ck_assert_uint_eq(ca.ccti_timer[1], 500);
	ck_assert_uint_eq(ca.ccti_increase[1], 2);
	ck_assert_uint_eq(ca.trigger_threshold[1], 7);
	ck_assert_uint_eq(ca.ccti_min[1], 1);
	ck_assert_uint_eq(ca.ccti_timer[0], 0);
	ROUND_TRIP(mad_cc_ca_setting, mad_cc_ca_setting, b, 132);

	memset(b, 0, sizeof(b));
	put16(b, 0, 127);
	put16(b, 4 + 2 * 63, (uint16_t)(3u << 14 | 0x3fff));
	struct mad_cc_table ct;
	ck_assert_int_eq(mad_cc_table_decode(b, sizeof(b), &ct, NULL), 0);
	ck_assert_uint_eq(ct.ccti_limit, 127);
	ck_assert_uint_eq(ct.entry[63], 0xffff);
	ck_assert_uint_eq(ct.entry[0], 0);
	ROUND_TRIP(mad_cc_table, mad_cc_table, b, 132);

	uint8_t m[256];
	ck_assert_uint_eq(mad_cc_request(m, MAD_METHOD_SET, MAD_ATTR_CC_TABLE, 1, 0xabcdull), 256);
	ck_assert_uint_eq(m[1], 0x21);
	ck_assert_uint_eq(m[2], 2);
	ck_assert_uint_eq(m[3], MAD_METHOD_SET);
	ck_assert_uint_eq(m[17], 0x17);
	ck_assert_uint_eq(m[23], 1);
	ck_assert_uint_eq(m[30], 0xab);
	ck_assert_uint_eq(m[31], 0xcd);
	ck_assert_uint_eq(mad_cc_key(m), 0xabcdull);
	struct mad_error err;
	ck_assert_ptr_eq(mad_attr_layout(0x21, 0x0016, &err), &mad_cc_ca_setting_layout);
}
END_TEST

START_TEST(fields_inside_size_and_disjoint)
{
	for (size_t t = 0; t < sizeof(all_tables) / sizeof(all_tables[0]); t++) {
		for (const struct mad_layout *const *lp = all_tables[t]; *lp; lp++) {
			const struct mad_layout *l = *lp;
			uint8_t used[600] = {0}, span[600];
			ck_assert_uint_le(l->size, 512);
			for (unsigned i = 0; i < l->nfields; i++) {
				const struct mad_field *f = &l->fields[i];
				if (f->type == MF_NESTED)
					continue;
				field_span(l, f, span, sizeof(span));
				for (size_t b = 0; b < sizeof(span); b++) {
					if (b >= l->size && span[b])
						ck_abort_msg("%s.%s writes byte %zu past size %u",
						             l->name, f->name, b, l->size);
					if (used[b] & span[b])
						ck_abort_msg(
						    "%s.%s overlaps another field at byte %zu",
						    l->name, f->name, b);
					used[b] |= span[b];
				}
				int any = 0;
				for (size_t b = 0; b < sizeof(span); b++)
					any |= span[b];
				ck_assert_msg(any, "%s.%s encodes nothing", l->name, f->name);
			}
		}
	}
}
END_TEST

START_TEST(random_bytes_round_trip)
{
	srand(42);
	for (size_t t = 0; t < sizeof(all_tables) / sizeof(all_tables[0]); t++) {
		for (const struct mad_layout *const *lp = all_tables[t]; *lp; lp++) {
			const struct mad_layout *l = *lp;
			for (int iter = 0; iter < 50; iter++) {
				uint8_t w[512], w2[512] = {0}, w3[512] = {0};
				uint8_t h1[2048], h2[2048];
				for (size_t i = 0; i < sizeof(w); i++)
					w[i] = (uint8_t)rand();
				ck_assert_int_eq(mad_layout_decode(l, w, l->size, h1, NULL), 0);
				ck_assert_int_eq(mad_layout_encode(l, h1, w2, l->size, NULL), 0);
				ck_assert_int_eq(mad_layout_decode(l, w2, l->size, h2, NULL), 0);
				ck_assert_mem_eq(h1, h2, l->host_size);
				ck_assert_int_eq(mad_layout_encode(l, h2, w3, l->size, NULL), 0);
				ck_assert_mem_eq(w2, w3, l->size);
			}
		}
	}
}
END_TEST

START_TEST(short_buffers_rejected)
{
	for (size_t t = 0; t < sizeof(all_tables) / sizeof(all_tables[0]); t++) {
		for (const struct mad_layout *const *lp = all_tables[t]; *lp; lp++) {
			const struct mad_layout *l = *lp;
			/* Exactly the size of the data, in its own allocation: ASan catches any
			 * read past it. */
			uint8_t *b = calloc(1, l->size - 1);
			uint8_t host[2048];
			struct mad_error err = {""};
			ck_assert_int_eq(mad_layout_decode(l, b, l->size - 1u, host, &err), -1);
			ck_assert_ptr_nonnull(strstr(err.msg, "short buffer"));
			ck_assert_int_eq(mad_layout_encode(l, host, b, l->size - 1u, &err), -1);
			ck_assert_int_eq(mad_layout_decode(l, NULL, 0, host, &err), -1);
			free(b);
		}
	}
}
END_TEST

START_TEST(malformed_smps)
{
	uint8_t *m = calloc(1, 256);
	struct mad_smp s;
	struct mad_error err;
	m[0] = 1;
	m[1] = 0x81;
	m[7] = 64; /* HopCount beyond 63 */
	ck_assert_int_eq(mad_smp_decode(m, 256, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "HopCount"));
	m[7] = 2;
	m[6] = 4; /* HopPointer beyond HopCount + 1 */
	ck_assert_int_eq(mad_smp_decode(m, 256, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "HopPointer"));
	m[6] = 0;
	m[1] = 0x03; /* not an SMP class */
	ck_assert_int_eq(mad_smp_decode(m, 256, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "MgmtClass"));
	m[1] = 0x81;
	m[0] = 2; /* bad BaseVersion */
	ck_assert_int_eq(mad_smp_decode(m, 256, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "BaseVersion"));
	ck_assert_int_eq(mad_smp_decode(m, 100, &s, &err), -1); /* truncated */
	free(m);

	uint8_t path[64];
	ck_assert_int_eq(mad_dr_path_parse("0,1,5,3", path, &err), 3);
	ck_assert_uint_eq(path[2], 5);
	ck_assert_int_eq(mad_dr_path_parse("1,2", path, &err), 2);
	ck_assert_int_eq(mad_dr_path_parse("0", path, &err), 0);
	ck_assert_int_eq(mad_dr_path_parse("1,x", path, &err), -1);
	ck_assert_int_eq(mad_dr_path_parse("1,256", path, &err), -1);
	ck_assert_int_eq(mad_dr_path_parse("1;2", path, &err), -1);
	char longp[300] = "0";
	for (int i = 0; i < 64; i++)
		strcat(longp, ",1");
	ck_assert_int_eq(mad_dr_path_parse(longp, path, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "more than 63"));
}
END_TEST

START_TEST(unknown_attributes)
{
	struct mad_error err;
	ck_assert_ptr_eq(mad_attr_layout(0x81, 0x0015, &err), &mad_port_info_layout);
	ck_assert_ptr_eq(mad_attr_layout(0x03, 0x0035, &err), &mad_path_record_layout);
	ck_assert_ptr_null(mad_attr_layout(0x81, 0x7777, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown AttributeID 0x7777"));
	ck_assert_ptr_null(mad_attr_layout(0x42, 0x0011, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "0x42"));
}
END_TEST

static Suite *codec_suite(void)
{
	Suite *s = suite_create("codec");
	TCase *tc = tcase_create("spec vectors");
	tcase_add_test(tc, node_info_spec);
	tcase_add_test(tc, node_desc_spec);
	tcase_add_test(tc, port_info_spec);
	tcase_add_test(tc, link_rates);
	tcase_add_test(tc, switch_info_spec);
	tcase_add_test(tc, tables_spec);
	tcase_add_test(tc, vport_attrs_spec);
	tcase_add_test(tc, cc_attrs_spec);
	tcase_add_test(tc, sm_info_and_notice_spec);
	tcase_add_test(tc, class_port_info_spec);
	tcase_add_test(tc, path_record_spec);
	tcase_add_test(tc, mcmember_record_spec);
	tcase_add_test(tc, service_and_inform_spec);
	tcase_add_test(tc, records_embedding_attributes);
	tcase_add_test(tc, multipath_record_spec);
	tcase_add_test(tc, headers_spec);
	tcase_add_test(tc, lid_routed_smp_keeps_status);
	suite_add_tcase(s, tc);
	TCase *props = tcase_create("properties");
	tcase_add_test(props, fields_inside_size_and_disjoint);
	tcase_add_test(props, random_bytes_round_trip);
	tcase_add_test(props, short_buffers_rejected);
	tcase_add_test(props, malformed_smps);
	tcase_add_test(props, unknown_attributes);
	suite_add_tcase(s, props);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(codec_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
