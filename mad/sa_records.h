/* Subnet administration records (IBA vol. 1, 15.2.5): host structs and codecs.
 * A record's wire size is its _layout.size; in SA tables records are padded to a multiple of
 * 8 bytes (the AttributeOffset), see mad_sa_record_stride(). */
#ifndef IBSMD_MAD_SA_RECORDS_H
#define IBSMD_MAD_SA_RECORDS_H

#include <stdint.h>

#include "mad/mad_layout.h"
#include "mad/smp_attrs.h"

struct mad_node_record {
	uint16_t lid;
	struct mad_node_info info;
	struct mad_node_desc desc;
};

struct mad_port_info_record {
	uint16_t lid;
	uint8_t port_num, options;
	struct mad_port_info info;
};

struct mad_switch_info_record {
	uint16_t lid;
	struct mad_switch_info info;
};

struct mad_link_record {
	uint16_t from_lid;
	uint8_t from_port, to_port;
	uint16_t to_lid;
};

struct mad_guid_info_record {
	uint16_t lid;
	uint8_t block_num;
	struct mad_guid_info info;
};

struct mad_pkey_table_record {
	uint16_t lid, block_num;
	uint8_t port_num;
	struct mad_pkey_table table;
};

struct mad_sl2vl_record {
	uint16_t lid;
	uint8_t in_port, out_port;
	struct mad_sl2vl_table table;
};

struct mad_vlarb_record {
	uint16_t lid;
	uint8_t out_port, block_num;
	struct mad_vlarb_table table;
};

struct mad_lft_record {
	uint16_t lid, block_num;
	struct mad_lft_block lft;
};

struct mad_mft_record {
	uint16_t lid;
	uint8_t position;
	uint16_t block_num;
	struct mad_mft_block mft;
};

struct mad_sm_info_record {
	uint16_t lid;
	struct mad_sm_info info;
};

struct mad_path_record {
	uint64_t service_id;
	uint8_t dgid[16], sgid[16];
	uint16_t dlid, slid;
	uint8_t raw_traffic;
	uint32_t flow_label;
	uint8_t hop_limit, tclass, reversible, num_path;
	uint16_t pkey, qos_class;
	uint8_t sl, mtu_selector, mtu, rate_selector, rate, pkt_life_selector, pkt_life;
	uint8_t preference;
};

/* PathRecord component mask bits (IBA 15.2.5.16) */
enum {
	PR_COMP_SERVICE_ID = 1ull << 0, /* ServiceID is two components (bits 0, 1) */
	PR_COMP_DGID = 1ull << 2,
	PR_COMP_SGID = 1ull << 3,
	PR_COMP_DLID = 1ull << 4,
	PR_COMP_SLID = 1ull << 5,
	PR_COMP_RAW_TRAFFIC = 1ull << 6,
	PR_COMP_FLOW_LABEL = 1ull << 8,
	PR_COMP_HOP_LIMIT = 1ull << 9,
	PR_COMP_TCLASS = 1ull << 10,
	PR_COMP_REVERSIBLE = 1ull << 11,
	PR_COMP_NUMB_PATH = 1ull << 12,
	PR_COMP_PKEY = 1ull << 13,
	PR_COMP_QOS_CLASS = 1ull << 14,
	PR_COMP_SL = 1ull << 15,
	PR_COMP_MTU_SELECTOR = 1ull << 16,
	PR_COMP_MTU = 1ull << 17,
	PR_COMP_RATE_SELECTOR = 1ull << 18,
	PR_COMP_RATE = 1ull << 19,
	PR_COMP_PKT_LIFE_SELECTOR = 1ull << 20,
	PR_COMP_PKT_LIFE = 1ull << 21,
	PR_COMP_PREFERENCE = 1ull << 22,
};

#define MAD_MPR_MAX_GIDS 11 /* as many as fit one MAD's 200-byte SA data area */

struct mad_multipath_record {
	uint8_t raw_traffic;
	uint32_t flow_label;
	uint8_t hop_limit, tclass, reversible, num_path;
	uint16_t pkey, qos_class;
	uint8_t sl, mtu_selector, mtu, rate_selector, rate, pkt_life_selector, pkt_life;
	uint8_t service_id_hi8;   /* ServiceID is split on the wire: 8 MSBs at byte 13 ... */
	uint64_t service_id_lo56; /* ... and 56 LSBs at bytes 17-23 */
	uint8_t independence_selector, sgid_count, dgid_count;
	uint8_t gid[MAD_MPR_MAX_GIDS][16]; /* sgid_count SGIDs then dgid_count DGIDs */
};

