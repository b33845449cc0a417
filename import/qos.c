/* OpenSM's QoS configuration as ibsmd.yaml's qos: section (see qos.h). The parser
 * follows the grammar of OpenSM's doc/QoS_management_in_OpenSM.txt: sections (port-groups,
 * qos-setup, qos-levels, qos-ulps, qos-match-rules) of blocks (port-group ... end-port-group)
 * of "key: value" lines; qos-ulps lines are "ULP[, criterion value] : SL". No library reads
 * the format, hence the hand-written parser; it is fuzzed (test/fuzz/fuzz_import.c). */
#include "import/qos.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mad/link_speed.h"

#define MAX_NAMES 256

enum { C_CA, C_SWE, C_SW0, C_RTR, C_ALL, NCLS };
enum { F_SL2VL, F_HIGH, F_LOW, F_LIMIT, NFIELDS };

struct qos_import {
	/* the YAML of each list, as it is built */
	char *groups, *levels, *rules;
	size_t glen, llen, rlen;
	FILE *g, *l, *r;
	unsigned ngroups, nlevels, nrules;
	char group_names[MAX_NAMES][64], level_names[MAX_NAMES][64];
	char default_level[64];
	bool ulp_level[16]; /* a level "ulp-slN" made for the qos-ulps */
	unsigned targets;   /* groups made for target-port-guid */
	char table[NCLS][NFIELDS][256];
};

struct qos_import *qos_import_new(void)
{
	struct qos_import *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->g = open_memstream(&q->groups, &q->glen);
	q->l = open_memstream(&q->levels, &q->llen);
	q->r = open_memstream(&q->rules, &q->rlen);
	if (!q->g || !q->l || !q->r) {
		qos_import_free(q);
		return NULL;
	}
	return q;
}

void qos_import_free(struct qos_import *q)
{
	if (!q)
		return;
	if (q->g)
		fclose(q->g);
	if (q->l)
		fclose(q->l);
	if (q->r)
		fclose(q->r);
	free(q->groups);
	free(q->levels);
	free(q->rules);
	free(q);
}

static int fail(char *err, size_t errlen, const char *file, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail(char *err, size_t errlen, const char *file, unsigned line, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s:%u: %s", file, line, msg);
	return -1;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* A YAML double-quoted string. */
static void yaml_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, out);
	}
	fputc('"', out);
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *e;
	errno = 0;
	if (!*s || *s == '-')
		return false;
	unsigned long long x = strtoull(s, &e, 0);
	if (errno || *trim(e))
		return false;
	*v = x;
	return true;
}

/* "A" or "A-B" (numbers), into lo and hi. */
static bool parse_range(char *s, uint64_t *lo, uint64_t *hi)
{
	s = trim(s);
	char *dash = strchr(s + (*s == '-'), '-');
	if (!dash)
		return parse_u64(s, lo) && (*hi = *lo, true);
	*dash = 0;
	return parse_u64(trim(s), lo) && parse_u64(trim(dash + 1), hi) && *lo <= *hi;
}

/* ---- opensm.conf's qos_* options ---- */

