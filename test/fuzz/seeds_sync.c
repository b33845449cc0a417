/* Writes fuzz_sync's seed corpus into a directory: real answers of the small master the
 * target holds (full copy, delta, current, not ready) and requests a standby sends, made by
 * the journal itself so that the checksums are right and the fuzzer starts from inputs that
 * reach every branch. Usage: seeds_sync DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sync_msg.h"
#include "sync/journal.h"
#include "sync_small_master.h"

static int put(const char *dir, const char *name, uint8_t side, const uint8_t *a, size_t alen,
               const char *b, size_t blen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		return -1;
	}
	fputc(side, f);
	fwrite(a, 1, alen, f);
	if (b && blen)
		fwrite(b, 1, blen, f);
	return fclose(f);
}

static int answer(const char *dir, const char *name, struct sync_journal *j,
                  const struct mad_sync_req *rq)
{
	struct mad_sync_resp r;
	char *payload = NULL;
	size_t len = 0;
	if (sync_journal_answer(j, rq, &r, &payload, &len) < 0)
		return -1;
	uint8_t hdr[MAD_SYNC_RESP_SIZE] = {0};
	mad_sync_resp_encode(&r, hdr, sizeof(hdr), NULL);
	int rc = put(dir, name, 0, hdr, sizeof(hdr), payload, len);
	free(payload);
	return rc;
}

static int request(const char *dir, const char *name, const struct mad_sync_req *rq)
{
	uint8_t buf[MAD_SYNC_DATA_SIZE] = {0};
	mad_sync_req_encode(rq, buf, sizeof(buf), NULL);
	return put(dir, name, 1, buf, sizeof(buf), NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	struct sync_journal j;
	sync_journal_init(&j, SMALL_MASTER_EPOCH, 16);
	if (sync_journal_update(&j, small_master_gen1, sizeof(small_master_gen1) - 1) < 0)
		return 1;
	uint64_t sum1 = j.cur.sum;
	uint32_t count1 = lineset_count(&j.cur);
	if (sync_journal_update(&j, small_master_gen2, sizeof(small_master_gen2) - 1) < 0)
		return 1;
	struct mad_sync_req none = {0};
	struct mad_sync_req at1 = {
	    .epoch = SMALL_MASTER_EPOCH, .generation = 1, .checksum = sum1, .count = count1};
	struct mad_sync_req at2 = {.epoch = SMALL_MASTER_EPOCH,
	                           .generation = 2,
	                           .checksum = j.cur.sum,
	                           .count = lineset_count(&j.cur)};
	struct mad_sync_req other = {.epoch = 7, .generation = 9, .checksum = 1, .count = 1};
	int rc = 0;
	rc |= answer(dir, "answer-full", &j, &none);
	rc |= answer(dir, "answer-current", &j, &at2);
	rc |= answer(dir, "answer-full-other-epoch", &j, &other);
	/* a delta that fits the target's copy: from generation 2 to 3 */
	static const char gen3[] = "lid 0x0000000000100001 0x0001\nlid 0x0000000000100005 0x0003\n"
	                           "sub 0x0000000000100005 00\n";
	if (sync_journal_update(&j, gen3, sizeof(gen3) - 1) < 0)
		return 1;
	rc |= answer(dir, "answer-delta", &j, &at2);
	struct mad_sync_resp nr = {.kind = SYNC_NOT_READY, .epoch = SMALL_MASTER_EPOCH};
	uint8_t hdr[MAD_SYNC_RESP_SIZE] = {0};
	mad_sync_resp_encode(&nr, hdr, sizeof(hdr), NULL);
	rc |= put(dir, "answer-not-ready", 0, hdr, sizeof(hdr), NULL, 0);
	rc |= request(dir, "request-none", &none);
	rc |= request(dir, "request-at-1", &at1);
	rc |= request(dir, "request-at-2", &at2);
	rc |= request(dir, "request-other-epoch", &other);
	sync_journal_free(&j);
	return rc ? 1 : 0;
}
