/* Fuzz target: the standby sync's wire input (mad/sync_msg.c codecs, sync/journal.c).
 * The first byte picks the side:
 *   0: a standby takes a master's answer (response header + payload) into a copy that
 *      already holds a full copy of a small master (epoch 0x1b5d, generation 2);
 *   1: a master answers a standby's request from that small master's journal;
 *   2: the MACs (sync/auth.h): a request or an answer off the wire with a MAC nobody made
 *      must fail the check, and the same bytes with the MAC made for them must pass;
 *   3: the lines a standby applies and the state directory holds (sm/saved.h's parsers):
 *      a pmember or apartition line taken must have what its parser promises.
 * Nothing here may crash, leak or read past the input, whatever the bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mad/link_speed.h"
#include "mad/sync_msg.h"
#include "sm/saved.h"
#include "sync/auth.h"
#include "sync/journal.h"
#include "sync_small_master.h"

static void on_line(void *ctx, char op, const char *line)
{
	size_t *n = ctx;
	*n += (op == '+' || op == '-') && line != NULL;
}

static int small_master(struct sync_journal *j)
{
	sync_journal_init(j, SMALL_MASTER_EPOCH, 16);
	if (sync_journal_update(j, small_master_gen1, sizeof(small_master_gen1) - 1) < 0 ||
	    sync_journal_update(j, small_master_gen2, sizeof(small_master_gen2) - 1) < 0)
		return -1;
	return 0;
}

static void standby_side(const uint8_t *data, size_t size)
{
	struct sync_journal j;
	struct sync_mirror m = {0};
	if (small_master(&j) < 0)
		goto out;
	/* the copy the standby holds: a full copy of generation 2 */
	struct mad_sync_req rq = {0};
	struct mad_sync_resp full;
	char *payload = NULL;
	size_t len = 0;
	if (sync_journal_answer(&j, &rq, &full, &payload, &len) < 0)
		goto out;
	sync_mirror_apply(&m, &full, payload, len, NULL, NULL);
	free(payload);

	/* the answer off the wire, checked as sync.c checks it */
	struct mad_sync_resp r;
	if (size < MAD_SYNC_RESP_SIZE || mad_sync_resp_decode(data, size, &r, NULL) < 0 ||
	    r.payload_len > size - MAD_SYNC_RESP_SIZE)
		goto out;
	size_t changed = 0;
	sync_mirror_apply(&m, &r, (const char *)data + MAD_SYNC_RESP_SIZE, r.payload_len, on_line,
	                  &changed);
out:
	sync_mirror_free(&m);
	sync_journal_free(&j);
}

static void master_side(const uint8_t *data, size_t size)
{
	uint8_t buf[MAD_SYNC_DATA_SIZE] = {0};
	memcpy(buf, data, size < sizeof(buf) ? size : sizeof(buf));
	struct mad_sync_req rq;
	if (mad_sync_req_decode(buf, sizeof(buf), &rq, NULL) < 0)
		return;
	struct sync_journal j;
	if (small_master(&j) == 0) {
		struct mad_sync_resp resp;
		char *payload = NULL;
		size_t len = 0;
		if (sync_journal_answer(&j, &rq, &resp, &payload, &len) == 0)
			free(payload);
	}
	sync_journal_free(&j);
}

static void macs(const uint8_t *data, size_t size)
{
	static struct sync_auth a;
	static bool ready;
	if (!ready) {
		struct ibsmd_config c;
		config_defaults(&c);
		c.sm_key = 0x5ec1e7;
		if (sync_auth_init(&a, &c) < 0)
			abort();
		config_free(&c);
		ready = true;
	}
	uint8_t req[MAD_SYNC_DATA_SIZE] = {0};
	memcpy(req, data, size < sizeof(req) ? size : sizeof(req));
	if (sync_auth_check_req(&a, 0x100001, req))
		abort(); /* a MAC out of nowhere */
	sync_auth_sign_req(&a, 0x100001, req);
	if (!sync_auth_check_req(&a, 0x100001, req) || sync_auth_check_req(&a, 0x100002, req))
		abort();
	if (size < MAD_SYNC_NONCE_BYTES)
		return;
	const uint8_t *nonce = data;
	uint8_t *body = malloc(size + MAD_SYNC_RESP_SIZE);
	if (!body)
		return;
	memset(body, 0, size + MAD_SYNC_RESP_SIZE);
	memcpy(body, data, size);
	size_t len = size < MAD_SYNC_RESP_SIZE ? MAD_SYNC_RESP_SIZE : size;
	if (sync_auth_check_resp(&a, 0x100003, nonce, body, len))
		abort();
	sync_auth_sign_resp(&a, 0x100003, nonce, body, len);
	if (!sync_auth_check_resp(&a, 0x100003, nonce, body, len))
		abort();
	free(body);
}

static void saved_lines(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = 0;
	for (char *line = text, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		struct sm_saved_pmember m;
		if (sm_saved_parse_pmember(line, &m) && (!m.pkey || m.pkey >= 0x7fff || !m.guid ||
		                                         strlen(m.client) >= sizeof(m.client)))
			abort();
		struct sm_saved_partition r;
		if (sm_saved_parse_partition(line, &r) &&
		    (!r.pkey || r.pkey >= 0x7fff || r.mtu > 5 ||
		     (r.rate && !mad_rate_mbps(r.rate)) || r.sl > SM_SAVED_NO_SL ||
		     !sm_saved_name_ok(r.name) || strlen(r.client) >= sizeof(r.client)))
			abort();
		uint64_t g, k;
		uint16_t lid;
		uint8_t port;
		(void)sm_saved_parse_lid(line, &g, &lid);
		(void)sm_saved_parse_mkey(line, &g, &k);
		(void)sm_saved_parse_hop(line, &g, &port, &k);
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] == 0)
		standby_side(data + 1, size - 1);
	else if (data[0] == 1)
		master_side(data + 1, size - 1);
	else if (data[0] == 2)
		macs(data + 1, size - 1);
	else if (data[0] == 3)
		saved_lines(data + 1, size - 1);
	return 0;
}
