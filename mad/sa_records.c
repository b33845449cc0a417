/* Field tables of the SA records. Hand-described offsets are spec bit offsets from the start of
 * the record (IBA vol. 1, 15.2.5); records that embed an SM attribute reuse its layout. */
#include "mad/sa_records.h"

#include <string.h>

#include <infiniband/mad.h>

#define S struct mad_node_record
static const struct mad_field node_record_fields[] = {
    MAD_F(S, lid, MF_U16, IB_SA_NR_LID_F),
    MAD_N(S, info, mad_node_info_layout, 4),
    MAD_N(S, desc, mad_node_desc_layout, 44),
};
MAD_LAYOUT(mad_node_record_layout, mad_node_record, 108, node_record_fields);
#undef S

#define S struct mad_port_info_record
static const struct mad_field port_info_record_fields[] = {
    MAD_H(S, lid, MF_U16, 0, 16),
    MAD_H(S, port_num, MF_U8, 16, 8),
    MAD_H(S, options, MF_U8, 24, 8),
    MAD_N(S, info, mad_port_info_layout, 4),
};
MAD_LAYOUT(mad_port_info_record_layout, mad_port_info_record, 68, port_info_record_fields);
#undef S

#define S struct mad_switch_info_record
static const struct mad_field switch_info_record_fields[] = {
    MAD_H(S, lid, MF_U16, 0, 16),
    MAD_N(S, info, mad_switch_info_layout, 4),
};
MAD_LAYOUT(mad_switch_info_record_layout, mad_switch_info_record, 24, switch_info_record_fields);
#undef S

#define S struct mad_link_record
static const struct mad_field link_record_fields[] = {
    MAD_H(S, from_lid, MF_U16, 0, 16),
    MAD_H(S, from_port, MF_U8, 16, 8),
    MAD_H(S, to_port, MF_U8, 24, 8),
    MAD_H(S, to_lid, MF_U16, 32, 16),
};
MAD_LAYOUT(mad_link_record_layout, mad_link_record, 8, link_record_fields);
#undef S

#define S struct mad_guid_info_record
static const struct mad_field guid_info_record_fields[] = {
    MAD_F(S, lid, MF_U16, IB_SA_GIR_LID_F),
    MAD_F(S, block_num, MF_U8, IB_SA_GIR_BLOCKNUM_F),
    MAD_N(S, info, mad_guid_info_layout, 8),
};
MAD_LAYOUT(mad_guid_info_record_layout, mad_guid_info_record, 72, guid_info_record_fields);
#undef S

#define S struct mad_pkey_table_record
static const struct mad_field pkey_table_record_fields[] = {
    MAD_H(S, lid, MF_U16, 0, 16),
    MAD_H(S, block_num, MF_U16, 16, 16),
    MAD_H(S, port_num, MF_U8, 32, 8),
    MAD_N(S, table, mad_pkey_table_layout, 8),
};
MAD_LAYOUT(mad_pkey_table_record_layout, mad_pkey_table_record, 72, pkey_table_record_fields);
#undef S

#define S struct mad_sl2vl_record
static const struct mad_field sl2vl_record_fields[] = {
    MAD_H(S, lid, MF_U16, 0, 16),
    MAD_H(S, in_port, MF_U8, 16, 8),
    MAD_H(S, out_port, MF_U8, 24, 8),
    MAD_N(S, table, mad_sl2vl_table_layout, 8),
};
MAD_LAYOUT(mad_sl2vl_record_layout, mad_sl2vl_record, 16, sl2vl_record_fields);
#undef S

#define S struct mad_vlarb_record
static const struct mad_field vlarb_record_fields[] = {
    MAD_H(S, lid, MF_U16, 0, 16),
    MAD_H(S, out_port, MF_U8, 16, 8),
    MAD_H(S, block_num, MF_U8, 24, 8),
    MAD_N(S, table, mad_vlarb_table_layout, 8),
};
MAD_LAYOUT(mad_vlarb_record_layout, mad_vlarb_record, 72, vlarb_record_fields);
#undef S

#define S struct mad_lft_record
static const struct mad_field lft_record_fields[] = {
    MAD_H(S, lid, MF_U16, 0, 16),
    MAD_H(S, block_num, MF_U16, 16, 16),
    MAD_N(S, lft, mad_lft_block_layout, 8),
};
MAD_LAYOUT(mad_lft_record_layout, mad_lft_record, 72, lft_record_fields);
#undef S

