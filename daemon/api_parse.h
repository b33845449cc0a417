/* What arrives from outside the partition API, parsed and checked before anything acts on it:
 * the JSON bodies ib-kubernetes's UFM plugin sends (UFM's REST shapes), the P_Keys and GUIDs
 * they and the URLs carry, and the users file (`name:hash`, the hash crypto_pwhash_str's).
 * No I/O and no event loop here, so that the fuzz harness and the unit tests run it alone. */
#ifndef IBSMD_DAEMON_API_PARSE_H
#define IBSMD_DAEMON_API_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#define API_MAX_GUIDS     4096      /* per request: a rack's VFs, with room to spare */
#define API_MAX_BODY      (1 << 20) /* bytes of a request body */
#define API_MAX_USERS     256
#define API_MAX_USER_NAME 64

/* POST /ufmRest/resources/pkeys (add) and PUT /ufmRest/resources/pkeys (set): {"pkey",
 * "index0", "ip_over_ib", "membership" or "memberships", "guids"};
 * POST /ufmRest/actions/remove_guids_from_pkey: {"pkey", "guids"}. */
enum api_req_kind { API_REQ_ADD, API_REQ_REMOVE, API_REQ_SET };

struct api_pkey_req {
	uint16_t pkey;   /* 0x0001-0x7ffe, without bit 15 (membership) */
	bool index0;     /* UFM's default false: P_Key at index 0 of the ports' tables */
	bool ip_over_ib; /* UFM's default true: the partition's IPoIB broadcast group */
	bool full;       /* membership "full" (UFM's default) or "limited" */
	size_t nguids;
	uint64_t *guids; /* port or alias GUIDs, duplicates removed, in the order given */
	/* "memberships": each GUID's own, true for full (a GUID given twice: the later's); NULL
	 * when not given */
	bool *fulls;
	/* while parsing: "membership" seen, "memberships" (the JSON array), each given GUID's
	 * place in guids */
	bool membership_given;
	void *memberships;
	size_t *given, ngiven;
};

/* Parse body (not NUL-terminated) as a request of that kind. 0, or -1 with why in words a
 * client can act on (it becomes the 400 answer); r is freed by api_pkey_req_free either way. */
int api_parse_pkey_req(const char *body, size_t len, enum api_req_kind kind, struct api_pkey_req *r,
                       char *why, size_t wlen);
void api_pkey_req_free(struct api_pkey_req *r);
/* POST /ufmRest/resources/pkeys/add: {"pkey", "partition_name", "index0", "ip_over_ib",
 * "mtu_limit", "service_level", "rate_limit"}, a partition without members; PUT (or POST)
 * /ufmRest/resources/pkeys/qos_conf: {"pkey", "mtu_limit", "service_level", "rate_limit"}.
 * Only "pkey" is required; what is not given is kept (has_*). mtu_limit is in KB as UFM
 * takes it (2 or 4), rate_limit in Gb/s (a rate of the IBA table: 2.5, 10, 25, 100...). */
struct api_partition_req {
	uint16_t pkey; /* 0x0001-0x7ffe */
	bool has_name, has_index0, index0, has_ipoib, ipoib;
	bool has_mtu, has_rate, has_sl;
	uint8_t mtu, rate, sl; /* IBA codes (mtu 4 = 2048, 5 = 4096), SL 0-15 */
	char name[64];
};
/* Parse body (qos: the qos_conf request). 0, or -1 with why in words a client can act on. */
int api_parse_partition_req(const char *body, size_t len, bool qos, struct api_partition_req *r,
                            char *why, size_t wlen);

/* "0x0a0b", "0xA0B" or "a0b" as UFM takes a P_Key: 0x0001-0x7ffe, bit 15 (membership)
 * dropped. 0 or -1. */
int api_parse_pkey(const char *s, uint16_t *pkey);
/* A GUID as UFM takes it: 16 hex digits, "0x" before them allowed. 0 or -1. */
int api_parse_guid(const char *s, uint64_t *guid);
/* The GUIDs of DELETE /ufmRest/resources/pkeys/PKEY/guids/G1,G2,...: "G1,G2" into r->guids
 * (duplicates removed). 0, or -1 with why; r is freed by api_pkey_req_free either way. */
int api_parse_guid_list(const char *s, struct api_pkey_req *r, char *why, size_t wlen);

/* ---- the users file ---- */

struct api_user {
	char name[API_MAX_USER_NAME + 1];
	char hash[crypto_pwhash_STRBYTES];
	/* a keyed hash of the last password that verified, so that a client's every request
	 * does not cost a full crypto_pwhash_str_verify (tens of ms on the event loop) */
	unsigned char ok_tag[crypto_generichash_BYTES];
	bool has_tag;
};

struct api_users {
	struct api_user *v;
	size_t n;
	unsigned char tag_key[crypto_generichash_KEYBYTES]; /* random, per process */
};

/* A user name the users file and `ibsa passwd` take: 1-64 of [A-Za-z0-9._@-]. */
bool api_user_name_ok(const char *name, size_t len);
/* Parse the file's text (path names it in messages). 0, or -1 with "PATH:LINE: what". */
int api_users_parse(struct api_users *u, const char *text, size_t len, const char *path, char *why,
                    size_t wlen);
/* Read path: it must be a regular file no one but its owner can read or write (0600 or
 * 0400), as it holds password hashes; then parse it. 0, or -1 with why naming the file. */
int api_users_load(struct api_users *u, const char *path, char *why, size_t wlen);
void api_users_free(struct api_users *u);

enum api_auth {
	API_AUTH_OK,
	API_AUTH_UNKNOWN_USER,
	API_AUTH_BAD_PASSWORD,
	API_AUTH_CACHED,      /* OK, by the tag of a password that verified before */
	API_AUTH_NEED_VERIFY, /* verify was false and only the full check can tell */
};
/* Which user, if any, name and password are. verify false: only the name and the cache are
 * consulted, for a caller that rations crypto_pwhash_str_verify. */
enum api_auth api_users_check(struct api_users *u, const char *name, const char *pass, bool verify);

#endif
