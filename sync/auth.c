/* The sync's MACs (sync/auth.h): keyed BLAKE2b (libsodium's generic hash) over a label, the
 * GUIDs the message goes between and its bytes with the MAC's own place zeroed. */
#include "sync/auth.h"

#include <string.h>

#include <sodium.h>

#include "mad/sync_msg.h"

int sync_auth_init(struct sync_auth *a, const struct ibsmd_config *c)
{
	if (sodium_init() < 0)
		return -1;
	static const char label[] = "ibsmd standby sync key v1";
	crypto_generichash_state h;
	crypto_generichash_init(&h, NULL, 0, sizeof(a->key));
	crypto_generichash_update(&h, (const uint8_t *)label, sizeof(label) - 1);
	a->from_secret = c->has_m_key_secret;
	if (c->has_m_key_secret) {
		crypto_generichash_update(&h, c->m_key_secret_key, sizeof(c->m_key_secret_key));
	} else {
		uint8_t k[8];
		for (int i = 0; i < 8; i++)
			k[i] = (uint8_t)(c->sm_key >> (56 - 8 * i));
		crypto_generichash_update(&h, k, sizeof(k));
	}
	crypto_generichash_final(&h, a->key, sizeof(a->key));
	return 0;
}

void sync_auth_wipe(struct sync_auth *a)
{
	sodium_memzero(a->key, sizeof(a->key));
}

static void put_guid(crypto_generichash_state *h, uint64_t g)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(g >> (56 - 8 * i));
	crypto_generichash_update(h, b, sizeof(b));
}

/* MAC of `len` bytes whose bytes [mac_at, mac_at + MAD_SYNC_MAC_BYTES) count as zero */
static void mac(const struct sync_auth *a, const char *label, uint64_t g1, const uint8_t *nonce,
                const uint8_t *p, size_t len, size_t mac_at, uint8_t out[MAD_SYNC_MAC_BYTES])
{
	static const uint8_t zero[MAD_SYNC_MAC_BYTES];
	crypto_generichash_state h;
	crypto_generichash_init(&h, a->key, sizeof(a->key), MAD_SYNC_MAC_BYTES);
	crypto_generichash_update(&h, (const uint8_t *)label, strlen(label) + 1);
	put_guid(&h, g1);
	if (nonce)
		crypto_generichash_update(&h, nonce, MAD_SYNC_NONCE_BYTES);
	crypto_generichash_update(&h, p, mac_at);
	crypto_generichash_update(&h, zero, sizeof(zero));
	crypto_generichash_update(&h, p + mac_at + MAD_SYNC_MAC_BYTES,
	                          len - mac_at - MAD_SYNC_MAC_BYTES);
	crypto_generichash_final(&h, out, MAD_SYNC_MAC_BYTES);
}

void sync_auth_sign_req(const struct sync_auth *a, uint64_t master, uint8_t *data)
{
	mac(a, "request", master, NULL, data, MAD_SYNC_DATA_SIZE, MAD_SYNC_REQ_MAC_AT,
	    data + MAD_SYNC_REQ_MAC_AT);
}

bool sync_auth_check_req(const struct sync_auth *a, uint64_t master, const uint8_t *data)
{
	uint8_t want[MAD_SYNC_MAC_BYTES];
	mac(a, "request", master, NULL, data, MAD_SYNC_DATA_SIZE, MAD_SYNC_REQ_MAC_AT, want);
	return sodium_memcmp(want, data + MAD_SYNC_REQ_MAC_AT, sizeof(want)) == 0;
}

void sync_auth_sign_resp(const struct sync_auth *a, uint64_t standby, const uint8_t *nonce,
                         uint8_t *body, size_t len)
{
	mac(a, "answer", standby, nonce, body, len, MAD_SYNC_RESP_MAC_AT,
	    body + MAD_SYNC_RESP_MAC_AT);
}

bool sync_auth_check_resp(const struct sync_auth *a, uint64_t standby, const uint8_t *nonce,
                          const uint8_t *body, size_t len)
{
	if (len < MAD_SYNC_RESP_SIZE)
		return false;
	uint8_t want[MAD_SYNC_MAC_BYTES];
	mac(a, "answer", standby, nonce, body, len, MAD_SYNC_RESP_MAC_AT, want);
	return sodium_memcmp(want, body + MAD_SYNC_RESP_MAC_AT, sizeof(want)) == 0;
}
