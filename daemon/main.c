/* ibsmd: the InfiniBand subnet manager daemon. main owns everything: it creates the SM, the
 * SA and the standby sync and wires the SA and the sync in as the SM's listeners; the SM knows
 * nothing of either. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "daemon/control.h"
#include "daemon/dryrun.h"
#include "daemon/events.h"
#include "import/opensm.h"
#include "daemon/metrics.h"
#include "daemon/notify.h"
#include "daemon/reload.h"
#include "daemon/settings.h"
#include "mad/dispatcher.h"
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
	        "  --local-port GUID|CA:N  either of those in one argument (ibsmd@.service)\n"
	        "  --sim-node NAME         the simulated node to attach to (sim; or SIM_HOST)\n"
	        "  --config FILE           YAML configuration (see ibsmd.yaml(5))\n"
	        "  --check-config [FILE]   check FILE (else --config's, else %s):\n"
	        "                          exit 0 when it is sound, 2 with FILE:LINE:COLUMN\n"
	        "  --dump-config           print the effective configuration as YAML and exit\n"
	        "  --import-opensm [OPENSM_CONF] [--partitions FILE] [--qos-policy FILE]\n"
	        "                          print OpenSM's configuration as ibsmd YAML\n"
	        "  --wait-for-port         wait until the port can be opened (at boot)\n"
	        "  --once                  sweep, program, print a summary and exit: 0 when the\n"
	        "                          subnet is up, 1 with the reason otherwise\n"
	        "  --dry-run               read-only trial beside the running SM: discover with\n"
	        "                          Gets, route, report what would change and how both\n"
	        "                          routes check out; IsSM never set, nothing Set\n"
	        "  --control-socket PATH   where ibsa reaches the daemon (/run/ibsmd/control;\n"
	        "                          \"\" for none)\n"
	        "  --state-dir DIR         where LIDs are kept across restarts (/var/lib/ibsmd)\n"
	        "  --routing-engine LIST   engines in order of preference: %s\n"
	        "  --lmc N                 LIDs per port: 2^N (0-7)\n"
	        "  --sweep-interval S      light sweep period in seconds, 0: none (default 10)\n"
	        "  --priority N            SM priority 0-15 in the election among SMs (default 0)\n"
	        "  --log-level LEVEL       err, warn, notice (default), info, debug\n"
	        "  -v                      one log level more\n"
	        "  --journal               log to the systemd journal\n"
	        "  -h, --help              this help\n",
	        SETTINGS_DEFAULT_FILE, routing_names());
}

/* "0xGUID" or "DEVICE:PORT": one argument, so that a systemd instance name can name the
 * port (ibsmd@mlx5_0:1.service). */
