/* libfabricsim-umad.so: run an unchanged libibumad program (OpenSM, osmtest, saquery, the
 * diags, ibsmd --transport umad) on fabricsim, as if the node named by SIM_HOST were this
 * host's HCA.
 *
 * Preloaded, it stands in for what libibumad reaches through the kernel: a sysfs tree for
 * one CA and port (written under a private directory, and paths under /sys/class/infiniband
 * and /sys/class/infiniband_mad sent there), the umad devices (/dev/infiniband/umadN, real
 * eventfds so poll() works unchanged), the issm devices, and the kernel's MAD layer with its
 * rules, as drivers/infiniband/core/user_mad.c and mad.c and user_mad.rst give them, not as
 * any program here needs them:
 *  - registration (REGISTER_AGENT and REGISTER_AGENT2): the kernel's checks on QP, class,
 *    version, RMPP version and OUI, EINVAL for a method another agent holds on the port
 *    (in any process: a claim is an abstract socket bound for the port's life), and
 *    EPROTONOSUPPORT for a QP the device lacks (a ConnectX-8 SMI/GSI pair);
 *  - a request's TID gets the agent's hi_tid in bits 32-63; a request whose TID still waits
 *    for its answer is refused (EINVAL);
 *  - a response reaches an agent only when it matches a request of that agent sent with a
 *    timeout and still waiting (TID and class; the kernel does not compare the source LID
 *    without a GRH and path bits are 0 here); any other response is freed, except an active
 *    RMPP segment for an agent that does RMPP in user space;
 *  - a request with a timeout is resent retries times and then handed back with status
 *    ETIMEDOUT and its first 24 bytes; a lost MAD is lost (no early failure);
 *  - a Get or Set that no agent registered for is answered with status 0x000c
 *    (unsupported method/attribute), as generate_unmatched_resp does;
 *  - RMPP for agents registered with an RMPP version and without UMAD_USER_RMPP: a long
 *    write goes out as DATA segments, segments that come in are acknowledged and handed over
 *    as one MAD; a write over 256 bytes without that is EINVAL;
 *  - reads: EINVAL when even the header and first 256 bytes do not fit, ENOSPC with the
 *    needed length for a longer RMPP message (it stays queued);
 *  - issm: one holder per port across processes, EAGAIN with O_NONBLOCK, blocking without;
 *    IsSM set while held.
 * FABRICSIM_UMAD_SMI=1 lays the port out as a ConnectX-8 does: a GSI device (QP1 only, its
 * port IsSMDisabled) and an SMI device (QP0 only) sharing the port GUID, paired the way
 * libibumad's umad_get_smi_gsi_pairs pairs them.
 * It speaks the ibsim protocol through mad/'s sim transport. Each rule has a test of its own
 * (test/tools/umad_rules.c, run by test/scenario/fabricsim_kernel_rules.sh).
 *
 * Why not Debian's libumad2sim.so: it keeps at most 10 clients, has no RMPP, hands over only
 * the first 224 bytes of each MAD and delivers every answer, asked for or not.
 * Not emulated: resending lost RMPP segments (segments go out back to back, and a gap ends
 * the transfer), P_Key indexes (the ibsim protocol carries no P_Key), GRHs, more than one
 * port, transfers in over MAX_XFER. */
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>

#include "mad/mad_types.h"
#include "mad/transport.h"
#include "util/u64map.h"

#define UMAD_HDR                 ((size_t)sizeof(struct ib_user_mad))
#define RMPP_HDR_END             36
#define MAX_AGENTS               64
#define FILE_AGENTS              32 /* the kernel's IB_UMAD_MAX_AGENTS per open file */
#define MAX_FILES                8
#define MAX_XFERS                64
#define RMPP_WINDOW              32
#define MAX_XFER                 (8u << 20)
#define CA_NAME                  "fabricsim0"
#define SMI_NAME                 "fabricsim0_smi" /* the SMI device of a ConnectX-8 style pair */
#define SYS_IB                   "/sys/class/infiniband"
#define SYS_IB_MAD               "/sys/class/infiniband_mad"
#define DEV_UMAD                 "/dev/infiniband/umad"
#define DEV_ISSM                 "/dev/infiniband/issm"
#define CAP_IS_SM                0x00000002u
#define CAP_IS_SM_DISABLED       0x00000400u
#define STATUS_UNSUP_METHOD_ATTR 0x000c
#define DR_DIRECTION             0x8000

/* The kernel's registration requests (rdma/ib_user_mad.h, which cannot be included next to
 * umad.h: both define struct ib_user_mad) */
struct reg_req {
	uint32_t id;
	uint32_t method_mask[4];
	uint8_t qpn, mgmt_class, mgmt_class_version;
	uint8_t oui[3];
	uint8_t rmpp_version;
};
struct reg_req2 {
	uint32_t id;
	uint32_t qpn;
	uint8_t mgmt_class, mgmt_class_version;
	uint16_t res;
	uint32_t flags;
	uint64_t method_mask[2];
	uint32_t oui;
	uint8_t rmpp_version;
	uint8_t reserved[3];
};
#define REGISTER_AGENT   _IOWR(0x1b, 1, struct reg_req)
#define UNREGISTER_AGENT _IOW(0x1b, 2, uint32_t)
#define ENABLE_PKEY      _IO(0x1b, 3)
#define REGISTER_AGENT2  _IOWR(0x1b, 4, struct reg_req2)
#define USER_RMPP_FLAG   1u /* IB_USER_MAD_USER_RMPP, the only flag the kernel knows */

