/* ibsmd's standby sync protocol on the wire: a vendor-specific MAD class of range 2 (IBA
 * 13.4.4, class 0x30-0x4F: OUI in the class header, RMPP allowed) between the SM ports.
 *
 * A standby asks its master with a Get of attribute SYNC_STATE, saying what it holds (the
 * master's epoch, the generation it reached, a checksum of its items) and its configuration
 * digests; the master answers, by RMPP, with nothing (current), the changes since that
 * generation (a delta), or everything (a full copy). The payload is text, one item per line,
 * '+' for an item added and '-' for one removed, as the state files hold them. */
#ifndef IBSMD_MAD_SYNC_MSG_H
#define IBSMD_MAD_SYNC_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "mad/mad_layout.h"

/* Not registered with anyone: a class of the vendor range and an OUI-shaped tag that no
 * vendor we know uses. Both ends must agree; nothing else on a fabric answers them. */
#define MAD_CLASS_IBSMD_SYNC   0x3d
#define MAD_SYNC_CLASS_VERSION 2 /* 2: authenticated (1 carried the SM_Key) */
#define MAD_SYNC_OUI           0x1b5d0cu
#define MAD_SYNC_HDR_END       40 /* common + RMPP header + reserved byte + OUI */
#define MAD_SYNC_DATA_SIZE     (256 - MAD_SYNC_HDR_END)
#define MAD_ATTR_SYNC_STATE    0xff01

/* Configuration digests: what must agree between a master and its standbys. */
enum mad_sync_digest {
	SYNC_DIGEST_PARTITIONS,
	SYNC_DIGEST_ROUTING,
	SYNC_DIGEST_KEYS,
	SYNC_NDIGESTS
};

/* Authentication (sync/auth.h): a request carries a random nonce and a MAC in its data
 * area, an answer a MAC in its header; raw bytes at these offsets, outside the field codecs */
#define MAD_SYNC_NONCE_BYTES  16
#define MAD_SYNC_MAC_BYTES    32
#define MAD_SYNC_REQ_NONCE_AT 64
#define MAD_SYNC_REQ_MAC_AT   80 /* ... to 112 */
#define MAD_SYNC_RESP_MAC_AT  80

struct mad_sync_req {
	uint64_t guid;       /* the requester's port GUID (the MAC vouches for it) */
	uint64_t epoch;      /* the master instance the requester's items came from (0: none) */
	uint64_t generation; /* ... and how far it got */
	uint64_t checksum;   /* of the items it holds */
	uint32_t count;
	uint64_t digest[SYNC_NDIGESTS];
};

enum mad_sync_kind {
	SYNC_CURRENT = 0,   /* nothing to add */
	SYNC_DELTA = 1,     /* apply the lines to what you hold */
	SYNC_FULL = 2,      /* drop what you hold, take the lines */
	SYNC_NOT_READY = 3, /* the master has not settled its own state yet: keep yours */
};

struct mad_sync_resp {
	uint8_t kind;
	uint64_t epoch;
	uint64_t from_gen, to_gen;
	uint64_t checksum; /* of the items once the lines are applied */
	uint32_t count;
	uint32_t payload_len; /* bytes of text after this header */
	uint64_t digest[SYNC_NDIGESTS];
};
#define MAD_SYNC_RESP_SIZE 112 /* the response header's bytes (MAC last); the payload follows */

MAD_CODEC_DECLARE(mad_sync_req, mad_sync_req);
MAD_CODEC_DECLARE(mad_sync_resp, mad_sync_resp);

/* The class header after the RMPP header: one reserved byte, then the OUI. */
void mad_sync_set_oui(uint8_t *mad);
uint32_t mad_sync_get_oui(const uint8_t *mad);

#endif
