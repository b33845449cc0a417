/* sa_path_inproc: PathRecords per second inside the SA, without the wire. Brings a subnet up
 * on the fabricsim named by IBSIM_SOCKNAME (the SM attached at SIM_HOST), as `ibsmd --once`
 * does, then asks the SA's path code for COUNT PathRecords by SLID and DLID over every pair of
 * endpoints in turn and prints "PATHS SECONDS RATE". The SA's internals are used directly:
 * this measures the answer, not the MADs.
 * Usage: sa_path_inproc [-n COUNT] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "mad/sa_records.h"
#include "sa/sa_int.h"

int main(int argc, char **argv)
{
	unsigned long count = 2000000;
	int o;
	while ((o = getopt(argc, argv, "n:")) != -1) {
		if (o != 'n') {
			fprintf(stderr, "usage: sa_path_inproc [-n COUNT]\n");
			return 2;
		}
		count = strtoul(optarg, NULL, 0);
	}
	struct log lg;
	log_init(&lg);
	lg.level = LOGL_WARN;
	static struct ibsmd_config cfg;
	config_defaults(&cfg);
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "/tmp/sa_path_inproc.%d", (int)getpid());
	struct mad_transport_opts to = {.log = &lg};
	struct mad_transport *t;
	char err[256];
	if (mad_transport_open("sim", &to, &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "sa_path_inproc: %s\n", err);
		return 1;
	}
	struct ev_loop *loop = ev_default_loop(EVFLAG_AUTO);
	struct sm *sm = sm_new(&cfg, &lg, loop, t, true);
	struct sa *sa = sm ? sa_new(sm) : NULL;
	if (!sa || sm_start(sm) < 0)
		return 1;
	ev_run(loop, 0);
	if (!sm_status(sm).up) {
		fprintf(stderr, "sa_path_inproc: the subnet did not come up\n");
		return 1;
	}
	/* every endpoint LID */
	const struct topo *tp = sm_fabric(sm);
	uint16_t *lids = malloc(sizeof(*lids) * tp->nports);
	unsigned n = 0;
	for (uint32_t p = 0; p < tp->nports; p++) {
		const struct topo_port *port = &tp->ports[p];
		if (tp->nodes[port->node].present && port->lid && !topo_is_switch(tp, port->node))
			lids[n++] = port->lid;
	}
	struct sa_records out = {.size = mad_path_record_layout.size,
	                         .stride = mad_sa_record_stride(&mad_path_record_layout)};
	uint8_t rec[MAD_SA_DATA_SIZE] = {0};
	unsigned long answered = 0;
	/* the SM's own tools' view: a trusted requester sees every path */
	struct sa_req rq = {
	    .sa = sa, .requester = TOPO_NONE, .requester_slot = TOPO_NONE, .trusted = true};
	ev_tstamp start = ev_time();
	for (unsigned long i = 0; i < count; i++) {
		struct mad_path_record pr = {.slid = lids[i % n],
		                             .dlid = lids[(i / n + 1 + i) % n]};
		mad_path_record_encode(&pr, rec, sizeof(rec), NULL);
		out.n = 0;
		if (!sa_paths(&rq, rec, PR_COMP_SLID | PR_COMP_DLID, false, NULL, &out) && out.n)
			answered++;
	}
	double secs = ev_time() - start;
	printf("%lu %.3f %.0f\n", answered, secs, answered / secs);
	sa_records_free(&out);
	free(lids);
	sm_stop(sm);
	sa_free(sa);
	sm_free(sm);
	mad_transport_close(t);
	config_free(&cfg);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", cfg.state_dir);
	return system(cmd) == 0 && answered == count ? 0 : 1;
}