struct msg {
	struct msg *next;
	size_t len; /* umad header + MAD */
	uint8_t buf[];
};

struct file {
	int fd;  /* the eventfd handed out; -1: free */
	int dev; /* 0: the CA (or a pair's GSI device), 1: a pair's SMI device */
	struct msg *head, *tail;
};

/* An agent as the kernel keeps it. */
struct agent {
	bool used;
	int file;
	uint32_t hi_tid; /* bits 32-63 of its requests' TIDs (agent_by_hi_tid) */
	uint8_t qpn, mgmt_class, version, rmpp_version;
	bool user_rmpp; /* UMAD_USER_RMPP, or no RMPP version: segments pass through */
	uint32_t oui;
	uint64_t methods[2];
	int claims[128]; /* the sockets that hold its methods on the port (-1: none) */
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

/* A MAD sent with a timeout, waiting for its answer (the kernel's wait list): resent
 * retries times, then handed back with ETIMEDOUT. Found by TID and class: the simulator
 * stamps its client number into TID bits 48-63, so bits 0-47 are the key and the TID the
 * program wrote (as the kernel stamped it) is given back whole with the answer. */
struct pend {
	bool used;
	bool response; /* a response sent with a timeout: nothing ever matches it */
	int agent, retries;
	uint64_t tid;
	uint32_t timeout_ms;
	struct timespec deadline;
	struct mad_addr to;
	uint8_t mad[MAD_SIZE];
	size_t len;
	uint32_t next_free;
};

static struct {
	pthread_once_t once;
	pthread_mutex_t mu;
	pthread_mutex_t ctl_mu;    /* the simulator's control channel, one question at a time */
	struct timespec refreshed; /* when sysfs was last read afresh */
	bool ok;
	bool pair; /* FABRICSIM_UMAD_SMI: an SMI device beside the GSI device */
	struct mad_transport *t;
	struct mad_local_port lp;
	char root[128];    /* the private sysfs */
	char port_key[96]; /* names this port in claims: simulator and port GUID */
	struct file files[MAX_FILES];
	struct agent agents[MAX_AGENTS];
	uint32_t registrations; /* agents registered so far: part of each hi_tid */
	struct xfer xfers[MAX_XFERS];
	uint64_t ticks;
	struct pend *pends;
	uint32_t npends, pends_cap, pend_free;
	struct u64map pend_by_key;
	struct timespec next_deadline; /* no wait-list entry expires before this */
	int issm_fd, issm_claim;
	pthread_t rx;
	int rx_stop;    /* an eventfd: the exit handler's word to the receive thread */
	pid_t rx_owner; /* the process the receive thread runs in (not a fork's child) */
	bool debug;
} g = {.once = PTHREAD_ONCE_INIT,
       .mu = PTHREAD_MUTEX_INITIALIZER,
       .ctl_mu = PTHREAD_MUTEX_INITIALIZER,
       .issm_fd = -1,
       .issm_claim = -1,
       .rx_stop = -1,
       .pend_free = UINT32_MAX};

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
	/* a forked child that calls exit() leaves the parent's attachment and files alone */
	if (getpid() != g.rx_owner)
		return;
	/* The receive thread reads through the transport: it stops before the transport is
	 * closed (it used to read on through a NULL one while the process exited: SIGSEGV). */
	uint64_t one = 1;
	if (next_write(g.rx_stop, &one, sizeof(one)) == sizeof(one))
		pthread_join(g.rx, NULL);
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

/* One CA's directory: node attributes and its port (cap_mask as given). */
static void write_ca(const char *name, uint32_t cap_mask)
{
	const struct mad_local_port *p = &g.lp;
	static const char *states[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
	char dir[256], gs[32], gp[32];
	snprintf(dir, sizeof(dir), SYS_IB "/%s", name);
	make_dirs(dir);
	put_file(dir, "node_type", "%u: %s\n", p->node_type,
	         p->node_type == NODE_TYPE_SWITCH ? "SWITCH" : "CA");
	put_file(dir, "fw_ver", "1.0.0\n");
	put_file(dir, "hw_rev", "0\n");
	put_file(dir, "hca_type", "fabricsim\n");
	guid_str(gs, sizeof(gs), p->node_guid);
	put_file(dir, "node_guid", "%s\n", gs);
	put_file(dir, "sys_image_guid", "%s\n", gs);
	snprintf(dir, sizeof(dir), SYS_IB "/%s/ports/%u", name, p->port_num);
	make_dirs(dir);
	put_file(dir, "lid", "0x%x\n", p->lid);
	put_file(dir, "lid_mask_count", "%u\n", p->lmc);
	put_file(dir, "sm_lid", "0x%x\n", p->sm_lid);
	put_file(dir, "sm_sl", "0\n");
	put_file(dir, "state", "%u: %s\n", p->state, p->state < 6 ? states[p->state] : "?");
	put_file(dir, "phys_state", "%u: %s\n", p->phys_state,
	         p->phys_state == 5 ? "LinkUp" : "Polling");
	put_file(dir, "rate", "10 Gb/sec (4X)\n");
	put_file(dir, "cap_mask", "0x%08x\n", cap_mask);
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
		char n[8];
		snprintf(n, sizeof(n), "%u", i);
		put_file(sub, n, "0x%04x\n", i == 0 ? 0xffff : 0);
	}
}

/* One CA, or a ConnectX-8 style pair: the GSI device keeps the name and its port says
 * IsSMDisabled (an SM cannot run there), the SMI device shares the port GUID. umadN and
 * issmN follow the devices' order. */
static void write_sysfs(void)
{
	make_dirs(SYS_IB_MAD);
	put_file(SYS_IB_MAD, "abi_version", "%d\n", IB_UMAD_ABI_VERSION);
	uint32_t cap = g.lp.capability_mask;
	write_ca(CA_NAME, g.pair ? (cap | CAP_IS_SM_DISABLED) & ~CAP_IS_SM : cap);
	if (g.pair)
		write_ca(SMI_NAME, cap & ~CAP_IS_SM_DISABLED);
	for (int dev = 0; dev < (g.pair ? 2 : 1); dev++) {
		for (int kind = 0; kind < 2; kind++) {
			char dir[256];
			snprintf(dir, sizeof(dir), SYS_IB_MAD "/%s%d", kind ? "issm" : "umad", dev);
			make_dirs(dir);
			put_file(dir, "ibdev", "%s\n", dev ? SMI_NAME : CA_NAME);
			put_file(dir, "port", "%u\n", g.lp.port_num);
		}
	}
}

/* Send one MAD; a full socket (a long transfer going out back to back) waits for room. */
static int sim_send(const struct mad_addr *to, const uint8_t *mad)
{
	for (int tries = 0; tries < 2000; tries++) {
		int r = g.t->ops->send(g.t, to, mad, MAD_SIZE, 0);
		if (r != -EAGAIN && r != -EWOULDBLOCK && r != -ENOBUFS)
			return r;
		struct pollfd p = {.fd = g.t->ops->fd(g.t), .events = POLLOUT};
		poll(&p, 1, 5);
	}
	return -EAGAIN;
}

/* ---- claims: what the kernel gives one holder per port, across processes ---- */

/* Bind an abstract socket named for the port and what is claimed: the bind fails while
 * another holds it, and the claim goes with the holder (closed, or the process gone), as
 * the kernel's method tables and issm semaphore do. The fd, or -1 (errno EADDRINUSE). */
static int claim(const char *what)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "fabricsim-umad:%s:%s", g.port_key,
	                 what);
	socklen_t len =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	                (size_t)(n < (int)sizeof(a.sun_path) - 1 ? n
	                                                         : (int)sizeof(a.sun_path) - 1));
	if (bind(fd, (struct sockaddr *)&a, len) < 0) {
		int e = errno;
		next_close(fd);
		errno = e;
		return -1;
	}
	return fd;
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

