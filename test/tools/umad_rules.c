/* umad_rules: the kernel's MAD rules, checked on libfabricsim-umad.so (the stand-in for the
 * kernel in every umad test) through libibumad, as a program on hardware meets them. Each
 * test is one rule of drivers/infiniband/core/user_mad.c and mad.c (see umad_preload.c).
 * Run under the preload by test/scenario/fabricsim_kernel_rules.sh, with an ibsmd serving
 * as SM and SA elsewhere on the fabric:
 *   umad_rules            the rules on one device
 *   umad_rules pair       a ConnectX-8 style SMI/GSI pair (FABRICSIM_UMAD_SMI=1)
 * Environment: FABRICSIM (the simulator's binary, for latency), STRAY_NODE (another node
 * to send from). With "claim" or "issm-nb"/"issm-block" it is the second process of a
 * cross-process test. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>

#include "mad/mad_header.h"
#include "mad/mad_types.h"
#include "mad/sa_records.h"
#include "mad/transport.h"

extern char **environ;

#define UMAD_LEN (sizeof(struct ib_user_mad) + MAD_SIZE)

/* the kernel's registration request 2 (rdma/ib_user_mad.h cannot be included with umad.h) */
struct reg_req2 {
	uint32_t id, qpn;
	uint8_t mgmt_class, mgmt_class_version;
	uint16_t res;
	uint32_t flags;
	uint64_t method_mask[2];
	uint32_t oui;
	uint8_t rmpp_version, reserved[3];
};
#define REGISTER_AGENT2 _IOWR(0x1b, 4, struct reg_req2)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t tid_of(const uint8_t *mad)
{
	uint64_t t = 0;
	for (int i = 8; i < 16; i++)
		t = t << 8 | mad[i];
	return t;
}

static void set_tid(uint8_t *mad, uint64_t t)
{
	for (int i = 15; i >= 8; i--, t >>= 8)
		mad[i] = (uint8_t)t;
}

static int open_port(const char *ca)
{
	ck_assert_int_ge(umad_init(), 0);
	int p = umad_open_port(ca, 0);
	ck_assert_msg(p >= 0, "umad_open_port: %d", p);
	return p;
}

/* A directed-route SubnGet of attr to the port itself (no hops), or along one hop out of
 * port `out` when out is set. */
static void dr_get(uint8_t *umad, uint16_t attr, uint64_t tid, uint8_t out)
{
	memset(umad, 0, UMAD_LEN);
	umad_set_addr(umad, 0xffff, 0, 0, 0);
	uint8_t *m = umad_get_mad(umad);
	m[0] = 1;
	m[1] = MAD_CLASS_SUBN_DR;
	m[2] = 1;
	m[3] = MAD_METHOD_GET;
	m[7] = out ? 1 : 0; /* hop count */
	set_tid(m, tid);
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
	m[32] = m[33] = m[34] = m[35] = 0xff; /* DrSLID, DrDLID permissive */
	m[129] = out;                         /* InitialPath[1] */
}

/* A LID-routed SubnGet of attr to lid (QP0). */
static void lid_get(uint8_t *umad, uint16_t attr, uint64_t tid, uint16_t lid)
{
	memset(umad, 0, UMAD_LEN);
	umad_set_addr(umad, lid, 0, 0, 0);
	uint8_t *m = umad_get_mad(umad);
	m[0] = 1;
	m[1] = MAD_CLASS_SUBN_LID;
	m[2] = 1;
	m[3] = MAD_METHOD_GET;
	set_tid(m, tid);
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
}

#define NOBODY 0xbfff /* a unicast LID no port has */

/* A GMP request of class cls to lid (QP1). */
static void gmp(uint8_t *umad, uint8_t cls, uint8_t version, uint8_t method, uint16_t attr,
                uint16_t lid, uint64_t tid)
{
	memset(umad, 0, UMAD_LEN);
	umad_set_addr(umad, lid, 1, 0, QP1_QKEY);
	uint8_t *m = umad_get_mad(umad);
	m[0] = 1;
	m[1] = cls;
	m[2] = version;
	m[3] = method;
	set_tid(m, tid);
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
}

/* umad_recv with a timeout: the agent, or a negative errno; *len the MAD's length. */
/* A wait for something that should come, stretched by IBSMD_TEST_SLOW (the scenarios'
 * factor) on a slow or loaded machine; what the kernel's timeouts mean is unchanged. */
static int slow_ms(int ms)
{
	const char *f = getenv("IBSMD_TEST_SLOW");
	double x = f ? strtod(f, NULL) : 1;
	return x > 1 ? (int)(ms * x) : ms;
}

