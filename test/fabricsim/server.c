/* The ibsim client protocol, served from fabricsim's model (see mad/transport_sim.c for the
 * client side and the wire layout). Compatible with ibsim where clients can tell: the same
 * socket names, TID bits 48-63 for the requesting client, undeliverable MADs returned to their
 * sender with status 110 unless silent drops are asked for. Beyond ibsim: any number of
 * clients, per-hop latency and SMA service time, fault injection, traps 128/144 with repress,
 * a control socket. */
#include "server.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mad.h>

#include "agents.h"
#include "mad/cc.h"
#include "mad/mad_header.h"
#include "mad/mad_types.h"
#include "util/vec.h"

#define SIM_MAGIC     0xdeadbeefu
#define CTL_SIZE      80
#define CTL_DATA      16
#define REQ_SIZE      288
#define REQ_MAD       32
#define ST_DROPPED    110
#define TRAP_RESEND_S 2.0
#define TRAP_TRIES    4

/* Packed datagrams, fabricsim's extension of the ibsim protocol: a client that asks in its
 * connect message (the 20 bytes after sim_client_info, which ibsim echoes unchanged) may send
 * and receive datagrams of up to PACK_MAX MAD messages back to back. Each datagram costs the
 * kernel an allocation and a wakeup whatever its size: one per MAD was most of what a MAD
 * cost both sides at 200,000 a second. The MADs themselves, their order and their timing are
 * as before; ibsim, which does not answer the request, gets one MAD per datagram. */
#define PACK_MAX    32
#define PACK_OFF    48         /* in the connect data: after {id, qp, issm, nodeid[32]} */
#define PACK_ASK    0x4b505346 /* "FSPK" from the client */
#define PACK_AGREED 0x6b707366 /* "fspk" back from fabricsim */

enum {
	CTL_ERROR,
	CTL_CONNECT,
	CTL_DISCONNECT,
	CTL_GET_PORT,
	CTL_GET_VENDOR,
	CTL_GET_GID,
	CTL_GET_GUID,
	CTL_GET_NODEINFO,
	CTL_GET_PORTINFO,
	CTL_SET_ISSM,
	CTL_GET_PKEYS
};

struct mad_buf {
	uint8_t b[REQ_SIZE];
};

/* A client's socket takes a few datagrams at a time (net.unix.max_dgram_qlen, 10 by
 * default); what does not fit waits here, in order, until the socket drains, as a real
 * HCA's queue pair holds what its consumer has not read yet. Bounded: beyond, MADs are
 * dropped (and counted). */
#define CLIENT_BACKLOG_MAX 65536

struct client {
	int fd;
	ev_io io;
	ev_io wio; /* writable again: flush the backlog */
	VEC(struct mad_buf) backlog;
	uint32_t backlog_head;
	struct fs_server *s;
	unsigned id;
	bool used;
	uint32_t remote_id; /* the client's own id: its socket is "<name>:in<id>" */
	uint32_t port;      /* port index it is attached to */
	bool issm;
	uint64_t attached; /* attach order: the newest client at a port takes its GSI requests */
	unsigned pack;     /* MADs per datagram it takes (1: ibsim's protocol) */
	uint8_t *tx;       /* MADs waiting to go in one datagram (pack > 1) */
	unsigned tx_n;
	bool tx_listed; /* in the server's list of clients to flush */
};

struct delayed {
	uint64_t when_ns, seq;
	unsigned client;
	uint8_t req[REQ_SIZE];
};

struct pending_trap {
	uint32_t port;
	uint16_t trap;
	uint64_t tid;
	unsigned tries;
};

/* a port with a fault that makes it send trap 129 (local link integrity) at a rate, each
 * with a new TID and heedless of TrapRepress, while its link is up */
struct babbler {
	uint32_t port;
	double rate, owed;
};

struct fs_server {
	struct ev_loop *loop;
	struct fabric *f;
	struct fs_server_opts o;
	char name[108];
	bool inet;
	struct in_addr host;
	int ctl_fd;
	ev_io ctl_io;
	int admin_fd;
	ev_io admin_io;
	struct client *clients;
	uint64_t attach_seq;
	struct delayed *heap;
	size_t nheap, heap_cap;
	uint64_t seq;
	ev_timer delay_timer;
	struct pending_trap *traps;
	size_t ntraps, traps_cap;
	uint64_t trap_tid;
	ev_timer trap_timer;
	VEC(struct babbler) babblers;
	ev_timer babble_timer;
	double babble_last;
	struct fs_stats st;
	ev_prepare tx_flush; /* before the loop waits: packed datagrams out */
	unsigned *tx_list, tx_listed;
	uint8_t rxbuf[PACK_MAX * REQ_SIZE + 16]; /* one datagram as a client sent it */
};

static uint64_t now_ns(const struct fs_server *s)
{
	return (uint64_t)(ev_now(s->loop) * 1e9);
}

static void put32(uint8_t *b, size_t o, uint32_t v)
{
	memcpy(b + o, &v, 4);
}

static uint32_t get32(const uint8_t *b, size_t o)
{
	uint32_t v;
	memcpy(&v, b + o, 4);
	return v;
}

static socklen_t sock_name(struct fs_server *s, struct sockaddr_storage *ss, const char *suffix,
                           unsigned port_off)
{
	memset(ss, 0, sizeof(*ss));
	if (s->inet) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		in->sin_family = AF_INET;
		in->sin_addr = s->host;
		in->sin_port = htons((uint16_t)(s->o.inet_port + port_off));
		return sizeof(*in);
	}
	struct sockaddr_un *un = (struct sockaddr_un *)ss;
	un->sun_family = AF_UNIX;
	int n = snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1, "%s:%s", s->name, suffix);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n + 1);
}

