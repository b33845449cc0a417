/* Field tables of the SM attributes. Offsets of hand-described fields are spec bit offsets
 * from the start of the attribute (IBA vol. 1, 14.2.5). */
#include "mad/smp_attrs.h"
#include "mad/vport_attrs.h"

#include <infiniband/mad.h>

#define S struct mad_node_info
static const struct mad_field node_info_fields[] = {
    MAD_F(S, base_version, MF_U8, IB_NODE_BASE_VERS_F),
    MAD_F(S, class_version, MF_U8, IB_NODE_CLASS_VERS_F),
    MAD_F(S, node_type, MF_U8, IB_NODE_TYPE_F),
    MAD_F(S, num_ports, MF_U8, IB_NODE_NPORTS_F),
    MAD_F(S, system_image_guid, MF_U64, IB_NODE_SYSTEM_GUID_F),
    MAD_F(S, node_guid, MF_U64, IB_NODE_GUID_F),
    MAD_F(S, port_guid, MF_U64, IB_NODE_PORT_GUID_F),
    MAD_F(S, partition_cap, MF_U16, IB_NODE_PARTITION_CAP_F),
    MAD_F(S, device_id, MF_U16, IB_NODE_DEVID_F),
    MAD_F(S, revision, MF_U32, IB_NODE_REVISION_F),
    MAD_F(S, local_port_num, MF_U8, IB_NODE_LOCAL_PORT_F),
    MAD_F(S, vendor_id, MF_U32, IB_NODE_VENDORID_F),
};
MAD_LAYOUT(mad_node_info_layout, mad_node_info, 40, node_info_fields);
#undef S

/* libibmad copies exactly the 64 wire bytes; the 65th host byte stays the terminator. */
static const struct mad_field node_desc_fields[] = {
    {.name = "desc", .ibf = IB_NODE_DESC_F, .type = MF_TEXT, .bytes = 64},
};
MAD_LAYOUT(mad_node_desc_layout, mad_node_desc, 64, node_desc_fields);

