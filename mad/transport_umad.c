/* The "umad" transport: real InfiniBand ports through libibumad.
 *
 * RMPP is done in user space by the dispatcher, so agents are registered with the user-RMPP
 * flag (umad_register2) and the kernel passes every segment through. Debian's libumad2sim.so
 * (how OpenSM is run on ibsim) knows only the old registration call, so we fall back to
 * umad_register with RMPP version 0, which also leaves RMPP to us.
 *
 * Under libumad2sim.so the umad "fd" is a number the preload invents (1024 and up) that no
 * kernel poll can watch. Then a reader thread blocks in umad_recv and hands each MAD to the
 * event loop through a socketpair; on hardware the loop watches the umad fd itself.
 *
 * ConnectX-8 and later HCAs put QP0 on an SMI device of its own beside the GSI device (see
 * find_pair): SMPs then go through the SMI device's port and everything else through the
 * GSI device's, and the loop watches both through one epoll fd.
 */
#include "mad/sync_msg.h"
#include "mad/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/umad.h>

#include "mad/mad_types.h"

#define UMAD_BUF_MAD       256
#define CAP_IS_SM_DISABLED 0x00000400u /* PortInfo CapabilityMask bit 10 */

/* A device port: the one of the HCA, or one side of an SMI/GSI pair. */
struct umad_side {
	int portid;
	char ca_name[UMAD_CA_NAME_LEN];
	int port_num;
};

struct umad_transport {
	struct mad_transport base;
	struct umad_side side[2]; /* [0] SMPs (QP0), [1] the rest (QP1): the same port but on
	                             an SMI/GSI pair */
	bool pair;
	int epfd;       /* a pair: both ports' fds, for the loop */
	unsigned next;  /* a pair: the side read first next time */
	int agent[256]; /* agent id per management class, -1 if not registered */
	uint8_t agent_version[256];
	int issm_fd;
	/* reader thread, only when the umad fd cannot be polled (libumad2sim.so) */
	bool threaded;
	int pipe_rd, pipe_wr;
	pthread_t reader;
	volatile int stop;
	/* the loop's side of the socketpair: one batch read, served a MAD at a time */
	uint8_t *batch;
	size_t batch_len, batch_off;
};

/* MADs the reader thread hands over in one message. Under the preload each message costs
 * a send, a wakeup and a recv, in a VM most of what a MAD cost us; a batch takes what the
 * preload has queued already, so nothing waits for a batch to fill. */
#define UMAD_BATCH       32
#define UMAD_REC_MAX     (sizeof(struct ib_user_mad) + UMAD_BUF_MAD)
#define UMAD_REC_HDR     8 /* a length, and the umad kept 8-aligned for its struct */
#define UMAD_REC_SPAN(n) (UMAD_REC_HDR + (((n) + 7u) & ~(size_t)7u))
#define UMAD_BATCH_CAP   (UMAD_BATCH * UMAD_REC_SPAN(UMAD_REC_MAX))

static struct umad_transport *to_umad(struct mad_transport *t)
{
	return (struct umad_transport *)t;
}

static struct umad_side *side_of(struct umad_transport *u, uint8_t mgmt_class)
{
	return &u->side[mgmt_class == MAD_CLASS_SUBN_LID || mgmt_class == MAD_CLASS_SUBN_DR ? 0
	                                                                                    : 1];
}

