/* libmicrohttpd run from the event loop (see httpd.h). */
#include "daemon/httpd.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

static unsigned connections(struct httpd *h)
{
	const union MHD_DaemonInfo *di =
	    MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return di ? di->num_connections : 0;
}

/* After an MHD_run: its next timeout; accepting again if a full daemon has room now. */
static void schedule(struct httpd *h)
{
	if (!ev_is_active(&h->accept) && !ev_is_active(&h->pause) &&
	    connections(h) < h->limits.total)
		ev_io_start(h->loop, &h->accept);
	MHD_UNSIGNED_LONG_LONG ms;
	ev_timer_stop(h->loop, &h->timer);
	if (MHD_get_timeout(h->mhd, &ms) == MHD_YES) {
		ev_timer_set(&h->timer, (double)ms / 1000., 0.);
		ev_timer_start(h->loop, &h->timer);
	}
}

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	struct httpd *h = w->data;
	MHD_run(h->mhd);
	schedule(h);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct httpd *h = w->data;
	MHD_run(h->mhd);
	schedule(h);
}

static void peer_name(const struct sockaddr_storage *ss, socklen_t len, char *out, size_t n)
{
	if (getnameinfo((const struct sockaddr *)ss, len, out, (socklen_t)n, NULL, 0,
	                NI_NUMERICHOST))
		snprintf(out, n, "?");
}

/* A connection MHD closed as soon as it was added: over a limit (ENFILE), or no memory. */
static void refused(struct httpd *h, const struct sockaddr_storage *peer, socklen_t len, int err)
{
	char who[64], why[160];
	peer_name(peer, len, who, sizeof(who));
	if (err != ENFILE)
		snprintf(why, sizeof(why), "%s", strerror(err));
	else if (connections(h) >= h->limits.total)
		snprintf(why, sizeof(why), "all %u connections are in use", h->limits.total);
	else
		snprintf(why, sizeof(why), "that address holds %u already%s%s%s",
		         h->limits.per_address, h->limits.per_address_knob ? " (" : "",
		         h->limits.per_address_knob ? h->limits.per_address_knob : "",
		         h->limits.per_address_knob ? ")" : "");
	log_rl(h->log, &h->rl_refused, LOGL_WARN, h->subsys,
	       "connection from %s closed at once: %s", who, why);
}

/* Take what the listening socket has, up to room (and 64 a turn, for the loop's fairness):
 * the count taken; the pause timer started when the process is out of descriptors. */
static unsigned take(struct httpd *h, unsigned room, int *fds, struct sockaddr_storage *peers,
                     socklen_t *lens)
{
	unsigned n = 0;
	while (n < room) {
		lens[n] = sizeof(peers[n]);
		int fd = accept4(h->listen_fd, (struct sockaddr *)&peers[n], &lens[n],
		                 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			fds[n++] = fd;
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			/* out of descriptors or memory: the socket stays readable, so pause
			 * rather than spin */
			log_rl(h->log, &h->rl_refused, LOGL_WARN, h->subsys,
			       "cannot accept a connection: %s; trying again in 1 s",
			       strerror(errno));
			ev_io_stop(h->loop, &h->accept);
			ev_timer_start(h->loop, &h->pause);
		}
		break;
	}
	return n;
}

/* Accept what the listening socket has and hand it to MHD. Ours, not MHD's, for the order:
 * MHD's own loop accepts first and only then reads its connections, so a client that closed
 * its last connection and opened the next while our loop was busy (a routing run, a loaded
 * machine) still counted the closed one against its address and was reset at once; an
 * orchestrator's ten workers did. Here the connections are taken first, MHD_run then reads
 * every close their clients sent before connecting, and only then are they added. Beyond the
 * total limit they wait in the kernel's backlog, as with MHD's loop, till one ends. */
