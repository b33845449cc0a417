/* The YAML configuration file, read with libyaml's document loader. Unknown keys and wrong
 * types are errors naming the file and line: a typo must not silently leave a default. */
#include "config/config.h"
#include "config/config_int.h"
#include "mad/link_speed.h"
#include "util/u64map.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

void config_defaults(struct ibsmd_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->routing_engines, sizeof(c->routing_engines), "minhop");
	c->routing_fallback_minhop = true;
	c->lid_min = 1;
	c->lid_max = 0xbfff;
	c->sweep_interval_s = 10;
	c->sm_poll_interval_ms = 500;
	c->sm_poll_retries = 3;
	c->mad_window = 0; /* the transport's: 256 on fabricsim, 64 otherwise */
	c->mad_window_per_node = 4;
	c->mad_queue_max = 1024;
	c->sa_subscriptions_per_port = 64;
	/* a host registers a few services per program that offers one, and IPoIB creates a
	 * group per IP multicast address it is the first to join (a handful per interface):
	 * far below these, which still leave the 65,536 services and 16K MLIDs to many ports */
	c->sa_services_per_port = 256;
	c->sa_groups_per_port = 64;
	c->link_flap_threshold = 10;
	c->link_flap_window_s = 60;
	c->link_flap_hold_s = 300;
	c->link_settle_s = 5;
	c->trap_flood_threshold = 250; /* as OpenSM's babbling_port_policy */
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
	snprintf(c->control_socket, sizeof(c->control_socket), "/run/ibsmd/control");
	c->metrics_interval_s = 15;
	c->metrics_per_address = 8;
	c->pm_interval_s = 60;
	c->pm_window = 8;
	config_cc_defaults(&c->cc);
	c->api_max_pending = 256;
	/* OpenSM's defaults, which sites tuned from */
	c->hoq_life = 0x12;
	c->leaf_hoq_life = 0x10;
	c->vl_stall_count = 7;
	c->leaf_vl_stall_count = 7;
	c->packet_life = 0x12;
	c->link_speed_enabled = 15;
	c->link_width_enabled = 255;
	c->link_speed_ext_enabled = 31;
	c->api_max_partitions = 1024;
	snprintf(c->virtualization, sizeof(c->virtualization), "manage");
	snprintf(c->metrics_ports, sizeof(c->metrics_ports), "switches");
	c->metrics_max_ports = 4096;
	c->virt_max_ports_in_process = 64;
	c->virt_max_lids_per_port = 128;
	c->pm_threshold_symbol_errors = 10;
	c->pm_threshold_link_downed = 1;
	c->pm_threshold_rcv_errors = 10;
	c->pm_threshold_excessive_buffer_overruns = 1;
	c->pm_threshold_xmit_discards = 100;
	/* the pm_threshold_* defaults, taken an hour: a link down is news */
	c->health_symbol_errors_per_hour = 10;
	c->health_link_downed_per_hour = 1;
	c->health_errors_per_hour = 10;
	c->health_xmit_wait_percent = 10;
	c->log_level = -1;
}

static void free_partitions(struct ibsmd_config *c)
{
	for (unsigned i = 0; i < c->npartitions; i++) {
		free(c->partitions[i].members);
		free(c->partitions[i].groups);
	}
	free(c->partitions);
	c->partitions = NULL;
	c->npartitions = c->partitions_cap = 0;
}

void config_free(struct ibsmd_config *c)
{
	free_partitions(c);
	config_qos_free(c->qos);
	c->qos = NULL;
}

/* The run-time API's entries follow the file's (sm/tenants.c appends them), so the file's
 * are a prefix: what a reload compares, a dump writes and a digest covers. */
unsigned config_file_partitions(const struct ibsmd_config *c)
{
	unsigned n = 0;
	while (n < c->npartitions && !c->partitions[n].api)
		n++;
	return n;
}

unsigned config_file_members(const struct config_partition *p)
{
	unsigned n = 0;
	while (n < p->nmembers && !p->members[n].api)
		n++;
	return n;
}

struct config_partition *config_partition_add(struct ibsmd_config *c)
{
	if (c->npartitions == CONFIG_MAX_PARTITIONS)
		return NULL;
	if (c->npartitions == c->partitions_cap) {
		unsigned cap = c->partitions_cap ? c->partitions_cap * 2 : 8;
		struct config_partition *n = realloc(c->partitions, cap * sizeof(*n));
		if (!n)
			return NULL;
		c->partitions = n;
		c->partitions_cap = cap;
	}
	struct config_partition *pt = &c->partitions[c->npartitions++];
	memset(pt, 0, sizeof(*pt));
	pt->defmember = CM_FULL;
	pt->ipoib_mtu = 4;  /* 2048 */
	pt->ipoib_rate = 3; /* 10 Gb/s */
	pt->ipoib_qkey = 0x0b1b;
	pt->ipoib_scope = 2; /* link local */
	return pt;
}

int config_partition_member(struct config_partition *p, uint8_t kind, uint64_t guid,
                            uint8_t membership)
{
	if (!(p->nmembers & (p->nmembers + 1)) || !p->members) { /* 0, 1, 3, 7...: grow */
		unsigned cap = p->nmembers ? (p->nmembers + 1) * 2 : 4;
		struct config_member *n = realloc(p->members, cap * sizeof(*n));
		if (!n)
			return -1;
		p->members = n;
	}
	p->members[p->nmembers++] =
	    (struct config_member){.guid = guid, .kind = kind, .membership = membership};
	return 0;
}

int cfg_err(struct cfgp *p, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n)
		snprintf(p->err, p->errlen, "%s:%zu:%zu: %s", p->path, n->start_mark.line + 1,
		         n->start_mark.column + 1, msg);
	else
		snprintf(p->err, p->errlen, "%s: %s", p->path, msg);
	return -1;
}

const char *cfg_scalar(struct cfgp *p, const yaml_node_t *n, const char *key)
{
	if (n->type != YAML_SCALAR_NODE) {
		cfg_err(p, n, "%s: expected a single value", key);
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

int cfg_u64(struct cfgp *p, const yaml_node_t *n, const char *key, uint64_t max, uint64_t *out)
{
	const char *s = cfg_scalar(p, n, key);
	if (!s)
		return -1;
	/* YAML 1.1 reads 010 as octal 8, YAML 1.2 as decimal 10: neither guess is safe */
	if (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
		return cfg_err(
		    p, n,
		    "%s: \"%s\" has a leading zero (octal or decimal?): write it without, "
		    "or in hexadecimal with 0x",
		    key, s);
	char *e;
	errno = 0;
	if (s[0] == '-' && s[1] >= '0' && s[1] <= '9') {
		unsigned long long neg = strtoull(s + 1, &e, 0);
		if (!*e && neg) /* a number, but below any allowed */
			return cfg_err(p, n, "%s: %s is negative: it takes a number up to %llu",
			               key, s, (unsigned long long)max);
	}
	unsigned long long v = strtoull(s, &e, 0);
	if (!*s || *e || s[0] == '-' || s[0] == '+' || (errno && errno != ERANGE))
		return cfg_err(p, n, "%s: \"%s\" is not a number (decimal, or hexadecimal with 0x)",
		               key, s);
	if (errno == ERANGE || v > max)
		return cfg_err(p, n, "%s: %s is above the most allowed, %llu (0x%llx)", key, s,
		               (unsigned long long)max, (unsigned long long)max);
	*out = v;
	return 0;
}

#define GET_UINT(p, n, key, max, dst)                                                              \
	do {                                                                                       \
		uint64_t v_;                                                                       \
		if (cfg_u64(p, n, key, max, &v_) < 0)                                              \
			return -1;                                                                 \
		(dst) = v_;                                                                        \
	} while (0)

int cfg_bool(struct cfgp *p, const yaml_node_t *n, const char *key, bool *out)
{
	const char *s = cfg_scalar(p, n, key);
	if (!s)
		return -1;
	if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on"))
		*out = true;
	else if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off"))
		*out = false;
	else
		return cfg_err(p, n, "%s: expected true or false, not \"%s\"", key, s);
	return 0;
}

int cfg_str(struct cfgp *p, const yaml_node_t *n, const char *key, char *dst, size_t len)
{
	const char *s = cfg_scalar(p, n, key);
	if (!s)
		return -1;
	if (strlen(s) >= len)
		return cfg_err(p, n, "%s: longer than %zu characters", key, len - 1);
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
		return cfg_err(p, n, "m_key_secret: cannot open %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return cfg_err(p, n, "m_key_secret: %s is not a regular file", path);
	}
	if (st.st_mode & 077) {
		close(fd);
		return cfg_err(p, n,
		               "m_key_secret: %s can be read by others (mode %04o): chmod 600 it, "
		               "anyone who reads it can take over every port",
		               path, (unsigned)(st.st_mode & 07777));
	}
	uint8_t buf[4097];
	ssize_t len = read(fd, buf, sizeof(buf));
	close(fd);
	if (len < 0)
		return cfg_err(p, n, "m_key_secret: reading %s: %s", path, strerror(errno));
	if (len == (ssize_t)sizeof(buf))
		return cfg_err(p, n, "m_key_secret: %s is longer than 4096 bytes", path);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
	                   buf[len - 1] == '\t'))
		len--;
	if (len < 16) {
		sodium_memzero(buf, sizeof(buf));
		return cfg_err(p, n,
		               "m_key_secret: %s holds %zd bytes: at least 16 are needed (for one, "
		               "\"openssl rand -hex 32 > %s\")",
		               path, len, path);
	}
	if (sodium_init() < 0)
		return cfg_err(p, n, "m_key_secret: libsodium does not initialize");
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
		return cfg_u64(p, n, key, UINT64_MAX, &out[(*count)++]);
	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_err(p, n, "%s: expected a GUID or a list of GUIDs", key);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		if (*count == max)
			return cfg_err(p, n, "%s: more than %u GUIDs", key, max);
		if (cfg_u64(p, yaml_document_get_node(p->doc, *it), key, UINT64_MAX,
		            &out[(*count)++]) < 0)
			return -1;
	}
	return 0;
}

