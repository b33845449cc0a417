/* smi_forge: what a tenant with root on one host can send an SM: SMInfo Gets and Sets of its
 * own making, LID-routed from its port (the sim transport; SIM_HOST picks the host).
 *   smi_forge get LID                      prints "status S key K state N guid G"
 *   smi_forge set LID MOD GUID STATE KEY   prints "status S" (or "timeout")
 * MOD: 1 HANDOVER, 2 ACKNOWLEDGE, 3 DISABLE, 4 STANDBY, 5 DISCOVER; GUID, STATE and KEY go in
 * the SMInfo payload, as an SM naming itself would put them. Used by sm_stranger.sh. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/dispatcher.h"
#include "mad/mad_header.h"
#include "mad/smp_attrs.h"

struct answer {
	bool done;
	int error;
	struct mad_smp smp;
};

static void on_done(struct mad_dispatcher *d, const struct mad_result *r, void *ctx)
{
	(void)d;
	struct answer *a = ctx;
	a->done = true;
	a->error = r->error;
	if (!r->error && r->mad && mad_smp_decode(r->mad, r->len, &a->smp, NULL) < 0)
		a->error = -1;
}

int main(int argc, char **argv)
{
	bool set = argc == 7 && !strcmp(argv[1], "set");
	if (!set && !(argc == 3 && !strcmp(argv[1], "get"))) {
		fprintf(stderr, "usage: smi_forge get LID | set LID MOD GUID STATE KEY\n");
		return 2;
	}
	struct log lg;
	log_init(&lg);
	lg.level = LOGL_ERR;
	struct mad_transport_opts to = {.log = &lg};
	struct mad_transport *t;
	char err[256];
	if (mad_transport_open("sim", &to, &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "smi_forge: %s\n", err);
		return 3;
	}
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct mad_dispatcher_opts o = {.log = &lg};
	struct mad_dispatcher *d = mad_dispatcher_new(loop, t, &o);
	struct mad_smp smp;
	uint32_t mod = set ? (uint32_t)strtoul(argv[3], NULL, 0) : 0;
	mad_smp_init_lid(&smp, set ? MAD_METHOD_SET : MAD_METHOD_GET, MAD_ATTR_SM_INFO, mod);
	if (set) {
		struct mad_sm_info si = {.guid = strtoull(argv[4], NULL, 0),
		                         .state = (uint8_t)strtoul(argv[5], NULL, 0),
		                         .sm_key = strtoull(argv[6], NULL, 0),
		                         .priority = 15};
		mad_sm_info_encode(&si, smp.data, sizeof(smp.data), NULL);
	}
	uint8_t m[MAD_SIZE] = {0};
	mad_smp_encode(&smp, m, sizeof(m), NULL);
	struct answer a = {0};
	struct mad_request rq = {.to = {.lid = (uint16_t)strtoul(argv[2], NULL, 0), .qpn = 0},
	                         .mad = m,
	                         .len = MAD_SIZE,
	                         .timeout_ms = 500,
	                         .retries = 2,
	                         .cb = on_done,
	                         .ctx = &a};
	int rc = 0;
	if (mad_dispatcher_send(d, &rq) < 0) {
		fprintf(stderr, "smi_forge: the request could not be sent\n");
		rc = 3;
	} else {
		while (!a.done)
			ev_run(loop, EVRUN_ONCE);
		if (a.error) {
			printf("timeout\n");
			rc = 1;
		} else {
			struct mad_sm_info si = {0};
			mad_sm_info_decode(a.smp.data, sizeof(a.smp.data), &si, NULL);
			printf("status 0x%04x key 0x%016" PRIx64 " state %u guid 0x%016" PRIx64
			       "\n",
			       a.smp.hdr.status, si.sm_key, si.state, si.guid);
		}
	}
	mad_dispatcher_free(d);
	ev_loop_destroy(loop);
	mad_transport_close(t);
	return rc;
}