#define S struct mad_port_info
static const struct mad_field port_info_fields[] = {
    MAD_F(S, mkey, MF_U64, IB_PORT_MKEY_F),
    MAD_F(S, gid_prefix, MF_U64, IB_PORT_GID_PREFIX_F),
    MAD_F(S, lid, MF_U16, IB_PORT_LID_F),
    MAD_F(S, master_sm_lid, MF_U16, IB_PORT_SMLID_F),
    MAD_F(S, capability_mask, MF_U32, IB_PORT_CAPMASK_F),
    MAD_F(S, diag_code, MF_U16, IB_PORT_DIAG_F),
    MAD_F(S, mkey_lease_period, MF_U16, IB_PORT_MKEY_LEASE_F),
    MAD_F(S, local_port_num, MF_U8, IB_PORT_LOCAL_PORT_F),
    MAD_F(S, link_width_enabled, MF_U8, IB_PORT_LINK_WIDTH_ENABLED_F),
    MAD_F(S, link_width_supported, MF_U8, IB_PORT_LINK_WIDTH_SUPPORTED_F),
    MAD_F(S, link_width_active, MF_U8, IB_PORT_LINK_WIDTH_ACTIVE_F),
    MAD_F(S, link_speed_supported, MF_U8, IB_PORT_LINK_SPEED_SUPPORTED_F),
    MAD_F(S, port_state, MF_U8, IB_PORT_STATE_F),
    MAD_F(S, phys_state, MF_U8, IB_PORT_PHYS_STATE_F),
    MAD_F(S, link_down_default_state, MF_U8, IB_PORT_LINK_DOWN_DEF_F),
    MAD_F(S, mkey_protect_bits, MF_U8, IB_PORT_MKEY_PROT_BITS_F),
    MAD_F(S, lmc, MF_U8, IB_PORT_LMC_F),
    MAD_F(S, link_speed_active, MF_U8, IB_PORT_LINK_SPEED_ACTIVE_F),
    MAD_F(S, link_speed_enabled, MF_U8, IB_PORT_LINK_SPEED_ENABLED_F),
    MAD_F(S, neighbor_mtu, MF_U8, IB_PORT_NEIGHBOR_MTU_F),
    MAD_F(S, master_sm_sl, MF_U8, IB_PORT_SMSL_F),
    MAD_F(S, vl_cap, MF_U8, IB_PORT_VL_CAP_F),
    MAD_F(S, init_type, MF_U8, IB_PORT_INIT_TYPE_F),
    MAD_F(S, vl_high_limit, MF_U8, IB_PORT_VL_HIGH_LIMIT_F),
    MAD_F(S, vl_arb_high_cap, MF_U8, IB_PORT_VL_ARBITRATION_HIGH_CAP_F),
    MAD_F(S, vl_arb_low_cap, MF_U8, IB_PORT_VL_ARBITRATION_LOW_CAP_F),
    MAD_F(S, init_type_reply, MF_U8, IB_PORT_INIT_TYPE_REPLY_F),
    MAD_F(S, mtu_cap, MF_U8, IB_PORT_MTU_CAP_F),
    MAD_F(S, vl_stall_count, MF_U8, IB_PORT_VL_STALL_COUNT_F),
    MAD_F(S, hoq_life, MF_U8, IB_PORT_HOQ_LIFE_F),
    MAD_F(S, oper_vls, MF_U8, IB_PORT_OPER_VLS_F),
    MAD_F(S, partition_enforcement_inbound, MF_U8, IB_PORT_PART_EN_INB_F),
    MAD_F(S, partition_enforcement_outbound, MF_U8, IB_PORT_PART_EN_OUTB_F),
    MAD_F(S, filter_raw_inbound, MF_U8, IB_PORT_FILTER_RAW_INB_F),
    MAD_F(S, filter_raw_outbound, MF_U8, IB_PORT_FILTER_RAW_OUTB_F),
    MAD_F(S, mkey_violations, MF_U16, IB_PORT_MKEY_VIOL_F),
    MAD_F(S, pkey_violations, MF_U16, IB_PORT_PKEY_VIOL_F),
    MAD_F(S, qkey_violations, MF_U16, IB_PORT_QKEY_VIOL_F),
    MAD_F(S, guid_cap, MF_U8, IB_PORT_GUID_CAP_F),
    MAD_F(S, client_reregister, MF_U8, IB_PORT_CLIENT_REREG_F),
    MAD_F(S, mcast_pkey_trap_suppression, MF_U8, IB_PORT_MCAST_PKEY_SUPR_ENAB_F),
    MAD_F(S, subnet_timeout, MF_U8, IB_PORT_SUBN_TIMEOUT_F),
    MAD_F(S, resp_time_value, MF_U8, IB_PORT_RESP_TIME_VAL_F),
    MAD_F(S, local_phy_errors, MF_U8, IB_PORT_LOCAL_PHYS_ERR_F),
    MAD_F(S, overrun_errors, MF_U8, IB_PORT_OVERRUN_ERR_F),
    MAD_F(S, max_credit_hint, MF_U16, IB_PORT_MAX_CREDIT_HINT_F),
    MAD_F(S, link_round_trip_latency, MF_U32, IB_PORT_LINK_ROUND_TRIP_F),
    MAD_F(S, capability_mask2, MF_U16, IB_PORT_CAPMASK2_F),
    MAD_F(S, link_speed_ext_active, MF_U8, IB_PORT_LINK_SPEED_EXT_ACTIVE_F),
    MAD_F(S, link_speed_ext_supported, MF_U8, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F),
    MAD_F(S, link_speed_ext_enabled, MF_U8, IB_PORT_LINK_SPEED_EXT_ENABLED_F),
    /* Debian's libibmad predates these (rdma-core 47 added them) */
    MAD_H(S, link_speed_ext_active2, MF_U8, 449, 2),
    MAD_H(S, link_speed_ext_supported2, MF_U8, 451, 2),
    MAD_H(S, link_speed_ext_enabled2, MF_U8, 453, 3),
};
MAD_LAYOUT(mad_port_info_layout, mad_port_info, 64, port_info_fields);
#undef S

