/* sa_mcast_inproc: the cost of creating multicast groups inside the SA, without the wire.
 * On a hand-built two-level tree (648 hosts), creates N groups by MCMemberRecord joins (the
 * SA picks each MGID and MLID), for N = COUNT/8, /4, /2 and COUNT, each time on a fresh SA,
 * and prints "GROUPS SECONDS MICROSECONDS_PER_GROUP": the time is linear in the number of
 * groups when the last column stays flat. The MFTs are not programmed (no loop runs): this
 * measures the SA's bookkeeping, which was O(n^3) with linear scans.
 * Usage: sa_mcast_inproc [-n COUNT]   (default 10000, at most 16383: the MLIDs) */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "../test/unit/fake_transport.h"
#include "../test/unit/topo_fixture.h"
#include "mad/sa_records.h"
#include "sa/sa_int.h"

static double create_groups(unsigned count)
{
	struct log lg;
	log_init(&lg);
	lg.level = LOGL_ERR;
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	cfg.state_dir[0] = 0;
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct fake_transport *ft = fake_transport_new();
	struct sm *sm = sm_new(&cfg, &lg, loop, &ft->base, false);
	struct topo *t = sm_fabric(sm);
	uint32_t first = fix_fattree(t, 36, 18, 18);
	fix_finish(t, first, &cfg);
	for (uint32_t p = 0; p < t->nports; p++) {
		t->ports[p].pi.mtu_cap = 4;           /* 2048 */
		t->ports[p].pi.link_width_active = 2; /* 4x */
		t->ports[p].pi.link_speed_active = 1; /* 2.5 Gb/s lanes: 10 Gb/s */
	}
	for (uint32_t s = 0; s < t->nsws; s++)
		t->sws[s].si.multicast_fdb_cap = 16384;
	struct sa *sa = sa_new(sm);
	sa_sweep_done(sa); /* past the first sweep, as a running SA is */
	uint32_t nhosts = t->nnodes - t->nsws;
	struct mad_sa_hdr h;
	mad_sa_hdr_init(&h, MAD_METHOD_SET, MAD_ATTR_MCMEMBER_RECORD,
	                MCM_COMP_MGID | MCM_COMP_PORT_GID | MCM_COMP_JOIN_STATE | MCM_COMP_QKEY |
	                    MCM_COMP_TCLASS | MCM_COMP_PKEY | MCM_COMP_FLOW_LABEL | MCM_COMP_SL);
	struct sa_records out = {.size = mad_mcmember_record_layout.size,
	                         .stride = mad_sa_record_stride(&mad_mcmember_record_layout)};
	uint8_t rec[MAD_SA_DATA_SIZE];
	unsigned made = 0;
	ev_tstamp start = ev_time();
	for (unsigned i = 0; i < count; i++) {
		uint32_t host = first + i % nhosts, port = topo_port(t, host, 1);
		struct sa_req rq = {.sa = sa, .requester = port, .requester_slot = port};
		struct mad_mcmember_record q = {.qkey = 0x1234, .pkey = 0xffff, .join_state = 1};
		mad_bits_set(q.port_gid, 0, 64, cfg.subnet_prefix);
		mad_bits_set(q.port_gid, 64, 64, t->ports[port].guid);
		memset(rec, 0, sizeof(rec));
		mad_mcmember_record_encode(&q, rec, sizeof(rec), NULL);
		out.n = 0;
		if (sa_mcast_request(&rq, &h, rec, &out) == 0 && out.n == 1)
			made++;
	}
	double secs = ev_time() - start;
	if (made != count) {
		fprintf(stderr, "sa_mcast_inproc: %u of %u groups created\n", made, count);
		exit(1);
	}
	sa_records_free(&out);
	sm_stop(sm);
	sa_free(sa);
	sm_free(sm);
	mad_transport_close(&ft->base);
	config_free(&cfg);
	ev_loop_destroy(loop);
	return secs;
}

int main(int argc, char **argv)
{
	unsigned long count = 10000;
	int o;
	while ((o = getopt(argc, argv, "n:")) != -1) {
		if (o != 'n') {
			fprintf(stderr, "usage: sa_mcast_inproc [-n COUNT]\n");
			return 2;
		}
		count = strtoul(optarg, NULL, 0);
	}
	if (count < 8 || count > 16383) {
		fprintf(stderr, "sa_mcast_inproc: COUNT from 8 to 16383\n");
		return 2;
	}
	for (unsigned div = 8; div >= 1; div /= 2) {
		unsigned n = (unsigned)(count / div);
		double secs = create_groups(n);
		printf("%u %.4f %.2f\n", n, secs, secs * 1e6 / n);
	}
	return 0;
}