/* One of a prefix route's two words: 64 bits in hex (0x optional, as OpenSM takes them), or
 * * for any (0). */
static bool prefix_word(const char *w, size_t len, uint64_t *out)
{
	if (len == 1 && *w == '*') {
		*out = 0;
		return true;
	}
	char buf[24];
	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, w, len);
	buf[len] = 0;
	char *e;
	errno = 0;
	*out = strtoull(buf, &e, 16);
	return !*e && !errno && buf[0] != '-' && buf[0] != '+' && *out;
}

/* prefix_routes: a list of "PREFIX ROUTER" lines, OpenSM's prefix-routes.conf format */
static int get_prefix_routes(struct cfgp *p, const yaml_node_t *n, struct ibsmd_config *c)
{
	c->nprefix_routes = 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_err(p, n,
		               "prefix_routes: a list of \"PREFIX ROUTER\" (hex, or * for any)");
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		const yaml_node_t *item = yaml_document_get_node(p->doc, *it);
		const char *s = cfg_scalar(p, item, "prefix_routes");
		if (!s)
			return -1;
		if (c->nprefix_routes == CONFIG_MAX_PREFIX_ROUTES)
			return cfg_err(p, item, "prefix_routes: more than %u routes",
			               CONFIG_MAX_PREFIX_ROUTES);
		struct config_prefix_route *r = &c->prefix_routes[c->nprefix_routes];
		const char *a = s + strspn(s, " \t");
		size_t la = strcspn(a, " \t");
		const char *b = a + la + strspn(a + la, " \t");
		size_t lb = strcspn(b, " \t");
		if (!prefix_word(a, la, &r->prefix) || !prefix_word(b, lb, &r->router) ||
		    b[lb + strspn(b + lb, " \t")])
			return cfg_err(p, item,
			               "prefix_routes: \"%s\" is not PREFIX ROUTER (two 64-bit hex "
			               "values, either *)",
			               s);
		c->nprefix_routes++;
	}
	return 0;
}

/* An MTU in bytes, as the IBA code. */
int cfg_mtu(struct cfgp *p, const yaml_node_t *n, const char *key, uint8_t *out)
{
	uint64_t v = 0;
	if (cfg_u64(p, n, key, 4096, &v) < 0)
		return -1;
	static const unsigned bytes[] = {256, 512, 1024, 2048, 4096};
	for (uint8_t i = 0; i < 5; i++)
		if (bytes[i] == v) {
			*out = (uint8_t)(i + 1);
			return 0;
		}
	return cfg_err(p, n, "%s: 256, 512, 1024, 2048 or 4096, not %llu", key,
	               (unsigned long long)v);
}

/* A rate in Gb/s, as the IBA code: any of the rate table's (2.5 to 1600). */
int cfg_rate(struct cfgp *p, const yaml_node_t *n, const char *key, uint8_t *out)
{
	const char *s = cfg_scalar(p, n, key);
	if (!s)
		return -1;
	uint8_t code = mad_rate_parse(s);
	if (code) {
		*out = code;
		return 0;
	}
	return cfg_err(p, n,
	               "%s: a rate in Gb/s of the IBA rate table (2.5, 5, 10, 14, 20, 25, 28, 30, "
	               "40, 50, 56, 60, 80, 100, 112, 120, 168, 200, 300, 400, 600, 800, 1200, "
	               "1600), not \"%s\"",
	               key, s);
}

static int get_membership(struct cfgp *p, const yaml_node_t *n, const char *key, uint8_t *out)
{
	const char *s = cfg_scalar(p, n, key);
	if (!s)
		return -1;
	if (!strcmp(s, "full"))
		*out = CM_FULL;
	else if (!strcmp(s, "limited"))
		*out = CM_LIMITED;
	else if (!strcmp(s, "both"))
		*out = CM_BOTH;
	else
		return cfg_err(p, n, "%s: full, limited or both, not \"%s\"", key, s);
	return 0;
}

/* A member: "all", "all_cas", "all_switches", "self" or a port GUID */
static int member_of(struct cfgp *p, const yaml_node_t *n, uint8_t *kind, uint64_t *guid)
{
	const char *s = cfg_scalar(p, n, "members");
	if (!s)
		return -1;
	static const struct {
		const char *name;
		uint8_t kind;
	} kinds[] = {{"all", CM_ALL},
	             {"all_cas", CM_ALL_CAS},
	             {"all_switches", CM_ALL_SWITCHES},
	             {"self", CM_SELF},
	             {"all_routers", CM_ALL_ROUTERS}};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(s, kinds[i].name)) {
			*kind = kinds[i].kind;
			return 0;
		}
	*kind = CM_GUID;
	char *e;
	errno = 0;
	*guid = strtoull(s, &e, 0);
	if (!*s || *e || errno || s[0] == '-' || !*guid)
		return cfg_err(
		    p, n,
		    "members: \"%s\" is neither a port GUID nor all, all_cas, all_switches, "
		    "all_routers or self",
		    s);
	return 0;
}

static int get_mgid(struct cfgp *p, const yaml_node_t *n, uint8_t mgid[16])
{
	const char *s = cfg_scalar(p, n, "mgid");
	if (!s)
		return -1;
	if (inet_pton(AF_INET6, s, mgid) != 1 || mgid[0] != 0xff)
		return cfg_err(p, n, "mgid: \"%s\" is not a multicast GID (ff..:...)", s);
	return 0;
}

/* The attributes a multicast group has wherever it is configured (an IPoIB group, a
 * predefined one): 1 when key is none of them. */
static int group_attr(struct cfgp *p, const yaml_node_t *v, const char *key, uint8_t *mtu,
                      uint8_t *rate, uint8_t *scope, uint32_t *qkey)
{
	if (!strcmp(key, "mtu"))
		return cfg_mtu(p, v, key, mtu);
	if (!strcmp(key, "rate"))
		return cfg_rate(p, v, key, rate);
	if (!strcmp(key, "scope")) {
		GET_UINT(p, v, key, 15, *scope);
		return 0;
	}
	if (!strcmp(key, "q_key")) {
		GET_UINT(p, v, key, UINT32_MAX, *qkey);
		return 0;
	}
	return 1;
}

static int parse_group(struct cfgp *p, const yaml_node_t *n, struct config_mgroup *g)
{
	if (n->type != YAML_MAPPING_NODE)
		return cfg_err(p, n, "groups: each entry is a mapping (mgid, mtu, rate, ...)");
	*g = (struct config_mgroup){.mtu = 4, .rate = 3, .scope = 2, .qkey = 0x0b1b};
	bool have_mgid = false;
	for (yaml_node_pair_t *kv = n->data.mapping.pairs.start; kv < n->data.mapping.pairs.top;
	     kv++) {
		yaml_node_t *k = yaml_document_get_node(p->doc, kv->key);
		yaml_node_t *v = yaml_document_get_node(p->doc, kv->value);
		const char *key = cfg_scalar(p, k, "key");
		if (!key)
			return -1;
		int a = group_attr(p, v, key, &g->mtu, &g->rate, &g->scope, &g->qkey);
		if (a < 0)
			return -1;
		if (a == 0)
			continue;
		if (!strcmp(key, "mgid")) {
			if (get_mgid(p, v, g->mgid) < 0)
				return -1;
			have_mgid = true;
		} else if (!strcmp(key, "sl")) {
			GET_UINT(p, v, key, 15, g->sl);
		} else if (!strcmp(key, "tclass")) {
			GET_UINT(p, v, key, 255, g->tclass);
		} else if (!strcmp(key, "flow_label")) {
			GET_UINT(p, v, key, 0xfffff, g->flow_label);
		} else {
			return cfg_err(p, k,
			               "groups: unknown key \"%s\" (mgid, mtu, rate, sl, scope, "
			               "q_key, tclass, flow_label)",
			               key);
		}
	}
	if (!have_mgid)
		return cfg_err(p, n, "groups: an entry without mgid");
	return 0;
}

