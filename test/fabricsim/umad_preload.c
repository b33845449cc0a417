/* libfabricsim-umad.so: run an unchanged libibumad program (OpenSM, osmtest, saquery, the
 * diags) on fabricsim, as if the node named by SIM_HOST were this host's HCA.
 *
 * Preloaded, it stands in for what libibumad reaches through the kernel: a sysfs tree for
 * one CA and port (written under a private directory, and paths under /sys/class/infiniband
 * and /sys/class/infiniband_mad sent there), the umad device (/dev/infiniband/umad0, a real
 * eventfd so poll() works unchanged), the issm device (IsSM on the port), agent
 * registration, and the kernel's MAD services:
 *  - requests carry the agent in TID bits 32-47 (the kernel's hi_tid), so answers find it;
 *  - RMPP for agents registered with an RMPP version: a long write goes out as DATA
 *    segments, segments that come in are acknowledged and handed over as one MAD, with
 *    ENOSPC and the needed length when the reader's buffer is too small;
 *  - a MAD the simulator could not deliver comes back with status ETIMEDOUT.
 * It speaks the ibsim protocol through mad/'s sim transport.
 *
 * Why not Debian's libumad2sim.so: it keeps at most 10 clients, has no RMPP (OpenSM sends
 * the first 256 bytes of a table, clients read one segment) and hands over only the first
 * 224 bytes of each MAD. Tests that compare SAs record by record need whole tables.
 * Not emulated: resending lost segments (segments go out back to back, and a gap ends the
 * transfer), response timeouts (programs keep their own), more than one port. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>

#include "mad/mad_types.h"
#include "mad/transport.h"

#define UMAD_HDR     ((size_t)sizeof(struct ib_user_mad))
#define RMPP_HDR_END 36
#define MAX_AGENTS   64
#define MAX_FILES    8
#define MAX_XFERS    64
#define MAX_PENDING  1024
#define RMPP_WINDOW  32
#define MAX_XFER     (8u << 20)
#define CA_NAME      "fabricsim0"
#define SYS_IB       "/sys/class/infiniband"
#define SYS_IB_MAD   "/sys/class/infiniband_mad"
#define DEV_UMAD     "/dev/infiniband/umad0"
#define DEV_ISSM     "/dev/infiniband/issm0"

/* The kernel's registration request (rdma/ib_user_mad.h, which cannot be included next to
 * umad.h: both define struct ib_user_mad) */
struct reg_req {
	uint32_t id;
	uint32_t method_mask[4];
	uint8_t qpn, mgmt_class, mgmt_class_version;
	uint8_t oui[3];
	uint8_t rmpp_version;
};
#define REGISTER_AGENT   _IOWR(0x1b, 1, struct reg_req)
#define UNREGISTER_AGENT _IOW(0x1b, 2, uint32_t)
#define ENABLE_PKEY      _IO(0x1b, 3)

struct msg {
	struct msg *next;
	size_t len; /* umad header + MAD */
	uint8_t buf[];
};

struct file {
	int fd; /* the eventfd handed out; -1: free */
	struct msg *head, *tail;
};

struct agent {
	bool used;
	int file;
	struct reg_req req;
};

/* An RMPP transfer coming in. */
struct xfer {
	bool used;
	uint16_t lid;
	uint64_t tid;
	uint32_t expected, window_last;
	uint8_t *buf; /* umad header, class header once, then the data */
	size_t len, cap, hdr_len;
	int agent;
	uint64_t age;
};

/* A request the program sent with a timeout: the kernel resends it, and when no answer
 * comes, hands it back with status ETIMEDOUT. Programs (OpenSM's vendor layer, osmtest)
 * count on that to end a query. */
struct pend {
	bool used;
	int agent, retries;
	uint64_t tid; /* low 48 bits: the simulator stamps the top 16 */
	uint32_t timeout_ms;
	struct timespec deadline;
	struct mad_addr to;
	uint8_t mad[MAD_SIZE];
	size_t len;
};