static int register_agent(struct umad_transport *u, uint8_t mgmt_class, uint8_t version,
                          const uint8_t *methods, size_t nmethods)
{
	/* vendor classes of range 2 are told apart by the OUI: ibsmd speaks only its own */
	bool vendor2 = mgmt_class >= 0x30 && mgmt_class <= 0x4f;
	uint32_t oui = vendor2 ? MAD_SYNC_OUI : 0;
	if (u->agent[mgmt_class] >= 0)
		return 0;
	struct umad_reg_attr attr = {
	    .mgmt_class = mgmt_class,
	    .mgmt_class_version = version,
	    .flags = UMAD_USER_RMPP,
	    .rmpp_version = 0,
	    .oui = oui,
	};
	long mask[16 / sizeof(long)] = {0};
	for (size_t i = 0; i < nmethods; i++) {
		attr.method_mask[methods[i] / 64] |= 1ull << (methods[i] % 64);
		mask[methods[i] / (8 * sizeof(long))] |= 1l << (methods[i] % (8 * sizeof(long)));
	}
	uint32_t id;
	int portid = side_of(u, mgmt_class)->portid;
	int r = umad_register2(portid, &attr, &id);
	if (r != 0) {
		uint8_t ob[3] = {(uint8_t)(oui >> 16), (uint8_t)(oui >> 8), (uint8_t)oui};
		r = vendor2 ? umad_register_oui(portid, mgmt_class, 0, ob, nmethods ? mask : NULL)
		            : umad_register(portid, mgmt_class, version, 0, nmethods ? mask : NULL);
		if (r < 0) {
			log_err(u->base.log, "mad",
			        "%s: cannot register an agent for class 0x%02x (%s): is another "
			        "SM or SA (OpenSM?) running on this port?",
			        u->base.desc, mgmt_class, strerror(r == -1 ? errno : -r));
			return r == -1 ? -errno : r;
		}
		id = (uint32_t)r;
	}
	u->agent[mgmt_class] = (int)id;
	u->agent_version[mgmt_class] = version;
	return 0;
}

static int umad_t_fd(struct mad_transport *t)
{
	struct umad_transport *u = to_umad(t);
	return u->threaded ? u->pipe_rd : u->pair ? u->epfd : umad_get_fd(u->side[0].portid);
}

static int umad_t_send(struct mad_transport *t, const struct mad_addr *to, const uint8_t *mad,
                       size_t len, uint32_t timeout_ms)
{
	struct umad_transport *u = to_umad(t);
	if (len > UMAD_BUF_MAD || len < MAD_HDR_SIZE)
		return -EMSGSIZE;
	uint8_t mgmt_class = mad[1], version = mad[2];
	if (u->agent[mgmt_class] < 0) {
		int r = register_agent(u, mgmt_class, version, NULL, 0);
		if (r < 0)
			return r;
	}
	uint8_t buf[sizeof(struct ib_user_mad) + UMAD_BUF_MAD];
	memset(buf, 0, umad_size());
	umad_set_addr(buf, to->lid, (int)to->qpn, to->sl, (int)to->qkey);
	umad_set_pkey(buf, to->pkey_index);
	memcpy(umad_get_mad(buf), mad, len);
	/* A request goes with its timeout and no kernel retries: the dispatcher decides on
	 * retries, and the kernel's ETIMEDOUT return tells it an attempt is over (one resend
	 * each, never two layers resending). */
	int r = umad_send(side_of(u, mgmt_class)->portid, u->agent[mgmt_class], buf, (int)len,
	                  (int)timeout_ms, 0);
	return r < 0 ? (r == -1 ? -errno : r) : 0;
}

/* Fill one MAD from a umad buffer. */
static int unpack(const uint8_t *ubuf, size_t ulen, struct mad_addr *from, uint8_t *buf, size_t cap,
                  size_t *len, unsigned *flags)
{
	const struct ib_user_mad *um = (const struct ib_user_mad *)ubuf;
	if (ulen < umad_size())
		return -EPROTO;
	size_t n = ulen - umad_size();
	if (n > cap)
		n = cap;
	memcpy(buf, ubuf + umad_size(), n);
	*len = n;
	memset(from, 0, sizeof(*from));
	from->lid = ntohs(um->addr.lid);
	from->qpn = ntohl(um->addr.qpn);
	from->qkey = ntohl(um->addr.qkey);
	from->sl = um->addr.sl;
	from->pkey_index = um->addr.pkey_index;
	/* the kernel gives a request back with ETIMEDOUT when no answer came; libumad2sim.so
	 * uses a status for a MAD the simulator could not deliver */
	*flags = um->status == ETIMEDOUT ? MAD_RECV_TIMED_OUT
	         : um->status            ? MAD_RECV_SEND_FAILED
	                                 : 0;
	return 1;
}