static int parse_members(struct cfgp *p, const yaml_node_t *n, struct config_partition *pt)
{
	if (n->type == YAML_SCALAR_NODE) {
		uint8_t kind;
		uint64_t guid = 0;
		return member_of(p, n, &kind, &guid) < 0 ||
		               config_partition_member(pt, kind, guid, 0) < 0
		           ? -1
		           : 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_err(p, n,
		               "members: all, all_cas, all_switches, self, a port GUID, or a "
		               "list of them (each may be \"MEMBER: full|limited|both\")");
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		const yaml_node_t *m = yaml_document_get_node(p->doc, *it);
		uint8_t kind, ms = 0;
		uint64_t guid = 0;
		if (m->type == YAML_MAPPING_NODE) {
			/* "- 0x0002c9...: limited": one member with its own membership */
			if (m->data.mapping.pairs.top - m->data.mapping.pairs.start != 1)
				return cfg_err(p, m,
				               "members: one \"MEMBER: membership\" per entry");
			yaml_node_pair_t *kv = m->data.mapping.pairs.start;
			if (member_of(p, yaml_document_get_node(p->doc, kv->key), &kind, &guid) <
			        0 ||
			    get_membership(p, yaml_document_get_node(p->doc, kv->value),
			                   "membership", &ms) < 0)
				return -1;
		} else if (member_of(p, m, &kind, &guid) < 0) {
			return -1;
		}
		if (config_partition_member(pt, kind, guid, ms) < 0)
			return cfg_err(p, m, "out of memory");
	}
	return 0;
}

static int parse_partition(struct cfgp *p, const yaml_node_t *n, struct config_partition *pt)
{
	bool ipoib_given = false;
	if (n->type != YAML_MAPPING_NODE)
		return cfg_err(p, n, "partitions: each entry is a mapping (name, pkey, members)");
	bool have_pkey = false;
	int a;
	const yaml_node_t *members = NULL;
	for (yaml_node_pair_t *kv = n->data.mapping.pairs.start; kv < n->data.mapping.pairs.top;
	     kv++) {
		yaml_node_t *k = yaml_document_get_node(p->doc, kv->key);
		yaml_node_t *v = yaml_document_get_node(p->doc, kv->value);
		const char *key = cfg_scalar(p, k, "key");
		if (!key)
			return -1;
		if (!strcmp(key, "name")) {
			if (cfg_str(p, v, key, pt->name, sizeof(pt->name)) < 0)
				return -1;
		} else if (!strcmp(key, "pkey")) {
			GET_UINT(p, v, key, 0xffff, pt->pkey);
			pt->pkey &= 0x7fff;
			if (!pt->pkey)
				return cfg_err(p, v, "pkey: 0 is not a partition");
			have_pkey = true;
		} else if (!strcmp(key, "membership")) {
			if (get_membership(p, v, key, &pt->defmember) < 0)
				return -1;
		} else if (!strcmp(key, "members")) {
			members = v;
		} else if (!strcmp(key, "indx0")) {
			if (cfg_bool(p, v, key, &pt->indx0) < 0)
				return -1;
		} else if (!strcmp(key, "sl")) {
			GET_UINT(p, v, key, 15, pt->sl);
			pt->has_sl = true;
			pt->ipoib_sl = pt->sl;
		} else if (!strcmp(key, "mtu_limit")) {
			if (cfg_mtu(p, v, key, &pt->mtu_limit) < 0)
				return -1;
		} else if (!strcmp(key, "rate_limit")) {
			if (cfg_rate(p, v, key, &pt->rate_limit) < 0)
				return -1;
		} else if (!strcmp(key, "ipoib")) {
			if (cfg_bool(p, v, key, &pt->ipoib) < 0)
				return -1;
			ipoib_given = true;
		} else if ((a = group_attr(p, v, key, &pt->ipoib_mtu, &pt->ipoib_rate,
		                           &pt->ipoib_scope, &pt->ipoib_qkey)) <= 0) {
			if (a < 0)
				return -1;
		} else if (!strcmp(key, "groups")) {
			if (v->type != YAML_SEQUENCE_NODE)
				return cfg_err(p, v, "groups: expected a list");
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top; it++) {
				struct config_mgroup *g =
				    realloc(pt->groups, (pt->ngroups + 1) * sizeof(*g));
				if (!g)
					return cfg_err(p, v, "out of memory");
				pt->groups = g;
				if (parse_group(p, yaml_document_get_node(p->doc, *it),
				                &pt->groups[pt->ngroups]) < 0)
					return -1;
				pt->ngroups++;
			}
		} else {
			return cfg_err(
			    p, k,
			    "partitions: unknown key \"%s\" (name, pkey, membership, members, "
			    "indx0, sl, mtu_limit, rate_limit, ipoib, mtu, rate, scope, q_key, "
			    "groups)",
			    key);
		}
	}
	if (!have_pkey)
		return cfg_err(p, n, "partition \"%s\" has no pkey", pt->name);
	if (pt->pkey == 0x7fff && !ipoib_given)
		pt->ipoib = true; /* the default partition has its broadcast group unless told */
	if (!members)
		return cfg_err(p, n,
		               "partition \"%s\" has no members (a list of port GUIDs, or all)",
		               pt->name);
	return parse_members(p, members, pt);
}

/* The options, one row each: parsing, --dump-config, reload and the line a later check names
 * all read this table, so an option cannot be added to one and forgotten in another. */
enum opt_type {
	OPT_UINT, /* an unsigned integer of `size` bytes, min..max */
	OPT_BOOL,
	OPT_STR,   /* a char array of `size` bytes */
	OPT_GUIDS, /* root_guids */
	OPT_MTU,   /* bytes in the file, the IBA code in memory */
	OPT_RATE,  /* Gb/s in the file, the IBA code in memory */
	OPT_LOGLEVEL,
	OPT_SECRET, /* a path, and the hash of what the file holds */
	OPT_PARTITIONS,
	OPT_QOS,
	OPT_PREFIX_ROUTES, /* "PREFIX ROUTER" strings, * for any */
	OPT_CC,            /* congestion_control (config/cc.c) */
};

#define OPT_HEX  1u /* dumped in hexadecimal (GUIDs, keys) */
#define OPT_LIVE 2u /* a reload applies it without a restart */
#define OPT_PORT 4u /* ... to the ports' PortInfo, without a sweep */

struct opt {
	const char *key;
	enum opt_type type;
	size_t off, size;
	uint64_t min, max;
	unsigned flags;
};