#define S struct mad_switch_info
static const struct mad_field switch_info_fields[] = {
    MAD_F(S, linear_fdb_cap, MF_U16, IB_SW_LINEAR_FDB_CAP_F),
    MAD_F(S, random_fdb_cap, MF_U16, IB_SW_RANDOM_FDB_CAP_F),
    MAD_F(S, multicast_fdb_cap, MF_U16, IB_SW_MCAST_FDB_CAP_F),
    MAD_F(S, linear_fdb_top, MF_U16, IB_SW_LINEAR_FDB_TOP_F),
    MAD_F(S, default_port, MF_U8, IB_SW_DEF_PORT_F),
    MAD_F(S, default_mcast_primary_port, MF_U8, IB_SW_DEF_MCAST_PRIM_F),
    MAD_F(S, default_mcast_not_primary_port, MF_U8, IB_SW_DEF_MCAST_NOT_PRIM_F),
    MAD_F(S, life_time_value, MF_U8, IB_SW_LIFE_TIME_F),
    MAD_F(S, port_state_change, MF_U8, IB_SW_STATE_CHANGE_F),
    MAD_F(S, optimized_sl2vl_programming, MF_U8, IB_SW_OPT_SLTOVL_MAPPING_F),
    MAD_F(S, lids_per_port, MF_U16, IB_SW_LIDS_PER_PORT_F),
    MAD_F(S, partition_enforcement_cap, MF_U16, IB_SW_PARTITION_ENFORCE_CAP_F),
    MAD_F(S, inbound_enforcement_cap, MF_U8, IB_SW_PARTITION_ENF_INB_F),
    MAD_F(S, outbound_enforcement_cap, MF_U8, IB_SW_PARTITION_ENF_OUTB_F),
    MAD_F(S, filter_raw_inbound_cap, MF_U8, IB_SW_FILTER_RAW_INB_F),
    MAD_F(S, filter_raw_outbound_cap, MF_U8, IB_SW_FILTER_RAW_OUTB_F),
    MAD_F(S, enhanced_port0, MF_U8, IB_SW_ENHANCED_PORT0_F),
    MAD_F(S, multicast_fdb_top, MF_U16, IB_SW_MCAST_FDB_TOP_F),
};
MAD_LAYOUT(mad_switch_info_layout, mad_switch_info, 20, switch_info_fields);
#undef S

#define S struct mad_guid_info
static const struct mad_field guid_info_fields[] = {
    MAD_F(S, guid[0], MF_U64, IB_GI_GUID0_F), MAD_F(S, guid[1], MF_U64, IB_GI_GUID1_F),
    MAD_F(S, guid[2], MF_U64, IB_GI_GUID2_F), MAD_F(S, guid[3], MF_U64, IB_GI_GUID3_F),
    MAD_F(S, guid[4], MF_U64, IB_GI_GUID4_F), MAD_F(S, guid[5], MF_U64, IB_GI_GUID5_F),
    MAD_F(S, guid[6], MF_U64, IB_GI_GUID6_F), MAD_F(S, guid[7], MF_U64, IB_GI_GUID7_F),
};
MAD_LAYOUT(mad_guid_info_layout, mad_guid_info, 64, guid_info_fields);
#undef S

/* libibmad describes the following tables only as opaque blobs, so their entries are
 * hand-described. */
static const struct mad_field pkey_table_fields[] = {
    MAD_HA(struct mad_pkey_table, pkey, MF_U16, 0, 16, 32, 16),
};
MAD_LAYOUT(mad_pkey_table_layout, mad_pkey_table, 64, pkey_table_fields);

