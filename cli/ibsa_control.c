/* ibsa's commands to the running daemon, over its control socket (not the fabric): status,
 * sweep, reroute, loglevel, dump, topology, watch, and OpenSM's console questions. The request is
 * the command line; the answer is printed as it comes; an answer that starts with "error: " is the
 * daemon's refusal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"

static const char *const control_commands[] = {
    "status",     "sweep",         "reroute",    "loglevel", "dump",       "counters",
    "release",    "topology",      "vports",     "watch",    "health",     "querylid",
    "portstatus", "switchbalance", "lidbalance", "priority", "update-desc"};

bool cli_is_control_command(const char *name)
{
	if (!strcmp(name, "partition")) /* partition add|remove|define|delete|show */
		return true;
	for (size_t i = 0; i < sizeof(control_commands) / sizeof(control_commands[0]); i++)
		if (!strcmp(name, control_commands[i]))
			return true;
	return false;
}

/* The answer: watch its first bytes for "error: ", print everything. */
static int read_answer(int fd, const char *path)
{
	char buf[65536], head[8] = "";
	size_t got = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n && got < 7; i++)
			head[got++] = buf[i];
		FILE *to = strncmp(head, "error: ", got < 7 ? got : 7) == 0 ? stderr : stdout;
		fwrite(buf, 1, (size_t)n, to);
	}
	close(fd);
	if (n < 0) {
		fprintf(stderr, "ibsa: %s: %s\n", path, strerror(errno));
		return EXIT_TRANSPORT;
	}
	if (got == 0) {
		fprintf(stderr, "ibsa: ibsmd closed the connection without an answer\n");
		return EXIT_BAD_ANSWER;
	}
	return !strncmp(head, "error: ", 7) ? EXIT_MAD_STATUS : EXIT_OK;
}

/* watch's events, JSON lines as they come (none is an answer too); with --follow until the
 * daemon goes or the user stops it. */
static int read_events(int fd, const char *path)
{
	char buf[65536];
	ssize_t n;
	bool first = true, error = false;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (first)
			error = n >= 7 && !strncmp(buf, "error: ", 7);
		first = false;
		fwrite(buf, 1, (size_t)n, error ? stderr : stdout);
		fflush(error ? stderr : stdout); /* a script reads each event as it happens */
	}
	close(fd);
	if (n < 0) {
		fprintf(stderr, "ibsa: %s: %s\n", path, strerror(errno));
		return EXIT_TRANSPORT;
	}
	return error ? EXIT_MAD_STATUS : EXIT_OK;
}

/* topology's answer, line by line: the file on standard output, the daemon's "warning: "
 * lines (names it could not use) on standard error, so that a redirected topology.conf
 * holds only what Slurm reads; with warnings the exit status says so. */
static int read_lines(int fd, const char *path)
{
	FILE *in = fdopen(fd, "r");
	if (!in) {
		close(fd);
		fprintf(stderr, "ibsa: %s: %s\n", path, strerror(errno));
		return EXIT_TRANSPORT;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	bool any = false, error = false, warned = false, failing = false;
	while ((n = getline(&line, &cap, in)) > 0) {
		if (!any && !strncmp(line, "error: ", 7))
			error = true;
		any = true;
		if (!strncmp(line, "warning: ", 9)) {
			warned = true;
			fprintf(stderr, "ibsa: %s", line + 9);
		} else if (!strncmp(line, "failing: ", 9)) {
			failing = true;
			fprintf(stderr, "ibsa: %s", line + 9);
		} else {
			fwrite(line, 1, (size_t)n, error ? stderr : stdout);
		}
	}
	bool failed = ferror(in);
	free(line);
	fclose(in);
	if (failed) {
		fprintf(stderr, "ibsa: %s: read error\n", path);
		return EXIT_TRANSPORT;
	}
	if (!any) {
		fprintf(stderr, "ibsa: ibsmd closed the connection without an answer\n");
		return EXIT_BAD_ANSWER;
	}
	return error     ? EXIT_MAD_STATUS
	       : failing ? EXIT_UNHEALTHY
	       : warned  ? EXIT_WARNINGS
	                 : EXIT_OK;
}

/* Connect to the daemon at path and send the command line (newline included): the socket,
 * or minus an exit code with the reason on standard error. */
static int send_line(const char *path, const char *line, size_t at)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "ibsa: control socket path too long: %s\n", path);
		return -EXIT_USAGE;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr,
		        "ibsa: cannot reach ibsmd at %s: %s (is it running? --control or "
		        "IBSMD_CONTROL name another socket)\n",
		        path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EXIT_TRANSPORT;
	}
	for (size_t sent = 0; sent < at;) {
		ssize_t n = write(fd, line + sent, at - sent);
		if (n <= 0) {
			fprintf(stderr, "ibsa: %s: %s\n", path, strerror(errno));
			close(fd);
			return -EXIT_TRANSPORT;
		}
		sent += (size_t)n;
	}
	return fd;
}

