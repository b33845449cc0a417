/* The partition API: the REST requests ib-kubernetes's UFM plugin sends, answered in UFM's
 * shapes, over HTTPS (libmicrohttpd with GnuTLS) with HTTP Basic authentication against
 * api_users_file. The partition operations themselves are sm/tenants.h's. */
#ifndef IBSMD_DAEMON_API_H
#define IBSMD_DAEMON_API_H

#include <ev.h>

#include "daemon/api_parse.h"
#include "daemon/control.h"
#include "daemon/httpd.h"

struct api {
	struct control *ctl; /* the daemon's parts: SM, configuration, log */
	struct httpd http;
	struct api_users users;
	char *cert, *key; /* PEM, held for libmicrohttpd as long as it serves */
	/* client-triggered lines: wrong credentials, refused requests, accepted changes */
	struct log_rl rl_auth, rl_bad, rl_change;
	/* full password checks (crypto_pwhash_str_verify, tens of ms each on the event loop):
	 * a few per second, so that wrong passwords cannot stall the SM */
	struct log_rl verify_bucket;
	uint64_t served, unauthorized;
};

/* Serve what api_listen names, if anything. 0; -1 (logged, saying why) when the API is
 * configured but cannot be served as configured (plain HTTP off loopback, a users file
 * others can read, a certificate missing): the daemon refuses to start rather than run
 * without the API an orchestrator depends on, or with it open. */
int api_start(struct api *a, struct control *ctl, struct ev_loop *loop);
void api_stop(struct api *a);

#endif
