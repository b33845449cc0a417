/* fabricsim: serve a simulated fabric as ibsim does, or talk to one that runs. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <ev.h>

#include "server.h"
#include "topology.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: fabricsim [options] NETFILE|SPEC   serve a fabric (as ibsim does)\n"
	        "       fabricsim ctl COMMAND [ARGS]         control a running fabricsim\n"
	        "       fabricsim verify [--json] [--sl N] [--path-sl FILE] [--all]\n"
	        "                                            check what the SM programmed\n"
	        "       fabricsim dump NETFILE|SPEC          print a fabric as a net file\n"
	        "SPEC: fattree:radix=36,levels=2[,hosts=N]   torus:dims=4x4x4,hosts=2\n"
	        "      mesh:dims=8x8,hosts=4   dragonfly:groups=9,routers=4,hosts=4,global=2\n"
	        "      random:switches=50,radix=24,hosts=400,seed=7\n"
	        "options:\n"
	        "  --max-clients N      simulator clients at once (default 128)\n"
	        "  --hop-latency US     latency per link crossed (default 0)\n"
	        "  --sma-time US        time an SMA takes per MAD, one at a time (default 0)\n"
	        "  --silent-drops       unroutable MADs vanish instead of returning status 110\n"
	        "  --script FILE        run control commands from FILE (\"sleep S\" waits)\n"
	        "  --socket NAME        socket base name (default IBSIM_SOCKNAME, else \"sim\")\n"
	        "  --listen ADDR        serve UDP on ADDR (port IBSIM_SERVER_PORT or 7070)\n"
	        "  -v                   log clients and drops (twice: debug)\n"
	        "  -s, --no-console, -N, -S, -P   accepted for ibsim compatibility\n");
}

static const char *sockname(const char *given)
{
	if (given)
		return given;
	const char *e = getenv("IBSIM_SOCKNAME");
	return e && *e ? e : "sim";
}

/* Send one command to the admin socket; print the answer; 0 if it said OK. */
static int ctl_send(const char *name, const char *cmd)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	int n = snprintf(un.sun_path + 1, sizeof(un.sun_path) - 1, "%s:fabricsim", name);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n + 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&un, len) < 0) {
		fprintf(stderr, "fabricsim: no fabricsim running on \"%s\" (%s)\n", name,
		        strerror(errno));
		if (fd >= 0)
			close(fd);
		return 3;
	}
	char line[1024];
	snprintf(line, sizeof(line), "%s\n", cmd);
	send(fd, line, strlen(line), MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	char *buf = NULL;
	size_t got = 0, cap = 0;
	for (;;) {
		if (got + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			if (!buf)
				return 3;
		}
		ssize_t r = recv(fd, buf + got, cap - got - 1, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf = buf ? buf : calloc(1, 1);
	buf[got] = 0;
	/* the last line is the status */
	while (got && buf[got - 1] == '\n')
		buf[--got] = 0;
	char *last = strrchr(buf, '\n');
	const char *status = last ? last + 1 : buf;
	if (last)
		*last = 0;
	if (last)
		printf("%s\n", buf);
	int rc = strcmp(status, "OK") == 0 ? 0 : 1;
	free(buf);
	return rc;
}

static int join_and_send(const char *name, const char *prefix, int argc, char **argv)
{
	char cmd[1024] = "";
	snprintf(cmd, sizeof(cmd), "%s", prefix);
	for (int i = 0; i < argc; i++) {
		strncat(cmd, " ", sizeof(cmd) - strlen(cmd) - 1);
		strncat(cmd, argv[i], sizeof(cmd) - strlen(cmd) - 1);
	}
	return ctl_send(name, cmd);
}

/* "GUID/PORT GUID/PORT" per cable, lower end first (switches by node GUID, CAs by port
 * GUID), so two descriptions of one fabric compare with sort and diff. */
static void print_links(const struct fabric *f)
{
	for (uint32_t p = 0; p < f->nports; p++) {
		const struct fs_port *a = &f->ports[p];
		if (a->peer == FS_NONE || p > a->peer || !f->nodes[a->node].present)
			continue;
		const struct fs_port *b = &f->ports[a->peer];
		uint64_t ga = fs_is_switch(f, a->node) ? f->nodes[a->node].guid : a->guid;
		uint64_t gb = fs_is_switch(f, b->node) ? f->nodes[b->node].guid : b->guid;
		unsigned na = a->num, nb = b->num;
		if (ga > gb || (ga == gb && na > nb)) {
			uint64_t tg = ga;
			unsigned tn = na;
			ga = gb;
			na = nb;
			gb = tg;
			nb = tn;
		}
		printf("0x%016llx/%u 0x%016llx/%u\n", (unsigned long long)ga, na,
		       (unsigned long long)gb, nb);
	}
}

static int load(struct fabric *f, const char *what)
{
	struct fs_error err = {""};
	int rc;
	size_t n = strlen(what);
	if (access(what, F_OK) != 0 && strchr(what, ':'))
		rc = generate(f, what, &err);
	else if ((n > 5 && !strcmp(what + n - 5, ".yaml")) ||
	         (n > 4 && !strcmp(what + n - 4, ".yml")))
		rc = generate_yaml(f, what, &err);
	else
		rc = netfile_load(f, what, &err);
	if (rc < 0)
		fprintf(stderr, "fabricsim: %s\n", err.msg);
	return rc;
}

/* ---- scripts: control commands, with "sleep S" between them ---- */

struct script {
	struct fs_server *s;
	char **lines;
	size_t n, next;
	ev_timer t;
};

static void script_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)revents;
	struct script *sc = (struct script *)((char *)w - offsetof(struct script, t));
	while (sc->next < sc->n) {
		const char *l = sc->lines[sc->next++];
		double secs;
		if (sscanf(l, "sleep %lf", &secs) == 1) {
			ev_timer_set(&sc->t, secs, 0.);
			ev_timer_start(loop, &sc->t);
			return;
		}
		char *out = NULL;
		size_t len = 0;
		int rc = fs_server_command(sc->s, l, &out, &len);
		fprintf(stderr, "fabricsim: script: %s%s\n", l, rc ? " (failed)" : "");
		if (out && len)
			fputs(out, stderr);
		free(out);
	}
}