#define F(field) offsetof(struct ibsmd_config, field), sizeof(((struct ibsmd_config *)0)->field)
static const struct opt opts[CONFIG_NKEYS] = {
    [CK_ROUTING_ENGINE] = {"routing_engine", OPT_STR, F(routing_engines), 0, 0, OPT_LIVE},
    [CK_ROUTING_FALLBACK_MINHOP] = {"routing_fallback_minhop", OPT_BOOL, F(routing_fallback_minhop),
                                    0, 0, OPT_LIVE},
    [CK_ROOT_GUIDS] = {"root_guids", OPT_GUIDS, F(root_guids), 0, 0, OPT_HEX | OPT_LIVE},
    [CK_ROOT_GUID_FILE] = {"root_guid_file", OPT_STR, F(root_guid_file), 0, 0, OPT_LIVE},
    [CK_CN_GUID_FILE] = {"cn_guid_file", OPT_STR, F(cn_guid_file), 0, 0, OPT_LIVE},
    [CK_HOP_WEIGHTS_FILE] = {"hop_weights_file", OPT_STR, F(hop_weights_file), 0, 0, OPT_LIVE},
    [CK_PORT_PROF_IGNORE_FILE] = {"port_prof_ignore_file", OPT_STR, F(port_prof_ignore_file), 0, 0,
                                  OPT_LIVE},
    [CK_IDS_GUID_FILE] = {"ids_guid_file", OPT_STR, F(ids_guid_file), 0, 0, OPT_LIVE},
    [CK_SCATTER_PORTS] = {"scatter_ports", OPT_UINT, F(scatter_ports), 0, UINT32_MAX, OPT_LIVE},
    [CK_PORT_SHIFTING] = {"port_shifting", OPT_BOOL, F(port_shifting), 0, 0, OPT_LIVE},
    [CK_GUID_ROUTING_ORDER_FILE] = {"guid_routing_order_file", OPT_STR, F(guid_routing_order_file),
                                    0, 0, OPT_LIVE},
    [CK_GUID_ROUTING_ORDER_NO_SCATTER] = {"guid_routing_order_no_scatter", OPT_BOOL,
                                          F(guid_routing_order_no_scatter), 0, 0, OPT_LIVE},
    [CK_LFTS_FILE] = {"lfts_file", OPT_STR, F(lfts_file), 0, 0, OPT_LIVE},
    [CK_TORUS_CONFIG] = {"torus_config", OPT_STR, F(torus_config), 0, 0, OPT_LIVE},
    [CK_ROUTING_MAX_VLS] = {"routing_max_vls", OPT_UINT, F(routing_max_vls), 0, 15, OPT_LIVE},
    [CK_LMC] = {"lmc", OPT_UINT, F(lmc), 0, 7, 0},
    [CK_LMC_ESP0] = {"lmc_esp0", OPT_BOOL, F(lmc_esp0), 0, 0, 0},
    [CK_LID_MIN] = {"lid_min", OPT_UINT, F(lid_min), 1, 0xbfff, OPT_HEX},
    [CK_LID_MAX] = {"lid_max", OPT_UINT, F(lid_max), 1, 0xbfff, OPT_HEX},
    [CK_SWEEP_INTERVAL] = {"sweep_interval", OPT_UINT, F(sweep_interval_s), 0, 86400, OPT_LIVE},
    [CK_MAD_WINDOW] = {"mad_window", OPT_UINT, F(mad_window), 0, 65536, 0},
    [CK_MAD_WINDOW_PER_NODE] = {"mad_window_per_node", OPT_UINT, F(mad_window_per_node), 1, 1024,
                                0},
    [CK_MAD_QUEUE_MAX] = {"mad_queue_max", OPT_UINT, F(mad_queue_max), 16, 524288, 0},
    [CK_MAD_TIMEOUT_MS] = {"mad_timeout_ms", OPT_UINT, F(mad_timeout_ms), 1, 60000, 0},
    [CK_MAD_RETRIES] = {"mad_retries", OPT_UINT, F(mad_retries), 0, 100, 0},
    [CK_SUBNET_PREFIX] = {"subnet_prefix", OPT_UINT, F(subnet_prefix), 0, UINT64_MAX, OPT_HEX},
    [CK_SUBNET_TIMEOUT] = {"subnet_timeout", OPT_UINT, F(subnet_timeout), 0, 31, OPT_LIVE},
    [CK_LINK_FLAP_THRESHOLD] = {"link_flap_threshold", OPT_UINT, F(link_flap_threshold), 0, 1000,
                                OPT_LIVE},
    [CK_LINK_FLAP_WINDOW] = {"link_flap_window", OPT_UINT, F(link_flap_window_s), 1, 86400,
                             OPT_LIVE},
    [CK_LINK_FLAP_HOLD] = {"link_flap_hold", OPT_UINT, F(link_flap_hold_s), 1, 86400, OPT_LIVE},
    [CK_LINK_SETTLE_TIME] = {"link_settle_time", OPT_UINT, F(link_settle_s), 0, 3600, OPT_LIVE},
    [CK_HEAD_OF_QUEUE_LIFETIME] = {"head_of_queue_lifetime", OPT_UINT, F(hoq_life), 0, 31,
                                   OPT_LIVE | OPT_PORT | OPT_HEX},
    [CK_LEAF_HEAD_OF_QUEUE_LIFETIME] = {"leaf_head_of_queue_lifetime", OPT_UINT, F(leaf_hoq_life),
                                        0, 31, OPT_LIVE | OPT_PORT | OPT_HEX},
    [CK_VL_STALL_COUNT] = {"vl_stall_count", OPT_UINT, F(vl_stall_count), 0, 7,
                           OPT_LIVE | OPT_PORT},
    [CK_LEAF_VL_STALL_COUNT] = {"leaf_vl_stall_count", OPT_UINT, F(leaf_vl_stall_count), 0, 7,
                                OPT_LIVE | OPT_PORT},
    [CK_LINK_SPEED_ENABLED] = {"link_speed_enabled", OPT_UINT, F(link_speed_enabled), 0, 15,
                               OPT_LIVE | OPT_PORT},
    [CK_LINK_WIDTH_ENABLED] = {"link_width_enabled", OPT_UINT, F(link_width_enabled), 0, 255,
                               OPT_LIVE | OPT_PORT},
    [CK_LINK_SPEED_EXT_ENABLED] = {"link_speed_ext_enabled", OPT_UINT, F(link_speed_ext_enabled), 0,
                                   31, OPT_LIVE | OPT_PORT},
    [CK_PACKET_LIFE_TIME] = {"packet_life_time", OPT_UINT, F(packet_life), 0, 31,
                             OPT_LIVE | OPT_HEX},
    [CK_TRAP_FLOOD_THRESHOLD] = {"trap_flood_threshold", OPT_UINT, F(trap_flood_threshold), 0,
                                 1000000, OPT_LIVE},
    [CK_SA_SUBSCRIPTIONS_PER_PORT] = {"sa_subscriptions_per_port", OPT_UINT,
                                      F(sa_subscriptions_per_port), 1, 65536, OPT_LIVE},
    [CK_SA_SERVICES_PER_PORT] = {"sa_services_per_port", OPT_UINT, F(sa_services_per_port), 1,
                                 65536, OPT_LIVE},
    [CK_SA_GROUPS_PER_PORT] = {"sa_groups_per_port", OPT_UINT, F(sa_groups_per_port), 1, 16383,
                               OPT_LIVE},
    [CK_SM_KEY] = {"sm_key", OPT_UINT, F(sm_key), 0, UINT64_MAX, OPT_HEX},
    [CK_M_KEY] = {"m_key", OPT_UINT, F(m_key), 0, UINT64_MAX, OPT_HEX},
    [CK_M_KEY_SECRET] = {"m_key_secret", OPT_SECRET, F(m_key_secret), 0, 0, 0},
    [CK_M_KEY_LEASE] = {"m_key_lease", OPT_UINT, F(m_key_lease), 0, 0xffff, 0},
    [CK_M_KEY_PROTECT] = {"m_key_protect", OPT_UINT, F(m_key_protect), 0, 3, 0},
    [CK_SM_PRIORITY] = {"sm_priority", OPT_UINT, F(sm_priority), 0, 15, OPT_LIVE},
    [CK_SM_POLL_INTERVAL_MS] = {"sm_poll_interval_ms", OPT_UINT, F(sm_poll_interval_ms), 50, 600000,
                                OPT_LIVE},
    [CK_SM_POLL_RETRIES] = {"sm_poll_retries", OPT_UINT, F(sm_poll_retries), 1, 100, OPT_LIVE},
    [CK_SM_STICKY] = {"sm_sticky", OPT_BOOL, F(sm_sticky), 0, 0, OPT_LIVE},
    [CK_IGNORE_OTHER_SM] = {"ignore_other_sm", OPT_BOOL, F(ignore_other_sm), 0, 0, 0},
    [CK_SHOW_SM_KEY] = {"show_sm_key", OPT_BOOL, F(show_sm_key), 0, 0, OPT_LIVE},
    [CK_STATE_DIR] = {"state_dir", OPT_STR, F(state_dir), 0, 0, 0},
    [CK_LOG_LEVEL] = {"log_level", OPT_LOGLEVEL, F(log_level), 0, 0, OPT_LIVE},
    [CK_DEFAULT_IPOIB] = {"default_ipoib", OPT_BOOL, F(default_ipoib), 0, 0, OPT_LIVE},
    [CK_DEFAULT_IPOIB_MTU] = {"default_ipoib_mtu", OPT_MTU, F(default_ipoib_mtu), 0, 0, OPT_LIVE},
    [CK_DEFAULT_IPOIB_RATE] = {"default_ipoib_rate", OPT_RATE, F(default_ipoib_rate), 0, 0,
                               OPT_LIVE},
    [CK_PARTITIONS] = {"partitions", OPT_PARTITIONS, F(partitions), 0, 0, OPT_LIVE},
    [CK_QOS] = {"qos", OPT_QOS, F(qos), 0, 0, OPT_LIVE},
    [CK_PREFIX_ROUTES] = {"prefix_routes", OPT_PREFIX_ROUTES, F(prefix_routes), 0, 0, OPT_LIVE},
    [CK_CONTROL_SOCKET] = {"control_socket", OPT_STR, F(control_socket), 0, 0, 0},
    [CK_CONTROL_GROUP] = {"control_group", OPT_STR, F(control_group), 0, 0, 0},
    [CK_DUMP_DIR] = {"dump_dir", OPT_STR, F(dump_dir), 0, 0, OPT_LIVE},
    [CK_NODE_NAME_MAP] = {"node_name_map", OPT_STR, F(node_name_map), 0, 0, OPT_LIVE},
    [CK_DUMP_AFTER_SWEEP] = {"dump_after_sweep", OPT_BOOL, F(dump_after_sweep), 0, 0, OPT_LIVE},
    [CK_METRICS_FILE] = {"metrics_file", OPT_STR, F(metrics_file), 0, 0, OPT_LIVE},
    [CK_METRICS_INTERVAL] = {"metrics_interval", OPT_UINT, F(metrics_interval_s), 0, 3600,
                             OPT_LIVE},
    [CK_METRICS_LISTEN] = {"metrics_listen", OPT_STR, F(metrics_listen), 0, 0, 0},
    [CK_METRICS_PER_ADDRESS] = {"metrics_per_address", OPT_UINT, F(metrics_per_address), 1, 16, 0},
    [CK_METRICS_PORTS] = {"metrics_ports", OPT_STR, F(metrics_ports), 0, 0, OPT_LIVE},
    [CK_METRICS_MAX_PORTS] = {"metrics_max_ports", OPT_UINT, F(metrics_max_ports), 0, 10000000,
                              OPT_LIVE},
    [CK_API_LISTEN] = {"api_listen", OPT_STR, F(api_listen), 0, 0, 0},
    [CK_API_TLS_CERT] = {"api_tls_cert", OPT_STR, F(api_tls_cert), 0, 0, 0},
    [CK_API_TLS_KEY] = {"api_tls_key", OPT_STR, F(api_tls_key), 0, 0, 0},
    [CK_API_USERS_FILE] = {"api_users_file", OPT_STR, F(api_users_file), 0, 0, 0},
    [CK_API_MAX_PENDING] = {"api_max_pending", OPT_UINT, F(api_max_pending), 0, 65536, OPT_LIVE},
    [CK_API_MAX_PARTITIONS] = {"api_max_partitions", OPT_UINT, F(api_max_partitions), 0, 16383,
                               OPT_LIVE},
    [CK_VIRTUALIZATION] = {"virtualization", OPT_STR, F(virtualization), 0, 0, OPT_LIVE},
    [CK_VIRT_MAX_PORTS_IN_PROCESS] = {"virt_max_ports_in_process", OPT_UINT,
                                      F(virt_max_ports_in_process), 1, 4096, OPT_LIVE},
    [CK_VIRT_MAX_LIDS_PER_PORT] = {"virt_max_lids_per_port", OPT_UINT, F(virt_max_lids_per_port), 0,
                                   65535, OPT_LIVE},
    [CK_PM_INTERVAL] = {"pm_interval", OPT_UINT, F(pm_interval_s), 0, 86400, OPT_LIVE},
    [CK_PM_WINDOW] = {"pm_window", OPT_UINT, F(pm_window), 1, 64, OPT_LIVE},
    [CK_PM_THRESHOLD_SYMBOL_ERRORS] = {"pm_threshold_symbol_errors", OPT_UINT,
                                       F(pm_threshold_symbol_errors), 0, UINT32_MAX, OPT_LIVE},
    [CK_PM_THRESHOLD_LINK_DOWNED] = {"pm_threshold_link_downed", OPT_UINT,
                                     F(pm_threshold_link_downed), 0, UINT32_MAX, OPT_LIVE},
    [CK_PM_THRESHOLD_RCV_ERRORS] = {"pm_threshold_rcv_errors", OPT_UINT, F(pm_threshold_rcv_errors),
                                    0, UINT32_MAX, OPT_LIVE},
    [CK_PM_THRESHOLD_EXCESSIVE_BUFFER_OVERRUNS] = {"pm_threshold_excessive_buffer_overruns",
                                                   OPT_UINT,
                                                   F(pm_threshold_excessive_buffer_overruns), 0,
                                                   UINT32_MAX, OPT_LIVE},
    [CK_PM_THRESHOLD_XMIT_DISCARDS] = {"pm_threshold_xmit_discards", OPT_UINT,
                                       F(pm_threshold_xmit_discards), 0, UINT32_MAX, OPT_LIVE},
    [CK_PM_THRESHOLD_XMIT_WAIT] = {"pm_threshold_xmit_wait", OPT_UINT, F(pm_threshold_xmit_wait), 0,
                                   UINT32_MAX, OPT_LIVE},
    [CK_PM_IGNORE_CAS] = {"pm_ignore_cas", OPT_BOOL, F(pm_ignore_cas), 0, 0, OPT_LIVE},
    [CK_HEALTH_SYMBOL_ERRORS_PER_HOUR] = {"health_symbol_errors_per_hour", OPT_UINT,
                                          F(health_symbol_errors_per_hour), 0, UINT32_MAX,
                                          OPT_LIVE},
    [CK_HEALTH_LINK_DOWNED_PER_HOUR] = {"health_link_downed_per_hour", OPT_UINT,
                                        F(health_link_downed_per_hour), 0, UINT32_MAX, OPT_LIVE},
    [CK_HEALTH_ERRORS_PER_HOUR] = {"health_errors_per_hour", OPT_UINT, F(health_errors_per_hour), 0,
                                   UINT32_MAX, OPT_LIVE},
    [CK_HEALTH_XMIT_WAIT_PERCENT] = {"health_xmit_wait_percent", OPT_UINT,
                                     F(health_xmit_wait_percent), 0, 100, OPT_LIVE},
    [CK_CONGESTION_CONTROL] = {"congestion_control", OPT_CC, F(cc), 0, 0, OPT_LIVE},
};
#undef F

