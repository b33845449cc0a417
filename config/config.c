/* The YAML configuration file, read with libyaml's document loader. Unknown keys and wrong
 * types are errors naming the file and line: a typo must not silently leave a default. */
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

void config_defaults(struct ibsmd_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->routing_engines, sizeof(c->routing_engines), "minhop");
	c->lid_min = 1;
	c->lid_max = 0xbfff;
	c->sweep_interval_s = 10;
	c->sm_poll_interval_ms = 500;
	c->sm_poll_retries = 3;
	c->mad_window = 64;
	c->mad_window_per_node = 4;
	c->mad_timeout_ms = 200;
	c->mad_retries = 3;
	c->subnet_prefix = 0xfe80000000000000ull;
	c->subnet_timeout = 18;
	c->m_key_protect = 0;
	c->sm_key = 1; /* as OpenSM, so tools that send 1 are trusted by either */
	c->default_ipoib = true;
	c->default_ipoib_mtu = 4;
	c->default_ipoib_rate = 3;
	snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/ibsmd");
	c->log_level = -1;
}

void config_free(struct ibsmd_config *c)
{
	for (unsigned i = 0; i < c->npartitions; i++) {
		free(c->partitions[i].guids);
		free(c->partitions[i].full);
	}
	c->npartitions = 0;
}

struct cfgp {
	const char *path;
	yaml_document_t *doc;
	char *err;
	size_t errlen;
};

static int cerr(struct cfgp *p, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int cerr(struct cfgp *p, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "%s:%zu: %s", p->path, n ? n->start_mark.line + 1 : 0, msg);
	return -1;
}

static const char *scalar(struct cfgp *p, const yaml_node_t *n, const char *key)
{
	if (n->type != YAML_SCALAR_NODE) {
		cerr(p, n, "%s: expected a single value", key);
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

static int get_u64(struct cfgp *p, const yaml_node_t *n, const char *key, uint64_t max,
                   uint64_t *out)
{
	const char *s = scalar(p, n, key);
	if (!s)
		return -1;
	char *e;
	errno = 0;
	unsigned long long v = strtoull(s, &e, 0);
	if (!*s || *e || errno || v > max || s[0] == '-')
		return cerr(p, n, "%s: \"%s\" is not a number from 0 to %llu", key, s,
		            (unsigned long long)max);
	*out = v;
	return 0;
}

#define GET_UINT(p, n, key, max, dst)                                                              \
	do {                                                                                       \
		uint64_t v_;                                                                       \
		if (get_u64(p, n, key, max, &v_) < 0)                                              \
			return -1;                                                                 \
		(dst) = v_;                                                                        \
	} while (0)

static int get_bool(struct cfgp *p, const yaml_node_t *n, const char *key, bool *out)
{
	const char *s = scalar(p, n, key);
	if (!s)
		return -1;
	if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on"))
		*out = true;
	else if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off"))
		*out = false;
	else
		return cerr(p, n, "%s: expected true or false, not \"%s\"", key, s);
	return 0;
}

static int get_str(struct cfgp *p, const yaml_node_t *n, const char *key, char *dst, size_t len)
{
	const char *s = scalar(p, n, key);
	if (!s)
		return -1;
	if (strlen(s) >= len)
		return cerr(p, n, "%s: longer than %zu characters", key, len - 1);
	snprintf(dst, len, "%s", s);
	return 0;
}

/* The M_Key secret: a file only root may read, of at least 16 bytes (trailing white space
 * left out, so that "openssl rand -hex 32 > FILE" and the same bytes without the newline are
 * one secret). Kept as a BLAKE2b hash of the contents, with a label so that the same file
 * used elsewhere gives unrelated keys. */
static int read_secret(struct cfgp *p, const yaml_node_t *n, struct ibsmd_config *c)
{
	const char *path = c->m_key_secret;
	c->has_m_key_secret = false;
	if (!path[0])
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cerr(p, n, "m_key_secret: cannot open %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return cerr(p, n, "m_key_secret: %s is not a regular file", path);
	}
	if (st.st_mode & 077) {
		close(fd);
		return cerr(p, n,
		            "m_key_secret: %s can be read by others (mode %04o): chmod 600 it, "
		            "anyone who reads it can take over every port",
		            path, (unsigned)(st.st_mode & 07777));
	}
	uint8_t buf[4097];
	ssize_t len = read(fd, buf, sizeof(buf));
	close(fd);
	if (len < 0)
		return cerr(p, n, "m_key_secret: reading %s: %s", path, strerror(errno));
	if (len == (ssize_t)sizeof(buf))
		return cerr(p, n, "m_key_secret: %s is longer than 4096 bytes", path);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
	                   buf[len - 1] == '\t'))
		len--;
	if (len < 16) {
		sodium_memzero(buf, sizeof(buf));
		return cerr(p, n,
		            "m_key_secret: %s holds %zd bytes: at least 16 are needed (for one, "
		            "\"openssl rand -hex 32 > %s\")",
		            path, len, path);
	}
	if (sodium_init() < 0)
		return cerr(p, n, "m_key_secret: libsodium does not initialize");
	static const char label[] = "ibsmd m_key_secret v1";
	crypto_generichash_state h;
	crypto_generichash_init(&h, NULL, 0, sizeof(c->m_key_secret_key));
	crypto_generichash_update(&h, (const uint8_t *)label, sizeof(label) - 1);
	crypto_generichash_update(&h, buf, (unsigned long long)len);
	crypto_generichash_final(&h, c->m_key_secret_key, sizeof(c->m_key_secret_key));
	sodium_memzero(buf, sizeof(buf));
	c->has_m_key_secret = true;
	return 0;
}

