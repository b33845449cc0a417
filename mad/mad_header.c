#include "mad/mad_header.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#define S struct mad_hdr
/* Method is taken as the whole byte (libibmad splits off the response bit), and libibmad has
 * no field for the class-specific word. */
static const struct mad_field hdr_fields[] = {
    MAD_F(S, base_version, MF_U8, IB_MAD_BASEVER_F),
    MAD_F(S, mgmt_class, MF_U8, IB_MAD_MGMTCLASS_F),
    MAD_F(S, class_version, MF_U8, IB_MAD_CLASSVER_F),
    MAD_H(S, method, MF_U8, 24, 8),
    MAD_F(S, status, MF_U16, IB_MAD_STATUS_F),
    MAD_H(S, class_specific, MF_U16, 48, 16),
    MAD_F(S, tid, MF_U64, IB_MAD_TRID_F),
    MAD_F(S, attr_id, MF_U16, IB_MAD_ATTRID_F),
    MAD_F(S, attr_mod, MF_U32, IB_MAD_ATTRMOD_F),
};
MAD_LAYOUT(mad_hdr_layout, mad_hdr, MAD_HDR_SIZE, hdr_fields);
#undef S

#define S struct mad_rmpp_hdr
static const struct mad_field rmpp_fields[] = {
    MAD_F(S, version, MF_U8, IB_SA_RMPP_VERS_F),   MAD_F(S, type, MF_U8, IB_SA_RMPP_TYPE_F),
    MAD_F(S, resp_time, MF_U8, IB_SA_RMPP_RESP_F), MAD_F(S, flags, MF_U8, IB_SA_RMPP_FLAGS_F),
    MAD_F(S, status, MF_U8, IB_SA_RMPP_STATUS_F),  MAD_F(S, data1, MF_U32, IB_SA_RMPP_D1_F),
    MAD_F(S, data2, MF_U32, IB_SA_RMPP_D2_F),
};
MAD_LAYOUT(mad_rmpp_hdr_layout, mad_rmpp_hdr, MAD_RMPP_HDR_END, rmpp_fields);
#undef S

#define S struct mad_sa_hdr
static const struct mad_field sa_fields[] = {
    MAD_N(S, hdr, mad_hdr_layout, 0),
    MAD_N(S, rmpp, mad_rmpp_hdr_layout, 0),
    MAD_F(S, sm_key, MF_U64, IB_SA_MKEY_F),
    MAD_F(S, attr_offset, MF_U16, IB_SA_ATTROFFS_F),
    MAD_F(S, comp_mask, MF_U64, IB_SA_COMPMASK_F),
};
MAD_LAYOUT(mad_sa_hdr_layout, mad_sa_hdr, MAD_SA_HDR_END, sa_fields);
#undef S

#define S struct mad_smp
static const struct mad_field smp_common_fields[] = {
    MAD_N(S, hdr, mad_hdr_layout, 0),
    MAD_F(S, mkey, MF_U64, IB_MAD_MKEY_F),
    MAD_HB(S, data, MAD_SMP_DATA_OFF * 8),
};
static const struct mad_field smp_dr_fields[] = {
    MAD_F(S, direction, MF_U8, IB_DRSMP_DIRECTION_F),
    MAD_F(S, dr_status, MF_U16, IB_DRSMP_STATUS_F),
    MAD_F(S, hop_ptr, MF_U8, IB_DRSMP_HOPPTR_F),
    MAD_F(S, hop_cnt, MF_U8, IB_DRSMP_HOPCNT_F),
    MAD_F(S, dr_slid, MF_U16, IB_DRSMP_DRSLID_F),
    MAD_F(S, dr_dlid, MF_U16, IB_DRSMP_DRDLID_F),
    MAD_FB(S, initial_path, IB_DRSMP_PATH_F),
    MAD_FB(S, return_path, IB_DRSMP_RPATH_F),
};
MAD_LAYOUT(mad_smp_layout, mad_smp, MAD_SIZE, smp_common_fields);
static MAD_LAYOUT(smp_dr_layout, mad_smp, MAD_SIZE, smp_dr_fields);
#undef S

MAD_CODEC_DEFINE(mad_hdr, mad_hdr)
MAD_CODEC_DEFINE(mad_rmpp_hdr, mad_rmpp_hdr)
MAD_CODEC_DEFINE(mad_sa_hdr, mad_sa_hdr)