static uint16_t port_lid(const struct fabric *f, uint32_t p)
{
	return f->ports[fabric_lid_port(f, p)].pi.lid;
}

/* ---- sending to clients, now or after the modelled delay ---- */

static void backlog_clear(struct fs_server *s, struct client *c)
{
	ev_io_stop(s->loop, &c->wio);
	vec_free(&c->backlog);
	c->backlog_head = 0;
}

static void queue_trap(struct fs_server *s, uint32_t port, uint16_t trap);
static void queue_trap144(struct fs_server *s, uint32_t port, uint16_t flags);

static void client_drop(struct fs_server *s, struct client *c)
{
	if (!c->used)
		return;
	/* "an SM detached": the scenarios take it as the SM's death on the simulator's clock */
	log_info(s->o.log, "fabricsim", "client %u (node \"%s\") detached%s", c->id,
	         fs_node_of(s->f, c->port)->name, c->issm ? ": an SM detached" : "");
	c->used = false;
	backlog_clear(s, c);
	c->tx_n = 0; /* (tx_listed stays until the flush clears it: the slot is listed once) */
	c->pack = 1;
	if (c->issm) {
		/* as a CA's driver does when the SM's issm device closes (the SM exited or was
		 * killed): IsSM goes, and the port tells the master with trap 144 */
		c->issm = false;
		struct fs_port *p = &s->f->ports[fabric_lid_port(s->f, c->port)];
		if (p->pi.capability_mask & PORT_CAP_IS_SM) {
			p->pi.capability_mask &= ~PORT_CAP_IS_SM;
			if (p->pi.capability_mask & PORT_CAP_IS_CAP_MASK_NOTICE)
				queue_trap144(s, c->port, 0);
		}
	}
}

/* 1 sent, 0 the socket is full, -1 the client is gone or the MAD cannot go. */
static int send_one(struct fs_server *s, struct client *c, const uint8_t *req)
{
	ssize_t n = send(c->fd, req, REQ_SIZE, MSG_DONTWAIT);
	if (n == REQ_SIZE) {
		s->st.mads_delivered++;
		return 1;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS))
		return 0;
	if (n < 0 && (errno == ECONNREFUSED || errno == ENOTCONN))
		client_drop(s, c);
	return -1;
}

static void flush_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	struct client *c = (struct client *)((char *)w - offsetof(struct client, wio));
	struct fs_server *s = c->s;
	while (c->used && c->backlog_head < c->backlog.n) {
		int r = send_one(s, c, c->backlog.v[c->backlog_head].b);
		if (r == 0)
			return; /* still full: wait for the next writable event */
		c->backlog_head++;
	}
	backlog_clear(s, c);
}

static void backlog_push(struct fs_server *s, struct client *c, const uint8_t *req);

/* The client's packed MADs in one datagram; what the socket will not take waits in the
 * backlog, in order (flush_cb sends it one MAD at a time). */
static void tx_flush_client(struct fs_server *s, struct client *c)
{
	unsigned n = c->tx_n;
	c->tx_n = 0;
	if (!n || !c->used)
		return;
	ssize_t r = send(c->fd, c->tx, (size_t)n * REQ_SIZE, MSG_DONTWAIT);
	if (r == (ssize_t)n * REQ_SIZE) {
		s->st.mads_delivered += n;
		return;
	}
	if (r < 0 && (errno == ECONNREFUSED || errno == ENOTCONN)) {
		client_drop(s, c);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		backlog_push(s, c, c->tx + (size_t)i * REQ_SIZE);
}

static void tx_flush_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	(void)loop;
	(void)revents;
	struct fs_server *s =
	    (struct fs_server *)((char *)w - offsetof(struct fs_server, tx_flush));
	for (unsigned i = 0; i < s->tx_listed; i++) {
		struct client *c = &s->clients[s->tx_list[i]];
		c->tx_listed = false;
		tx_flush_client(s, c);
	}
	s->tx_listed = 0;
}

static void send_now(struct fs_server *s, unsigned ci, const uint8_t *req)
{
	struct client *c = &s->clients[ci];
	if (!c->used)
		return;
	if (c->pack > 1 && c->backlog_head == c->backlog.n) {
		memcpy(c->tx + (size_t)c->tx_n++ * REQ_SIZE, req, REQ_SIZE);
		if (c->tx_n == c->pack)
			tx_flush_client(s, c);
		else if (!c->tx_listed) {
			c->tx_listed = true;
			s->tx_list[s->tx_listed++] = ci;
		}
		return;
	}
	if (c->backlog_head == c->backlog.n && send_one(s, c, req) != 0)
		return;
	backlog_push(s, c, req);
}

static void backlog_push(struct fs_server *s, struct client *c, const uint8_t *req)
{
	if (!c->used)
		return;
	/* full: keep it, in order behind what already waits */
	if (c->backlog.n - c->backlog_head >= CLIENT_BACKLOG_MAX) {
		s->st.lost++;
		return;
	}
	struct mad_buf *b = vec_push(&c->backlog);
	if (!b) {
		s->st.lost++;
		return;
	}
	memcpy(b->b, req, REQ_SIZE);
	if (!ev_is_active(&c->wio))
		ev_io_start(s->loop, &c->wio);
}

