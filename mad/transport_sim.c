/* The "sim" transport: a client of the ibsim wire protocol, spoken by Debian's ibsim and by our
 * fabricsim, so ibsmd and ibsa run on a simulated fabric without libumad2sim.so.
 *
 * The protocol (ibsim's include/ibsim.h) is two datagram sockets, abstract unix or UDP:
 *  - control: "<name>:ctl" on the server; 80-byte messages {magic, clientid, type, len,
 *    data[64]} to connect, query the attached port and set IsSM;
 *  - data: the server's "<name>:out<clientid>" to our "<name>:in<id>"; 288-byte messages
 *    {dlid, slid, dqp, sqp, status, pad, length, mad[256]}.
 * The server and client share a host, so integers travel in host order except where ibsim
 * converts them (LIDs as big-endian 16-bit values in the low half of a u32, QPNs and status
 * big-endian, length big-endian 64-bit). We encode them field by field here, the one place that
 * knows. A MAD the server cannot deliver comes back to us with status 110 (ETIMEDOUT).
 */
#include "mad/transport.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mad/mad_types.h"
#include "mad/smp_attrs.h"

#define SIM_MAGIC          0xdeadbeefu
#define SIM_CTL_SIZE       80
#define SIM_CTL_DATA       16
#define SIM_CTL_DATA_MAX   64
#define SIM_REQ_SIZE       288
#define SIM_REQ_MAD        32
#define SIM_DEFAULT_PORT   7070
#define SIM_STATUS_DROPPED 110

enum sim_ctl_type {
	SIM_CTL_ERROR = 0,
	SIM_CTL_CONNECT = 1,
	SIM_CTL_DISCONNECT = 2,
	SIM_CTL_GET_PORT = 3,
	SIM_CTL_GET_VENDOR = 4,
	SIM_CTL_GET_GID = 5,
	SIM_CTL_GET_GUID = 6,
	SIM_CTL_GET_NODEINFO = 7,
	SIM_CTL_GET_PORTINFO = 8,
	SIM_CTL_SET_ISSM = 9,
	SIM_CTL_GET_PKEYS = 10,
};

/* sim_client_info inside the control data: {u32 id, u32 qp, u32 issm, char nodeid[32]} */
#define SCI_ID         0
#define SCI_QP         4
#define SCI_ISSM       8
#define SCI_NODEID     12
#define SCI_NODEID_LEN 32

/* MADs move in batches, one recvmmsg or sendmmsg for up to SIM_BATCH of them: with many in
 * flight the system calls, not the MADs, were most of what a MAD cost. Sends wait in the
 * batch until it is full or the event loop is about to block (mad_transport_flush). */
#define SIM_BATCH 32

/* fabricsim's packed datagrams: asked for in the connect message, in the bytes after
 * sim_client_info that ibsim echoes unchanged (so ibsim, which does not answer, is never
 * sent one); agreed, a datagram carries up to that many MAD messages back to back either
 * way. The kernel's cost is per datagram: one per MAD was half of what ibsmd spent. */
#define SIM_PACK_MAX    32
#define SIM_PACK_OFF    48
#define SIM_PACK_ASK    0x4b505346u /* "FSPK" */
#define SIM_PACK_AGREED 0x6b707366u /* "fspk" */
#define SIM_RX_MAX      (SIM_PACK_MAX * SIM_REQ_SIZE + 16)

struct sim_transport {
	struct mad_transport base;
	int ctl_fd, data_fd;
	uint32_t client_id;
	bool inet;
	unsigned pack; /* MAD messages to a datagram: 1, or what fabricsim agreed */
	uint8_t rx[SIM_BATCH][SIM_RX_MAX];
	unsigned rx_len[SIM_BATCH], rx_n, rx_next, rx_off;
	uint8_t tx[2 * SIM_PACK_MAX][SIM_REQ_SIZE];
	unsigned tx_n;
	uint64_t tx_dropped;
};

union sim_sockaddr {
	struct sockaddr sa;
	struct sockaddr_un un;
	struct sockaddr_in in;
};