static int umad_t_recv(struct mad_transport *t, struct mad_addr *from, uint8_t *buf, size_t cap,
                       size_t *len, unsigned *flags)
{
	struct umad_transport *u = to_umad(t);
	uint8_t ubuf[sizeof(struct ib_user_mad) + UMAD_BUF_MAD];
	if (u->threaded) {
		/* records of a length (host order: both ends are this process) and the umad,
		 * as reader_main packs them */
		if (u->batch_off >= u->batch_len) {
			ssize_t n = recv(u->pipe_rd, u->batch, UMAD_BATCH_CAP, MSG_DONTWAIT);
			if (n < 0)
				return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -errno;
			u->batch_len = (size_t)n;
			u->batch_off = 0;
		}
		uint32_t rl = 0;
		if (u->batch_len - u->batch_off >= UMAD_REC_HDR)
			memcpy(&rl, u->batch + u->batch_off, sizeof(rl));
		if (!rl || UMAD_REC_SPAN(rl) > u->batch_len - u->batch_off) {
			u->batch_off = u->batch_len = 0; /* cannot happen: we wrote it */
			return -EPROTO;
		}
		const uint8_t *rec = u->batch + u->batch_off + UMAD_REC_HDR;
		u->batch_off += UMAD_REC_SPAN(rl);
		return unpack(rec, rl, from, buf, cap, len, flags);
	}
	/* a pair: the side read first alternates, so that neither starves the other */
	for (unsigned k = 0; k < (u->pair ? 2u : 1u); k++) {
		int portid = u->side[u->pair ? (u->next + k) & 1 : 0].portid;
		int ulen = UMAD_BUF_MAD;
		int r = umad_recv(portid, ubuf, &ulen, 0);
		if (r < 0) {
			if (r == -ETIMEDOUT || r == -EAGAIN || errno == ETIMEDOUT ||
			    errno == EAGAIN)
				continue;
			if (r == -ENOSPC) {
				/* An oversized MAD (kernel RMPP should be off): drain and drop it.
				 */
				uint8_t *big = malloc(umad_size() + (size_t)ulen);
				if (big) {
					umad_recv(portid, big, &ulen, 0);
					free(big);
				}
				return -EMSGSIZE;
			}
			return r == -1 ? -errno : r;
		}
		u->next = (u->next + k + 1) & 1;
		return unpack(ubuf, umad_size() + (size_t)ulen, from, buf, cap, len, flags);
	}
	return 0;
}

static void *reader_main(void *arg)
{
	struct umad_transport *u = arg;
	uint8_t *out = malloc(UMAD_BATCH_CAP);
	if (!out)
		return NULL;
	while (!u->stop) {
		/* wait for one MAD, then take what else is queued without waiting */
		size_t used = 0;
		for (unsigned k = 0; k < UMAD_BATCH; k++) {
			int ulen = UMAD_BUF_MAD;
			uint8_t *rec = out + used + UMAD_REC_HDR;
			if (umad_recv(u->side[0].portid, rec, &ulen, k ? 0 : 200) < 0)
				break;
			uint32_t n =
			    (uint32_t)(umad_size() +
			               (size_t)(ulen > UMAD_BUF_MAD ? UMAD_BUF_MAD : ulen));
			memcpy(out + used, &n, sizeof(n));
			used += UMAD_REC_SPAN(n);
		}
		if (used && send(u->pipe_wr, out, used, 0) < 0 && errno != EINTR)
			break;
	}
	free(out);
	return NULL;
}

