/* Fuzz target: the SA's handling of requests, end to end (the sa/ layer through the MAD
 * dispatcher and RMPP), on a small hand-built fabric with two tenants, as a client on the
 * wire would reach it. Input:
 *   byte 0: the requester: a port of the fabric (0-8: its LID), else a LID it does not know;
 *   byte 1: bit 0, the request carries the SM_Key (trusted);
 *   then MADs of 256 bytes (the last may be short), delivered in order to the SA, so that a
 *   registration can be followed by a query, and RMPP segments by the next.
 * Every input gets a fresh SM, SA and event loop: nothing carries over. Nothing here may
 * crash, leak, hang or read past a MAD, whatever the bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "../unit/fake_transport.h"
#include "../unit/topo_fixture.h"
#include "mad/dispatcher.h"
#include "mad/mad_header.h"
#include "routing/engine.h"
#include "sa/sa.h"

#define SM_KEY 0x5ec1e7ull
enum { SM_HOST = 3, NNODES = 9 };

static void partition(struct ibsmd_config *cfg, const char *name, uint16_t pkey, bool all,
                      uint32_t a, uint32_t b)
{
	struct config_partition *p = config_partition_add(cfg);
	if (!p)
		abort();
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pkey = pkey;
	if (all)
		config_partition_member(p, CM_ALL, 0, CM_LIMITED);
	if (a)
		config_partition_member(p, CM_GUID, 0x1000 + (uint64_t)a * 2 + 1, CM_FULL);
	if (b)
		config_partition_member(p, CM_GUID, 0x1000 + (uint64_t)b * 2 + 1, CM_FULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3 || size > 64 * MAD_SIZE)
		return 0;
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct fake_transport *fc = fake_transport_new(), *fs = fake_transport_new();
	fake_link(fc, fs);
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	cfg.state_dir[0] = 0; /* nothing written */
	cfg.sm_key = SM_KEY;
	partition(&cfg, "Default", 0x7fff, true, 0, 0);
	config_partition_member(&cfg.partitions[0], CM_ALL_SWITCHES, 0, CM_FULL);
	partition(&cfg, "A", 0x0a, false, 4, 6);
	partition(&cfg, "B", 0x0b, false, 5, 7);
	struct log lg;
	log_init(&lg);
	lg.level = (enum log_level)0; /* quiet: what the wire does wrong is logged */
	struct sm *sm = sm_new(&cfg, &lg, loop, &fs->base, false);
	struct topo *t = sm_fabric(sm);
	fix_fattree(t, 2, 1, 3);
	fix_finish(t, SM_HOST, &cfg);
	struct routing_ctx rc;
	if (routing_ctx_build(&rc, t, &cfg, NULL) == 0) {
		routing_minhop.unicast(&rc, NULL);
		routing_ctx_free(&rc);
	}
	fs->lid = t->ports[topo_port(t, SM_HOST, 1)].lid;
	struct sa *sa = sa_new(sm);
	sa_sweep_done(sa); /* past the first sweep: services, groups and subscriptions are open */

	uint32_t who = data[0];
	if (who < NNODES) {
		const struct topo_node *n = &t->nodes[who];
		fc->lid = t->ports[n->first_port + (topo_is_switch(t, who) ? 0 : 1)].lid;
	} else {
		fc->lid = 999;
	}
	bool trusted = data[1] & 1;
	for (size_t at = 2; at < size; at += MAD_SIZE) {
		size_t len = size - at < MAD_SIZE ? size - at : MAD_SIZE;
		uint8_t mad[MAD_SIZE];
		memcpy(mad, data + at, len);
		if (trusted && len >= MAD_SA_HDR_END)
			mad_bits_set(mad, 36 * 8, 64, SM_KEY); /* SA header: SM_Key at byte 36 */
		struct mad_addr from = {.lid = fc->lid, .qpn = 1, .qkey = QP1_QKEY};
		fake_deliver(fs, &from, mad, len, 0);
		for (int i = 0; i < 4; i++)
			ev_run(loop, EVRUN_NOWAIT);
	}
	/* tables built a slice at a time: a few more turns */
	for (int i = 0; i < 16; i++)
		ev_run(loop, EVRUN_NOWAIT);
	sm_stop(sm);
	sa_free(sa);
	sm_free(sm);
	mad_transport_close(&fc->base);
	mad_transport_close(&fs->base);
	config_free(&cfg);
	ev_loop_destroy(loop);
	return 0;
}
