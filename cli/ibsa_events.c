/* ibsa's event commands: the SA's subscriptions (InformInfoRecords), and `events`, which
 * subscribes this port to traps 64 and 65 (or those --trap names) and prints the Reports the
 * SA sends. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "cli/cli.h"
#include "mad/mad_header.h"
#include "mad/sa_records.h"
#include "mad/smp_attrs.h"

int cmd_informinfo(struct cli *c, int argc, char **argv)
{
	if (argc > 1) {
		fprintf(stderr, "ibsa %s: no arguments\n", argv[0]);
		return EXIT_USAGE;
	}
	struct sa_answer ans;
	int rc = sa_query(c, MAD_METHOD_GET_TABLE, MAD_ATTR_INFORM_INFO_RECORD, 0, NULL, 0, &ans,
	                  "informinfo");
	if (rc == EXIT_OK)
		print_records(c, &mad_inform_info_record_layout, &ans, "subscription");
	cli_answer_free(&ans.a);
	return rc;
}

struct events {
	struct cli *c;
	unsigned seen, want;
};

static void on_report(struct mad_dispatcher *d, const struct mad_addr *from, const uint8_t *mad,
                      size_t len, void *ctx)
{
	struct events *ev = ctx;
	struct mad_sa_hdr h;
	if (mad_sa_hdr_decode(mad, len, &h, NULL) < 0 || h.hdr.method != MAD_METHOD_REPORT ||
	    h.hdr.attr_id != MAD_ATTR_NOTICE || len < MAD_SIZE)
		return;
	/* acknowledge first, or the SA sends it again */
	uint8_t resp[MAD_SIZE];
	memcpy(resp, mad, MAD_SIZE);
	resp[3] = MAD_METHOD_REPORT_RESP;
	mad_dispatcher_respond(d, from, resp, MAD_SIZE);
	struct mad_notice n;
	if (mad_notice_decode(mad + MAD_SA_HDR_END, MAD_SIZE - MAD_SA_HDR_END, &n, NULL) < 0)
		return;
	char gid[INET6_ADDRSTRLEN] = "";
	inet_ntop(AF_INET6, n.data_details + 6, gid, sizeof(gid));
	const char *what = n.trap_number == 64    ? "in service"
	                   : n.trap_number == 65  ? "out of service"
	                   : n.trap_number == 66  ? "multicast group created"
	                   : n.trap_number == 67  ? "multicast group deleted"
	                   : n.trap_number == 128 ? "link state change at a switch"
	                   : n.trap_number == 144 ? "capability change"
	                                          : "";
	if (n.trap_number > 67)
		inet_ntop(AF_INET6, n.issuer_gid, gid, sizeof(gid)); /* forwarded: who sent it */
	if (ev->c->json)
		printf("{\"trap\":%u,\"gid\":\"%s\",\"issuer_lid\":%u}\n", n.trap_number, gid,
		       n.issuer_lid);
	else
		printf("trap %u: GID %s %s (from LID %u)\n", n.trap_number, gid, what,
		       n.issuer_lid);
	fflush(stdout);
	ev->seen++;
	if (ev->want && ev->seen >= ev->want)
		ev_break(ev->c->loop, EVBREAK_ALL);
}

static int subscribe(struct cli *c, uint16_t trap, bool on)
{
	struct mad_inform_info in = {
	    .lid_range_begin = 0xffff,
	    .is_generic = 1,
	    .subscribe = on,
	    .type = 0xffff,
	    .trap_number = trap,
	    .qpn = 1,
	    .producer_type = 0xffffff,
	};
	uint8_t req[MAD_SA_DATA_SIZE] = {0};
	mad_inform_info_encode(&in, req, sizeof(req), NULL);
	struct sa_answer ans;
	int rc = sa_query(c, MAD_METHOD_SET, MAD_ATTR_INFORM_INFO, 0, req, sizeof(req), &ans,
	                  on ? "subscribe" : "unsubscribe");
	cli_answer_free(&ans.a);
	return rc;
}

static void on_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

int cmd_events(struct cli *c, int argc, char **argv)
{
	struct events ev = {.c = c};
	double timeout = 0;
	uint16_t traps[16];
	unsigned ntraps = 0;
	for (int i = 1; i < argc; i++) {
		char *e = NULL;
		if (!strcmp(argv[i], "--trap") && i + 1 < argc) {
			unsigned long v = strtoul(argv[++i], &e, 0);
			if (ntraps == 16 || v > 0xffff) {
				fprintf(stderr,
				        "ibsa events: at most 16 traps, each below 65536\n");
				return EXIT_USAGE;
			}
			traps[ntraps++] = (uint16_t)v;
		} else if (!strcmp(argv[i], "--count") && i + 1 < argc)
			ev.want = (unsigned)strtoul(argv[++i], &e, 0);
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			timeout = strtod(argv[++i], &e);
		else {
			fprintf(stderr, "ibsa events: unexpected \"%s\"\n", argv[i]);
			return EXIT_USAGE;
		}
		if (e && *e) {
			fprintf(stderr, "ibsa events: \"%s\" is not a number\n", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (!ntraps) {
		traps[ntraps++] = 64;
		traps[ntraps++] = 65;
	}
	mad_dispatcher_set_handler(c->d, MAD_CLASS_SUBN_ADM, on_report, &ev);
	int rc = EXIT_OK;
	for (unsigned i = 0; i < ntraps && rc == EXIT_OK; i++)
		rc = subscribe(c, traps[i], true);
	if (rc != EXIT_OK)
		return rc;
	if (!c->json) {
		printf("# subscribed to trap");
		for (unsigned i = 0; i < ntraps; i++)
			printf(" %u", traps[i]);
		printf("; waiting for Reports\n");
	}
	fflush(stdout);
	ev_timer t;
	ev_timer_init(&t, on_timeout, timeout, 0.);
	if (timeout > 0)
		ev_timer_start(c->loop, &t);
	ev_run(c->loop, 0);
	ev_timer_stop(c->loop, &t);
	/* leave no subscription behind for a port that will not listen */
	for (unsigned i = 0; i < ntraps; i++)
		subscribe(c, traps[i], false);
	mad_dispatcher_set_handler(c->d, MAD_CLASS_SUBN_ADM, NULL, NULL);
	return ev.want && ev.seen < ev.want ? EXIT_TIMEOUT : EXIT_OK;
}
