/* The partition API's outside input, parsed (see api_parse.h). JSON by jansson: no parser of
 * our own. */
#include "daemon/api_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "mad/link_speed.h"
#include "util/u64map.h"

static int hex_digits(const char *s, size_t max, uint64_t *v)
{
	size_t n = 0;
	uint64_t x = 0;
	for (; s[n]; n++) {
		char c = s[n];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -1;
		if (n >= max)
			return -1;
		x = x << 4 | d;
	}
	*v = x;
	return (int)n;
}

static const char *skip_0x(const char *s)
{
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? s + 2 : s;
}

int api_parse_pkey(const char *s, uint16_t *pkey)
{
	uint64_t v = 0; /* hex_digits leaves it unset where s has no digit */
	int n = hex_digits(skip_0x(s), 4, &v);
	/* the top bit is membership, which UFM ignores here ("0x8001" is "0x0001"); 0x0000 is
	 * no partition and 0x7fff the default one, which ibsmd.yaml owns */
	v &= 0x7fff;
	if (n < 1 || v == 0 || v == 0x7fff)
		return -1;
	*pkey = (uint16_t)v;
	return 0;
}

int api_parse_guid(const char *s, uint64_t *guid)
{
	uint64_t v;
	if (hex_digits(skip_0x(s), 16, &v) != 16 || v == 0)
		return -1;
	*guid = v;
	return 0;
}

void api_pkey_req_free(struct api_pkey_req *r)
{
	free(r->guids);
	free(r->fulls);
	r->guids = NULL;
	r->fulls = NULL;
	r->nguids = 0;
}

/* g into r->guids unless there already; its place either way (seen: the places by GUID). */
static int put_guid(struct api_pkey_req *r, struct u64map *seen, uint64_t g, size_t *at)
{
	uint32_t k = u64map_get(seen, g);
	if (k != U64MAP_NONE) {
		*at = k;
		return 0;
	}
	if (u64map_put(seen, g, (uint32_t)r->nguids) < 0)
		return -1;
	*at = r->nguids;
	r->guids[r->nguids++] = g;
	return 0;
}

static int take_guids(json_t *a, struct api_pkey_req *r, char *why, size_t wlen)
{
	if (!json_is_array(a)) {
		snprintf(why, wlen, "\"guids\": expected a list of GUID strings");
		return -1;
	}
	size_t n = json_array_size(a);
	if (n > API_MAX_GUIDS) {
		snprintf(why, wlen, "\"guids\": %zu GUIDs, at most %d in one request", n,
		         API_MAX_GUIDS);
		return -1;
	}
	r->guids = calloc(n ? n : 1, sizeof(*r->guids));
	r->given = calloc(n ? n : 1, sizeof(*r->given));
	if (!r->guids || !r->given) {
		snprintf(why, wlen, "out of memory");
		return -1;
	}
	struct u64map seen = {0};
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *s = json_string_value(json_array_get(a, i));
		uint64_t g;
		if (!s || api_parse_guid(s, &g) < 0) {
			snprintf(why, wlen,
			         "\"guids\"[%zu]: expected a GUID string of 16 hex digits "
			         "(\"0x\" allowed before them), not zero",
			         i);
			rc = -1;
		} else if (put_guid(r, &seen, g, &r->given[i]) < 0) {
			snprintf(why, wlen, "out of memory");
			rc = -1;
		}
	}
	r->ngiven = rc == 0 ? n : 0;
	u64map_free(&seen);
	return rc;
}

int api_parse_guid_list(const char *s, struct api_pkey_req *r, char *why, size_t wlen)
{
	*r = (struct api_pkey_req){0};
	size_t n = 1;
	for (const char *c = s; *c; c++)
		n += *c == ',';
	if (n > API_MAX_GUIDS) {
		snprintf(why, wlen, "%zu GUIDs, at most %d in one request", n, API_MAX_GUIDS);
		return -1;
	}
	r->guids = calloc(n, sizeof(*r->guids));
	if (!r->guids) {
		snprintf(why, wlen, "out of memory");
		return -1;
	}
	struct u64map seen = {0};
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		char one[24];
		size_t len = strcspn(s, ",");
		uint64_t g;
		size_t at;
		if (len >= sizeof(one)) {
			rc = -1;
		} else {
			memcpy(one, s, len);
			one[len] = 0;
			rc = api_parse_guid(one, &g) < 0 ? -1 : put_guid(r, &seen, g, &at);
		}
		if (rc < 0)
			snprintf(why, wlen,
			         "GUID %zu of the path: expected 16 hex digits (\"0x\" allowed "
			         "before them), not zero, GUIDs separated by commas",
			         i + 1);
		s += len + (s[len] == ',');
	}
	u64map_free(&seen);
	return rc;
}

