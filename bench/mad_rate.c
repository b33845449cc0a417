/* mad_rate: how many SMPs a simulator answers per second. Sends COUNT directed-route NodeInfo
 * Gets along the given routes (round robin), WINDOW in flight, through ibsmd's own sim
 * transport and dispatcher, and prints "MADS SECONDS RATE". Runs against any server of the
 * ibsim protocol (Debian's ibsim, fabricsim). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/dispatcher.h"
#include "mad/mad_header.h"

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
	const char *routes[16] = {"0"};
	unsigned nroutes = 0;
	int o;
	while ((o = getopt(argc, argv, "n:w:r:")) != -1) {
		switch (o) {
		case 'n': count = (unsigned)atoi(optarg); break;
		case 'w': window = (unsigned)atoi(optarg); break;
		case 'r':
			if (nroutes < 16)
				routes[nroutes++] = optarg;
			break;
		default:
			fprintf(stderr, "usage: mad_rate [-n COUNT] [-w WINDOW] [-r ROUTE]...\n");
			return 2;
		}
	}
	if (!nroutes)
		nroutes = 1;
	struct log lg;
	log_init(&lg);
	lg.level = LOGL_WARN;
	struct mad_transport_opts to = {.log = &lg};
	struct mad_transport *t;
	char err[256];
	if (mad_transport_open("sim", &to, &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "mad_rate: %s\n", err);
		return 1;
	}
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct mad_dispatcher_opts dopts = {
	    .window = window, .window_per_dest = window, .timeout_ms = 1000, .log = &lg};
	struct mad_dispatcher *d = mad_dispatcher_new(loop, t, &dopts);
	uint8_t mads[16][MAD_SIZE];
	for (unsigned i = 0; i < nroutes; i++) {
		uint8_t path[64];
		struct mad_smp smp;
		struct mad_error e;
		int hops = mad_dr_path_parse(routes[i], path, &e);
		if (hops < 0 || mad_smp_init_dr(&smp, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0, path,
		                                (unsigned)hops, &e) < 0) {
			fprintf(stderr, "mad_rate: %s\n", e.msg);
			return 2;
		}
		memset(mads[i], 0, MAD_SIZE);
		mad_smp_encode(&smp, mads[i], MAD_SIZE, NULL);
	}
	struct run run = {0};
	ev_tstamp start = ev_time();
	for (unsigned i = 0; i < count; i++) {
		struct mad_request rq = {.to = {.lid = LID_PERMISSIVE},
		                         .mad = mads[i % nroutes],
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
		fprintf(stderr, "mad_rate: %u of %u failed\n", run.failed, count);
	mad_dispatcher_free(d);
	ev_loop_destroy(loop);
	mad_transport_close(t);
	return run.failed ? 1 : 0;
}
