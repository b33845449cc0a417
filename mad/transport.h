/* One interface for sending and receiving MADs, whatever carries them: libibumad on hardware,
 * or the ibsim client protocol (Debian's ibsim, or our fabricsim). The SM, SA and CLI never
 * know which transport they have. A transport carries single MADs; RMPP lives above it, in the
 * dispatcher, so that the same code runs on hardware and in simulation. */
#ifndef IBSMD_MAD_TRANSPORT_H
#define IBSMD_MAD_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/log.h"

/* The other end of a MAD: its destination when sending, its source when receiving. */
struct mad_addr {
	uint16_t lid; /* LID_PERMISSIVE for directed-route SMPs */
	uint32_t qpn;
	uint32_t qkey;
	uint8_t sl;
	uint16_t pkey_index;
};

/* What the transport knows of the local port it is bound to. */
struct mad_local_port {
	char ca_name[64];
	unsigned port_num;
	uint64_t node_guid, port_guid, gid_prefix;
	uint16_t lid, sm_lid;
	uint8_t lmc, state, phys_state, node_type;
	uint32_t capability_mask;
};

enum mad_role {
	MAD_ROLE_CLIENT = 0,  /* sends requests, receives their responses */
	MAD_ROLE_SM = 1 << 0, /* also receives SMP requests and traps (QP0) */
	MAD_ROLE_SA = 1 << 1, /* also receives SA requests (QP1, class 0x03) */
	/* also receives the SA's Reports (InformInfo subscribers). The kernel gives a method
	 * of a class to one agent per port: the SA itself never registers Report. */
	MAD_ROLE_SUBSCRIBER = 1 << 2,
};

struct mad_transport_opts {
	const char *ca_name; /* umad: CA by name, with port_num */
	unsigned port_num;
	uint64_t port_guid;   /* umad: port by GUID (0: not given) */
	const char *sim_node; /* sim: node to attach to (ibsim's SIM_HOST); NULL for its default */
	unsigned roles;       /* enum mad_role bits */
	const struct log *log;
};

/* Receive results beyond a plain MAD. */
enum mad_recv_flags {
	/* The transport gave back a MAD we sent, undelivered (ibsim: no route, dropped). */
	MAD_RECV_SEND_FAILED = 1 << 0,
	/* The kernel gave back a request sent with a timeout: no answer came in time (its
	 * status ETIMEDOUT). Only transports with reports_timeouts set say so. */
	MAD_RECV_TIMED_OUT = 1 << 1,
};

struct mad_transport;

struct mad_transport_ops {
	const char *name;
	/* A pollable fd that becomes readable when recv has something. */
	int (*fd)(struct mad_transport *t);
	/* Send one MAD (at most 256 bytes). 0 or -errno. timeout_ms: for a request that
	 * expects an answer, how long to wait for it; 0 for responses and MADs that expect
	 * none. The kernel hands an answer only to a request sent with a timeout (umad_send(3):
	 * zero means not solicited) and gives the request back, MAD_RECV_TIMED_OUT, when none
	 * came in time; it refuses a request whose TID is still waiting (EINVAL). */
	int (*send)(struct mad_transport *t, const struct mad_addr *to, const uint8_t *mad,
	            size_t len, uint32_t timeout_ms);
	/* Send what send has queued (optional). A transport queues only while t->batch is
	 * set, which the dispatcher does, flushing before its event loop blocks (one thread);
	 * other users send at once and may send from several threads. 0 or -errno (the MADs
	 * not sent are lost). */
	int (*flush)(struct mad_transport *t);
	/* Non-blocking. 1 and *len set when a MAD was read, 0 when none is pending, -errno on
	 * error. *flags gets enum mad_recv_flags. */
	int (*recv)(struct mad_transport *t, struct mad_addr *from, uint8_t *buf, size_t cap,
	            size_t *len, unsigned *flags);
	/* Set or clear IsSM in the local port's CapabilityMask. */
	int (*set_sm)(struct mad_transport *t, bool is_sm);
	int (*query_port)(struct mad_transport *t, struct mad_local_port *out);
	void (*close)(struct mad_transport *t);
};

struct mad_transport {
	const struct mad_transport_ops *ops;
	const struct log *log;
	char desc[128]; /* "umad mlx5_0 port 1" / "sim node S1 (client 2)" for logs */
	bool batch;     /* send may queue until flush (see flush) */
	/* every request sent with a timeout comes back answered or MAD_RECV_TIMED_OUT (the
	 * kernel's MAD layer): the dispatcher waits for that instead of resending on its own */
	bool reports_timeouts;
	/* SMPs in flight that keep this path busy without overrunning it (0: no view; the
	 * SM's mad_window, unless set, takes it) */
	unsigned window_hint;
};

/* Open a transport by kind ("umad" or "sim"). 0, or -errno with a message in err. */
int mad_transport_open(const char *kind, const struct mad_transport_opts *opts,
                       struct mad_transport **out, char *err, size_t errlen);
int mad_transport_open_umad(const struct mad_transport_opts *opts, struct mad_transport **out,
                            char *err, size_t errlen);
int mad_transport_open_sim(const struct mad_transport_opts *opts, struct mad_transport **out,
                           char *err, size_t errlen);

static inline int mad_transport_flush(struct mad_transport *t)
{
	return t && t->ops->flush ? t->ops->flush(t) : 0;
}

static inline void mad_transport_close(struct mad_transport *t)
{
	if (t)
		t->ops->close(t);
}

#endif