int qos_import_conf_option(struct qos_import *q, const char *key, const char *val, const char *file,
                           unsigned line, char *err, size_t errlen)
{
	static const char *const cls[NCLS] = {"ca_", "swe_", "sw0_", "rtr_", ""};
	static const char *const fields[] = {"sl2vl", "vlarb_high", "vlarb_low", "high_limit",
	                                     "max_vls"};
	if (strncmp(key, "qos_", 4))
		return 0;
	for (unsigned c = 0; c < NCLS; c++) {
		size_t cl = strlen(cls[c]);
		if (strncmp(key + 4, cls[c], cl))
			continue;
		for (unsigned f = 0; f < 5; f++) {
			if (strcmp(key + 4 + cl, fields[f]))
				continue;
			if (f == 4)
				return 1; /* max_vls: ibsmd maps within what each link runs */
			/* OpenSM writes -1 for a high limit it was not given (its own file's
			 * default): the option is unset, as "(null)" is for the tables */
			if (f == F_LIMIT && !strcmp(val, "-1"))
				return 1;
			char buf[256];
			snprintf(buf, sizeof(buf), "%s", val);
			unsigned n = 0;
			for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
			     t = strtok_r(NULL, ",", &save), n++) {
				uint64_t a, b;
				char *colon = strchr(t, ':');
				if (f == F_SL2VL ? !parse_u64(trim(t), &a) || a > 15
				    : f == F_LIMIT
				        ? !parse_u64(trim(t), &a) || a > 255
				        : !colon || (*colon = 0, !parse_u64(trim(t), &a)) ||
				              a > 14 || !parse_u64(trim(colon + 1), &b) || b > 255)
					return fail(
					    err, errlen, file, line, "%s: \"%s\" is not %s", key,
					    val,
					    f == F_SL2VL   ? "16 VLs (0-15) separated by commas"
					    : f == F_LIMIT ? "a number 0-255"
					                   : "a list of VL:weight (VL 0-14, weight "
					                     "0-255)");
			}
			if (f == F_SL2VL && n != 16)
				return fail(err, errlen, file, line, "%s: %u VLs, not 16", key, n);
			/* as ibsmd.yaml writes them: no blanks */
			size_t k = 0;
			for (const char *s = val; *s && k + 1 < sizeof(q->table[c][f]); s++)
				if (!isspace((unsigned char)*s))
					q->table[c][f][k++] = *s;
			q->table[c][f][k] = 0;
			return 1;
		}
	}
	return 0;
}

/* ---- qos-policy.conf ---- */

enum sec { S_NONE, S_GROUPS, S_SETUP, S_LEVELS, S_ULPS, S_RULES };
enum blk { B_NONE, B_GROUP, B_LEVEL, B_RULE, B_TABLES };

struct block {
	unsigned line;
	char name[64], use[256], guids[4096], port_name[192], partition[64];
	char sl[16], mtu[16], rate[16], life[16];
	char level[64], source[256], destination[256], sids[1024], pkeys[512];
};

struct ctx {
	struct qos_import *q;
	const char *file;
	char *err;
	size_t errlen;
	unsigned line;
};

static int cfail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cfail(struct ctx *c, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fail(c->err, c->errlen, c->file, c->line, "%s", msg);
}