static struct sim_transport *to_sim(struct mad_transport *t)
{
	return (struct sim_transport *)t;
}

static void put32(uint8_t *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

static uint32_t get32(const uint8_t *b, size_t off)
{
	uint32_t v;
	memcpy(&v, b + off, 4);
	return v;
}

/* Abstract unix name "<base>:<suffix>", or host:port for the inet form. */
static socklen_t sim_name(union sim_sockaddr *a, bool inet, const struct in_addr *host,
                          unsigned port, const char *base, const char *suffix)
{
	memset(a, 0, sizeof(*a));
	if (inet) {
		a->in.sin_family = AF_INET;
		a->in.sin_addr.s_addr = host ? host->s_addr : htonl(INADDR_ANY);
		a->in.sin_port = htons((uint16_t)port);
		return sizeof(a->in);
	}
	a->un.sun_family = AF_UNIX;
	int n = snprintf(a->un.sun_path + 1, sizeof(a->un.sun_path) - 1, "%s:%s", base, suffix);
	/* ibsim counts the terminating NUL as part of the abstract name. */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n + 1);
}

static int connect_retry(int fd, const union sim_sockaddr *a, socklen_t len)
{
	/* The simulator may still be starting: retry refused connects for up to 2 s. */
	for (int i = 0; i < 20; i++) {
		if (connect(fd, &a->sa, len) == 0)
			return 0;
		if (errno != ECONNREFUSED && errno != ENOENT)
			return -errno;
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return -ECONNREFUSED;
}

/* One control round trip; the reply overwrites data (len bytes). */
static int sim_ctl(struct sim_transport *s, uint32_t type, void *data, size_t len)
{
	uint8_t msg[SIM_CTL_SIZE] = {0};
	put32(msg, 0, SIM_MAGIC);
	put32(msg, 4, s->client_id);
	put32(msg, 8, type);
	put32(msg, 12, (uint32_t)len);
	if (len)
		memcpy(msg + SIM_CTL_DATA, data, len);
	if (send(s->ctl_fd, msg, sizeof(msg), 0) != (ssize_t)sizeof(msg))
		return -errno ? -errno : -EIO;
	struct pollfd p = {.fd = s->ctl_fd, .events = POLLIN};
	int r = poll(&p, 1, 5000);
	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return -errno;
	if (recv(s->ctl_fd, msg, sizeof(msg), 0) != (ssize_t)sizeof(msg))
		return -EPROTO;
	if (get32(msg, 8) == SIM_CTL_ERROR)
		return -EREMOTEIO;
	if (len)
		memcpy(data, msg + SIM_CTL_DATA, len);
	return 0;
}

static int sim_fd(struct mad_transport *t)
{
	return to_sim(t)->data_fd;
}

static int sim_flush(struct mad_transport *t);

/* The ibsim protocol has no timeouts: the simulator delivers every answer and bounces what
 * it cannot deliver (MAD_RECV_SEND_FAILED); the dispatcher times requests out itself. */
static int sim_send(struct mad_transport *t, const struct mad_addr *to, const uint8_t *mad,
                    size_t len, uint32_t timeout_ms)
{
	(void)timeout_ms;
	struct sim_transport *s = to_sim(t);
	if (len > MAD_SIZE)
		return -EMSGSIZE;
	uint8_t req[SIM_REQ_SIZE] = {0};
	uint16_t dlid_be = htons(to->lid);
	uint8_t mgmt_class = len > 1 ? mad[1] : 0;
	uint32_t sqp =
	    (mgmt_class == MAD_CLASS_SUBN_LID || mgmt_class == MAD_CLASS_SUBN_DR) ? 0 : 1;
	put32(req, 0, dlid_be);
	/* slid 0 asks the simulator to fill in ours; permissive stays permissive. */
	put32(req, 4, to->lid == LID_PERMISSIVE ? 0xffff : 0);
	put32(req, 8, htonl(to->qpn));
	put32(req, 12, htonl(sqp));
	put32(req, 16, 0);
	uint64_t length = htobe64((uint64_t)len);
	memcpy(req + 24, &length, 8);
	memcpy(req + SIM_REQ_MAD, mad, len);
	if (!t->batch) {
		/* at once, touching nothing shared: callers without a dispatcher may send from
		 * more than one thread (the umad preload does) */
		ssize_t n = send(s->data_fd, req, sizeof(req), MSG_DONTWAIT);
		if (n < 0)
			return -errno;
		return n == (ssize_t)sizeof(req) ? 0 : -EIO;
	}
	memcpy(s->tx[s->tx_n++], req, sizeof(req));
	return s->tx_n == (s->pack > 1 ? 2 * s->pack : SIM_BATCH) ? sim_flush(t) : 0;
}

static int sim_flush(struct mad_transport *t)
{
	struct sim_transport *s = to_sim(t);
	struct mmsghdr m[2 * SIM_PACK_MAX];
	struct iovec iov[2 * SIM_PACK_MAX];
	unsigned done = 0, ndgrams = 0, per = s->pack ? s->pack : 1;
	int rc = 0;
	memset(m, 0, sizeof(m));
	for (unsigned i = 0; i < s->tx_n; i += per, ndgrams++) {
		unsigned k = s->tx_n - i < per ? s->tx_n - i : per;
		iov[ndgrams] = (struct iovec){.iov_base = s->tx[i], .iov_len = k * SIM_REQ_SIZE};
		m[ndgrams].msg_hdr.msg_iov = &iov[ndgrams];
		m[ndgrams].msg_hdr.msg_iovlen = 1;
	}
	unsigned waits = 0;
	while (done < ndgrams) {
		int n = sendmmsg(s->data_fd, m + done, ndgrams - done, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && waits < 5) {
			/* the simulator's socket takes a few datagrams at a time: wait for room,
			 * as an HCA's send queue would hold them, rather than lose answers nobody
			 * retries (SA responses, BUSY). A blocking send waits for the peer's queue
			 * (poll does not see it); SO_SNDTIMEO bounds each wait. */
			n = sendmmsg(s->data_fd, m + done, ndgrams - done, 0);
			if (n > 0) {
				done += (unsigned)n;
				continue;
			}
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
				waits++; /* a whole SO_SNDTIMEO without room */
				continue;
			}
		}
		if (n <= 0) {
			/* the simulator's queue is full (or gone): the rest are lost MADs, as a
			 * fabric loses them; requests are retried, clients ask again */
			rc = n < 0 ? -errno : -EIO;
			unsigned lost = s->tx_n - (done * per < s->tx_n ? done * per : s->tx_n);
			s->tx_dropped += lost;
			log_debug(t->log, "mad", "%s: %u MADs not sent: %s", t->desc, lost,
			          strerror(-rc));
			break;
		}
		done += (unsigned)n;
	}
	s->tx_n = 0;
	return rc;
}

