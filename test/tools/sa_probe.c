/* sa_probe: send the SA deliberately malformed or awkward requests and print the status of
 * each answer, one line per case: "NAME STATUS" (STATUS in hex, or "timeout"). Used by the
 * scenario tests to check the SA answers the right status and keeps serving.
 * sa_probe --flood N: N table requests at once from a client that never acknowledges.
 * sa_probe --path-burst N: N whole-fabric PathRecord tables, then a Get (see path_burst).
 * sa_probe --trap LIDADDR PORT N: N traps 129 to the SM naming LIDADDR's port PORT (see
 * send_traps).
 * sa_probe --node-burst N: N NodeRecord GetTables at once, never acknowledged; prints
 * "nodes ANSWERED REFUSED LOST" (see node_burst).
 * sa_probe --path-table all|own: one PathRecord GetTable, of every pair or of this port's
 * paths (SLID), never acknowledged; prints "table STATUS" of its first answer (see
 * path_table). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/dispatcher.h"
#include "mad/mad_header.h"
#include "mad/sa_records.h"
#include "mad/smp_attrs.h"

/* The scenario tests' IBSMD_TEST_SLOW: a silence of ms means no answer is coming, on a
 * machine that much slower only after ms times it. */
static int slow_ms(int ms)
{
	const char *s = getenv("IBSMD_TEST_SLOW");
	double f = s ? atof(s) : 1.;
	return f > 1. && f < 100. ? (int)(ms * f) : ms;
}

struct probe {
	bool done;
	int error;
	uint16_t status;
	uint8_t method;
	size_t len;
};

static void on_done(struct mad_dispatcher *d, const struct mad_result *r, void *ctx)
{
	(void)d;
	struct probe *p = ctx;
	p->done = true;
	p->error = r->error;
	p->status = r->status;
	p->method = r->mad && r->len > 3 ? r->mad[3] : 0;
	p->len = r->len;
}

static void ask(struct ev_loop *loop, struct mad_dispatcher *d, uint16_t sm_lid, const char *name,
                const uint8_t *mad, size_t len)
{
	struct probe p = {0};
	struct mad_request rq = {.to = {.lid = sm_lid, .qpn = 1, .qkey = QP1_QKEY},
	                         .mad = mad,
	                         .len = len,
	                         .timeout_ms = 500,
	                         .retries = 1,
	                         .cb = on_done,
	                         .ctx = &p};
	if (mad_dispatcher_send(d, &rq) < 0) {
		printf("%s refused\n", name);
		return;
	}
	while (!p.done)
		ev_run(loop, EVRUN_ONCE);
	if (p.error)
		printf("%s timeout\n", name);
	else
		printf("%s 0x%04x method 0x%02x len %zu\n", name, p.status, p.method, p.len);
	fflush(stdout);
}

static size_t request(uint8_t *buf, uint8_t method, uint16_t attr, uint64_t mask, const void *rec,
                      size_t reclen)
{
	struct mad_sa_hdr h;
	mad_sa_hdr_init(&h, method, attr, mask);
	memset(buf, 0, MAD_SIZE);
	mad_sa_hdr_encode(&h, buf, MAD_SIZE, NULL);
	if (rec)
		memcpy(buf + MAD_SA_HDR_END, rec, reclen);
	return MAD_SIZE;
}

/* A table refused: BUSY (the SA's room) or NO_RESOURCES (the port's share). */
static bool refused(const uint8_t *mad)
{
	uint16_t st = (uint16_t)mad_bits_get(mad, 32, 16);
	return (st & MAD_STATUS_BUSY) || st == MAD_STATUS_SA_NO_RESOURCES;
}

struct flood {
	int n, answered, refused;
	bool *seen;
};

/* Take what has arrived: the first MAD of each answer counts (the rest are resent segments
 * of tables never acknowledged). */