static int umad_t_set_sm(struct mad_transport *t, bool is_sm)
{
	struct umad_transport *u = to_umad(t);
	/* IsSM stays set for as long as the issm device is held open. */
	if (!is_sm) {
		if (u->issm_fd >= 0)
			close(u->issm_fd);
		u->issm_fd = -1;
		return 0;
	}
	if (u->issm_fd >= 0)
		return 0;
	char path[256];
	const struct umad_side *smi = &u->side[0];
	if (umad_get_issm_path(smi->ca_name, smi->port_num, path, sizeof(path)) < 0)
		return -ENODEV;
	/* never blocking: the kernel makes an opener wait while another SM holds it, and
	 * the SM decides what to do meanwhile (-EAGAIN) */
	u->issm_fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	return u->issm_fd < 0 ? -errno : 0;
}

static int umad_t_query_port(struct mad_transport *t, struct mad_local_port *out)
{
	struct umad_transport *u = to_umad(t);
	umad_port_t p;
	umad_ca_t ca;
	/* the GSI side: the port an administrator names (an SMI device's port resolves to it) */
	const struct umad_side *gsi = &u->side[1];
	if (umad_get_port(gsi->ca_name, gsi->port_num, &p) < 0)
		return -ENODEV;
	memset(out, 0, sizeof(*out));
	snprintf(out->ca_name, sizeof(out->ca_name), "%s", p.ca_name);
	out->port_num = (unsigned)p.portnum;
	out->port_guid = be64toh(p.port_guid);
	out->gid_prefix = be64toh(p.gid_prefix);
	out->lid = (uint16_t)p.base_lid;
	out->sm_lid = (uint16_t)p.sm_lid;
	out->lmc = (uint8_t)p.lmc;
	out->state = (uint8_t)p.state;
	out->phys_state = (uint8_t)p.phys_state;
	out->capability_mask = ntohl(p.capmask);
	umad_release_port(&p);
	if (umad_get_ca(gsi->ca_name, &ca) == 0) {
		out->node_guid = be64toh(ca.node_guid);
		out->node_type = (uint8_t)ca.node_type;
		umad_release_ca(&ca);
	}
	return 0;
}

static void umad_t_close(struct mad_transport *t)
{
	struct umad_transport *u = to_umad(t);
	if (u->threaded) {
		u->stop = 1;
		pthread_join(u->reader, NULL);
		close(u->pipe_rd);
		close(u->pipe_wr);
		free(u->batch);
	}
	if (u->issm_fd >= 0)
		close(u->issm_fd);
	if (u->pair) {
		close(u->epfd);
		umad_close_port(u->side[1].portid);
	}
	umad_close_port(u->side[0].portid);
	free(u);
}

static const struct mad_transport_ops umad_ops = {
    .name = "umad",
    .fd = umad_t_fd,
    .send = umad_t_send,
    .recv = umad_t_recv,
    .set_sm = umad_t_set_sm,
    .query_port = umad_t_query_port,
    .close = umad_t_close,
};

/* Choose a port: by name and number, by GUID, or the first InfiniBand port that is ACTIVE,
 * else the first whose link is up (an SM's port is only INIT before the SM runs). Never an
 * Ethernet (RoCE) port: it has no subnet to manage. */
static int pick_port(const struct mad_transport_opts *o, char *ca_out, int *port_out, char *err,
                     size_t errlen)
{
	char cas[32][UMAD_CA_NAME_LEN];
	int ncas = umad_get_cas_names(cas, 32);
	if (ncas <= 0) {
		snprintf(err, errlen, "umad: no RDMA devices found (is ib_umad loaded?)");
		return -ENODEV;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int c = 0; c < ncas; c++) {
			if (o->ca_name && strcmp(o->ca_name, cas[c]) != 0)
				continue;
			umad_ca_t ca;
			if (umad_get_ca(cas[c], &ca) < 0)
				continue;
			int found = -1;
			for (int p = 0; p < UMAD_CA_MAX_PORTS && found < 0; p++) {
				umad_port_t *port = ca.ports[p];
				if (!port)
					continue;
				if (o->port_num && (unsigned)port->portnum != o->port_num)
					continue;
				if (o->port_guid && be64toh(port->port_guid) != o->port_guid)
					continue;
				/* sysfs says "InfiniBand" (libumad2sim.so: "IB") */
				if (strcmp(port->link_layer, "Ethernet") == 0)
					continue;
				bool explicit = (o->ca_name && o->port_num) || o->port_guid;
				if (explicit || (pass == 0 && port->state == PORT_STATE_ACTIVE) ||
				    (pass == 1 && port->phys_state == PHYS_STATE_LINKUP))
					found = port->portnum;
			}
			umad_release_ca(&ca);
			if (found >= 0) {
				memcpy(ca_out, cas[c], UMAD_CA_NAME_LEN);
				ca_out[UMAD_CA_NAME_LEN - 1] = 0;
				*port_out = found;
				return 0;
			}
		}
	}
	if (o->port_guid)
		snprintf(err, errlen, "umad: no InfiniBand port with GUID 0x%016llx",
		         (unsigned long long)o->port_guid);
	else if (o->ca_name)
		snprintf(err, errlen, "umad: %s has no usable InfiniBand port%s", o->ca_name,
		         o->port_num ? " with that number" : " (none ACTIVE or LinkUp)");
	else
		snprintf(err, errlen,
		         "umad: no InfiniBand port is ACTIVE or LinkUp; name one "
		         "with --ca/--port or --guid");
	return -ENODEV;
}