static int parse_local_port(const char *s, struct mad_transport_opts *to, char *ca, size_t calen)
{
	char *e;
	const char *colon = strrchr(s, ':');
	if (!colon) {
		errno = 0;
		unsigned long long g = strtoull(s, &e, 0);
		if (!*s || *e || errno || !g)
			return -1;
		to->port_guid = g;
		return 0;
	}
	size_t n = (size_t)(colon - s);
	unsigned long port = strtoul(colon + 1, &e, 10);
	if (!n || n >= calen || *e || !colon[1] || !port || port > 254)
		return -1;
	memcpy(ca, s, n);
	ca[n] = 0;
	to->ca_name = ca;
	to->port_num = (unsigned)port;
	return 0;
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
	struct reload *r = w->data;
	log_notice(r->log, "config", "SIGHUP: reading the configuration again");
	if (reload_apply(r) < 0)
		sm_request_sweep(r->sm, NULL, 0); /* a SIGHUP still rediscovers the fabric */
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"transport", required_argument, NULL, 't'},
	    {"ca", required_argument, NULL, 'C'},
	    {"port", required_argument, NULL, 'P'},
	    {"guid", required_argument, NULL, 'G'},
	    {"local-port", required_argument, NULL, 'W'},
	    {"sim-node", required_argument, NULL, 'N'},
	    {"config", required_argument, NULL, 'c'},
	    {"check-config", no_argument, NULL, 'K'},
	    {"dump-config", no_argument, NULL, 'D'},
	    {"import-opensm", no_argument, NULL, 'I'},
	    {"partitions", required_argument, NULL, 'A'},
	    {"qos-policy", required_argument, NULL, 'Q'},
	    {"once", no_argument, NULL, 'o'},
	    {"dry-run", no_argument, NULL, 'y'},
	    {"wait-for-port", no_argument, NULL, 'w'},
	    {"state-dir", required_argument, NULL, 's'},
	    {"control-socket", required_argument, NULL, 'S'},
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
	const char *transport = "umad";
	/* command-line values override the file: they are kept aside and applied after it, at
	 * start and at every reload */
	struct settings set = {.lmc = -1, .sweep_interval = -1, .priority = -1, .log_level = -1};
	int verbose = 0;
	char local_ca[64];
	const char *import_parts = NULL, *import_qos = NULL;
	bool import = false;
	bool once = false, wait_port = false, check_only = false, dump = false, dry = false;
	int o;
	while ((o = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (o) {
		case 't': transport = optarg; break;
		case 'C': to.ca_name = optarg; break;
		case 'P': to.port_num = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'G': to.port_guid = strtoull(optarg, NULL, 0); break;
		case 'W':
			if (parse_local_port(optarg, &to, local_ca, sizeof(local_ca)) < 0) {
				fprintf(
				    stderr,
				    "ibsmd: --local-port takes a port GUID (0x0002c90300001234) "
				    "or DEVICE:PORT (mlx5_0:1), not \"%s\"\n",
				    optarg);
				return 2;
			}
			break;
		case 'N': to.sim_node = optarg; break;
		case 'c': set.config_file = optarg; break;
		case 'K': check_only = true; break;
		case 'D': dump = true; break;
		case 'I': import = true; break;
		case 'A': import_parts = optarg; break;
		case 'Q': import_qos = optarg; break;
		case 'o': once = true; break;
		case 'y': dry = true; break;
		case 'w': wait_port = true; break;
		case 's': set.state_dir = optarg; break;
		case 'S': set.control_socket = optarg; break;
		case 'R': set.engines = optarg; break;
		case 'l': {
			char *e;
			long v = strtol(optarg, &e, 10);
			if (*e || v < 0 || v > 7) {
				fprintf(stderr, "ibsmd: --lmc takes 0 to 7, not \"%s\"\n", optarg);
				return 2;
			}
			set.lmc = (int)v;
			break;
		}
		case 'i': {
			char *e;
			long v = strtol(optarg, &e, 10);
			if (*e || v < 0 || v > 86400) {
				fprintf(stderr,
				        "ibsmd: --sweep-interval takes 0 to 86400 s, not \"%s\"\n",
				        optarg);
				return 2;
			}
			set.sweep_interval = (int)v;
			break;
		}
		case 'p': {
			char *e;
			long v = strtol(optarg, &e, 10);
			if (*e || v < 0 || v > 15) {
				fprintf(stderr, "ibsmd: --priority takes 0 to 15, not \"%s\"\n",
				        optarg);
				return 2;
			}
			set.priority = (int)v;
			break;
		}
		case 'L':
			set.log_level = log_level_parse(optarg);
			if (set.log_level < 0) {
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
	if (import) {
		/* OpenSM's files as ibsmd YAML on standard output */
		const char *conf = optind < argc ? argv[optind++] : NULL;
		char ierr[512];
		if (optind != argc || (!conf && !import_parts && !import_qos)) {
			usage(stderr);
			return 2;
		}
		if (import_opensm(conf, import_parts, import_qos, stdout, ierr, sizeof(ierr)) < 0) {
			fflush(stdout);
			fprintf(stderr, "ibsmd: %s\n", ierr);
			return 2;
		}
		return fflush(stdout) == 0 ? 0 : 1;
	}
	/* --check-config takes the file as its operand; nothing else has operands */
	if (check_only && optind + 1 == argc)
		set.config_file = argv[optind++];
	else if (check_only && !set.config_file)
		set.config_file = SETTINGS_DEFAULT_FILE;
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	char err[512];
	if (settings_load(&set, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: %s\n", err);
		config_free(&cfg);
		return 2;
	}
	if (check_only || dump) {
		if (dump)
			config_dump(&cfg, stdout);
		else
			printf("%s: configuration OK\n", set.config_file);
		config_free(&cfg);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	lg.level = reload_log_level(&cfg, verbose);

	if (strcmp(transport, "umad") != 0 && strcmp(transport, "sim") != 0) {
		fprintf(stderr,
		        "ibsmd: unknown transport \"%s\": use umad (hardware) or sim "
		        "(ibsim, fabricsim)\n",
		        transport);
		config_free(&cfg);
		return 2;
	}
	if (dry)
		to.roles =
		    MAD_ROLE_CLIENT; /* no SM or SA agent: the running SM's port stays its own */
	struct mad_transport *t;
	for (unsigned tries = 0;; tries++) {
		if (mad_transport_open(transport, &to, &t, err, sizeof(err)) == 0)
			break;
		if (!wait_port) {
			fprintf(stderr, "ibsmd: %s\n", err);
			config_free(&cfg);
			return 3;
		}
		/* at boot the port may come after the service (drivers load asynchronously);
		 * wait for it, saying why, rather than fail and rely on restarts */
		if (tries % 30 == 0)
			log_notice(&lg, "sm", "waiting for the port: %s", err);
		notify_waiting(err);
		sleep(1);
	}
	if (dry) {
		int rc = dry_run(&cfg, &lg, t);
		mad_transport_close(t);
		config_free(&cfg);
		return rc;
	}
	struct ev_loop *loop = ev_default_loop(EVFLAG_AUTO);
	struct sm *sm = sm_new(&cfg, &lg, loop, t, once);
	struct sa *sa = sm ? sa_new(sm) : NULL;
	struct sync *sync = sa ? sync_new(sm, sa) : NULL;
	struct notify nt = {0};
	struct metrics mx = {0};
	struct events ev = {.log = &lg};
	struct pm_listener pm_hooks = events_pm_listener(&ev);
	struct pm *pm = sync && !once ? pm_new(sm, &pm_hooks) : NULL;
	struct reload rl = {.settings = &set,
	                    .cfg = &cfg,
	                    .log = &lg,
	                    .verbose = verbose,
	                    .sm = sm,
	                    .sync = sync,
	                    .notify = &nt,
	                    .metrics = &mx,
	                    .pm = pm};
	struct control ctl = {0};
	if (sync) {
		notify_start(&nt, sm, loop);
		if (!once) {
			/* without either the daemon still runs */
			control_start(&ctl, &rl, sa, loop);
			ctl.pm = pm;
			metrics_start(&mx, &ctl, loop);
			pm_reconfigure(pm);
		}
		struct sm_listener hooks = sa_listener(sa), sync_hooks = sync_listener(sync),
		                   nt_hooks = notify_listener(&nt),
		                   ctl_hooks = control_listener(&ctl);
		sm_add_listener(sm, &hooks);
		sm_add_listener(sm, &sync_hooks);
		sm_add_listener(sm, &nt_hooks);
		if (!once)
			sm_add_listener(sm, &ctl_hooks);
	}
	if (!sync || sm_start(sm) < 0) {
		fprintf(stderr, "ibsmd: cannot start the SM\n");
		pm_stop(pm);
		metrics_stop(&mx);
		control_stop(&ctl);
		notify_stop(&nt);
		sync_stop(sync);
		sm_stop(sm);
		pm_free(pm);
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
	sighup.data = &rl;
	ev_signal_start(loop, &sigint);
	ev_signal_start(loop, &sigterm);
	ev_signal_start(loop, &sighup);
	signal(SIGPIPE, SIG_IGN);

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
			const struct mad_counters *mc = mad_dispatcher_counters(sm_dispatcher(sm));
			if (st.sweeps > 1 || mc->retried || mc->timed_out)
				printf("MADs: %" PRIu64 " sent in %" PRIu64 " sweep(s), %" PRIu64
				       " retried (%" PRIu64
				       " beyond mad_retries for the loss), %" PRIu64
				       " unanswered after all retries; %.0f%% of attempts answered "
				       "lately\n",
				       mc->sent, st.sweeps, mc->retried, mc->retried_lossy,
				       mc->timed_out,
				       100 * mad_dispatcher_answer_rate(sm_dispatcher(sm)));
			/* the files OpenSM's --once leaves too, for ibdmchk and the like */
			char why[512];
			ctl.rl = &rl;
			if (cfg.dump_after_sweep && control_write_dumps(&ctl, why, sizeof(why)) < 0)
				log_warn(&lg, "control", "dump_after_sweep: %s", why);
		} else {
			printf("subnet not up: %s\n",
			       st.exit_reason[0] ? st.exit_reason : "unknown");
			rc = 1;
		}
	}
	pm_stop(pm);
	metrics_stop(&mx);
	control_stop(&ctl);
	notify_stop(&nt);
	/* in this order: transactions end while the SA and the sync their callbacks use are
	 * there */
	sync_stop(sync);
	sm_stop(sm);
	sm_clear_listeners(sm);
	pm_free(pm);
	sync_free(sync);
	sa_free(sa);
	sm_free(sm);
	mad_transport_close(t);
	config_free(&cfg);
	return rc;
}
