/* The qos option: a QoS policy in YAML (see config.h and ibsmd.yaml(5)).
 *
 *   qos:
 *     port_groups:
 *       - {name: storage, node_description: "stor-*", guids: [0x...], partition: data}
 *     levels:
 *       - {name: storage, sl: 1, mtu_limit: 4096, rate_limit: 100, packet_life: 16}
 *     rules:
 *       - {service_id: 0x1000-0x1fff, pkey: 0x8001, source: compute,
 *          destination: storage, level: storage}
 *     default_level: mpi
 *     vl_tables:
 *       ca: {sl2vl: [16 VLs], vlarb_high: "0:4", vlarb_low: "0:64,1:64", high_limit: 4}
 *       switch_external: {...}
 *       switch_port0: {...}
 *       router: {...}
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"

static const char *const class_names[QOS_NCLASSES] = {"ca", "switch_external", "switch_port0",
                                                      "router"};

const char *config_qos_class_name(unsigned cls)
{
	return cls < QOS_NCLASSES ? class_names[cls] : "?";
}

void config_qos_free(struct config_qos *q)
{
	if (!q)
		return;
	for (unsigned i = 0; i < q->ngroups; i++)
		free(q->groups[i].guids);
	free(q);
}

static const char *key_of(struct cfgp *p, const yaml_node_pair_t *kv, const yaml_node_t **val)
{
	const yaml_node_t *k = yaml_document_get_node(p->doc, kv->key);
	*val = yaml_document_get_node(p->doc, kv->value);
	return k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
}

static int group_index(const struct config_qos *q, const char *name)
{
	for (unsigned i = 0; i < q->ngroups; i++)
		if (!strcmp(q->groups[i].name, name))
			return (int)i;
	return -1;
}

static int level_index(const struct config_qos *q, const char *name)
{
	for (unsigned i = 0; i < q->nlevels; i++)
		if (!strcmp(q->levels[i].name, name))
			return (int)i;
	return -1;
}

static int parse_guid_list(struct cfgp *p, const yaml_node_t *v, struct config_qos_group *g)
{
	if (v->type == YAML_SCALAR_NODE) {
		uint64_t x;
		if (cfg_u64(p, v, "guids", UINT64_MAX, &x) < 0)
			return -1;
		if (!(g->guids = malloc(sizeof(uint64_t))))
			return cfg_err(p, v, "out of memory");
		g->guids[g->nguids++] = x;
		return 0;
	}
	if (v->type != YAML_SEQUENCE_NODE)
		return cfg_err(p, v, "guids: expected a GUID or a list of GUIDs");
	size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n && !(g->guids = malloc(sizeof(uint64_t) * n)))
		return cfg_err(p, v, "out of memory");
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		uint64_t x;
		if (cfg_u64(p, yaml_document_get_node(p->doc, *it), "guids", UINT64_MAX, &x) < 0)
			return -1;
		g->guids[g->nguids++] = x;
	}
	return 0;
}

static int parse_group(struct cfgp *p, const yaml_node_t *n, struct config_qos *q)
{
	if (n->type != YAML_MAPPING_NODE)
		return cfg_err(p, n,
		               "port_groups: each entry is a mapping (name, guids, "
		               "node_description, partition)");
	if (q->ngroups == CONFIG_QOS_MAX)
		return cfg_err(p, n, "port_groups: more than %d", CONFIG_QOS_MAX);
	struct config_qos_group *g = &q->groups[q->ngroups++];
	g->line = (uint32_t)n->start_mark.line + 1;
	g->col = (uint32_t)n->start_mark.column + 1;
	for (yaml_node_pair_t *kv = n->data.mapping.pairs.start; kv < n->data.mapping.pairs.top;
	     kv++) {
		const yaml_node_t *v;
		const char *k = key_of(p, kv, &v);
		int rc;
		if (!strcmp(k, "name"))
			rc = cfg_str(p, v, "name", g->name, sizeof(g->name));
		else if (!strcmp(k, "guids"))
			rc = parse_guid_list(p, v, g);
		else if (!strcmp(k, "node_description"))
			rc = cfg_str(p, v, k, g->node_desc, sizeof(g->node_desc));
		else if (!strcmp(k, "partition"))
			rc = cfg_str(p, v, k, g->partition, sizeof(g->partition));
		else
			rc = cfg_err(
			    p, v,
			    "port_groups: unknown key \"%s\" (name, guids, node_description, "
			    "partition)",
			    k);
		if (rc < 0)
			return -1;
	}
	if (!g->name[0])
		return cfg_err(p, n, "port_groups: an entry without a name");
	if (group_index(q, g->name) != (int)q->ngroups - 1)
		return cfg_err(p, n, "port_groups: \"%s\" is defined twice", g->name);
	if (!g->nguids && !g->node_desc[0] && !g->partition[0])
		return cfg_err(p, n,
		               "port group \"%s\" has no ports: give guids, node_description or "
		               "partition",
		               g->name);
	return 0;
}

static int parse_level(struct cfgp *p, const yaml_node_t *n, struct config_qos *q)
{
	if (n->type != YAML_MAPPING_NODE)
		return cfg_err(p, n,
		               "levels: each entry is a mapping (name, sl, mtu_limit, "
		               "rate_limit, packet_life)");
	if (q->nlevels == 16)
		return cfg_err(p, n, "levels: more than 16");
	struct config_qos_level *l = &q->levels[q->nlevels++];
	l->line = (uint32_t)n->start_mark.line + 1;
	l->col = (uint32_t)n->start_mark.column + 1;
	l->packet_life = 0xff;
	bool has_sl = false;
	for (yaml_node_pair_t *kv = n->data.mapping.pairs.start; kv < n->data.mapping.pairs.top;
	     kv++) {
		const yaml_node_t *v;
		const char *k = key_of(p, kv, &v);
		uint64_t x;
		int rc;
		if (!strcmp(k, "name")) {
			rc = cfg_str(p, v, "name", l->name, sizeof(l->name));
		} else if (!strcmp(k, "sl")) {
			rc = cfg_u64(p, v, "sl", 15, &x);
			l->sl = (uint8_t)x;
			has_sl = true;
		} else if (!strcmp(k, "mtu_limit")) {
			rc = cfg_mtu(p, v, k, &l->mtu_limit);
		} else if (!strcmp(k, "rate_limit")) {
			rc = cfg_rate(p, v, k, &l->rate_limit);
		} else if (!strcmp(k, "packet_life")) {
			rc = cfg_u64(p, v, k, 31, &x);
			l->packet_life = (uint8_t)x;
		} else {
			rc = cfg_err(p, v,
			             "levels: unknown key \"%s\" (name, sl, mtu_limit, rate_limit, "
			             "packet_life)",
			             k);
		}
		if (rc < 0)
			return -1;
	}
	if (!l->name[0])
		return cfg_err(p, n, "levels: an entry without a name");
	if (level_index(q, l->name) != (int)q->nlevels - 1)
		return cfg_err(p, n, "levels: \"%s\" is defined twice", l->name);
	if (!has_sl)
		return cfg_err(p, n, "QoS level \"%s\" has no sl", l->name);
	return 0;
}

/* "0x1000" or "0x1000-0x1fff" */
static int parse_sid(struct cfgp *p, const yaml_node_t *v, struct config_qos_rule *r)
{
	const char *s = cfg_scalar(p, v, "service_id");
	if (!s)
		return -1;
	char *e;
	r->sid_lo = strtoull(s, &e, 0);
	r->sid_hi = r->sid_lo;
	if (e != s && *e == '-') {
		const char *s2 = e + 1;
		r->sid_hi = strtoull(s2, &e, 0);
		if (e == s2)
			e = (char *)"x";
	}
	if (e == s || *e || r->sid_hi < r->sid_lo)
		return cfg_err(p, v,
		               "service_id: \"%s\" is not a service ID or a range LOW-HIGH "
		               "(0x1000-0x1fff)",
		               s);
	r->has_sid = true;
	return 0;
}

