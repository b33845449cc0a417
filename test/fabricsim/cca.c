/* The congestion control agent (IBA Annex A10, class 0x21 version 2) of every simulated
 * node: a switch's SwitchCongestionSetting at port 0, a CA port's CACongestionSetting and a
 * CongestionControlTable of FS_CC_CCT_BLOCKS blocks; CongestionInfo; CongestionKeyInfo and
 * the CC_Key check. The rules, from A10.4 (each is tested in test_fabricsim.c):
 * - a class version other than 2 is answered "bad version"; methods other than Get and Set
 *   "unsupported method"; an attribute the node type lacks (SwitchCongestionSetting on a
 *   CA, the CA attributes on a switch), a read-only one Set, or an unknown one, "unsupported
 *   method/attribute"; a CCT block beyond ControlTableCap, or a CCTI_Limit beyond the
 *   table, "invalid field";
 * - a Set takes only the parts its Control_Map marks valid (switch: the victim mask, the
 *   credit mask, threshold and packet size, credit starvation, marking rate; CA: the SLs'
 *   entries), and the answer is the attribute as the node now holds it;
 * - CC_Key: with a nonzero key, a Set carrying another key, or a Get when CC_KeyProtectBit
 *   is set, is dropped without an answer and CC_KeyViolations counts it (saturating); a Get
 *   without the key otherwise answers, with the key itself read as 0;
 * - a node whose agent is turned off (ctl cc off, an HCA without CC firmware) has no agent
 *   for the class, and the kernel answers its Gets and Sets "unsupported method/attribute"
 *   (mad.c's unmatched response). */
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "mad/cc.h"
#include "mad/mad_header.h"
#include "mad/mad_types.h"

static struct fs_cc *cc_of(struct fabric *f, uint32_t mgmt)
{
	struct fs_port *p = &f->ports[mgmt];
	if (!p->cc)
		p->cc = calloc(1, sizeof(*p->cc));
	return p->cc;
}

static void apply_switch(struct mad_cc_switch_setting *cur, const struct mad_cc_switch_setting *in)
{
	uint32_t m = in->control_map;
	cur->control_map = m;
	if (m & MAD_CC_SW_VICTIM_MASK)
		memcpy(cur->victim_mask, in->victim_mask, sizeof(cur->victim_mask));
	if (m & MAD_CC_SW_CREDIT_MASK)
		memcpy(cur->credit_mask, in->credit_mask, sizeof(cur->credit_mask));
	if (m & MAD_CC_SW_THRESHOLD) {
		cur->threshold = in->threshold;
		cur->packet_size = in->packet_size;
	}
	if (m & MAD_CC_SW_CS) {
		cur->cs_threshold = in->cs_threshold;
		cur->cs_return_delay = in->cs_return_delay;
	}
	if (m & MAD_CC_SW_MARKING_RATE)
		cur->marking_rate = in->marking_rate;
}

static void apply_ca(struct mad_cc_ca_setting *cur, const struct mad_cc_ca_setting *in)
{
	cur->port_control = in->port_control;
	cur->control_map = in->control_map;
	for (unsigned sl = 0; sl < MAD_CC_CA_SLS; sl++) {
		if (!(in->control_map >> sl & 1))
			continue;
		cur->ccti_timer[sl] = in->ccti_timer[sl];
		cur->ccti_increase[sl] = in->ccti_increase[sl];
		cur->trigger_threshold[sl] = in->trigger_threshold[sl];
		cur->ccti_min[sl] = in->ccti_min[sl];
	}
}

/* the CC_Key check: false drops the MAD (a violation counted) */
static bool key_ok(struct fs_cc *cc, const uint8_t *mad, uint8_t method, bool *hide_key)
{
	*hide_key = false;
	if (!cc->key.cc_key || mad_cc_key(mad) == cc->key.cc_key)
		return true;
	if (method == MAD_METHOD_GET && !cc->key.protect) {
		*hide_key = true;
		return true;
	}
	if (cc->key.violations < 0xffff)
		cc->key.violations++;
	return false;
}