static int sim_recv(struct mad_transport *t, struct mad_addr *from, uint8_t *buf, size_t cap,
                    size_t *len, unsigned *flags)
{
	struct sim_transport *s = to_sim(t);
	if (s->rx_next < s->rx_n && s->rx_off >= s->rx_len[s->rx_next]) {
		s->rx_next++; /* that datagram's MADs all taken */
		s->rx_off = 0;
	}
	if (s->rx_next == s->rx_n) {
		struct mmsghdr m[SIM_BATCH];
		struct iovec iov[SIM_BATCH];
		memset(m, 0, sizeof(m));
		for (unsigned i = 0; i < SIM_BATCH; i++) {
			iov[i] = (struct iovec){.iov_base = s->rx[i], .iov_len = sizeof(s->rx[i])};
			m[i].msg_hdr.msg_iov = &iov[i];
			m[i].msg_hdr.msg_iovlen = 1;
		}
		int got = recvmmsg(s->data_fd, m, SIM_BATCH, MSG_DONTWAIT, NULL);
		if (got < 0)
			return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -errno;
		for (int i = 0; i < got; i++)
			s->rx_len[i] = m[i].msg_len;
		s->rx_n = (unsigned)got;
		s->rx_next = 0;
		s->rx_off = 0;
		if (!got)
			return 0;
	}
	unsigned n = s->rx_len[s->rx_next];
	if (!n || n % SIM_REQ_SIZE || n / SIM_REQ_SIZE > (s->pack ? s->pack : 1)) {
		s->rx_next++;
		s->rx_off = 0;
		log_warn(t->log, "mad",
		         "%s: dropped a %u-byte message from the simulator (a MAD "
		         "message is %d bytes, %u to a datagram): check the simulator's version",
		         t->desc, n, SIM_REQ_SIZE, s->pack ? s->pack : 1);
		return -EPROTO;
	}
	const uint8_t *req = s->rx[s->rx_next] + s->rx_off;
	s->rx_off += SIM_REQ_SIZE;
	uint64_t length;
	memcpy(&length, req + 24, 8);
	length = be64toh(length);
	if (length == 0 || length > MAD_SIZE)
		length = MAD_SIZE; /* old ibsim put a context here, not a length */
	if (cap < length)
		return -EMSGSIZE;
	memcpy(buf, req + SIM_REQ_MAD, length);
	*len = length;
	memset(from, 0, sizeof(*from));
	from->lid = ntohs((uint16_t)get32(req, 4));
	from->qpn = ntohl(get32(req, 12));
	from->qkey = from->qpn ? QP1_QKEY : 0;
	*flags = ntohl(get32(req, 16)) == SIM_STATUS_DROPPED ? MAD_RECV_SEND_FAILED : 0;
	return 1;
}

