/* ibsa: the SA command-line client. This file: options, transport set-up, command table. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "mad/mad_types.h"

struct command {
	const char *name;
	int (*fn)(struct cli *c, int argc, char **argv);
	const char *usage;
};

static const struct command commands[] = {
    {"nodes", cmd_nodes, "nodes [LID]              NodeRecords"},
    {"ports", cmd_ports, "ports [LID]              PortInfoRecords"},
    {"links", cmd_links, "links [LID]              LinkRecords (from that LID)"},
    {"switches", cmd_switches, "switches [LID]           SwitchInfoRecords"},
    {"paths", cmd_paths,
     "paths SRC DST [--sid ID] [--pkey P_KEY]\n"
     "                         PathRecords; SRC/DST: LID, port GUID, GID,\n"
     "                           node description, or all; for a service, a partition"},
    {"mpaths", cmd_mpaths,
     "mpaths SRC[,SRC..] DST[,DST..] [--independent link|node]  PathRecords for every pair "
     "(MultiPathRecord); --independent: those sharing no link (node: no switch) first"},
    {"mcast", cmd_mcast, "mcast [MGID]             multicast groups (members with --sm-key)"},
    {"mft", cmd_mft, "mft [SWITCH-LID]         multicast forwarding tables"},
    {"sm", cmd_sm, "sm                       SMInfoRecords"},
    {"lft", cmd_lft, "lft SWITCH-LID           the switch's forwarding table"},
    {"pkeys", cmd_pkeys, "pkeys [LID]              P_KeyTableRecords"},
    {"guids", cmd_guids, "guids [LID]              GUIDInfoRecords"},
    {"sl2vl", cmd_sl2vl, "sl2vl [LID]              SL-to-VL tables (SLtoVLMappingTableRecords)"},
    {"vlarb", cmd_vlarb,
     "vlarb [LID]              VL arbitration tables (VLArbitrationTableRecords)"},
    {"alias", cmd_alias,
     "alias add|delete LID INDEX [GUID]\n"
     "                           an alias GUID of the port (the SA makes one up if none)"},
    {"services", cmd_services,
     "services [ID]            ServiceRecords\n"
     "  services add ID [--name NAME] [--lease SECONDS] [--pkey PKEY] [--gid GID]\n"
     "                  [--key KEY]\n"
     "                           register a service (default: the local port's GID);\n"
     "                           KEY: up to 32 hex digits\n"
     "  services delete ID [--gid GID] [--pkey PKEY] [--key KEY]   remove one\n"
     "                           (another port's service: its KEY, or --sm-key)"},
    {"informinfo", cmd_informinfo,
     "informinfo               InformInfoRecords: who subscribed to what"},
    {"events", cmd_events,
     "events [--trap N]... [--count N] [--timeout S]\n"
     "                           subscribe to ports coming and going (traps 64/65),\n"
     "                           or to the traps named (0xffff: all; the security\n"
     "                           traps 256-259 only with --sm-key)\n"
     "                           and print the SA's Reports as they arrive"},
    {"cc", cmd_cc,
     "cc ATTR --lid LID [--mod N] [--cc-key KEY]   Get a congestion control attribute\n"
     "      ATTR: info keyinfo switch ca cct (modifier: block)"},
    {"smp", cmd_smp,
     "smp ATTR [--dr PATH | --lid LID] [--mod N]   Get an SM attribute from a node\n"
     "      ATTR: nodeinfo nodedesc portinfo switchinfo sminfo pkeys guidinfo sl2vl vlarb\n"
     "            lft mft; virtual ports: virtinfo vportinfo vnodeinfo vportstate vpkeys"},
};

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: ibsa [options] COMMAND [args]\n"
	        "options:\n"
	        "  --transport umad|sim  how to reach the fabric (default umad)\n"
	        "  --ca NAME --port N    local port by device name and number (umad)\n"
	        "  --guid GUID           local port by GUID (umad)\n"
	        "  --sim-node NAME       node to attach to in the simulator (default: SIM_HOST,\n"
	        "                        else the simulator's first node)\n"
	        "  --timeout MS          per-attempt timeout (default 1000)\n"
	        "  --retries N           retries after the first attempt (default 3)\n"
	        "  --json                machine-readable output\n"
	        "  --sm-key KEY          SM_Key for SA queries (trusted requesters; OpenSM: 1)\n"
	        "  --control PATH        the daemon's control socket (IBSMD_CONTROL, else\n"
	        "                        /run/ibsmd/control)\n"
	        "  -v, --verbose         more log output (repeat for debug)\n"
	        "  -h, --help            this help\n"
	        "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %s\n", commands[i].usage);
	fprintf(
	    out,
	    "commands to the running ibsmd (its control socket):\n"
	    "  status                   state, other SMs, sweeps and phase times, MAD and SA\n"
	    "                           counters\n"
	    "  sweep [light|heavy]      sweep now (default heavy: rediscover everything)\n"
	    "  reroute                  compute every route afresh and send what changed\n"
	    "  loglevel [LEVEL]         show or set the log level\n"
	    "  release [GUID [PORT]]    enable links quarantined for flapping again\n"
	    "  counters [LID[:PORT]|NODE]  port counters from the performance manager:\n"
	    "                           error totals, bytes, rates\n"
	    "  dump topology|routes|files\n"
	    "                           the fabric (ibnetdiscover format), the LFTs (OpenSM's\n"
	    "                           lfts dump, or JSON), or OpenSM's dump files written\n"
	    "                           into dump_dir\n"
	    "  topology --slurm [--yaml [--name NAME]] | --dot\n"
	    "                           Slurm's topology.conf (topology/tree), its\n"
	    "                           topology.yaml (Slurm 25.05+), or a graphviz graph\n"
	    "  partition add PKEY GUID[,GUID..] [--membership full|limited] [--no-index0]\n"
	    "                [--no-ipoib]\n"
	    "                           add ports to a partition (created if new), at once\n"
	    "                           on their P_Key tables, without a sweep\n"
	    "  partition remove PKEY GUID[,GUID..]\n"
	    "                           take ports the API added out of it\n"
	    "  partition define PKEY [--name N] [--[no-]index0] [--[no-]ipoib]\n"
	    "                [--mtu-limit BYTES] [--rate-limit GBPS] [--sl SL]\n"
	    "                           a partition of the API's own, members or none,\n"
	    "                           with caps on its paths' MTU and rate\n"
	    "  partition delete PKEY    delete it with the members the API gave it\n"
	    "  partition show [PKEY]    the partitions, ibsmd.yaml's and the API's, with\n"
	    "                           their members\n"
	    "  vports [NODE]            the virtual ports (SR-IOV VFs) behind the HCAs' ports:\n"
	    "                           GUID, LID, state, own|shared LID, port, index,\n"
	    "                           P_Keys, node description\n"
	    "  watch [--follow]         the daemon's recent events as JSON lines; --follow\n"
	    "                           stays and prints each new one as it happens\n"
	    "  querylid LID             the port that holds a LID: node, GUIDs, state, link\n"
	    "  portstatus [ca|switch|router]\n"
	    "                           port states and rates; ports disabled or running\n"
	    "                           below what both ends of their link support\n"
	    "  switchbalance [verbose] [NODE]\n"
	    "                           hosts' LIDs per switch-to-switch port; unbalanced\n"
	    "                           switches (ports differing by more than one)\n"
	    "  lidbalance [NODE]        at LMC > 0: ports whose LIDs a switch sends unevenly\n"
	    "  priority [N]             the SM's priority, or set it (until a reload)\n"
	    "  update-desc              read every node's NodeDescription again\n"
	    "  health                   the fabric's health: the SM, duplicate GUIDs, ports,\n"
	    "                           links below their rate, error counters, routes and\n"
	    "                           credit loops, partitions (exit 6 warn, 7 fail)\n"
	    "  health --compare FILE [--node-name-map MAP]\n"
	    "                           ... and the fabric against a saved ibnetdiscover file:\n"
	    "                           nodes and cables missing, new or miswired\n");
	fprintf(out,
	        "other commands:\n"
	        "  passwd NAME              a line NAME:HASH for api_users_file, the password\n"
	        "                           read on standard input\n");
	fprintf(out, "exit codes: 0 ok, 1 error status in the answer, 2 usage, 3 transport, "
	             "4 no answer, 5 malformed answer, 6 topology with names left out or changed,\n"
	             "or health with warnings, 7 health with a check failing\n");
}

static void call_done(struct mad_dispatcher *d, const struct mad_result *res, void *ctx)
{
	(void)d;
	struct cli_answer *ans = ctx;
	ans->error = res->error;
	ans->status = res->status;
	if (res->mad && res->len) {
		ans->mad = malloc(res->len);
		if (ans->mad) {
			memcpy(ans->mad, res->mad, res->len);
			ans->len = res->len;
		}
	}
	ans->error = ans->error ? ans->error : (ans->mad ? 0 : -ENOMEM);
}

void cli_call(struct cli *c, const struct mad_request *req, struct cli_answer *ans)
{
	memset(ans, 0, sizeof(*ans));
	ans->error = 1; /* pending */
	struct mad_request r = *req;
	r.cb = call_done;
	r.ctx = ans;
	if (!r.timeout_ms)
		r.timeout_ms = c->timeout_ms;
	if (r.retries < 0)
		r.retries = c->retries;
	int rc = mad_dispatcher_send(c->d, &r);
	if (rc < 0) {
		ans->error = rc;
		return;
	}
	while (ans->error == 1)
		ev_run(c->loop, EVRUN_ONCE);
}