static void heap_push(struct fs_server *s, const struct delayed *d)
{
	if (s->nheap == s->heap_cap) {
		s->heap_cap = s->heap_cap ? s->heap_cap * 2 : 256;
		s->heap = realloc(s->heap, s->heap_cap * sizeof(*s->heap));
		if (!s->heap)
			abort();
	}
	size_t i = s->nheap++;
	while (i) {
		size_t p = (i - 1) / 2;
		const struct delayed *pp = &s->heap[p];
		if (pp->when_ns < d->when_ns || (pp->when_ns == d->when_ns && pp->seq < d->seq))
			break;
		s->heap[i] = s->heap[p];
		i = p;
	}
	s->heap[i] = *d;
}

static void heap_pop(struct fs_server *s)
{
	struct delayed last = s->heap[--s->nheap];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct delayed *best = &last;
		if (l < s->nheap &&
		    (s->heap[l].when_ns < best->when_ns ||
		     (s->heap[l].when_ns == best->when_ns && s->heap[l].seq < best->seq))) {
			m = l;
			best = &s->heap[l];
		}
		if (r < s->nheap &&
		    (s->heap[r].when_ns < best->when_ns ||
		     (s->heap[r].when_ns == best->when_ns && s->heap[r].seq < best->seq)))
			m = r;
		if (m == i)
			break;
		s->heap[i] = s->heap[m];
		i = m;
	}
	if (s->nheap)
		s->heap[i] = last;
}

static void arm_delay(struct fs_server *s)
{
	ev_timer_stop(s->loop, &s->delay_timer);
	if (!s->nheap)
		return;
	double in = ((double)s->heap[0].when_ns - (double)now_ns(s)) / 1e9;
	ev_timer_set(&s->delay_timer, in > 0 ? in : 0, 0.);
	ev_timer_start(s->loop, &s->delay_timer);
}

static void delay_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct fs_server *s =
	    (struct fs_server *)((char *)w - offsetof(struct fs_server, delay_timer));
	ev_now_update(s->loop);
	uint64_t now = now_ns(s);
	while (s->nheap && s->heap[0].when_ns <= now) {
		struct delayed d = s->heap[0];
		heap_pop(s);
		send_now(s, d.client, d.req);
	}
	arm_delay(s);
}

static void deliver(struct fs_server *s, unsigned ci, const uint8_t *req, uint64_t delay_ns)
{
	if (!delay_ns) {
		send_now(s, ci, req);
		return;
	}
	struct delayed d = {.when_ns = now_ns(s) + delay_ns, .seq = s->seq++, .client = ci};
	memcpy(d.req, req, REQ_SIZE);
	heap_push(s, &d);
	arm_delay(s);
}

/* Addressing as a receiver sees it: the sender's LID and QP. */
static void address(uint8_t *req, uint16_t dlid, uint16_t slid, uint32_t dqp, uint32_t sqp)
{
	put32(req, 0, htons(dlid));
	put32(req, 4, htons(slid));
	put32(req, 8, htonl(dqp));
	put32(req, 12, htonl(sqp));
	put32(req, 16, 0);
}

static void bounce(struct fs_server *s, struct client *c, uint8_t *req, const struct route *r)
{
	if (r->lost) {
		s->st.lost++;
		return;
	}
	log_debug(s->o.log, "fabricsim", "client %u: MAD attr 0x%04x dropped: %s", c->id,
	          (unsigned)mad_get_field(req + REQ_MAD, 0, IB_MAD_ATTRID_F), r->why);
	if (s->o.silent_drops) {
		s->st.lost++;
		return;
	}
	s->st.bounced++;
	put32(req, 16, htonl(ST_DROPPED));
	send_now(s, c->id, req);
}

/* The client attached at a port that takes this MAD: answers by the TID's client id,
 * requests to the SM attached there; a Report (what an SA sends its subscribers) with no SM
 * there goes to the newest client at the port, as a real CA's GSI hands it to whichever
 * client registered for reports. */
static int client_for(struct fs_server *s, uint32_t port, bool response, bool report, uint64_t tid)
{
	if (response) {
		unsigned id = (unsigned)(tid >> 48);
		if (id < s->o.max_clients && s->clients[id].used && s->clients[id].port == port)
			return (int)id;
		/* a response that names no client here (not an answer to one of ours: stray,
		 * forged or late) still reaches the port, as on a wire: its newest client
		 * (a program's emulated kernel frees what matches no request of its own) */
		report = true;
	}
	int newest = -1;
	for (unsigned i = 0; i < s->o.max_clients; i++) {
		const struct client *c = &s->clients[i];
		if (!c->used || c->port != port)
			continue;
		if (c->issm)
			return (int)i;
		if (report && (newest < 0 || c->attached > s->clients[newest].attached))
			newest = (int)i;
	}
	return newest;
}

/* SMA service time: one MAD at a time per node. */
static uint64_t sma_delay(struct fs_server *s, uint32_t port, uint64_t arrive_ns)
{
	if (!s->o.sma_service_ns)
		return arrive_ns;
	struct fs_node *n = fs_node_of(s->f, port);
	uint64_t start = n->busy_until_ns > arrive_ns ? n->busy_until_ns : arrive_ns;
	n->busy_until_ns = start + s->o.sma_service_ns;
	return n->busy_until_ns;
}