static int recv_one(int p, uint8_t *umad, int *len, int ms)
{
	*len = MAD_SIZE;
	return umad_recv(p, umad, len, slow_ms(ms));
}

/* This port's LID and the SM's, as sysfs shows them. */
static void my_lids(uint16_t *lid, uint16_t *sm)
{
	umad_port_t port;
	ck_assert_int_eq(umad_get_port(NULL, 0, &port), 0);
	*lid = (uint16_t)port.base_lid;
	*sm = (uint16_t)port.sm_lid;
	umad_release_port(&port);
	ck_assert_uint_ne(*lid, 0);
	ck_assert_uint_ne(*sm, 0);
}

static int spawn_self(const char *what, const char *arg)
{
	char *argv[] = {"/proc/self/exe", (char *)what, (char *)arg, NULL};
	pid_t pid;
	ck_assert_int_eq(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ), 0);
	return pid;
}

static int wait_child(pid_t pid)
{
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void fabricsim(const char *args)
{
	const char *fs = getenv("FABRICSIM");
	ck_assert_msg(fs != NULL, "FABRICSIM not set");
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s ctl %s >/dev/null", fs, args);
	ck_assert_int_eq(system(cmd), 0);
}

/* umad_send(3): "timeout_ms ... zero value means not solicited". The kernel hands an answer
 * only to a request waiting with a timeout: the same request without one gets nothing. With
 * one, the answer comes, its TID our low 32 bits under the agent's hi_tid. */
START_TEST(answers_only_to_requests_with_a_timeout)
{
	int p = open_port(NULL);
	int a = umad_register(p, MAD_CLASS_SUBN_DR, 1, 0, NULL);
	ck_assert_int_ge(a, 0);
	uint8_t u[UMAD_LEN];
	int len;
	dr_get(u, MAD_ATTR_NODE_INFO, 0x1001, 0);
	ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, 0, 0), 0);
	ck_assert_int_lt(recv_one(p, u, &len, 400), 0); /* never delivered */

	uint32_t hi = 0;
	for (uint32_t low = 0x2001; low <= 0x2002; low++) {
		dr_get(u, MAD_ATTR_NODE_INFO, low, 0);
		ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, 500, 0), 0);
		ck_assert_int_eq(recv_one(p, u, &len, 2000), a);
		ck_assert_int_eq(umad_status(u), 0);
		uint8_t *m = umad_get_mad(u);
		ck_assert_uint_eq(m[3], MAD_METHOD_GET_RESP);
		ck_assert_uint_eq(tid_of(m) & 0xffffffffu, low);
		ck_assert_uint_ne(tid_of(m) >> 32, 0);
		if (hi)
			ck_assert_uint_eq(tid_of(m) >> 32,
			                  hi); /* the same agent, the same hi_tid */
		hi = (uint32_t)(tid_of(m) >> 32);
	}
	umad_close_port(p);
}
END_TEST

/* A request with a timeout that nobody answers comes back, after the kernel's retries, with
 * status ETIMEDOUT and its first 24 bytes; a lost MAD does not come back any earlier. */
START_TEST(unanswered_request_comes_back_timed_out)
{
	int p = open_port(NULL);
	int a = umad_register(p, MAD_CLASS_SUBN_LID, 1, 0, NULL);
	uint8_t u[UMAD_LEN];
	int len;
	lid_get(u, MAD_ATTR_NODE_INFO, 0x3001, NOBODY);
	double t0 = now();
	ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, 100, 2), 0);
	ck_assert_int_eq(recv_one(p, u, &len, 3000), a);
	double took = now() - t0;
	ck_assert_int_eq(umad_status(u), ETIMEDOUT);
	ck_assert_int_eq(len, 24);
	ck_assert_uint_eq(tid_of(umad_get_mad(u)) & 0xffffffffu, 0x3001);
	ck_assert_msg(took >= 0.28, "came back after %.3f s, before 3 x 100 ms", took);
	umad_close_port(p);
}
END_TEST

/* is_duplicate: a request whose TID still waits is refused; once it came back, it may go. */
START_TEST(a_waiting_tid_is_refused)
{
	int p = open_port(NULL);
	int a = umad_register(p, MAD_CLASS_SUBN_LID, 1, 0, NULL);
	uint8_t u[UMAD_LEN];
	int len;
	lid_get(u, MAD_ATTR_NODE_INFO, 0x4001, NOBODY);
	ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, 300, 0), 0);
	errno = 0;
	ck_assert_int_lt(umad_send(p, a, u, MAD_SIZE, 300, 0), 0);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(recv_one(p, u, &len, 2000), a);
	ck_assert_int_eq(umad_status(u), ETIMEDOUT);
	lid_get(u, MAD_ATTR_NODE_INFO, 0x4001, NOBODY);
	ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, 100, 0), 0);
	ck_assert_int_eq(recv_one(p, u, &len, 2000), a);
	umad_close_port(p);
}
END_TEST