static int take_bool(json_t *v, const char *key, bool *out, char *why, size_t wlen)
{
	if (!json_is_boolean(v)) {
		snprintf(why, wlen, "\"%s\": expected true or false", key);
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

static int take_pkey(json_t *v, uint16_t *pkey, char *why, size_t wlen)
{
	const char *s = json_string_value(v);
	if (!s || api_parse_pkey(s, pkey) < 0) {
		snprintf(why, wlen,
		         "\"pkey\": expected a hexadecimal string from \"0x1\" to \"0x7ffe\" "
		         "(bit 15, membership, ignored)");
		return -1;
	}
	return 0;
}

/* One member of the object: known to this kind of request, and of the right type. */
static int take_member(const char *key, json_t *v, enum api_req_kind kind, struct api_pkey_req *r,
                       char *why, size_t wlen)
{
	if (!strcmp(key, "pkey"))
		return take_pkey(v, &r->pkey, why, wlen);
	if (!strcmp(key, "guids"))
		return take_guids(v, r, why, wlen);
	bool add = kind != API_REQ_REMOVE;
	if (add && !strcmp(key, "index0"))
		return take_bool(v, key, &r->index0, why, wlen);
	if (add && !strcmp(key, "ip_over_ib"))
		return take_bool(v, key, &r->ip_over_ib, why, wlen);
	if (add && !strcmp(key, "membership")) {
		const char *s = json_string_value(v);
		if (!s || (strcmp(s, "full") && strcmp(s, "limited"))) {
			snprintf(why, wlen, "\"membership\": expected \"full\" or \"limited\"");
			return -1;
		}
		r->full = !strcmp(s, "full");
		r->membership_given = true;
		return 0;
	}
	if (add && !strcmp(key, "memberships")) {
		if (!json_is_array(v)) {
			snprintf(why, wlen,
			         "\"memberships\": expected a list of \"full\" or \"limited\"");
			return -1;
		}
		r->memberships = v; /* checked against guids once both are read */
		return 0;
	}
	/* refused rather than ignored: a client that sends mtu_limit expects it to act, and
	 * ibsmd does not do it here */
	snprintf(why, wlen, "\"%.64s\": not a parameter of this request (%s)", key,
	         add ? "pkey, guids, index0, ip_over_ib, membership, memberships" : "pkey, guids");
	return -1;
}

/* "memberships": one per entry of "guids", in its order; a GUID given twice takes the
 * later one's. */
static int take_memberships(struct api_pkey_req *r, char *why, size_t wlen)
{
	json_t *a = r->memberships;
	if (r->membership_given) {
		snprintf(why, wlen, "\"membership\" and \"memberships\": give one or the other");
		return -1;
	}
	if (json_array_size(a) != r->ngiven) {
		snprintf(why, wlen, "\"memberships\": %zu entries for %zu GUIDs: one per GUID",
		         json_array_size(a), r->ngiven);
		return -1;
	}
	r->fulls = calloc(r->nguids ? r->nguids : 1, sizeof(*r->fulls));
	if (!r->fulls) {
		snprintf(why, wlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < r->ngiven; i++) {
		const char *s = json_string_value(json_array_get(a, i));
		if (!s || (strcmp(s, "full") && strcmp(s, "limited"))) {
			snprintf(why, wlen,
			         "\"memberships\"[%zu]: expected \"full\" or \"limited\"", i);
			return -1;
		}
		r->fulls[r->given[i]] = !strcmp(s, "full");
	}
	return 0;
}

/* A request's body as a JSON object: the root (json_decref it), or NULL with why. */
static json_t *load_object(const char *body, size_t len, char *why, size_t wlen)
{
	if (len > API_MAX_BODY) {
		snprintf(why, wlen, "the body is over %d bytes", API_MAX_BODY);
		return NULL;
	}
	json_error_t err;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &err);
	if (!root) {
		snprintf(why, wlen, "not JSON: %s at line %d column %d", err.text, err.line,
		         err.column);
		return NULL;
	}
	if (!json_is_object(root)) {
		snprintf(why, wlen, "expected a JSON object");
		json_decref(root);
		return NULL;
	}
	return root;
}

/* Each member of the object through take (until one is refused), then "pkey" required: 0,
 * or -1 with why. */
typedef int take_fn(const char *key, json_t *v, void *ctx, char *why, size_t wlen);
static int take_all(json_t *root, take_fn *take, void *ctx, const uint16_t *pkey, char *why,
                    size_t wlen)
{
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v)
	{
		if (take(key, v, ctx, why, wlen) < 0)
			return -1;
	}
	if (!*pkey) {
		snprintf(why, wlen, "\"pkey\" is missing");
		return -1;
	}
	return 0;
}

struct pkey_ctx {
	enum api_req_kind kind;
	struct api_pkey_req *r;
};
static int take_pkey_member(const char *key, json_t *v, void *ctx, char *why, size_t wlen)
{
	const struct pkey_ctx *c = ctx;
	return take_member(key, v, c->kind, c->r, why, wlen);
}

int api_parse_pkey_req(const char *body, size_t len, enum api_req_kind kind, struct api_pkey_req *r,
                       char *why, size_t wlen)
{
	*r = (struct api_pkey_req){.ip_over_ib = true, .full = true};
	json_t *root = load_object(body, len, why, wlen);
	if (!root)
		return -1;
	struct pkey_ctx c = {kind, r};
	int rc = take_all(root, take_pkey_member, &c, &r->pkey, why, wlen);
	if (rc == 0 && !r->guids) {
		snprintf(why, wlen, "\"guids\" is missing");
		rc = -1;
	} else if (rc == 0 && r->memberships && take_memberships(r, why, wlen) < 0) {
		rc = -1;
	}
	r->memberships = NULL; /* root's, freed with it */
	free(r->given);
	r->given = NULL;
	json_decref(root);
	return rc;
}

/* ---- partitions without members, and their QoS ---- */

/* mtu_limit in KB as UFM takes it: 2 (2048) or 4 (4096), as the IBA code. */
static int take_mtu(json_t *v, uint8_t *mtu, char *why, size_t wlen)
{
	double kb = json_is_number(v) ? json_number_value(v) : 0;
	if (kb != 2 && kb != 4) {
		snprintf(why, wlen, "\"mtu_limit\": expected 2 or 4 (KB: an MTU of 2048 or 4096)");
		return -1;
	}
	*mtu = kb == 2 ? 4 : 5;
	return 0;
}

/* rate_limit in Gb/s, one of the IBA rate table's, as its code. */
static int take_rate(json_t *v, uint8_t *rate, char *why, size_t wlen)
{
	char g[32] = "";
	if (json_is_number(v) && json_number_value(v) > 0 && json_number_value(v) < 1e5)
		snprintf(g, sizeof(g), "%g", json_number_value(v));
	*rate = g[0] ? mad_rate_parse(g) : 0;
	if (!*rate) {
		snprintf(
		    why, wlen,
		    "\"rate_limit\": expected a rate in Gb/s of the IBA table (2.5, 5, 10, 14, "
		    "20, 25, 28, 30, 40, 50, 56, 60, 80, 100, 112, 120, 168, 200, 300, 400, "
		    "600, 800, 1200, 1600)");
		return -1;
	}
	return 0;
}

static int take_partition_member(const char *key, json_t *v, bool qos, struct api_partition_req *r,
                                 char *why, size_t wlen)
{
	if (!strcmp(key, "pkey"))
		return take_pkey(v, &r->pkey, why, wlen);
	if (!strcmp(key, "mtu_limit")) {
		r->has_mtu = true;
		return take_mtu(v, &r->mtu, why, wlen);
	}
	if (!strcmp(key, "rate_limit")) {
		r->has_rate = true;
		return take_rate(v, &r->rate, why, wlen);
	}
	if (!strcmp(key, "service_level")) {
		json_int_t sl = json_is_integer(v) ? json_integer_value(v) : -1;
		if (sl < 0 || sl > 15) {
			snprintf(why, wlen, "\"service_level\": expected a number from 0 to 15");
			return -1;
		}
		r->sl = (uint8_t)sl;
		r->has_sl = true;
		return 0;
	}
	if (!qos && !strcmp(key, "index0")) {
		r->has_index0 = true;
		return take_bool(v, key, &r->index0, why, wlen);
	}
	if (!qos && !strcmp(key, "ip_over_ib")) {
		r->has_ipoib = true;
		return take_bool(v, key, &r->ipoib, why, wlen);
	}
	if (!qos && !strcmp(key, "partition_name")) {
		const char *s = json_string_value(v);
		if (!s || !s[0] || strlen(s) >= sizeof(r->name)) {
			snprintf(why, wlen,
			         "\"partition_name\": expected a name of 1 to %zu characters",
			         sizeof(r->name) - 1);
			return -1;
		}
		snprintf(r->name, sizeof(r->name), "%s", s);
		r->has_name = true;
		return 0;
	}
	snprintf(why, wlen, "\"%.64s\": not a parameter of this request (%s)", key,
	         qos ? "pkey, mtu_limit, service_level, rate_limit"
	             : "pkey, partition_name, index0, ip_over_ib, mtu_limit, service_level, "
	               "rate_limit; members are added with POST /ufmRest/resources/pkeys");
	return -1;
}

struct partition_ctx {
	bool qos;
	struct api_partition_req *r;
};
static int take_partition_ctx(const char *key, json_t *v, void *ctx, char *why, size_t wlen)
{
	const struct partition_ctx *c = ctx;
	return take_partition_member(key, v, c->qos, c->r, why, wlen);
}

int api_parse_partition_req(const char *body, size_t len, bool qos, struct api_partition_req *r,
                            char *why, size_t wlen)
{
	*r = (struct api_partition_req){0};
	json_t *root = load_object(body, len, why, wlen);
	if (!root)
		return -1;
	struct partition_ctx c = {qos, r};
	int rc = take_all(root, take_partition_ctx, &c, &r->pkey, why, wlen);
	if (rc == 0 && qos && !r->has_mtu && !r->has_rate && !r->has_sl) {
		snprintf(why, wlen,
		         "nothing to change: give mtu_limit, service_level or rate_limit");
		rc = -1;
	}
	json_decref(root);
	return rc;
}

/* ---- the users file ---- */

bool api_user_name_ok(const char *name, size_t len)
{
	if (len < 1 || len > API_MAX_USER_NAME)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '@' || c == '-'))
			return false;
	}
	return true;
}