static void flood_drain(struct mad_transport *t, struct flood *f)
{
	uint8_t buf[MAD_SIZE];
	struct mad_addr from;
	size_t len;
	unsigned flags;
	while (t->ops->recv(t, &from, buf, sizeof(buf), &len, &flags) > 0) {
		uint64_t tid = mad_bits_get(buf, 64, 64) & 0xffffffffull;
		int i = (int)(tid - 0x7000000ull);
		if (i < 0 || i >= f->n || f->seen[i])
			continue;
		f->seen[i] = true;
		if (refused(buf))
			f->refused++;
		else
			f->answered++;
	}
}

/* n GetTables of all NodeRecords at once, from a client that never acknowledges a segment:
 * the SA's transfers pile up. Prints "flood ANSWERED REFUSED UNANSWERED". The probe reads
 * between its sends: the SA's segments would otherwise fill its socket and push out the
 * answers it counts. */
static int flood(struct mad_transport *t, const struct mad_local_port *lp, int n)
{
	if (n < 1 || n > 100000)
		return 2;
	struct flood f = {.n = n, .seen = calloc((size_t)n, 1)};
	if (!f.seen)
		return 1;
	uint8_t m[MAD_SIZE];
	for (int i = 0; i < n; i++) {
		request(m, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0);
		mad_bits_set(m, 64, 64, 0x7000000ull + (uint64_t)i); /* TID */
		struct mad_addr to = {.lid = lp->sm_lid, .qpn = 1, .qkey = QP1_QKEY};
		while (t->ops->send(t, &to, m, MAD_SIZE, 0) == -EAGAIN) {
			flood_drain(t, &f);
			usleep(1000);
		}
		flood_drain(t, &f);
	}
	struct pollfd p = {.fd = t->ops->fd(t), .events = POLLIN};
	while (f.answered + f.refused < n && poll(&p, 1, slow_ms(3000)) > 0)
		flood_drain(t, &f);
	free(f.seen);
	printf("flood %d %d %d\n", f.answered, f.refused, n - f.answered - f.refused);
	return 0;
}

/* n PathRecord GetTables of every pair (component mask 0) at once, then one NodeRecord Get:
 * the SA must answer the Get while it builds the tables, not after. Prints "burst TABLES
 * BUSY UNANSWERED BUILT_BEFORE_GET GET_STATUS": tables answered with records, refused BUSY,
 * not answered, tables answered with records before the Get's answer came (-1: no answer
 * to the Get), and the Get's status. */
static int path_burst(struct mad_transport *t, const struct mad_local_port *lp, int n)
{
	if (n < 1 || n > 1000)
		return 2;
	uint8_t m[MAD_SIZE];
	struct mad_addr to = {.lid = lp->sm_lid, .qpn = 1, .qkey = QP1_QKEY};
	for (int i = 0; i < n; i++) {
		request(m, MAD_METHOD_GET_TABLE, MAD_ATTR_PATH_RECORD, 0, NULL, 0);
		mad_bits_set(m, 64, 64, 0x7100000ull + (uint64_t)i);
		while (t->ops->send(t, &to, m, MAD_SIZE, 0) == -EAGAIN)
			usleep(1000);
	}
	request(m, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1,
	        (uint8_t[2]){(uint8_t)(lp->lid >> 8), (uint8_t)lp->lid}, 2);
	mad_bits_set(m, 64, 64, 0x7200000ull); /* TID */
	while (t->ops->send(t, &to, m, MAD_SIZE, 0) == -EAGAIN)
		usleep(1000);
	bool *seen = calloc((size_t)n, 1);
	if (!seen)
		return 1;
	int tables = 0, busy = 0, before = -1, get_status = -1;
	struct pollfd p = {.fd = t->ops->fd(t), .events = POLLIN};
	while ((tables + busy < n || get_status < 0) && poll(&p, 1, slow_ms(20000)) > 0) {
		uint8_t buf[MAD_SIZE];
		struct mad_addr from;
		size_t len;
		unsigned flags;
		while (t->ops->recv(t, &from, buf, sizeof(buf), &len, &flags) > 0) {
			uint64_t tid = mad_bits_get(buf, 64, 64) & 0xffffffffull;
			unsigned st = (unsigned)mad_bits_get(buf, 32, 16);
			if (tid == 0x7200000ull && get_status < 0) {
				get_status = (int)st;
				before = tables;
				continue;
			}
			int i = (int)(tid - 0x7100000ull);
			if (i < 0 || i >= n || seen[i])
				continue;
			seen[i] = true;
			if (st & MAD_STATUS_BUSY)
				busy++;
			else
				tables++;
		}
	}
	free(seen);
	printf("burst %d %d %d %d 0x%04x\n", tables, busy, n - tables - busy, before,
	       get_status < 0 ? 0xffff : get_status);
	return 0;
}

