/* mcast_churn: many hosts joining and leaving multicast groups at once, through the SA, as
 * IPoIB and RDMA multicast users do; the scenario test then checks the SA's groups and the
 * switches' MFTs against what this tool says membership should be.
 *
 *   mcast_churn --hosts N --groups G --ops M [--seed S] [--members FILE] [--leave-all]
 *
 * Attaches to fabricsim as host-1..host-N (one sim client each), then M times picks a host
 * and a group at random: a join (full member, creating the group when it is the first) if
 * the host is not a member, a leave otherwise. Every answer must be success. Many requests
 * are in flight at once (one per host), so the SA sees them interleaved. With --leave-all,
 * every host leaves every group it is in at the end; --members
 * FILE starts from the memberships an earlier run printed. Prints the resulting membership, one
 * "MGID PORT-GUID" line each, and exits 1 on any unexpected answer.
 *
 *   mcast_churn --step HOST GROUP join|leave
 *
 * One request from host-HOST for group GROUP (created when it is the first join), its status
 * printed as 0xSSSS: the scenarios' single steps, refusals included. */
#include <arpa/inet.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/mad_header.h"
#include "mad/sa_records.h"
#include "mad/transport.h"

#define MAX_HOSTS  126
#define MAX_GROUPS 256

struct host {
	struct mad_transport *t;
	struct mad_local_port lp;
	bool busy;    /* a request is out */
	int group;    /* ... for this group */
	bool joining; /* ... to join (else to leave) */
	uint64_t tid;
};

static void mgid_of(int g, uint8_t *mgid)
{
	/* site-local, transient, a signature of our own: valid for any SA (IBA 4.1.1) */
	static const uint8_t base[16] = {0xff, 0x15, 0x12, 0x34};
	memcpy(mgid, base, 16);
	mgid[14] = (uint8_t)(g >> 8);
	mgid[15] = (uint8_t)g;
}

static int send_req(struct host *h, bool join, int g, uint64_t tid)
{
	struct mad_mcmember_record r = {
	    .qkey = 0x1234, .pkey = 0xffff, .join_state = 1, .scope = 5};
	mgid_of(g, r.mgid);
	mad_bits_set(r.port_gid, 0, 64,
	             h->lp.gid_prefix ? h->lp.gid_prefix : 0xfe80000000000000ull);
	mad_bits_set(r.port_gid, 64, 64, h->lp.port_guid);
	struct mad_sa_hdr sh;
	mad_sa_hdr_init(&sh, join ? MAD_METHOD_SET : MAD_METHOD_DELETE, MAD_ATTR_MCMEMBER_RECORD,
	                0);
	sh.hdr.tid = tid;
	sh.comp_mask = MCM_COMP_MGID | MCM_COMP_PORT_GID | MCM_COMP_JOIN_STATE;
	if (join) /* what creating a group takes (o15-0.1.3) */
		sh.comp_mask |= MCM_COMP_QKEY | MCM_COMP_PKEY | MCM_COMP_SL | MCM_COMP_FLOW_LABEL |
		                MCM_COMP_TCLASS;
	uint8_t mad[MAD_SIZE] = {0};
	mad_sa_hdr_encode(&sh, mad, sizeof(mad), NULL);
	mad_mcmember_record_encode(&r, mad + MAD_SA_HDR_END, MAD_SIZE - MAD_SA_HDR_END, NULL);
	struct mad_addr to = {.lid = h->lp.sm_lid, .qpn = 1, .qkey = QP1_QKEY};
	return h->t->ops->send(h->t, &to, mad, sizeof(mad), 0);
}