void api_users_free(struct api_users *u)
{
	if (u->v)
		sodium_memzero(u->v, u->n * sizeof(*u->v));
	free(u->v);
	u->v = NULL;
	u->n = 0;
}

static struct api_user *find_user(struct api_users *u, const char *name, size_t len)
{
	for (size_t i = 0; i < u->n; i++)
		if (strlen(u->v[i].name) == len && !memcmp(u->v[i].name, name, len))
			return &u->v[i];
	return NULL;
}

/* One line, without its newline: blank, a # comment, or name:hash. */
static int parse_user_line(struct api_users *u, const char *s, size_t len, const char *where,
                           char *why, size_t wlen)
{
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	if (!len || s[0] == '#')
		return 0;
	const char *colon = memchr(s, ':', len);
	if (!colon || !api_user_name_ok(s, (size_t)(colon - s))) {
		snprintf(why, wlen, "%s: expected NAME:HASH, NAME 1-%d of A-Z a-z 0-9 . _ @ -",
		         where, API_MAX_USER_NAME);
		return -1;
	}
	size_t nlen = (size_t)(colon - s), hlen = len - nlen - 1;
	const char *hash = colon + 1;
	/* only what crypto_pwhash_str writes: Argon2, with its parameters in the string */
	if (hlen >= crypto_pwhash_STRBYTES || hlen < 10 || memcmp(hash, "$argon2", 7) ||
	    memchr(hash, 0, hlen)) {
		snprintf(why, wlen,
		         "%s: the hash is not crypto_pwhash_str's (\"$argon2...\"; "
		         "ibsa passwd NAME writes the line)",
		         where);
		return -1;
	}
	if (find_user(u, s, nlen)) {
		snprintf(why, wlen, "%s: user \"%.*s\" given twice", where, (int)nlen, s);
		return -1;
	}
	if (u->n >= API_MAX_USERS) {
		snprintf(why, wlen, "%s: more than %d users", where, API_MAX_USERS);
		return -1;
	}
	struct api_user *e = &u->v[u->n++];
	memset(e, 0, sizeof(*e));
	memcpy(e->name, s, nlen);
	memcpy(e->hash, hash, hlen);
	return 0;
}