/* ConnectX-8 and later put QP0 on an SMI device of its own beside the GSI device; both show
 * the port's GUID and the GSI device's port says IsSMDisabled. rdma-core pairs them from
 * release 56 (umad_get_smi_gsi_pair_by_ca_name); where libibumad lacks the call (Debian 12
 * has rdma-core 44) the same pairing is made here from what umad_get_ca shows. The SMI side
 * in smi/smi_port, the GSI side in gsi/gsi_port: the same device for an HCA without a pair.
 * 0, or -errno. */
static int find_pair(const char *ca, int port, char *smi, int *smi_port, char *gsi, int *gsi_port,
                     const struct log *log)
{
	snprintf(smi, UMAD_CA_NAME_LEN, "%s", ca);
	snprintf(gsi, UMAD_CA_NAME_LEN, "%s", ca);
	*smi_port = *gsi_port = port;
#ifdef IBSMD_HAVE_SMI_GSI_PAIR
	struct umad_ca_pair pair;
	if (umad_get_smi_gsi_pair_by_ca_name(ca, (uint8_t)port, &pair, 0) == 0) {
		snprintf(smi, UMAD_CA_NAME_LEN, "%s", pair.smi_name);
		snprintf(gsi, UMAD_CA_NAME_LEN, "%s", pair.gsi_name);
		*smi_port = pair.smi_preferred_port ? (int)pair.smi_preferred_port : port;
		*gsi_port = pair.gsi_preferred_port ? (int)pair.gsi_preferred_port : port;
		return 0;
	}
#endif
	umad_port_t me;
	if (umad_get_port(ca, port, &me) < 0)
		return -ENODEV;
	uint64_t guid = me.port_guid;
	bool me_gsi_only = (ntohl(me.capmask) & CAP_IS_SM_DISABLED) != 0;
	umad_release_port(&me);
	char cas[32][UMAD_CA_NAME_LEN];
	int ncas = umad_get_cas_names(cas, 32);
	for (int c = 0; c < ncas; c++) {
		if (!strcmp(cas[c], ca))
			continue;
		umad_ca_t other;
		if (umad_get_ca(cas[c], &other) < 0)
			continue;
		int found = -1;
		bool other_gsi_only = false;
		for (int p = 0; p < UMAD_CA_MAX_PORTS && found < 0; p++) {
			umad_port_t *op = other.ports[p];
			if (op && guid && op->port_guid == guid) {
				found = op->portnum;
				other_gsi_only = (ntohl(op->capmask) & CAP_IS_SM_DISABLED) != 0;
			}
		}
		umad_release_ca(&other);
		if (found < 0)
			continue;
		if (me_gsi_only == other_gsi_only) {
			log_warn(
			    log, "mad",
			    "umad %s port %d and %s port %d show one port GUID but neither (or "
			    "both) says IsSMDisabled: not taken as an SMI/GSI pair",
			    ca, port, cas[c], found);
			continue;
		}
		char *s = me_gsi_only ? smi : gsi;
		memcpy(s, cas[c], UMAD_CA_NAME_LEN);
		s[UMAD_CA_NAME_LEN - 1] = 0;
		*(me_gsi_only ? smi_port : gsi_port) = found;
		return 0;
	}
	return 0;
}

