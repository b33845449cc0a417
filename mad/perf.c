/* Field tables of PortCounters and PortCountersExtended (IBA 16.1.3.5, 16.1.4.11). */
#include "mad/perf.h"

#include <string.h>

#include <infiniband/mad.h>

#include "mad/mad_header.h"
#include "mad/mad_types.h"

#define S struct mad_port_counters
static const struct mad_field port_counters_fields[] = {
    MAD_F(S, port_select, MF_U8, IB_PC_PORT_SELECT_F),
    MAD_F(S, counter_select, MF_U16, IB_PC_COUNTER_SELECT_F),
    MAD_F(S, symbol_errors, MF_U16, IB_PC_ERR_SYM_F),
    MAD_F(S, link_error_recovery, MF_U8, IB_PC_LINK_RECOVERS_F),
    MAD_F(S, link_downed, MF_U8, IB_PC_LINK_DOWNED_F),
    MAD_F(S, rcv_errors, MF_U16, IB_PC_ERR_RCV_F),
    MAD_F(S, rcv_remote_phys_errors, MF_U16, IB_PC_ERR_PHYSRCV_F),
    MAD_F(S, rcv_switch_relay_errors, MF_U16, IB_PC_ERR_SWITCH_REL_F),
    MAD_F(S, xmit_discards, MF_U16, IB_PC_XMT_DISCARDS_F),
    MAD_F(S, xmit_constraint_errors, MF_U8, IB_PC_ERR_XMTCONSTR_F),
    MAD_F(S, rcv_constraint_errors, MF_U8, IB_PC_ERR_RCVCONSTR_F),
    MAD_F(S, local_link_integrity_errors, MF_U8, IB_PC_ERR_LOCALINTEG_F),
    MAD_F(S, excessive_buffer_overruns, MF_U8, IB_PC_ERR_EXCESS_OVR_F),
    MAD_F(S, vl15_dropped, MF_U16, IB_PC_VL15_DROPPED_F),
    MAD_F(S, xmit_data, MF_U32, IB_PC_XMT_BYTES_F),
    MAD_F(S, rcv_data, MF_U32, IB_PC_RCV_BYTES_F),
    MAD_F(S, xmit_pkts, MF_U32, IB_PC_XMT_PKTS_F),
    MAD_F(S, rcv_pkts, MF_U32, IB_PC_RCV_PKTS_F),
    MAD_F(S, xmit_wait, MF_U32, IB_PC_XMT_WAIT_F),
};
MAD_LAYOUT(mad_port_counters_layout, mad_port_counters, 44, port_counters_fields);
MAD_CODEC_DEFINE(mad_port_counters, mad_port_counters)
#undef S

#define S struct mad_port_counters_ext
static const struct mad_field port_counters_ext_fields[] = {
    MAD_F(S, port_select, MF_U8, IB_PC_EXT_PORT_SELECT_F),
    MAD_F(S, counter_select, MF_U16, IB_PC_EXT_COUNTER_SELECT_F),
    MAD_F(S, xmit_data, MF_U64, IB_PC_EXT_XMT_BYTES_F),
    MAD_F(S, rcv_data, MF_U64, IB_PC_EXT_RCV_BYTES_F),
    MAD_F(S, xmit_pkts, MF_U64, IB_PC_EXT_XMT_PKTS_F),
    MAD_F(S, rcv_pkts, MF_U64, IB_PC_EXT_RCV_PKTS_F),
    MAD_F(S, xmit_upkts, MF_U64, IB_PC_EXT_XMT_UPKTS_F),
    MAD_F(S, rcv_upkts, MF_U64, IB_PC_EXT_RCV_UPKTS_F),
    MAD_F(S, xmit_mpkts, MF_U64, IB_PC_EXT_XMT_MPKTS_F),
    MAD_F(S, rcv_mpkts, MF_U64, IB_PC_EXT_RCV_MPKTS_F),
};
MAD_LAYOUT(mad_port_counters_ext_layout, mad_port_counters_ext, 72, port_counters_ext_fields);
MAD_CODEC_DEFINE(mad_port_counters_ext, mad_port_counters_ext)
#undef S

size_t mad_perf_request(uint8_t *mad, uint8_t method, uint16_t attr, uint8_t port, uint16_t select)
{
	memset(mad, 0, MAD_SIZE);
	struct mad_hdr h = {.base_version = 1,
	                    .mgmt_class = MAD_CLASS_PERF,
	                    .class_version = 1,
	                    .method = method,
	                    .attr_id = attr};
	mad_hdr_encode(&h, mad, MAD_SIZE, NULL);
	uint8_t *data = mad + MAD_PERF_DATA_OFFSET;
	if (attr == MAD_ATTR_PORT_COUNTERS) {
		struct mad_port_counters pc = {.port_select = port, .counter_select = select};
		mad_port_counters_encode(&pc, data, MAD_SIZE - MAD_PERF_DATA_OFFSET, NULL);
	} else {
		struct mad_port_counters_ext pc = {.port_select = port, .counter_select = select};
		mad_port_counters_ext_encode(&pc, data, MAD_SIZE - MAD_PERF_DATA_OFFSET, NULL);
	}
	return MAD_SIZE;
}