/* A list of GUIDs, or one GUID. */
static int get_guids(struct cfgp *p, const yaml_node_t *n, const char *key, uint64_t *out,
                     unsigned max, unsigned *count)
{
	*count = 0;
	if (n->type == YAML_SCALAR_NODE)
		return get_u64(p, n, key, UINT64_MAX, &out[(*count)++]);
	if (n->type != YAML_SEQUENCE_NODE)
		return cerr(p, n, "%s: expected a GUID or a list of GUIDs", key);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		if (*count == max)
			return cerr(p, n, "%s: more than %u GUIDs", key, max);
		if (get_u64(p, yaml_document_get_node(p->doc, *it), key, UINT64_MAX,
		            &out[(*count)++]) < 0)
			return -1;
	}
	return 0;
}

/* An MTU in bytes, as the IBA code. */
static int get_mtu(struct cfgp *p, const yaml_node_t *n, const char *key, uint8_t *out)
{
	uint64_t v = 0;
	if (get_u64(p, n, key, 4096, &v) < 0)
		return -1;
	static const unsigned bytes[] = {256, 512, 1024, 2048, 4096};
	for (uint8_t i = 0; i < 5; i++)
		if (bytes[i] == v) {
			*out = (uint8_t)(i + 1);
			return 0;
		}
	return cerr(p, n, "%s: 256, 512, 1024, 2048 or 4096, not %llu", key, (unsigned long long)v);
}

/* A rate in Gb/s (2.5, 5, 10, 20, 30, 40, 60, 80, 120), as the IBA code. */
static int get_rate(struct cfgp *p, const yaml_node_t *n, const char *key, uint8_t *out)
{
	const char *s = scalar(p, n, key);
	if (!s)
		return -1;
	static const struct {
		const char *gbps;
		uint8_t code;
	} rates[] = {{"2.5", 2}, {"5", 5},  {"10", 3}, {"20", 6},  {"30", 4},
	             {"40", 7},  {"60", 8}, {"80", 9}, {"120", 10}};
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (!strcmp(s, rates[i].gbps)) {
			*out = rates[i].code;
			return 0;
		}
	return cerr(p, n, "%s: a rate in Gb/s (2.5, 5, 10, 20, 30, 40, 60, 80, 120), not \"%s\"",
	            key, s);
}