void cli_answer_free(struct cli_answer *ans)
{
	free(ans->mad);
	ans->mad = NULL;
}

int cli_print_attribute(struct cli *c, const char *cmd, const struct mad_layout *l,
                        const uint8_t *data, size_t len, const char *title)
{
	uint8_t host[1024]; /* big enough for any attribute's host struct */
	struct mad_error err;
	if (mad_layout_decode(l, data, len, host, &err) < 0) {
		fprintf(stderr, "ibsa %s: malformed answer: %s\n", cmd, err.msg);
		return EXIT_BAD_ANSWER;
	}
	if (c->json) {
		mad_layout_print_json(l, host, stdout);
		fputc('\n', stdout);
	} else {
		printf("# %s\n", title);
		mad_layout_print(l, host, stdout, 0);
	}
	return EXIT_OK;
}

int cli_answer_exit(const struct cli_answer *ans, const char *what)
{
	if (ans->error == -ETIMEDOUT) {
		fprintf(stderr,
		        "ibsa: %s: no answer after all retries (no node on that route "
		        "or LID, or it does not answer)\n",
		        what);
		return EXIT_TIMEOUT;
	}
	if (ans->error) {
		fprintf(stderr, "ibsa: %s: %s\n", what, strerror(-ans->error));
		return EXIT_TRANSPORT;
	}
	if (ans->status & 0x7fff) {
		fprintf(stderr, "ibsa: %s: MAD status 0x%04x: %s\n", what, ans->status,
		        mad_status_str(ans->status));
		return EXIT_MAD_STATUS;
	}
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"transport", required_argument, NULL, 't'},
	    {"ca", required_argument, NULL, 'C'},
	    {"port", required_argument, NULL, 'P'},
	    {"guid", required_argument, NULL, 'G'},
	    {"sim-node", required_argument, NULL, 'N'},
	    {"timeout", required_argument, NULL, 'T'},
	    {"retries", required_argument, NULL, 'R'},
	    {"json", no_argument, NULL, 'j'},
	    {"sm-key", required_argument, NULL, 'K'},
	    {"control", required_argument, NULL, 'X'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cli c = {.timeout_ms = 1000, .retries = 3};
	/* a default for scripts on slow or loaded machines; --timeout still wins */
	const char *env_timeout = getenv("IBSA_TIMEOUT");
	if (env_timeout && strtoul(env_timeout, NULL, 10) > 0)
		c.timeout_ms = (unsigned)strtoul(env_timeout, NULL, 10);
	struct mad_transport_opts to = {.roles = MAD_ROLE_CLIENT};
	const char *transport = "umad", *control = NULL;
	int o;

	log_init(&c.log);
	c.log.level = LOGL_WARN;
	while ((o = getopt_long(argc, argv, "+vhj", opts, NULL)) != -1) {
		switch (o) {
		case 't': transport = optarg; break;
		case 'C': to.ca_name = optarg; break;
		case 'P': to.port_num = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'G': to.port_guid = strtoull(optarg, NULL, 0); break;
		case 'N': to.sim_node = optarg; break;
		case 'T': c.timeout_ms = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'R': c.retries = atoi(optarg); break;
		case 'j': c.json = true; break;
		case 'K': c.sm_key = strtoull(optarg, NULL, 0); break;
		case 'X': control = optarg; break;
		case 'v':
			c.log.level = c.log.level < LOGL_DEBUG ? c.log.level + 1 : LOGL_DEBUG;
			break;
		case 'h': usage(stdout); return EXIT_OK;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[optind], "passwd")) /* neither the fabric nor the daemon */
		return cli_passwd(argc - optind, argv + optind);
	/* health with options compares here, then asks the daemon */
	if (!strcmp(argv[optind], "health") && argc - optind > 1)
		return cli_health_compare(control, c.json, argc - optind, argv + optind);
	if (cli_is_control_command(argv[optind]))
		return cli_control(control, c.json, argc - optind, argv + optind);
	const struct command *cmd = NULL;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[optind], commands[i].name) == 0)
			cmd = &commands[i];
	if (!cmd) {
		fprintf(stderr, "ibsa: unknown command \"%s\"\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}

	char err[256] = "";
	to.log = &c.log;
	if (!strcmp(cmd->name, "events"))
		to.roles |=
		    MAD_ROLE_SUBSCRIBER; /* Reports are requests: the kernel needs an agent */
	if (mad_transport_open(transport, &to, &c.t, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibsa: %s\n", err);
		return strstr(err, "unknown transport") ? EXIT_USAGE : EXIT_TRANSPORT;
	}
	if (c.t->ops->query_port(c.t, &c.local) < 0)
		log_warn(&c.log, "ibsa", "%s: cannot read the local port's state", c.t->desc);
	c.loop = ev_loop_new(EVFLAG_AUTO);
	struct mad_dispatcher_opts dopts = {.log = &c.log};
	c.d = mad_dispatcher_new(c.loop, c.t, &dopts);
	if (!c.loop || !c.d) {
		fprintf(stderr, "ibsa: out of memory\n");
		mad_transport_close(c.t);
		return EXIT_TRANSPORT;
	}
	int rc = cmd->fn(&c, argc - optind, argv + optind);
	if (c.log.level >= LOGL_INFO)
		mad_dispatcher_log_counters(c.d);
	mad_dispatcher_free(c.d);
	ev_loop_destroy(c.loop);
	mad_transport_close(c.t);
	return rc;
}