static const struct mad_field sl2vl_fields[] = {
    MAD_HA(struct mad_sl2vl_table, vl, MF_U8, 0, 4, 16, 4),
};
MAD_LAYOUT(mad_sl2vl_table_layout, mad_sl2vl_table, 8, sl2vl_fields);

static const struct mad_field vlarb_fields[] = {
    MAD_HA(struct mad_vlarb_table, vl, MF_U8, 4, 4, 32, 16),
    MAD_HA(struct mad_vlarb_table, weight, MF_U8, 8, 8, 32, 16),
};
MAD_LAYOUT(mad_vlarb_table_layout, mad_vlarb_table, 64, vlarb_fields);

static const struct mad_field lft_fields[] = {
    MAD_FB(struct mad_lft_block, port, IB_LINEAR_FORW_TBL_F),
};
MAD_LAYOUT(mad_lft_block_layout, mad_lft_block, 64, lft_fields);

static const struct mad_field mft_fields[] = {
    MAD_HA(struct mad_mft_block, mask, MF_U16, 0, 16, 32, 16),
};
MAD_LAYOUT(mad_mft_block_layout, mad_mft_block, 64, mft_fields);

#define S struct mad_sm_info
static const struct mad_field sm_info_fields[] = {
    MAD_F(S, guid, MF_U64, IB_SMINFO_GUID_F),     MAD_F(S, sm_key, MF_U64, IB_SMINFO_KEY_F),
    MAD_F(S, act_count, MF_U32, IB_SMINFO_ACT_F), MAD_F(S, priority, MF_U8, IB_SMINFO_PRIO_F),
    MAD_F(S, state, MF_U8, IB_SMINFO_STATE_F),
};
MAD_LAYOUT(mad_sm_info_layout, mad_sm_info, 21, sm_info_fields);
#undef S

/* libibmad's NoticeCount is 16 bits wide and overlaps NoticeToggle (the spec has 15), and it
 * has no IssuerGID: both hand-described. */
#define S struct mad_notice
static const struct mad_field notice_fields[] = {
    MAD_F(S, is_generic, MF_U8, IB_NOTICE_IS_GENERIC_F),
    MAD_F(S, type, MF_U8, IB_NOTICE_TYPE_F),
    MAD_F(S, producer_type, MF_U32, IB_NOTICE_PRODUCER_F),
    MAD_F(S, trap_number, MF_U16, IB_NOTICE_TRAP_NUMBER_F),
    MAD_F(S, issuer_lid, MF_U16, IB_NOTICE_ISSUER_LID_F),
    MAD_F(S, toggle, MF_U8, IB_NOTICE_TOGGLE_F),
    MAD_H(S, count, MF_U16, 65, 15),
    MAD_FB(S, data_details, IB_NOTICE_DATA_DETAILS_F),
    MAD_HB(S, issuer_gid, 512),
};
MAD_LAYOUT(mad_notice_layout, mad_notice, 80, notice_fields);
#undef S

/* libibmad has no fields for trap 144's details */
#define S struct mad_trap144
static const struct mad_field trap144_fields[] = {
    MAD_H(S, lid, MF_U16, 16, 16),
    MAD_H(S, other_local_changes, MF_U8, 47, 1),
    MAD_H(S, capability_mask, MF_U32, 48, 32),
    MAD_H(S, change_flags, MF_U16, 80, 16),
    MAD_H(S, capability_mask2, MF_U16, 96, 16),
};
MAD_LAYOUT(mad_trap144_layout, mad_trap144, 54, trap144_fields);
#undef S