static int parse_partition(struct cfgp *p, const yaml_node_t *n, struct config_partition *pt)
{
	pt->ipoib_mtu = 4;
	pt->ipoib_rate = 3;
	bool ipoib_given = false;
	if (n->type != YAML_MAPPING_NODE)
		return cerr(p, n, "partitions: each entry is a mapping (name, pkey, members)");
	bool have_pkey = false, full = true;
	const yaml_node_t *members = NULL;
	for (yaml_node_pair_t *kv = n->data.mapping.pairs.start; kv < n->data.mapping.pairs.top;
	     kv++) {
		yaml_node_t *k = yaml_document_get_node(p->doc, kv->key);
		yaml_node_t *v = yaml_document_get_node(p->doc, kv->value);
		const char *key = scalar(p, k, "key");
		if (!key)
			return -1;
		if (!strcmp(key, "name")) {
			if (get_str(p, v, key, pt->name, sizeof(pt->name)) < 0)
				return -1;
		} else if (!strcmp(key, "pkey")) {
			GET_UINT(p, v, key, 0xffff, pt->pkey);
			pt->pkey &= 0x7fff;
			if (!pt->pkey)
				return cerr(p, v, "pkey: 0 is not a partition");
			have_pkey = true;
		} else if (!strcmp(key, "membership")) {
			const char *s = scalar(p, v, key);
			if (!s)
				return -1;
			if (!strcmp(s, "full"))
				full = true;
			else if (!strcmp(s, "limited"))
				full = false;
			else
				return cerr(p, v, "membership: full or limited, not \"%s\"", s);
		} else if (!strcmp(key, "members")) {
			members = v;
		} else if (!strcmp(key, "ipoib")) {
			if (get_bool(p, v, key, &pt->ipoib) < 0)
				return -1;
			ipoib_given = true;
		} else if (!strcmp(key, "mtu")) {
			if (get_mtu(p, v, key, &pt->ipoib_mtu) < 0)
				return -1;
		} else if (!strcmp(key, "rate")) {
			if (get_rate(p, v, key, &pt->ipoib_rate) < 0)
				return -1;
		} else {
			return cerr(p, k, "partitions: unknown key \"%s\"", key);
		}
	}
	if (!have_pkey)
		return cerr(p, n, "partition \"%s\": no pkey", pt->name);
	if (pt->pkey == 0x7fff && !ipoib_given)
		pt->ipoib = true; /* the default partition has its broadcast group unless told */
	if (!members)
		return cerr(p, n, "partition \"%s\": no members (a list of port GUIDs, or all)",
		            pt->name);
	if (members->type == YAML_SCALAR_NODE &&
	    !strcmp((char *)members->data.scalar.value, "all")) {
		pt->all = true;
		pt->all_full = full;
		return 0;
	}
	uint64_t tmp[4096];
	unsigned n_;
	if (get_guids(p, members, "members", tmp, 4096, &n_) < 0)
		return -1;
	pt->guids = malloc(sizeof(uint64_t) * (n_ ? n_ : 1));
	pt->full = malloc(sizeof(bool) * (n_ ? n_ : 1));
	if (!pt->guids || !pt->full)
		return cerr(p, n, "out of memory");
	memcpy(pt->guids, tmp, sizeof(uint64_t) * n_);
	for (unsigned i = 0; i < n_; i++)
		pt->full[i] = full;
	pt->nguids = n_;
	return 0;
}