#define S struct mad_mft_record
static const struct mad_field mft_record_fields[] = {
    MAD_H(S, lid, MF_U16, 0, 16),
    MAD_H(S, position, MF_U8, 16, 4),
    MAD_H(S, block_num, MF_U16, 23, 9),
    MAD_N(S, mft, mad_mft_block_layout, 8),
};
MAD_LAYOUT(mad_mft_record_layout, mad_mft_record, 72, mft_record_fields);
#undef S

#define S struct mad_sm_info_record
static const struct mad_field sm_info_record_fields[] = {
    MAD_H(S, lid, MF_U16, 0, 16),
    MAD_N(S, info, mad_sm_info_layout, 4),
};
MAD_LAYOUT(mad_sm_info_record_layout, mad_sm_info_record, 25, sm_info_record_fields);
#undef S

/* libibmad has only GIDs, LIDs, NumbPath and SL of the PathRecord. */
#define S struct mad_path_record
static const struct mad_field path_record_fields[] = {
    MAD_H(S, service_id, MF_U64, 0, 64),
    MAD_FB(S, dgid, IB_SA_PR_DGID_F),
    MAD_FB(S, sgid, IB_SA_PR_SGID_F),
    MAD_F(S, dlid, MF_U16, IB_SA_PR_DLID_F),
    MAD_F(S, slid, MF_U16, IB_SA_PR_SLID_F),
    MAD_H(S, raw_traffic, MF_U8, 352, 1),
    MAD_H(S, flow_label, MF_U32, 356, 20),
    MAD_H(S, hop_limit, MF_U8, 376, 8),
    MAD_H(S, tclass, MF_U8, 384, 8),
    MAD_H(S, reversible, MF_U8, 392, 1),
    MAD_F(S, num_path, MF_U8, IB_SA_PR_NPATH_F),
    MAD_H(S, pkey, MF_U16, 400, 16),
    MAD_H(S, qos_class, MF_U16, 416, 12),
    MAD_F(S, sl, MF_U8, IB_SA_PR_SL_F),
    MAD_H(S, mtu_selector, MF_U8, 432, 2),
    MAD_H(S, mtu, MF_U8, 434, 6),
    MAD_H(S, rate_selector, MF_U8, 440, 2),
    MAD_H(S, rate, MF_U8, 442, 6),
    MAD_H(S, pkt_life_selector, MF_U8, 448, 2),
    MAD_H(S, pkt_life, MF_U8, 450, 6),
    MAD_H(S, preference, MF_U8, 456, 8),
};
MAD_LAYOUT(mad_path_record_layout, mad_path_record, 64, path_record_fields);
#undef S

/* The fixed 24 bytes of a MultiPathRecord; the GIDs follow (see the codec below). */
#define S struct mad_multipath_record
static const struct mad_field multipath_record_fields[] = {
    MAD_H(S, raw_traffic, MF_U8, 0, 1),
    MAD_H(S, flow_label, MF_U32, 4, 20),
    MAD_H(S, hop_limit, MF_U8, 24, 8),
    MAD_H(S, tclass, MF_U8, 32, 8),
    MAD_H(S, reversible, MF_U8, 40, 1),
    MAD_F(S, num_path, MF_U8, IB_SA_MP_NPATH_F),
    MAD_H(S, pkey, MF_U16, 48, 16),
    MAD_H(S, qos_class, MF_U16, 64, 12),
    MAD_H(S, sl, MF_U8, 76, 4),
    MAD_H(S, mtu_selector, MF_U8, 80, 2),
    MAD_H(S, mtu, MF_U8, 82, 6),
    MAD_H(S, rate_selector, MF_U8, 88, 2),
    MAD_H(S, rate, MF_U8, 90, 6),
    MAD_H(S, pkt_life_selector, MF_U8, 96, 2),
    MAD_H(S, pkt_life, MF_U8, 98, 6),
    MAD_H(S, service_id_hi8, MF_U8, 104, 8),
    MAD_H(S, independence_selector, MF_U8, 112, 2),
    MAD_F(S, sgid_count, MF_U8, IB_SA_MP_NSRC_F),
    MAD_F(S, dgid_count, MF_U8, IB_SA_MP_NDEST_F),
    MAD_H(S, service_id_lo56, MF_U64, 136, 56),
};
MAD_LAYOUT(mad_multipath_record_layout, mad_multipath_record, 24, multipath_record_fields);
#undef S

