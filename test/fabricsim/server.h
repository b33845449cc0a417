/* fabricsim's server: the ibsim client protocol (so libumad2sim.so programs and ibsmd's sim
 * transport attach unchanged) and a control socket for faults and verification. */
#ifndef FABRICSIM_SERVER_H
#define FABRICSIM_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

#include "fabric.h"
#include "util/log.h"

struct fs_server_opts {
	const char *sockname;    /* abstract socket base name (IBSIM_SOCKNAME), default "sim" */
	const char *inet_host;   /* UDP instead of unix sockets when set */
	unsigned inet_port;      /* base port, default 7070 */
	unsigned max_clients;    /* default 128 (ibsim: 10) */
	uint32_t hop_latency_ns; /* per link crossed */
	uint32_t sma_service_ns; /* per MAD an SMA answers, one at a time per node */
	uint32_t reply_delay_ns; /* added to every answer (fault injection) */
	unsigned drop_percent;   /* global loss of MADs (fault injection) */
	bool silent_drops;       /* unroutable MADs vanish (hardware) instead of coming back
	                            with status 110 (ibsim) */
	bool lose_traps; /* every trap is lost on its way (UD: nothing guarantees one arrives),
	                    so that the SM finds changes only by polling */
	const struct log *log;
};

struct fs_stats {
	uint64_t mads_in, mads_delivered, sma_answers, bounced, lost, traps_sent;
	uint64_t smp_sets; /* SubnSet requests sent, to SMAs and SMs alike */
	/* SMP requests by method (0 Get, 1 Set) and attribute ID (IBA's SMP attributes are
	 * below 0x40; FS_SMP_ATTRS - 1 counts the rest): what an SM's sweep cost, per attribute */
#define FS_SMP_ATTRS 0x41
	uint64_t smp_by_attr[2][FS_SMP_ATTRS];
};

struct fs_server;

struct fs_server *fs_server_new(struct ev_loop *loop, struct fabric *f,
                                const struct fs_server_opts *o, char *err, size_t errlen);
void fs_server_free(struct fs_server *s);
const struct fs_stats *fs_server_stats(const struct fs_server *s);
struct fs_server_opts *fs_server_opts(struct fs_server *s);
struct fabric *fs_server_fabric(struct fs_server *s);
unsigned fs_server_clients(const struct fs_server *s);

/* Make a port send trap 129 rate times a second while its link is up (0: stop), as a
 * port with a fault that floods the SM. */
int fs_server_babble(struct fs_server *s, uint32_t port, double rate);

/* Run one control command (the control socket's and a script's language); the answer text
 * goes to out. 0 on success. */
int fs_server_command(struct fs_server *s, const char *line, char **out, size_t *outlen);

#endif