const char *config_key_name(enum config_key k)
{
	return k < CONFIG_NKEYS ? opts[k].key : "?";
}

bool config_key_live(enum config_key k)
{
	return k < CONFIG_NKEYS && (opts[k].flags & OPT_LIVE);
}

bool config_key_port_only(enum config_key k)
{
	return k < CONFIG_NKEYS && (opts[k].flags & OPT_PORT);
}

static void put_uint(void *dst, size_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)dst = (uint8_t)v; break;
	case 2: *(uint16_t *)dst = (uint16_t)v; break;
	case 4: *(uint32_t *)dst = (uint32_t)v; break;
	default: *(uint64_t *)dst = v; break;
	}
}

static uint64_t get_uint(const void *src, size_t size)
{
	switch (size) {
	case 1: return *(const uint8_t *)src;
	case 2: return *(const uint16_t *)src;
	case 4: return *(const uint32_t *)src;
	default: return *(const uint64_t *)src;
	}
}

static int parse_partitions(struct cfgp *p, struct ibsmd_config *c, const yaml_node_t *v)
{
	if (v->type != YAML_SEQUENCE_NODE)
		return cfg_err(p, v, "partitions: expected a list");
	free_partitions(c);
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		struct config_partition *pt = config_partition_add(c);
		if (!pt)
			return cfg_err(p, v, "partitions: more than %d, or out of memory",
			               CONFIG_MAX_PARTITIONS);
		yaml_node_t *n = yaml_document_get_node(p->doc, *it);
		pt->line = (uint32_t)n->start_mark.line + 1;
		pt->col = (uint32_t)n->start_mark.column + 1;
		if (parse_partition(p, n, pt) < 0)
			return -1;
	}
	return 0;
}

static int parse_option(struct cfgp *p, struct ibsmd_config *c, const struct opt *o,
                        const yaml_node_t *v)
{
	void *dst = (char *)c + o->off;
	switch (o->type) {
	case OPT_UINT: {
		uint64_t x;
		if (cfg_u64(p, v, o->key, o->max, &x) < 0)
			return -1;
		if (x < o->min)
			return cfg_err(p, v, "%s: %llu is below the least allowed, %llu", o->key,
			               (unsigned long long)x, (unsigned long long)o->min);
		put_uint(dst, o->size, x);
		return 0;
	}
	case OPT_BOOL: return cfg_bool(p, v, o->key, dst);
	case OPT_STR: return cfg_str(p, v, o->key, dst, o->size);
	case OPT_GUIDS: return get_guids(p, v, o->key, dst, CONFIG_MAX_ROOTS, &c->nroots);
	case OPT_MTU: return cfg_mtu(p, v, o->key, dst);
	case OPT_RATE: return cfg_rate(p, v, o->key, dst);
	case OPT_LOGLEVEL: {
		const char *s = cfg_scalar(p, v, o->key);
		if (!s)
			return -1;
		int l = log_level_parse(s);
		if (l < 0)
			return cfg_err(
			    p, v, "log_level: err, warn, notice, info or debug, not \"%s\"", s);
		c->log_level = l;
		return 0;
	}
	case OPT_SECRET:
		if (cfg_str(p, v, o->key, dst, o->size) < 0)
			return -1;
		return read_secret(p, v, c);
	case OPT_PARTITIONS: return parse_partitions(p, c, v);
	case OPT_QOS: return cfg_parse_qos(p, c, v);
	case OPT_CC: return cfg_parse_cc(p, c, v);
	case OPT_PREFIX_ROUTES: return get_prefix_routes(p, v, c);
	}
	return -1;
}

static int parse_root(struct cfgp *p, struct ibsmd_config *c, const yaml_node_t *root)
{
	if (root->type != YAML_MAPPING_NODE)
		return cfg_err(p, root, "the configuration is a mapping of option: value");
	for (yaml_node_pair_t *kv = root->data.mapping.pairs.start;
	     kv < root->data.mapping.pairs.top; kv++) {
		yaml_node_t *k = yaml_document_get_node(p->doc, kv->key);
		yaml_node_t *v = yaml_document_get_node(p->doc, kv->value);
		const char *key = cfg_scalar(p, k, "key");
		if (!key)
			return -1;
		enum config_key ck = CONFIG_NKEYS;
		for (unsigned i = 0; i < CONFIG_NKEYS; i++)
			if (!strcmp(opts[i].key, key))
				ck = (enum config_key)i;
		if (ck == CONFIG_NKEYS)
			return cfg_err(p, k, "unknown option \"%s\"", key);
		if (c->where[ck].line && p->seen[ck])
			return cfg_err(p, k, "%s is given twice (first on line %u)", key,
			               c->where[ck].line);
		p->seen[ck] = true;
		if (parse_option(p, c, &opts[ck], v) < 0)
			return -1;
		c->where[ck].line = (uint32_t)v->start_mark.line + 1;
		c->where[ck].col = (uint32_t)v->start_mark.column + 1;
	}
	return 0;
}

