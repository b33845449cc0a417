/* Fuzz target: the SM's handling of SMP answers during discovery and programming, from a
 * fabric that lies. The SM runs on the fake transport over fabricsim's model of a small fat
 * tree (as test_sm_phases does); each answer the model's SMAs give is passed through the
 * input first. For every answer, one control byte c:
 *   c & 0x80: the answer is lost;
 *   c & 0x40: the next two bytes (offset, value) XOR one byte of it: a header field, the
 *             DR path, or the attribute (NodeInfo's port count, a GUID made a duplicate,
 *             a port state, a LID, a PortInfo Set echoed changed, ...);
 *   otherwise it passes as the SMA gave it.
 * When the input runs out the fabric stops lying, and the sweep runs to its end (or a
 * bounded number of turns). What input is left after the sweep is SMInfo requests to the SM
 * from strangers (see strangers()). Nothing may crash, leak or hang, whatever the bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "../unit/fake_transport.h"
#include "agents.h"
#include "mad/mad_header.h"
#include "sm/sm.h"
#include "topology.h"

struct run {
	struct fabric f;
	uint32_t sm_port;
	struct fake_transport *ft;
	const uint8_t *in;
	size_t left;
};

static int next_byte(struct run *r)
{
	if (!r->left)
		return -1;
	r->left--;
	return *r->in++;
}

static void on_send(struct fake_transport *ft, const struct mad_addr *to, const uint8_t *mad,
                    size_t len, void *ctx)
{
	(void)ft;
	struct run *r = ctx;
	if (len != MAD_SIZE || (mad[3] & 0x80))
		return; /* the SM's own answers (SMInfo) go nowhere here */
	uint8_t m[MAD_SIZE];
	memcpy(m, mad, len);
	uint8_t cls = m[1];
	if (cls != MAD_CLASS_SUBN_DR && cls != MAD_CLASS_SUBN_LID)
		return;
	struct mad_addr a = {.qpn = 0};
	if (!sma_exchange(&r->f, r->sm_port, to->lid, m, &a.lid))
		return;
	int c = next_byte(r);
	if (c >= 0 && (c & 0x80))
		return;
	if (c >= 0 && (c & 0x40)) {
		int off = next_byte(r), val = next_byte(r);
		if (off >= 0 && val >= 0)
			m[off] ^= (uint8_t)val;
	}
	fake_deliver(r->ft, &a, m, MAD_SIZE, 0);
}

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
}

/* SMInfo Gets and Sets from a host that is no SM of the subnet, one per 32 input bytes:
 * method, modifier, LID-routed or directed route (with a hop count and a return path the
 * sender makes up), source LID, M_Key and the SMInfo payload (GUID, SM_Key, state) all
 * from the input. The SM must answer or drop each, and act on none it cannot trust. */
static void strangers(struct run *r, struct ev_loop *loop)
{
	while (r->left >= 32) {
		const uint8_t *b = r->in;
		r->in += 32;
		r->left -= 32;
		struct mad_smp smp;
		uint8_t method = b[0] & 1 ? MAD_METHOD_SET : MAD_METHOD_GET;
		uint32_t mod = b[1] & 7;
		if (b[0] & 2) {
			uint8_t path[64] = {0};
			unsigned hops = b[2] & 7;
			for (unsigned h = 1; h <= hops; h++)
				path[h] = b[3 + h] & 7;
			if (mad_smp_init_dr(&smp, method, MAD_ATTR_SM_INFO, mod, path, hops, NULL) <
			    0)
				continue;
			for (unsigned h = 1; h <= hops; h++)
				smp.return_path[h] =
				    b[11 + h] & 7; /* as if switches had filled it */
			smp.hop_ptr = (uint8_t)hops;
			if (b[0] & 4)
				smp.dr_slid = b[3];
		} else {
			mad_smp_init_lid(&smp, method, MAD_ATTR_SM_INFO, mod);
		}
		uint64_t g = 0, k = 0;
		for (int i = 0; i < 4; i++) {
			g = g << 8 | b[20 + i];
			k = k << 8 | b[24 + i];
		}
		struct mad_sm_info si = {.guid = g & 0x1000ff ? (g & 0xff) | 0x100000 : g,
		                         .sm_key = b[0] & 8 ? 1 : k,
		                         .state = b[28] & 3,
		                         .priority = b[29] & 15};
		mad_sm_info_encode(&si, smp.data, sizeof(smp.data), NULL);
		smp.mkey = b[30];
		uint8_t m[MAD_SIZE] = {0};
		mad_smp_encode(&smp, m, sizeof(m), NULL);
		struct mad_addr from = {.lid = b[0] & 2 ? 0xffff : b[31], .qpn = 0};
		fake_deliver(r->ft, &from, m, MAD_SIZE, 0);
		for (int i = 0; i < 4; i++)
			ev_run(loop, EVRUN_NOWAIT);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	struct run r = {.in = data, .left = size};
	fabric_init(&r.f);
	struct fs_error err;
	/* hosts with SR-IOV virtual ports, two VFs each on two of them (one asking for a LID):
	 * the vport attributes' answers are lied about too */
	if (generate(&r.f, "fattree:radix=4,levels=2,vports=4", &err) < 0)
		abort();
	r.sm_port = fabric_port(&r.f, fabric_find_node(&r.f, "host-1"), 1);
	char why[128];
	for (unsigned h = 2; h <= 3; h++) {
		char name[16];
		snprintf(name, sizeof(name), "host-%u", h);
		uint32_t p = fabric_port(&r.f, fabric_find_node(&r.f, name), 1);
		if (fabric_vport_add(&r.f, p, 1, 0, true, why, sizeof(why)) < 0 ||
		    fabric_vport_add(&r.f, p, 2, 0, false, why, sizeof(why)) < 0)
			abort();
	}
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	r.ft = fake_transport_new();
	r.ft->on_send = on_send;
	r.ft->ctx = &r;
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	cfg.mad_timeout_ms = 1; /* lost answers cost a millisecond, not the default 200 */
	cfg.mad_retries = 1;
	cfg.sweep_interval_s = 0;
	/* the SM saves its LIDs and keys: in a directory of its own, emptied for each input
	 * so that no run inherits another's LIDs */
	static char dir[64];
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_smp_answers.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	static const char *const files[] = {"guid2lid", "mkeys", "sa-state"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[128];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s", dir);
	struct log lg;
	log_init(&lg);
	lg.level = getenv("FUZZ_LOG")
	               ? LOGL_INFO
	               : (enum log_level)0; /* quiet: a lying fabric is logged at every turn */
	struct sm *sm = sm_new(&cfg, &lg, loop, &r.ft->base, true);
	if (sm && sm_start(sm) == 0) {
		/* --once: until the sweep (and its retries) end, or 2 s; a tick keeps the loop
		 * from sleeping on a far timer */
		ev_timer tick;
		ev_timer_init(&tick, tick_cb, 0.005, 0.005);
		ev_timer_start(loop, &tick);
		ev_tstamp end = ev_time() + 2.0;
		struct sm_status st;
		do {
			ev_run(loop, EVRUN_ONCE);
			st = sm_status(sm);
		} while ((st.sweeping || !st.sweeps) && ev_time() < end);
		ev_timer_stop(loop, &tick);
		strangers(&r, loop);
		sm_stop(sm);
	}
	sm_free(sm);
	mad_transport_close(&r.ft->base);
	config_free(&cfg);
	fabric_free(&r.f);
	ev_loop_destroy(loop);
	return 0;
}