static void handle_mad(struct fs_server *s, struct client *c, uint8_t *req)
{
	struct fabric *f = s->f;
	uint8_t *mad = req + REQ_MAD;
	uint16_t dlid = ntohs((uint16_t)get32(req, 0));
	uint32_t dqp = ntohl(get32(req, 8)), sqp = ntohl(get32(req, 12));
	s->st.mads_in++;

	/* any class version travels: the agent that receives it judges it */
	if (mad[0] != 1) {
		struct route r = {.why = "bad base version"};
		bounce(s, c, req, &r);
		return;
	}
	uint8_t cls = mad[1], method = mad[3];
	bool resp = mad_is_response(method);
	uint64_t tid = mad_get_field64(mad, 0, IB_MAD_TRID_F);
	if (!resp) {
		/* the requester's client id rides in TID bits 48-63, as ibsim does */
		tid = (tid & 0xffffffffffffull) | ((uint64_t)c->id << 48);
		mad_set_field64(mad, 0, IB_MAD_TRID_F, tid);
	}
	if (s->o.drop_percent && (unsigned)rand_r(&f->seed) % 100 < s->o.drop_percent) {
		s->st.lost++;
		return;
	}
	bool smp = cls == MAD_CLASS_SUBN_LID || cls == MAD_CLASS_SUBN_DR;
	if (smp && !resp && mad[3] == MAD_METHOD_SET) {
		s->st.smp_sets++;
		fs_node_of(f, c->port)->smp_sets++;
	}
	if (smp && !resp && (method == MAD_METHOD_GET || method == MAD_METHOD_SET)) {
		uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);
		s->st.smp_by_attr[method == MAD_METHOD_SET]
		                 [attr < FS_SMP_ATTRS - 1 ? attr : FS_SMP_ATTRS - 1]++;
	}
	uint16_t src_lid = cls == MAD_CLASS_SUBN_DR ? LID_PERMISSIVE : port_lid(f, c->port);
	struct route r;
	int rc = cls == MAD_CLASS_SUBN_DR ? route_dr(f, c->port, mad, &r)
	                                  : route_lid(f, c->port, dlid, smp, &r);
	if (rc < 0) {
		bounce(s, c, req, &r);
		return;
	}
	uint64_t t = now_ns(s) + (uint64_t)r.hops * s->o.hop_latency_ns;

	enum agent_result ar = AGENT_NOT_MINE;
	if (smp && !resp)
		ar = sma_process(f, r.arrival, mad, now_ns(s));
	else if (cls == MAD_CLASS_PERF && !resp)
		ar = pma_process(f, r.arrival, mad);
	else if (cls == MAD_CLASS_CC && !resp)
		ar = cca_process(f, r.dest, mad);

	if (ar == AGENT_NO_REPLY) {
		/* refused for its M_Key: the port tells the SM (trap 256), naming who asked */
		uint32_t kp = fabric_lid_port(f, r.arrival);
		if (smp && f->ports[kp].bad_mkey.pending) {
			f->ports[kp].bad_mkey.pending = false;
			f->ports[kp].bad_mkey.lid = port_lid(f, c->port);
			queue_trap(s, kp, 256);
		}
		return;
	}
	if (ar == AGENT_REPLY) {
		s->st.sma_answers++;
		t = sma_delay(s, r.dest, t);
		/* back the way hardware would send it */
		struct route back;
		uint32_t from = fs_is_switch(f, f->ports[r.dest].node) ? r.dest : r.arrival;
		if (cls == MAD_CLASS_SUBN_DR)
			rc = route_dr(f, from, mad, &back);
		else
			rc = route_lid(f, from, src_lid, smp, &back);
		if (rc < 0 || back.dest != fabric_lid_port(f, c->port)) {
			if (rc == 0)
				back.why = "the answer reached another node";
			bounce(s, c, req, &back);
			return;
		}
		t += (uint64_t)back.hops * s->o.hop_latency_ns + s->o.reply_delay_ns;
		uint16_t resp_lid = cls == MAD_CLASS_SUBN_DR ? LID_PERMISSIVE : port_lid(f, r.dest);
		address(req, src_lid, resp_lid, sqp, dqp);
		deliver(s, c->id, req, t - now_ns(s));
		return;
	}
	/* for a client attached at the destination */
	bool report = !smp && mad[3] == MAD_METHOD_REPORT;
	int to = client_for(s, r.dest, resp, report, tid);
	if (to < 0 && r.dest != r.arrival)
		to = client_for(s, r.arrival, resp, report, tid);
	if (to < 0) {
		r.why = resp ? "no client waits for this answer there"
		             : "no SM or agent attached there to take the request";
		r.lost = false;
		bounce(s, c, req, &r);
		return;
	}
	address(req, port_lid(f, r.dest), src_lid, dqp, sqp);
	deliver(s, (unsigned)to, req, t - now_ns(s) + (resp ? s->o.reply_delay_ns : 0));
}

/* Up to max of the datagrams the client has sent, in order: one MAD each, or up to the
 * packed count it agreed to. */
static void client_read(struct client *c, int max)
{
	uint8_t *buf = c->s->rxbuf;
	for (int i = 0; i < max; i++) {
		ssize_t n = recv(c->fd, buf, sizeof(c->s->rxbuf), MSG_DONTWAIT);
		if (n < 0)
			return;
		if (!c->used)
			continue;
		if (n == 0 || n % REQ_SIZE || (size_t)n / REQ_SIZE > c->pack) {
			log_warn(
			    c->s->o.log, "fabricsim",
			    "client %u: dropped a %zd-byte message (MADs are %d-byte messages, "
			    "%u to a datagram at most)",
			    c->id, n, REQ_SIZE, c->pack);
			continue;
		}
		for (ssize_t off = 0; off < n && c->used; off += REQ_SIZE)
			handle_mad(c->s, c, buf + off);
	}
}

static void client_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	client_read((struct client *)((char *)w - offsetof(struct client, io)), 256);
}

/* ---- traps ---- */