/* n NodeRecord tables at once, whose segments are never acknowledged (their transfers stay
 * under way at the SA until it gives them up): how many were answered, refused (BUSY or
 * NO_RESOURCES) or not at all. */
static int node_burst(struct mad_transport *t, const struct mad_local_port *lp, int n)
{
	if (n < 1 || n > 1000)
		return 2;
	uint8_t m[MAD_SIZE];
	struct mad_addr to = {.lid = lp->sm_lid, .qpn = 1, .qkey = QP1_QKEY};
	for (int i = 0; i < n; i++) {
		request(m, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0);
		mad_bits_set(m, 64, 64, 0x7400000ull + (uint64_t)i);
		while (t->ops->send(t, &to, m, MAD_SIZE, 0) == -EAGAIN)
			usleep(1000);
	}
	bool *seen = calloc((size_t)n, 1);
	if (!seen)
		return 1;
	int answered = 0, nrefused = 0;
	struct pollfd p = {.fd = t->ops->fd(t), .events = POLLIN};
	while (answered + nrefused < n && poll(&p, 1, slow_ms(5000)) > 0) {
		uint8_t buf[MAD_SIZE];
		struct mad_addr from;
		size_t len;
		unsigned flags;
		while (t->ops->recv(t, &from, buf, sizeof(buf), &len, &flags) > 0) {
			int i = (int)((mad_bits_get(buf, 64, 64) & 0xffffffffull) - 0x7400000ull);
			if (i < 0 || i >= n || seen[i])
				continue;
			seen[i] = true;
			if (refused(buf))
				nrefused++;
			else
				answered++;
		}
	}
	free(seen);
	printf("nodes %d %d %d\n", answered, nrefused, n - answered - nrefused);
	return 0;
}

/* One PathRecord table: every pair (mask 0) or this port's (SLID); the status of its
 * first answer, waiting up to 5 minutes (a whole-fabric table of a large fabric is built a
 * slice at a time). Segments are never acknowledged: the status is what is wanted. */
static int path_table(struct mad_transport *t, const struct mad_local_port *lp, bool own)
{
	uint8_t m[MAD_SIZE], rec[64] = {0};
	struct mad_path_record q = {.slid = lp->lid};
	mad_path_record_encode(&q, rec, sizeof(rec), NULL);
	request(m, MAD_METHOD_GET_TABLE, MAD_ATTR_PATH_RECORD, own ? PR_COMP_SLID : 0, rec,
	        sizeof(rec));
	mad_bits_set(m, 64, 64, 0x7300000ull);
	struct mad_addr to = {.lid = lp->sm_lid, .qpn = 1, .qkey = QP1_QKEY};
	while (t->ops->send(t, &to, m, MAD_SIZE, 0) == -EAGAIN)
		usleep(1000);
	struct pollfd p = {.fd = t->ops->fd(t), .events = POLLIN};
	while (poll(&p, 1, slow_ms(300000)) > 0) {
		uint8_t buf[MAD_SIZE];
		struct mad_addr from;
		size_t len;
		unsigned flags;
		while (t->ops->recv(t, &from, buf, sizeof(buf), &len, &flags) > 0) {
			if ((mad_bits_get(buf, 64, 64) & 0xffffffffull) != 0x7300000ull)
				continue;
			printf("table 0x%04x\n", (unsigned)mad_bits_get(buf, 32, 16));
			return 0;
		}
	}
	printf("table timeout\n");
	return 1;
}

/* n traps 129 (local link integrity) to the SM's QP0, LID-routed from this port, naming
 * LIDADDR's port PORT: a host that lies about whose port is in trouble, to get another's
 * link disabled. Prints "traps N". */