/* Open one side's port. 0, or -errno with the reason in err. */
static int open_side(struct umad_side *sd, char *err, size_t errlen)
{
	sd->portid = umad_open_port(sd->ca_name, sd->port_num);
	if (sd->portid >= 0)
		return 0;
	snprintf(err, errlen,
	         "umad: cannot open %s port %d: %s (need root or the umad device permissions)",
	         sd->ca_name, sd->port_num, strerror(-sd->portid));
	return sd->portid;
}

/* The local port, and its SMI device when QP0 is on one of its own: each side opened. 0, or
 * -errno with the reason in err (nothing left open). */
static int open_sides(struct umad_transport *u, const struct mad_transport_opts *opts, char *err,
                      size_t errlen)
{
	char ca[UMAD_CA_NAME_LEN];
	int port;
	int r = pick_port(opts, ca, &port, err, errlen);
	if (r < 0)
		return r;
	struct umad_side *smi = &u->side[0], *gsi = &u->side[1];
	find_pair(ca, port, smi->ca_name, &smi->port_num, gsi->ca_name, &gsi->port_num, opts->log);
	u->pair = strcmp(smi->ca_name, gsi->ca_name) != 0 || smi->port_num != gsi->port_num;
	if ((r = open_side(smi, err, errlen)) < 0)
		return r;
	if (!u->pair) {
		*gsi = *smi;
		snprintf(u->base.desc, sizeof(u->base.desc), "umad %s port %d", ca, port);
		return 0;
	}
	if ((r = open_side(gsi, err, errlen)) < 0) {
		umad_close_port(smi->portid);
		return r;
	}
	snprintf(u->base.desc, sizeof(u->base.desc), "umad %s port %d (SMI %s port %d)",
	         gsi->ca_name, gsi->port_num, smi->ca_name, smi->port_num);
	log_notice(opts->log, "mad",
	           "%s port %d has its QP0 on an SMI device of its own: SMPs go through %s "
	           "port %d, the SA and the sync through %s port %d",
	           ca, port, smi->ca_name, smi->port_num, gsi->ca_name, gsi->port_num);
	return 0;
}

/* The agents of the roles asked for. 0, or <0 with the reason in err. */
static int register_agents(struct umad_transport *u, const struct mad_transport_opts *opts,
                           char *err, size_t errlen)
{
	static const uint8_t sm_methods[] = {MAD_METHOD_GET, MAD_METHOD_SET, MAD_METHOD_TRAP,
	                                     MAD_METHOD_TRAP_REPRESS};
	static const uint8_t sa_methods[] = {MAD_METHOD_GET,       MAD_METHOD_SET,
	                                     MAD_METHOD_GET_TABLE, MAD_METHOD_GET_TRACE_TABLE,
	                                     MAD_METHOD_GET_MULTI, MAD_METHOD_DELETE};
	int r;
	if (opts->roles & MAD_ROLE_SM) {
		if ((r = register_agent(u, MAD_CLASS_SUBN_LID, 1, sm_methods, 4)) < 0 ||
		    (r = register_agent(u, MAD_CLASS_SUBN_DR, 1, sm_methods, 4)) < 0) {
			snprintf(err, errlen, "umad: cannot register the SM agents on %s",
			         u->base.desc);
			return r;
		}
	}
	if (opts->roles & MAD_ROLE_SA) {
		if ((r = register_agent(u, MAD_CLASS_SUBN_ADM, 2, sa_methods, sizeof(sa_methods))) <
		    0) {
			snprintf(err, errlen, "umad: cannot register the SA agent on %s",
			         u->base.desc);
			return r;
		}
	} else if (opts->roles & MAD_ROLE_SUBSCRIBER) {
		static const uint8_t report[] = {MAD_METHOD_REPORT};
		if ((r = register_agent(u, MAD_CLASS_SUBN_ADM, 2, report, 1)) < 0) {
			snprintf(err, errlen,
			         "umad: cannot register for the SA's Reports on %s (another "
			         "subscriber on this port holds them)",
			         u->base.desc);
			return r;
		}
	}

	if (opts->roles & MAD_ROLE_SM) {
		/* standby sync (mad/sync_msg.h): without it the SM still works, unsynced */
		static const uint8_t sync_methods[] = {MAD_METHOD_GET};
		if (register_agent(u, MAD_CLASS_IBSMD_SYNC, MAD_SYNC_CLASS_VERSION, sync_methods,
		                   1) < 0)
			log_warn(u->base.log, "mad",
			         "%s: no agent for the standby sync class 0x%02x: standbys of this "
			         "SM will not be kept in sync",
			         u->base.desc, MAD_CLASS_IBSMD_SYNC);
	}
	return 0;
}

