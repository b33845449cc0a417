/* libmicrohttpd inside our event loop, shared by the metrics endpoint and the partition API:
 * MHD's epoll descriptor is one more ev_io and its connection timeouts an ev_timer, MHD_run
 * does the work, so no HTTP handler ever runs beside the SM on another thread. The listening
 * socket is ours (MHD started with MHD_USE_NO_LISTEN_SOCKET): see accept_cb for why. */
#ifndef IBSMD_DAEMON_HTTPD_H
#define IBSMD_DAEMON_HTTPD_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "util/log.h"

struct MHD_Daemon;

/* The limits an MHD daemon was started with, for the lines saying which one refused. */
struct httpd_limits {
	unsigned total, per_address;
	const char *per_address_knob; /* the setting that raises per_address, or NULL */
};

struct httpd {
	struct ev_loop *loop; /* NULL: not attached */
	struct MHD_Daemon *mhd;
	int listen_fd; /* meaningful only when listening */
	bool listening;
	ev_io io;       /* libmicrohttpd's epoll descriptor */
	ev_io accept;   /* the listening socket */
	ev_timer timer; /* its connection timeouts */
	ev_timer pause; /* accepting again after running out of descriptors */
	const struct log *log;
	const char *subsys; /* "api", "metrics": who logs a refused connection */
	struct httpd_limits limits;
	struct log_rl rl_refused;
};

/* "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT" (every address) into ss. 0, or -1 with why. */
int httpd_parse_listen(const char *spec, struct sockaddr_storage *ss, char *why, size_t len);
/* Only this machine can reach the address (127.0.0.0/8, ::1, ::ffff:127.x): where plain
 * HTTP carries no password across a network. */
bool httpd_is_loopback(const struct sockaddr_storage *ss);
/* Open the listening socket on ss (h zeroed before). 0, or -1 with why (errno's words). */
int httpd_listen(struct httpd *h, const struct sockaddr_storage *ss, char *why, size_t len);
/* Run an MHD daemon started with MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET from loop, fed the
 * connections httpd_listen's socket accepts; refusals logged as subsys (a literal). */
void httpd_attach(struct httpd *h, struct MHD_Daemon *mhd, struct ev_loop *loop,
                  const struct log *lg, const char *subsys, struct httpd_limits limits);
/* Stop the daemon, if attached, and close the listening socket, if open. */
void httpd_detach(struct httpd *h);

#endif