static void send_trap(struct fs_server *s, struct pending_trap *pt)
{
	struct fabric *f = s->f;
	uint32_t lp = fabric_lid_port(f, pt->port);
	uint16_t sm = f->ports[lp].pi.master_sm_lid;
	if (!sm || !fs_node_of(f, lp)->present)
		return;
	if (s->o.lose_traps) {
		s->st.lost++;
		return;
	}
	uint8_t req[REQ_SIZE] = {0};
	sma_build_trap(f, pt->port, pt->trap, pt->tid, req + REQ_MAD);
	struct route r;
	if (route_lid(f, lp, sm, true, &r) < 0)
		return;
	int to = client_for(s, r.dest, false, false, 0);
	if (to < 0)
		return;
	uint64_t len = htobe64(256);
	memcpy(req + 24, &len, 8);
	address(req, sm, f->ports[lp].pi.lid, 0, 0);
	s->st.traps_sent++;
	deliver(s, (unsigned)to, req, (uint64_t)r.hops * s->o.hop_latency_ns);
}

static void queue_trap(struct fs_server *s, uint32_t port, uint16_t trap)
{
	uint32_t lp = fabric_lid_port(s->f, port);
	struct fs_port *p = &s->f->ports[lp];
	if (!(p->pi.capability_mask & PORT_CAP_IS_TRAP) || !p->pi.master_sm_lid)
		return;
	if (s->ntraps == s->traps_cap) {
		s->traps_cap = s->traps_cap ? s->traps_cap * 2 : 64;
		s->traps = realloc(s->traps, s->traps_cap * sizeof(*s->traps));
		if (!s->traps)
			abort();
	}
	struct pending_trap *pt = &s->traps[s->ntraps++];
	pt->port = lp;
	pt->trap = trap;
	pt->tid = ++s->trap_tid;
	pt->tries = 1;
	p->trap_pending = trap;
	p->trap_tid = pt->tid;
	send_trap(s, pt);
	if (!ev_is_active(&s->trap_timer)) {
		ev_timer_set(&s->trap_timer, TRAP_RESEND_S, TRAP_RESEND_S);
		ev_timer_start(s->loop, &s->trap_timer);
	}
}

/* Trap 144 with its ChangeFlags (0: the CapabilityMask alone changed, IsSM say). */
static void queue_trap144(struct fs_server *s, uint32_t port, uint16_t flags)
{
	s->f->ports[fabric_lid_port(s->f, port)].trap144_flags = flags;
	queue_trap(s, port, 144);
}

/* Resend traps nobody repressed, a few times, then give up as an SMA would. */
static void trap_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct fs_server *s =
	    (struct fs_server *)((char *)w - offsetof(struct fs_server, trap_timer));
	size_t keep = 0;
	for (size_t i = 0; i < s->ntraps; i++) {
		struct pending_trap *pt = &s->traps[i];
		struct fs_port *p = &s->f->ports[pt->port];
		if (p->trap_pending != pt->trap || p->trap_tid != pt->tid ||
		    pt->tries >= TRAP_TRIES)
			continue;
		pt->tries++;
		send_trap(s, pt);
		s->traps[keep++] = *pt;
	}
	s->ntraps = keep;
	if (!keep)
		ev_timer_stop(s->loop, &s->trap_timer);
}

#define BABBLE_TICK_S 0.01

static void babble_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct fs_server *s =
	    (struct fs_server *)((char *)w - offsetof(struct fs_server, babble_timer));
	struct fabric *f = s->f;
	double now = ev_now(s->loop), dt = now - s->babble_last;
	s->babble_last = now;
	for (size_t i = 0; i < s->babblers.n; i++) {
		struct babbler *b = &s->babblers.v[i];
		const struct fs_port *p = &f->ports[b->port];
		/* a port whose link is down has nothing to report (and no way to) */
		if (p->pi.port_state < PORT_STATE_INIT || !fs_node_of(f, b->port)->present) {
			b->owed = 0;
			continue;
		}
		b->owed += b->rate * dt;
		for (unsigned k = 0; b->owed >= 1 && k < 1000; k++, b->owed -= 1) {
			struct pending_trap pt = {
			    .port = b->port, .trap = 129, .tid = ++s->trap_tid};
			send_trap(s, &pt);
		}
	}
}

int fs_server_babble(struct fs_server *s, uint32_t port, double rate)
{
	size_t i = 0;
	while (i < s->babblers.n && s->babblers.v[i].port != port)
		i++;
	if (rate <= 0) {
		if (i < s->babblers.n)
			s->babblers.v[i] = s->babblers.v[--s->babblers.n];
	} else if (i < s->babblers.n) {
		s->babblers.v[i].rate = rate;
	} else {
		struct babbler *b = vec_push(&s->babblers);
		if (!b)
			return -1;
		*b = (struct babbler){.port = port, .rate = rate};
	}
	if (s->babblers.n && !ev_is_active(&s->babble_timer)) {
		s->babble_last = ev_now(s->loop);
		ev_timer_set(&s->babble_timer, BABBLE_TICK_S, BABBLE_TICK_S);
		ev_timer_start(s->loop, &s->babble_timer);
	} else if (!s->babblers.n) {
		ev_timer_stop(s->loop, &s->babble_timer);
	}
	return 0;
}

static void on_link_change(struct fabric *f, uint32_t port, void *ctx)
{
	struct fs_server *s = ctx;
	if (fs_is_switch(f, f->ports[port].node))
		queue_trap(s, port, 128);
}

/* A VF came or went behind a port: the HCA tells the master (trap 1146, Annex A18). */
/* A node's NodeDescription changed: each of its ports that supports the notice tells the
 * SM with trap 144, OtherLocalChanges and NodeDescriptionChange (IBA 14.2.5.1), as an HCA
 * does when its driver sets a new description. */
