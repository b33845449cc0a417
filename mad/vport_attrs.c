/* Field tables of the virtualization attributes. libibmad has none of them, so every field
 * is hand-described by its bit offset from the start of the attribute. */
#include "mad/vport_attrs.h"

#define S struct mad_virt_info
static const struct mad_field virt_info_fields[] = {
    MAD_H(S, vport_cap, MF_U16, 0, 16),
    MAD_H(S, vport_index_top, MF_U16, 16, 16),
    MAD_H(S, enable, MF_U8, 32, 1),
    MAD_H(S, vclient_reregister, MF_U8, 33, 1),
    MAD_H(S, vport_state_change, MF_U8, 34, 1),
    MAD_H(S, revision, MF_U8, 48, 8),
    MAD_H(S, capability_mask, MF_U8, 56, 8),
};
MAD_LAYOUT(mad_virt_info_layout, mad_virt_info, 64, virt_info_fields);
#undef S

#define S struct mad_vport_info
static const struct mad_field vport_info_fields[] = {
    MAD_H(S, state, MF_U8, 0, 4),
    MAD_H(S, client_reregister, MF_U8, 4, 1),
    MAD_H(S, lid_required, MF_U8, 5, 1),
    MAD_H(S, guid_cap, MF_U8, 8, 8),
    MAD_H(S, capability_mask, MF_U16, 16, 16),
    MAD_H(S, pkey_violations, MF_U16, 32, 16),
    MAD_H(S, qkey_violations, MF_U16, 48, 16),
    MAD_H(S, lid, MF_U16, 64, 16),
    MAD_H(S, lid_by_index, MF_U16, 80, 16),
    MAD_H(S, port_guid, MF_U64, 96, 64),
    MAD_H(S, profile, MF_U64, 160, 64),
};
MAD_LAYOUT(mad_vport_info_layout, mad_vport_info, 64, vport_info_fields);
#undef S

#define S struct mad_vnode_info
static const struct mad_field vnode_info_fields[] = {
    MAD_H(S, partition_cap, MF_U16, 0, 16),
    MAD_H(S, local_port_num, MF_U8, 16, 8),
    MAD_H(S, num_ports, MF_U8, 24, 8),
    MAD_H(S, node_guid, MF_U64, 32, 64),
};
MAD_LAYOUT(mad_vnode_info_layout, mad_vnode_info, 64, vnode_info_fields);
#undef S

/* entry i at bit 4i: even vports in a byte's high nibble */
static const struct mad_field vport_state_fields[] = {
    MAD_HA(struct mad_vport_state, state, MF_U8, 0, 4, MAD_VPORT_STATE_BLOCK, 4),
};
MAD_LAYOUT(mad_vport_state_layout, mad_vport_state, 64, vport_state_fields);

MAD_CODEC_DEFINE(mad_virt_info, mad_virt_info)
MAD_CODEC_DEFINE(mad_vport_info, mad_vport_info)
MAD_CODEC_DEFINE(mad_vnode_info, mad_vnode_info)
MAD_CODEC_DEFINE(mad_vport_state, mad_vport_state)
