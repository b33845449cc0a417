/* ibsmd: the InfiniBand subnet manager daemon. main reads the options and the configuration,
 * opens the port and hands them to the daemon (daemon.c), which wires the SM, the SA and the
 * standby sync together; or it does one of the commands that end at once (--import-opensm,
 * --check-config, --dump-config, --dry-run). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/dryrun.h"
#include "daemon/hugepages.h"
#include "daemon/notify.h"
#include "daemon/settings.h"
#include "import/opensm.h"
#include "routing/engine.h"

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

/* What the command line asks for. */
struct options {
	const char *transport;
	struct mad_transport_opts to;
	char local_ca[64]; /* --local-port's device name, which to.ca_name points to */
	/* command-line values override the file: they are kept aside and applied after it, at
	 * start and at every reload */
	struct settings set;
	int verbose;
	const char *import_parts, *import_qos;
	bool import, once, wait_port, check_only, dump, dry;
};

/* A number option from 0 to max; what names the option and its range for the refusal. -1
 * when taken; else the exit code. */
static int parse_bounded(const char *arg, long max, const char *what, int *out)
{
	char *e;
	long v = strtol(arg, &e, 10);
	if (*e || v < 0 || v > max) {
		fprintf(stderr, "ibsmd: %s, not \"%s\"\n", what, arg);
		return 2;
	}
	*out = (int)v;
	return -1;
}

/* One option into op (or lg). -1 to go on; else the exit code: 0 after --help, 2 for a bad
 * value. */
static int parse_option(int o, const char *arg, struct options *op, struct log *lg)
{
	switch (o) {
	case 't': op->transport = arg; break;
	case 'C': op->to.ca_name = arg; break;
	case 'P': op->to.port_num = (unsigned)strtoul(arg, NULL, 0); break;
	case 'G': op->to.port_guid = strtoull(arg, NULL, 0); break;
	case 'W':
		if (parse_local_port(arg, &op->to, op->local_ca, sizeof(op->local_ca)) < 0) {
			fprintf(stderr,
			        "ibsmd: --local-port takes a port GUID (0x0002c90300001234) "
			        "or DEVICE:PORT (mlx5_0:1), not \"%s\"\n",
			        arg);
			return 2;
		}
		break;
	case 'N': op->to.sim_node = arg; break;
	case 'c': op->set.config_file = arg; break;
	case 'K': op->check_only = true; break;
	case 'D': op->dump = true; break;
	case 'I': op->import = true; break;
	case 'A': op->import_parts = arg; break;
	case 'Q': op->import_qos = arg; break;
	case 'o': op->once = true; break;
	case 'y': op->dry = true; break;
	case 'w': op->wait_port = true; break;
	case 's': op->set.state_dir = arg; break;
	case 'S': op->set.control_socket = arg; break;
	case 'R': op->set.engines = arg; break;
	case 'l': return parse_bounded(arg, 7, "--lmc takes 0 to 7", &op->set.lmc);
	case 'i':
		return parse_bounded(arg, 86400, "--sweep-interval takes 0 to 86400 s",
		                     &op->set.sweep_interval);
	case 'p': return parse_bounded(arg, 15, "--priority takes 0 to 15", &op->set.priority);
	case 'L':
		op->set.log_level = log_level_parse(arg);
		if (op->set.log_level < 0) {
			fprintf(stderr, "ibsmd: unknown log level \"%s\"\n", arg);
			return 2;
		}
		break;
	case 'v': op->verbose++; break;
	case 'j': lg->sink = LOG_SINK_JOURNAL; break;
	case 'h': usage(stdout); return 0;
	default: usage(stderr); return 2;
	}
	return -1;
}

/* The options up to the operands (optind). -1 to go on; else the exit code. */
static int parse_options(int argc, char **argv, struct options *op, struct log *lg)
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
	*op = (struct options){
	    .transport = "umad",
	    .to = {.roles = MAD_ROLE_SM | MAD_ROLE_SA, .log = lg},
	    .set = {.lmc = -1, .sweep_interval = -1, .priority = -1, .log_level = -1},
	};
	int o;
	while ((o = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		int rc = parse_option(o, optarg, op, lg);
		if (rc >= 0)
			return rc;
	}
	return -1;
}