/* An answer that comes after its request timed out finds nothing waiting: freed. */
START_TEST(late_answer_is_dropped)
{
	int p = open_port(NULL);
	int a = umad_register(p, MAD_CLASS_SUBN_DR, 1, 0, NULL);
	uint8_t u[UMAD_LEN];
	int len;
	fabricsim("latency 0 300000"); /* every SMA answers 300 ms late */
	dr_get(u, MAD_ATTR_NODE_INFO, 0x5001, 0);
	ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, 100, 0), 0);
	ck_assert_int_eq(recv_one(p, u, &len, 2000), a);
	ck_assert_int_eq(umad_status(u), ETIMEDOUT);
	int r = recv_one(p, u, &len, 700); /* the answer arrives meanwhile, and is freed */
	fabricsim("latency 0 0");
	ck_assert_msg(r < 0, "a late answer was delivered (status %d)", umad_status(u));
	umad_close_port(p);
}
END_TEST

/* A response is delivered by TID and class to a request waiting for it, whoever sends it
 * (the kernel compares no source LID without a GRH); a response nobody waits for is freed,
 * even one carrying this agent's hi_tid. The other node is a client of the simulator. */
START_TEST(stray_responses_are_freed)
{
	int p = open_port(NULL);
	int a = umad_register(p, MAD_CLASS_SUBN_ADM, 2, 0, NULL);
	uint16_t my_lid, sm;
	my_lids(&my_lid, &sm);
	struct mad_transport_opts o = {.sim_node = getenv("STRAY_NODE")};
	struct mad_transport *t = NULL;
	char err[256];
	ck_assert_msg(mad_transport_open_sim(&o, &t, err, sizeof(err)) == 0, "%s", err);

	/* our hi_tid, from an answer the SA gives us */
	uint8_t u[UMAD_LEN];
	int len;
	gmp(u, MAD_CLASS_SUBN_ADM, 2, MAD_METHOD_GET, 0x0001, sm, 0x6000); /* ClassPortInfo */
	ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, slow_ms(1000), 2), 0);
	ck_assert_int_eq(recv_one(p, u, &len, 4000), a);
	uint64_t hi = tid_of(umad_get_mad(u)) >> 32;
	/* a GetResp with our hi_tid and a TID nobody waits for: freed */
	uint8_t m[MAD_SIZE] = {1, MAD_CLASS_SUBN_ADM, 2, MAD_METHOD_GET_RESP};
	struct mad_addr to = {.lid = my_lid, .qpn = 1, .qkey = QP1_QKEY};
	set_tid(m, hi << 32 | 0x6099);
	ck_assert_int_eq(t->ops->send(t, &to, m, MAD_SIZE, 0), 0);
	ck_assert_int_lt(recv_one(p, u, &len, 500), 0);
	/* a request of ours that waits (to a LID nobody has), then the stray node's
	 * GetResp with its TID: delivered */
	gmp(u, MAD_CLASS_SUBN_ADM, 2, MAD_METHOD_GET, MAD_ATTR_NODE_RECORD, NOBODY, 0x6001);
	ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, 1500, 0), 0);
	set_tid(m, hi << 32 | 0x6001);
	ck_assert_int_eq(t->ops->send(t, &to, m, MAD_SIZE, 0), 0);
	ck_assert_int_eq(recv_one(p, u, &len, 1000), a);
	ck_assert_int_eq(umad_status(u), 0);
	ck_assert_uint_eq(tid_of(umad_get_mad(u)), hi << 32 | 0x6001);
	mad_transport_close(t);
	umad_close_port(p);
}
END_TEST

static int reg2(int p, uint32_t qpn, uint8_t cls, uint8_t version, uint32_t oui, uint8_t rmpp,
                uint32_t flags, uint8_t method, uint32_t *flags_back)
{
	struct reg_req2 r = {.qpn = qpn,
	                     .mgmt_class = cls,
	                     .mgmt_class_version = version,
	                     .flags = flags,
	                     .oui = oui,
	                     .rmpp_version = rmpp};
	if (method)
		r.method_mask[method / 64] |= 1ull << (method % 64);
	int rc = ioctl(umad_get_fd(p), REGISTER_AGENT2, &r);
	if (flags_back)
		*flags_back = r.flags;
	return rc < 0 ? errno : 0;
}