static bool known(char names[][64], unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* GUIDs and GUID ranges, as a YAML flow list into out. */
static int emit_guids(struct ctx *c, FILE *out, char *list)
{
	fputs("[", out);
	unsigned n = 0;
	for (char *save = NULL, *t = strtok_r(list, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		uint64_t lo, hi;
		if (!parse_range(t, &lo, &hi) || !lo)
			return cfail(c, "port-guid: \"%s\" is not a GUID or a range of them",
			             trim(t));
		if (hi - lo >= 1024)
			return cfail(c, "port-guid: the range %s holds more than 1,024 GUIDs",
			             trim(t));
		for (uint64_t g = lo;; g++) {
			fprintf(out, "%s0x%016" PRIx64, n++ ? ", " : "", g);
			if (g == hi)
				break;
		}
	}
	fputs("]", out);
	return 0;
}

static int end_group(struct ctx *c, struct block *b)
{
	struct qos_import *q = c->q;
	if (!b->name[0])
		return cfail(c, "a port-group without a name");
	if (q->ngroups == MAX_NAMES || known(q->group_names, q->ngroups, b->name))
		return cfail(c, "port-group \"%s\": defined twice, or too many groups", b->name);
	FILE *g = q->g;
	if (b->use[0])
		fprintf(g, "    # %s\n", b->use);
	fputs("    - name: ", g);
	yaml_str(g, b->name);
	fputc('\n', g);
	if (b->guids[0]) {
		fputs("      guids: ", g);
		if (emit_guids(c, g, b->guids) < 0)
			return -1;
		fputc('\n', g);
	}
	if (b->port_name[0]) {
		/* "node description/P<port>": the node's description, every port of it */
		char desc[192], glob[400];
		snprintf(desc, sizeof(desc), "%s", b->port_name);
		char *slash = strrchr(desc, '/');
		if (slash && slash[1] == 'P')
			*slash = 0;
		size_t k = 0;
		for (const char *s = trim(desc); *s && k + 2 < sizeof(glob); s++) {
			if (strchr("*?[]\\", *s))
				glob[k++] = '\\';
			glob[k++] = *s;
		}
		glob[k] = 0;
		fprintf(g, "      # port-name %s: every port of that node\n", b->port_name);
		fputs("      node_description: ", g);
		yaml_str(g, glob);
		fputc('\n', g);
	}
	if (b->partition[0]) {
		fputs("      partition: ", g);
		yaml_str(g, b->partition);
		fputc('\n', g);
	}
	snprintf(q->group_names[q->ngroups++], 64, "%s", b->name);
	return 0;
}

/* mtu-limit and rate-limit are IBA codes */
static const char *rate_gbps(unsigned code)
{
	return code <= MAD_RATE_MAX_CODE ? mad_rate_name((uint8_t)code) : NULL;
}

static int end_level(struct ctx *c, struct block *b)
{
	struct qos_import *q = c->q;
	uint64_t sl, v;
	if (!b->name[0])
		return cfail(c, "a qos-level without a name");
	if (q->nlevels == MAX_NAMES || known(q->level_names, q->nlevels, b->name))
		return cfail(c, "qos-level \"%s\": defined twice, or too many levels", b->name);
	if (!b->sl[0] || !parse_u64(b->sl, &sl) || sl > 15)
		return cfail(c, "qos-level \"%s\": sl \"%s\" is not 0-15", b->name, b->sl);
	FILE *l = q->l;
	if (b->use[0])
		fprintf(l, "    # %s\n", b->use);
	fputs("    - name: ", l);
	yaml_str(l, b->name);
	fprintf(l, "\n      sl: %" PRIu64 "\n", sl);
	if (b->mtu[0]) {
		if (!parse_u64(b->mtu, &v) || v < 1 || v > 5)
			return cfail(c, "qos-level \"%s\": mtu-limit \"%s\" is not an MTU code 1-5",
			             b->name, b->mtu);
		fprintf(l, "      mtu_limit: %u\n", 128u << v);
	}
	if (b->rate[0]) {
		if (!parse_u64(b->rate, &v) || !rate_gbps((unsigned)v))
			return cfail(c,
			             "qos-level \"%s\": rate-limit \"%s\" is not a rate code 2-25",
			             b->name, b->rate);
		fprintf(l, "      rate_limit: \"%s\"\n", rate_gbps((unsigned)v));
	}
	if (b->life[0]) {
		if (!parse_u64(b->life, &v) || v > 31)
			return cfail(c, "qos-level \"%s\": packet-life \"%s\" is not 0-31", b->name,
			             b->life);
		fprintf(l, "      packet_life: %" PRIu64 "\n", v);
	}
	snprintf(q->level_names[q->nlevels++], 64, "%s", b->name);
	return 0;
}

/* One rule per (service ID range, P_Key): ibsmd's rules hold one of each. */
static int emit_rules(struct ctx *c, const char *use, const char *level, const char *src,
                      const char *dst, const char *sids, const char *pkeys)
{
	struct qos_import *q = c->q;
	char sbuf[1024], pbuf[512];
	snprintf(sbuf, sizeof(sbuf), "%s", sids);
	snprintf(pbuf, sizeof(pbuf), "%s", pkeys);
	uint64_t keys[64];
	unsigned nkeys = 0;
	for (char *save = NULL, *t = strtok_r(pbuf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		uint64_t lo, hi;
		if (!parse_range(t, &lo, &hi) || hi > 0xffff)
			return cfail(c, "pkey: \"%s\" is not a P_Key or a range of them", trim(t));
		if (hi - lo + nkeys >= 64)
			return cfail(c, "pkey: more than 64 P_Keys in one rule");
		for (uint64_t k = lo; k <= hi; k++)
			keys[nkeys++] = k & 0x7fff;
	}
	char *save = NULL, *t = sbuf[0] ? strtok_r(sbuf, ",", &save) : NULL;
	do {
		uint64_t lo = 0, hi = 0;
		if (t && !parse_range(t, &lo, &hi))
			return cfail(c, "service-id: \"%s\" is not a service ID or a range of them",
			             trim(t));
		for (unsigned k = 0; k < (nkeys ? nkeys : 1); k++) {
			FILE *r = q->r;
			if (use && *use)
				fprintf(r, "    # %s\n", use);
			fputs("    - level: ", r);
			yaml_str(r, level);
			fputc('\n', r);
			if (t && lo == hi)
				fprintf(r, "      service_id: 0x%016" PRIx64 "\n", lo);
			else if (t)
				fprintf(r, "      service_id: 0x%016" PRIx64 "-0x%016" PRIx64 "\n",
				        lo, hi);
			if (nkeys)
				fprintf(r, "      pkey: 0x%04" PRIx64 "\n", keys[k]);
			if (src && *src) {
				fputs("      source: ", r);
				yaml_str(r, src);
				fputc('\n', r);
			}
			if (dst && *dst) {
				fputs("      destination: ", r);
				yaml_str(r, dst);
				fputc('\n', r);
			}
			q->nrules++;
		}
		t = t ? strtok_r(NULL, ",", &save) : NULL;
	} while (t);
	return 0;
}

static int one_group(struct ctx *c, const char *what, const char *list)
{
	if (!*list)
		return 0;
	if (strchr(list, ','))
		return cfail(c,
		             "%s: \"%s\": a rule takes one port group in ibsmd (make one group "
		             "of them)",
		             what, list);
	if (!known(c->q->group_names, c->q->ngroups, list))
		return cfail(c, "%s: no port-group \"%s\" defined before", what, list);
	return 0;
}

static int end_rule(struct ctx *c, struct block *b)
{
	if (!b->level[0])
		return cfail(c, "a qos-match-rule without qos-level-name");
	if (!known(c->q->level_names, c->q->nlevels, b->level))
		return cfail(c, "qos-level-name: no qos-level \"%s\" defined before", b->level);
	if (one_group(c, "source", b->source) < 0 ||
	    one_group(c, "destination", b->destination) < 0)
		return -1;
	return emit_rules(c, b->use, b->level, b->source, b->destination, b->sids, b->pkeys);
}

/* The level qos-ulps lines with SL sl use. */
static const char *ulp_level(struct ctx *c, unsigned sl)
{
	static const char *const names[16] = {"ulp-sl0",  "ulp-sl1",  "ulp-sl2",  "ulp-sl3",
	                                      "ulp-sl4",  "ulp-sl5",  "ulp-sl6",  "ulp-sl7",
	                                      "ulp-sl8",  "ulp-sl9",  "ulp-sl10", "ulp-sl11",
	                                      "ulp-sl12", "ulp-sl13", "ulp-sl14", "ulp-sl15"};
	struct qos_import *q = c->q;
	if (!q->ulp_level[sl] && q->nlevels < MAX_NAMES) {
		q->ulp_level[sl] = true;
		fprintf(q->l, "    - name: \"%s\"\n      sl: %u\n", names[sl], sl);
		snprintf(q->level_names[q->nlevels++], 64, "%s", names[sl]);
	}
	return names[sl];
}

/* "ULP[, criterion value] : SL" */
static int ulp_line(struct ctx *c, char *s)
{
	char *colon = strrchr(s, ':');
	uint64_t sl;
	if (!colon || !parse_u64(trim(colon + 1), &sl) || sl > 15)
		return cfail(c, "qos-ulps: \"%s\" is not \"ULP[, criterion value] : SL\"", s);
	*colon = 0;
	char *spec = trim(s), *comma = strchr(spec, ','), *crit = NULL;
	if (comma) {
		*comma = 0;
		crit = trim(comma + 1);
	}
	spec = trim(spec);
	for (char *p = spec; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	const char *lv = ulp_level(c, (unsigned)sl);
	char name[32] = "", value[1024] = "";
	if (crit) {
		size_t k = strcspn(crit, " \t");
		snprintf(name, sizeof(name), "%.*s", (int)(k < 31 ? k : 31), crit);
		snprintf(value, sizeof(value), "%s", trim(crit + k));
	}
	/* the service ID ranges of the ULPs that have one (IBA annex A11, RDMA IP CM) */
	uint64_t base = !strcmp(spec, "sdp")                            ? 0x10000CE100000000ull
	                : !strcmp(spec, "rds") || !strcmp(spec, "iser") ? 0x0000000001060000ull
	                                                                : 0;
	char sid[64];
	if (!strcmp(spec, "default") && !crit) {
		snprintf(c->q->default_level, sizeof(c->q->default_level), "%s", lv);
		return 0;
	}
	if (base && !crit) {
		if (!strcmp(spec, "iser"))
			snprintf(sid, sizeof(sid), "0x%016" PRIx64, base + 3260); /* its port */
		else
			snprintf(sid, sizeof(sid), "0x%016" PRIx64 "-0x%016" PRIx64, base,
			         base + 0xffff);
		return emit_rules(c, spec, lv, NULL, NULL, sid, "");
	}
	if (base && !strcmp(name, "port-num")) {
		uint64_t lo, hi;
		if (!parse_range(value, &lo, &hi) || hi > 0xffff)
			return cfail(c, "qos-ulps: port-num \"%s\" is not a port or a range",
			             value);
		snprintf(sid, sizeof(sid), "0x%016" PRIx64 "-0x%016" PRIx64, base + lo, base + hi);
		return emit_rules(c, spec, lv, NULL, NULL, sid, "");
	}
	if ((!strcmp(spec, "any") || !strcmp(spec, "ipoib")) && !strcmp(name, "pkey"))
		return emit_rules(c, spec, lv, NULL, NULL, "", value);
	if (!strcmp(spec, "ipoib") && !crit)
		return emit_rules(c, spec, lv, NULL, NULL, "", "0x7fff");
	if (!strcmp(spec, "any") && !strcmp(name, "service-id"))
		return emit_rules(c, spec, lv, NULL, NULL, value, "");
	if ((!strcmp(spec, "any") || !strcmp(spec, "srp")) && !strcmp(name, "target-port-guid")) {
		struct qos_import *q = c->q;
		if (q->ngroups == MAX_NAMES)
			return cfail(c, "too many port groups");
		char gname[64];
		snprintf(gname, sizeof(gname), "ulp-target-%u", ++q->targets);
		fprintf(q->g, "    - name: \"%s\"\n      guids: ", gname);
		if (emit_guids(c, q->g, value) < 0)
			return -1;
		fputc('\n', q->g);
		snprintf(q->group_names[q->ngroups++], 64, "%s", gname);
		return emit_rules(c, spec, lv, NULL, gname, "", "");
	}
	return cfail(c,
	             "qos-ulps: \"%s%s%s\" cannot be translated (ibsmd takes default; any with "
	             "service-id, pkey or target-port-guid; sdp, rds, iser with or without "
	             "port-num; ipoib with or without pkey; srp with target-port-guid)",
	             spec, crit ? ", " : "", crit ? crit : "");
}

static int block_key(struct ctx *c, enum blk blk, struct block *b, const char *key, char *val)
{
	struct {
		enum blk blk;
		const char *key;
		char *dst;
		size_t len;
		bool list; /* values may repeat the key: joined by commas */
	} keys[] = {
	    {B_GROUP, "name", b->name, sizeof(b->name), false},
	    {B_GROUP, "use", b->use, sizeof(b->use), false},
	    {B_GROUP, "port-guid", b->guids, sizeof(b->guids), true},
	    {B_GROUP, "port-name", b->port_name, sizeof(b->port_name), false},
	    {B_GROUP, "partition", b->partition, sizeof(b->partition), false},
	    {B_LEVEL, "name", b->name, sizeof(b->name), false},
	    {B_LEVEL, "use", b->use, sizeof(b->use), false},
	    {B_LEVEL, "sl", b->sl, sizeof(b->sl), false},
	    {B_LEVEL, "mtu-limit", b->mtu, sizeof(b->mtu), false},
	    {B_LEVEL, "rate-limit", b->rate, sizeof(b->rate), false},
	    {B_LEVEL, "packet-life", b->life, sizeof(b->life), false},
	    {B_RULE, "use", b->use, sizeof(b->use), false},
	    {B_RULE, "qos-level-name", b->level, sizeof(b->level), false},
	    {B_RULE, "source", b->source, sizeof(b->source), true},
	    {B_RULE, "destination", b->destination, sizeof(b->destination), true},
	    {B_RULE, "service-id", b->sids, sizeof(b->sids), true},
	    {B_RULE, "pkey", b->pkeys, sizeof(b->pkeys), true},
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (keys[i].blk != blk || strcmp(keys[i].key, key))
			continue;
		size_t have = strlen(keys[i].dst);
		if (have && !keys[i].list)
			return cfail(c, "%s: given twice", key);
		if (have + strlen(val) + 2 > keys[i].len)
			return cfail(c, "%s: too long", key);
		snprintf(keys[i].dst + have, keys[i].len - have, "%s%s", have ? "," : "", val);
		return 0;
	}
	static const char *const refused[] = {"node-type", "path-bits", "qos-class", "pkey"};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (!strcmp(key, refused[i]))
			return cfail(c, "%s cannot be translated: ibsmd's %s have no %s", key,
			             blk == B_GROUP   ? "port groups"
			             : blk == B_LEVEL ? "QoS levels"
			                              : "rules",
			             key);
	return cfail(c, "unknown key \"%s\" here", key);
}

/* A section's start or end word: 1 taken, 0 not one, -1 refused with err. */
static int section_word(struct ctx *c, const char *s, enum sec *sec, enum blk blk)
{
	static const struct {
		const char *word;
		enum sec sec;
	} secs[] = {{"port-groups", S_GROUPS},
	            {"qos-setup", S_SETUP},
	            {"qos-levels", S_LEVELS},
	            {"qos-ulps", S_ULPS},
	            {"qos-match-rules", S_RULES}};
	for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		if (!strcmp(s, secs[i].word)) {
			if (*sec != S_NONE)
				return cfail(c, "%s inside another section", s);
			*sec = secs[i].sec;
			return 1;
		}
		if (!strncmp(s, "end-", 4) && !strcmp(s + 4, secs[i].word)) {
			if (*sec != secs[i].sec || blk != B_NONE)
				return cfail(c, "%s without its %s (or inside a block)", s,
				             secs[i].word);
			*sec = S_NONE;
			return 1;
		}
	}
	return 0;
}

/* A block's start or end word in section sec; the end translates the block. 1 taken, 0 not
 * one, -1 refused with err. */
static int block_word(struct ctx *c, const char *s, enum sec sec, enum blk *blk, struct block *b)
{
	static const struct {
		enum sec sec;
		const char *word;
		enum blk blk;
	} blks[] = {{S_GROUPS, "port-group", B_GROUP},
	            {S_LEVELS, "qos-level", B_LEVEL},
	            {S_RULES, "qos-match-rule", B_RULE},
	            {S_SETUP, "sl2vl-tables", B_TABLES},
	            {S_SETUP, "vlarb-tables", B_TABLES}};
	for (size_t i = 0; i < sizeof(blks) / sizeof(blks[0]); i++) {
		if (sec != blks[i].sec)
			continue;
		if (!strcmp(s, blks[i].word)) {
			if (*blk != B_NONE)
				return cfail(c, "%s inside another block", s);
			*blk = blks[i].blk;
			memset(b, 0, sizeof(*b));
			b->line = c->line;
			return 1;
		}
		if (!strncmp(s, "end-", 4) && !strcmp(s + 4, blks[i].word)) {
			if (*blk != blks[i].blk)
				return cfail(c, "%s without its %s", s, blks[i].word);
			int r = *blk == B_GROUP   ? end_group(c, b)
			        : *blk == B_LEVEL ? end_level(c, b)
			        : *blk == B_RULE  ? end_rule(c, b)
			                          : 0;
			if (r < 0)
				return -1;
			*blk = B_NONE;
			return 1;
		}
	}
	return 0;
}

/* One line of the policy, without its comment and blanks. 0; -1 refused with err. */
static int policy_line(struct ctx *c, char *s, enum sec *sec, enum blk *blk, struct block *b)
{
	int r = section_word(c, s, sec, *blk);
	if (r)
		return r < 0 ? -1 : 0;
	if (*sec == S_ULPS)
		return ulp_line(c, s) < 0 ? -1 : 0;
	r = block_word(c, s, *sec, blk, b);
	if (r)
		return r < 0 ? -1 : 0;
	if (*blk == B_TABLES)
		return cfail(c,
		             "qos-setup's per-port scopes (%s) cannot be translated: ibsmd's "
		             "tables are per port class (qos_ca_*, qos_swe_*, qos_sw0_*, qos_rtr_* "
		             "in opensm.conf; vl_tables in ibsmd.yaml)",
		             s);
	char *colon = strchr(s, ':');
	if (*blk == B_NONE || !colon)
		return cfail(c, "\"%s\" is not expected here", s);
	*colon = 0;
	return block_key(c, *blk, b, trim(s), trim(colon + 1)) < 0 ? -1 : 0;
}

int qos_import_policy_text(struct qos_import *q, const char *text, size_t len, const char *file,
                           char *err, size_t errlen)
{
	struct ctx c = {.q = q, .file = file, .err = err, .errlen = errlen};
	enum sec sec = S_NONE;
	enum blk blk = B_NONE;
	struct block *b = calloc(1, sizeof(*b));
	char *line = malloc(1024);
	int rc = -1;
	if (!b || !line) {
		snprintf(err, errlen, "%s: out of memory", file);
		goto out;
	}
	for (size_t pos = 0; pos < len;) {
		size_t e = pos;
		while (e < len && text[e] != '\n')
			e++;
		c.line++;
		size_t n = e - pos < 1023 ? e - pos : 1023;
		memcpy(line, text + pos, n);
		line[n] = 0;
		pos = e + 1;
		if (memchr(line, 0, n)) {
			cfail(&c, "a NUL byte: not a text file");
			goto out;
		}
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *s = trim(line);
		if (*s && policy_line(&c, s, &sec, &blk, b) < 0)
			goto out;
	}
	if (sec != S_NONE || blk != B_NONE) {
		cfail(&c, "the file ends inside a %s", blk != B_NONE ? "block" : "section");
		goto out;
	}
	rc = 0;
out:
	free(b);
	free(line);
	return rc;
}

int qos_import_policy(struct qos_import *q, const char *file, char *err, size_t errlen)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return -1;
	}
	char *text = NULL;
	size_t len = 0, cap = 0;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (len + n > cap) {
			cap = (len + n) * 2;
			char *t = realloc(text, cap);
			if (!t) {
				free(text);
				fclose(f);
				snprintf(err, errlen, "%s: out of memory", file);
				return -1;
			}
			text = t;
		}
		memcpy(text + len, buf, n);
		len += n;
	}
	fclose(f);
	int rc = qos_import_policy_text(q, text ? text : "", len, file, err, errlen);
	free(text);
	return rc;
}