static int script_load(struct script *sc, const char *path)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		fprintf(stderr, "fabricsim: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char l[1024];
	while (fgets(l, sizeof(l), fp)) {
		l[strcspn(l, "\r\n")] = 0;
		char *t = l + strspn(l, " \t");
		if (!*t || *t == '#')
			continue;
		sc->lines = realloc(sc->lines, sizeof(char *) * (sc->n + 1));
		sc->lines[sc->n++] = strdup(t);
	}
	fclose(fp);
	return 0;
}

static void stop_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"max-clients", required_argument, NULL, 'c'},
	    {"hop-latency", required_argument, NULL, 'L'},
	    {"sma-time", required_argument, NULL, 'T'},
	    {"silent-drops", no_argument, NULL, 'D'},
	    {"script", required_argument, NULL, 'x'},
	    {"socket", required_argument, NULL, 'n'},
	    {"listen", required_argument, NULL, 'l'},
	    {"no-console", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct log lg;
	log_init(&lg);
	lg.level = LOGL_WARN;
	/* the scenarios judge time on the simulator's own clock (a client detached: an SM died) */
	lg.timestamps = true;
	struct fs_server_opts so = {.log = &lg};
	const char *script = NULL, *name = NULL;

	if (argc > 1 && !strcmp(argv[1], "ctl"))
		return argc > 2 ? join_and_send(sockname(NULL), argv[2], argc - 3, argv + 3)
		                : (usage(stderr), 2);
	if (argc > 1 && !strcmp(argv[1], "verify")) {
		/* the simulator reads --path-sl's file: give it a path that does not depend on
		 * where we stand */
		static char abs[PATH_MAX];
		for (int i = 2; i + 1 < argc; i++)
			if (!strcmp(argv[i], "--path-sl") && realpath(argv[i + 1], abs))
				argv[i + 1] = abs;
		return join_and_send(sockname(NULL), "verify", argc - 2, argv + 2);
	}
	if (argc > 1 && !strcmp(argv[1], "dump")) {
		if (argc != 3) {
			usage(stderr);
			return 2;
		}
		struct fabric f;
		fabric_init(&f);
		struct fs_error err;
		int rc =
		    load(&f, argv[2]) == 0 && netfile_write(&f, "/dev/stdout", &err) == 0 ? 0 : 1;
		fabric_free(&f);
		return rc;
	}

	if (argc > 1 && !strcmp(argv[1], "links")) {
		if (argc != 3) {
			usage(stderr);
			return 2;
		}
		struct fabric f;
		fabric_init(&f);
		if (load(&f, argv[2]) < 0) {
			fabric_free(&f);
			return 1;
		}
		print_links(&f);
		fabric_free(&f);
		return 0;
	}

	int o;
	while ((o = getopt_long(argc, argv, "svhN:S:P:", opts, NULL)) != -1) {
		switch (o) {
		case 'c': so.max_clients = (unsigned)atoi(optarg); break;
		case 'L': so.hop_latency_ns = (uint32_t)(atof(optarg) * 1e3); break;
		case 'T': so.sma_service_ns = (uint32_t)(atof(optarg) * 1e3); break;
		case 'D': so.silent_drops = true; break;
		case 'x': script = optarg; break;
		case 'n': name = optarg; break;
		case 'l': so.inet_host = optarg; break;
		case 'v': lg.level = lg.level < LOGL_DEBUG ? lg.level + 1 : LOGL_DEBUG; break;
		case 's':
		case 'q':
		case 'N':
		case 'S':
		case 'P': break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	const char *port = getenv("IBSIM_SERVER_PORT");
	if (port)
		so.inet_port = (unsigned)atoi(port);
	so.sockname = sockname(name);

	struct fabric f;
	fabric_init(&f);
	if (load(&f, argv[optind]) < 0) {
		fabric_free(&f);
		return 1;
	}
	struct ev_loop *loop = ev_default_loop(EVFLAG_AUTO);
	char err[256] = "";
	struct fs_server *s = fs_server_new(loop, &f, &so, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "fabricsim: %s\n", err);
		fabric_free(&f);
		return 1;
	}
	struct script sc = {.s = s};
	if (script) {
		if (script_load(&sc, script) < 0)
			return 1;
		ev_timer_init(&sc.t, script_cb, 0., 0.);
		ev_timer_start(loop, &sc.t);
	}
	ev_signal sigint, sigterm;
	ev_signal_init(&sigint, stop_cb, SIGINT);
	ev_signal_init(&sigterm, stop_cb, SIGTERM);
	ev_signal_start(loop, &sigint);
	ev_signal_start(loop, &sigterm);
	signal(SIGPIPE, SIG_IGN);

	unsigned hosts = 0;
	for (uint32_t i = 0; i < f.nnodes; i++)
		hosts += f.nodes[i].type != NODE_TYPE_SWITCH;
	fprintf(stderr, "fabricsim: %u nodes (%u switches, %u CAs), %u ports; serving on \"%s\"\n",
	        f.nnodes, f.nsws, hosts, f.nports, so.sockname);
	ev_run(loop, 0);

	fs_server_free(s);
	for (size_t i = 0; i < sc.n; i++)
		free(sc.lines[i]);
	free(sc.lines);
	fabric_free(&f);
	return 0;
}