static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)revents;
	struct httpd *h = w->data;
	if (connections(h) >= h->limits.total)
		MHD_run(h->mhd); /* closes not read yet may free places */
	unsigned open = connections(h);
	if (open >= h->limits.total) {
		ev_io_stop(loop, &h->accept); /* schedule() starts it again */
		schedule(h);
		return;
	}
	int fds[64];
	struct sockaddr_storage peers[64];
	socklen_t lens[64];
	unsigned room = h->limits.total - open < 64 ? h->limits.total - open : 64;
	unsigned n = take(h, room, fds, peers, lens);
	MHD_run(h->mhd);
	for (unsigned i = 0; i < n; i++)
		if (MHD_add_connection(h->mhd, fds[i], (struct sockaddr *)&peers[i], lens[i]) !=
		    MHD_YES)
			refused(h, &peers[i], lens[i], errno); /* MHD closed it */
	MHD_run(h->mhd); /* the new connections' first bytes are there already */
	schedule(h);
}

static void pause_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)revents;
	struct httpd *h = w->data;
	ev_io_start(loop, &h->accept);
}

int httpd_listen(struct httpd *h, const struct sockaddr_storage *ss, char *why, size_t len)
{
	socklen_t sl =
	    ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	int one = 1;
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    (ss->ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    bind(fd, (const struct sockaddr *)ss, sl) < 0 || listen(fd, SOMAXCONN) < 0) {
		snprintf(why, len, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	h->listen_fd = fd;
	h->listening = true;
	return 0;
}

int httpd_parse_listen(const char *spec, struct sockaddr_storage *ss, char *why, size_t len)
{
	char host[128];
	const char *port;
	if (spec[0] == '[') {
		const char *end = strchr(spec, ']');
		if (!end || end[1] != ':') {
			snprintf(why, len, "\"%s\": [ADDRESS]:PORT", spec);
			return -1;
		}
		snprintf(host, sizeof(host), "%.*s", (int)(end - spec - 1), spec + 1);
		port = end + 2;
	} else {
		const char *colon = strrchr(spec, ':');
		if (!colon) {
			snprintf(why, len, "\"%s\": ADDRESS:PORT (or :PORT for every address)",
			         spec);
			return -1;
		}
		snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
		port = colon + 1;
	}
	struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	                         .ai_socktype = SOCK_STREAM},
	                *res = NULL;
	int rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (rc) {
		snprintf(why, len, "\"%s\": %s", spec, gai_strerror(rc));
		return -1;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

bool httpd_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

void httpd_attach(struct httpd *h, struct MHD_Daemon *mhd, struct ev_loop *loop,
                  const struct log *lg, const char *subsys, struct httpd_limits limits)
{
	h->limits = limits;
	h->loop = loop;
	h->mhd = mhd;
	h->log = lg;
	h->subsys = subsys;
	h->rl_refused = LOG_RL_DEFAULT;
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(mhd, MHD_DAEMON_INFO_EPOLL_FD);
	ev_io_init(&h->io, io_cb, di->epoll_fd, EV_READ);
	h->io.data = h;
	ev_io_start(loop, &h->io);
	ev_io_init(&h->accept, accept_cb, h->listen_fd, EV_READ);
	h->accept.data = h;
	ev_io_start(loop, &h->accept);
	ev_timer_init(&h->pause, pause_cb, 1., 0.);
	h->pause.data = h;
	ev_init(&h->timer, timer_cb);
	h->timer.data = h;
	schedule(h);
}

void httpd_detach(struct httpd *h)
{
	if (h->mhd) {
		ev_io_stop(h->loop, &h->io);
		ev_io_stop(h->loop, &h->accept);
		ev_timer_stop(h->loop, &h->pause);
		ev_timer_stop(h->loop, &h->timer);
		MHD_stop_daemon(h->mhd);
		h->mhd = NULL;
		h->loop = NULL;
	}
	if (h->listening)
		close(h->listen_fd);
	h->listening = false;
}