static int parse_root(struct cfgp *p, struct ibsmd_config *c, const yaml_node_t *root)
{
	if (root->type != YAML_MAPPING_NODE)
		return cerr(p, root, "the configuration is a mapping of option: value");
	for (yaml_node_pair_t *kv = root->data.mapping.pairs.start;
	     kv < root->data.mapping.pairs.top; kv++) {
		yaml_node_t *k = yaml_document_get_node(p->doc, kv->key);
		yaml_node_t *v = yaml_document_get_node(p->doc, kv->value);
		const char *key = scalar(p, k, "key");
		if (!key)
			return -1;
		if (!strcmp(key, "routing_engine")) {
			if (get_str(p, v, key, c->routing_engines, sizeof(c->routing_engines)) < 0)
				return -1;
		} else if (!strcmp(key, "root_guids")) {
			if (get_guids(p, v, key, c->root_guids, CONFIG_MAX_ROOTS, &c->nroots) < 0)
				return -1;
		} else if (!strcmp(key, "lmc")) {
			GET_UINT(p, v, key, 7, c->lmc);
		} else if (!strcmp(key, "lmc_esp0")) {
			if (get_bool(p, v, key, &c->lmc_esp0) < 0)
				return -1;
		} else if (!strcmp(key, "lid_min")) {
			GET_UINT(p, v, key, 0xbfff, c->lid_min);
		} else if (!strcmp(key, "lid_max")) {
			GET_UINT(p, v, key, 0xbfff, c->lid_max);
		} else if (!strcmp(key, "sweep_interval")) {
			GET_UINT(p, v, key, 86400, c->sweep_interval_s);
		} else if (!strcmp(key, "mad_window")) {
			GET_UINT(p, v, key, 65536, c->mad_window);
		} else if (!strcmp(key, "mad_window_per_node")) {
			GET_UINT(p, v, key, 1024, c->mad_window_per_node);
		} else if (!strcmp(key, "mad_timeout_ms")) {
			GET_UINT(p, v, key, 60000, c->mad_timeout_ms);
		} else if (!strcmp(key, "mad_retries")) {
			GET_UINT(p, v, key, 100, c->mad_retries);
		} else if (!strcmp(key, "subnet_prefix")) {
			GET_UINT(p, v, key, UINT64_MAX, c->subnet_prefix);
		} else if (!strcmp(key, "default_ipoib")) {
			if (get_bool(p, v, key, &c->default_ipoib) < 0)
				return -1;
		} else if (!strcmp(key, "default_ipoib_mtu")) {
			if (get_mtu(p, v, key, &c->default_ipoib_mtu) < 0)
				return -1;
		} else if (!strcmp(key, "default_ipoib_rate")) {
			if (get_rate(p, v, key, &c->default_ipoib_rate) < 0)
				return -1;
		} else if (!strcmp(key, "sm_key")) {
			GET_UINT(p, v, key, UINT64_MAX, c->sm_key);
		} else if (!strcmp(key, "m_key")) {
			GET_UINT(p, v, key, UINT64_MAX, c->m_key);
		} else if (!strcmp(key, "m_key_secret")) {
			if (get_str(p, v, key, c->m_key_secret, sizeof(c->m_key_secret)) < 0 ||
			    read_secret(p, v, c) < 0)
				return -1;
		} else if (!strcmp(key, "m_key_lease")) {
			GET_UINT(p, v, key, 0xffff, c->m_key_lease);
		} else if (!strcmp(key, "m_key_protect")) {
			GET_UINT(p, v, key, 3, c->m_key_protect);
		} else if (!strcmp(key, "sm_priority")) {
			GET_UINT(p, v, key, 15, c->sm_priority);
		} else if (!strcmp(key, "sm_poll_interval_ms")) {
			GET_UINT(p, v, key, 600000, c->sm_poll_interval_ms);
		} else if (!strcmp(key, "sm_poll_retries")) {
			GET_UINT(p, v, key, 100, c->sm_poll_retries);
		} else if (!strcmp(key, "sm_sticky")) {
			if (get_bool(p, v, key, &c->sm_sticky) < 0)
				return -1;
		} else if (!strcmp(key, "ignore_other_sm")) {
			if (get_bool(p, v, key, &c->ignore_other_sm) < 0)
				return -1;
		} else if (!strcmp(key, "subnet_timeout")) {
			GET_UINT(p, v, key, 31, c->subnet_timeout);
		} else if (!strcmp(key, "state_dir")) {
			if (get_str(p, v, key, c->state_dir, sizeof(c->state_dir)) < 0)
				return -1;
		} else if (!strcmp(key, "log_level")) {
			const char *s = scalar(p, v, key);
			if (!s)
				return -1;
			int l = log_level_parse(s);
			if (l < 0)
				return cerr(p, v,
				            "log_level: err, warn, notice, info or debug, not "
				            "\"%s\"",
				            s);
			c->log_level = l;
		} else if (!strcmp(key, "partitions")) {
			if (v->type != YAML_SEQUENCE_NODE)
				return cerr(p, v, "partitions: expected a list");
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top; it++) {
				if (c->npartitions == CONFIG_MAX_PARTITIONS)
					return cerr(p, v, "partitions: more than %d",
					            CONFIG_MAX_PARTITIONS);
				struct config_partition *pt = &c->partitions[c->npartitions++];
				memset(pt, 0, sizeof(*pt));
				if (parse_partition(p, yaml_document_get_node(p->doc, *it), pt) < 0)
					return -1;
			}
		} else {
			return cerr(p, k, "unknown option \"%s\"", key);
		}
	}
	return 0;
}

int config_load(struct ibsmd_config *c, const char *path, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, fp);
	int rc = 0;
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%zu: %s", path, parser.problem_mark.line + 1,
		         parser.problem ? parser.problem : "not valid YAML");
		rc = -1;
	} else {
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		struct cfgp p = {.path = path, .doc = &doc, .err = err, .errlen = errlen};
		if (root) /* an empty file keeps the defaults */
			rc = parse_root(&p, c, root);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	fclose(fp);
	return rc;
}