static int sim_set_sm(struct mad_transport *t, bool is_sm)
{
	uint8_t data[4];
	int v = is_sm;
	memcpy(data, &v, 4);
	return sim_ctl(to_sim(t), SIM_CTL_SET_ISSM, data, sizeof(data));
}

static int sim_query_port(struct mad_transport *t, struct mad_local_port *out)
{
	struct sim_transport *s = to_sim(t);
	uint8_t data[SIM_CTL_DATA_MAX] = {0};
	struct mad_node_info ni;
	struct mad_port_info pi;
	struct mad_error err;
	int r = sim_ctl(s, SIM_CTL_GET_NODEINFO, data, sizeof(data));
	if (r < 0)
		return r;
	if (mad_node_info_decode(data, sizeof(data), &ni, &err) < 0)
		return -EPROTO;
	memset(data, 0, sizeof(data)); /* data[0] = 0: the port we are attached to */
	r = sim_ctl(s, SIM_CTL_GET_PORTINFO, data, sizeof(data));
	if (r < 0)
		return r;
	if (mad_port_info_decode(data, sizeof(data), &pi, &err) < 0)
		return -EPROTO;
	memset(out, 0, sizeof(*out));
	snprintf(out->ca_name, sizeof(out->ca_name), "sim");
	out->port_num = ni.node_type == NODE_TYPE_SWITCH ? 0 : ni.local_port_num;
	out->node_guid = ni.node_guid;
	out->port_guid = ni.port_guid;
	if (ni.node_type != NODE_TYPE_SWITCH && ni.port_guid == ni.node_guid) {
		/* ibsim's control channel gives the node GUID in PortGUID, while its SMA answers
		 * NodeInfo with node GUID + port number for a CA port: take the GUID the fabric
		 * shows, or other SMs would not find this one by its SMInfo GUID */
		uint8_t num = pi.local_port_num ? pi.local_port_num : 1;
		out->port_num = num;
		out->port_guid = ni.node_guid + num;
	}
	out->node_type = ni.node_type;
	out->gid_prefix = pi.gid_prefix;
	out->lid = pi.lid;
	out->sm_lid = pi.master_sm_lid;
	out->lmc = pi.lmc;
	out->state = pi.port_state;
	out->phys_state = pi.phys_state;
	out->capability_mask = pi.capability_mask;
	return 0;
}

