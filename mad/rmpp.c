/* RMPP (IBA vol. 1, 13.6) in user space, over single 256-byte MADs.
 *
 * Written by hand: libibumad leaves RMPP to the kernel, which ibsim and our fabricsim do not
 * have, and libibmad has no transfer logic. Doing it here lets the same code run on hardware
 * (agents registered with user RMPP) and in simulation.
 *
 * Conventions match the Linux kernel's implementation, so we interoperate with it: every
 * segment carries the whole class header (56 bytes for the SA) and 256 - header bytes of data;
 * PayloadLength counts 220 bytes per segment (class header + data) less the padding of the last
 * one, in the first segment for the whole transfer and in the last for itself. A receiver ACKs
 * the first segment at once (window 1) and then each window's last segment; ACKs and a
 * receiver's ABORT carry the data's MAD header with the response bit flipped.
 */
#include "mad/dispatcher_int.h"
#include "util/vec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#define RMPP_SEG_PAYLOAD (MAD_SIZE - MAD_RMPP_HDR_END) /* 220 */
#define RMPP_NO_RESPTIME 0x1f
#define RMPP_MAX_BYTES   MAD_RMPP_MAX_BYTES /* refuse to send or reassemble more */

struct rmpp_session {
	struct mad_dispatcher *d;
	bool sender;
	bool done; /* receiver: delivered, kept a while to re-ACK a repeated last segment */
	bool for_txn;
	bool unasked; /* receiver of a transfer we did not ask for: counted against the caps */
	struct mad_addr peer;
	uint64_t tid; /* whole: the upper bits tell apart clients behind one LID */
	uint8_t hdr[MAD_SIZE];
	size_t hdr_len;
	uint8_t *data;
	size_t data_len, cap;
	unsigned segs, last_ack, window_last, next_seg; /* sender */
	unsigned expected, rwin_last;                   /* receiver */
	unsigned retries;
	uint32_t index; /* in d->rmpp */
	ev_timer timer;
};

size_t mad_rmpp_hdr_len(uint8_t mgmt_class)
{
	if (mgmt_class == MAD_CLASS_SUBN_ADM)
		return MAD_SA_HDR_END;
	/* Vendor classes of range 2 may use RMPP; their class header is 4 bytes (OUI). */
	if (mgmt_class >= 0x30 && mgmt_class <= 0x4f)
		return MAD_RMPP_HDR_END + 4;
	return 0;
}

unsigned rmpp_active(const struct mad_dispatcher *d)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < d->nrmpp; i++)
		n += !d->rmpp[i]->done;
	return n;
}

/* Sessions are found by (direction, peer LID, TID) in one lookup: a scan per MAD let a
 * peer that opens many sessions slow every other transfer. */
struct session_key {
	bool sender;
	uint16_t lid;
	uint64_t tid;
};

static uint32_t key_hash(bool sender, uint16_t lid, uint64_t tid)
{
	uint8_t b[11] = {sender, (uint8_t)(lid >> 8), (uint8_t)lid};
	for (unsigned i = 0; i < 8; i++)
		b[3 + i] = (uint8_t)(tid >> (8 * i));
	return idxmap_hash_bytes(b, sizeof(b));
}

static bool key_eq(const void *key, uint32_t idx, const void *ctx)
{
	const struct session_key *k = key;
	const struct rmpp_session *s = ((const struct mad_dispatcher *)ctx)->rmpp[idx];
	return s->sender == k->sender && s->peer.lid == k->lid && s->tid == k->tid;
}

static uint32_t session_hash(const struct rmpp_session *s)
{
	return key_hash(s->sender, s->peer.lid, s->tid);
}

static struct rmpp_session *find(struct mad_dispatcher *d, bool sender, uint16_t lid, uint64_t tid)
{
	struct session_key k = {sender, lid, tid};
	uint32_t i = idxmap_find(&d->rmpp_index, key_hash(sender, lid, tid), &k, key_eq, d);
	return i == IDXMAP_NONE ? NULL : d->rmpp[i];
}

static uint32_t unasked_of(const struct mad_dispatcher *d, uint16_t lid)
{
	return u64map_count(&d->rmpp_unasked, (uint64_t)lid + 1);
}