/* libibmad's RedirectFL and TrapFL are 24 bits wide and overlap the SLs (the spec has 20). */
#define S struct mad_class_port_info
static const struct mad_field cpi_fields[] = {
    MAD_F(S, base_version, MF_U8, IB_CPI_BASEVER_F),
    MAD_F(S, class_version, MF_U8, IB_CPI_CLASSVER_F),
    MAD_F(S, capability_mask, MF_U16, IB_CPI_CAPMASK_F),
    MAD_F(S, capability_mask2, MF_U32, IB_CPI_CAPMASK2_F),
    MAD_F(S, resp_time_value, MF_U8, IB_CPI_RESP_TIME_VALUE_F),
    MAD_FB(S, redirect_gid, IB_CPI_REDIRECT_GID_F),
    MAD_F(S, redirect_tc, MF_U8, IB_CPI_REDIRECT_TC_F),
    MAD_F(S, redirect_sl, MF_U8, IB_CPI_REDIRECT_SL_F),
    MAD_H(S, redirect_fl, MF_U32, 204, 20),
    MAD_F(S, redirect_lid, MF_U16, IB_CPI_REDIRECT_LID_F),
    MAD_F(S, redirect_pkey, MF_U16, IB_CPI_REDIRECT_PKEY_F),
    MAD_F(S, redirect_qp, MF_U32, IB_CPI_REDIRECT_QP_F),
    MAD_F(S, redirect_qkey, MF_U32, IB_CPI_REDIRECT_QKEY_F),
    MAD_FB(S, trap_gid, IB_CPI_TRAP_GID_F),
    MAD_F(S, trap_tc, MF_U8, IB_CPI_TRAP_TC_F),
    MAD_F(S, trap_sl, MF_U8, IB_CPI_TRAP_SL_F),
    MAD_H(S, trap_fl, MF_U32, 460, 20),
    MAD_F(S, trap_lid, MF_U16, IB_CPI_TRAP_LID_F),
    MAD_F(S, trap_pkey, MF_U16, IB_CPI_TRAP_PKEY_F),
    MAD_F(S, trap_hl, MF_U8, IB_CPI_TRAP_HL_F),
    MAD_F(S, trap_qp, MF_U32, IB_CPI_TRAP_QP_F),
    MAD_F(S, trap_qkey, MF_U32, IB_CPI_TRAP_QKEY_F),
};
MAD_LAYOUT(mad_class_port_info_layout, mad_class_port_info, 72, cpi_fields);
#undef S

MAD_CODEC_DEFINE(mad_node_info, mad_node_info)
MAD_CODEC_DEFINE(mad_node_desc, mad_node_desc)
MAD_CODEC_DEFINE(mad_port_info, mad_port_info)
MAD_CODEC_DEFINE(mad_switch_info, mad_switch_info)
MAD_CODEC_DEFINE(mad_guid_info, mad_guid_info)
MAD_CODEC_DEFINE(mad_pkey_table, mad_pkey_table)
MAD_CODEC_DEFINE(mad_sl2vl_table, mad_sl2vl_table)
MAD_CODEC_DEFINE(mad_vlarb_table, mad_vlarb_table)
MAD_CODEC_DEFINE(mad_lft_block, mad_lft_block)
MAD_CODEC_DEFINE(mad_mft_block, mad_mft_block)
MAD_CODEC_DEFINE(mad_sm_info, mad_sm_info)
MAD_CODEC_DEFINE(mad_notice, mad_notice)
MAD_CODEC_DEFINE(mad_trap144, mad_trap144)
MAD_CODEC_DEFINE(mad_class_port_info, mad_class_port_info)

const struct mad_layout *const mad_smp_layouts[] = {
    &mad_node_info_layout,       &mad_node_desc_layout,   &mad_port_info_layout,
    &mad_switch_info_layout,     &mad_guid_info_layout,   &mad_pkey_table_layout,
    &mad_sl2vl_table_layout,     &mad_vlarb_table_layout, &mad_lft_block_layout,
    &mad_mft_block_layout,       &mad_sm_info_layout,     &mad_notice_layout,
    &mad_class_port_info_layout, &mad_virt_info_layout,   &mad_vport_info_layout,
    &mad_vnode_info_layout,      &mad_vport_state_layout, NULL,
};