static void sim_close(struct mad_transport *t)
{
	struct sim_transport *s = to_sim(t);
	if (s->data_fd >= 0 && s->tx_n)
		sim_flush(t);
	if (s->ctl_fd >= 0) {
		sim_ctl(s, SIM_CTL_DISCONNECT, NULL, 0);
		close(s->ctl_fd);
	}
	if (s->data_fd >= 0)
		close(s->data_fd);
	free(s);
}

static const struct mad_transport_ops sim_ops = {
    .name = "sim",
    .fd = sim_fd,
    .send = sim_send,
    .recv = sim_recv,
    .flush = sim_flush,
    .set_sm = sim_set_sm,
    .query_port = sim_query_port,
    .close = sim_close,
};

/* Bind a datagram socket to "<base>:<prefix><id>" with an id no other client in this or
 * another process holds: the pid first, then pid + k * 2^22 (above any pid). */
static int bind_unique(int fd, const char *base, const char *prefix, uint32_t *id)
{
	uint32_t pid = (uint32_t)getpid();
	for (uint32_t k = 0; k < 256; k++) {
		uint32_t cand = *id ? *id : (pid + (k << 22)) & 0x7fffffffu;
		union sim_sockaddr a;
		char suffix[32];
		snprintf(suffix, sizeof(suffix), "%s%u", prefix, cand);
		socklen_t len = sim_name(&a, false, NULL, 0, base, suffix);
		if (bind(fd, &a.sa, len) == 0) {
			*id = cand;
			return 0;
		}
		if (errno != EADDRINUSE || *id)
			return -errno;
	}
	return -EADDRINUSE;
}

static void pack_ask(uint8_t *info)
{
	put32(info, SIM_PACK_OFF, SIM_PACK_ASK);
	put32(info, SIM_PACK_OFF + 4, SIM_PACK_MAX);
}

/* What the connect answer says of packed datagrams, and the window that suits them. */
static void pack_agreed(struct sim_transport *s, const uint8_t *info)
{
	s->pack = 1;
	if (get32(info, SIM_PACK_OFF) == SIM_PACK_AGREED) {
		uint32_t k = get32(info, SIM_PACK_OFF + 4);
		s->pack = k >= 1 && k <= SIM_PACK_MAX ? k : 1;
	}
	/* fabricsim answers a packed datagram at once: 8 of them in flight keep it busy (at
	 * 64, two datagrams, it waited on us half the time); one MAD to a datagram, as ibsim
	 * takes them, the kernel's queue of datagrams is the limit */
	s->base.window_hint = s->pack > 1 ? 8 * s->pack : 64;
}