static int step(int host, int g, bool join)
{
	struct host h = {0};
	char node[32], err[256];
	snprintf(node, sizeof(node), "host-%d", host);
	struct mad_transport_opts topts = {.sim_node = node};
	if (g < 0 || g >= MAX_GROUPS ||
	    mad_transport_open_sim(&topts, &h.t, err, sizeof(err)) < 0 ||
	    h.t->ops->query_port(h.t, &h.lp) < 0) {
		fprintf(stderr, "mcast_churn: %s: %s\n", node,
		        g < 0 || g >= MAX_GROUPS ? "group" : err);
		return 2;
	}
	int rc = 1;
	if (send_req(&h, join, g, 0x20000) < 0) {
		fprintf(stderr, "mcast_churn: %s: send failed\n", node);
		goto out;
	}
	struct pollfd p = {.fd = h.t->ops->fd(h.t), .events = POLLIN};
	while (rc && poll(&p, 1, 5000) > 0) {
		uint8_t mad[MAD_SIZE];
		struct mad_addr from;
		size_t len;
		unsigned flags;
		struct mad_sa_hdr sh;
		while (rc && h.t->ops->recv(h.t, &from, mad, sizeof(mad), &len, &flags) > 0) {
			if (mad_sa_hdr_decode(mad, len, &sh, NULL) < 0 ||
			    (sh.hdr.tid & 0xffffffffull) != 0x20000)
				continue;
			printf("0x%04x\n", sh.hdr.status);
			rc = 0;
		}
	}
	if (rc)
		fprintf(stderr, "mcast_churn: %s: no answer in 5 s\n", node);
out:
	mad_transport_close(h.t);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "--step"))
		return step(atoi(argv[2]), atoi(argv[3]), !strcmp(argv[4], "join"));
	int nhosts = 10, ngroups = 10, ops = 100;
	unsigned seed = 1;
	bool leave_all = false;
	static const struct option longopts[] = {{"hosts", required_argument, NULL, 'n'},
	                                         {"groups", required_argument, NULL, 'g'},
	                                         {"ops", required_argument, NULL, 'o'},
	                                         {"seed", required_argument, NULL, 's'},
	                                         {"leave-all", no_argument, NULL, 'l'},
	                                         {"members", required_argument, NULL, 'm'},
	                                         {NULL, 0, NULL, 0}};
	const char *members_file = NULL;
	int o;
	while ((o = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (o) {
		case 'n': nhosts = atoi(optarg); break;
		case 'g': ngroups = atoi(optarg); break;
		case 'o': ops = atoi(optarg); break;
		case 's': seed = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'l': leave_all = true; break;
		case 'm': members_file = optarg; break;
		default:
			fprintf(stderr,
			        "usage: mcast_churn --hosts N --groups G --ops M [--seed S] "
			        "[--leave-all]\n");
			return 2;
		}
	}
	if (nhosts < 1 || nhosts > MAX_HOSTS || ngroups < 1 || ngroups > MAX_GROUPS) {
		fprintf(stderr, "mcast_churn: 1..%d hosts, 1..%d groups\n", MAX_HOSTS, MAX_GROUPS);
		return 2;
	}
	static struct host hosts[MAX_HOSTS];
	static bool member[MAX_HOSTS][MAX_GROUPS];
	for (int i = 0; i < nhosts; i++) {
		char node[32], err[256];
		snprintf(node, sizeof(node), "host-%d", i + 1);
		struct mad_transport_opts topts = {.sim_node = node};
		if (mad_transport_open_sim(&topts, &hosts[i].t, err, sizeof(err)) < 0 ||
		    hosts[i].t->ops->query_port(hosts[i].t, &hosts[i].lp) < 0) {
			fprintf(stderr, "mcast_churn: %s: %s\n", node, err);
			return 1;
		}
	}
	if (members_file) { /* what an earlier run left: "MGID PORT-GUID" lines */
		FILE *f = fopen(members_file, "r");
		if (!f) {
			perror(members_file);
			return 1;
		}
		char ms[64];
		unsigned long long guid;
		while (fscanf(f, "%63s %llx", ms, &guid) == 2) {
			for (int g = 0; g < ngroups; g++) {
				uint8_t mgid[16];
				char s2[64];
				mgid_of(g, mgid);
				inet_ntop(AF_INET6, mgid, s2, sizeof(s2));
				for (int i = 0; i < nhosts && !strcmp(ms, s2); i++)
					if (hosts[i].lp.port_guid == guid)
						member[i][g] = true;
			}
		}
		fclose(f);
	}
	srand(seed);
	int sent = 0, done = 0, bad = 0, lost = 0;
	uint64_t tid = 0x10000;
	struct pollfd *pfd = calloc((size_t)nhosts, sizeof(*pfd));
	int phase_ops = ops;
	for (int phase = 0; phase < (leave_all ? 2 : 1); phase++) {
		static int cursor[MAX_HOSTS]; /* leave-all: the next group each host looks at */
		sent = done = 0;
		for (;;) {
			/* keep every idle host busy until the phase's work is given out */
			for (int i = 0; i < nhosts; i++) {
				struct host *h = &hosts[i];
				if (h->busy)
					continue;
				int g = -1;
				bool join = false;
				if (phase == 0 && sent < phase_ops) {
					g = rand() % ngroups;
					join = !member[i][g];
				} else if (phase == 1) {
					while (cursor[i] < ngroups && !member[i][cursor[i]])
						cursor[i]++;
					if (cursor[i] < ngroups)
						g = cursor[i]++;
				}
				if (g < 0)
					continue;
				h->busy = true;
				h->group = g;
				h->joining = join;
				h->tid = ++tid;
				if (send_req(h, join, g, h->tid) < 0) {
					fprintf(stderr, "mcast_churn: host-%d: send failed\n",
					        i + 1);
					return 1;
				}
				sent++;
			}
			int busy = 0;
			for (int i = 0; i < nhosts; i++) {
				pfd[i] = (struct pollfd){.fd = hosts[i].t->ops->fd(hosts[i].t),
				                         .events = POLLIN};
				busy += hosts[i].busy;
			}
			if (!busy)
				break;
			int r = poll(pfd, (nfds_t)nhosts, 5000);
			if (r == 0) {
				fprintf(stderr, "mcast_churn: no answer in 5 s (%d outstanding)\n",
				        busy);
				lost += busy;
				break;
			}
			for (int i = 0; i < nhosts; i++) {
				struct host *h = &hosts[i];
				if (!(pfd[i].revents & POLLIN))
					continue;
				uint8_t mad[MAD_SIZE];
				struct mad_addr from;
				size_t len;
				unsigned flags;
				while (h->t->ops->recv(h->t, &from, mad, sizeof(mad), &len,
				                       &flags) > 0) {
					struct mad_sa_hdr sh;
					if (mad_sa_hdr_decode(mad, len, &sh, NULL) < 0 ||
					    !h->busy ||
					    (sh.hdr.tid & 0xffffffffull) !=
					        (h->tid & 0xffffffffull))
						continue;
					h->busy = false;
					done++;
					struct mad_mcmember_record a;
					mad_mcmember_record_decode(mad + MAD_SA_HDR_END,
					                           len - MAD_SA_HDR_END, &a, NULL);
					if (sh.hdr.status || (flags & MAD_RECV_SEND_FAILED)) {
						fprintf(stderr,
						        "mcast_churn: host-%d %s group %d: status "
						        "0x%04x\n",
						        i + 1, h->joining ? "join" : "leave",
						        h->group, sh.hdr.status);
						bad++;
						continue;
					}
					if (h->joining && (a.join_state & 1) != 1) {
						fprintf(stderr,
						        "mcast_churn: host-%d joined group %d, "
						        "answer says JoinState 0x%x\n",
						        i + 1, h->group, a.join_state);
						bad++;
					}
					member[i][h->group] = h->joining;
				}
			}
		}
	}
	for (int g = 0; g < ngroups; g++) {
		uint8_t mgid[16];
		char s[64];
		mgid_of(g, mgid);
		inet_ntop(AF_INET6, mgid, s, sizeof(s));
		for (int i = 0; i < nhosts; i++)
			if (member[i][g])
				printf("%s 0x%016llx\n", s,
				       (unsigned long long)hosts[i].lp.port_guid);
	}
	for (int i = 0; i < nhosts; i++)
		mad_transport_close(hosts[i].t);
	free(pfd);
	fprintf(stderr,
	        "mcast_churn: %d hosts, %d groups: %d operations answered, %d refused, %d "
	        "unanswered\n",
	        nhosts, ngroups, done, bad, lost);
	return bad || lost ? 1 : 0;
}