static int send_traps(struct mad_transport *t, const struct mad_local_port *lp, uint16_t lidaddr,
                      uint8_t port, int n)
{
	if (n < 1 || n > 1000000)
		return 2;
	struct mad_notice no = {.is_generic = 1,
	                        .type = 1,
	                        .producer_type = 1,
	                        .trap_number = 129,
	                        .issuer_lid = lidaddr};
	no.data_details[2] = (uint8_t)(lidaddr >> 8);
	no.data_details[3] = (uint8_t)lidaddr;
	no.data_details[5] = port;
	uint8_t notice[80] = {0};
	mad_notice_encode(&no, notice, sizeof(notice), NULL);
	struct mad_addr to = {.lid = lp->sm_lid, .qpn = 0};
	int sent = 0;
	uint8_t buf[MAD_SIZE];
	struct mad_addr from;
	size_t len;
	unsigned flags;
	for (int i = 0; i < n; i++) {
		struct mad_smp smp;
		mad_smp_init_lid(&smp, MAD_METHOD_TRAP, MAD_ATTR_NOTICE, 0);
		smp.hdr.tid = 0x7300000ull + (uint64_t)i;
		memcpy(smp.data, notice, sizeof(smp.data));
		uint8_t m[MAD_SIZE];
		mad_smp_encode(&smp, m, sizeof(m), NULL);
		while (t->ops->send(t, &to, m, MAD_SIZE, 0) == -EAGAIN)
			usleep(1000);
		sent++;
		while (t->ops->recv(t, &from, buf, sizeof(buf), &len, &flags) > 0)
			;
	}
	/* The represses go to this port's SMA, not here. A NodeInfo Get to the SM's port,
	 * answered after the traps were taken in order, tells that none is still on its way
	 * when this client leaves the simulator. */
	struct mad_smp smp;
	mad_smp_init_lid(&smp, MAD_METHOD_GET, MAD_ATTR_NODE_INFO, 0);
	smp.hdr.tid = 0x7400000ull;
	uint8_t m[MAD_SIZE];
	mad_smp_encode(&smp, m, sizeof(m), NULL);
	while (t->ops->send(t, &to, m, MAD_SIZE, 0) == -EAGAIN)
		usleep(1000);
	bool answered = false;
	struct pollfd p = {.fd = t->ops->fd(t), .events = POLLIN};
	while (!answered && poll(&p, 1, slow_ms(2000)) > 0)
		while (t->ops->recv(t, &from, buf, sizeof(buf), &len, &flags) > 0)
			answered |= (mad_bits_get(buf, 64, 64) & 0xffffffffull) == 0x7400000ull;
	printf("traps %d%s\n", sent, answered ? "" : " (the SM's port did not answer after)");
	return 0;
}