static void unasked_count(struct mad_dispatcher *d, uint16_t lid, int delta)
{
	u64map_count_add(&d->rmpp_unasked, (uint64_t)lid + 1, delta);
	d->nunasked += (uint32_t)delta;
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents);

static struct rmpp_session *session_new(struct mad_dispatcher *d, bool sender,
                                        const struct mad_addr *peer, const uint8_t *hdr,
                                        size_t hdr_len)
{
	if (array_reserve(&d->rmpp, &d->rmpp_cap, d->nrmpp + 1ull) < 0)
		return NULL;
	struct rmpp_session *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->d = d;
	s->sender = sender;
	s->peer = *peer;
	memcpy(s->hdr, hdr, hdr_len);
	s->hdr_len = hdr_len;
	s->tid = mad_get_field64(s->hdr, 0, IB_MAD_TRID_F);
	if (idxmap_add(&d->rmpp_index, session_hash(s), d->nrmpp) < 0) {
		free(s);
		return NULL;
	}
	s->index = d->nrmpp;
	ev_init(&s->timer, timer_cb);
	d->rmpp[d->nrmpp++] = s;
	return s;
}

static void session_free(struct rmpp_session *s)
{
	struct mad_dispatcher *d = s->d;
	ev_timer_stop(d->loop, &s->timer);
	uint32_t i = s->index, last = d->nrmpp - 1;
	idxmap_del(&d->rmpp_index, session_hash(s), i);
	if (i != last) {
		struct rmpp_session *m = d->rmpp[last];
		idxmap_move(&d->rmpp_index, session_hash(m), last, i);
		d->rmpp[i] = m;
		m->index = i;
	}
	d->nrmpp--;
	if (s->unasked)
		unasked_count(d, s->peer.lid, -1);
	free(s->data);
	free(s);
}

static void arm(struct rmpp_session *s, double seconds)
{
	ev_timer_stop(s->d->loop, &s->timer);
	ev_timer_set(&s->timer, seconds, 0.);
	ev_timer_start(s->d->loop, &s->timer);
}

static double seg_timeout(const struct mad_dispatcher *d)
{
	return d->o.rmpp_timeout_ms / 1000.0;
}

/* ACK, STOP or ABORT for this session. */
static void send_ctl(struct rmpp_session *s, uint8_t type, uint8_t status, uint32_t d1, uint32_t d2)
{
	uint8_t buf[MAD_SIZE] = {0};
	memcpy(buf, s->hdr, s->hdr_len);
	if (!s->sender)
		buf[3] ^= MAD_METHOD_RESP;
	struct mad_rmpp_hdr r = {
	    .version = RMPP_VERSION,
	    .type = type,
	    .resp_time = RMPP_NO_RESPTIME,
	    .flags = RMPP_FLAG_ACTIVE,
	    .status = status,
	    .data1 = d1,
	    .data2 = d2,
	};
	mad_rmpp_hdr_encode(&r, buf, sizeof(buf), NULL);
	disp_xmit(s->d, &s->peer, buf, sizeof(buf), 0);
}

/* ---- sender ---- */

static void send_seg(struct rmpp_session *s, unsigned n)
{
	size_t seg_data = MAD_SIZE - s->hdr_len;
	size_t pad = (size_t)s->segs * seg_data - s->data_len;
	uint8_t buf[MAD_SIZE] = {0};
	memcpy(buf, s->hdr, s->hdr_len);
	struct mad_rmpp_hdr r = {
	    .version = RMPP_VERSION,
	    .type = RMPP_TYPE_DATA,
	    .resp_time = RMPP_NO_RESPTIME,
	    .flags = RMPP_FLAG_ACTIVE,
	    .data1 = n,
	};
	if (n == 1) {
		r.flags |= RMPP_FLAG_FIRST;
		r.data2 = (uint32_t)((size_t)s->segs * RMPP_SEG_PAYLOAD - pad);
	}
	if (n == s->segs) {
		r.flags |= RMPP_FLAG_LAST;
		r.data2 = (uint32_t)(RMPP_SEG_PAYLOAD - pad);
	}
	mad_rmpp_hdr_encode(&r, buf, sizeof(buf), NULL);
	size_t off = (size_t)(n - 1) * seg_data;
	size_t cnt = s->data_len - off < seg_data ? s->data_len - off : seg_data;
	memcpy(buf + s->hdr_len, s->data + off, cnt);
	/* the last segment goes no longer than its data: hardware pads it to 256 bytes anyway,
	 * and a client under a simulator without RMPP (libumad2sim.so) then counts the
	 * records of a one-segment answer right */
	disp_xmit(s->d, &s->peer, buf, n == s->segs ? s->hdr_len + cnt : sizeof(buf), 0);
}