static int parse_rule(struct cfgp *p, const yaml_node_t *n, struct config_qos *q)
{
	if (n->type != YAML_MAPPING_NODE)
		return cfg_err(p, n,
		               "rules: each entry is a mapping (service_id, pkey, source, "
		               "destination, level)");
	if (q->nrules == CONFIG_QOS_MAX)
		return cfg_err(p, n, "rules: more than %d", CONFIG_QOS_MAX);
	struct config_qos_rule *r = &q->rules[q->nrules++];
	r->line = (uint32_t)n->start_mark.line + 1;
	r->col = (uint32_t)n->start_mark.column + 1;
	r->src = r->dst = -1;
	bool has_level = false;
	for (yaml_node_pair_t *kv = n->data.mapping.pairs.start; kv < n->data.mapping.pairs.top;
	     kv++) {
		const yaml_node_t *v;
		const char *k = key_of(p, kv, &v);
		uint64_t x;
		int rc = 0;
		if (!strcmp(k, "service_id")) {
			rc = parse_sid(p, v, r);
		} else if (!strcmp(k, "pkey")) {
			rc = cfg_u64(p, v, k, 0xffff, &x);
			r->pkey = (uint16_t)(x & 0x7fff);
			r->has_pkey = true;
		} else if (!strcmp(k, "source") || !strcmp(k, "destination") ||
		           !strcmp(k, "level")) {
			const char *name = cfg_scalar(p, v, k);
			if (!name)
				return -1;
			int i = k[0] == 'l' ? level_index(q, name) : group_index(q, name);
			if (i < 0)
				return cfg_err(p, v, "%s: no %s \"%s\"", k,
				               k[0] == 'l' ? "QoS level" : "port group", name);
			if (k[0] == 's')
				r->src = (int16_t)i;
			else if (k[0] == 'd')
				r->dst = (int16_t)i;
			else {
				r->level = (uint16_t)i;
				has_level = true;
			}
		} else {
			rc = cfg_err(p, v,
			             "rules: unknown key \"%s\" (service_id, pkey, source, "
			             "destination, level)",
			             k);
		}
		if (rc < 0)
			return -1;
	}
	if (!has_level)
		return cfg_err(p, n, "a rule without a level");
	return 0;
}