/* ib_register_mad_agent's checks, and one holder per method of a class on a port: in this
 * process or another, until the holder lets go. */
START_TEST(registration_rules)
{
	int p = open_port(NULL);
	uint32_t fl = 0;
	ck_assert_int_eq(reg2(p, 1, MAD_CLASS_SUBN_ADM, 2, 0, 0, 0x2, 0, &fl), EINVAL);
	ck_assert_uint_eq(fl, 1); /* the flags the kernel supports, written back */
	ck_assert_int_eq(reg2(p, 0, MAD_CLASS_SUBN_ADM, 2, 0, 0, 0, 0, NULL), EINVAL);
	ck_assert_int_eq(reg2(p, 1, MAD_CLASS_SUBN_DR, 1, 0, 0, 0, 0, NULL), EINVAL);
	ck_assert_int_eq(reg2(p, 2, MAD_CLASS_SUBN_ADM, 2, 0, 0, 0, 0, NULL), EINVAL);
	ck_assert_int_eq(reg2(p, 1, MAD_CLASS_SUBN_ADM, 8, 0, 0, 0, 0, NULL), EINVAL);
	ck_assert_int_eq(reg2(p, 1, 0x31, 1, 0, 0, 0, 0, NULL), EINVAL);              /* no OUI */
	ck_assert_int_eq(reg2(p, 0, MAD_CLASS_SUBN_DR, 1, 0, 1, 0, 0, NULL), EINVAL); /* RMPP */
	ck_assert_int_eq(reg2(p, 1, 0, 0, 0, 0, 1, 0, NULL), EINVAL); /* flags, no class */
	ck_assert_int_eq(reg2(p, 1, 0x31, 1, 0x001405, 1, 1, 0, NULL), 0);

	ck_assert_int_eq(reg2(p, 1, 0x06, 1, 0, 0, 0, MAD_METHOD_GET_TABLE, NULL), 0);
	int p2 = umad_open_port(NULL, 0);
	ck_assert_int_eq(reg2(p2, 1, 0x06, 1, 0, 0, 0, MAD_METHOD_GET_TABLE, NULL), EINVAL);
	ck_assert_int_eq(reg2(p2, 1, 0x06, 1, 0, 0, 0, MAD_METHOD_GET, NULL), 0); /* free */
	ck_assert_int_eq(reg2(p2, 1, 0x06, 2, 0, 0, 0, MAD_METHOD_GET_TABLE, NULL), 0);
	umad_close_port(p2);
	ck_assert_int_eq(wait_child(spawn_self("claim", "0x06")), EINVAL);
	umad_close_port(p);
	ck_assert_int_eq(wait_child(spawn_self("claim", "0x06")), 0);
}
END_TEST

/* Writes and reads: more than 256 bytes without the kernel's RMPP is EINVAL; a read that
 * cannot hold a plain MAD is EINVAL and leaves it queued. */
START_TEST(write_and_read_sizes)
{
	int p = open_port(NULL);
	int a = umad_register(p, MAD_CLASS_SUBN_DR, 1, 0, NULL);
	uint8_t big[sizeof(struct ib_user_mad) + 300] = {0};
	dr_get(big, MAD_ATTR_NODE_INFO, 0x7001, 0);
	errno = 0;
	ck_assert_int_lt(umad_send(p, a, big, 300, 500, 0), 0);
	ck_assert_int_eq(errno, EINVAL);
	uint8_t u[UMAD_LEN];
	dr_get(u, MAD_ATTR_NODE_INFO, 0x7002, 0);
	ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, 500, 0), 0);
	usleep(300000);
	ck_assert_int_lt(read(umad_get_fd(p), u, sizeof(struct ib_user_mad) + 100), 0);
	ck_assert_int_eq(errno, EINVAL);
	int len;
	ck_assert_int_eq(recv_one(p, u, &len, 1000), a); /* still there */
	ck_assert_uint_eq(tid_of(umad_get_mad(u)) & 0xffffffffu, 0x7002);
	umad_close_port(p);
}
END_TEST

/* RMPP: an agent with an RMPP version gets the SA's table whole (ENOSPC first, with the
 * length needed, to a reader with room for one MAD); one registered for user RMPP gets
 * segments. */
