/* Field tables for ibsmd's sync messages (mad/sync_msg.h). Positions are in the data area,
 * after the 40-byte vendor header. */
#include "mad/sync_msg.h"

#include <stddef.h>

#define S struct mad_sync_req
static const struct mad_field sync_req_fields[] = {
    MAD_H(S, guid, MF_U64, 0, 64),         MAD_H(S, epoch, MF_U64, 64, 64),
    MAD_H(S, generation, MF_U64, 128, 64), MAD_H(S, checksum, MF_U64, 192, 64),
    MAD_H(S, count, MF_U32, 256, 32),      MAD_HA(S, digest, MF_U64, 320, 64, SYNC_NDIGESTS, 64),
};
MAD_LAYOUT(mad_sync_req_layout, mad_sync_req, 64, sync_req_fields);
#undef S

#define S struct mad_sync_resp
static const struct mad_field sync_resp_fields[] = {
    MAD_H(S, kind, MF_U8, 0, 8),
    MAD_H(S, epoch, MF_U64, 64, 64),
    MAD_H(S, from_gen, MF_U64, 128, 64),
    MAD_H(S, to_gen, MF_U64, 192, 64),
    MAD_H(S, checksum, MF_U64, 256, 64),
    MAD_H(S, count, MF_U32, 320, 32),
    MAD_H(S, payload_len, MF_U32, 352, 32),
    MAD_HA(S, digest, MF_U64, 384, 64, SYNC_NDIGESTS, 64),
};
MAD_LAYOUT(mad_sync_resp_layout, mad_sync_resp, MAD_SYNC_RESP_SIZE, sync_resp_fields);
#undef S

MAD_CODEC_DEFINE(mad_sync_req, mad_sync_req)
MAD_CODEC_DEFINE(mad_sync_resp, mad_sync_resp)

void mad_sync_set_oui(uint8_t *mad)
{
	mad_bits_set(mad, 36 * 8, 8, 0);
	mad_bits_set(mad, 37 * 8, 24, MAD_SYNC_OUI);
}

uint32_t mad_sync_get_oui(const uint8_t *mad)
{
	return (uint32_t)mad_bits_get(mad, 37 * 8, 24);
}
