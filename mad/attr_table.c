/* Which layout carries which attribute, for code that meets attributes by ID (SMA, SA, CLI). */
#include "mad/attr_table.h"

#include <stddef.h>

#include "mad/cc.h"
#include "mad/mad_types.h"
#include "mad/sa_records.h"
#include "mad/smp_attrs.h"

struct attr_entry {
	uint16_t id;
	const struct mad_layout *layout;
};

static const struct attr_entry smp_attrs[] = {
    {MAD_ATTR_NODE_DESC, &mad_node_desc_layout},
    {MAD_ATTR_NODE_INFO, &mad_node_info_layout},
    {MAD_ATTR_SWITCH_INFO, &mad_switch_info_layout},
    {MAD_ATTR_GUID_INFO, &mad_guid_info_layout},
    {MAD_ATTR_PORT_INFO, &mad_port_info_layout},
    {MAD_ATTR_PKEY_TABLE, &mad_pkey_table_layout},
    {MAD_ATTR_SL2VL_TABLE, &mad_sl2vl_table_layout},
    {MAD_ATTR_VLARB_TABLE, &mad_vlarb_table_layout},
    {MAD_ATTR_LFT, &mad_lft_block_layout},
    {MAD_ATTR_MFT, &mad_mft_block_layout},
    {MAD_ATTR_SM_INFO, &mad_sm_info_layout},
    {MAD_ATTR_NOTICE, &mad_notice_layout},
};

static const struct attr_entry sa_attrs[] = {
    {MAD_ATTR_CLASS_PORT_INFO, &mad_class_port_info_layout},
    {MAD_ATTR_NOTICE, &mad_notice_layout},
    {MAD_ATTR_INFORM_INFO, &mad_inform_info_layout},
    {MAD_ATTR_NODE_RECORD, &mad_node_record_layout},
    {MAD_ATTR_PORT_INFO_RECORD, &mad_port_info_record_layout},
    {MAD_ATTR_SL2VL_RECORD, &mad_sl2vl_record_layout},
    {MAD_ATTR_SWITCH_INFO_RECORD, &mad_switch_info_record_layout},
    {MAD_ATTR_LFT_RECORD, &mad_lft_record_layout},
    {MAD_ATTR_MFT_RECORD, &mad_mft_record_layout},
    {MAD_ATTR_SM_INFO_RECORD, &mad_sm_info_record_layout},
    {MAD_ATTR_LINK_RECORD, &mad_link_record_layout},
    {MAD_ATTR_GUID_INFO_RECORD, &mad_guid_info_record_layout},
    {MAD_ATTR_SERVICE_RECORD, &mad_service_record_layout},
    {MAD_ATTR_PKEY_TABLE_RECORD, &mad_pkey_table_record_layout},
    {MAD_ATTR_PATH_RECORD, &mad_path_record_layout},
    {MAD_ATTR_VLARB_RECORD, &mad_vlarb_record_layout},
    {MAD_ATTR_MCMEMBER_RECORD, &mad_mcmember_record_layout},
    {MAD_ATTR_MULTIPATH_RECORD, &mad_multipath_record_layout},
    {MAD_ATTR_INFORM_INFO_RECORD, &mad_inform_info_record_layout},
};

static const struct attr_entry cc_attrs[] = {
    {MAD_ATTR_CC_INFO, &mad_cc_info_layout},
    {MAD_ATTR_CC_KEY_INFO, &mad_cc_key_info_layout},
    {MAD_ATTR_CC_SWITCH_SETTING, &mad_cc_switch_setting_layout},
    {MAD_ATTR_CC_CA_SETTING, &mad_cc_ca_setting_layout},
    {MAD_ATTR_CC_TABLE, &mad_cc_table_layout},
};

const struct mad_layout *mad_attr_layout(uint8_t mgmt_class, uint16_t attr_id,
                                         struct mad_error *err)
{
	const struct attr_entry *t = NULL;
	size_t n = 0;
	switch (mgmt_class) {
	case MAD_CLASS_SUBN_LID:
	case MAD_CLASS_SUBN_DR:
		t = smp_attrs;
		n = sizeof(smp_attrs) / sizeof(smp_attrs[0]);
		break;
	case MAD_CLASS_SUBN_ADM:
		t = sa_attrs;
		n = sizeof(sa_attrs) / sizeof(sa_attrs[0]);
		break;
	case MAD_CLASS_CC:
		t = cc_attrs;
		n = sizeof(cc_attrs) / sizeof(cc_attrs[0]);
		break;
	default:
		mad_error_set(err, "MgmtClass 0x%02x: no attributes known", mgmt_class);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (t[i].id == attr_id)
			return t[i].layout;
	mad_error_set(err, "%s: unknown AttributeID 0x%04x", mad_class_str(mgmt_class), attr_id);
	return NULL;
}