START_TEST(kernel_and_user_rmpp)
{
	int p = open_port(NULL);
	uint16_t lid, sm;
	my_lids(&lid, &sm);
	int a = umad_register(p, MAD_CLASS_SUBN_ADM, 2, 1, NULL);
	ck_assert_int_ge(a, 0);
	uint8_t u[UMAD_LEN];
	gmp(u, MAD_CLASS_SUBN_ADM, 2, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, sm, 0x8001);
	ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, 2000, 1), 0);
	int len = MAD_SIZE;
	ck_assert_int_eq(umad_recv(p, u, &len, 3000), -ENOSPC);
	ck_assert_int_gt(len, MAD_SIZE);
	uint8_t *whole = malloc(sizeof(struct ib_user_mad) + (size_t)len);
	int want = len;
	ck_assert_int_eq(umad_recv(p, whole, &len, 1000), a);
	ck_assert_int_eq(len, want);
	ck_assert_uint_eq(((uint8_t *)umad_get_mad(whole))[3], MAD_METHOD_GET_TABLE_RESP);
	free(whole);
	umad_close_port(p);

	p = open_port(NULL);
	struct umad_reg_attr attr = {.mgmt_class = MAD_CLASS_SUBN_ADM,
	                             .mgmt_class_version = 2,
	                             .flags = UMAD_USER_RMPP,
	                             .rmpp_version = 1};
	uint32_t id;
	ck_assert_int_eq(umad_register2(p, &attr, &id), 0);
	gmp(u, MAD_CLASS_SUBN_ADM, 2, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, sm, 0x8002);
	ck_assert_int_eq(umad_send(p, (int)id, u, MAD_SIZE, 2000, 1), 0);
	ck_assert_int_eq(recv_one(p, u, &len, 3000), (int)id);
	uint8_t *m = umad_get_mad(u);
	ck_assert_int_eq(len, MAD_SIZE);
	ck_assert_uint_eq(m[25], 1);     /* DATA */
	ck_assert_uint_eq(m[26] & 3, 3); /* Active, First */
	ck_assert_uint_eq(m[31], 1);     /* segment 1 */
	umad_close_port(p);
}
END_TEST

/* ib_register_mad_agent: hi_tids are allocated cyclically (xa_alloc_cyclic), so a
 * response to an agent that is gone finds none, even after another agent took its place.
 * A user-RMPP agent asks for a table, takes the first segment and closes without an ACK;
 * the SA sends the window again. A new user-RMPP agent in a new file must get none of it.
 * (The preload's hi_tid was the agent's slot, and the next agent there got the segments.) */
START_TEST(answer_for_an_agent_gone_is_freed)
{
	uint16_t lid, sm;
	my_lids(&lid, &sm);
	struct umad_reg_attr attr = {.mgmt_class = MAD_CLASS_SUBN_ADM,
	                             .mgmt_class_version = 2,
	                             .flags = UMAD_USER_RMPP,
	                             .rmpp_version = 1};
	uint8_t u[UMAD_LEN];
	int len;
	uint32_t id;
	int p = open_port(NULL);
	ck_assert_int_eq(umad_register2(p, &attr, &id), 0);
	gmp(u, MAD_CLASS_SUBN_ADM, 2, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, sm, 0xa001);
	ck_assert_int_eq(umad_send(p, (int)id, u, MAD_SIZE, 2000, 1), 0);
	ck_assert_int_eq(recv_one(p, u, &len, 3000), (int)id);
	ck_assert_uint_eq(((uint8_t *)umad_get_mad(u))[31], 1); /* segment 1, not ACKed */
	umad_close_port(p);

	p = open_port(NULL);
	ck_assert_int_eq(umad_register2(p, &attr, &id), 0);
	int r = recv_one(p, u, &len, 2000); /* the SA resends the window meanwhile */
	ck_assert_msg(r < 0, "agent %d got TID 0x%016llx meant for the agent gone", r,
	              (unsigned long long)tid_of(umad_get_mad(u)));
	umad_close_port(p);
}
END_TEST

/* A ServiceRecord request for the service a_write_before_exit_goes_out registers, port GUID
 * guid, ServiceData8.1 data. */
static void sr_mad(uint8_t *u, uint16_t sm, uint8_t method, uint64_t mask, uint64_t tid,
                   uint64_t guid, uint8_t data)
{
	gmp(u, MAD_CLASS_SUBN_ADM, 2, method, MAD_ATTR_SERVICE_RECORD, sm, tid);
	uint8_t *m = umad_get_mad(u);
	struct mad_sa_hdr h;
	mad_sa_hdr_init(&h, method, MAD_ATTR_SERVICE_RECORD, mask);
	mad_sa_hdr_encode(&h, m, MAD_SIZE, NULL);
	set_tid(m, tid);
	struct mad_service_record sr = {.id = 0x1000000000000034ull, .lease = 0xffffffffu};
	mad_bits_set(sr.gid, 0, 64, 0xfe80000000000000ull);
	mad_bits_set(sr.gid, 64, 64, guid);
	snprintf(sr.name, sizeof(sr.name), "umad_rules exit");
	sr.data8[0] = data;
	mad_service_record_encode(&sr, m + MAD_SA_HDR_END, MAD_SIZE - MAD_SA_HDR_END, NULL);
}