/* How MADs are read: umad descriptors that cannot be polled (a preload's) get a reader
 * thread, a pair's two an epoll set. 0, or <0 with the reason in err. */
static int start_reading(struct umad_transport *u, char *err, size_t errlen)
{
	int r;
	int fd = umad_get_fd(u->side[0].portid);
	if (fcntl(fd, F_GETFD) < 0) {
		int sp[2];
		if (u->pair) {
			snprintf(err, errlen, "umad: an SMI/GSI pair needs pollable umad devices");
			return -ENOTSUP;
		}
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
			r = -errno;
			snprintf(err, errlen, "umad: socketpair: %s", strerror(errno));
			return r;
		}
		u->pipe_rd = sp[0];
		u->pipe_wr = sp[1];
		u->batch = malloc(UMAD_BATCH_CAP);
		if (!u->batch) {
			close(sp[0]);
			close(sp[1]);
			snprintf(err, errlen, "umad: out of memory");
			return -ENOMEM;
		}
		if ((r = pthread_create(&u->reader, NULL, reader_main, u)) != 0) {
			close(sp[0]);
			close(sp[1]);
			free(u->batch);
			u->batch = NULL;
			snprintf(err, errlen, "umad: cannot start the reader thread: %s",
			         strerror(r));
			return -r;
		}
		u->threaded = true; /* only now has the close a thread to join */
		return 0;
	}
	/* a kernel (or its emulation): every request with a timeout comes back */
	u->base.reports_timeouts = true;
	if (u->pair) {
		u->epfd = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event ev = {.events = EPOLLIN};
		if (u->epfd < 0 || epoll_ctl(u->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ||
		    epoll_ctl(u->epfd, EPOLL_CTL_ADD, umad_get_fd(u->side[1].portid), &ev) < 0) {
			r = -errno;
			snprintf(err, errlen, "umad: epoll: %s", strerror(errno));
			if (u->epfd >= 0)
				close(u->epfd);
			return r;
		}
	}
	return 0;
}

int mad_transport_open_umad(const struct mad_transport_opts *opts, struct mad_transport **out,
                            char *err, size_t errlen)
{
	if (umad_init() < 0) {
		snprintf(err, errlen, "umad: libibumad initialisation failed");
		return -ENODEV;
	}
	struct umad_transport *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->base.ops = &umad_ops;
	u->base.log = opts->log;
	u->issm_fd = -1;
	for (int i = 0; i < 256; i++)
		u->agent[i] = -1;
	int r = open_sides(u, opts, err, errlen);
	if (r < 0)
		goto fail;
	if ((r = register_agents(u, opts, err, errlen)) < 0 ||
	    (r = start_reading(u, err, errlen)) < 0)
		goto fail_port;
	*out = &u->base;
	return 0;
fail_port:
	if (u->pair)
		umad_close_port(u->side[1].portid);
	umad_close_port(u->side[0].portid);
fail:
	free(u);
	return r < 0 ? r : -EIO;
}