/* ib_is_mad_class_rmpp: SA, device management and administration, BIS, vendor range 2 */
static bool rmpp_class(uint8_t cls)
{
	return cls == MAD_CLASS_SUBN_ADM || cls == 0x06 || cls == 0x10 || cls == 0x12 ||
	       (cls >= 0x30 && cls <= 0x4f);
}

/* ib_response_mad: the response bit, or TrapRepress */
static bool is_response(const uint8_t *mad)
{
	return (mad[3] & MAD_METHOD_RESP) || mad[3] == MAD_METHOD_TRAP_REPRESS;
}

/* The RMPP Active flag: all the kernel looks at (ib_umad_write, ib_mad_complete_recv);
 * OpenSM's vendor layer leaves RMPPVersion for the kernel to fill in. */
static bool rmpp_active(const uint8_t *mad, size_t len)
{
	return rmpp_class(mad[1]) && len >= RMPP_HDR_END && (mad[26] & 1);
}

static bool kernel_rmpp(int a)
{
	return a >= 0 && a < MAX_AGENTS && g.agents[a].used && !g.agents[a].user_rmpp;
}

static uint64_t get_tid(const uint8_t *mad)
{
	uint64_t t = 0;
	for (int i = 8; i < 16; i++)
		t = t << 8 | mad[i];
	return t;
}

static void put_tid(uint8_t *mad, uint64_t t)
{
	for (int i = 15; i >= 8; i--, t >>= 8)
		mad[i] = (uint8_t)t;
}

/* The agent whose hi_tid a response carries: bits 32-38 are the slot + 1 and bits 39-47 the
 * registration's number, so that a late answer to an agent gone does not reach the next
 * agent in its slot (the kernel allocates hi_tids cyclically, never the one just freed);
 * bits 48-63 are the simulator's on the wire. */