/* The child of a_write_before_exit_goes_out: the Set, unsolicited, then exit at once. */
static int set_and_exit(const char *arg)
{
	umad_port_t port;
	umad_init();
	if (umad_get_port(NULL, 0, &port) < 0)
		return 100;
	uint16_t sm = (uint16_t)port.sm_lid;
	uint64_t guid = be64toh(port.port_guid);
	umad_release_port(&port);
	int p = umad_open_port(NULL, 0);
	int a = p < 0 ? -1 : umad_register(p, MAD_CLASS_SUBN_ADM, 2, 0, NULL);
	if (a < 0)
		return 101;
	uint8_t u[UMAD_LEN];
	unsigned i = (unsigned)strtoul(arg, NULL, 0);
	/* ServiceID, ServiceGID, ServiceLease, ServiceName, ServiceData8.1 */
	sr_mad(u, sm, MAD_METHOD_SET, 1ull << 0 | 1ull << 1 | 1ull << 4 | 1ull << 6 | 1ull << 7,
	       0x9100 + i, guid, (uint8_t)i);
	return umad_send(p, a, u, MAD_SIZE, 0, 0) == 0 ? 0 : 102; /* and exits, file open */
}

/* A MAD written before the process exits still goes out: write() posts it to the queue
 * pair (ib_post_send_mad), and the file's release cancels only what the MAD layer still
 * holds, not what the HCA was given. A child sends a ServiceRecord Set unsolicited and
 * exits at once, each time with other ServiceData; a Get then finds it. (The simulator let
 * an exiting client's DISCONNECT overtake the MADs it had just sent: 13 of 100 ibsa queries
 * left the SA without their last RMPP ACK.) */
START_TEST(a_write_before_exit_goes_out)
{
	uint16_t lid, sm;
	my_lids(&lid, &sm);
	umad_port_t port;
	ck_assert_int_eq(umad_get_port(NULL, 0, &port), 0);
	uint64_t guid = be64toh(port.port_guid);
	umad_release_port(&port);
	int p = open_port(NULL);
	int a = umad_register(p, MAD_CLASS_SUBN_ADM, 2, 0, NULL);
	ck_assert_int_ge(a, 0);
	for (unsigned i = 0; i < 40; i++) {
		char arg[16];
		snprintf(arg, sizeof(arg), "%u", i);
		ck_assert_int_eq(wait_child(spawn_self("set-exit", arg)), 0);
		uint8_t u[UMAD_LEN];
		sr_mad(u, sm, MAD_METHOD_GET, 1ull << 0 | 1ull << 1, 0x9200 + i, guid, 0);
		ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, slow_ms(1000), 1), 0);
		int len;
		ck_assert_int_eq(recv_one(p, u, &len, 3000), a);
		ck_assert_int_eq(umad_status(u), 0);
		uint8_t *m = umad_get_mad(u);
		ck_assert_uint_eq(m[3], MAD_METHOD_GET_RESP);
		ck_assert_msg((m[4] << 8 | m[5]) == 0, "Get %u: MAD status 0x%04x (no Set came)", i,
		              m[4] << 8 | m[5]);
		struct mad_service_record got;
		mad_service_record_decode(m + MAD_SA_HDR_END, MAD_SIZE - MAD_SA_HDR_END, &got,
		                          NULL);
		ck_assert_msg(got.data8[0] == i, "Set %u lost: the SA holds ServiceData8 %u", i,
		              got.data8[0]);
	}
	umad_close_port(p);
}
END_TEST

/* generate_unmatched_resp: a Get of a class the SM's port has no agent for is answered
 * "unsupported method/attribute" by its kernel. */
START_TEST(unregistered_get_is_answered_unsupported)
{
	int p = open_port(NULL);
	uint16_t lid, sm;
	my_lids(&lid, &sm);
	int a = umad_register(p, 0x06, 1, 0, NULL);
	uint8_t u[UMAD_LEN];
	int len;
	gmp(u, 0x06, 1, MAD_METHOD_GET, 0x0001, sm, 0x9001);
	ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, slow_ms(1000), 1), 0);
	ck_assert_int_eq(recv_one(p, u, &len, 3000), a);
	ck_assert_int_eq(umad_status(u), 0);
	uint8_t *m = umad_get_mad(u);
	ck_assert_uint_eq(m[3], MAD_METHOD_GET_RESP);
	ck_assert_uint_eq((unsigned)(m[4] << 8 | m[5]), MAD_STATUS_UNSUP_METHOD_ATTR);
	umad_close_port(p);
}
END_TEST