static void on_desc_change(struct fabric *f, uint32_t node, void *ctx)
{
	struct fs_server *s = ctx;
	const struct fs_node *n = &f->nodes[node];
	if (!n->present)
		return;
	bool sw = n->type == NODE_TYPE_SWITCH;
	for (unsigned k = sw ? 0 : 1; k <= (sw ? 0u : n->nports); k++) {
		uint32_t port = n->first_port + k;
		struct fs_port *p = &f->ports[port];
		if (p->pi.capability_mask & PORT_CAP_IS_OTHER_LOCAL_CHANGES_NOTICE)
			queue_trap144(s, port, TRAP144_NODE_DESC_CHANGE);
	}
}

static void on_vport_change(struct fabric *f, uint32_t port, void *ctx)
{
	(void)f;
	queue_trap(ctx, port, 1146);
}

/* ---- the control protocol ---- */

static uint32_t attach_port(struct fs_server *s, const char *nodeid)
{
	struct fabric *f = s->f;
	char name[64];
	snprintf(name, sizeof(name), "%s", nodeid);
	unsigned num = 0;
	char *colon = strrchr(name, ':');
	uint32_t node;
	if (!name[0]) {
		node = 0; /* as ibsim: the first node of the file */
	} else {
		node = fabric_find_node(f, name);
		if (node == FS_NONE && colon) {
			/* "node:port" picks a port of a multi-port CA */
			*colon = 0;
			num = (unsigned)atoi(colon + 1);
			node = fabric_find_node(f, name);
		}
	}
	if (node == FS_NONE || !f->nodes[node].present)
		return FS_NONE;
	if (fs_is_switch(f, node))
		return f->nodes[node].first_port;
	return fabric_port(f, node, num ? num : 1);
}

static void ctl_connect(struct fs_server *s, uint8_t *msg, const struct sockaddr_storage *from)
{
	uint8_t *info = msg + CTL_DATA;
	uint32_t rid = get32(info, 0), issm = get32(info, 8);
	char nodeid[33] = {0};
	memcpy(nodeid, info + 12, 32);
	unsigned i;
	for (i = 0; i < s->o.max_clients && s->clients[i].used; i++)
		;
	uint32_t port = attach_port(s, nodeid);
	if (i == s->o.max_clients || port == FS_NONE) {
		log_warn(s->o.log, "fabricsim", "refused a client for \"%s\": %s", nodeid,
		         port == FS_NONE ? "no such node" : "no free client slot (--max-clients)");
		put32(msg, 8, CTL_ERROR);
		return;
	}
	if (issm) {
		for (unsigned j = 0; j < s->o.max_clients; j++) {
			if (s->clients[j].used && s->clients[j].issm &&
			    s->clients[j].port == port) {
				log_warn(s->o.log, "fabricsim", "refused a second SM on \"%s\"",
				         fs_node_of(s->f, port)->name);
				put32(msg, 8, CTL_ERROR);
				return;
			}
		}
	}
	struct client *c = &s->clients[i];
	struct sockaddr_storage ss;
	socklen_t len;
	char suffix[32];
	snprintf(suffix, sizeof(suffix), "in%u", rid);
	if (s->inet) {
		memcpy(&ss, from, sizeof(ss));
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)rid);
		len = sizeof(struct sockaddr_in);
	} else {
		len = sock_name(s, &ss, suffix, 0);
	}
	if (connect(c->fd, (struct sockaddr *)&ss, len) < 0) {
		log_warn(s->o.log, "fabricsim", "cannot reach client socket %s: %s", suffix,
		         strerror(errno));
		put32(msg, 8, CTL_ERROR);
		return;
	}
	c->used = true;
	c->remote_id = rid;
	c->port = port;
	c->issm = issm != 0;
	c->attached = ++s->attach_seq;
	c->pack = 1;
	if (get32(info, PACK_OFF) == PACK_ASK) {
		uint32_t want = get32(info, PACK_OFF + 4);
		if (!c->tx)
			c->tx = malloc((size_t)PACK_MAX * REQ_SIZE);
		c->pack = c->tx ? (want < PACK_MAX ? (want ? want : 1) : PACK_MAX) : 1;
		put32(info, PACK_OFF, PACK_AGREED);
		put32(info, PACK_OFF + 4, c->pack);
	}
	if (c->issm) {
		/* IsSM goes up as a CA's driver sets it when the issm device opens, and the port
		 * tells the master with trap 144 */
		struct fs_port *p = &s->f->ports[fabric_lid_port(s->f, port)];
		uint32_t before = p->pi.capability_mask;
		p->pi.capability_mask |= PORT_CAP_IS_SM;
		if (before != p->pi.capability_mask &&
		    (p->pi.capability_mask & PORT_CAP_IS_CAP_MASK_NOTICE))
			queue_trap144(s, port, 0);
	}
	const struct fs_node *n = fs_node_of(s->f, port);
	/* the node's id, cut to the protocol's 31 characters */
	memset(info + 12, 0, 32);
	memcpy(info + 12, n->name, strnlen(n->name, 31));
	put32(info, 0, i);
	log_info(s->o.log, "fabricsim", "client %u attached to \"%s\" port %u%s", i, n->name,
	         s->f->ports[port].num, c->issm ? " as SM" : "");
}

