/* Shared plumbing of ibsa's commands: one transport, one dispatcher, blocking calls. */
#ifndef IBSMD_CLI_CLI_H
#define IBSMD_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/dispatcher.h"
#include "mad/mad_layout.h"
#include "mad/transport.h"
#include "util/log.h"

/* Exit codes scripts can rely on (ibsa(1) lists them). */
enum cli_exit {
	EXIT_OK = 0,
	EXIT_MAD_STATUS = 1, /* the answer carried an error status */
	EXIT_USAGE = 2,
	EXIT_TRANSPORT = 3, /* could not open the port or simulator */
	EXIT_TIMEOUT = 4,   /* no answer after all retries */
	EXIT_BAD_ANSWER = 5,
	EXIT_WARNINGS =
	    6, /* topology: written, with names it could not use (on stderr); health: warnings */
	EXIT_UNHEALTHY = 7, /* health: a check fails */
};

struct cli {
	struct log log;
	struct ev_loop *loop;
	struct mad_transport *t;
	struct mad_dispatcher *d;
	struct mad_local_port local;
	bool json;
	unsigned timeout_ms;
	int retries;
	uint64_t sm_key; /* SM_Key in SA requests: the SA trusts requesters that know it */
};

/* An answer copied out of the dispatcher. */
struct cli_answer {
	int error;
	uint16_t status;
	uint8_t *mad; /* malloc'd; free with cli_answer_free */
	size_t len;
};

/* Commands for the running daemon (its control socket), not the fabric. */
bool cli_is_control_command(const char *name);
/* Send the command line to the daemon at path (NULL: IBSMD_CONTROL, else
 * /run/ibsmd/control) and print its answer. An exit code. */
int cli_control(const char *path, bool json, int argc, char **argv);

/* The control socket's path: path, else IBSMD_CONTROL, else /run/ibsmd/control. */
const char *cli_control_path(const char *path);
/* One command to the daemon, its whole answer into *out (malloc'd, *len bytes): an exit
 * code; an "error: " answer is printed and gives EXIT_MAD_STATUS. */
int cli_control_read_all(const char *path, const char *cmd, char **out, size_t *len);
/* ibsa health --compare FILE [--node-name-map MAP]: the daemon's report and the fabric
 * against the topology a site saved. An exit code. */
int cli_health_compare(const char *path, bool json, int argc, char **argv);

/* ibsa passwd NAME: a users-file line for the partition API. An exit code. */
int cli_passwd(int argc, char **argv);

/* Send one request and run the loop until it ends. */
void cli_call(struct cli *c, const struct mad_request *req, struct cli_answer *ans);
void cli_answer_free(struct cli_answer *ans);
/* One attribute of an answer (data, len bytes) decoded with l and printed: JSON, or title
 * and a field a line. An exit code: EXIT_BAD_ANSWER (cmd named) when it does not decode. */
int cli_print_attribute(struct cli *c, const char *cmd, const struct mad_layout *l,
                        const uint8_t *data, size_t len, const char *title);
/* Map an answer to an exit code, printing the reason to stderr. */
int cli_answer_exit(const struct cli_answer *ans, const char *what);

/* An SA answer: the records of a Get or GetTable. */
struct sa_answer {
	struct cli_answer a;
	const uint8_t *recs;
	size_t stride;
	uint32_t n;
};
/* Ask the SM's SA: method on attr with a component mask and a request record. */
int sa_query(struct cli *c, uint8_t method, uint16_t attr, uint64_t mask, const uint8_t *req,
             size_t reqlen, struct sa_answer *out, const char *what);
void print_records(struct cli *c, const struct mad_layout *l, const struct sa_answer *ans,
                   const char *title);

int cmd_smp(struct cli *c, int argc, char **argv);
int cmd_cc(struct cli *c, int argc, char **argv);
int cmd_nodes(struct cli *c, int argc, char **argv);
int cmd_ports(struct cli *c, int argc, char **argv);
int cmd_links(struct cli *c, int argc, char **argv);
int cmd_switches(struct cli *c, int argc, char **argv);
int cmd_sm(struct cli *c, int argc, char **argv);
int cmd_lft(struct cli *c, int argc, char **argv);
int cmd_pkeys(struct cli *c, int argc, char **argv);
int cmd_guids(struct cli *c, int argc, char **argv);
int cmd_sl2vl(struct cli *c, int argc, char **argv);
int cmd_vlarb(struct cli *c, int argc, char **argv);
int cmd_mft(struct cli *c, int argc, char **argv);
int cmd_alias(struct cli *c, int argc, char **argv);
int cmd_mcast(struct cli *c, int argc, char **argv);
int cmd_mpaths(struct cli *c, int argc, char **argv);
int cmd_services(struct cli *c, int argc, char **argv);
int cmd_informinfo(struct cli *c, int argc, char **argv);
int cmd_events(struct cli *c, int argc, char **argv);
int cmd_paths(struct cli *c, int argc, char **argv);

#endif