static uint32_t my_capability_mask(void)
{
	int p = open_port(NULL);
	int a = umad_register(p, MAD_CLASS_SUBN_DR, 1, 0, NULL);
	uint8_t u[UMAD_LEN];
	int len;
	dr_get(u, MAD_ATTR_PORT_INFO, 0xa001, 0);
	ck_assert_int_eq(umad_send(p, a, u, MAD_SIZE, 500, 2), 0);
	ck_assert_int_eq(recv_one(p, u, &len, 3000), a);
	const uint8_t *m = umad_get_mad(u) + 64 + 20;
	uint32_t cap = (uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 | m[3];
	umad_close_port(p);
	return cap;
}

/* issm: one holder per port; IsSM while held (in the port and in sysfs); another opener gets
 * EAGAIN with O_NONBLOCK and waits without it. */
START_TEST(issm_one_holder)
{
	char path[256];
	ck_assert_int_eq(umad_get_issm_path("fabricsim0", 1, path, sizeof(path)), 0);
	int fd = open(path, O_RDWR | O_NONBLOCK);
	ck_assert_int_ge(fd, 0);
	usleep(150000);
	ck_assert_uint_ne(my_capability_mask() & 2, 0);
	/* sysfs is live, as the kernel's: it shows IsSM too */
	umad_port_t port;
	ck_assert_int_eq(umad_get_port(NULL, 0, &port), 0);
	ck_assert_uint_ne(ntohl(port.capmask) & 2, 0);
	umad_release_port(&port);
	ck_assert_int_eq(wait_child(spawn_self("issm-nb", path)), EAGAIN);
	pid_t waiter = spawn_self("issm-block", path);
	usleep(400000);
	close(fd);
	ck_assert_int_eq(wait_child(waiter), 0); /* it got it, after waiting */
	usleep(100000);
	ck_assert_uint_eq(my_capability_mask() & 2, 0);
}
END_TEST

/* A ConnectX-8 style pair: the GSI device has no QP0 and its port IsSMDisabled, the SMI
 * device has no QP1; both show one port GUID, as libibumad pairs them. */
START_TEST(smi_gsi_pair)
{
	ck_assert_int_ge(umad_init(), 0);
	char names[4][UMAD_CA_NAME_LEN];
	ck_assert_int_eq(umad_get_cas_names(names, 4), 2);
	umad_port_t gsi, smi;
	ck_assert_int_eq(umad_get_port("fabricsim0", 1, &gsi), 0);
	ck_assert_int_eq(umad_get_port("fabricsim0_smi", 1, &smi), 0);
	ck_assert_uint_eq(gsi.port_guid, smi.port_guid);
	ck_assert_uint_ne(ntohl(gsi.capmask) & 0x400, 0);
	ck_assert_uint_eq(ntohl(smi.capmask) & 0x400, 0);
	umad_release_port(&gsi);
	umad_release_port(&smi);
	int g = umad_open_port("fabricsim0", 1), s = umad_open_port("fabricsim0_smi", 1);
	ck_assert_int_ge(g, 0);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(reg2(g, 0, MAD_CLASS_SUBN_DR, 1, 0, 0, 0, 0, NULL), EPROTONOSUPPORT);
	ck_assert_int_eq(reg2(s, 1, MAD_CLASS_SUBN_ADM, 2, 0, 0, 0, 0, NULL), EPROTONOSUPPORT);
	ck_assert_int_eq(reg2(s, 0, MAD_CLASS_SUBN_DR, 1, 0, 0, 0, 0, NULL), 0);
	ck_assert_int_eq(reg2(g, 1, MAD_CLASS_SUBN_ADM, 2, 0, 0, 0, 0, NULL), 0);
	char path[256];
	ck_assert_int_eq(umad_get_issm_path("fabricsim0", 1, path, sizeof(path)), 0);
	ck_assert_int_lt(open(path, O_RDWR | O_NONBLOCK), 0);
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_int_eq(umad_get_issm_path("fabricsim0_smi", 1, path, sizeof(path)), 0);
	int fd = open(path, O_RDWR | O_NONBLOCK);
	ck_assert_int_ge(fd, 0);
	close(fd);
	umad_close_port(g);
	umad_close_port(s);
}
END_TEST

/* The child of exit_while_answers_arrive: a burst of Gets to the SM's port, each waiting
 * with a timeout, and exit before any answer is read. */
static int gets_and_exit(const char *arg)
{
	umad_port_t port;
	umad_init();
	if (umad_get_port(NULL, 0, &port) < 0)
		return 100;
	uint16_t sm = (uint16_t)port.sm_lid;
	umad_release_port(&port);
	int p = umad_open_port(NULL, 0);
	int a = p < 0 ? -1 : umad_register(p, MAD_CLASS_SUBN_LID, 1, 0, NULL);
	if (a < 0)
		return 101;
	unsigned n = (unsigned)strtoul(arg, NULL, 0);
	for (unsigned i = 0; i < n; i++) {
		uint8_t u[UMAD_LEN];
		lid_get(u, MAD_ATTR_NODE_INFO, 0x9400 + i, sm);
		if (umad_send(p, a, u, MAD_SIZE, 1000, 0) < 0)
			return 102;
	}
	return 0; /* exit() with the answers on their way in */
}

/* A process may exit while answers to its requests are arriving: the kernel frees them with
 * the file. The preload's receive thread once kept reading through the transport that the
 * exit handler had just closed (a SIGSEGV of smpquery in 1 of a few hundred runs in CI). */
START_TEST(exit_while_answers_arrive)
{
	/* a sanitized child's SIGSEGV kills it rather than going through ASan's report, whose
	 * exit status races the main thread's exit(0) */
	const char *was = getenv("ASAN_OPTIONS");
	char *saved = was ? strdup(was) : NULL;
	char opts[512];
	snprintf(opts, sizeof(opts), "%s%shandle_segv=0", was ? was : "", was && *was ? ":" : "");
	setenv("ASAN_OPTIONS", opts, 1);
	for (int i = 0; i < 60; i++) {
		int st = wait_child(spawn_self("gets-exit", "64"));
		ck_assert_msg(st == 0, "run %d: the child ended with %d (128: killed by a signal)",
		              i, st);
	}
	if (saved)
		setenv("ASAN_OPTIONS", saved, 1);
	else
		unsetenv("ASAN_OPTIONS");
	free(saved);
}
END_TEST

/* the second process of a cross-process test: its exit status is the errno seen */
static int child(const char *what, const char *arg)
{
	if (!strcmp(what, "set-exit"))
		return set_and_exit(arg);
	if (!strcmp(what, "gets-exit"))
		return gets_and_exit(arg);
	if (!strcmp(what, "claim")) {
		umad_init();
		int p = umad_open_port(NULL, 0);
		if (p < 0)
			return 100;
		return reg2(p, 1, (uint8_t)strtoul(arg, NULL, 0), 1, 0, 0, 0, MAD_METHOD_GET_TABLE,
		            NULL);
	}
	if (!strcmp(what, "issm-nb")) {
		int fd = open(arg, O_RDWR | O_NONBLOCK);
		return fd < 0 ? errno : 0;
	}
	if (!strcmp(what, "issm-block")) {
		double t0 = now();
		int fd = open(arg, O_RDWR);
		if (fd < 0)
			return errno;
		close(fd);
		return now() - t0 >= 0.2 ? 0 : 101; /* it waited for the holder */
	}
	return 102;
}

int main(int argc, char **argv)
{
	if (argc == 3)
		return child(argv[1], argv[2]);
	Suite *s = suite_create("umad_rules");
	TCase *tc = tcase_create(argc > 1 && !strcmp(argv[1], "pair") ? "pair" : "rules");
	tcase_set_timeout(tc, 60);
	if (argc > 1 && !strcmp(argv[1], "pair")) {
		tcase_add_test(tc, smi_gsi_pair);
	} else {
		tcase_add_test(tc, answers_only_to_requests_with_a_timeout);
		tcase_add_test(tc, unanswered_request_comes_back_timed_out);
		tcase_add_test(tc, a_waiting_tid_is_refused);
		tcase_add_test(tc, late_answer_is_dropped);
		tcase_add_test(tc, stray_responses_are_freed);
		tcase_add_test(tc, registration_rules);
		tcase_add_test(tc, write_and_read_sizes);
		tcase_add_test(tc, kernel_and_user_rmpp);
		tcase_add_test(tc, answer_for_an_agent_gone_is_freed);
		tcase_add_test(tc, a_write_before_exit_goes_out);
		tcase_add_test(tc, exit_while_answers_arrive);
		tcase_add_test(tc, unregistered_get_is_answered_unsupported);
		tcase_add_test(tc, issm_one_holder);
	}
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	/* the preload's receive thread lives in this process: no fork per test */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_VERBOSE);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