int api_users_parse(struct api_users *u, const char *text, size_t len, const char *path, char *why,
                    size_t wlen)
{
	*u = (struct api_users){0};
	randombytes_buf(u->tag_key, sizeof(u->tag_key));
	u->v = calloc(API_MAX_USERS, sizeof(*u->v));
	if (!u->v) {
		snprintf(why, wlen, "%s: out of memory", path);
		return -1;
	}
	unsigned line = 1;
	for (size_t at = 0; at < len; line++) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len;
		char where[300];
		snprintf(where, sizeof(where), "%s:%u", path, line);
		if (parse_user_line(u, text + at, end - at, where, why, wlen) < 0) {
			api_users_free(u);
			return -1;
		}
		at = end + 1;
	}
	if (!u->n) {
		snprintf(why, wlen, "%s: no users (lines NAME:HASH, from ibsa passwd NAME)", path);
		api_users_free(u);
		return -1;
	}
	return 0;
}

static int read_all(int fd, char **buf, size_t *len)
{
	size_t cap = 4096;
	*len = 0;
	*buf = malloc(cap);
	while (*buf) {
		if (*len == cap) {
			if (cap >= (1u << 20)) { /* 256 users' lines are far less */
				errno = EFBIG;
				break;
			}
			char *nb = realloc(*buf, cap *= 2);
			if (!nb)
				break;
			*buf = nb;
		}
		ssize_t n = read(fd, *buf + *len, cap - *len);
		if (n == 0)
			return 0;
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0)
			*len += (size_t)n;
	}
	free(*buf);
	*buf = NULL;
	return -1;
}