static void send_window(struct rmpp_session *s)
{
	unsigned last = s->window_last < s->segs ? s->window_last : s->segs;
	while (s->next_seg <= last)
		send_seg(s, s->next_seg++);
	arm(s, seg_timeout(s->d));
}

static void sender_end(struct rmpp_session *s, bool ok, const char *why)
{
	struct mad_dispatcher *d = s->d;
	if (ok) {
		d->c.rmpp_sent_transfers++;
	} else {
		d->c.rmpp_aborted++;
		log_warn(d->o.log, "mad",
		         "RMPP send of %zu bytes to LID %u (TID 0x%016" PRIx64 ") failed at "
		         "segment %u of %u: %s",
		         s->data_len, s->peer.lid, s->tid, s->last_ack + 1, s->segs, why);
	}
	session_free(s);
}

static void sender_abort(struct rmpp_session *s, uint8_t status, const char *why)
{
	send_ctl(s, RMPP_TYPE_ABORT, status, 0, 0);
	sender_end(s, false, why);
}

static void sender_ack(struct rmpp_session *s, uint32_t seg, uint32_t nwl)
{
	if (seg > s->segs) {
		sender_abort(s, RMPP_STATUS_S2B, "ACK for a segment beyond the last");
		return;
	}
	if (nwl < seg) {
		sender_abort(s, RMPP_STATUS_W2S, "NewWindowLast below the ACKed segment");
		return;
	}
	if (seg < s->last_ack)
		return; /* an old ACK */
	s->last_ack = seg;
	s->window_last = nwl;
	s->retries = 0;
	if (s->last_ack >= s->segs) {
		sender_end(s, true, NULL);
		return;
	}
	if (s->next_seg <= s->last_ack)
		s->next_seg = s->last_ack + 1;
	send_window(s);
}

int rmpp_send(struct mad_dispatcher *d, const struct mad_addr *to, const uint8_t *hdr,
              size_t hdr_len, const uint8_t *data, size_t data_len)
{
	if (hdr_len < MAD_RMPP_HDR_END || hdr_len >= MAD_SIZE)
		return -EINVAL;
	if (data_len > RMPP_MAX_BYTES)
		return -EMSGSIZE;
	size_t seg_data = MAD_SIZE - hdr_len;
	size_t segs = data_len ? (data_len + seg_data - 1) / seg_data : 1;
	struct rmpp_session *s =
	    find(d, true, to->lid, mad_get_field64((void *)hdr, 0, IB_MAD_TRID_F));
	if (s) {
		/* Same requester and TID while our answer is on its way. The same answer means a
		 * retry, or a new process that drew the same TID (tools under libumad2sim.so
		 * do): the transfer under way answers both, resent from its first unACKed segment
		 * so that neither waits for our time-out. A different answer means a new question
		 * under an old TID: the old transfer has no one left to receive it. */
		if (s->data_len == data_len && (!data_len || !memcmp(s->data, data, data_len))) {
			s->next_seg = s->last_ack + 1;
			s->retries = 0;
			send_window(s);
			return 0;
		}
		session_free(s);
	}
	s = session_new(d, true, to, hdr, hdr_len);
	if (!s)
		return -ENOMEM;
	s->data = malloc(data_len ? data_len : 1);
	if (!s->data) {
		session_free(s);
		return -ENOMEM;
	}
	if (data_len)
		memcpy(s->data, data, data_len);
	s->data_len = data_len;
	s->segs = (unsigned)segs;
	s->window_last = 1; /* until the receiver's first ACK opens its window */
	s->next_seg = 1;
	send_window(s);
	return 0;
}

