/* libmicrohttpd inside our event loop, shared by the metrics endpoint and the partition API:
 * MHD's epoll descriptor is one more ev_io and its connection timeouts an ev_timer, MHD_run
 * does the work, so no HTTP handler ever runs beside the SM on another thread. */
#ifndef IBSMD_DAEMON_HTTPD_H
#define IBSMD_DAEMON_HTTPD_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

struct MHD_Daemon;

struct httpd {
	struct ev_loop *loop; /* NULL: not attached */
	struct MHD_Daemon *mhd;
	ev_io io;       /* libmicrohttpd's epoll descriptor */
	ev_timer timer; /* its connection timeouts */
};

/* "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT" (every address) into ss. 0, or -1 with why. */
int httpd_parse_listen(const char *spec, struct sockaddr_storage *ss, char *why, size_t len);
/* Only this machine can reach the address (127.0.0.0/8, ::1, ::ffff:127.x): where plain
 * HTTP carries no password across a network. */
bool httpd_is_loopback(const struct sockaddr_storage *ss);
/* Run an MHD daemon started with MHD_USE_EPOLL from loop; httpd_detach stops it too. */
void httpd_attach(struct httpd *h, struct MHD_Daemon *mhd, struct ev_loop *loop);
void httpd_detach(struct httpd *h);

#endif