/* --import-opensm: OpenSM's files as ibsmd YAML on standard output. The exit code. */
static int run_import(const struct options *op, int argc, char **argv)
{
	const char *conf = optind < argc ? argv[optind++] : NULL;
	char ierr[512];
	if (optind != argc || (!conf && !op->import_parts && !op->import_qos)) {
		usage(stderr);
		return 2;
	}
	if (import_opensm(conf, op->import_parts, op->import_qos, stdout, stderr, ierr,
	                  sizeof(ierr)) < 0) {
		fflush(stdout);
		fprintf(stderr, "ibsmd: %s\n", ierr);
		return 2;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

/* The configuration into d->cfg, and --check-config and --dump-config, which end there.
 * -1 to go on; else the exit code. */
static int configure(struct options *op, int argc, char **argv, struct daemon *d)
{
	/* --check-config takes the file as its operand; nothing else has operands */
	if (op->check_only && optind + 1 == argc)
		op->set.config_file = argv[optind++];
	else if (op->check_only && !op->set.config_file)
		op->set.config_file = SETTINGS_DEFAULT_FILE;
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	char err[512];
	if (settings_load(&op->set, &d->cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsmd: %s\n", err);
		return 2;
	}
	if (op->check_only || op->dump) {
		if (op->dump)
			config_dump(&d->cfg, stdout);
		else
			printf("%s: configuration OK\n", op->set.config_file);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	d->log->level = reload_log_level(&d->cfg, op->verbose);
	if (strcmp(op->transport, "umad") != 0 && strcmp(op->transport, "sim") != 0) {
		fprintf(stderr,
		        "ibsmd: unknown transport \"%s\": use umad (hardware) or sim "
		        "(ibsim, fabricsim)\n",
		        op->transport);
		return 2;
	}
	return -1;
}

/* The port into d->transport, waited for with --wait-for-port. -1 when open; else the exit
 * code. */
static int open_transport(struct options *op, struct daemon *d)
{
	if (op->dry)
		op->to.roles =
		    MAD_ROLE_CLIENT; /* no SM or SA agent: the running SM's port stays its own */
	char err[512];
	for (unsigned tries = 0;; tries++) {
		if (mad_transport_open(op->transport, &op->to, &d->transport, err, sizeof(err)) ==
		    0)
			return -1;
		if (!op->wait_port) {
			fprintf(stderr, "ibsmd: %s\n", err);
			return 3;
		}
		/* at boot the port may come after the service (drivers load asynchronously);
		 * wait for it, saying why, rather than fail and rely on restarts */
		if (tries % 30 == 0)
			log_notice(d->log, "sm", "waiting for the port: %s", err);
		notify_waiting(err);
		sleep(1);
	}
}

int main(int argc, char **argv)
{
	hugepages_start_again(argv);
	struct log lg;
	log_init(&lg);
	lg.timestamps = true;
	struct options op;
	int rc = parse_options(argc, argv, &op, &lg);
	if (rc >= 0)
		return rc;
	if (op.import)
		return run_import(&op, argc, argv);

	struct daemon d = {.log = &lg, .settings = &op.set, .verbose = op.verbose, .once = op.once};
	config_defaults(&d.cfg);
	rc = configure(&op, argc, argv, &d);
	if (rc < 0)
		rc = open_transport(&op, &d);
	if (rc >= 0) {
		daemon_stop(&d);
		return rc;
	}
	if (op.dry) {
		rc = dry_run(&d.cfg, &lg, d.transport);
	} else if (daemon_start(&d) < 0) {
		fprintf(stderr, "ibsmd: cannot start the SM\n");
		rc = 1;
	} else {
		rc = daemon_run(&d);
	}
	daemon_stop(&d);
	return rc;
}