/* ---- receiver ---- */

static void receiver_fail(struct rmpp_session *s, uint8_t status, const char *why)
{
	struct mad_dispatcher *d = s->d;
	if (status)
		send_ctl(s, RMPP_TYPE_ABORT, status, 0, 0);
	d->c.rmpp_aborted++;
	log_rl(d->o.log, &d->rl_rmpp, LOGL_WARN, "mad",
	       "RMPP receive from LID %u (TID 0x%016" PRIx64 ") aborted after %u segments: %s",
	       s->peer.lid, s->tid, s->expected - 1, why);
	if (s->for_txn) {
		struct txn *t = disp_find_txn(d, s->tid);
		if (t && t->state == TXN_RMPP)
			disp_txn_finish(d, t, -ECOMM, 0, NULL, 0, &s->peer);
	}
	session_free(s);
}

static int append(struct rmpp_session *s, const uint8_t *p, size_t n)
{
	if (n == 0)
		return 0;
	if (s->data_len + n > (s->unasked ? s->d->o.rmpp_recv_bytes : RMPP_MAX_BYTES))
		return -1;
	if (s->data_len + n > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 4096;
		while (ncap < s->data_len + n)
			ncap *= 2;
		uint8_t *nd = realloc(s->data, ncap);
		if (!nd)
			return -1;
		s->data = nd;
		s->cap = ncap;
	}
	memcpy(s->data + s->data_len, p, n);
	s->data_len += n;
	return 0;
}

static void receiver_deliver(struct rmpp_session *s)
{
	struct mad_dispatcher *d = s->d;
	size_t total = s->hdr_len + s->data_len;
	uint8_t *msg = malloc(total);
	if (!msg) {
		receiver_fail(s, RMPP_STATUS_RESOURCES, "out of memory");
		return;
	}
	memcpy(msg, s->hdr, s->hdr_len);
	if (s->data_len)
		memcpy(msg + s->hdr_len, s->data, s->data_len);
	free(s->data);
	s->data = NULL;
	s->cap = 0;
	s->done = true;
	d->c.rmpp_recv_transfers++;
	/* Linger to re-ACK the last segment should our final ACK be lost. */
	arm(s, seg_timeout(d) * (d->o.rmpp_retries + 1));

	if (s->for_txn) {
		struct txn *t = disp_find_txn(d, s->tid);
		if (t && t->state == TXN_RMPP)
			disp_txn_finish(d, t, 0, (uint16_t)mad_get_field(msg, 0, IB_MAD_STATUS_F),
			                msg, total, &s->peer);
	} else if (d->handlers[msg[1]].fn) {
		d->handlers[msg[1]].fn(d, &s->peer, msg, total, d->handlers[msg[1]].ctx);
	} else {
		d->c.unhandled++;
	}
	free(msg);
}

