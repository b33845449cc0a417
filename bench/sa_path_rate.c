/* sa_path_rate: how many PathRecord queries an SA answers per second. From the local port,
 * sends COUNT SubnAdmGet(PathRecord) by SLID (the local LID) and DLID, the DLIDs taken in turn
 * from the list given, WINDOW in flight, through ibsmd's sim transport and dispatcher, and
 * prints "ANSWERS SECONDS RATE". Any SA will do: ibsmd's, or OpenSM's under libumad2sim.so.
 * Usage: sa_path_rate [-n COUNT] [-w WINDOW] DLID... */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/dispatcher.h"
#include "mad/mad_header.h"
#include "mad/sa_records.h"

struct run {
	unsigned done, failed;
};

static void on_done(struct mad_dispatcher *d, const struct mad_result *r, void *ctx)
{
	(void)d;
	struct run *run = ctx;
	run->done++;
	if (r->error || r->status)
		run->failed++;
}

int main(int argc, char **argv)
{
	unsigned count = 100000, window = 64;
	int o;
	while ((o = getopt(argc, argv, "n:w:")) != -1) {
		switch (o) {
		case 'n': count = (unsigned)atoi(optarg); break;
		case 'w': window = (unsigned)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: sa_path_rate [-n COUNT] [-w WINDOW] DLID...\n");
			return 2;
		}
	}
	unsigned ndl = (unsigned)(argc - optind);
	if (!ndl) {
		fprintf(stderr, "sa_path_rate: name at least one destination LID\n");
		return 2;
	}
	uint16_t *dlids = calloc(ndl, sizeof(*dlids));
	for (unsigned i = 0; i < ndl; i++)
		dlids[i] = (uint16_t)strtoul(argv[optind + (int)i], NULL, 0);
	struct log lg;
	log_init(&lg);
	lg.level = LOGL_WARN;
	struct mad_transport_opts to = {.log = &lg};
	struct mad_transport *t;
	char err[256];
	if (mad_transport_open("sim", &to, &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "sa_path_rate: %s\n", err);
		return 1;
	}
	struct mad_local_port lp;
	t->ops->query_port(t, &lp);
	if (!lp.sm_lid || !lp.lid) {
		fprintf(stderr, "sa_path_rate: the local port has no LID or knows no SM\n");
		return 1;
	}
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct mad_dispatcher_opts dopts = {
	    .window = window, .window_per_dest = window, .timeout_ms = 2000, .log = &lg};
	struct mad_dispatcher *d = mad_dispatcher_new(loop, t, &dopts);
	/* one request per destination, built once */
	uint8_t *mads = calloc(ndl, MAD_SIZE);
	for (unsigned i = 0; i < ndl; i++) {
		struct mad_sa_hdr h;
		mad_sa_hdr_init(&h, MAD_METHOD_GET, MAD_ATTR_PATH_RECORD,
		                PR_COMP_SLID | PR_COMP_DLID);
		uint8_t *m = mads + (size_t)i * MAD_SIZE;
		mad_sa_hdr_encode(&h, m, MAD_SIZE, NULL);
		struct mad_path_record pr = {.slid = lp.lid, .dlid = dlids[i]};
		mad_path_record_encode(&pr, m + MAD_SA_HDR_END, MAD_SIZE - MAD_SA_HDR_END, NULL);
	}
	struct run run = {0};
	ev_tstamp start = ev_time();
	for (unsigned i = 0; i < count; i++) {
		struct mad_request rq = {.to = {.lid = lp.sm_lid, .qpn = 1, .qkey = QP1_QKEY},
		                         .mad = mads + (size_t)(i % ndl) * MAD_SIZE,
		                         .len = MAD_SIZE,
		                         .retries = -1,
		                         .cb = on_done,
		                         .ctx = &run};
		mad_dispatcher_send(d, &rq);
	}
	while (run.done < count)
		ev_run(loop, EVRUN_ONCE);
	double secs = ev_time() - start;
	printf("%u %.3f %.0f\n", count - run.failed, secs, (count - run.failed) / secs);
	if (run.failed)
		fprintf(stderr, "sa_path_rate: %u of %u failed\n", run.failed, count);
	mad_dispatcher_free(d);
	ev_loop_destroy(loop);
	mad_transport_close(t);
	free(mads);
	free(dlids);
	return run.failed ? 1 : 0;
}