/* libibmad's MCMemberRecord FlowLabel is 24 bits and overlaps SL; it also lacks the selectors,
 * PacketLifeTime, HopLimit and Scope. */
#define S struct mad_mcmember_record
static const struct mad_field mcmember_record_fields[] = {
    MAD_FB(S, mgid, IB_SA_MCM_MGID_F),
    MAD_FB(S, port_gid, IB_SA_MCM_PORTGID_F),
    MAD_F(S, qkey, MF_U32, IB_SA_MCM_QKEY_F),
    MAD_F(S, mlid, MF_U16, IB_SA_MCM_MLID_F),
    MAD_H(S, mtu_selector, MF_U8, 304, 2),
    MAD_F(S, mtu, MF_U8, IB_SA_MCM_MTU_F),
    MAD_F(S, tclass, MF_U8, IB_SA_MCM_TCLASS_F),
    MAD_F(S, pkey, MF_U16, IB_SA_MCM_PKEY_F),
    MAD_H(S, rate_selector, MF_U8, 336, 2),
    MAD_F(S, rate, MF_U8, IB_SA_MCM_RATE_F),
    MAD_H(S, pkt_life_selector, MF_U8, 344, 2),
    MAD_H(S, pkt_life, MF_U8, 346, 6),
    MAD_F(S, sl, MF_U8, IB_SA_MCM_SL_F),
    MAD_H(S, flow_label, MF_U32, 356, 20),
    MAD_H(S, hop_limit, MF_U8, 376, 8),
    MAD_H(S, scope, MF_U8, 384, 4),
    MAD_F(S, join_state, MF_U8, IB_SA_MCM_JOIN_STATE_F),
    MAD_F(S, proxy_join, MF_U8, IB_SA_MCM_PROXY_JOIN_F),
};
MAD_LAYOUT(mad_mcmember_record_layout, mad_mcmember_record, 52, mcmember_record_fields);
#undef S

/* libibmad has ServiceData only as one 64-byte blob; the typed arrays are hand-described. */
#define S struct mad_service_record
static const struct mad_field service_record_fields[] = {
    MAD_F(S, id, MF_U64, IB_SA_SR_ID_F),
    MAD_FB(S, gid, IB_SA_SR_GID_F),
    MAD_F(S, pkey, MF_U16, IB_SA_SR_PKEY_F),
    MAD_F(S, lease, MF_U32, IB_SA_SR_LEASE_F),
    MAD_FB(S, key, IB_SA_SR_KEY_F),
    {.name = "name",
     .ibf = IB_SA_SR_NAME_F,
     .type = MF_TEXT,
     .bytes = 64,
     .off = offsetof(S, name)},
    MAD_HA(S, data8, MF_U8, 896, 8, 16, 8),
    MAD_HA(S, data16, MF_U16, 1024, 16, 8, 16),
    MAD_HA(S, data32, MF_U32, 1152, 32, 4, 32),
    MAD_HA(S, data64, MF_U64, 1280, 64, 2, 64),
};
MAD_LAYOUT(mad_service_record_layout, mad_service_record, 176, service_record_fields);
#undef S

/* libibmad has no InformInfo fields. */
#define S struct mad_inform_info
static const struct mad_field inform_info_fields[] = {
    MAD_HB(S, gid, 0),
    MAD_H(S, lid_range_begin, MF_U16, 128, 16),
    MAD_H(S, lid_range_end, MF_U16, 144, 16),
    MAD_H(S, is_generic, MF_U8, 176, 8),
    MAD_H(S, subscribe, MF_U8, 184, 8),
    MAD_H(S, type, MF_U16, 192, 16),
    MAD_H(S, trap_number, MF_U16, 208, 16),
    MAD_H(S, qpn, MF_U32, 224, 24),
    MAD_H(S, resp_time_value, MF_U8, 251, 5),
    MAD_H(S, producer_type, MF_U32, 264, 24),
};
MAD_LAYOUT(mad_inform_info_layout, mad_inform_info, 36, inform_info_fields);
#undef S