static void receiver_data(struct mad_dispatcher *d, const struct mad_addr *from, const uint8_t *mad,
                          size_t len, const struct mad_hdr *hdr, const struct mad_rmpp_hdr *r)
{
	size_t hdr_len = mad_rmpp_hdr_len(hdr->mgmt_class);
	struct rmpp_session *s = find(d, false, from->lid, hdr->tid);
	uint8_t padded[MAD_SIZE];
	if (len < MAD_SIZE) {
		/* a segment sent short, as simulators pass it on: the rest is padding */
		if (len < hdr_len) {
			d->c.malformed++;
			return;
		}
		memcpy(padded, mad, len);
		memset(padded + len, 0, MAD_SIZE - len);
		mad = padded;
		len = MAD_SIZE;
	}
	if (!s) {
		if (r->data1 != 1 || !(r->flags & RMPP_FLAG_FIRST)) {
			d->c.unmatched++; /* the middle of a transfer we do not know */
			return;
		}
		struct txn *t = NULL;
		if (mad_is_response(hdr->method)) {
			t = disp_match_answer(d, from, hdr);
			if (!t) {
				d->c.unmatched++;
				return;
			}
		}
		if (!t && (d->nunasked >= d->o.rmpp_recv_max ||
		           unasked_of(d, from->lid) >= d->o.rmpp_recv_per_peer)) {
			/* too many transfers nobody asked for: this one is refused (an ABORT
			 * tells a real sender to ask again later) */
			d->c.rmpp_refused++;
			log_rl(d->o.log, &d->rl_rmpp, LOGL_WARN, "mad",
			       "RMPP transfer from LID %u refused: %u unasked transfers under way "
			       "(%u from that LID)",
			       from->lid, d->nunasked, unasked_of(d, from->lid));
			struct rmpp_session tmp = {.d = d, .peer = *from, .tid = hdr->tid};
			memcpy(tmp.hdr, mad, hdr_len);
			tmp.hdr_len = hdr_len;
			send_ctl(&tmp, RMPP_TYPE_ABORT, RMPP_STATUS_RESOURCES, 0, 0);
			return;
		}
		s = session_new(d, false, from, mad, hdr_len);
		if (!s)
			return;
		if (!t) {
			s->unasked = true;
			unasked_count(d, from->lid, +1);
		}
		s->expected = 1;
		s->rwin_last = 1;
		if (t) {
			s->for_txn = true;
			t->state = TXN_RMPP;
			ev_timer_stop(d->loop, &t->timer);
		}
	}
	if (s->done) {
		send_ctl(s, RMPP_TYPE_ACK, 0, s->expected - 1, s->expected - 1);
		return;
	}
	uint32_t seg = r->data1;
	if (seg != s->expected) {
		/* A repeat or a gap: say again where we are, so the sender resends. */
		send_ctl(s, RMPP_TYPE_ACK, 0, s->expected - 1, s->rwin_last);
		return;
	}
	if ((seg == 1) != !!(r->flags & RMPP_FLAG_FIRST)) {
		receiver_fail(s, RMPP_STATUS_BAD_SEG, "First flag and SegmentNumber disagree");
		return;
	}
	size_t seg_data = MAD_SIZE - hdr_len;
	size_t n = seg_data;
	bool last = r->flags & RMPP_FLAG_LAST;
	if (last) {
		size_t class_hdr = hdr_len - MAD_RMPP_HDR_END;
		if (r->data2 < class_hdr || r->data2 - class_hdr > seg_data) {
			receiver_fail(s, RMPP_STATUS_BAD_LEN,
			              "PayloadLength of the last segment "
			              "out of range");
			return;
		}
		n = r->data2 - class_hdr;
	}
	if (append(s, mad + hdr_len, n) < 0) {
		if (s->unasked)
			d->c.rmpp_refused++;
		receiver_fail(s, RMPP_STATUS_RESOURCES, "transfer too large");
		return;
	}
	s->expected++;
	if (last) {
		send_ctl(s, RMPP_TYPE_ACK, 0, seg, seg);
		receiver_deliver(s);
		return;
	}
	if (seg >= s->rwin_last) {
		s->rwin_last = seg + d->o.rmpp_window;
		send_ctl(s, RMPP_TYPE_ACK, 0, seg, s->rwin_last);
	}
	arm(s, seg_timeout(d) * (d->o.rmpp_retries + 1));
}

/* ---- input and timers ---- */