/* One open mapping or sequence of the pre-scan: a mapping's keys so far (a hash of the key
 * -> its line; a 64-bit collision between two keys of one mapping would only refuse the
 * file, never misread it). */
struct scan_frame {
	bool is_map, want_key;
	struct u64map keys;
};

/* A node ended at the frame below the top: the mapping's next node is a key again. */
static void scan_node_done(struct scan_frame *stack, unsigned depth)
{
	if (depth && stack[depth - 1].is_map)
		stack[depth - 1].want_key = !stack[depth - 1].want_key;
}

/* libyaml's scanner takes time quadratic in the nesting (a 200 KB file of "[[[..." takes
 * over a minute), its document loader reads only the first document and keeps the last of
 * a key given twice. A pass over the events first stops at the first structure nested too
 * deep, a second document or a key given twice in any mapping, before the nesting costs
 * anything; the loader then reads what passed. 0, 1 (err says why), or -1 (a YAML error
 * the loader reports better). */
static int config_prescan(const uint8_t *text, size_t len, const char *path, char *err,
                          size_t errlen)
{
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, text, len);
	int rc = 0;
	unsigned depth = 0, docs = 0;
	struct scan_frame stack[CONFIG_MAX_DEPTH];
	for (bool end = false; !end && !rc;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			rc = -1;
			break;
		}
		size_t line = ev.start_mark.line + 1, col = ev.start_mark.column + 1;
		switch (ev.type) {
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT:
			if (ev.type == YAML_SCALAR_EVENT && depth && stack[depth - 1].is_map &&
			    stack[depth - 1].want_key) {
				const char *key = (const char *)ev.data.scalar.value;
				struct u64map *keys = &stack[depth - 1].keys;
				uint64_t h = u64map_str_key(key);
				uint32_t first = u64map_get(keys, h);
				if (first != U64MAP_NONE) {
					snprintf(err, errlen,
					         "%s:%zu:%zu: %s is given twice (first on line %u)",
					         path, line, col, key, first);
					rc = 1;
				} else if (u64map_put(keys, h, (uint32_t)line) < 0) {
					snprintf(err, errlen, "%s: out of memory", path);
					rc = 1;
				}
			}
			scan_node_done(stack, depth);
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				snprintf(
				    err, errlen,
				    "%s:%zu:%zu: a second YAML document: ibsmd reads one; merge "
				    "them, or remove the \"---\"",
				    path, line, col);
				rc = 1;
			}
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth == CONFIG_MAX_DEPTH) {
				snprintf(
				    err, errlen,
				    "%s:%zu:%zu: nested more than %u levels deep: no option needs "
				    "that",
				    path, line, col, CONFIG_MAX_DEPTH);
				rc = 1;
				break;
			}
			stack[depth++] = (struct scan_frame){
			    .is_map = ev.type == YAML_MAPPING_START_EVENT, .want_key = true};
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth) {
				u64map_free(&stack[--depth].keys);
				scan_node_done(stack, depth);
			}
			break;
		case YAML_STREAM_END_EVENT: end = true; break;
		default: break;
		}
		yaml_event_delete(&ev);
	}
	while (depth)
		u64map_free(&stack[--depth].keys);
	yaml_parser_delete(&parser);
	return rc;
}

static int config_parse(struct ibsmd_config *c, const uint8_t *text, size_t len, const char *path,
                        char *err, size_t errlen);

int config_load(struct ibsmd_config *c, const char *path, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	int rc = -1;
	if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > CONFIG_MAX_SIZE)
		snprintf(err, errlen,
		         "%s: %lld bytes: larger than any configuration needs (at most %u); is it "
		         "the right file?",
		         path, (long long)st.st_size, CONFIG_MAX_SIZE);
	else
		rc = config_load_stream(c, fp, path, err, errlen);
	fclose(fp);
	return rc;
}

int config_load_stream(struct ibsmd_config *c, FILE *fp, const char *path, char *err, size_t errlen)
{
	/* read whole, once: the file may be a pipe (--config <(...)), which cannot be read
	 * twice, and one that is not a regular file is bounded here */
	size_t cap = 65536, len = 0;
	uint8_t *text = malloc(cap);
	while (text) {
		size_t n = fread(text + len, 1, cap - len, fp);
		len += n;
		if (len > CONFIG_MAX_SIZE) {
			snprintf(
			    err, errlen,
			    "%s: larger than any configuration needs (at most %u bytes); is it "
			    "the right file?",
			    path, CONFIG_MAX_SIZE);
			free(text);
			return -1;
		}
		if (len < cap) {
			if (ferror(fp)) {
				snprintf(err, errlen, "%s: %s", path, strerror(errno));
				free(text);
				return -1;
			}
			break;
		}
		uint8_t *more = realloc(text, cap * 2);
		if (!more)
			free(text);
		text = more;
		cap *= 2;
	}
	if (!text) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	int rc = config_prescan(text, len, path, err, errlen) > 0
	             ? -1
	             : config_parse(c, text, len, path, err, errlen);
	free(text);
	return rc;
}

static int config_parse(struct ibsmd_config *c, const uint8_t *text, size_t len, const char *path,
                        char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, text, len);
	int rc = 0;
	if (!yaml_parser_load(&parser, &doc)) {
		/* libyaml says where it gave up and, for an unclosed bracket or quote, where
		 * that started: the start is where the mistake usually is */
		char ctx[160] = "";
		if (parser.context && (parser.context_mark.line != parser.problem_mark.line ||
		                       parser.context_mark.column != parser.problem_mark.column))
			snprintf(ctx, sizeof(ctx), " %s started at %zu:%zu", parser.context,
			         parser.context_mark.line + 1, parser.context_mark.column + 1);
		else if (parser.problem && strstr(parser.problem, "cannot start any token"))
			snprintf(ctx, sizeof(ctx), " (a tab? YAML indents with spaces)");
		snprintf(err, errlen, "%s:%zu:%zu: not valid YAML: %s%s", path,
		         parser.problem_mark.line + 1, parser.problem_mark.column + 1,
		         parser.problem ? parser.problem : "a syntax error", ctx);
		rc = -1;
	} else {
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		struct cfgp p = {.path = path, .doc = &doc, .err = err, .errlen = errlen};
		snprintf(c->source, sizeof(c->source), "%s", path);
		if (root) /* an empty file keeps the defaults */
			rc = parse_root(&p, c, root);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	return rc;
}

/* A check's message, after the file, line and column where the first key it names was set. */
static int check_err(const struct ibsmd_config *c, enum config_key k, char *err, size_t errlen,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int check_err(const struct ibsmd_config *c, enum config_key k, char *err, size_t errlen,
                     const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->where[k].line)
		snprintf(err, errlen, "%s:%u:%u: %s", c->source, c->where[k].line, c->where[k].col,
		         msg);
	else
		snprintf(err, errlen, "%s", msg);
	return -1;
}