#define S struct mad_inform_info_record
static const struct mad_field inform_info_record_fields[] = {
    MAD_HB(S, subscriber_gid, 0),
    MAD_H(S, subscriber_enum, MF_U16, 128, 16),
    MAD_N(S, info, mad_inform_info_layout, 24),
};
MAD_LAYOUT(mad_inform_info_record_layout, mad_inform_info_record, 60, inform_info_record_fields);
#undef S

MAD_CODEC_DEFINE(mad_node_record, mad_node_record)
MAD_CODEC_DEFINE(mad_port_info_record, mad_port_info_record)
MAD_CODEC_DEFINE(mad_switch_info_record, mad_switch_info_record)
MAD_CODEC_DEFINE(mad_link_record, mad_link_record)
MAD_CODEC_DEFINE(mad_guid_info_record, mad_guid_info_record)
MAD_CODEC_DEFINE(mad_pkey_table_record, mad_pkey_table_record)
MAD_CODEC_DEFINE(mad_sl2vl_record, mad_sl2vl_record)
MAD_CODEC_DEFINE(mad_vlarb_record, mad_vlarb_record)
MAD_CODEC_DEFINE(mad_lft_record, mad_lft_record)
MAD_CODEC_DEFINE(mad_mft_record, mad_mft_record)
MAD_CODEC_DEFINE(mad_sm_info_record, mad_sm_info_record)
MAD_CODEC_DEFINE(mad_path_record, mad_path_record)
MAD_CODEC_DEFINE(mad_mcmember_record, mad_mcmember_record)
MAD_CODEC_DEFINE(mad_service_record, mad_service_record)
MAD_CODEC_DEFINE(mad_inform_info, mad_inform_info)
MAD_CODEC_DEFINE(mad_inform_info_record, mad_inform_info_record)

#define MPR_FIXED 24u

int mad_multipath_record_decode(const uint8_t *buf, size_t len, struct mad_multipath_record *out,
                                struct mad_error *err)
{
	if (mad_layout_decode(&mad_multipath_record_layout, buf, len, out, err) < 0)
		return -1;
	unsigned n = (unsigned)out->sgid_count + out->dgid_count;
	if (n > MAD_MPR_MAX_GIDS) {
		mad_error_set(err, "MultiPathRecord: SGIDCount %u + DGIDCount %u exceeds %u GIDs",
		              out->sgid_count, out->dgid_count, MAD_MPR_MAX_GIDS);
		return -1;
	}
	if (len < MPR_FIXED + 16u * n) {
		mad_error_set(err, "MultiPathRecord: %u GIDs need %u bytes, have %zu", n,
		              MPR_FIXED + 16u * n, len);
		return -1;
	}
	memcpy(out->gid, buf + MPR_FIXED, 16u * n);
	return 0;
}

int mad_multipath_record_encode(const struct mad_multipath_record *in, uint8_t *buf, size_t len,
                                struct mad_error *err)
{
	unsigned n = (unsigned)in->sgid_count + in->dgid_count;
	if (n > MAD_MPR_MAX_GIDS) {
		mad_error_set(err, "MultiPathRecord: %u GIDs exceed %u", n, MAD_MPR_MAX_GIDS);
		return -1;
	}
	if (len < MPR_FIXED + 16u * n) {
		mad_error_set(err, "MultiPathRecord: buffer of %zu bytes too small for %u GIDs",
		              len, n);
		return -1;
	}
	if (mad_layout_encode(&mad_multipath_record_layout, in, buf, len, err) < 0)
		return -1;
	memcpy(buf + MPR_FIXED, in->gid, 16u * n);
	return 0;
}

const struct mad_layout *const mad_sa_layouts[] = {
    &mad_node_record_layout,      &mad_port_info_record_layout,   &mad_switch_info_record_layout,
    &mad_link_record_layout,      &mad_guid_info_record_layout,   &mad_pkey_table_record_layout,
    &mad_sl2vl_record_layout,     &mad_vlarb_record_layout,       &mad_lft_record_layout,
    &mad_mft_record_layout,       &mad_sm_info_record_layout,     &mad_path_record_layout,
    &mad_multipath_record_layout, &mad_mcmember_record_layout,    &mad_service_record_layout,
    &mad_inform_info_layout,      &mad_inform_info_record_layout, NULL,
};