#define HI_TID_SLOT 0x7fu
static int agent_by_hi_tid(const uint8_t *mad)
{
	unsigned v = (unsigned)(mad[10] << 8 | mad[11]);
	int a = (int)(v & HI_TID_SLOT) - 1;
	return a >= 0 && a < MAX_AGENTS && g.agents[a].used && (g.agents[a].hi_tid & 0xffffu) == v
	           ? a
	           : -1;
}

/* find_mad_agent for a request: class, class version, method (and OUI in vendor range 2) */
static int agent_for_request(const uint8_t *mad, size_t len)
{
	unsigned m = mad[3] & 0x7f;
	uint32_t oui = 0;
	if (mad[1] >= 0x30 && mad[1] <= 0x4f && len >= 40)
		oui = (uint32_t)mad[37] << 16 | (uint32_t)mad[38] << 8 | mad[39];
	for (int a = 0; a < MAX_AGENTS; a++) {
		const struct agent *ag = &g.agents[a];
		if (ag->used && ag->mgmt_class == mad[1] && ag->version == mad[2] &&
		    (ag->methods[m / 64] >> (m % 64) & 1) && (!oui || ag->oui == oui))
			return a;
	}
	return -1;
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

static void deliver(int agent, const struct mad_addr *from, const uint8_t *mad, size_t len)
{
	uint8_t u[UMAD_HDR + MAD_SIZE];
	fill_umad(u, agent, from, 0, UMAD_HDR + len);
	memcpy(u + UMAD_HDR, mad, len);
	queue_msg(g.agents[agent].file, u, UMAD_HDR + len);
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

/* ---- the wait list ---- */

static uint64_t pend_key(uint64_t tid, uint8_t cls)
{
	return 1ull << 63 | (tid & 0xffffffffffffull) << 8 | cls;
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

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* The waiting MAD with this TID and class (caller holds g.mu), or NULL. */
static struct pend *pend_find(uint64_t tid, uint8_t cls)
{
	uint32_t i = u64map_get(&g.pend_by_key, pend_key(tid, cls));
	return i == U64MAP_NONE ? NULL : &g.pends[i];
}

static void pend_drop(struct pend *p)
{
	u64map_del(&g.pend_by_key, pend_key(p->tid, p->mad[1]));
	p->used = false;
	p->next_free = g.pend_free;
	g.pend_free = (uint32_t)(p - g.pends);
}

/* Put a MAD sent with a timeout on the wait list (caller holds g.mu). */
static int pend_add(int agent, const struct ib_user_mad *h, const struct mad_addr *to,
                    const uint8_t *mad, size_t len)
{
	uint32_t i = g.pend_free;
	if (i == UINT32_MAX) {
		if (g.npends == g.pends_cap) {
			uint32_t cap = g.pends_cap ? g.pends_cap * 2 : 256;
			struct pend *np = realloc(g.pends, sizeof(*np) * cap);
			if (!np)
				return -ENOMEM;
			g.pends = np;
			g.pends_cap = cap;
		}
		i = g.npends++;
	} else {
		g.pend_free = g.pends[i].next_free;
	}
	struct pend *p = &g.pends[i];
	*p = (struct pend){.used = true,
	                   .response = is_response(mad),
	                   .agent = agent,
	                   .retries = (int)h->retries,
	                   .tid = get_tid(mad),
	                   .timeout_ms = h->timeout_ms,
	                   .to = *to,
	                   .len = len < MAD_SIZE ? len : MAD_SIZE,
	                   .next_free = UINT32_MAX};
	memcpy(p->mad, mad, p->len);
	deadline_in(&p->deadline, h->timeout_ms);
	if (u64map_put(&g.pend_by_key, pend_key(p->tid, mad[1]), i) < 0) {
		p->used = false;
		return -ENOMEM;
	}
	if (g.next_deadline.tv_sec == 0 || before(&p->deadline, &g.next_deadline))
		g.next_deadline = p->deadline;
	return 0;
}

/* A response matched a request waiting with a timeout (ib_find_send_mad: TID and class;
 * without a GRH the source is not compared): the request is done, and the response goes to
 * its agent with the TID the program's request had (caller holds g.mu). The agent, or -1. */
static int pend_match(uint8_t *mad)
{
	struct pend *p = pend_find(get_tid(mad), mad[1]);
	if (!p || p->response)
		return -1;
	int a = p->agent;
	put_tid(mad, p->tid);
	pend_drop(p);
	return g.agents[a].used ? a : -1;
}

/* Resend what timed out, or hand it back with ETIMEDOUT and its first 24 bytes, as the
 * kernel's send_handler does (caller holds g.mu). Scans only once the earliest deadline has
 * passed. ms until the next deadline, or -1. */
static int pend_expire(void)
{
	if (!g.next_deadline.tv_sec || ms_until(&g.next_deadline) > 0)
		return g.next_deadline.tv_sec ? (int)ms_until(&g.next_deadline) + 1 : -1;
	struct timespec next = {0};
	for (uint32_t i = 0; i < g.npends; i++) {
		struct pend *p = &g.pends[i];
		if (!p->used)
			continue;
		if (ms_until(&p->deadline) > 0) {
			if (!next.tv_sec || before(&p->deadline, &next))
				next = p->deadline;
			continue;
		}
		if (p->retries-- > 0) {
			sim_send(&p->to, p->mad);
			deadline_in(&p->deadline, p->timeout_ms);
			if (!next.tv_sec || before(&p->deadline, &next))
				next = p->deadline;
			continue;
		}
		int a = p->agent;
		if (g.agents[a].used) {
			uint8_t u[UMAD_HDR + MAD_HDR_SIZE];
			fill_umad(u, a, &p->to, ETIMEDOUT, UMAD_HDR + p->len);
			memcpy(u + UMAD_HDR, p->mad, MAD_HDR_SIZE);
			DBG("request TID 0x%016llx to LID %u timed out\n",
			    (unsigned long long)p->tid, p->to.lid);
			queue_msg(g.agents[a].file, u, sizeof(u));
		}
		pend_drop(p);
	}
	g.next_deadline = next;
	return next.tv_sec ? (int)ms_until(&next) + 1 : -1;
}

/* ---- RMPP for kernel-RMPP agents ---- */

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

/* A whole message reassembled: a response only if it matches a waiting request. */
static void xfer_done(struct xfer *x, const struct mad_addr *from)
{
	uint8_t *mad = x->buf + UMAD_HDR;
	int a = x->agent;
	if (is_response(mad)) {
		a = pend_match(mad);
		if (a < 0) {
			DBG("RMPP response TID 0x%016llx matches no waiting request: dropped\n",
			    (unsigned long long)get_tid(mad));
			return;
		}
	}
	fill_umad(x->buf, a, from, 0, x->len);
	DBG("RMPP transfer of %zu bytes from LID %u for agent %d\n", x->len - UMAD_HDR, from->lid,
	    a);
	queue_msg(g.agents[a].file, x->buf, x->len);
}

/* An RMPP DATA segment for a kernel-RMPP agent. */
static void rmpp_data(int agent, const struct mad_addr *from, const uint8_t *mad, size_t len,
                      size_t hdr_len)
{
	uint64_t tid = get_tid(mad);
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
	/* a transfer under way keeps its request waiting (the kernel's RMPP does) */
	struct pend *p = pend_find(tid, mad[1]);
	if (p)
		deadline_in(&p->deadline, p->timeout_ms);
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
	xfer_done(x, from);
	free(x->buf);
	memset(x, 0, sizeof(*x));
}

/* ---- what comes off the wire (caller holds g.mu) ---- */

static void on_response(const struct mad_addr *from, uint8_t *mad, size_t len)
{
	int a = agent_by_hi_tid(mad);
	bool active = rmpp_active(mad, len);
	if (active && kernel_rmpp(a)) {
		if (mad[25] == 1)
			rmpp_data(a, from, mad, len, class_hdr_len(mad[1]));
		return; /* ACK, STOP, ABORT: for transfers we sent back to back */
	}
	int to = pend_match(mad);
	if (to >= 0) {
		deliver(to, from, mad, len);
		return;
	}
	if (active && a >= 0) {
		/* user RMPP: the later segments of an answer whose first one matched */
		put_tid(mad, (uint64_t)g.agents[a].hi_tid << 32 | (get_tid(mad) & 0xffffffffu));
		deliver(a, from, mad, len);
		return;
	}
	DBG("response TID 0x%016llx class 0x%02x from LID %u matches no request waiting with a "
	    "timeout: freed, as the kernel does\n",
	    (unsigned long long)get_tid(mad), mad[1], from->lid);
}

static void on_request(const struct mad_addr *from, const uint8_t *mad, size_t len)
{
	int a = agent_for_request(mad, len);
	if (a < 0) {
		/* generate_unmatched_resp: Get and Set are answered, the rest dropped. A
		 * directed-route one would need the SMI's return path: the simulator's SMAs
		 * answer those before they reach a program. */
		if ((mad[3] == MAD_METHOD_GET || mad[3] == MAD_METHOD_SET) &&
		    mad[1] != MAD_CLASS_SUBN_DR) {
			uint8_t out[MAD_SIZE] = {0};
			memcpy(out, mad, len < MAD_SIZE ? len : MAD_SIZE);
			out[3] = MAD_METHOD_GET_RESP;
			out[4] = 0;
			out[5] = STATUS_UNSUP_METHOD_ATTR;
			sim_send(from, out);
		}
		DBG("no agent for class 0x%02x version %u method 0x%02x: %s\n", mad[1], mad[2],
		    mad[3], mad[3] <= MAD_METHOD_SET ? "answered unsupported" : "dropped");
		return;
	}
	if (rmpp_active(mad, len) && kernel_rmpp(a)) {
		if (mad[25] == 1)
			rmpp_data(a, from, mad, len, class_hdr_len(mad[1]));
		return;
	}
	deliver(a, from, mad, len);
}

static void *rx_thread(void *arg)
{
	(void)arg;
	struct pollfd p[2] = {{.fd = g.t->ops->fd(g.t), .events = POLLIN},
	                      {.fd = g.rx_stop, .events = POLLIN}};
	int wait_ms = -1;
	for (;;) {
		if (poll(p, 2, wait_ms) < 0 && errno != EINTR)
			return NULL;
		if (p[1].revents)
			return NULL; /* the process is exiting */
		for (;;) {
			uint8_t mad[MAD_SIZE];
			struct mad_addr from;
			size_t len = 0;
			unsigned flags = 0;
			int r = g.t->ops->recv(g.t, &from, mad, sizeof(mad), &len, &flags);
			if (r <= 0)
				break;
			if (len < MAD_HDR_SIZE)
				continue;
			if (flags & MAD_RECV_SEND_FAILED) {
				/* the simulator could not deliver it: on a wire it is lost, and
				 * the kernel hears nothing (a request times out) */
				DBG("a MAD to LID %u was lost on the way\n", from.lid);
				continue;
			}
			pthread_mutex_lock(&g.mu);
			if (is_response(mad))
				on_response(&from, mad, len);
			else
				on_request(&from, mad, len);
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
	const char *smi = getenv("FABRICSIM_UMAD_SMI");
	g.pair = smi && *smi && *smi != '0';
	const char *sock = getenv("IBSIM_SOCKNAME");
	snprintf(g.port_key, sizeof(g.port_key), "%s:%016llx", sock ? sock : "sim",
	         (unsigned long long)g.lp.port_guid);
	snprintf(g.root, sizeof(g.root), "/tmp/fabricsim-umad.%d.XXXXXX", (int)getpid());
	if (!mkdtemp(g.root)) {
		g.root[0] = 0;
		return;
	}
	write_sysfs();
	g.rx_stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (g.rx_stop < 0 || pthread_create(&g.rx, NULL, rx_thread, NULL)) {
		remove_tree(g.root);
		return;
	}
	g.rx_owner = getpid();
	atexit(cleanup);
	g.ok = true;
	DBG("attached as %s, port GUID 0x%016llx, GID prefix 0x%016llx, LID %u\n", g.t->desc,
	    (unsigned long long)g.lp.port_guid, (unsigned long long)g.lp.gid_prefix, g.lp.lid);
}

static void ensure(void)
{
	pthread_once(&g.once, setup);
}

/* A path of the emulated sysfs, in the private tree; NULL for any other path. */
/* The kernel's sysfs is live: a port's state, LIDs and capabilities read now are the port's
 * now (a program watching its port for a reset switch depends on it). Read afresh from the
 * simulator at most every 100 ms, when a port file is opened. */
static void refresh_ports(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&g.ctl_mu);
	long ms = (now.tv_sec - g.refreshed.tv_sec) * 1000 +
	          (now.tv_nsec - g.refreshed.tv_nsec) / 1000000;
	struct mad_local_port lp;
	if (ms >= 100 && g.t->ops->query_port(g.t, &lp) == 0) {
		g.refreshed = now;
		g.lp = lp;
		write_sysfs();
	}
	pthread_mutex_unlock(&g.ctl_mu);
}

static const char *redirect(const char *path, char *buf, size_t len)
{
	if (!path || (strncmp(path, SYS_IB, strlen(SYS_IB)) != 0))
		return NULL;
	ensure();
	if (!g.root[0])
		return NULL;
	if (strstr(path, "/ports/"))
		refresh_ports();
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

/* The device number of /dev/infiniband/umadN or issmN, or -1 for another path or a device
 * this port does not have. */
static int dev_of(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);
	if (!path || strncmp(path, prefix, n) || !path[n] || path[n + 1])
		return -1;
	int d = path[n] - '0';
	return d == 0 || (d == 1 && g.pair) ? d : -1;
}

/* The issm device: held by one opener per port, IsSM set meanwhile (ib_umad_sm_open). A
 * pair's GSI device cannot hold it: its port is IsSMDisabled. */
static int open_issm(int (*real)(const char *, int, ...), int dev, int flags)
{
	if (g.pair && dev == 0) {
		errno = EOPNOTSUPP;
		return -1;
	}
	int c;
	while ((c = claim("issm")) < 0) {
		if (errno != EADDRINUSE)
			return -1;
		if (flags & O_NONBLOCK) {
			errno = EAGAIN;
			return -1;
		}
		usleep(50000); /* the kernel's down_interruptible: wait for the holder */
	}
	int fd = real("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		next_close(c);
		return -1;
	}
	g.issm_fd = fd;
	g.issm_claim = c;
	DBG("issm device %d held: IsSM set\n", dev);
	pthread_mutex_lock(&g.ctl_mu);
	g.t->ops->set_sm(g.t, true);
	pthread_mutex_unlock(&g.ctl_mu);
	return fd;
}

static int open_common(int (*real)(const char *, int, ...), const char *path, int flags,
                       mode_t mode)
{
	if (!real)
		resolve();
	char buf[512];
	if (path && (!strncmp(path, DEV_UMAD, strlen(DEV_UMAD)) ||
	             !strncmp(path, DEV_ISSM, strlen(DEV_ISSM)))) {
		ensure();
		int umad = dev_of(path, DEV_UMAD), issm = dev_of(path, DEV_ISSM);
		if (!g.ok || (umad < 0 && issm < 0)) {
			errno = ENODEV;
			return -1;
		}
		if (issm >= 0)
			return open_issm(real, issm, flags);
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
		g.files[slot] = (struct file){.fd = fd, .dev = umad};
		pthread_mutex_unlock(&g.mu);
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

static void release_agent(struct agent *ag)
{
	for (int m = 0; m < 128; m++)
		if (ag->claims[m] >= 0) {
			next_close(ag->claims[m]);
			ag->claims[m] = -1;
		}
	ag->used = false;
}

int close(int fd)
{
	if (!next_close)
		resolve();
	if (fd >= 0 && fd == g.issm_fd) {
		g.issm_fd = -1;
		pthread_mutex_lock(&g.ctl_mu);
		g.t->ops->set_sm(g.t, false);
		pthread_mutex_unlock(&g.ctl_mu);
		next_close(g.issm_claim);
		g.issm_claim = -1;
	}
	pthread_mutex_lock(&g.mu);
	int f = file_of(fd);
	if (f >= 0) {
		for (int a = 0; a < MAX_AGENTS; a++)
			if (g.agents[a].used && g.agents[a].file == f)
				release_agent(&g.agents[a]);
		for (struct msg *m = g.files[f].head, *n; m; m = n) {
			n = m->next;
			free(m);
		}
		g.files[f] = (struct file){.fd = -1};
	}
	pthread_mutex_unlock(&g.mu);
	return next_close(fd);
}

/* Hand over the first MAD of the file as ib_umad_read does: whole; EINVAL when not even the
 * header and the first 256 bytes fit; ENOSPC with the header (its length the whole) and the
 * first segment for a longer RMPP message, which stays queued. */
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
		size_t first = UMAD_HDR + MAD_SIZE;
		if (m->len <= first || count < first) {
			pthread_mutex_unlock(&g.mu);
			errno = EINVAL;
			return -1;
		}
		memcpy(buf, m->buf, first);
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

/* A kernel-RMPP write cut into DATA segments, sent back to back. */
static int write_rmpp(int a, const struct mad_addr *to, const uint8_t *mad, size_t len,
                      size_t hdr_len)
{
	uint8_t seg[MAD_SIZE];
	size_t data = len - hdr_len, seg_data = MAD_SIZE - hdr_len;
	uint32_t segs = data ? (uint32_t)((data + seg_data - 1) / seg_data) : 1;
	size_t pad = (size_t)segs * seg_data - data;
	const uint32_t seg_payload = MAD_SIZE - RMPP_HDR_END;
	for (uint32_t n = 1; n <= segs; n++) {
		memset(seg, 0, sizeof(seg));
		memcpy(seg, mad, hdr_len);
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
		if (sim_send(to, seg) < 0)
			return -EIO;
	}
	DBG("RMPP transfer of %zu bytes to LID %u in %u segments (agent %d)\n", len, to->lid, segs,
	    a);
	return 0;
}

/* One MAD, or a kernel-RMPP transfer, as ib_umad_write takes it. */
ssize_t write(int fd, const void *buf, size_t count)
{
	if (!next_write)
		resolve();
	pthread_mutex_lock(&g.mu);
	int f = file_of(fd);
	pthread_mutex_unlock(&g.mu);
	if (f < 0)
		return next_write(fd, buf, count);
	if (count < UMAD_HDR + RMPP_HDR_END) {
		errno = EINVAL;
		return -1;
	}
	struct ib_user_mad h;
	memcpy(&h, buf, UMAD_HDR);
	size_t len = count - UMAD_HDR;
	uint8_t *mad = malloc(len < MAD_SIZE ? MAD_SIZE : len);
	if (!mad) {
		errno = ENOMEM;
		return -1;
	}
	memset(mad, 0, len < MAD_SIZE ? MAD_SIZE : len); /* short writes go out padded */
	memcpy(mad, (const uint8_t *)buf + UMAD_HDR, len);
	struct mad_addr to = {.lid = ntohs(h.addr.lid), .qpn = ntohl(h.addr.qpn)};
	int a = (int)h.agent_id, err = 0;
	pthread_mutex_lock(&g.mu);
	size_t hdr_len = class_hdr_len(mad[1]);
	bool rmpp = kernel_rmpp(a) && rmpp_active(mad, len) && hdr_len;
	if (a < 0 || a >= MAX_AGENTS || !g.agents[a].used || g.agents[a].file != f)
		err = EINVAL;
	else if (!rmpp && len > MAD_SIZE)
		err = EINVAL; /* ib_create_send_mad: more than one MAD without the kernel's RMPP */
	if (!err && !is_response(mad)) {
		/* the kernel's half of the TID: routes the answer back to this agent */
		put_tid(mad, (uint64_t)g.agents[a].hi_tid << 32 | (get_tid(mad) & 0xffffffffu));
		struct pend *p = pend_find(get_tid(mad), mad[1]);
		if (p && !p->response)
			err = EINVAL; /* is_duplicate: that TID still waits for its answer */
	}
	if (!err && h.timeout_ms && pend_add(a, &h, &to, mad, len) < 0)
		err = ENOMEM;
	pthread_mutex_unlock(&g.mu);
	if (!err) {
		int r = rmpp ? write_rmpp(a, &to, mad, len, hdr_len) : sim_send(&to, mad);
		if (r < 0)
			DBG("send to LID %u failed: %s (lost, as on a wire)\n", to.lid,
			    strerror(-r));
	}
	free(mad);
	if (err) {
		errno = err;
		return -1;
	}
	return (ssize_t)count;
}

/* ib_register_mad_agent's checks, then the method claims (caller holds g.mu). 0, or an
 * errno. */
static int register_agent(int f, uint8_t qpn, uint8_t cls, uint8_t version, uint32_t oui,
                          uint8_t rmpp_version, bool user_rmpp, const uint64_t methods[2],
                          uint32_t *id)
{
	if (qpn > 1)
		return EINVAL;
	int dev = g.files[f].dev;
	if (g.pair && ((dev == 0 && qpn == 0) || (dev == 1 && qpn == 1)))
		return EPROTONOSUPPORT; /* the device has no such QP */
	bool smp = cls == MAD_CLASS_SUBN_LID || cls == MAD_CLASS_SUBN_DR;
	if (cls) {
		if ((cls >= 0x50 && cls != MAD_CLASS_SUBN_DR) || version >= 8 ||
		    (qpn == 0) != smp || rmpp_version > 1 || (rmpp_version && !rmpp_class(cls)) ||
		    (cls >= 0x30 && cls <= 0x4f && !oui))
			return EINVAL;
	} else if (user_rmpp) {
		return EINVAL;
	}
	int per_file = 0;
	for (int a = 0; a < MAX_AGENTS; a++)
		per_file += g.agents[a].used && g.agents[a].file == f;
	if (per_file >= FILE_AGENTS)
		return ENOMEM;
	int a = 0;
	while (a < MAX_AGENTS && g.agents[a].used)
		a++;
	if (a == MAX_AGENTS)
		return ENOMEM;
	struct agent *ag = &g.agents[a];
	*ag = (struct agent){.used = true,
	                     .file = f,
	                     .hi_tid = (uint32_t)(getpid() & 0xff) << 16 |
	                               (++g.registrations & 0x1ffu) << 7 | (uint32_t)(a + 1),
	                     .qpn = qpn,
	                     .mgmt_class = cls,
	                     .version = version,
	                     .rmpp_version = rmpp_version,
	                     .user_rmpp = user_rmpp || !rmpp_version,
	                     .oui = oui};
	for (int m = 0; m < 128; m++)
		ag->claims[m] = -1;
	for (int m = 0; cls && m < 128; m++) {
		if (!(methods[m / 64] >> (m % 64) & 1))
			continue;
		char what[64];
		snprintf(what, sizeof(what), "agent:%02x:%u:%06x:%02x", cls, version, oui, m);
		ag->claims[m] = claim(what);
		if (ag->claims[m] < 0) {
			DBG("class 0x%02x version %u method 0x%02x is another agent's on this "
			    "port\n",
			    cls, version, m);
			release_agent(ag);
			return EINVAL; /* method_in_use */
		}
		ag->methods[m / 64] |= 1ull << (m % 64);
	}
	*id = (uint32_t)a;
	DBG("agent %d: class 0x%02x version %u QP%u RMPP %u%s hi_tid 0x%08x\n", a, cls, version,
	    qpn, rmpp_version, ag->user_rmpp ? " (user RMPP)" : "", ag->hi_tid);
	return 0;
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
	int err = 0;
	if (request == REGISTER_AGENT) {
		struct reg_req *req = arg;
		uint64_t m[2] = {(uint64_t)req->method_mask[1] << 32 | req->method_mask[0],
		                 (uint64_t)req->method_mask[3] << 32 | req->method_mask[2]};
		uint32_t oui =
		    (uint32_t)req->oui[0] << 16 | (uint32_t)req->oui[1] << 8 | req->oui[2];
		err = register_agent(f, req->qpn, req->mgmt_class, req->mgmt_class_version, oui,
		                     req->rmpp_version, false, m, &req->id);
	} else if (request == REGISTER_AGENT2) {
		struct reg_req2 *req = arg;
		if (req->flags & ~USER_RMPP_FLAG) {
			req->flags = USER_RMPP_FLAG; /* what the kernel supports, written back */
			err = EINVAL;
		} else if (req->oui & 0xff000000u) {
			err = EINVAL;
		} else {
			err = register_agent(f, (uint8_t)(req->qpn > 1 ? 2 : req->qpn),
			                     req->mgmt_class, req->mgmt_class_version, req->oui,
			                     req->rmpp_version, req->flags & USER_RMPP_FLAG,
			                     req->method_mask, &req->id);
		}
	} else if (request == UNREGISTER_AGENT) {
		uint32_t id = *(uint32_t *)arg;
		if (id < MAX_AGENTS && g.agents[id].used && g.agents[id].file == f)
			release_agent(&g.agents[id]);
		else
			err = EINVAL;
	} else if (request == ENABLE_PKEY) {
		err = 0;
	} else {
		err = EINVAL;
	}
	pthread_mutex_unlock(&g.mu);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