void qos_import_write(const struct qos_import *q, FILE *out)
{
	fflush(q->g);
	fflush(q->l);
	fflush(q->r);
	bool tables = false;
	for (unsigned c = 0; c < NCLS; c++)
		for (unsigned f = 0; f < NFIELDS; f++)
			tables |= q->table[c][f][0] != 0;
	if (!q->ngroups && !q->nlevels && !q->nrules && !tables && !q->default_level[0])
		return;
	fputs("qos:\n", out);
	if (q->ngroups)
		fprintf(out, "  port_groups:\n%.*s", (int)q->glen, q->groups);
	if (q->nlevels)
		fprintf(out, "  levels:\n%.*s", (int)q->llen, q->levels);
	if (q->nrules)
		fprintf(out, "  rules:\n%.*s", (int)q->rlen, q->rules);
	if (q->default_level[0]) {
		fputs("  default_level: ", out);
		yaml_str(out, q->default_level);
		fputc('\n', out);
	}
	if (!tables)
		return;
	static const char *const names[] = {"ca", "switch_external", "switch_port0", "router"};
	fputs("  vl_tables:\n", out);
	for (unsigned c = 0; c < C_ALL; c++) {
		const char *v[NFIELDS];
		bool any = false;
		for (unsigned f = 0; f < NFIELDS; f++) {
			v[f] = q->table[c][f][0] ? q->table[c][f] : q->table[C_ALL][f];
			any |= v[f][0] != 0;
		}
		if (!any)
			continue;
		fprintf(out, "    %s:\n", names[c]);
		if (v[F_SL2VL][0])
			fprintf(out, "      sl2vl: [%s]\n", v[F_SL2VL]);
		if (v[F_HIGH][0])
			fprintf(out, "      vlarb_high: \"%s\"\n", v[F_HIGH]);
		if (v[F_LOW][0])
			fprintf(out, "      vlarb_low: \"%s\"\n", v[F_LOW]);
		if (v[F_LIMIT][0])
			fprintf(out, "      high_limit: %s\n", v[F_LIMIT]);
	}
}