int config_check(const struct ibsmd_config *c, char *err, size_t errlen)
{
	/* "" would put the state files in the filesystem's root (/sa-state) */
	if (!c->state_dir[0])
		return check_err(c, CK_STATE_DIR, err, errlen,
		                 "state_dir: empty; name a directory (the default is "
		                 "/var/lib/ibsmd)");
	enum config_key lid_key = c->where[CK_LID_MAX].line ? CK_LID_MAX : CK_LID_MIN;
	if (c->lid_min < 1 || c->lid_min > c->lid_max)
		return check_err(c, lid_key, err, errlen, "LID range %u-%u is empty or starts at 0",
		                 c->lid_min, c->lid_max);
	if ((unsigned)(c->lid_max - c->lid_min + 1) < (1u << c->lmc))
		return check_err(c, c->where[CK_LMC].line ? CK_LMC : lid_key, err, errlen,
		                 "LID range %u-%u holds no block of 2^LMC=%u LIDs", c->lid_min,
		                 c->lid_max, 1u << c->lmc);
	if (c->m_key_protect && !c->m_key && !c->has_m_key_secret)
		return check_err(c, CK_M_KEY_PROTECT, err, errlen,
		                 "m_key_protect %u without m_key or m_key_secret protects ports "
		                 "with the key 0, which every host knows: set one of them",
		                 c->m_key_protect);
	/* IBA's reserved values, which a port refuses */
	if (c->link_speed_enabled > 7 && c->link_speed_enabled != 15)
		return check_err(c, CK_LINK_SPEED_ENABLED, err, errlen,
		                 "link_speed_enabled: %u is reserved; 0 (no change), SDR 1, DDR 2, "
		                 "QDR 4 or'ed (1-7), or 15 (every speed the port supports)",
		                 c->link_speed_enabled);
	if (c->link_width_enabled > 31 && c->link_width_enabled != 255)
		return check_err(
		    c, CK_LINK_WIDTH_ENABLED, err, errlen,
		    "link_width_enabled: %u is reserved; 0 (no change), 1x 1, 4x 2, 8x "
		    "4, 12x 8, 2x 16 or'ed (1-31), or 255 (every width the port supports)",
		    c->link_width_enabled);
	if (c->link_speed_ext_enabled > 15 && c->link_speed_ext_enabled < 30)
		return check_err(
		    c, CK_LINK_SPEED_EXT_ENABLED, err, errlen,
		    "link_speed_ext_enabled: %u is reserved; 0 (no change), FDR 1, EDR 2, "
		    "HDR 4, NDR 8 or'ed (1-15), 30 (none) or 31 (every one supported)",
		    c->link_speed_ext_enabled);
	if (strcmp(c->metrics_ports, "none") && strcmp(c->metrics_ports, "switches") &&
	    strcmp(c->metrics_ports, "all"))
		return check_err(c, CK_METRICS_PORTS, err, errlen,
		                 "metrics_ports: \"%s\" is not none, switches or all",
		                 c->metrics_ports);
	if (strcmp(c->virtualization, "manage") && strcmp(c->virtualization, "disable") &&
	    strcmp(c->virtualization, "ignore"))
		return check_err(c, CK_VIRTUALIZATION, err, errlen,
		                 "virtualization: \"%s\" is not manage, disable or ignore",
		                 c->virtualization);
	/* one of the pair is a certificate without its key or a key without its certificate */
	if (!c->api_tls_cert[0] != !c->api_tls_key[0])
		return check_err(c, c->api_tls_cert[0] ? CK_API_TLS_CERT : CK_API_TLS_KEY, err,
		                 errlen,
		                 "api_tls_cert and api_tls_key: give both (HTTPS) or neither");
	/* no anonymous partition changes */
	if (c->api_listen[0] && !c->api_users_file[0])
		return check_err(c, CK_API_LISTEN, err, errlen,
		                 "api_listen without api_users_file: the API takes only users "
		                 "from that file (ibsa passwd NAME writes its lines)");
	/* which partition holds each P_Key: one look per partition, however many there are */
	uint32_t *owner = calloc(0x8000, sizeof(uint32_t));
	if (!owner) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < c->npartitions; i++) {
		uint16_t pk = c->partitions[i].pkey & 0x7fff;
		if (!owner[pk]) {
			owner[pk] = i + 1;
			continue;
		}
		const struct config_partition *a = &c->partitions[i],
		                              *b = &c->partitions[owner[pk] - 1];
		if (c->where[CK_PARTITIONS].line)
			snprintf(
			    err, errlen,
			    "%s:%u:%u: partitions \"%s\" and \"%s\" (line %u) share P_Key 0x%04x",
			    c->source, a->line, a->col, a->name, b->name, b->line, pk);
		else
			snprintf(err, errlen, "partitions \"%s\" and \"%s\" share P_Key 0x%04x",
			         a->name, b->name, pk);
		free(owner);
		return -1;
	}
	free(owner);
	/* a port group drawn from a partition names one that exists */
	for (unsigned i = 0; c->qos && i < c->qos->ngroups; i++) {
		const struct config_qos_group *g = &c->qos->groups[i];
		bool found = !g->partition[0];
		for (unsigned k = 0; k < c->npartitions && !found; k++)
			found = !strcmp(c->partitions[k].name, g->partition);
		if (found)
			continue;
		if (c->where[CK_QOS].line)
			snprintf(err, errlen, "%s:%u:%u: port group \"%s\": no partition \"%s\"",
			         c->source, g->line, g->col, g->name, g->partition);
		else
			snprintf(err, errlen, "port group \"%s\": no partition \"%s\"", g->name,
			         g->partition);
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

uint64_t config_routing_inputs(const struct ibsmd_config *c)
{
	uint64_t h = config_digest(c, CONFIG_DIGEST_ROUTING);
	const char *const files[] = {c->root_guid_file,   c->cn_guid_file,
	                             c->hop_weights_file, c->port_prof_ignore_file,
	                             c->ids_guid_file,    c->guid_routing_order_file,
	                             c->lfts_file,        c->torus_config};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct stat st;
		if (!files[i][0] || stat(files[i], &st) < 0)
			continue; /* unset, or unreadable: the path alone, in the digest, counts */
		FNV_VAL(h, st.st_dev);
		FNV_VAL(h, st.st_ino);
		FNV_VAL(h, st.st_size);
		FNV_VAL(h, st.st_mtim.tv_sec);
		FNV_VAL(h, st.st_mtim.tv_nsec);
	}
	return h;
}

