/* Subnet management attributes (IBA vol. 1, 14.2.5) and the GS attributes the SM uses:
 * host structs and their codecs. Wire size of each is in its _layout.size. */
#ifndef IBSMD_MAD_SMP_ATTRS_H
#define IBSMD_MAD_SMP_ATTRS_H

#include <stdint.h>

#include "mad/mad_layout.h"

struct mad_node_info {
	uint8_t base_version, class_version, node_type, num_ports;
	uint64_t system_image_guid, node_guid, port_guid;
	uint16_t partition_cap, device_id;
	uint32_t revision;
	uint8_t local_port_num;
	uint32_t vendor_id;
};

struct mad_node_desc {
	char desc[65]; /* 64 on the wire; always NUL-terminated after decode */
};

struct mad_port_info {
	uint64_t mkey, gid_prefix;
	uint16_t lid, master_sm_lid;
	uint32_t capability_mask;
	uint16_t diag_code, mkey_lease_period;
	uint8_t local_port_num;
	uint8_t link_width_enabled, link_width_supported, link_width_active;
	uint8_t link_speed_supported, port_state, phys_state, link_down_default_state;
	uint8_t mkey_protect_bits, lmc, link_speed_active, link_speed_enabled;
	uint8_t neighbor_mtu, master_sm_sl, vl_cap, init_type;
	uint8_t vl_high_limit, vl_arb_high_cap, vl_arb_low_cap, init_type_reply, mtu_cap;
	uint8_t vl_stall_count, hoq_life, oper_vls;
	uint8_t partition_enforcement_inbound, partition_enforcement_outbound;
	uint8_t filter_raw_inbound, filter_raw_outbound;
	uint16_t mkey_violations, pkey_violations, qkey_violations;
	uint8_t guid_cap, client_reregister, mcast_pkey_trap_suppression, subnet_timeout;
	uint8_t resp_time_value, local_phy_errors, overrun_errors;
	uint16_t max_credit_hint;
	uint32_t link_round_trip_latency;
	uint16_t capability_mask2;
	uint8_t link_speed_ext_active, link_speed_ext_supported, link_speed_ext_enabled;
	/* XDR (IBA 1.7): byte 56, reserved before */
	uint8_t link_speed_ext_active2, link_speed_ext_supported2, link_speed_ext_enabled2;
};

/* PortInfo CapabilityMask bits the SM cares about */
#define PORT_CAP_IS_SM                         (1u << 1)
#define PORT_CAP_IS_NOTICE                     (1u << 2)
#define PORT_CAP_IS_TRAP                       (1u << 3)
#define PORT_CAP_HAS_SL_MAP                    (1u << 6) /* IsSLMappingSupported */
#define PORT_CAP_IS_SM_DISABLED                (1u << 10)
#define PORT_CAP_IS_CAP_MASK_NOTICE            (1u << 22)
#define PORT_CAP_HAS_CAP_MASK2                 (1u << 15)
#define PORT_CAP_HAS_CLIENT_REREG              (1u << 25) /* IsClientReregistrationSupported */
#define PORT_CAP_IS_OTHER_LOCAL_CHANGES_NOTICE (1u << 26) /* trap 144's ChangeFlags */

struct mad_switch_info {
	uint16_t linear_fdb_cap, random_fdb_cap, multicast_fdb_cap, linear_fdb_top;
	uint8_t default_port, default_mcast_primary_port, default_mcast_not_primary_port;
	uint8_t life_time_value, port_state_change, optimized_sl2vl_programming;
	uint16_t lids_per_port, partition_enforcement_cap;
	uint8_t inbound_enforcement_cap, outbound_enforcement_cap;
	uint8_t filter_raw_inbound_cap, filter_raw_outbound_cap, enhanced_port0;
	uint16_t multicast_fdb_top;
};

struct mad_guid_info {
	uint64_t guid[8];
};

struct mad_pkey_table {
	uint16_t pkey[32];
};

struct mad_sl2vl_table {
	uint8_t vl[16]; /* vl[sl] */
};

struct mad_vlarb_table {
	uint8_t vl[32];
	uint8_t weight[32];
};

struct mad_lft_block {
	uint8_t port[64];
};

struct mad_mft_block {
	uint16_t mask[32]; /* port mask of 16 ports (the block's position) per MLID */
};

struct mad_sm_info {
	uint64_t guid, sm_key;
	uint32_t act_count;
	uint8_t priority, state;
};

struct mad_notice {
	uint8_t is_generic, type;
	uint32_t producer_type; /* or VendorID when !is_generic */
	uint16_t trap_number;   /* or DeviceID when !is_generic */
	uint16_t issuer_lid;
	uint8_t toggle;
	uint16_t count;
	uint8_t data_details[54];
	uint8_t issuer_gid[16];
};

/* Trap 144's DataDetails (a port's local changes; IBA 14.2.5.1): the port's LID, whether it
 * tells of changes other than to its CapabilityMask (OtherLocalChanges), its CapabilityMask,
 * which of those other changes (ChangeFlags), its CapabilityMask2. */
struct mad_trap144 {
	uint16_t lid;
	uint8_t other_local_changes;
	uint32_t capability_mask;
	uint16_t change_flags;
	uint16_t capability_mask2;
};
#define TRAP144_NODE_DESC_CHANGE   0x0001u
#define TRAP144_LINK_WIDTH_CHANGE  0x0002u
#define TRAP144_LINK_SPEED_CHANGE  0x0004u
#define TRAP144_SM_PRIORITY_CHANGE 0x0008u
#define TRAP144_CAP_MASK2_CHANGE   0x0020u

struct mad_class_port_info {
	uint8_t base_version, class_version;
	uint16_t capability_mask;
	uint32_t capability_mask2;
	uint8_t resp_time_value;
	uint8_t redirect_gid[16];
	uint8_t redirect_tc, redirect_sl;
	uint32_t redirect_fl;
	uint16_t redirect_lid, redirect_pkey;
	uint32_t redirect_qp, redirect_qkey;
	uint8_t trap_gid[16];
	uint8_t trap_tc, trap_sl;
	uint32_t trap_fl;
	uint16_t trap_lid, trap_pkey;
	uint8_t trap_hl;
	uint32_t trap_qp, trap_qkey;
};

MAD_CODEC_DECLARE(mad_node_info, mad_node_info);
MAD_CODEC_DECLARE(mad_node_desc, mad_node_desc);
MAD_CODEC_DECLARE(mad_port_info, mad_port_info);
MAD_CODEC_DECLARE(mad_switch_info, mad_switch_info);
MAD_CODEC_DECLARE(mad_guid_info, mad_guid_info);
MAD_CODEC_DECLARE(mad_pkey_table, mad_pkey_table);
MAD_CODEC_DECLARE(mad_sl2vl_table, mad_sl2vl_table);
MAD_CODEC_DECLARE(mad_vlarb_table, mad_vlarb_table);
MAD_CODEC_DECLARE(mad_lft_block, mad_lft_block);
MAD_CODEC_DECLARE(mad_mft_block, mad_mft_block);
MAD_CODEC_DECLARE(mad_sm_info, mad_sm_info);
MAD_CODEC_DECLARE(mad_notice, mad_notice);
/* from and into a Notice's data_details (54 bytes) */
MAD_CODEC_DECLARE(mad_trap144, mad_trap144);
MAD_CODEC_DECLARE(mad_class_port_info, mad_class_port_info);

/* Every SM/GS attribute layout, for table-wide checks. NULL-terminated. */
extern const struct mad_layout *const mad_smp_layouts[];

#endif
