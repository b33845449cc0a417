/* MAD headers: the common header (IBA 13.4.3), SMPs in both forms (14.2.1), the RMPP header
 * (13.6.2.1) and the SA header (15.2.1). */
#ifndef IBSMD_MAD_HEADER_H
#define IBSMD_MAD_HEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "mad/mad_layout.h"
#include "mad/mad_types.h"

struct mad_hdr {
	uint8_t base_version, mgmt_class, class_version;
	uint8_t method; /* the whole byte, response bit included: 0x81 is GetResp */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

struct mad_smp {
	struct mad_hdr hdr; /* for directed route, hdr.status is not used: see dr_status */
	uint64_t mkey;
	/* directed route only */
	uint8_t direction; /* 1 on the return path */
	uint16_t dr_status;
	uint8_t hop_ptr, hop_cnt;
	uint16_t dr_slid, dr_dlid;
	uint8_t initial_path[64], return_path[64];
	uint8_t data[MAD_SMP_DATA_SIZE];
};

struct mad_rmpp_hdr {
	uint8_t version, type, resp_time, flags, status;
	uint32_t data1; /* SegmentNumber */
	uint32_t data2; /* PayloadLength (DATA) or NewWindowLast (ACK) */
};

struct mad_sa_hdr {
	struct mad_hdr hdr;
	struct mad_rmpp_hdr rmpp;
	uint64_t sm_key;
	uint16_t attr_offset; /* record size in 8-byte words */
	uint64_t comp_mask;
};

MAD_CODEC_DECLARE(mad_hdr, mad_hdr);
MAD_CODEC_DECLARE(mad_rmpp_hdr, mad_rmpp_hdr); /* positions relative to the MAD's start */
MAD_CODEC_DECLARE(mad_sa_hdr, mad_sa_hdr);
/* SMP decode checks class, base version, size and, for directed route, hop count and pointer.
 * Encode writes the directed-route fields only when hdr.mgmt_class is MAD_CLASS_SUBN_DR. */
MAD_CODEC_DECLARE(mad_smp, mad_smp);

static inline bool mad_is_response(uint8_t method)
{
	return method & MAD_METHOD_RESP;
}

/* A request SMP: LID-routed to dlid, or directed-route along path[1..hops] from this port
 * (hops == 0 reaches the local node). Data, attribute and method are set by the caller. */
void mad_smp_init_lid(struct mad_smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod);
int mad_smp_init_dr(struct mad_smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod,
                    const uint8_t *path, unsigned hops, struct mad_error *err);
/* Parse "0,1,3" (initial 0 optional) into path[1..]; returns the hop count or -1. */
int mad_dr_path_parse(const char *s, uint8_t path[64], struct mad_error *err);

/* A request on the SA: method, attribute, component mask; RMPP fields zero. */
void mad_sa_hdr_init(struct mad_sa_hdr *sa, uint8_t method, uint16_t attr_id, uint64_t comp_mask);

#endif