struct mad_mcmember_record {
	uint8_t mgid[16], port_gid[16];
	uint32_t qkey;
	uint16_t mlid;
	uint8_t mtu_selector, mtu, tclass;
	uint16_t pkey;
	uint8_t rate_selector, rate, pkt_life_selector, pkt_life, sl;
	uint32_t flow_label;
	uint8_t hop_limit, scope, join_state, proxy_join;
};

/* MCMemberRecord component mask bits (IBA 15.2.5.17) */
enum {
	MCM_COMP_MGID = 1ull << 0,
	MCM_COMP_PORT_GID = 1ull << 1,
	MCM_COMP_QKEY = 1ull << 2,
	MCM_COMP_MLID = 1ull << 3,
	MCM_COMP_MTU_SELECTOR = 1ull << 4,
	MCM_COMP_MTU = 1ull << 5,
	MCM_COMP_TCLASS = 1ull << 6,
	MCM_COMP_PKEY = 1ull << 7,
	MCM_COMP_RATE_SELECTOR = 1ull << 8,
	MCM_COMP_RATE = 1ull << 9,
	MCM_COMP_PKT_LIFE_SELECTOR = 1ull << 10,
	MCM_COMP_PKT_LIFE = 1ull << 11,
	MCM_COMP_SL = 1ull << 12,
	MCM_COMP_FLOW_LABEL = 1ull << 13,
	MCM_COMP_HOP_LIMIT = 1ull << 14,
	MCM_COMP_SCOPE = 1ull << 15,
	MCM_COMP_JOIN_STATE = 1ull << 16,
	MCM_COMP_PROXY_JOIN = 1ull << 17,
};

struct mad_service_record {
	uint64_t id;
	uint8_t gid[16];
	uint16_t pkey;
	uint32_t lease;
	uint8_t key[16];
	char name[65]; /* 64 on the wire; NUL-terminated after decode */
	uint8_t data8[16];
	uint16_t data16[8];
	uint32_t data32[4];
	uint64_t data64[2];
};

struct mad_inform_info {
	uint8_t gid[16];
	uint16_t lid_range_begin, lid_range_end;
	uint8_t is_generic, subscribe;
	uint16_t type, trap_number;
	uint32_t qpn;
	uint8_t resp_time_value;
	uint32_t producer_type;
};

struct mad_inform_info_record {
	uint8_t subscriber_gid[16];
	uint16_t subscriber_enum;
	struct mad_inform_info info;
};

MAD_CODEC_DECLARE(mad_node_record, mad_node_record);
MAD_CODEC_DECLARE(mad_port_info_record, mad_port_info_record);
MAD_CODEC_DECLARE(mad_switch_info_record, mad_switch_info_record);
MAD_CODEC_DECLARE(mad_link_record, mad_link_record);
MAD_CODEC_DECLARE(mad_guid_info_record, mad_guid_info_record);
MAD_CODEC_DECLARE(mad_pkey_table_record, mad_pkey_table_record);
MAD_CODEC_DECLARE(mad_sl2vl_record, mad_sl2vl_record);
MAD_CODEC_DECLARE(mad_vlarb_record, mad_vlarb_record);
MAD_CODEC_DECLARE(mad_lft_record, mad_lft_record);
MAD_CODEC_DECLARE(mad_mft_record, mad_mft_record);
MAD_CODEC_DECLARE(mad_sm_info_record, mad_sm_info_record);
MAD_CODEC_DECLARE(mad_path_record, mad_path_record);
MAD_CODEC_DECLARE(mad_mcmember_record, mad_mcmember_record);
MAD_CODEC_DECLARE(mad_service_record, mad_service_record);
MAD_CODEC_DECLARE(mad_inform_info, mad_inform_info);
MAD_CODEC_DECLARE(mad_inform_info_record, mad_inform_info_record);
/* MultiPathRecord has a variable tail: its decode checks SGIDCount + DGIDCount against both
 * MAD_MPR_MAX_GIDS and len; its encode writes 24 + 16 * (counts) bytes. */
MAD_CODEC_DECLARE(mad_multipath_record, mad_multipath_record);

/* Bytes between records in an SA table: the record size rounded up to 8. */
static inline unsigned mad_sa_record_stride(const struct mad_layout *l)
{
	return (l->size + 7u) & ~7u;
}

/* Every SA record layout, for table-wide checks. NULL-terminated. */
extern const struct mad_layout *const mad_sa_layouts[];

#endif