static struct {
	pthread_once_t once;
	pthread_mutex_t mu;
	bool ok;
	struct mad_transport *t;
	struct mad_local_port lp;
	char root[128]; /* the private sysfs */
	struct file files[MAX_FILES];
	struct agent agents[MAX_AGENTS];
	struct xfer xfers[MAX_XFERS];
	uint64_t ticks;
	struct pend pends[MAX_PENDING];
	int issm_fd;
	pthread_t rx;
	bool debug;
} g = {.once = PTHREAD_ONCE_INIT, .mu = PTHREAD_MUTEX_INITIALIZER, .issm_fd = -1};

static int (*next_open)(const char *, int, ...);
static int (*next_open64)(const char *, int, ...);
static int (*next_close)(int);
static ssize_t (*next_read)(int, void *, size_t);
static ssize_t (*next_write)(int, const void *, size_t);
static int (*next_ioctl)(int, unsigned long, ...);
static DIR *(*next_opendir)(const char *);
static int (*next_scandir)(const char *, struct dirent ***, int (*)(const struct dirent *),
                           int (*)(const struct dirent **, const struct dirent **));
static int (*next_scandir64)(const char *, struct dirent64 ***, int (*)(const struct dirent64 *),
                             int (*)(const struct dirent64 **, const struct dirent64 **));

#define DBG(...)                                                                                   \
	do {                                                                                       \
		if (g.debug)                                                                       \
			fprintf(stderr, "fabricsim-umad: " __VA_ARGS__);                           \
	} while (0)

static void resolve(void)
{
	next_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	next_open64 = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
	next_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	next_read = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	next_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	next_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	next_opendir = (DIR * (*)(const char *)) dlsym(RTLD_NEXT, "opendir");
	next_scandir =
	    (int (*)(const char *, struct dirent ***, int (*)(const struct dirent *),
	             int (*)(const struct dirent **, const struct dirent **)))dlsym(RTLD_NEXT,
	                                                                            "scandir");
	next_scandir64 =
	    (int (*)(const char *, struct dirent64 ***, int (*)(const struct dirent64 *),
	             int (*)(const struct dirent64 **,
	                     const struct dirent64 **)))dlsym(RTLD_NEXT, "scandir64");
}

/* ---- the private sysfs ---- */