int mad_smp_decode(const uint8_t *buf, size_t len, struct mad_smp *out, struct mad_error *err)
{
	if (mad_layout_decode(&mad_smp_layout, buf, len, out, err) < 0)
		return -1;
	if (out->hdr.base_version != MAD_BASE_VERSION) {
		mad_error_set(err, "SMP: BaseVersion %u, expected 1", out->hdr.base_version);
		return -1;
	}
	if (out->hdr.mgmt_class == MAD_CLASS_SUBN_LID)
		return 0;
	if (out->hdr.mgmt_class != MAD_CLASS_SUBN_DR) {
		mad_error_set(err, "SMP: MgmtClass 0x%02x is not an SMP class",
		              out->hdr.mgmt_class);
		return -1;
	}
	/* Keep the common decode's data and header, add the DR fields. */
	struct mad_smp dr;
	mad_layout_decode(&smp_dr_layout, buf, len, &dr, NULL);
	out->direction = dr.direction;
	out->dr_status = dr.dr_status;
	out->hop_ptr = dr.hop_ptr;
	out->hop_cnt = dr.hop_cnt;
	out->dr_slid = dr.dr_slid;
	out->dr_dlid = dr.dr_dlid;
	memcpy(out->initial_path, dr.initial_path, 64);
	memcpy(out->return_path, dr.return_path, 64);
	if (out->hop_cnt > MAD_DR_MAX_HOPS) {
		mad_error_set(err, "SMP: HopCount %u exceeds %u", out->hop_cnt, MAD_DR_MAX_HOPS);
		return -1;
	}
	if (out->hop_ptr > out->hop_cnt + 1) {
		mad_error_set(err, "SMP: HopPointer %u beyond HopCount %u + 1", out->hop_ptr,
		              out->hop_cnt);
		return -1;
	}
	return 0;
}

int mad_smp_encode(const struct mad_smp *in, uint8_t *buf, size_t len, struct mad_error *err)
{
	if (mad_layout_encode(&mad_smp_layout, in, buf, len, err) < 0)
		return -1;
	if (in->hdr.mgmt_class != MAD_CLASS_SUBN_DR)
		return 0;
	if (in->hop_cnt > MAD_DR_MAX_HOPS) {
		mad_error_set(err, "SMP: HopCount %u exceeds %u", in->hop_cnt, MAD_DR_MAX_HOPS);
		return -1;
	}
	return mad_layout_encode(&smp_dr_layout, in, buf, len, err);
}

void mad_smp_init_lid(struct mad_smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod)
{
	memset(smp, 0, sizeof(*smp));
	smp->hdr.base_version = MAD_BASE_VERSION;
	smp->hdr.mgmt_class = MAD_CLASS_SUBN_LID;
	smp->hdr.class_version = MAD_CLASS_VERSION_SM;
	smp->hdr.method = method;
	smp->hdr.attr_id = attr_id;
	smp->hdr.attr_mod = attr_mod;
}

int mad_smp_init_dr(struct mad_smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod,
                    const uint8_t *path, unsigned hops, struct mad_error *err)
{
	if (hops > MAD_DR_MAX_HOPS) {
		mad_error_set(err, "directed route of %u hops exceeds %u", hops, MAD_DR_MAX_HOPS);
		return -1;
	}
	mad_smp_init_lid(smp, method, attr_id, attr_mod);
	smp->hdr.mgmt_class = MAD_CLASS_SUBN_DR;
	smp->hop_cnt = (uint8_t)hops;
	smp->hop_ptr = 0;
	smp->dr_slid = LID_PERMISSIVE;
	smp->dr_dlid = LID_PERMISSIVE;
	for (unsigned i = 1; i <= hops; i++)
		smp->initial_path[i] = path[i];
	return 0;
}

int mad_dr_path_parse(const char *s, uint8_t path[64], struct mad_error *err)
{
	memset(path, 0, 64);
	int hops = 0;
	const char *p = s;
	bool first = true;
	while (*p) {
		char *end;
		errno = 0;
		unsigned long v = strtoul(p, &end, 0);
		if (end == p || errno || v > 255) {
			mad_error_set(err, "directed route \"%s\": bad port number at \"%s\"", s,
			              p);
			return -1;
		}
		/* The leading 0 (this port) is optional, as in the diags' "0,1,3". */
		if (!(first && v == 0)) {
			if (hops == MAD_DR_MAX_HOPS) {
				mad_error_set(err, "directed route \"%s\": more than %d hops", s,
				              MAD_DR_MAX_HOPS);
				return -1;
			}
			path[++hops] = (uint8_t)v;
		}
		first = false;
		p = end;
		if (*p == ',')
			p++;
		else if (*p) {
			mad_error_set(err, "directed route \"%s\": expected ',' at \"%s\"", s, p);
			return -1;
		}
	}
	return hops;
}

void mad_sa_hdr_init(struct mad_sa_hdr *sa, uint8_t method, uint16_t attr_id, uint64_t comp_mask)
{
	memset(sa, 0, sizeof(*sa));
	sa->hdr.base_version = MAD_BASE_VERSION;
	sa->hdr.mgmt_class = MAD_CLASS_SUBN_ADM;
	sa->hdr.class_version = MAD_CLASS_VERSION_SA;
	sa->hdr.method = method;
	sa->hdr.attr_id = attr_id;
	sa->comp_mask = comp_mask;
}
