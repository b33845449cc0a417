/* The congestion_control option: OpenSM's congestion control settings (its cc_* options,
 * the same defaults: everything 0, the manager off) as one mapping. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"

static const char *key_of(struct cfgp *p, const yaml_node_pair_t *kv, const yaml_node_t **val)
{
	const yaml_node_t *k = yaml_document_get_node(p->doc, kv->key);
	*val = yaml_document_get_node(p->doc, kv->value);
	return k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
}

static int get_num(struct cfgp *p, const yaml_node_t *n, const char *key, uint64_t max, void *dst,
                   size_t size)
{
	uint64_t v;
	if (cfg_u64(p, n, key, max, &v) < 0)
		return -1;
	switch (size) {
	case 1: *(uint8_t *)dst = (uint8_t)v; break;
	case 2: *(uint16_t *)dst = (uint16_t)v; break;
	case 4: *(uint32_t *)dst = (uint32_t)v; break;
	default: *(uint64_t *)dst = v; break;
	}
	return 0;
}
#define NUM(n, key, max, field) get_num(p, n, key, max, &(field), sizeof(field))

int config_cc_shift_mult(const char *s, uint16_t *out)
{
	char *e;
	if (*s < '0' || *s > '9')
		return -1;
	unsigned long shift = strtoul(s, &e, 0), mult;
	if (*e != ':' || e[1] < '0' || e[1] > '9')
		return -1;
	mult = strtoul(e + 1, &e, 0);
	if (*e || shift > 3 || mult > 0x3fff)
		return -1;
	*out = (uint16_t)(shift << 14 | mult);
	return 0;
}

int config_cc_mask(const char *s, uint8_t mask[MAD_CC_PORT_MASK_SIZE])
{
	const char *h = !strncmp(s, "0x", 2) || !strncmp(s, "0X", 2) ? s + 2 : s;
	size_t len = strlen(h);
	if (!len || len > 2 * MAD_CC_PORT_MASK_SIZE || strspn(h, "0123456789abcdefABCDEF") != len)
		return -1;
	memset(mask, 0, MAD_CC_PORT_MASK_SIZE);
	for (size_t i = 0; i < len; i++) {
		char c = h[len - 1 - i];
		unsigned v = c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
		mask[MAD_CC_PORT_MASK_SIZE - 1 - i / 2] |= (uint8_t)(v << (4 * (i % 2)));
	}
	return 0;
}

/* "SHIFT:MULTIPLIER" (what OpenSM writes for a CCT entry and the return delay) */
static int parse_shift_mult(struct cfgp *p, const yaml_node_t *n, const char *key, uint16_t *out)
{
	const char *s = cfg_scalar(p, n, key);
	if (!s)
		return -1;
	if (config_cc_shift_mult(s, out) < 0)
		return cfg_err(
		    p, n,
		    "%s: \"%s\" is not SHIFT:MULTIPLIER, the shift 0-3 and the multiplier "
		    "0-16383 (as 1:2)",
		    key, s);
	return 0;
}

/* a 256-bit port mask in hexadecimal, as OpenSM writes it: port p is bit p */
static int parse_mask(struct cfgp *p, const yaml_node_t *n, const char *key, uint8_t *mask)
{
	const char *s = cfg_scalar(p, n, key);
	if (!s)
		return -1;
	if (config_cc_mask(s, mask) < 0)
		return cfg_err(p, n,
		               "%s: \"%s\" is not a port mask (up to 64 hexadecimal digits, bit n "
		               "for port n)",
		               key, s);
	return 0;
}

static int bad_key(struct cfgp *p, const yaml_node_t *n, const char *where, const char *k,
                   const char *known)
{
	return cfg_err(p, n, "%s: unknown key \"%s\" (%s)", where, k, known);
}

