/* The performance management class (IBA 16.1): PortCounters and PortCountersExtended, the
 * counters a performance manager reads from every port. Layouts from libibmad's fields. */
#ifndef IBSMD_MAD_PERF_H
#define IBSMD_MAD_PERF_H

#include <stddef.h>
#include <stdint.h>

#include "mad/mad_layout.h"

#define MAD_ATTR_PORT_COUNTERS_EXT 0x001d
#define MAD_PERF_DATA_OFFSET       64 /* the attribute after the header and 40 reserved bytes */
#define MAD_PERF_CPI_EXT_SPEEDS    (1u << 9) /* ClassPortInfo: PortCountersExtended answered */

/* PortCounters: error counters saturate at their width (8, 16 or 4 bits), data counters at
 * 32 bits; a Set with CounterSelect bits clears the selected ones. */
struct mad_port_counters {
	uint8_t port_select;
	uint16_t counter_select;
	uint16_t symbol_errors;
	uint8_t link_error_recovery;
	uint8_t link_downed;
	uint16_t rcv_errors;
	uint16_t rcv_remote_phys_errors;
	uint16_t rcv_switch_relay_errors;
	uint16_t xmit_discards;
	uint8_t xmit_constraint_errors;
	uint8_t rcv_constraint_errors;
	uint8_t local_link_integrity_errors; /* 4 bits */
	uint8_t excessive_buffer_overruns;   /* 4 bits */
	uint16_t vl15_dropped;
	uint32_t xmit_data, rcv_data; /* in 4-byte words */
	uint32_t xmit_pkts, rcv_pkts;
	uint32_t xmit_wait;
};
MAD_CODEC_DECLARE(mad_port_counters, mad_port_counters);

/* CounterSelect bits of PortCounters, in the order of the counters above */
enum {
	MAD_PC_SEL_SYMBOL_ERRORS = 1u << 0,
	MAD_PC_SEL_LINK_ERROR_RECOVERY = 1u << 1,
	MAD_PC_SEL_LINK_DOWNED = 1u << 2,
	MAD_PC_SEL_RCV_ERRORS = 1u << 3,
	MAD_PC_SEL_RCV_REMOTE_PHYS = 1u << 4,
	MAD_PC_SEL_RCV_SWITCH_RELAY = 1u << 5,
	MAD_PC_SEL_XMIT_DISCARDS = 1u << 6,
	MAD_PC_SEL_XMIT_CONSTRAINT = 1u << 7,
	MAD_PC_SEL_RCV_CONSTRAINT = 1u << 8,
	MAD_PC_SEL_LOCAL_INTEGRITY = 1u << 9,
	MAD_PC_SEL_EXCESSIVE_OVERRUNS = 1u << 10,
	MAD_PC_SEL_VL15_DROPPED = 1u << 11,
	MAD_PC_SEL_XMIT_DATA = 1u << 12,
	MAD_PC_SEL_RCV_DATA = 1u << 13,
	MAD_PC_SEL_XMIT_PKTS = 1u << 14,
	MAD_PC_SEL_RCV_PKTS = 1u << 15,
};

/* PortCountersExtended: 64-bit data counters, which do not saturate in practice. */
struct mad_port_counters_ext {
	uint8_t port_select;
	uint16_t counter_select;
	uint64_t xmit_data, rcv_data; /* in 4-byte words */
	uint64_t xmit_pkts, rcv_pkts;
	uint64_t xmit_upkts, rcv_upkts, xmit_mpkts, rcv_mpkts;
};
MAD_CODEC_DECLARE(mad_port_counters_ext, mad_port_counters_ext);

/* A PerfMgt request (class 0x04, version 1) for attr at port, into mad[256]: a Get, or a
 * Set that clears the counters in select. Returns the MAD's length. */
size_t mad_perf_request(uint8_t *mad, uint8_t method, uint16_t attr, uint8_t port, uint16_t select);

#endif