const char *cli_control_path(const char *path)
{
	if (!path)
		path = getenv("IBSMD_CONTROL");
	return path && path[0] ? path : "/run/ibsmd/control";
}

int cli_control_read_all(const char *path, const char *cmd, char **out, size_t *len)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s\n", cmd);
	if (n < 0 || (size_t)n >= sizeof(line))
		return EXIT_USAGE;
	int fd = send_line(cli_control_path(path), line, (size_t)n);
	if (fd < 0)
		return -fd;
	FILE *m = open_memstream(out, len);
	if (!m) {
		close(fd);
		return EXIT_TRANSPORT;
	}
	char buf[65536];
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)r, m);
	fclose(m);
	close(fd);
	if (r < 0) {
		fprintf(stderr, "ibsa: %s: %s\n", cli_control_path(path), strerror(errno));
		return EXIT_TRANSPORT;
	}
	if (*len >= 7 && !strncmp(*out, "error: ", 7)) {
		fprintf(stderr, "ibsa: %s", *out + 7);
		return EXIT_MAD_STATUS;
	}
	return *len ? EXIT_OK : EXIT_BAD_ANSWER;
}

int cli_control(const char *path, bool json, int argc, char **argv)
{
	path = cli_control_path(path);
	/* "topology --slurm" asks the daemon for "topology slurm", "--slurm --yaml [--name N]"
	 * for "topology slurm-yaml [N]" */
	bool topology = !strcmp(argv[0], "topology");
	char *topo_words[4] = {argv[0], NULL, NULL, NULL};
	if (topology) {
		bool ok = argc >= 2 && (!strcmp(argv[1], "--slurm") || !strcmp(argv[1], "--dot"));
		bool yaml =
		    ok && argc >= 3 && !strcmp(argv[1], "--slurm") && !strcmp(argv[2], "--yaml");
		if (yaml && argc == 5 && !strcmp(argv[3], "--name"))
			topo_words[2] = argv[4];
		else if (argc != (yaml ? 3 : 2))
			ok = false;
		if (!ok) {
			fprintf(
			    stderr,
			    "ibsa: topology --slurm [--yaml [--name NAME]] or topology --dot\n");
			return EXIT_USAGE;
		}
		topo_words[1] = yaml ? "slurm-yaml" : argv[1] + 2;
		argc = topo_words[2] ? 3 : 2;
		argv = topo_words;
	}
	char line[512];
	size_t at = 0;
	bool watch = !strcmp(argv[0], "watch");
	if (watch && (argc > 2 || (argc == 2 && strcmp(argv[1], "--follow")))) {
		fprintf(stderr, "ibsa: watch [--follow]\n");
		return EXIT_USAGE;
	}
	for (int i = 0; i < argc; i++) {
		/* "watch --follow": the word without its dashes */
		const char *w = watch && i == 1 ? argv[i] + 2 : argv[i];
		int n = snprintf(line + at, sizeof(line) - at, "%s%s", i ? " " : "", w);
		if (n < 0 || (size_t)n >= sizeof(line) - at) {
			fprintf(stderr, "ibsa: the command is too long\n");
			return EXIT_USAGE;
		}
		at += (size_t)n;
	}
	if (json && !watch) /* (watch's lines are JSON already) */
		at += (size_t)snprintf(line + at, sizeof(line) - at, " --json");
	if (at + 1 >= sizeof(line)) {
		fprintf(stderr, "ibsa: the command is too long\n");
		return EXIT_USAGE;
	}
	line[at++] = '\n';
	int fd = send_line(path, line, at);
	if (fd < 0)
		return -fd;
	bool health = !strcmp(argv[0], "health");
	return watch                ? read_events(fd, path)
	       : topology || health ? read_lines(fd, path)
	                            : read_answer(fd, path);
}