static void ctl_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	struct fs_server *s = (struct fs_server *)((char *)w - offsetof(struct fs_server, ctl_io));
	for (;;) {
		uint8_t msg[CTL_SIZE];
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(s->ctl_fd, msg, sizeof(msg), MSG_DONTWAIT,
		                     (struct sockaddr *)&from, &flen);
		if (n < 0)
			return;
		if (n != CTL_SIZE || get32(msg, 0) != SIM_MAGIC)
			continue;
		uint32_t id = get32(msg, 4), type = get32(msg, 8);
		uint8_t *data = msg + CTL_DATA;
		struct client *c = id < s->o.max_clients ? &s->clients[id] : NULL;
		if (type != CTL_CONNECT && (!c || !c->used)) {
			put32(msg, 8, CTL_ERROR);
		} else {
			switch (type) {
			case CTL_CONNECT: ctl_connect(s, msg, &from); break;
			case CTL_DISCONNECT:
				/* what it sent before goes out first, as an HCA sends what was
				 * posted before the umad file closed: the control channel must
				 * not overtake the data one */
				client_read(c, 4096);
				client_drop(s, c);
				break;
			case CTL_GET_PORT: {
				uint16_t lid = port_lid(s->f, c->port);
				memset(data, 0, 64);
				memcpy(data, &lid, 2);
				data[2] = s->f->ports[c->port].pi.port_state;
				break;
			}
			case CTL_GET_VENDOR: {
				const struct fs_node *nd = fs_node_of(s->f, c->port);
				uint64_t fw = 1;
				memset(data, 0, 64);
				put32(data, 0, nd->vendor_id);
				put32(data, 4, nd->device_id);
				put32(data, 8, nd->revision);
				memcpy(data + 16, &fw, 8);
				break;
			}
			case CTL_GET_GID:
			case CTL_GET_GUID: {
				const struct fs_port *p = &s->f->ports[c->port];
				uint64_t pre = htobe64(
				    s->f->ports[fabric_lid_port(s->f, c->port)].pi.gid_prefix);
				uint64_t g = htobe64(p->guid);
				memset(data, 0, 64);
				if (type == CTL_GET_GID) {
					memcpy(data, &pre, 8);
					memcpy(data + 8, &g, 8);
				} else {
					memcpy(data, &g, 8);
				}
				break;
			}
			case CTL_GET_NODEINFO: sma_node_info_raw(s->f, c->port, data); break;
			case CTL_GET_PORTINFO: {
				unsigned num = data[0];
				uint32_t p = c->port;
				if (num)
					p = fabric_port(s->f, s->f->ports[c->port].node, num);
				if (p == FS_NONE)
					p = c->port;
				sma_port_info_raw(s->f, p, p, true, data);
				break;
			}
			case CTL_SET_ISSM: {
				int v;
				memcpy(&v, data, sizeof(v));
				struct fs_port *p = &s->f->ports[fabric_lid_port(s->f, c->port)];
				uint32_t before = p->pi.capability_mask;
				c->issm = v != 0;
				if (c->issm)
					p->pi.capability_mask |= PORT_CAP_IS_SM;
				else
					p->pi.capability_mask &= ~PORT_CAP_IS_SM;
				if (before != p->pi.capability_mask &&
				    (p->pi.capability_mask & PORT_CAP_IS_CAP_MASK_NOTICE))
					queue_trap144(s, c->port, 0);
				break;
			}
			case CTL_GET_PKEYS: {
				const struct fs_port *p = &s->f->ports[c->port];
				const struct fs_node *nd = fs_node_of(s->f, c->port);
				unsigned cap = nd->type == NODE_TYPE_SWITCH ? 8 : 32;
				memset(data, 0, 64);
				for (unsigned k = 0; k < cap; k++) {
					uint16_t be = htons(p->pkeys[k]);
					memcpy(data + 2 * k, &be, 2);
				}
				break;
			}
			default: put32(msg, 8, CTL_ERROR); break;
			}
		}
		sendto(s->ctl_fd, msg, sizeof(msg), MSG_DONTWAIT, (struct sockaddr *)&from, flen);
	}
}

/* ---- the admin (control) socket: one command per connection ---- */