uint64_t config_digest(const struct ibsmd_config *c, enum config_digest_part part)
{
	uint64_t h = FNV_INIT;
	switch (part) {
	case CONFIG_DIGEST_PARTITIONS:
		/* the file's alone: the API's members reach standbys by the sync, a moment
		 * apart, and must not make the files look different meanwhile */
		for (unsigned i = 0, np = config_file_partitions(c); i < np; i++) {
			const struct config_partition *p = &c->partitions[i];
			unsigned nm = config_file_members(p);
			FNV_VAL(h, p->pkey);
			FNV_VAL(h, p->defmember);
			FNV_VAL(h, p->indx0);
			FNV_VAL(h, p->has_sl);
			FNV_VAL(h, p->sl);
			FNV_VAL(h, p->mtu_limit);
			FNV_VAL(h, p->rate_limit);
			FNV_VAL(h, p->ipoib);
			FNV_VAL(h, p->ipoib_mtu);
			FNV_VAL(h, p->ipoib_rate);
			FNV_VAL(h, p->ipoib_scope);
			FNV_VAL(h, p->ipoib_qkey);
			FNV_VAL(h, nm);
			for (unsigned k = 0; k < nm; k++) {
				FNV_VAL(h, p->members[k].guid);
				FNV_VAL(h, p->members[k].kind);
				FNV_VAL(h, p->members[k].membership);
			}
			FNV_VAL(h, p->ngroups);
			for (unsigned k = 0; k < p->ngroups; k++) {
				const struct config_mgroup *g = &p->groups[k];
				h = fnv(h, g->mgid, sizeof(g->mgid));
				FNV_VAL(h, g->mtu);
				FNV_VAL(h, g->rate);
				FNV_VAL(h, g->sl);
				FNV_VAL(h, g->scope);
				FNV_VAL(h, g->tclass);
				FNV_VAL(h, g->qkey);
				FNV_VAL(h, g->flow_label);
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
		h = fnv(h, c->root_guid_file, strlen(c->root_guid_file) + 1);
		h = fnv(h, c->cn_guid_file, strlen(c->cn_guid_file) + 1);
		h = fnv(h, c->hop_weights_file, strlen(c->hop_weights_file) + 1);
		h = fnv(h, c->port_prof_ignore_file, strlen(c->port_prof_ignore_file) + 1);
		h = fnv(h, c->ids_guid_file, strlen(c->ids_guid_file) + 1);
		FNV_VAL(h, c->scatter_ports);
		FNV_VAL(h, c->port_shifting);
		h = fnv(h, c->guid_routing_order_file, strlen(c->guid_routing_order_file) + 1);
		FNV_VAL(h, c->guid_routing_order_no_scatter);
		h = fnv(h, c->lfts_file, strlen(c->lfts_file) + 1);
		h = fnv(h, c->torus_config, strlen(c->torus_config) + 1);
		for (unsigned i = 0; i < c->nprefix_routes; i++) {
			FNV_VAL(h, c->prefix_routes[i].prefix);
			FNV_VAL(h, c->prefix_routes[i].router);
		}
		FNV_VAL(h, c->routing_max_vls);
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

/* --dump-config */

void cfg_dump_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

const char *cfg_rate_name(uint8_t code)
{
	static const char *const names[] = {
	    [2] = "2.5", [3] = "10", [4] = "30", [5] = "5",   [6] = "20",
	    [7] = "40",  [8] = "60", [9] = "80", [10] = "120"};
	return code < sizeof(names) / sizeof(names[0]) && names[code] ? names[code] : "10";
}

static const char *membership_name(uint8_t m)
{
	return m == CM_BOTH ? "both" : m == CM_LIMITED ? "limited" : "full";
}

static void dump_partition(FILE *out, const struct config_partition *pt)
{
	fprintf(out, "  - name: ");
	cfg_dump_str(out, pt->name);
	fprintf(out, "\n    pkey: 0x%04x\n    membership: %s\n", pt->pkey,
	        membership_name(pt->defmember));
	if (pt->indx0)
		fprintf(out, "    indx0: true\n");
	if (pt->has_sl)
		fprintf(out, "    sl: %u\n", pt->sl);
	if (pt->mtu_limit)
		fprintf(out, "    mtu_limit: %u\n", 128u << pt->mtu_limit);
	if (pt->rate_limit)
		fprintf(out, "    rate_limit: %s\n", cfg_rate_name(pt->rate_limit));
	unsigned nm = config_file_members(pt); /* the API's are in partitions-api */
	fprintf(out, "    members:%s\n", nm ? "" : " []");
	static const char *const kinds[] = {[CM_ALL] = "all",
	                                    [CM_ALL_CAS] = "all_cas",
	                                    [CM_ALL_SWITCHES] = "all_switches",
	                                    [CM_SELF] = "self",
	                                    [CM_ALL_ROUTERS] = "all_routers"};
	for (unsigned i = 0; i < nm; i++) {
		const struct config_member *m = &pt->members[i];
		fprintf(out, "      - ");
		if (m->kind == CM_GUID)
			fprintf(out, "0x%016" PRIx64, m->guid);
		else
			fprintf(out, "%s", kinds[m->kind]);
		if (m->membership)
			fprintf(out, ": %s", membership_name(m->membership));
		fputc('\n', out);
	}
	fprintf(out, "    ipoib: %s\n    mtu: %u\n    rate: %s\n    scope: %u\n    q_key: 0x%08x\n",
	        pt->ipoib ? "true" : "false", 128u << pt->ipoib_mtu, cfg_rate_name(pt->ipoib_rate),
	        pt->ipoib_scope, pt->ipoib_qkey);
	if (pt->ngroups)
		fprintf(out, "    groups:\n");
	for (unsigned i = 0; i < pt->ngroups; i++) {
		const struct config_mgroup *g = &pt->groups[i];
		char mgid[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, g->mgid, mgid, sizeof(mgid));
		fprintf(out,
		        "      - mgid: \"%s\"\n        mtu: %u\n        rate: %s\n        sl: %u\n"
		        "        scope: %u\n        q_key: 0x%08x\n        tclass: %u\n"
		        "        flow_label: 0x%05x\n",
		        mgid, 128u << g->mtu, cfg_rate_name(g->rate), g->sl, g->scope, g->qkey,
		        g->tclass, g->flow_label);
	}
}

void config_dump(const struct ibsmd_config *c, FILE *out)
{
	fprintf(out,
	        "# ibsmd's effective configuration: defaults, the file%s%s, the command "
	        "line\n",
	        c->source[0] ? " " : "", c->source);
	for (unsigned k = 0; k < CONFIG_NKEYS; k++) {
		const struct opt *o = &opts[k];
		const void *src = (const char *)c + o->off;
		fprintf(out, "%s:", o->key);
		switch (o->type) {
		case OPT_UINT: {
			uint64_t v = get_uint(src, o->size);
			if (o->flags & OPT_HEX)
				fprintf(out, " 0x%0*" PRIx64 "\n", (int)o->size * 2, v);
			else
				fprintf(out, " %" PRIu64 "\n", v);
			break;
		}
		case OPT_BOOL: fprintf(out, " %s\n", *(const bool *)src ? "true" : "false"); break;
		case OPT_STR:
		case OPT_SECRET:
			fputc(' ', out);
			cfg_dump_str(out, src);
			fputc('\n', out);
			break;
		case OPT_GUIDS:
			fprintf(out, " [");
			for (unsigned i = 0; i < c->nroots; i++)
				fprintf(out, "%s0x%016" PRIx64, i ? ", " : "", c->root_guids[i]);
			fprintf(out, "]\n");
			break;
		case OPT_MTU: fprintf(out, " %u\n", 128u << *(const uint8_t *)src); break;
		case OPT_RATE: fprintf(out, " %s\n", cfg_rate_name(*(const uint8_t *)src)); break;
		case OPT_LOGLEVEL:
			fprintf(out, " %s\n",
			        log_level_name(c->log_level < 0 ? LOGL_NOTICE
			                                        : (enum log_level)c->log_level));
			break;
		case OPT_PARTITIONS: {
			unsigned np = config_file_partitions(c);
			if (!np)
				fprintf(out, " []\n");
			else
				fputc('\n', out);
			for (unsigned i = 0; i < np; i++)
				dump_partition(out, &c->partitions[i]);
			break;
		}
		case OPT_QOS: cfg_dump_qos(out, c->qos); break;
		case OPT_CC: config_cc_dump(out, &c->cc); break;
		case OPT_PREFIX_ROUTES:
			fprintf(out, "%s\n", c->nprefix_routes ? "" : " []");
			for (unsigned i = 0; i < c->nprefix_routes; i++) {
				const struct config_prefix_route *r = &c->prefix_routes[i];
				char a[24] = "*", b[24] = "*";
				if (r->prefix)
					snprintf(a, sizeof(a), "0x%016" PRIx64, r->prefix);
				if (r->router)
					snprintf(b, sizeof(b), "0x%016" PRIx64, r->router);
				fprintf(out, "  - \"%s %s\"\n", a, b);
			}
			break;
		}
	}
}

/* Reload: which options changed, and moving the new values in. */

static bool partition_equal(const struct config_partition *a, const struct config_partition *b)
{
	if (strcmp(a->name, b->name) || a->pkey != b->pkey || a->defmember != b->defmember ||
	    a->indx0 != b->indx0 || a->has_sl != b->has_sl || a->sl != b->sl ||
	    a->mtu_limit != b->mtu_limit || a->rate_limit != b->rate_limit ||
	    a->ipoib != b->ipoib || a->ipoib_mtu != b->ipoib_mtu ||
	    a->ipoib_rate != b->ipoib_rate || a->ipoib_scope != b->ipoib_scope ||
	    a->ipoib_qkey != b->ipoib_qkey || config_file_members(a) != config_file_members(b) ||
	    a->ngroups != b->ngroups)
		return false;
	for (unsigned i = 0, nm = config_file_members(a); i < nm; i++)
		if (a->members[i].guid != b->members[i].guid ||
		    a->members[i].kind != b->members[i].kind ||
		    a->members[i].membership != b->members[i].membership)
			return false;
	for (unsigned i = 0; i < a->ngroups; i++) {
		const struct config_mgroup *x = &a->groups[i], *y = &b->groups[i];
		if (memcmp(x->mgid, y->mgid, 16) || x->mtu != y->mtu || x->rate != y->rate ||
		    x->sl != y->sl || x->scope != y->scope || x->tclass != y->tclass ||
		    x->qkey != y->qkey || x->flow_label != y->flow_label)
			return false;
	}
	return true;
}

bool config_key_equal(const struct ibsmd_config *a, const struct ibsmd_config *b, enum config_key k)
{
	const struct opt *o = &opts[k];
	const void *pa = (const char *)a + o->off, *pb = (const char *)b + o->off;
	switch (o->type) {
	case OPT_UINT: return get_uint(pa, o->size) == get_uint(pb, o->size);
	case OPT_BOOL: return *(const bool *)pa == *(const bool *)pb;
	case OPT_STR: return !strcmp(pa, pb);
	case OPT_MTU:
	case OPT_RATE: return *(const uint8_t *)pa == *(const uint8_t *)pb;
	case OPT_LOGLEVEL: return a->log_level == b->log_level;
	case OPT_GUIDS:
		return a->nroots == b->nroots &&
		       !memcmp(a->root_guids, b->root_guids, a->nroots * sizeof(a->root_guids[0]));
	case OPT_SECRET:
		return !strcmp(a->m_key_secret, b->m_key_secret) &&
		       a->has_m_key_secret == b->has_m_key_secret &&
		       !memcmp(a->m_key_secret_key, b->m_key_secret_key,
		               sizeof(a->m_key_secret_key));
	case OPT_PARTITIONS:
		/* the file's: the API's members are no change of the file */
		if (config_file_partitions(a) != config_file_partitions(b))
			return false;
		for (unsigned i = 0, np = config_file_partitions(a); i < np; i++)
			if (!partition_equal(&a->partitions[i], &b->partitions[i]))
				return false;
		return true;
	case OPT_QOS: return cfg_qos_equal(a->qos, b->qos);
	case OPT_CC: return cfg_cc_equal(&a->cc, &b->cc);
	case OPT_PREFIX_ROUTES:
		return a->nprefix_routes == b->nprefix_routes &&
		       !memcmp(a->prefix_routes, b->prefix_routes,
		               a->nprefix_routes * sizeof(a->prefix_routes[0]));
	}
	return false;
}

void config_key_take(struct ibsmd_config *dst, struct ibsmd_config *src, enum config_key k)
{
	const struct opt *o = &opts[k];
	dst->where[k] = src->where[k];
	switch (o->type) {
	case OPT_PARTITIONS:
		free_partitions(dst);
		dst->partitions = src->partitions;
		dst->npartitions = src->npartitions;
		dst->partitions_cap = src->partitions_cap;
		src->partitions = NULL; /* they belong to dst now */
		src->npartitions = src->partitions_cap = 0;
		return;
	case OPT_QOS:
		config_qos_free(dst->qos);
		dst->qos = src->qos;
		src->qos = NULL; /* it belongs to dst now */
		return;
	case OPT_GUIDS: dst->nroots = src->nroots; break;
	case OPT_PREFIX_ROUTES: dst->nprefix_routes = src->nprefix_routes; break;
	case OPT_SECRET:
		dst->has_m_key_secret = src->has_m_key_secret;
		memcpy(dst->m_key_secret_key, src->m_key_secret_key, sizeof(dst->m_key_secret_key));
		break;
	default: break;
	}
	memcpy((char *)dst + o->off, (const char *)src + o->off, o->size);
}