void rmpp_input(struct mad_dispatcher *d, const struct mad_addr *from, const uint8_t *mad,
                size_t len, const struct mad_hdr *hdr)
{
	struct mad_rmpp_hdr r;
	if (mad_rmpp_hdr_decode(mad, len, &r, NULL) < 0) {
		d->c.malformed++;
		return;
	}
	uint64_t tid = hdr->tid;
	struct rmpp_session *s;
	if (r.version != RMPP_VERSION) {
		d->c.malformed++;
		log_debug(d->o.log, "mad", "RMPP version %u from LID %u dropped", r.version,
		          from->lid);
		return;
	}
	switch (r.type) {
	case RMPP_TYPE_DATA: receiver_data(d, from, mad, len, hdr, &r); return;
	case RMPP_TYPE_ACK:
		if ((s = find(d, true, from->lid, tid)))
			sender_ack(s, r.data1, r.data2);
		else
			d->c.unmatched++;
		return;
	case RMPP_TYPE_STOP:
	case RMPP_TYPE_ABORT:
		if ((s = find(d, true, from->lid, tid)))
			sender_end(s, false,
			           r.type == RMPP_TYPE_STOP ? "receiver sent STOP"
			                                    : "receiver sent ABORT");
		else if ((s = find(d, false, from->lid, tid)) && !s->done)
			receiver_fail(s, 0, "sender sent ABORT");
		else
			d->c.unmatched++;
		return;
	default: d->c.malformed++; return;
	}
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct rmpp_session *s =
	    (struct rmpp_session *)((char *)w - offsetof(struct rmpp_session, timer));
	if (!s->sender) {
		if (s->done)
			session_free(s);
		else
			receiver_fail(s, RMPP_STATUS_T2L, "no segment within the time-out");
		return;
	}
	if (s->segs == 1) {
		/* A one-segment answer is not sent again unasked: a requester that lost it asks
		 * again, as for any Get, and rmpp_send answers that; a requester without RMPP
		 * (tools under libumad2sim.so) never ACKs, and a resend would reach whichever
		 * process next holds its queue pair. The session lives on to know the retry. */
		if (++s->retries > s->d->o.rmpp_retries)
			sender_end(s, true, NULL);
		else
			arm(s, seg_timeout(s->d));
		return;
	}
	if (++s->retries > s->d->o.rmpp_retries) {
		sender_abort(s, RMPP_STATUS_TMR, "no ACK after all retries");
		return;
	}
	s->d->c.retried++;
	s->next_seg = s->last_ack + 1;
	send_window(s);
}

void rmpp_free_all(struct mad_dispatcher *d)
{
	while (d->nrmpp)
		session_free(d->rmpp[d->nrmpp - 1]);
	free(d->rmpp);
	d->rmpp = NULL;
	d->rmpp_cap = 0;
	idxmap_free(&d->rmpp_index);
	u64map_free(&d->rmpp_unasked);
}

unsigned mad_dispatcher_rmpp_active(const struct mad_dispatcher *d)
{
	return d->nrmpp;
}

/* A scan of at most the transfers under way, which the SA keeps to a few hundred. */
unsigned mad_dispatcher_rmpp_sends_to(const struct mad_dispatcher *d, uint16_t lid, unsigned count)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < d->nrmpp; i++) {
		const struct rmpp_session *r = d->rmpp[i];
		n += r->sender && !r->done && r->peer.lid >= lid &&
		     (unsigned)(r->peer.lid - lid) < count;
	}
	return n;
}

/* Has this answer to lid..lid + count - 1 sent its every segment, and may a new request
 * under tid end it? IBA 13.6.5: a transfer is done when its last segment is ACKed, and a
 * requester with no RMPP (tools under libumad2sim.so, a client that died) never ACKs. */
static bool reclaimable(const struct rmpp_session *s, uint8_t mgmt_class, uint16_t lid,
                        unsigned count, uint64_t tid)
{
	if (!s->sender || s->tid == tid || s->next_seg <= s->segs || s->hdr[1] != mgmt_class)
		return false; /* a retry of it, segments still to send, or another class's */
	if (s->peer.lid < lid || (unsigned)(s->peer.lid - lid) >= count)
		return false;
	/* One segment: nothing is lost, a retry under its TID is answered anew. More: only the
	 * same agent's (TID bits 32-63, the kernel's hi_tid) moved on; another process on the
	 * port may still be taking its last window. */
	return s->segs == 1 || (s->tid >> 32) == (tid >> 32);
}

unsigned mad_dispatcher_rmpp_reclaim(struct mad_dispatcher *d, uint8_t mgmt_class, uint16_t lid,
                                     unsigned count, uint64_t tid)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < d->nrmpp;) {
		if (reclaimable(d->rmpp[i], mgmt_class, lid, count, tid)) {
			/* session_free moves the last session into slot i */
			sender_end(d->rmpp[i], true, NULL);
			n++;
		} else {
			i++;
		}
	}
	d->c.rmpp_reclaimed += n;
	return n;
}

size_t mad_dispatcher_rmpp_bytes(const struct mad_dispatcher *d)
{
	size_t n = 0;
	for (uint32_t i = 0; i < d->nrmpp; i++)
		if (d->rmpp[i]->sender)
			n += d->rmpp[i]->data_len;
	return n;
}