static uint16_t do_attr(struct fabric *f, struct fs_cc *cc, bool sw, uint8_t method, uint16_t attr,
                        uint32_t mod, uint8_t *data, bool hide_key)
{
	bool set = method == MAD_METHOD_SET;
	switch (attr) {
	case MAD_ATTR_CC_INFO: {
		if (set)
			return MAD_STATUS_UNSUP_METHOD_ATTR;
		struct mad_cc_info ci = {.control_table_cap = sw ? 0 : FS_CC_CCT_BLOCKS};
		mad_cc_info_encode(&ci, data, MAD_CC_DATA_SIZE, NULL);
		return MAD_STATUS_OK;
	}
	case MAD_ATTR_CC_KEY_INFO: {
		if (set) {
			struct mad_cc_key_info in;
			mad_cc_key_info_decode(data, MAD_CC_DATA_SIZE, &in, NULL);
			cc->key = in;
		}
		struct mad_cc_key_info out = cc->key;
		if (hide_key)
			out.cc_key = 0;
		memset(data, 0, MAD_CC_DATA_SIZE);
		mad_cc_key_info_encode(&out, data, MAD_CC_DATA_SIZE, NULL);
		return MAD_STATUS_OK;
	}
	case MAD_ATTR_CC_SWITCH_SETTING:
		if (!sw)
			return MAD_STATUS_UNSUP_METHOD_ATTR;
		if (set) {
			struct mad_cc_switch_setting in;
			mad_cc_switch_setting_decode(data, MAD_CC_DATA_SIZE, &in, NULL);
			apply_switch(&cc->sw, &in);
			f->cc_sets++;
		}
		memset(data, 0, MAD_CC_DATA_SIZE);
		mad_cc_switch_setting_encode(&cc->sw, data, MAD_CC_DATA_SIZE, NULL);
		return MAD_STATUS_OK;
	case MAD_ATTR_CC_CA_SETTING:
		if (sw)
			return MAD_STATUS_UNSUP_METHOD_ATTR;
		if (set) {
			struct mad_cc_ca_setting in;
			mad_cc_ca_setting_decode(data, MAD_CC_DATA_SIZE, &in, NULL);
			apply_ca(&cc->ca, &in);
			f->cc_sets++;
		}
		memset(data, 0, MAD_CC_DATA_SIZE);
		mad_cc_ca_setting_encode(&cc->ca, data, MAD_CC_DATA_SIZE, NULL);
		return MAD_STATUS_OK;
	case MAD_ATTR_CC_TABLE: {
		if (sw)
			return MAD_STATUS_UNSUP_METHOD_ATTR;
		if (mod >= FS_CC_CCT_BLOCKS)
			return MAD_STATUS_INVALID_FIELD;
		if (set) {
			struct mad_cc_table in;
			mad_cc_table_decode(data, MAD_CC_DATA_SIZE, &in, NULL);
			if (in.ccti_limit >= FS_CC_CCT_BLOCKS * MAD_CC_CCT_BLOCK)
				return MAD_STATUS_INVALID_FIELD;
			cc->ccti_limit = in.ccti_limit;
			memcpy(cc->cct[mod], in.entry, sizeof(in.entry));
			f->cc_sets++;
		}
		struct mad_cc_table out = {.ccti_limit = cc->ccti_limit};
		memcpy(out.entry, cc->cct[mod], sizeof(out.entry));
		memset(data, 0, MAD_CC_DATA_SIZE);
		mad_cc_table_encode(&out, data, MAD_CC_DATA_SIZE, NULL);
		return MAD_STATUS_OK;
	}
	default: return MAD_STATUS_UNSUP_METHOD_ATTR;
	}
}

enum agent_result cca_process(struct fabric *f, uint32_t mgmt, uint8_t *mad)
{
	struct mad_hdr h;
	if (mad_hdr_decode(mad, MAD_SIZE, &h, NULL) < 0 || mad_is_response(h.method))
		return AGENT_NO_REPLY;
	const struct fs_node *n = fs_node_of(f, mgmt);
	bool sw = n->type == NODE_TYPE_SWITCH;
	uint16_t st;
	struct fs_cc *cc = cc_of(f, mgmt);
	bool hide_key = false;
	if (!cc)
		return AGENT_NO_REPLY; /* out of memory: as a MAD the node had no room for */
	if (f->ports[mgmt].cc_off)
		st = h.method == MAD_METHOD_GET || h.method == MAD_METHOD_SET
		         ? MAD_STATUS_UNSUP_METHOD_ATTR
		         : MAD_STATUS_UNSUP_METHOD;
	else if (h.class_version != MAD_CLASS_VERSION_CC)
		st = MAD_STATUS_BAD_VERSION;
	else if (h.method != MAD_METHOD_GET && h.method != MAD_METHOD_SET)
		st = MAD_STATUS_UNSUP_METHOD;
	else if (!key_ok(cc, mad, h.method, &hide_key))
		return AGENT_NO_REPLY;
	else
		st = do_attr(f, cc, sw, h.method, h.attr_id, h.attr_mod, mad + MAD_CC_DATA_OFFSET,
		             hide_key);
	h.method = MAD_METHOD_GET_RESP;
	h.status = st;
	mad_hdr_encode(&h, mad, MAD_SIZE, NULL);
	return AGENT_REPLY;
}