static int parse_switch(struct cfgp *p, const yaml_node_t *v, struct mad_cc_switch_setting *sw)
{
	static const char known[] = "control_map, victim_mask, credit_mask, threshold, "
	                            "packet_size, credit_starvation_threshold, "
	                            "credit_starvation_return_delay, marking_rate";
	if (v->type != YAML_MAPPING_NODE)
		return cfg_err(p, v, "congestion_control: switch: a mapping (%s)", known);
	for (yaml_node_pair_t *kv = v->data.mapping.pairs.start; kv < v->data.mapping.pairs.top;
	     kv++) {
		const yaml_node_t *n;
		const char *k = key_of(p, kv, &n);
		int rc;
		if (!strcmp(k, "control_map"))
			rc = NUM(n, k, 0x1f, sw->control_map);
		else if (!strcmp(k, "victim_mask"))
			rc = parse_mask(p, n, k, sw->victim_mask);
		else if (!strcmp(k, "credit_mask"))
			rc = parse_mask(p, n, k, sw->credit_mask);
		else if (!strcmp(k, "threshold"))
			rc = NUM(n, k, 15, sw->threshold);
		else if (!strcmp(k, "packet_size"))
			rc = NUM(n, k, 255, sw->packet_size);
		else if (!strcmp(k, "credit_starvation_threshold"))
			rc = NUM(n, k, 15, sw->cs_threshold);
		else if (!strcmp(k, "credit_starvation_return_delay"))
			rc = parse_shift_mult(p, n, k, &sw->cs_return_delay);
		else if (!strcmp(k, "marking_rate"))
			rc = NUM(n, k, 0xffff, sw->marking_rate);
		else
			rc = bad_key(p, n, "congestion_control: switch", k, known);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int parse_sl_entry(struct cfgp *p, const yaml_node_t *e, struct mad_cc_ca_setting *ca,
                          bool *seen)
{
	static const char known[] = "sl, ccti_timer, ccti_increase, trigger_threshold, ccti_min";
	if (e->type != YAML_MAPPING_NODE)
		return cfg_err(p, e, "congestion_control: ca: sl: each entry a mapping (%s)",
		               known);
	struct mad_cc_ca_setting one = {0};
	int sl = -1;
	for (yaml_node_pair_t *kv = e->data.mapping.pairs.start; kv < e->data.mapping.pairs.top;
	     kv++) {
		const yaml_node_t *n;
		const char *k = key_of(p, kv, &n);
		uint8_t s = 0;
		int rc;
		if (!strcmp(k, "sl")) {
			rc = NUM(n, k, MAD_CC_CA_SLS - 1, s);
			sl = s;
		} else if (!strcmp(k, "ccti_timer"))
			rc = NUM(n, k, 0xffff, one.ccti_timer[0]);
		else if (!strcmp(k, "ccti_increase"))
			rc = NUM(n, k, 255, one.ccti_increase[0]);
		else if (!strcmp(k, "trigger_threshold"))
			rc = NUM(n, k, 255, one.trigger_threshold[0]);
		else if (!strcmp(k, "ccti_min"))
			rc = NUM(n, k, 255, one.ccti_min[0]);
		else
			rc = bad_key(p, n, "congestion_control: ca: sl", k, known);
		if (rc < 0)
			return -1;
	}
	if (sl < 0)
		return cfg_err(p, e, "congestion_control: ca: sl: an entry without its sl (0-15)");
	if (seen[sl])
		return cfg_err(p, e, "congestion_control: ca: sl: SL %d is given twice", sl);
	seen[sl] = true;
	ca->ccti_timer[sl] = one.ccti_timer[0];
	ca->ccti_increase[sl] = one.ccti_increase[0];
	ca->trigger_threshold[sl] = one.trigger_threshold[0];
	ca->ccti_min[sl] = one.ccti_min[0];
	return 0;
}

static int parse_ca(struct cfgp *p, const yaml_node_t *v, struct mad_cc_ca_setting *ca)
{
	static const char known[] = "port_control, control_map, sl";
	if (v->type != YAML_MAPPING_NODE)
		return cfg_err(p, v, "congestion_control: ca: a mapping (%s)", known);
	for (yaml_node_pair_t *kv = v->data.mapping.pairs.start; kv < v->data.mapping.pairs.top;
	     kv++) {
		const yaml_node_t *n;
		const char *k = key_of(p, kv, &n);
		int rc = 0;
		if (!strcmp(k, "port_control"))
			rc = NUM(n, k, 1, ca->port_control);
		else if (!strcmp(k, "control_map"))
			rc = NUM(n, k, 0xffff, ca->control_map);
		else if (!strcmp(k, "sl")) {
			if (n->type != YAML_SEQUENCE_NODE)
				return cfg_err(
				    p, n,
				    "congestion_control: ca: sl: a list of entries, each "
				    "with its sl");
			bool seen[MAD_CC_CA_SLS] = {false};
			for (yaml_node_item_t *it = n->data.sequence.items.start;
			     it < n->data.sequence.items.top && rc == 0; it++)
				rc = parse_sl_entry(p, yaml_document_get_node(p->doc, *it), ca,
				                    seen);
		} else
			rc = bad_key(p, n, "congestion_control: ca", k, known);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* a list of SHIFT:MULTIPLIER, or OpenSM's one string of them separated by commas */
static int parse_cct(struct cfgp *p, const yaml_node_t *n, struct config_cc *cc)
{
	cc->cct_len = 0;
	if (n->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			const yaml_node_t *e = yaml_document_get_node(p->doc, *it);
			if (cc->cct_len == CONFIG_CC_CCT_MAX)
				return cfg_err(p, e,
				               "congestion_control: cct: more than %d entries",
				               CONFIG_CC_CCT_MAX);
			if (parse_shift_mult(p, e, "congestion_control: cct",
			                     &cc->cct[cc->cct_len]) < 0)
				return -1;
			cc->cct_len++;
		}
		return 0;
	}
	const char *s = cfg_scalar(p, n, "congestion_control: cct");
	if (!s)
		return -1;
	while (*s) {
		size_t len = strcspn(s, ",");
		char one[32];
		if (!len || len >= sizeof(one))
			return cfg_err(p, n,
			               "congestion_control: cct: an empty or overlong entry in "
			               "\"%s\"",
			               (const char *)n->data.scalar.value);
		if (cc->cct_len == CONFIG_CC_CCT_MAX)
			return cfg_err(p, n, "congestion_control: cct: more than %d entries",
			               CONFIG_CC_CCT_MAX);
		memcpy(one, s, len);
		one[len] = 0;
		if (config_cc_shift_mult(one, &cc->cct[cc->cct_len]) < 0)
			return cfg_err(
			    p, n,
			    "congestion_control: cct: \"%s\" is not SHIFT:MULTIPLIER, the "
			    "shift 0-3 and the multiplier 0-16383 (as 1:2)",
			    one);
		cc->cct_len++;
		s += len + (s[len] == ',');
	}
	return 0;
}

int cfg_parse_cc(struct cfgp *p, struct ibsmd_config *c, const yaml_node_t *v)
{
	static const char known[] =
	    "enable, cc_key, protect, max_outstanding_mads, switch, ca, cct";
	if (v->type != YAML_MAPPING_NODE)
		return cfg_err(p, v, "congestion_control: a mapping (%s)", known);
	struct config_cc cc;
	config_cc_defaults(&cc);
	for (yaml_node_pair_t *kv = v->data.mapping.pairs.start; kv < v->data.mapping.pairs.top;
	     kv++) {
		const yaml_node_t *n;
		const char *k = key_of(p, kv, &n);
		int rc;
		if (!strcmp(k, "enable"))
			rc = cfg_bool(p, n, k, &cc.enable);
		else if (!strcmp(k, "cc_key"))
			rc = NUM(n, k, UINT64_MAX, cc.cc_key);
		else if (!strcmp(k, "protect"))
			rc = cfg_bool(p, n, k, &cc.protect);
		else if (!strcmp(k, "max_outstanding_mads"))
			rc = NUM(n, k, 65535, cc.max_outstanding) < 0 ? -1
			     : cc.max_outstanding                     ? 0
			                          : cfg_err(p, n, "%s: at least 1", k);
		else if (!strcmp(k, "switch"))
			rc = parse_switch(p, n, &cc.sw);
		else if (!strcmp(k, "ca"))
			rc = parse_ca(p, n, &cc.ca);
		else if (!strcmp(k, "cct"))
			rc = parse_cct(p, n, &cc);
		else
			rc = bad_key(p, n, "congestion_control", k, known);
		if (rc < 0)
			return -1;
	}
	if (cc.protect && !cc.cc_key)
		return cfg_err(p, v,
		               "congestion_control: protect needs a cc_key other than 0 (a port "
		               "with key 0 checks none)");
	c->cc = cc;
	return 0;
}

void config_cc_defaults(struct config_cc *cc)
{
	memset(cc, 0, sizeof(*cc));
	cc->max_outstanding = 500; /* OpenSM's cc_max_outstanding_mads */
}

static void dump_mask(FILE *out, const char *key, const uint8_t *m)
{
	unsigned first = 0;
	while (first < MAD_CC_PORT_MASK_SIZE - 1 && !m[first])
		first++;
	fprintf(out, "    %s: 0x%x", key, m[first]);
	for (unsigned i = first + 1; i < MAD_CC_PORT_MASK_SIZE; i++)
		fprintf(out, "%02x", m[i]);
	fputc('\n', out);
}

void config_cc_dump(FILE *out, const struct config_cc *cc)
{
	const struct mad_cc_switch_setting *sw = &cc->sw;
	const struct mad_cc_ca_setting *ca = &cc->ca;
	fprintf(out,
	        "\n  enable: %s\n  cc_key: 0x%016" PRIx64
	        "\n  protect: %s\n  max_outstanding_mads: %u\n",
	        cc->enable ? "true" : "false", cc->cc_key, cc->protect ? "true" : "false",
	        cc->max_outstanding);
	fprintf(out, "  switch:\n    control_map: 0x%x\n", sw->control_map);
	dump_mask(out, "victim_mask", sw->victim_mask);
	dump_mask(out, "credit_mask", sw->credit_mask);
	fprintf(out,
	        "    threshold: %u\n    packet_size: %u\n    credit_starvation_threshold: %u\n"
	        "    credit_starvation_return_delay: \"%u:%u\"\n    marking_rate: %u\n",
	        sw->threshold, sw->packet_size, sw->cs_threshold, sw->cs_return_delay >> 14,
	        sw->cs_return_delay & 0x3fff, sw->marking_rate);
	fprintf(out, "  ca:\n    port_control: %u\n    control_map: 0x%x\n", ca->port_control,
	        ca->control_map);
	bool any = false;
	for (unsigned sl = 0; sl < MAD_CC_CA_SLS; sl++) {
		if (!ca->ccti_timer[sl] && !ca->ccti_increase[sl] && !ca->trigger_threshold[sl] &&
		    !ca->ccti_min[sl])
			continue;
		fprintf(out,
		        "%s      - {sl: %u, ccti_timer: %u, ccti_increase: %u, trigger_threshold: "
		        "%u, ccti_min: %u}\n",
		        any ? "" : "    sl:\n", sl, ca->ccti_timer[sl], ca->ccti_increase[sl],
		        ca->trigger_threshold[sl], ca->ccti_min[sl]);
		any = true;
	}
	if (!any)
		fprintf(out, "    sl: []\n");
	fprintf(out, "  cct: [");
	for (unsigned i = 0; i < cc->cct_len; i++)
		fprintf(out, "%s\"%u:%u\"", i ? ", " : "", cc->cct[i] >> 14, cc->cct[i] & 0x3fff);
	fprintf(out, "]\n");
}

bool cfg_cc_equal(const struct config_cc *a, const struct config_cc *b)
{
	const struct mad_cc_switch_setting *x = &a->sw, *y = &b->sw;
	return a->enable == b->enable && a->cc_key == b->cc_key && a->protect == b->protect &&
	       a->max_outstanding == b->max_outstanding && config_cc_switch_equal(x, y) &&
	       config_cc_ca_equal(&a->ca, &b->ca) && a->cct_len == b->cct_len &&
	       !memcmp(a->cct, b->cct, a->cct_len * sizeof(a->cct[0]));
}

bool config_cc_switch_equal(const struct mad_cc_switch_setting *x,
                            const struct mad_cc_switch_setting *y)
{
	return x->control_map == y->control_map &&
	       !memcmp(x->victim_mask, y->victim_mask, sizeof(x->victim_mask)) &&
	       !memcmp(x->credit_mask, y->credit_mask, sizeof(x->credit_mask)) &&
	       x->threshold == y->threshold && x->packet_size == y->packet_size &&
	       x->cs_threshold == y->cs_threshold && x->cs_return_delay == y->cs_return_delay &&
	       x->marking_rate == y->marking_rate;
}

bool config_cc_ca_equal(const struct mad_cc_ca_setting *x, const struct mad_cc_ca_setting *y)
{
	return x->port_control == y->port_control && x->control_map == y->control_map &&
	       !memcmp(x->ccti_timer, y->ccti_timer, sizeof(x->ccti_timer)) &&
	       !memcmp(x->ccti_increase, y->ccti_increase, sizeof(x->ccti_increase)) &&
	       !memcmp(x->trigger_threshold, y->trigger_threshold, sizeof(x->trigger_threshold)) &&
	       !memcmp(x->ccti_min, y->ccti_min, sizeof(x->ccti_min));
}