static void put_file(const char *dir, const char *name, const char *fmt, ...)
{
	char path[512];
	snprintf(path, sizeof(path), "%s%s/%s", g.root, dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static void make_dirs(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s%s", g.root, dir);
	for (char *p = path + strlen(g.root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

static void remove_tree(const char *path)
{
	DIR *d = next_opendir(path);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char sub[512];
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			remove_tree(sub);
		}
		closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

static void cleanup(void)
{
	if (g.root[0])
		remove_tree(g.root);
	/* the simulator forgets this client now rather than when a send to it fails */
	if (g.t)
		g.t->ops->close(g.t);
	g.t = NULL;
}

static void guid_str(char *b, size_t n, uint64_t v)
{
	snprintf(b, n, "%04x:%04x:%04x:%04x", (unsigned)(v >> 48) & 0xffff,
	         (unsigned)(v >> 32) & 0xffff, (unsigned)(v >> 16) & 0xffff, (unsigned)v & 0xffff);
}

static void write_sysfs(void)
{
	const struct mad_local_port *p = &g.lp;
	static const char *states[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
	char dir[256], gs[32], gp[32];
	make_dirs(SYS_IB_MAD);
	put_file(SYS_IB_MAD, "abi_version", "%d\n", IB_UMAD_ABI_VERSION);
	snprintf(dir, sizeof(dir), SYS_IB "/" CA_NAME);
	make_dirs(dir);
	put_file(dir, "node_type", "%u: %s\n", p->node_type,
	         p->node_type == NODE_TYPE_SWITCH ? "SWITCH" : "CA");
	put_file(dir, "fw_ver", "1.0.0\n");
	put_file(dir, "hw_rev", "0\n");
	put_file(dir, "hca_type", "fabricsim\n");
	guid_str(gs, sizeof(gs), p->node_guid);
	put_file(dir, "node_guid", "%s\n", gs);
	put_file(dir, "sys_image_guid", "%s\n", gs);
	snprintf(dir, sizeof(dir), SYS_IB "/" CA_NAME "/ports/%u", p->port_num);
	make_dirs(dir);
	put_file(dir, "lid", "0x%x\n", p->lid);
	put_file(dir, "lid_mask_count", "%u\n", p->lmc);
	put_file(dir, "sm_lid", "0x%x\n", p->sm_lid);
	put_file(dir, "sm_sl", "0\n");
	put_file(dir, "state", "%u: %s\n", p->state, p->state < 6 ? states[p->state] : "?");
	put_file(dir, "phys_state", "%u: %s\n", p->phys_state,
	         p->phys_state == 5 ? "LinkUp" : "Polling");
	put_file(dir, "rate", "10 Gb/sec (4X)\n");
	put_file(dir, "cap_mask", "0x%08x\n", p->capability_mask);
	put_file(dir, "link_layer", "InfiniBand\n");
	char sub[300];
	snprintf(sub, sizeof(sub), "%s/gids", dir);
	make_dirs(sub);
	guid_str(gp, sizeof(gp), p->gid_prefix);
	guid_str(gs, sizeof(gs), p->port_guid);
	put_file(sub, "0", "%s:%s\n", gp, gs);
	snprintf(sub, sizeof(sub), "%s/pkeys", dir);
	make_dirs(sub);
	for (unsigned i = 0; i < 32; i++) {
		char name[8];
		snprintf(name, sizeof(name), "%u", i);
		put_file(sub, name, "0x%04x\n", i == 0 ? 0xffff : 0);
	}
	static const char *const devs[] = {"umad0", "issm0"};
	for (unsigned i = 0; i < 2; i++) {
		snprintf(dir, sizeof(dir), SYS_IB_MAD "/%s", devs[i]);
		make_dirs(dir);
		put_file(dir, "ibdev", CA_NAME "\n");
		put_file(dir, "port", "%u\n", p->port_num);
	}
}

/* Send one MAD; a full socket (a long transfer going out back to back) waits for room. */
static int sim_send(const struct mad_addr *to, const uint8_t *mad)
{
	for (int tries = 0; tries < 2000; tries++) {
		int r = g.t->ops->send(g.t, to, mad, MAD_SIZE);
		if (r != -EAGAIN && r != -EWOULDBLOCK && r != -ENOBUFS)
			return r;
		struct pollfd p = {.fd = g.t->ops->fd(g.t), .events = POLLOUT};
		poll(&p, 1, 5);
	}
	return -EAGAIN;
}

/* ---- MADs in ---- */

static void queue_msg(int file, const uint8_t *buf, size_t len)
{
	struct msg *m = malloc(sizeof(*m) + len);
	if (!m)
		return;
	m->next = NULL;
	m->len = len;
	memcpy(m->buf, buf, len);
	struct file *f = &g.files[file];
	if (f->tail)
		f->tail->next = m;
	else
		f->head = m;
	f->tail = m;
	uint64_t one = 1;
	if (next_write(f->fd, &one, sizeof(one)) < 0)
		DBG("eventfd: %s\n", strerror(errno));
}

static size_t class_hdr_len(uint8_t cls)
{
	if (cls == MAD_CLASS_SUBN_ADM)
		return MAD_SA_HDR_END;
	if (cls >= 0x30 && cls <= 0x4f)
		return 40; /* vendor class with an OUI */
	return 0;
}

static bool rmpp_agent(int a)
{
	return a >= 0 && a < MAX_AGENTS && g.agents[a].used && g.agents[a].req.rmpp_version;
}

/* The agent a MAD is for: answers by hi_tid, requests by class (and method). */
static int agent_for(const uint8_t *mad)
{
	if (mad[3] & MAD_METHOD_RESP) {
		int a = (int)((uint16_t)(mad[10] << 8 | mad[11])); /* TID bits 32-47 */
		return a < MAX_AGENTS && g.agents[a].used ? a : -1;
	}
	int any = -1;
	for (int a = 0; a < MAX_AGENTS; a++) {
		const struct reg_req *r = &g.agents[a].req;
		if (!g.agents[a].used || r->mgmt_class != mad[1])
			continue;
		unsigned m = mad[3] & 0x7f;
		if (r->method_mask[m / 32] & (1u << (m % 32)))
			return a;
		if (any < 0)
			any = a;
	}
	return any;
}

static void fill_umad(uint8_t *u, int agent, const struct mad_addr *from, unsigned status,
                      size_t len)
{
	struct ib_user_mad h;
	memset(&h, 0, sizeof(h));
	h.agent_id = (uint32_t)agent;
	h.status = status;
	h.length = (uint32_t)len;
	h.addr.qpn = htonl(from->qpn);
	h.addr.qkey = htonl(from->qpn ? QP1_QKEY : 0);
	h.addr.lid = htons(from->lid);
	memcpy(u, &h, UMAD_HDR);
}

static void send_ctl_ack(const struct mad_addr *to, const uint8_t *mad, size_t hdr_len,
                         uint32_t seg, uint32_t wl)
{
	uint8_t out[MAD_SIZE] = {0};
	memcpy(out, mad, hdr_len);
	out[3] ^= MAD_METHOD_RESP; /* the other direction's method, as the kernel sends ACKs */
	out[24] = 1;               /* RMPP version */
	out[25] = 2;               /* ACK */
	out[26] = 0x1f << 3 | 1;   /* no response time; Active */
	out[27] = 0;
	uint32_t s = htonl(seg), w = htonl(wl);
	memcpy(out + 28, &s, 4);
	memcpy(out + 32, &w, 4);
	sim_send(to, out);
}

static struct xfer *find_xfer(uint16_t lid, uint64_t tid, bool make)
{
	struct xfer *free_one = NULL, *oldest = NULL;
	for (int i = 0; i < MAX_XFERS; i++) {
		struct xfer *x = &g.xfers[i];
		if (x->used && x->lid == lid && x->tid == tid)
			return x;
		if (!x->used && !free_one)
			free_one = x;
		if (x->used && (!oldest || x->age < oldest->age))
			oldest = x;
	}
	if (!make)
		return NULL;
	struct xfer *x = free_one ? free_one : oldest;
	free(x->buf);
	memset(x, 0, sizeof(*x));
	return x;
}

/* An RMPP DATA segment for a kernel-RMPP agent. */
static void rmpp_data(int agent, const struct mad_addr *from, const uint8_t *mad, size_t len,
                      size_t hdr_len)
{
	uint64_t tid;
	memcpy(&tid, mad + 8, 8);
	uint32_t num = ntohl(*(const uint32_t *)(const void *)(mad + 28));
	uint32_t paylen = ntohl(*(const uint32_t *)(const void *)(mad + 32));
	bool first = mad[26] & 2, last = mad[26] & 4;
	struct xfer *x = find_xfer(from->lid, tid, first && num == 1);
	if (!x)
		return; /* the middle of a transfer we do not know */
	if (first && num == 1) {
		free(x->buf);
		*x = (struct xfer){.used = true,
		                   .lid = from->lid,
		                   .tid = tid,
		                   .expected = 1,
		                   .window_last = RMPP_WINDOW,
		                   .hdr_len = hdr_len,
		                   .agent = agent};
		x->cap = UMAD_HDR + hdr_len + 16 * (MAD_SIZE - hdr_len);
		x->buf = malloc(x->cap);
		if (!x->buf) {
			x->used = false;
			return;
		}
		memcpy(x->buf + UMAD_HDR, mad, hdr_len);
		x->len = UMAD_HDR + hdr_len;
	}
	x->age = ++g.ticks;
	if (num != x->expected) {
		send_ctl_ack(from, mad, hdr_len, x->expected - 1, x->window_last);
		return;
	}
	size_t seg_data = MAD_SIZE - hdr_len;
	size_t n = len > hdr_len ? len - hdr_len : 0;
	if (n > seg_data)
		n = seg_data;
	if (last) {
		size_t class_hdr = hdr_len - RMPP_HDR_END;
		size_t want = paylen > class_hdr ? paylen - class_hdr : 0;
		if (want < n || len < MAD_SIZE)
			n = want < seg_data ? want : seg_data;
	}
	if (x->len + seg_data > x->cap) {
		size_t ncap = x->cap * 2;
		uint8_t *nb = ncap <= MAX_XFER ? realloc(x->buf, ncap) : NULL;
		if (!nb) {
			free(x->buf);
			x->buf = NULL;
			x->used = false;
			return;
		}
		x->buf = nb;
		x->cap = ncap;
	}
	memset(x->buf + x->len, 0, n);
	memcpy(x->buf + x->len, mad + hdr_len,
	       len > hdr_len ? (len - hdr_len < n ? len - hdr_len : n) : 0);
	x->len += n;
	x->expected++;
	if (last || num >= x->window_last)
		x->window_last = num + RMPP_WINDOW;
	send_ctl_ack(from, mad, hdr_len, num, last ? num : x->window_last);
	if (!last)
		return;
	fill_umad(x->buf, x->agent, from, 0, x->len);
	DBG("RMPP transfer of %zu bytes from LID %u for agent %d\n", x->len - UMAD_HDR, from->lid,
	    x->agent);
	queue_msg(g.agents[x->agent].file, x->buf, x->len);
	free(x->buf);
	memset(x, 0, sizeof(*x));
}

static uint64_t tid48(const uint8_t *mad)
{
	uint64_t t = 0;
	for (int i = 10; i < 16; i++)
		t = t << 8 | mad[i];
	return t;
}

static void deadline_in(struct timespec *ts, uint32_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static long ms_until(const struct timespec *ts)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long ms = (ts->tv_sec - now.tv_sec) * 1000 + (ts->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : ms;
}

/* Remember a request sent with a timeout (caller holds g.mu). */
static void pend_add(int agent, const struct ib_user_mad *h, const struct mad_addr *to,
                     const uint8_t *mad, size_t len)
{
	for (int i = 0; i < MAX_PENDING; i++) {
		struct pend *p = &g.pends[i];
		if (p->used)
			continue;
		*p = (struct pend){.used = true,
		                   .agent = agent,
		                   .retries = (int)h->retries,
		                   .tid = tid48(mad),
		                   .timeout_ms = h->timeout_ms,
		                   .to = *to,
		                   .len = len < MAD_SIZE ? len : MAD_SIZE};
		memcpy(p->mad, mad, p->len);
		deadline_in(&p->deadline, h->timeout_ms);
		return;
	}
}

/* An answer came: its request no longer waits (caller holds g.mu). */
static void pend_done(const uint8_t *mad)
{
	uint64_t t = tid48(mad);
	for (int i = 0; i < MAX_PENDING; i++)
		if (g.pends[i].used && g.pends[i].tid == t)
			g.pends[i].used = false;
}

/* Resend what timed out, or hand it back with ETIMEDOUT; ms until the next deadline. */
static int pend_expire(void)
{
	long next = -1;
	for (int i = 0; i < MAX_PENDING; i++) {
		struct pend *p = &g.pends[i];
		if (!p->used)
			continue;
		long left = ms_until(&p->deadline);
		if (left > 0) {
			if (next < 0 || left < next)
				next = left;
			continue;
		}
		if (p->retries-- > 0) {
			sim_send(&p->to, p->mad);
			deadline_in(&p->deadline, p->timeout_ms);
			if (next < 0 || (long)p->timeout_ms < next)
				next = p->timeout_ms;
			continue;
		}
		p->used = false;
		if (!g.agents[p->agent].used)
			continue;
		uint8_t u[UMAD_HDR + MAD_SIZE];
		fill_umad(u, p->agent, &p->to, ETIMEDOUT, UMAD_HDR + p->len);
		memcpy(u + UMAD_HDR, p->mad, p->len);
		DBG("request TID 0x%012llx to LID %u timed out\n", (unsigned long long)p->tid,
		    p->to.lid);
		queue_msg(g.agents[p->agent].file, u, UMAD_HDR + p->len);
	}
	return next < 0 ? -1 : (int)(next > 1000 ? 1000 : next + 1);
}

static void *rx_thread(void *arg)
{
	(void)arg;
	struct pollfd p = {.fd = g.t->ops->fd(g.t), .events = POLLIN};
	int wait_ms = -1;
	for (;;) {
		if (poll(&p, 1, wait_ms) < 0 && errno != EINTR)
			return NULL;
		for (;;) {
			uint8_t mad[MAD_SIZE];
			struct mad_addr from;
			size_t len = 0;
			unsigned flags = 0;
			int r = g.t->ops->recv(g.t, &from, mad, sizeof(mad), &len, &flags);
			if (r <= 0)
				break;
			if (len < 24)
				continue;
			pthread_mutex_lock(&g.mu);
			if (mad[3] & MAD_METHOD_RESP)
				pend_done(mad);
			int a = agent_for(mad);
			size_t hdr_len = class_hdr_len(mad[1]);
			bool rmpp = len >= RMPP_HDR_END && hdr_len && rmpp_agent(a) && mad[24] &&
			            (mad[26] & 1);
			if (a < 0) {
				DBG("no agent for class 0x%02x method 0x%02x: dropped\n", mad[1],
				    mad[3]);
			} else if (rmpp && !(flags & MAD_RECV_SEND_FAILED)) {
				if (mad[25] == 1)
					rmpp_data(a, &from, mad, len, hdr_len);
				/* ACK, STOP, ABORT: for transfers we sent back to back */
			} else {
				uint8_t u[UMAD_HDR + MAD_SIZE];
				fill_umad(u, a, &from,
				          (flags & MAD_RECV_SEND_FAILED) ? ETIMEDOUT : 0,
				          UMAD_HDR + len);
				memcpy(u + UMAD_HDR, mad, len);
				queue_msg(g.agents[a].file, u, UMAD_HDR + len);
			}
			pthread_mutex_unlock(&g.mu);
		}
		pthread_mutex_lock(&g.mu);
		wait_ms = pend_expire();
		pthread_mutex_unlock(&g.mu);
		if (wait_ms < 0 || wait_ms > 100)
			wait_ms = 100; /* a request sent meanwhile may have a shorter timeout */
	}
}

static void setup(void)
{
	resolve();
	const char *d = getenv("FABRICSIM_UMAD_DEBUG");
	g.debug = d && *d && *d != '0';
	for (int i = 0; i < MAX_FILES; i++)
		g.files[i].fd = -1;
	/* a client until the program opens issm0: only an SM gets the fabric's requests */
	struct mad_transport_opts o = {.sim_node = getenv("SIM_HOST"), .roles = MAD_ROLE_CLIENT};
	char err[256] = "";
	if (mad_transport_open_sim(&o, &g.t, err, sizeof(err)) < 0 ||
	    g.t->ops->query_port(g.t, &g.lp) < 0) {
		fprintf(stderr, "fabricsim-umad: cannot attach to the simulator: %s\n",
		        err[0] ? err : "no answer to a port query");
		return;
	}
	snprintf(g.root, sizeof(g.root), "/tmp/fabricsim-umad.%d.XXXXXX", (int)getpid());
	if (!mkdtemp(g.root)) {
		g.root[0] = 0;
		return;
	}
	write_sysfs();
	atexit(cleanup);
	if (pthread_create(&g.rx, NULL, rx_thread, NULL))
		return;
	pthread_detach(g.rx);
	g.ok = true;
	DBG("attached as %s, port GUID 0x%016llx, GID prefix 0x%016llx, LID %u\n", g.t->desc,
	    (unsigned long long)g.lp.port_guid, (unsigned long long)g.lp.gid_prefix, g.lp.lid);
}

static void ensure(void)
{
	pthread_once(&g.once, setup);
}

/* A path of the emulated sysfs, in the private tree; NULL for any other path. */
static const char *redirect(const char *path, char *buf, size_t len)
{
	if (!path || (strncmp(path, SYS_IB, strlen(SYS_IB)) != 0))
		return NULL;
	ensure();
	if (!g.root[0])
		return NULL;
	snprintf(buf, len, "%s%s", g.root, path);
	return buf;
}

static int file_of(int fd)
{
	if (fd < 0)
		return -1;
	for (int i = 0; i < MAX_FILES; i++)
		if (g.files[i].fd == fd)
			return i;
	return -1;
}

static int open_common(int (*real)(const char *, int, ...), const char *path, int flags,
                       mode_t mode)
{
	if (!real)
		resolve();
	char buf[512];
	if (path && !strcmp(path, DEV_UMAD)) {
		ensure();
		if (!g.ok) {
			errno = ENODEV;
			return -1;
		}
		int fd = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
		pthread_mutex_lock(&g.mu);
		int slot = -1;
		for (int i = 0; i < MAX_FILES && slot < 0; i++)
			if (g.files[i].fd < 0)
				slot = i;
		if (slot < 0 || fd < 0) {
			pthread_mutex_unlock(&g.mu);
			if (fd >= 0)
				next_close(fd);
			errno = EMFILE;
			return -1;
		}
		g.files[slot] = (struct file){.fd = fd};
		pthread_mutex_unlock(&g.mu);
		return fd;
	}
	if (path && !strcmp(path, DEV_ISSM)) {
		ensure();
		if (!g.ok) {
			errno = ENODEV;
			return -1;
		}
		int fd = real("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			g.issm_fd = fd;
			g.t->ops->set_sm(g.t, true);
		}
		return fd;
	}
	const char *p = redirect(path, buf, sizeof(buf));
	return real(p ? p : path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!next_open)
		resolve();
	return open_common(next_open, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!next_open64)
		resolve();
	return open_common(next_open64, path, flags, mode);
}

DIR *opendir(const char *path)
{
	if (!next_opendir)
		resolve();
	char buf[512];
	const char *p = redirect(path, buf, sizeof(buf));
	return next_opendir(p ? p : path);
}

int scandir(const char *path, struct dirent ***list, int (*sel)(const struct dirent *),
            int (*cmp)(const struct dirent **, const struct dirent **))
{
	if (!next_scandir)
		resolve();
	char buf[512];
	const char *p = redirect(path, buf, sizeof(buf));
	return next_scandir(p ? p : path, list, sel, cmp);
}

int scandir64(const char *path, struct dirent64 ***list, int (*sel)(const struct dirent64 *),
              int (*cmp)(const struct dirent64 **, const struct dirent64 **))
{
	if (!next_scandir64)
		resolve();
	char buf[512];
	const char *p = redirect(path, buf, sizeof(buf));
	return next_scandir64(p ? p : path, list, sel, cmp);
}

int close(int fd)
{
	if (!next_close)
		resolve();
	if (fd >= 0 && fd == g.issm_fd) {
		g.issm_fd = -1;
		g.t->ops->set_sm(g.t, false);
	}
	pthread_mutex_lock(&g.mu);
	int f = file_of(fd);
	if (f >= 0) {
		for (int a = 0; a < MAX_AGENTS; a++)
			if (g.agents[a].used && g.agents[a].file == f)
				g.agents[a].used = false;
		for (struct msg *m = g.files[f].head, *n; m; m = n) {
			n = m->next;
			free(m);
		}
		g.files[f] = (struct file){.fd = -1};
	}
	pthread_mutex_unlock(&g.mu);
	return next_close(fd);
}

/* Hand over the first MAD of the file as the kernel does: whole, or ENOSPC with the header
 * and the needed length (the MAD stays). */
ssize_t read(int fd, void *buf, size_t count)
{
	if (!next_read)
		resolve();
	pthread_mutex_lock(&g.mu);
	int f = file_of(fd);
	if (f < 0) {
		pthread_mutex_unlock(&g.mu);
		return next_read(fd, buf, count);
	}
	struct msg *m = g.files[f].head;
	if (!m) {
		pthread_mutex_unlock(&g.mu);
		errno = EAGAIN;
		return -1;
	}
	if (m->len > count) {
		size_t n = count < UMAD_HDR + MAD_SIZE ? count : UMAD_HDR + MAD_SIZE;
		memcpy(buf, m->buf, n);
		pthread_mutex_unlock(&g.mu);
		errno = ENOSPC;
		return -1;
	}
	uint64_t one;
	if (next_read(fd, &one, sizeof(one)) < 0)
		DBG("eventfd read: %s\n", strerror(errno));
	g.files[f].head = m->next;
	if (!m->next)
		g.files[f].tail = NULL;
	pthread_mutex_unlock(&g.mu);
	size_t len = m->len;
	memcpy(buf, m->buf, len);
	free(m);
	return (ssize_t)len;
}

/* One MAD, or an RMPP transfer cut into DATA segments as the kernel does. */
ssize_t write(int fd, const void *buf, size_t count)
{
	if (!next_write)
		resolve();
	pthread_mutex_lock(&g.mu);
	int f = file_of(fd);
	pthread_mutex_unlock(&g.mu);
	if (f < 0)
		return next_write(fd, buf, count);
	if (count < UMAD_HDR + 24) {
		errno = EINVAL;
		return -1;
	}
	struct ib_user_mad h;
	memcpy(&h, buf, UMAD_HDR);
	const uint8_t *mad = (const uint8_t *)buf + UMAD_HDR;
	size_t len = count - UMAD_HDR;
	int a = (int)h.agent_id;
	if (a < 0 || a >= MAX_AGENTS || !g.agents[a].used) {
		errno = EINVAL;
		return -1;
	}
	struct mad_addr to = {.lid = ntohs(h.addr.lid), .qpn = ntohl(h.addr.qpn)};
	uint8_t seg[MAD_SIZE];
	size_t hdr_len = class_hdr_len(mad[1]);
	bool rmpp = hdr_len && len >= hdr_len && rmpp_agent(a) && (mad[26] & 1);
	if (!rmpp) {
		size_t n = len < MAD_SIZE ? len : MAD_SIZE;
		memset(seg, 0, sizeof(seg));
		memcpy(seg, mad, n);
		if (!(seg[3] & MAD_METHOD_RESP)) { /* the agent as hi_tid */
			seg[10] = (uint8_t)(a >> 8);
			seg[11] = (uint8_t)a;
			if (h.timeout_ms) {
				pthread_mutex_lock(&g.mu);
				pend_add(a, &h, &to, seg, n);
				pthread_mutex_unlock(&g.mu);
			}
		}
		if (sim_send(&to, seg) < 0) {
			errno = EIO;
			return -1;
		}
		return (ssize_t)count;
	}
	size_t data = len - hdr_len, seg_data = MAD_SIZE - hdr_len;
	uint32_t segs = data ? (uint32_t)((data + seg_data - 1) / seg_data) : 1;
	size_t pad = (size_t)segs * seg_data - data;
	const uint32_t seg_payload = MAD_SIZE - RMPP_HDR_END;
	for (uint32_t n = 1; n <= segs; n++) {
		memset(seg, 0, sizeof(seg));
		memcpy(seg, mad, hdr_len);
		if (!(seg[3] & MAD_METHOD_RESP)) {
			seg[10] = (uint8_t)(a >> 8);
			seg[11] = (uint8_t)a;
		}
		seg[24] = 1;
		seg[25] = 1; /* DATA */
		seg[26] = (uint8_t)(0x1f << 3 | 1 | (n == 1 ? 2 : 0) | (n == segs ? 4 : 0));
		seg[27] = 0;
		uint32_t num = htonl(n);
		uint32_t pl = htonl(n == 1      ? (uint32_t)(segs * seg_payload - pad)
		                    : n == segs ? (uint32_t)(seg_payload - pad)
		                                : 0);
		memcpy(seg + 28, &num, 4);
		memcpy(seg + 32, &pl, 4);
		size_t off = (size_t)(n - 1) * seg_data;
		size_t cnt = data - off < seg_data ? data - off : seg_data;
		memcpy(seg + hdr_len, mad + hdr_len + off, cnt);
		if (sim_send(&to, seg) < 0) {
			errno = EIO;
			return -1;
		}
	}
	DBG("RMPP transfer of %zu bytes to LID %u in %u segments\n", len, to.lid, segs);
	return (ssize_t)count;
}

int ioctl(int fd, unsigned long request, ...)
{
	if (!next_ioctl)
		resolve();
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	pthread_mutex_lock(&g.mu);
	int f = file_of(fd);
	if (f < 0) {
		pthread_mutex_unlock(&g.mu);
		return next_ioctl(fd, request, arg);
	}
	int r = 0;
	if (request == REGISTER_AGENT) {
		struct reg_req *req = arg;
		r = -1;
		errno = ENOMEM;
		for (int a = 0; a < MAX_AGENTS; a++) {
			if (g.agents[a].used)
				continue;
			req->id = (uint32_t)a;
			g.agents[a] = (struct agent){.used = true, .file = f, .req = *req};
			DBG("agent %d: class 0x%02x version %u RMPP %u\n", a, req->mgmt_class,
			    req->mgmt_class_version, req->rmpp_version);
			r = 0;
			break;
		}
	} else if (request == UNREGISTER_AGENT) {
		uint32_t id = *(uint32_t *)arg;
		if (id < MAX_AGENTS)
			g.agents[id].used = false;
	} else if (request == ENABLE_PKEY) {
		r = 0;
	} else {
		errno = EINVAL; /* REGISTER_AGENT2 and the rest: libibumad falls back */
		r = -1;
	}
	pthread_mutex_unlock(&g.mu);
	return r;
}