int config_check(const struct ibsmd_config *c, char *err, size_t errlen)
{
	if (c->sm_poll_interval_ms < 50 || !c->sm_poll_retries) {
		snprintf(err, errlen,
		         "sm_poll_interval_ms %u / sm_poll_retries %u: at least 50 ms and 1 poll",
		         c->sm_poll_interval_ms, c->sm_poll_retries);
		return -1;
	}
	if (c->lid_min < 1 || c->lid_min > c->lid_max) {
		snprintf(err, errlen, "LID range %u-%u is empty or starts at 0", c->lid_min,
		         c->lid_max);
		return -1;
	}
	if ((unsigned)(c->lid_max - c->lid_min + 1) < (1u << c->lmc)) {
		snprintf(err, errlen, "LID range %u-%u holds no block of 2^LMC=%u LIDs", c->lid_min,
		         c->lid_max, 1u << c->lmc);
		return -1;
	}
	if (!c->mad_window || !c->mad_window_per_node || !c->mad_timeout_ms) {
		snprintf(err, errlen,
		         "mad_window, mad_window_per_node and mad_timeout_ms must not "
		         "be 0");
		return -1;
	}
	for (unsigned i = 0; i < c->npartitions; i++)
		for (unsigned j = 0; j < i; j++)
			if (c->partitions[i].pkey == c->partitions[j].pkey) {
				snprintf(err, errlen,
				         "partitions \"%s\" and \"%s\" share P_Key 0x%04x",
				         c->partitions[i].name, c->partitions[j].name,
				         c->partitions[i].pkey);
				return -1;
			}
	return 0;
}

/* FNV-1a, 64 bits, fed field by field (never whole structs: no padding bytes in a digest). */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}
#define FNV_INIT      0xcbf29ce484222325ull
#define FNV_VAL(h, v) ((h) = fnv((h), &(v), sizeof(v)))

uint64_t config_digest(const struct ibsmd_config *c, enum config_digest_part part)
{
	uint64_t h = FNV_INIT;
	switch (part) {
	case CONFIG_DIGEST_PARTITIONS:
		for (unsigned i = 0; i < c->npartitions; i++) {
			const struct config_partition *p = &c->partitions[i];
			FNV_VAL(h, p->pkey);
			FNV_VAL(h, p->all);
			FNV_VAL(h, p->all_full);
			FNV_VAL(h, p->ipoib);
			FNV_VAL(h, p->ipoib_mtu);
			FNV_VAL(h, p->ipoib_rate);
			FNV_VAL(h, p->nguids);
			for (unsigned k = 0; k < p->nguids; k++) {
				FNV_VAL(h, p->guids[k]);
				FNV_VAL(h, p->full[k]);
			}
		}
		FNV_VAL(h, c->default_ipoib);
		FNV_VAL(h, c->default_ipoib_mtu);
		FNV_VAL(h, c->default_ipoib_rate);
		break;
	case CONFIG_DIGEST_ROUTING:
		h = fnv(h, c->routing_engines, strlen(c->routing_engines));
		for (unsigned i = 0; i < c->nroots; i++)
			FNV_VAL(h, c->root_guids[i]);
		FNV_VAL(h, c->lmc);
		FNV_VAL(h, c->lmc_esp0);
		FNV_VAL(h, c->lid_min);
		FNV_VAL(h, c->lid_max);
		FNV_VAL(h, c->subnet_prefix);
		break;
	case CONFIG_DIGEST_KEYS:
		FNV_VAL(h, c->sm_key);
		FNV_VAL(h, c->m_key);
		if (c->has_m_key_secret) {
			/* a keyed hash of a fixed label: says whether two SMs hold the same secret
			 * without telling anything about it */
			uint8_t fp[16];
			static const char label[] = "ibsmd m_key_secret fingerprint";
			crypto_generichash(fp, sizeof(fp), (const uint8_t *)label,
			                   sizeof(label) - 1, c->m_key_secret_key,
			                   sizeof(c->m_key_secret_key));
			h = fnv(h, fp, sizeof(fp));
		}
		FNV_VAL(h, c->m_key_lease);
		FNV_VAL(h, c->m_key_protect);
		break;
	}
	return h;
}
