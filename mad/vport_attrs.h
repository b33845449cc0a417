/* Virtualization attributes (IBA Annex A18; IDs and layouts as NVIDIA's SM and ibutils2 give
 * them): the virtual ports (vports) an SR-IOV HCA shows behind one physical port, each with
 * its own GUID, state, P_Key table and, when it asks for one, LID. Host structs and codecs.
 *
 * The attribute modifiers are not in any public source this project could read; ibsmd and
 * fabricsim both take them from the helpers below, so a correction is made in one place. The
 * choice follows IBA's own tables addressed by port and block (a switch's P_KeyTable: port
 * in bits 31-16, block in 15-0): a vport in bits 31-16 where a table block is also needed,
 * else in 15-0; VPortState's block in 15-0. */
#ifndef IBSMD_MAD_VPORT_ATTRS_H
#define IBSMD_MAD_VPORT_ATTRS_H

#include <stdint.h>

#include "mad/mad_layout.h"

enum {
	MAD_ATTR_VIRT_INFO = 0xffb0,
	MAD_ATTR_VPORT_INFO = 0xffb1,
	MAD_ATTR_VNODE_INFO = 0xffb2,
	MAD_ATTR_VPORT_STATE = 0xffb3,
	MAD_ATTR_VNODE_DESC = 0xffb4,
	MAD_ATTR_VPORT_GUID_INFO = 0xffb5,
	MAD_ATTR_VPORT_PKEY_TABLE = 0xffb6,
};

/* PortInfo.CapabilityMask2: the port has virtual ports to manage */
#define MAD_CAP2_VIRT_SUPPORTED 0x0004
/* Vports per VPortState block (4 bits each), P_Keys per VPortPKeyTable block, GUIDs per
 * VPortGUIDInfo block */
#define MAD_VPORT_STATE_BLOCK 128
#define MAD_VPORT_PKEY_BLOCK  32
#define MAD_VPORT_GUID_BLOCK  8

struct mad_virt_info {
	uint16_t vport_cap;       /* vports the port can have */
	uint16_t vport_index_top; /* highest index of an enabled vport */
	uint8_t enable;           /* 0: vport 0 is the physical port and follows its state */
	uint8_t vclient_reregister;
	uint8_t vport_state_change; /* some vport changed; a Set with 1 clears it */
	uint8_t revision, capability_mask;
};

struct mad_vport_info {
	uint8_t state; /* PortState numbering: 1 Down (no VF), 2 Init, 3 Armed, 4 Active */
	uint8_t client_reregister;
	uint8_t lid_required; /* the vport asks for a LID of its own */
	uint8_t guid_cap;
	uint16_t capability_mask;
	uint16_t pkey_violations, qkey_violations;
	uint16_t lid;          /* its own LID, given by the SM */
	uint16_t lid_by_index; /* without one of its own: the vport whose LID it uses */
	uint64_t port_guid;
	uint64_t profile;
};

struct mad_vnode_info {
	uint16_t partition_cap; /* entries of each of its vports' P_Key tables */
	uint8_t local_port_num, num_ports;
	uint64_t node_guid;
};

/* VPortState: one 4-bit state per vport of a block of 128 */
struct mad_vport_state {
	uint8_t state[MAD_VPORT_STATE_BLOCK];
};

MAD_CODEC_DECLARE(mad_virt_info, mad_virt_info);
MAD_CODEC_DECLARE(mad_vport_info, mad_vport_info);
MAD_CODEC_DECLARE(mad_vnode_info, mad_vnode_info);
MAD_CODEC_DECLARE(mad_vport_state, mad_vport_state);

/* Attribute modifiers (see the top of this file). */
static inline uint32_t mad_vport_am(unsigned vport)
{
	return vport & 0xffff;
}
static inline uint32_t mad_vport_block_am(unsigned vport, unsigned block)
{
	return (uint32_t)(vport & 0xffff) << 16 | (block & 0xffff);
}
static inline void mad_vport_block_am_split(uint32_t am, unsigned *vport, unsigned *block)
{
	*vport = am >> 16;
	*block = am & 0xffff;
}

#endif
