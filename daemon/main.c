/* ibsmd: the InfiniBand subnet manager daemon. main owns everything: it creates the SM, the
 * SA and the standby sync and wires the SA and the sync in as the SM's listeners; the SM knows
 * nothing of either. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "config/config.h"
#include "routing/engine.h"
#include "sa/sa.h"
#include "sync/sync.h"
#include "sm/sm.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: ibsmd [options]\n"
	        "  --transport umad|sim    how to reach the fabric (default umad)\n"
	        "  --ca NAME --port N      the local port by device and number (umad)\n"
	        "  --guid GUID             the local port by GUID (umad)\n"
	        "  --sim-node NAME         the simulated node to attach to (sim; or SIM_HOST)\n"
	        "  --config FILE           YAML configuration (see ibsmd(8))\n"
	        "  --once                  sweep, program, print a summary and exit: 0 when the\n"
	        "                          subnet is up, 1 with the reason otherwise\n"
	        "  --state-dir DIR         where LIDs are kept across restarts (/var/lib/ibsmd)\n"
	        "  --routing-engine LIST   engines in order of preference: %s\n"
	        "  --lmc N                 LIDs per port: 2^N (0-7)\n"
	        "  --sweep-interval S      light sweep period in seconds, 0: none (default 10)\n"
	        "  --priority N            SM priority 0-15 in the election among SMs (default 0)\n"
	        "  --log-level LEVEL       err, warn, notice (default), info, debug\n"
	        "  -v                      one log level more\n"
	        "  --journal               log to the systemd journal\n"
	        "  -h, --help              this help\n",
	        routing_names());
}

static void stop_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)revents;
	(void)w;
	ev_break(loop, EVBREAK_ALL);
}

static void hup_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sm *sm = w->data;
	log_notice(sm_log(sm), "sm", "SIGHUP: rediscovering the fabric");
	sm_request_sweep(sm, NULL, 0);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"transport", required_argument, NULL, 't'},
	    {"ca", required_argument, NULL, 'C'},
	    {"port", required_argument, NULL, 'P'},
	    {"guid", required_argument, NULL, 'G'},
	    {"sim-node", required_argument, NULL, 'N'},
	    {"config", required_argument, NULL, 'c'},
	    {"once", no_argument, NULL, 'o'},
	    {"state-dir", required_argument, NULL, 's'},
	    {"routing-engine", required_argument, NULL, 'R'},
	    {"lmc", required_argument, NULL, 'l'},
	    {"sweep-interval", required_argument, NULL, 'i'},
	    {"priority", required_argument, NULL, 'p'},
	    {"log-level", required_argument, NULL, 'L'},
	    {"journal", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct log lg;
	log_init(&lg);
	lg.timestamps = true;
	struct ibsmd_config cfg;
	config_defaults(&cfg);
	struct mad_transport_opts to = {.roles = MAD_ROLE_SM | MAD_ROLE_SA, .log = &lg};
	const char *transport = "umad", *config_file = NULL;
	/* command-line values override the file: keep them aside until it is read */
	const char *o_state = NULL, *o_engine = NULL;
	int o_lmc = -1, o_interval = -1, o_level = -1, o_prio = -1, verbose = 0;
	bool once = false;
	int o;
	while ((o = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (o) {
		case 't': transport = optarg; break;
		case 'C': to.ca_name = optarg; break;
		case 'P': to.port_num = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'G': to.port_guid = strtoull(optarg, NULL, 0); break;
		case 'N': to.sim_node = optarg; break;
		case 'c': config_file = optarg; break;
		case 'o': once = true; break;
		case 's': o_state = optarg; break;
		case 'R': o_engine = optarg; break;
		case 'l': {
			char *e;
			long v = strtol(optarg, &e, 10);
			if (*e || v < 0 || v > 7) {
				fprintf(stderr, "ibsmd: --lmc takes 0 to 7, not \"%s\"\n", optarg);
				return 2;
			}
			o_lmc = (int)v;
			break;
		}
		case 'i': o_interval = atoi(optarg); break;
		case 'p': {
			char *e;
			long v = strtol(optarg, &e, 10);
			if (*e || v < 0 || v > 15) {
				fprintf(stderr, "ibsmd: --priority takes 0 to 15, not \"%s\"\n",
				        optarg);
				return 2;
			}
			o_prio = (int)v;
			break;
		}
		case 'L':
			o_level = log_level_parse(optarg);
			if (o_level < 0) {
				fprintf(stderr, "ibsmd: unknown log level \"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'v': verbose++; break;
		case 'j': lg.sink = LOG_SINK_JOURNAL; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	char err[512];
	if (config_file && config_load(&cfg, config_file, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: %s\n", err);
		config_free(&cfg);
		return 2;
	}
	if (o_state)
		snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s", o_state);
	if (o_engine)
		snprintf(cfg.routing_engines, sizeof(cfg.routing_engines), "%s", o_engine);
	if (o_lmc >= 0)
		cfg.lmc = (uint8_t)o_lmc;
	if (o_interval >= 0)
		cfg.sweep_interval_s = (unsigned)o_interval;
	if (o_prio >= 0)
		cfg.sm_priority = (uint8_t)o_prio;
	if (cfg.log_level >= 0)
		lg.level = cfg.log_level;
	if (o_level >= 0)
		lg.level = o_level;
	for (; verbose > 0 && lg.level < LOGL_DEBUG; verbose--)
		lg.level++;
	if (config_check(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: configuration: %s\n", err);
		config_free(&cfg);
		return 2;
	}
	/* an unknown engine is a mistake to stop at, before touching the fabric */
	char chain[sizeof(cfg.routing_engines)];
	snprintf(chain, sizeof(chain), "%s", cfg.routing_engines);
	for (char *save = NULL, *n = strtok_r(chain, ", ", &save); n;
	     n = strtok_r(NULL, ", ", &save)) {
		if (!routing_find(n)) {
			fprintf(stderr, "ibsmd: unknown routing engine \"%s\" (known: %s)\n", n,
			        routing_names());
			config_free(&cfg);
			return 2;
		}
	}

	if (strcmp(transport, "umad") != 0 && strcmp(transport, "sim") != 0) {
		fprintf(stderr,
		        "ibsmd: unknown transport \"%s\": use umad (hardware) or sim "
		        "(ibsim, fabricsim)\n",
		        transport);
		config_free(&cfg);
		return 2;
	}
	struct mad_transport *t;
	if (mad_transport_open(transport, &to, &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: %s\n", err);
		config_free(&cfg);
		return 3;
	}
	struct ev_loop *loop = ev_default_loop(EVFLAG_AUTO);
	struct sm *sm = sm_new(&cfg, &lg, loop, t, once);
	struct sa *sa = sm ? sa_new(sm) : NULL;
	struct sync *sync = sa ? sync_new(sm, sa) : NULL;
	if (sync) {
		struct sm_listener hooks = sa_listener(sa), sync_hooks = sync_listener(sync);
		sm_add_listener(sm, &hooks);
		sm_add_listener(sm, &sync_hooks);
	}
	if (!sync || sm_start(sm) < 0) {
		fprintf(stderr, "ibsmd: cannot start the SM\n");
		sync_stop(sync);
		sm_stop(sm);
		sync_free(sync);
		sa_free(sa);
		sm_free(sm);
		mad_transport_close(t);
		config_free(&cfg);
		return 1;
	}
	ev_signal sigint, sigterm, sighup;
	ev_signal_init(&sigint, stop_cb, SIGINT);
	ev_signal_init(&sigterm, stop_cb, SIGTERM);
	ev_signal_init(&sighup, hup_cb, SIGHUP);
	sighup.data = sm;
	ev_signal_start(loop, &sigint);
	ev_signal_start(loop, &sigterm);
	ev_signal_start(loop, &sighup);
	signal(SIGPIPE, SIG_IGN);
	sd_notify(0, "READY=1\nSTATUS=sweeping");

	ev_run(loop, 0);

	int rc = 0;
	if (once) {
		struct sm_status st = sm_status(sm);
		const struct sm_counts *c = &st.counts;
		if (st.up && !st.exit_code) {
			printf("subnet up: %u nodes (%u switches, %u CAs), %u ports, %u links, %u "
			       "LIDs, routed by %s in %.3f s (total %.3f s)\n",
			       c->nodes, c->switches, c->cas, c->ports, c->links, c->lids,
			       st.engine, st.times.route, st.times.total);
		} else {
			printf("subnet not up: %s\n",
			       st.exit_reason[0] ? st.exit_reason : "unknown");
			rc = 1;
		}
	}
	sd_notify(0, "STOPPING=1");
	/* in this order: transactions end while the SA and the sync their callbacks use are
	 * there */
	sync_stop(sync);
	sm_stop(sm);
	sm_clear_listeners(sm);
	sync_free(sync);
	sa_free(sa);
	sm_free(sm);
	mad_transport_close(t);
	config_free(&cfg);
	return rc;
}
