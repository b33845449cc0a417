/* Field tables of the Congestion Control attributes (IBA A10.4.3). libibmad's fields are used
 * where they are right; its CCT entry multiplier is 16 bits over the 2-bit shift, and it has
 * no arrays for the per-SL entries, so those are described by hand. */
#include "mad/cc.h"

#include <string.h>

#include <infiniband/mad.h>

#include "mad/mad_header.h"
#include "mad/mad_types.h"

#define S struct mad_cc_info
static const struct mad_field cc_info_fields[] = {
    MAD_F(S, info, MF_U16, IB_CC_CONGESTION_INFO_F),
    MAD_F(S, control_table_cap, MF_U8, IB_CC_CONGESTION_INFO_CONTROL_TABLE_CAP_F),
};
MAD_LAYOUT(mad_cc_info_layout, mad_cc_info, 4, cc_info_fields);
MAD_CODEC_DEFINE(mad_cc_info, mad_cc_info)
#undef S

#define S struct mad_cc_key_info
static const struct mad_field cc_key_info_fields[] = {
    MAD_F(S, cc_key, MF_U64, IB_CC_CONGESTION_KEY_INFO_CC_KEY_F),
    MAD_F(S, protect, MF_U8, IB_CC_CONGESTION_KEY_INFO_CC_KEY_PROTECT_BIT_F),
    MAD_F(S, lease_period, MF_U16, IB_CC_CONGESTION_KEY_INFO_CC_KEY_LEASE_PERIOD_F),
    MAD_F(S, violations, MF_U16, IB_CC_CONGESTION_KEY_INFO_CC_KEY_VIOLATIONS_F),
};
MAD_LAYOUT(mad_cc_key_info_layout, mad_cc_key_info, 16, cc_key_info_fields);
MAD_CODEC_DEFINE(mad_cc_key_info, mad_cc_key_info)
#undef S

#define S struct mad_cc_switch_setting
static const struct mad_field cc_switch_setting_fields[] = {
    MAD_F(S, control_map, MF_U32, IB_CC_SWITCH_CONGESTION_SETTING_CONTROL_MAP_F),
    MAD_HB(S, victim_mask, 32),
    MAD_HB(S, credit_mask, 288),
    MAD_F(S, threshold, MF_U8, IB_CC_SWITCH_CONGESTION_SETTING_THRESHOLD_F),
    MAD_F(S, packet_size, MF_U8, IB_CC_SWITCH_CONGESTION_SETTING_PACKET_SIZE_F),
    MAD_F(S, cs_threshold, MF_U8, IB_CC_SWITCH_CONGESTION_SETTING_CS_THRESHOLD_F),
    MAD_F(S, cs_return_delay, MF_U16, IB_CC_SWITCH_CONGESTION_SETTING_CS_RETURN_DELAY_F),
    MAD_F(S, marking_rate, MF_U16, IB_CC_SWITCH_CONGESTION_SETTING_MARKING_RATE_F),
};
MAD_LAYOUT(mad_cc_switch_setting_layout, mad_cc_switch_setting, 76, cc_switch_setting_fields);
MAD_CODEC_DEFINE(mad_cc_switch_setting, mad_cc_switch_setting)
#undef S

/* 16 entries of 8 bytes from byte 4: CCTI_Timer (16 bits), CCTI_Increase, Trigger_Threshold,
 * CCTI_Min, 3 reserved bytes */
#define S struct mad_cc_ca_setting
static const struct mad_field cc_ca_setting_fields[] = {
    MAD_F(S, port_control, MF_U16, IB_CC_CA_CONGESTION_SETTING_PORT_CONTROL_F),
    MAD_F(S, control_map, MF_U16, IB_CC_CA_CONGESTION_SETTING_CONTROL_MAP_F),
    MAD_HA(S, ccti_timer, MF_U16, 32, 16, MAD_CC_CA_SLS, 64),
    MAD_HA(S, ccti_increase, MF_U8, 48, 8, MAD_CC_CA_SLS, 64),
    MAD_HA(S, trigger_threshold, MF_U8, 56, 8, MAD_CC_CA_SLS, 64),
    MAD_HA(S, ccti_min, MF_U8, 64, 8, MAD_CC_CA_SLS, 64),
};
MAD_LAYOUT(mad_cc_ca_setting_layout, mad_cc_ca_setting, 132, cc_ca_setting_fields);
MAD_CODEC_DEFINE(mad_cc_ca_setting, mad_cc_ca_setting)
#undef S

#define S struct mad_cc_table
static const struct mad_field cc_table_fields[] = {
    MAD_F(S, ccti_limit, MF_U16, IB_CC_CONGESTION_CONTROL_TABLE_CCTI_LIMIT_F),
    MAD_HA(S, entry, MF_U16, 32, 16, MAD_CC_CCT_BLOCK, 16),
};
MAD_LAYOUT(mad_cc_table_layout, mad_cc_table, 132, cc_table_fields);
MAD_CODEC_DEFINE(mad_cc_table, mad_cc_table)
#undef S

const struct mad_layout *const mad_cc_layouts[] = {
    &mad_cc_info_layout,       &mad_cc_key_info_layout, &mad_cc_switch_setting_layout,
    &mad_cc_ca_setting_layout, &mad_cc_table_layout,    NULL,
};

size_t mad_cc_request(uint8_t *mad, uint8_t method, uint16_t attr, uint32_t mod, uint64_t cc_key)
{
	memset(mad, 0, MAD_SIZE);
	struct mad_hdr h = {.base_version = 1,
	                    .mgmt_class = MAD_CLASS_CC,
	                    .class_version = MAD_CLASS_VERSION_CC,
	                    .method = method,
	                    .attr_id = attr,
	                    .attr_mod = mod};
	mad_hdr_encode(&h, mad, MAD_SIZE, NULL);
	mad_bits_set(mad, MAD_CC_KEY_OFFSET * 8, 64, cc_key);
	return MAD_SIZE;
}

uint64_t mad_cc_key(const uint8_t *mad)
{
	return mad_bits_get(mad, MAD_CC_KEY_OFFSET * 8, 64);
}