/* "VL:weight,VL:weight": the arbitration table's entries, as OpenSM's qos_*_vlarb_* */
static int parse_vlarb(struct cfgp *p, const yaml_node_t *v, const char *key, uint8_t *vl,
                       uint8_t *weight, uint8_t *n)
{
	const char *s = cfg_scalar(p, v, key);
	if (!s)
		return -1;
	*n = 0;
	while (*s) {
		char *e;
		unsigned long a = strtoul(s, &e, 0), b;
		if (e == s || *e != ':')
			goto bad;
		s = e + 1;
		b = strtoul(s, &e, 0);
		if (e == s || (*e && *e != ',') || a > 14 || b > 255)
			goto bad;
		if (*n == 64)
			return cfg_err(p, v, "%s: more than 64 entries", key);
		vl[*n] = (uint8_t)a;
		weight[*n] = (uint8_t)b;
		(*n)++;
		s = *e ? e + 1 : e;
	}
	return 0;
bad:
	return cfg_err(p, v,
	               "%s: \"%s\" is not a list of VL:weight (VL 0-14, weight 0-255), "
	               "as \"0:64,1:32\"",
	               key, cfg_scalar(p, v, key));
}

static int parse_vl_table(struct cfgp *p, const yaml_node_t *n, const char *cls,
                          struct config_vl_table *t)
{
	if (n->type != YAML_MAPPING_NODE)
		return cfg_err(p, n, "%s: a mapping (sl2vl, vlarb_high, vlarb_low, high_limit)",
		               cls);
	memset(t, 0, sizeof(*t));
	t->set = true;
	for (unsigned sl = 0; sl < 16; sl++)
		t->sl2vl[sl] = 0;
	for (yaml_node_pair_t *kv = n->data.mapping.pairs.start; kv < n->data.mapping.pairs.top;
	     kv++) {
		const yaml_node_t *v;
		const char *k = key_of(p, kv, &v);
		uint64_t x;
		int rc = 0;
		if (!strcmp(k, "sl2vl")) {
			if (v->type != YAML_SEQUENCE_NODE ||
			    v->data.sequence.items.top - v->data.sequence.items.start != 16)
				return cfg_err(p, v,
				               "sl2vl: a list of 16 VLs, one per SL (15 drops)");
			unsigned sl = 0;
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top; it++, sl++) {
				if (cfg_u64(p, yaml_document_get_node(p->doc, *it), "sl2vl", 15,
				            &x) < 0)
					return -1;
				t->sl2vl[sl] = (uint8_t)x;
			}
		} else if (!strcmp(k, "vlarb_high")) {
			rc = parse_vlarb(p, v, k, t->high_vl, t->high_weight, &t->nhigh);
		} else if (!strcmp(k, "vlarb_low")) {
			rc = parse_vlarb(p, v, k, t->low_vl, t->low_weight, &t->nlow);
		} else if (!strcmp(k, "high_limit")) {
			rc = cfg_u64(p, v, k, 255, &x);
			t->high_limit = (uint8_t)x;
		} else {
			rc = cfg_err(p, v,
			             "%s: unknown key \"%s\" (sl2vl, vlarb_high, vlarb_low, "
			             "high_limit)",
			             cls, k);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int parse_list(struct cfgp *p, const yaml_node_t *v, const char *key, struct config_qos *q,
                      int (*one)(struct cfgp *, const yaml_node_t *, struct config_qos *))
{
	if (v->type != YAML_SEQUENCE_NODE)
		return cfg_err(p, v, "%s: expected a list", key);
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++)
		if (one(p, yaml_document_get_node(p->doc, *it), q) < 0)
			return -1;
	return 0;
}

int cfg_parse_qos(struct cfgp *p, struct ibsmd_config *c, const yaml_node_t *v)
{
	if (v->type != YAML_MAPPING_NODE)
		return cfg_err(p, v,
		               "qos: a mapping (port_groups, levels, rules, default_level, "
		               "vl_tables)");
	config_qos_free(c->qos);
	c->qos = NULL;
	if (v->data.mapping.pairs.top == v->data.mapping.pairs.start)
		return 0; /* "qos: {}", as --dump-config writes no policy */
	struct config_qos *q = calloc(1, sizeof(*q));
	if (!q)
		return cfg_err(p, v, "out of memory");
	c->qos = q;
	q->default_level = -1;
	/* groups and levels first, wherever they are written: rules name them */
	static const char *const order[] = {"port_groups", "levels", "rules", "default_level",
	                                    "vl_tables"};
	for (unsigned pass = 0; pass < 5; pass++) {
		for (yaml_node_pair_t *kv = v->data.mapping.pairs.start;
		     kv < v->data.mapping.pairs.top; kv++) {
			const yaml_node_t *val;
			const char *k = key_of(p, kv, &val);
			if (pass == 0) {
				bool known = false;
				for (unsigned i = 0; i < 5; i++)
					known |= !strcmp(k, order[i]);
				if (!known)
					return cfg_err(
					    p, val,
					    "qos: unknown key \"%s\" (port_groups, levels, "
					    "rules, default_level, vl_tables)",
					    k);
			}
			if (strcmp(k, order[pass]))
				continue;
			int rc = 0;
			if (pass == 0)
				rc = parse_list(p, val, k, q, parse_group);
			else if (pass == 1)
				rc = parse_list(p, val, k, q, parse_level);
			else if (pass == 2)
				rc = parse_list(p, val, k, q, parse_rule);
			else if (pass == 3) {
				const char *name = cfg_scalar(p, val, k);
				if (!name)
					return -1;
				q->default_level = (int16_t)level_index(q, name);
				if (q->default_level < 0)
					return cfg_err(p, val, "default_level: no QoS level \"%s\"",
					               name);
			} else {
				if (val->type != YAML_MAPPING_NODE)
					return cfg_err(p, val,
					               "vl_tables: a mapping of port classes (ca, "
					               "switch_external, switch_port0, router)");
				for (yaml_node_pair_t *c2 = val->data.mapping.pairs.start;
				     c2 < val->data.mapping.pairs.top; c2++) {
					const yaml_node_t *tv;
					const char *cls = key_of(p, c2, &tv);
					unsigned i = 0;
					while (i < QOS_NCLASSES && strcmp(cls, class_names[i]))
						i++;
					if (i == QOS_NCLASSES)
						return cfg_err(
						    p, tv,
						    "vl_tables: unknown port class \"%s\" (ca, "
						    "switch_external, switch_port0, router)",
						    cls);
					if (parse_vl_table(p, tv, cls, &q->cls[i]) < 0)
						return -1;
				}
			}
			if (rc < 0)
				return -1;
		}
	}
	return 0;
}

/* ---- --dump-config ---- */

static void dump_vlarb(FILE *out, const char *key, const uint8_t *vl, const uint8_t *w, unsigned n)
{
	fprintf(out, "      %s: \"", key);
	for (unsigned i = 0; i < n; i++)
		fprintf(out, "%s%u:%u", i ? "," : "", vl[i], w[i]);
	fprintf(out, "\"\n");
}

void cfg_dump_qos(FILE *out, const struct config_qos *q)
{
	if (!q) {
		fprintf(out, " {}\n");
		return;
	}
	fputc('\n', out);
	fprintf(out, "  port_groups:%s\n", q->ngroups ? "" : " []");
	for (unsigned i = 0; i < q->ngroups; i++) {
		const struct config_qos_group *g = &q->groups[i];
		fprintf(out, "    - name: ");
		cfg_dump_str(out, g->name);
		fputc('\n', out);
		if (g->nguids) {
			fprintf(out, "      guids: [");
			for (unsigned k = 0; k < g->nguids; k++)
				fprintf(out, "%s0x%016" PRIx64, k ? ", " : "", g->guids[k]);
			fprintf(out, "]\n");
		}
		if (g->node_desc[0]) {
			fprintf(out, "      node_description: ");
			cfg_dump_str(out, g->node_desc);
			fputc('\n', out);
		}
		if (g->partition[0]) {
			fprintf(out, "      partition: ");
			cfg_dump_str(out, g->partition);
			fputc('\n', out);
		}
	}
	fprintf(out, "  levels:%s\n", q->nlevels ? "" : " []");
	for (unsigned i = 0; i < q->nlevels; i++) {
		const struct config_qos_level *l = &q->levels[i];
		fprintf(out, "    - name: ");
		cfg_dump_str(out, l->name);
		fprintf(out, "\n      sl: %u\n", l->sl);
		if (l->mtu_limit)
			fprintf(out, "      mtu_limit: %u\n", 128u << l->mtu_limit);
		if (l->rate_limit)
			fprintf(out, "      rate_limit: %s\n", cfg_rate_name(l->rate_limit));
		if (l->packet_life != 0xff)
			fprintf(out, "      packet_life: %u\n", l->packet_life);
	}
	fprintf(out, "  rules:%s\n", q->nrules ? "" : " []");
	for (unsigned i = 0; i < q->nrules; i++) {
		const struct config_qos_rule *r = &q->rules[i];
		fprintf(out, "    - level: ");
		cfg_dump_str(out, q->levels[r->level].name);
		fputc('\n', out);
		if (r->has_sid) {
			if (r->sid_lo == r->sid_hi)
				fprintf(out, "      service_id: 0x%016" PRIx64 "\n", r->sid_lo);
			else
				fprintf(out,
				        "      service_id: 0x%016" PRIx64 "-0x%016" PRIx64 "\n",
				        r->sid_lo, r->sid_hi);
		}
		if (r->has_pkey)
			fprintf(out, "      pkey: 0x%04x\n", r->pkey);
		if (r->src >= 0) {
			fprintf(out, "      source: ");
			cfg_dump_str(out, q->groups[r->src].name);
			fputc('\n', out);
		}
		if (r->dst >= 0) {
			fprintf(out, "      destination: ");
			cfg_dump_str(out, q->groups[r->dst].name);
			fputc('\n', out);
		}
	}
	if (q->default_level >= 0) {
		fprintf(out, "  default_level: ");
		cfg_dump_str(out, q->levels[q->default_level].name);
		fputc('\n', out);
	}
	bool any = false;
	for (unsigned c = 0; c < QOS_NCLASSES; c++)
		any |= q->cls[c].set;
	fprintf(out, "  vl_tables:%s\n", any ? "" : " {}");
	for (unsigned c = 0; c < QOS_NCLASSES; c++) {
		const struct config_vl_table *t = &q->cls[c];
		if (!t->set)
			continue;
		fprintf(out, "    %s:\n      sl2vl: [", class_names[c]);
		for (unsigned sl = 0; sl < 16; sl++)
			fprintf(out, "%s%u", sl ? ", " : "", t->sl2vl[sl]);
		fprintf(out, "]\n");
		dump_vlarb(out, "vlarb_high", t->high_vl, t->high_weight, t->nhigh);
		dump_vlarb(out, "vlarb_low", t->low_vl, t->low_weight, t->nlow);
		fprintf(out, "      high_limit: %u\n", t->high_limit);
	}
}

/* ---- reload ---- */

static bool vl_table_equal(const struct config_vl_table *a, const struct config_vl_table *b)
{
	return a->set == b->set && !memcmp(a->sl2vl, b->sl2vl, 16) &&
	       a->high_limit == b->high_limit && a->nhigh == b->nhigh && a->nlow == b->nlow &&
	       !memcmp(a->high_vl, b->high_vl, a->nhigh) &&
	       !memcmp(a->high_weight, b->high_weight, a->nhigh) &&
	       !memcmp(a->low_vl, b->low_vl, a->nlow) &&
	       !memcmp(a->low_weight, b->low_weight, a->nlow);
}

bool cfg_qos_equal(const struct config_qos *a, const struct config_qos *b)
{
	if (!a || !b)
		return a == b;
	if (a->ngroups != b->ngroups || a->nlevels != b->nlevels || a->nrules != b->nrules ||
	    a->default_level != b->default_level)
		return false;
	for (unsigned c = 0; c < QOS_NCLASSES; c++)
		if (!vl_table_equal(&a->cls[c], &b->cls[c]))
			return false;
	for (unsigned i = 0; i < a->ngroups; i++) {
		const struct config_qos_group *x = &a->groups[i], *y = &b->groups[i];
		if (strcmp(x->name, y->name) || strcmp(x->node_desc, y->node_desc) ||
		    strcmp(x->partition, y->partition) || x->nguids != y->nguids ||
		    (x->nguids && memcmp(x->guids, y->guids, x->nguids * sizeof(uint64_t))))
			return false;
	}
	for (unsigned i = 0; i < a->nlevels; i++) {
		const struct config_qos_level *x = &a->levels[i], *y = &b->levels[i];
		if (strcmp(x->name, y->name) || x->sl != y->sl || x->mtu_limit != y->mtu_limit ||
		    x->rate_limit != y->rate_limit || x->packet_life != y->packet_life)
			return false;
	}
	for (unsigned i = 0; i < a->nrules; i++) {
		const struct config_qos_rule *x = &a->rules[i], *y = &b->rules[i];
		if (x->has_sid != y->has_sid || x->has_pkey != y->has_pkey ||
		    x->sid_lo != y->sid_lo || x->sid_hi != y->sid_hi || x->pkey != y->pkey ||
		    x->src != y->src || x->dst != y->dst || x->level != y->level)
			return false;
	}
	return true;
}