int mad_transport_open_sim(const struct mad_transport_opts *opts, struct mad_transport **out,
                           char *err, size_t errlen)
{
	const char *base = getenv("IBSIM_SOCKNAME");
	const char *host = getenv("IBSIM_SERVER_NAME");
	const char *port_env = getenv("IBSIM_SERVER_PORT");
	const char *node = opts->sim_node ? opts->sim_node : getenv("SIM_HOST");
	bool inet = host && *host;
	unsigned server_port = port_env ? (unsigned)atoi(port_env) : SIM_DEFAULT_PORT;
	struct in_addr host_addr = {0};
	int r;

	if (!base || !*base)
		base = "sim";
	if (inet) {
		struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *ai;
		if (getaddrinfo(host, NULL, &hints, &ai) != 0) {
			snprintf(err, errlen, "sim: cannot resolve IBSIM_SERVER_NAME \"%s\"", host);
			return -EHOSTUNREACH;
		}
		host_addr = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		freeaddrinfo(ai);
	}

	struct sim_transport *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base.ops = &sim_ops;
	s->base.log = opts->log;
	s->inet = inet;
	s->ctl_fd = socket(inet ? AF_INET : AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	s->data_fd = socket(inet ? AF_INET : AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->ctl_fd < 0 || s->data_fd < 0) {
		r = -errno;
		snprintf(err, errlen, "sim: socket: %s", strerror(errno));
		goto fail;
	}
	/* room for bursts (a few hundred RMPP windows at once): every datagram in the
	 * simulator's queue counts against our send buffer; and a full simulator queue holds a
	 * send back at most this long (sim_flush) */
	int sndbuf = 4 << 20;
	setsockopt(s->data_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	struct timeval sndtimeo = {.tv_sec = 0, .tv_usec = 100000};
	setsockopt(s->data_fd, SOL_SOCKET, SO_SNDTIMEO, &sndtimeo, sizeof(sndtimeo));

	union sim_sockaddr a;
	socklen_t alen;
	uint32_t id = 0;
	if (inet) {
		alen = sim_name(&a, true, NULL, 0, base, "");
		if (bind(s->ctl_fd, &a.sa, alen) < 0 || bind(s->data_fd, &a.sa, alen) < 0) {
			r = -errno;
			snprintf(err, errlen, "sim: bind: %s", strerror(errno));
			goto fail;
		}
		alen = sizeof(a.in);
		getsockname(s->data_fd, &a.sa, &alen);
		id = ntohs(a.in.sin_port); /* the server sends our MADs to this port */
	} else {
		uint32_t ctl_id = 0;
		if ((r = bind_unique(s->ctl_fd, base, "ctl", &ctl_id)) < 0 ||
		    (r = bind_unique(s->data_fd, base, "in", &id)) < 0) {
			snprintf(err, errlen, "sim: cannot bind a client socket under \"%s\": %s",
			         base, strerror(-r));
			goto fail;
		}
	}

	alen = sim_name(&a, inet, &host_addr, server_port, base, "ctl");
	if ((r = connect_retry(s->ctl_fd, &a, alen)) < 0) {
		if (inet)
			snprintf(err, errlen, "sim: no simulator at %s:%u (%s)", host, server_port,
			         strerror(-r));
		else
			snprintf(err, errlen,
			         "sim: no simulator listening on \"%s:ctl\" (%s): "
			         "start ibsim or fabricsim, or set IBSIM_SOCKNAME",
			         base, strerror(-r));
		goto fail;
	}

	uint8_t info[SIM_CTL_DATA_MAX] = {0};
	put32(info, SCI_ID, id);
	put32(info, SCI_QP, 0);
	put32(info, SCI_ISSM, (opts->roles & (MAD_ROLE_SM | MAD_ROLE_SA)) ? 1 : 0);
	pack_ask(info);
	if (node)
		snprintf((char *)info + SCI_NODEID, SCI_NODEID_LEN, "%s", node);
	s->client_id = 0;
	if ((r = sim_ctl(s, SIM_CTL_CONNECT, info, 64)) < 0) {
		snprintf(err, errlen,
		         "sim: the simulator refused the connection%s%s%s: unknown "
		         "node, too many clients, or an SM is already attached there (%s)",
		         node ? " to node \"" : "", node ? node : "", node ? "\"" : "",
		         strerror(-r));
		goto fail;
	}
	s->client_id = get32(info, SCI_ID);
	pack_agreed(s, info);
	char attached[SCI_NODEID_LEN + 1] = {0};
	memcpy(attached, info + SCI_NODEID, SCI_NODEID_LEN);

	char suffix[32];
	snprintf(suffix, sizeof(suffix), "out%u", s->client_id);
	alen = sim_name(&a, inet, &host_addr, server_port + s->client_id + 1, base, suffix);
	if ((r = connect_retry(s->data_fd, &a, alen)) < 0) {
		snprintf(err, errlen, "sim: cannot reach the simulator's data socket %s: %s",
		         suffix, strerror(-r));
		goto fail;
	}
	snprintf(s->base.desc, sizeof(s->base.desc), "sim \"%s\" node \"%s\" client %u", base,
	         attached, s->client_id);
	*out = &s->base;
	return 0;
fail:
	if (s->ctl_fd >= 0)
		close(s->ctl_fd);
	if (s->data_fd >= 0)
		close(s->data_fd);
	free(s);
	return r < 0 ? r : -EIO;
}
