#include "fake_transport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mad/mad_types.h"

/* One queued MAD in the socketpair: test-internal, never on a wire. */
struct fake_msg {
	struct mad_addr from;
	unsigned flags;
	size_t len;
	uint8_t mad[MAD_SIZE];
};

static struct fake_transport *to_fake(struct mad_transport *t)
{
	return (struct fake_transport *)t;
}

static int f_fd(struct mad_transport *t)
{
	return to_fake(t)->sp[0];
}

static int f_send(struct mad_transport *t, const struct mad_addr *to, const uint8_t *mad,
                  size_t len, uint32_t timeout_ms)
{
	struct fake_transport *f = to_fake(t);
	f->sends++;
	f->last_timeout_ms = timeout_ms;
	if (f->on_send)
		f->on_send(f, to, mad, len, f->ctx);
	return 0;
}

static int f_recv(struct mad_transport *t, struct mad_addr *from, uint8_t *buf, size_t cap,
                  size_t *len, unsigned *flags)
{
	struct fake_msg m;
	ssize_t n = recv(to_fake(t)->sp[0], &m, sizeof(m), MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	if (m.len > cap)
		return -EMSGSIZE;
	memcpy(buf, m.mad, m.len);
	*len = m.len;
	*from = m.from;
	*flags = m.flags;
	return 1;
}

static int f_set_sm(struct mad_transport *t, bool is_sm)
{
	(void)t;
	(void)is_sm;
	return 0;
}

static int f_query(struct mad_transport *t, struct mad_local_port *out)
{
	memset(out, 0, sizeof(*out));
	out->lid = to_fake(t)->lid;
	return 0;
}

static void f_close(struct mad_transport *t)
{
	struct fake_transport *f = to_fake(t);
	close(f->sp[0]);
	close(f->sp[1]);
	free(f);
}

static const struct mad_transport_ops fake_ops = {
    .name = "fake",
    .fd = f_fd,
    .send = f_send,
    .recv = f_recv,
    .set_sm = f_set_sm,
    .query_port = f_query,
    .close = f_close,
};

struct fake_transport *fake_transport_new(void)
{
	struct fake_transport *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, f->sp) < 0) {
		free(f);
		return NULL;
	}
	/* Room for whole RMPP windows in flight without blocking the sender. */
	int sz = 8 << 20;
	setsockopt(f->sp[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(f->sp[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	f->base.ops = &fake_ops;
	snprintf(f->base.desc, sizeof(f->base.desc), "fake");
	return f;
}

void fake_deliver(struct fake_transport *f, const struct mad_addr *from, const uint8_t *mad,
                  size_t len, unsigned flags)
{
	struct fake_msg m = {.from = *from, .flags = flags, .len = len};
	memcpy(m.mad, mad, len);
	if (send(f->sp[1], &m, sizeof(m), MSG_DONTWAIT) != (ssize_t)sizeof(m))
		abort(); /* the test's queue is too small: make that loud */
}

static unsigned roll(struct fake_transport *f)
{
	return (unsigned)rand_r(&f->seed) % 100;
}

static void link_send(struct fake_transport *f, const struct mad_addr *to, const uint8_t *mad,
                      size_t len, void *ctx)
{
	(void)to;
	(void)ctx;
	if (f->drop_percent && roll(f) < f->drop_percent)
		return;
	bool rmpp = len > 27 && (mad[26] & RMPP_FLAG_ACTIVE);
	if (rmpp && mad[25] == RMPP_TYPE_DATA && f->drop_rmpp_data && roll(f) < f->drop_rmpp_data)
		return;
	if (rmpp && mad[25] == RMPP_TYPE_ACK && f->drop_rmpp_ack && roll(f) < f->drop_rmpp_ack)
		return;
	struct mad_addr from = {.lid = f->lid, .qpn = 1, .qkey = QP1_QKEY};
	fake_deliver(f->peer, &from, mad, len, 0);
}

void fake_link(struct fake_transport *a, struct fake_transport *b)
{
	a->peer = b;
	b->peer = a;
	a->on_send = link_send;
	b->on_send = link_send;
	if (!a->seed)
		a->seed = 1;
	if (!b->seed)
		b->seed = 2;
}