int main(int argc, char **argv)
{
	struct log lg;
	log_init(&lg);
	lg.level = LOGL_ERR;
	struct mad_transport_opts to = {.log = &lg};
	struct mad_transport *t;
	char err[256];
	if (mad_transport_open("sim", &to, &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "sa_probe: %s\n", err);
		return 3;
	}
	struct mad_local_port lp;
	t->ops->query_port(t, &lp);
	if (!lp.sm_lid) {
		fprintf(stderr, "sa_probe: no SM LID on the local port\n");
		mad_transport_close(t);
		return 3;
	}
	if (argc == 3 && !strcmp(argv[1], "--path-burst")) {
		int rc = path_burst(t, &lp, atoi(argv[2]));
		mad_transport_close(t);
		return rc;
	}
	if (argc == 5 && !strcmp(argv[1], "--trap")) {
		int rc = send_traps(t, &lp, (uint16_t)strtoul(argv[2], NULL, 0),
		                    (uint8_t)atoi(argv[3]), atoi(argv[4]));
		mad_transport_close(t);
		return rc;
	}
	if (argc == 3 && !strcmp(argv[1], "--node-burst")) {
		int rc = node_burst(t, &lp, atoi(argv[2]));
		mad_transport_close(t);
		return rc;
	}
	if (argc == 3 && !strcmp(argv[1], "--path-table")) {
		int rc = path_table(t, &lp, !strcmp(argv[2], "own"));
		mad_transport_close(t);
		return rc;
	}
	if (argc == 3 && !strcmp(argv[1], "--flood")) {
		int rc = flood(t, &lp, atoi(argv[2]));
		mad_transport_close(t);
		return rc;
	}
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct mad_dispatcher_opts o = {.log = &lg};
	struct mad_dispatcher *d = mad_dispatcher_new(loop, t, &o);
	uint8_t m[MAD_SIZE];
	size_t n;

	/* a fine request first, as a reference */
	n = request(m, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1, (uint8_t[2]){0, (uint8_t)lp.lid},
	            2);
	ask(loop, d, lp.sm_lid, "good-get", m, n);
	/* a component mask with bits beyond the record's components */
	n = request(m, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 1ull << 40, NULL, 0);
	ask(loop, d, lp.sm_lid, "bad-mask", m, n);
	/* a record cut short: 100 bytes of a 256-byte MAD */
	n = request(m, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1, NULL, 0);
	ask(loop, d, lp.sm_lid, "truncated", m, 100);
	/* methods the record does not take */
	n = request(m, MAD_METHOD_SET, MAD_ATTR_NODE_RECORD, 0, NULL, 0);
	ask(loop, d, lp.sm_lid, "set-node", m, n);
	n = request(m, MAD_METHOD_DELETE, MAD_ATTR_LINK_RECORD, 0, NULL, 0);
	ask(loop, d, lp.sm_lid, "delete-link", m, n);
	/* a service without the ServiceID and ServiceGID that name it; a Delete naming no ID */
	n = request(m, MAD_METHOD_SET, MAD_ATTR_SERVICE_RECORD, 0, NULL, 0);
	ask(loop, d, lp.sm_lid, "service-set-bare", m, n);
	n = request(m, MAD_METHOD_DELETE, MAD_ATTR_SERVICE_RECORD, 2, NULL, 0);
	ask(loop, d, lp.sm_lid, "service-delete-bare", m, n);
	/* an attribute nobody knows */
	n = request(m, MAD_METHOD_GET, 0x7777, 0, NULL, 0);
	ask(loop, d, lp.sm_lid, "unknown-attr", m, n);
	/* a wrong class version */
	n = request(m, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 0, NULL, 0);
	m[2] = 7;
	ask(loop, d, lp.sm_lid, "bad-version", m, n);
	/* Get that matches everything: too many */
	n = request(m, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 0, NULL, 0);
	ask(loop, d, lp.sm_lid, "get-many", m, n);
	/* Get that matches nothing */
	n = request(m, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1, (uint8_t[2]){0xbf, 0xfe}, 2);
	ask(loop, d, lp.sm_lid, "get-none", m, n);
	/* PathRecord: no source or destination at all (Get), an unknown GID, NumbPath 127 */
	struct mad_path_record pr = {0};
	uint8_t rec[64] = {0};
	mad_path_record_encode(&pr, rec, sizeof(rec), NULL);
	n = request(m, MAD_METHOD_GET, MAD_ATTR_PATH_RECORD, 0, rec, sizeof(rec));
	ask(loop, d, lp.sm_lid, "path-insufficient", m, n);
	memset(pr.sgid, 0xab, 16);
	pr.dlid = lp.lid;
	mad_path_record_encode(&pr, rec, sizeof(rec), NULL);
	n = request(m, MAD_METHOD_GET, MAD_ATTR_PATH_RECORD, PR_COMP_SGID | PR_COMP_DLID, rec,
	            sizeof(rec));
	ask(loop, d, lp.sm_lid, "path-bad-gid", m, n);
	memset(&pr, 0, sizeof(pr));
	pr.slid = lp.lid;
	pr.dlid = lp.sm_lid;
	pr.num_path = 127;
	mad_path_record_encode(&pr, rec, sizeof(rec), NULL);
	n = request(m, MAD_METHOD_GET_TABLE, MAD_ATTR_PATH_RECORD,
	            PR_COMP_SLID | PR_COMP_DLID | PR_COMP_NUMB_PATH, rec, sizeof(rec));
	ask(loop, d, lp.sm_lid, "path-numb127", m, n);
	/* garbage in the record and the header's reserved fields */
	n = request(m, MAD_METHOD_GET_TABLE, MAD_ATTR_PATH_RECORD, ~0ull >> 41, NULL, 0);
	for (size_t i = MAD_SA_HDR_END; i < MAD_SIZE; i++)
		m[i] = (uint8_t)(i * 37);
	ask(loop, d, lp.sm_lid, "path-garbage", m, n);
	/* SL-to-VL and VL arbitration records: a Set, a Get of everything, a mask beyond the
	 * record, garbage with every component set */
	n = request(m, MAD_METHOD_SET, MAD_ATTR_SL2VL_RECORD, 0, NULL, 0);
	ask(loop, d, lp.sm_lid, "sl2vl-set", m, n);
	n = request(m, MAD_METHOD_GET, MAD_ATTR_SL2VL_RECORD, 0, NULL, 0);
	ask(loop, d, lp.sm_lid, "sl2vl-get-many", m, n);
	n = request(m, MAD_METHOD_GET_TABLE, MAD_ATTR_VLARB_RECORD, 1u << 5, NULL, 0);
	ask(loop, d, lp.sm_lid, "vlarb-bad-mask", m, n);
	static const struct {
		uint16_t attr;
		const char *name;
	} vl_recs[] = {{MAD_ATTR_SL2VL_RECORD, "sl2vl-garbage"},
	               {MAD_ATTR_VLARB_RECORD, "vlarb-garbage"}};
	for (size_t k = 0; k < 2; k++) {
		n = request(m, MAD_METHOD_GET_TABLE, vl_recs[k].attr, 0x1f, NULL, 0);
		for (size_t i = MAD_SA_HDR_END; i < MAD_SIZE; i++)
			m[i] = (uint8_t)(i * 53 + 7);
		ask(loop, d, lp.sm_lid, vl_recs[k].name, m, n);
	}
	/* MCMemberRecord: joins and leaves that cannot be taken */
	struct mad_mcmember_record mc = {.qkey = 0x77, .pkey = 0xffff, .join_state = 1, .scope = 2};
	static const uint8_t mgid0[16] = {0xff, 0x15, 0x99, 0x99, [15] = 1};
	memcpy(mc.mgid, mgid0, 16);
	mad_bits_set(mc.port_gid, 0, 64, lp.gid_prefix ? lp.gid_prefix : 0xfe80000000000000ull);
	mad_bits_set(mc.port_gid, 64, 64, lp.port_guid);
	uint64_t create = MCM_COMP_MGID | MCM_COMP_PORT_GID | MCM_COMP_JOIN_STATE | MCM_COMP_QKEY |
	                  MCM_COMP_PKEY | MCM_COMP_SL | MCM_COMP_FLOW_LABEL | MCM_COMP_TCLASS;
	mad_mcmember_record_encode(&mc, rec, sizeof(rec), NULL);
	n = request(m, MAD_METHOD_SET, MAD_ATTR_MCMEMBER_RECORD, 0, rec, sizeof(rec));
	ask(loop, d, lp.sm_lid, "mcm-join-bare", m, n);
	n = request(m, MAD_METHOD_SET, MAD_ATTR_MCMEMBER_RECORD,
	            MCM_COMP_MGID | MCM_COMP_PORT_GID | MCM_COMP_JOIN_STATE, rec, sizeof(rec));
	ask(loop, d, lp.sm_lid, "mcm-create-insufficient", m, n);
	mc.join_state = 2; /* a non-member cannot create */
	mad_mcmember_record_encode(&mc, rec, sizeof(rec), NULL);
	n = request(m, MAD_METHOD_SET, MAD_ATTR_MCMEMBER_RECORD, create, rec, sizeof(rec));
	ask(loop, d, lp.sm_lid, "mcm-create-nonmember", m, n);
	mc.join_state = 1;
	mc.mgid[0] = 0xfe; /* not a multicast GID */
	mad_mcmember_record_encode(&mc, rec, sizeof(rec), NULL);
	n = request(m, MAD_METHOD_SET, MAD_ATTR_MCMEMBER_RECORD, create, rec, sizeof(rec));
	ask(loop, d, lp.sm_lid, "mcm-bad-mgid", m, n);
	mc.mgid[0] = 0xff;
	mc.rate = 0; /* no such rate */
	mc.rate_selector = 2;
	mad_mcmember_record_encode(&mc, rec, sizeof(rec), NULL);
	n = request(m, MAD_METHOD_SET, MAD_ATTR_MCMEMBER_RECORD,
	            create | MCM_COMP_RATE | MCM_COMP_RATE_SELECTOR, rec, sizeof(rec));
	ask(loop, d, lp.sm_lid, "mcm-bad-rate", m, n);
	mc.rate = 0;
	mc.rate_selector = 0;
	mad_mcmember_record_encode(&mc, rec, sizeof(rec), NULL);
	n = request(m, MAD_METHOD_DELETE, MAD_ATTR_MCMEMBER_RECORD,
	            MCM_COMP_MGID | MCM_COMP_PORT_GID | MCM_COMP_JOIN_STATE, rec, sizeof(rec));
	ask(loop, d, lp.sm_lid, "mcm-leave-unknown", m, n);
	n = request(m, MAD_METHOD_GET_MULTI, MAD_ATTR_MCMEMBER_RECORD, 0, rec, sizeof(rec));
	ask(loop, d, lp.sm_lid, "mcm-getmulti", m, n);
	n = request(m, MAD_METHOD_SET, MAD_ATTR_MCMEMBER_RECORD, create, rec, sizeof(rec));
	ask(loop, d, lp.sm_lid, "mcm-create", m, n);
	/* MultiPathRecord: no counts, more GIDs than the MAD holds, a multicast GID, Get */
	uint8_t mp[MAD_SA_DATA_SIZE] = {0};
	const uint64_t counts = (1ull << 19) | (1ull << 20);
	n = request(m, MAD_METHOD_GET_MULTI, MAD_ATTR_MULTIPATH_RECORD, 0, mp, sizeof(mp));
	ask(loop, d, lp.sm_lid, "mpr-bare", m, n);
	mp[15] = 10;
	mp[16] = 10;
	n = request(m, MAD_METHOD_GET_MULTI, MAD_ATTR_MULTIPATH_RECORD, counts, mp, sizeof(mp));
	ask(loop, d, lp.sm_lid, "mpr-too-many-gids", m, n);
	mp[15] = 1;
	mp[16] = 1;
	memcpy(mp + 24, mc.port_gid, 16);
	memcpy(mp + 40, mgid0, 16);
	n = request(m, MAD_METHOD_GET_MULTI, MAD_ATTR_MULTIPATH_RECORD, counts, mp, sizeof(mp));
	ask(loop, d, lp.sm_lid, "mpr-mgid", m, n);
	memcpy(mp + 40, mc.port_gid, 16);
	mp[5] = 127; /* NumbPath */
	n = request(m, MAD_METHOD_GET_MULTI, MAD_ATTR_MULTIPATH_RECORD, counts | (1ull << 6), mp,
	            sizeof(mp));
	ask(loop, d, lp.sm_lid, "mpr-numb127", m, n);
	n = request(m, MAD_METHOD_GET, MAD_ATTR_MULTIPATH_RECORD, counts, mp, sizeof(mp));
	ask(loop, d, lp.sm_lid, "mpr-get", m, n);
	/* a wrong SM_Key: discarded, never answered (IBA 15.4.1) */
	n = request(m, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1, (uint8_t[2]){0, (uint8_t)lp.lid},
	            2);
	mad_bits_set(m, 24 * 8 + 12 * 8, 64,
	             0xdeadbeefull); /* SM_Key, after MAD and RMPP headers */
	ask(loop, d, lp.sm_lid, "wrong-sm-key", m, n);
	/* and it still answers */
	n = request(m, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, 1, (uint8_t[2]){0, (uint8_t)lp.lid},
	            2);
	ask(loop, d, lp.sm_lid, "good-after", m, n);

	mad_dispatcher_free(d);
	ev_loop_destroy(loop);
	mad_transport_close(t);
	return 0;
}
