/* libmicrohttpd run from the event loop (see httpd.h). */
#include "daemon/httpd.h"

#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <microhttpd.h>

static void schedule(struct httpd *h)
{
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

void httpd_attach(struct httpd *h, struct MHD_Daemon *mhd, struct ev_loop *loop)
{
	h->loop = loop;
	h->mhd = mhd;
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(mhd, MHD_DAEMON_INFO_EPOLL_FD);
	ev_io_init(&h->io, io_cb, di->epoll_fd, EV_READ);
	h->io.data = h;
	ev_io_start(loop, &h->io);
	ev_init(&h->timer, timer_cb);
	h->timer.data = h;
	schedule(h);
}

void httpd_detach(struct httpd *h)
{
	if (!h->mhd)
		return;
	ev_io_stop(h->loop, &h->io);
	ev_timer_stop(h->loop, &h->timer);
	MHD_stop_daemon(h->mhd);
	h->mhd = NULL;
	h->loop = NULL;
}
