/* The Congestion Control class (IBA Annex A10, class 0x21 version 2): the attributes a
 * congestion control manager programs into switches (SwitchCongestionSetting) and channel
 * adapters (CACongestionSetting, CongestionControlTable), and those it reads first
 * (CongestionInfo, CongestionKeyInfo). A CC MAD carries the CC_Key after the common header
 * (bytes 24-31), 32 bytes of log data, and the attribute at byte 64. */
#ifndef IBSMD_MAD_CC_H
#define IBSMD_MAD_CC_H

#include <stddef.h>
#include <stdint.h>

#include "mad/mad_layout.h"

#define MAD_CLASS_CC          0x21
#define MAD_CLASS_VERSION_CC  2
#define MAD_CC_KEY_OFFSET     24
#define MAD_CC_DATA_OFFSET    64
#define MAD_CC_DATA_SIZE      192
#define MAD_CC_CA_SLS         16 /* CACongestionSetting: one entry per SL */
#define MAD_CC_CCT_BLOCK      64 /* CongestionControlTable entries per block (modifier) */
#define MAD_CC_PORT_MASK_SIZE 32 /* a 256-bit port mask, port 0 in the last byte's bit 0 */

enum mad_cc_attr {
	MAD_ATTR_CC_INFO = 0x0011,
	MAD_ATTR_CC_KEY_INFO = 0x0012,
	MAD_ATTR_CC_LOG = 0x0013,
	MAD_ATTR_CC_SWITCH_SETTING = 0x0014,
	MAD_ATTR_CC_SWITCH_PORT_SETTING = 0x0015,
	MAD_ATTR_CC_CA_SETTING = 0x0016,
	MAD_ATTR_CC_TABLE = 0x0017,
	MAD_ATTR_CC_TIMESTAMP = 0x0018,
};

/* SwitchCongestionSetting:ControlMap, which of the fields below the switch takes */
enum {
	MAD_CC_SW_VICTIM_MASK = 1u << 0,
	MAD_CC_SW_CREDIT_MASK = 1u << 1,
	MAD_CC_SW_THRESHOLD = 1u << 2, /* threshold and packet size */
	MAD_CC_SW_CS = 1u << 3,        /* credit starvation threshold and return delay */
	MAD_CC_SW_MARKING_RATE = 1u << 4,
};

/* CongestionInfo: what the node supports; ControlTableCap is the number of 64-entry blocks
 * of its CongestionControlTable (0 on a switch). */
struct mad_cc_info {
	uint16_t info;
	uint8_t control_table_cap;
};
MAD_CODEC_DECLARE(mad_cc_info, mad_cc_info);

/* CongestionKeyInfo: the CC_Key a port checks, and how (A10.4.3.2) */
struct mad_cc_key_info {
	uint64_t cc_key;
	uint8_t protect; /* 1: a Get with a wrong CC_Key fails too */
	uint16_t lease_period, violations;
};
MAD_CODEC_DECLARE(mad_cc_key_info, mad_cc_key_info);

/* SwitchCongestionSetting. The masks are 256-bit big-endian numbers: port p is bit p counted
 * from the least significant end (byte 31 - p / 8). Return delay: shift << 14 | multiplier. */
struct mad_cc_switch_setting {
	uint32_t control_map;
	uint8_t victim_mask[MAD_CC_PORT_MASK_SIZE];
	uint8_t credit_mask[MAD_CC_PORT_MASK_SIZE];
	uint8_t threshold;    /* 4 bits: 0 none, 15 most aggressive marking */
	uint8_t packet_size;  /* credits: smaller packets are not marked */
	uint8_t cs_threshold; /* 4 bits */
	uint16_t cs_return_delay;
	uint16_t marking_rate; /* packets between two markings, on average */
};
MAD_CODEC_DECLARE(mad_cc_switch_setting, mad_cc_switch_setting);

/* CACongestionSetting: port_control bit 0 set is per-SL (port) rather than per-QP control;
 * control_map bit n: entry n (SL n) is valid. */
struct mad_cc_ca_setting {
	uint16_t port_control, control_map;
	uint16_t ccti_timer[MAD_CC_CA_SLS];
	uint8_t ccti_increase[MAD_CC_CA_SLS];
	uint8_t trigger_threshold[MAD_CC_CA_SLS];
	uint8_t ccti_min[MAD_CC_CA_SLS];
};
MAD_CODEC_DECLARE(mad_cc_ca_setting, mad_cc_ca_setting);

/* One block of a CA's CongestionControlTable (modifier: the block): the highest index in use
 * (CCTI_Limit, the same in every block) and 64 entries, each shift << 14 | multiplier. */
struct mad_cc_table {
	uint16_t ccti_limit;
	uint16_t entry[MAD_CC_CCT_BLOCK];
};
MAD_CODEC_DECLARE(mad_cc_table, mad_cc_table);

/* A CC request (Get or Set of attr with modifier mod, carrying cc_key) into mad[256], the
 * attribute data zeroed for the caller to fill at MAD_CC_DATA_OFFSET. The MAD's length. */
/* every layout above, NULL-terminated (the codec's property tests walk them) */
extern const struct mad_layout *const mad_cc_layouts[];

size_t mad_cc_request(uint8_t *mad, uint8_t method, uint16_t attr, uint32_t mod, uint64_t cc_key);
uint64_t mad_cc_key(const uint8_t *mad);

#endif