int api_users_load(struct api_users *u, const char *path, char *why, size_t wlen)
{
	*u = (struct api_users){0};
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(why, wlen, "api_users_file %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
		snprintf(why, wlen,
		         "api_users_file %s: mode %04o; it holds password hashes, so it must be a "
		         "regular file only its owner reads (chmod 0600 %s)",
		         path, (unsigned)(st.st_mode & 07777), path);
		close(fd);
		return -1;
	}
	char *buf;
	size_t len;
	int rc = read_all(fd, &buf, &len);
	close(fd);
	if (rc < 0) {
		snprintf(why, wlen, "api_users_file %s: %s", path, strerror(errno));
		return -1;
	}
	rc = api_users_parse(u, buf, len, path, why, wlen);
	sodium_memzero(buf, len);
	free(buf);
	return rc;
}

static void tag_of(const struct api_users *u, const char *name, const char *pass,
                   unsigned char tag[crypto_generichash_BYTES])
{
	crypto_generichash_state st;
	crypto_generichash_init(&st, u->tag_key, sizeof(u->tag_key), crypto_generichash_BYTES);
	crypto_generichash_update(&st, (const unsigned char *)name, strlen(name) + 1);
	crypto_generichash_update(&st, (const unsigned char *)pass, strlen(pass));
	crypto_generichash_final(&st, tag, crypto_generichash_BYTES);
}

enum api_auth api_users_check(struct api_users *u, const char *name, const char *pass, bool verify)
{
	struct api_user *e = find_user(u, name, strlen(name));
	if (!e)
		return API_AUTH_UNKNOWN_USER;
	unsigned char tag[crypto_generichash_BYTES];
	tag_of(u, name, pass, tag);
	if (e->has_tag && !sodium_memcmp(tag, e->ok_tag, sizeof(tag)))
		return API_AUTH_CACHED;
	if (!verify)
		return API_AUTH_NEED_VERIFY;
	if (crypto_pwhash_str_verify(e->hash, pass, strlen(pass)) != 0)
		return API_AUTH_BAD_PASSWORD;
	memcpy(e->ok_tag, tag, sizeof(tag));
	e->has_tag = true;
	return API_AUTH_OK;
}
