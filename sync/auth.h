/* Authentication of the standby sync (sync/sync.c): each request and each answer carries a
 * MAC that only an SM holding the subnet's sync key can make. The key never crosses the
 * wire: it is derived from m_key_secret's contents when that is set (a file every SM of the
 * subnet holds), else from the sm_key.
 *
 * A request's MAC covers its fields, the requester's port GUID (in the request) and the
 * master's port GUID it is meant for; a fresh random nonce in each request makes the
 * answer's MAC, which covers the nonce, the standby's GUID, the answer's header and its
 * text, good for that one request only: an old answer replayed, or one from elsewhere, is
 * refused. */
#ifndef IBSMD_SYNC_AUTH_H
#define IBSMD_SYNC_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

#define SYNC_KEY_BYTES 32

struct sync_auth {
	uint8_t key[SYNC_KEY_BYTES];
	bool from_secret; /* keyed by m_key_secret (else by the sm_key) */
};

/* -1: libsodium does not initialize. */
int sync_auth_init(struct sync_auth *a, const struct ibsmd_config *c);
void sync_auth_wipe(struct sync_auth *a);

/* A request's data area (MAD_SYNC_DATA_SIZE bytes, the fields encoded, nonce in place):
 * write its MAC for the master at port GUID `master`, or check it. */
void sync_auth_sign_req(const struct sync_auth *a, uint64_t master, uint8_t *data);
bool sync_auth_check_req(const struct sync_auth *a, uint64_t master, const uint8_t *data);

/* An answer's body (the response header, MAD_SYNC_RESP_SIZE bytes, then `len` bytes of text
 * in all): its MAC for the standby at port GUID `standby` that sent `nonce`. */
void sync_auth_sign_resp(const struct sync_auth *a, uint64_t standby, const uint8_t *nonce,
                         uint8_t *body, size_t len);
bool sync_auth_check_resp(const struct sync_auth *a, uint64_t standby, const uint8_t *nonce,
                          const uint8_t *body, size_t len);

#endif