static void admin_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	struct fs_server *s =
	    (struct fs_server *)((char *)w - offsetof(struct fs_server, admin_io));
	int fd = accept4(s->admin_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	/* commands are short and the client writes them at once */
	char line[1024];
	size_t got = 0;
	struct timeval tv = {.tv_sec = 2};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (got < sizeof(line) - 1) {
		ssize_t n = recv(fd, line + got, sizeof(line) - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (memchr(line, '\n', got))
			break;
	}
	line[got] = 0;
	char *nl = strchr(line, '\n');
	if (nl)
		*nl = 0;
	/* verify walks every pair of endpoints: on a large fabric a second or more, during
	 * which no MAD would be answered and the SMs under test would see timeouts that no
	 * real fabric produces. It runs in a child, on a copy-on-write snapshot of the
	 * fabric taken now, while the simulator goes on. */
	bool forked = false;
	if (!strncmp(line, "verify", 6)) {
		pid_t pid = fork();
		if (pid > 0) {
			close(fd);
			return;
		}
		forked = pid == 0;
		if (forked) {
			/* the child lets go of the simulator's sockets at once: a verify still
			 * running when the simulator is stopped would keep its names bound, and
			 * the next simulator of that name could not bind them */
			close(s->ctl_fd);
			close(s->admin_fd);
			for (unsigned i = 0; i < s->o.max_clients; i++)
				close(s->clients[i].fd);
		}
	}
	char *out = NULL;
	size_t outlen = 0;
	int rc = fs_server_command(s, line, &out, &outlen);
	char status[16];
	snprintf(status, sizeof(status), "%s\n", rc == 0 ? "OK" : "ERR");
	size_t off = 0;
	while (out && off < outlen) {
		ssize_t n = send(fd, out + off, outlen - off, MSG_NOSIGNAL);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	send(fd, status, strlen(status), MSG_NOSIGNAL);
	free(out);
	close(fd);
	if (forked)
		_exit(0);
}

/* ---- life cycle ---- */

struct fs_server *fs_server_new(struct ev_loop *loop, struct fabric *f,
                                const struct fs_server_opts *o, char *err, size_t errlen)
{
	struct fs_server *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->loop = loop;
	s->f = f;
	s->o = *o;
	if (!s->o.max_clients)
		s->o.max_clients = 128;
	if (!s->o.inet_port)
		s->o.inet_port = 7070;
	snprintf(s->name, sizeof(s->name), "%s", o->sockname && *o->sockname ? o->sockname : "sim");
	s->inet = o->inet_host && *o->inet_host;
	if (s->inet && inet_aton(o->inet_host, &s->host) == 0) {
		snprintf(err, errlen, "bad IPv4 address \"%s\"", o->inet_host);
		free(s);
		return NULL;
	}
	s->clients = calloc(s->o.max_clients, sizeof(*s->clients));
	s->tx_list = calloc(s->o.max_clients, sizeof(*s->tx_list));
	if (!s->clients || !s->tx_list) {
		snprintf(err, errlen, "out of memory");
		free(s->clients);
		free(s->tx_list);
		free(s);
		return NULL;
	}
	signal(SIGCHLD, SIG_IGN); /* the verify children (admin_cb) reap themselves */
	f->on_link_change = on_link_change;
	f->on_vport_change = on_vport_change;
	f->on_desc_change = on_desc_change;
	f->ctx = s;
	int dom = s->inet ? AF_INET : AF_UNIX;
	struct sockaddr_storage ss;
	socklen_t len;

	s->ctl_fd = socket(dom, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	len = sock_name(s, &ss, "ctl", 0);
	if (s->ctl_fd < 0 || bind(s->ctl_fd, (struct sockaddr *)&ss, len) < 0) {
		snprintf(err, errlen,
		         "cannot bind the control socket \"%s:ctl\": %s (another "
		         "simulator with this name running? set IBSIM_SOCKNAME)",
		         s->name, strerror(errno));
		goto fail;
	}
	for (unsigned i = 0; i < s->o.max_clients; i++) {
		struct client *c = &s->clients[i];
		char suffix[32];
		snprintf(suffix, sizeof(suffix), "out%u", i);
		c->s = s;
		c->id = i;
		c->fd = socket(dom, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		len = sock_name(s, &ss, suffix, i + 1);
		if (c->fd < 0 || bind(c->fd, (struct sockaddr *)&ss, len) < 0) {
			snprintf(err, errlen, "cannot bind %s: %s", suffix, strerror(errno));
			goto fail;
		}
		int sz = 4 << 20;
		setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		ev_io_init(&c->io, client_cb, c->fd, EV_READ);
		ev_io_init(&c->wio, flush_cb, c->fd, EV_WRITE);
		ev_io_start(loop, &c->io);
	}
	/* the admin socket is always a unix stream socket, "<name>:fabricsim" */
	s->admin_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	bool inet = s->inet;
	s->inet = false;
	len = sock_name(s, &ss, "fabricsim", 0);
	s->inet = inet;
	if (s->admin_fd < 0 || bind(s->admin_fd, (struct sockaddr *)&ss, len) < 0 ||
	    listen(s->admin_fd, 16) < 0) {
		snprintf(err, errlen, "cannot bind the admin socket \"%s:fabricsim\": %s", s->name,
		         strerror(errno));
		goto fail;
	}
	ev_io_init(&s->ctl_io, ctl_cb, s->ctl_fd, EV_READ);
	ev_io_start(loop, &s->ctl_io);
	ev_io_init(&s->admin_io, admin_cb, s->admin_fd, EV_READ);
	ev_io_start(loop, &s->admin_io);
	ev_init(&s->delay_timer, delay_cb);
	ev_init(&s->trap_timer, trap_cb);
	ev_init(&s->babble_timer, babble_cb);
	ev_prepare_init(&s->tx_flush, tx_flush_cb);
	ev_prepare_start(loop, &s->tx_flush);
	return s;
fail:
	fs_server_free(s);
	return NULL;
}

void fs_server_free(struct fs_server *s)
{
	if (!s)
		return;
	for (unsigned i = 0; s->clients && i < s->o.max_clients; i++) {
		if (s->clients[i].fd > 0) {
			ev_io_stop(s->loop, &s->clients[i].io);
			backlog_clear(s, &s->clients[i]);
			close(s->clients[i].fd);
		}
		free(s->clients[i].tx);
	}
	ev_prepare_stop(s->loop, &s->tx_flush);
	free(s->tx_list);
	if (s->ctl_fd > 0) {
		ev_io_stop(s->loop, &s->ctl_io);
		close(s->ctl_fd);
	}
	if (s->admin_fd > 0) {
		ev_io_stop(s->loop, &s->admin_io);
		close(s->admin_fd);
	}
	ev_timer_stop(s->loop, &s->delay_timer);
	ev_timer_stop(s->loop, &s->trap_timer);
	ev_timer_stop(s->loop, &s->babble_timer);
	vec_free(&s->babblers);
	s->f->on_link_change = NULL;
	s->f->on_vport_change = NULL;
	s->f->on_desc_change = NULL;
	free(s->clients);
	free(s->heap);
	free(s->traps);
	free(s);
}

const struct fs_stats *fs_server_stats(const struct fs_server *s)
{
	return &s->st;
}

struct fs_server_opts *fs_server_opts(struct fs_server *s)
{
	return &s->o;
}

struct fabric *fs_server_fabric(struct fs_server *s)
{
	return s->f;
}

unsigned fs_server_clients(const struct fs_server *s)
{
	unsigned n = 0;
	for (unsigned i = 0; i < s->o.max_clients; i++)
		n += s->clients[i].used;
	return n;
}
