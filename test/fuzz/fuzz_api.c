/* Fuzz target: the partition API's outside input (daemon/api_parse.c). First byte mod 8:
 * 0, a POST /ufmRest/resources/pkeys body; 1, a remove_guids_from_pkey body; 2, a users file,
 * then a user name and password looked up in it (the name up to the first NUL of what
 * follows the file's own NUL, the password after it) without the full password check, whose
 * cost the file's hash sets; 4, a PUT (set) body; 5, the GUID list of DELETE
 * .../pkeys/PKEY/guids/G1,G2; 6, a /pkeys/add body; 7, a qos_conf body; else (3), a P_Key
 * and a GUID as a URL or a body carries them. Nothing
 * may crash, leak or hang; a refusal must say why, and what parses must hold what the
 * parser promises (P_Key 0x0001-0x7ffe, GUIDs non-zero and distinct, at most API_MAX_GUIDS;
 * an MTU, rate and SL that are IBA's, a name that fits). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/api_parse.h"
#include "mad/link_speed.h"

/* GUIDs non-zero and distinct, a membership for each when any */
static void check_guids(const struct api_pkey_req *r)
{
	for (size_t i = 0; i < r->nguids; i++)
		for (size_t j = 0; j <= i; j++)
			if (!r->guids[i] || (j < i && r->guids[i] == r->guids[j]))
				abort();
	if (r->nguids > API_MAX_GUIDS || (r->fulls && !r->guids))
		abort();
}

static void body(const uint8_t *data, size_t size, enum api_req_kind kind)
{
	struct api_pkey_req r;
	char why[300] = "";
	if (api_parse_pkey_req((const char *)data, size, kind, &r, why, sizeof(why)) < 0) {
		if (!why[0])
			abort();
	} else {
		if (r.pkey == 0 || r.pkey >= 0x7fff || r.nguids > API_MAX_GUIDS)
			abort();
		check_guids(&r);
	}
	api_pkey_req_free(&r);
}

static void guid_list(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return;
	memcpy(s, data, size);
	s[size] = 0;
	struct api_pkey_req r;
	char why[300] = "";
	if (api_parse_guid_list(s, &r, why, sizeof(why)) < 0) {
		if (!why[0])
			abort();
	} else {
		check_guids(&r);
	}
	api_pkey_req_free(&r);
	free(s);
}

static void partition(const uint8_t *data, size_t size, bool qos)
{
	struct api_partition_req r;
	char why[300] = "";
	if (api_parse_partition_req((const char *)data, size, qos, &r, why, sizeof(why)) < 0) {
		if (!why[0])
			abort();
		return;
	}
	if (r.pkey == 0 || r.pkey >= 0x7fff || (r.has_mtu && r.mtu != 4 && r.mtu != 5) ||
	    (r.has_rate && !mad_rate_mbps(r.rate)) || (r.has_sl && r.sl > 15) ||
	    strnlen(r.name, sizeof(r.name)) >= sizeof(r.name) || (r.has_name && !r.name[0]) ||
	    (qos && (r.has_name || r.has_index0 || r.has_ipoib)))
		abort();
}

static void users(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t flen = nul ? (size_t)(nul - data) : size;
	struct api_users u;
	char why[512] = "";
	if (api_users_parse(&u, (const char *)data, flen, "users", why, sizeof(why)) < 0) {
		if (!why[0])
			abort();
		return;
	}
	char name[128] = "", pass[128] = "";
	if (nul) {
		size_t rest = size - flen - 1;
		const char *s = (const char *)nul + 1;
		size_t n = strnlen(s, rest);
		snprintf(name, sizeof(name), "%.*s", (int)n, s);
		if (n < rest)
			snprintf(pass, sizeof(pass), "%.*s", (int)(rest - n - 1), s + n + 1);
	}
	enum api_auth a = api_users_check(&u, name, pass, false);
	if (a != API_AUTH_UNKNOWN_USER && a != API_AUTH_NEED_VERIFY)
		abort(); /* nothing verified yet: nothing may pass */
	api_users_free(&u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (sodium_init() < 0)
		abort();
	if (!size || size > API_MAX_BODY + 1)
		return 0;
	switch (data[0] & 7) {
	case 0: body(data + 1, size - 1, API_REQ_ADD); break;
	case 1: body(data + 1, size - 1, API_REQ_REMOVE); break;
	case 2: users(data + 1, size - 1); break;
	case 4: body(data + 1, size - 1, API_REQ_SET); break;
	case 5: guid_list(data + 1, size - 1); break;
	case 6: partition(data + 1, size - 1, false); break;
	case 7: partition(data + 1, size - 1, true); break;
	default: {
		char s[64];
		snprintf(s, sizeof(s), "%.*s", (int)(size - 1 < 63 ? size - 1 : 63),
		         (const char *)data + 1);
		uint16_t pk;
		uint64_t g;
		if (api_parse_pkey(s, &pk) == 0 && (pk == 0 || pk >= 0x7fff))
			abort();
		if (api_parse_guid(s, &g) == 0 && !g)
			abort();
	}
	}
	return 0;
}
