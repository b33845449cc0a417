/* An in-process transport for dispatcher tests: a real fd (a socketpair) so the libev loop
 * sees it as it would a umad fd; every send goes to a hook the test controls, and
 * fake_deliver() hands a MAD to the dispatcher as if it came off the wire. Two of them can be
 * linked into a lossy wire with fake_link(). */
#ifndef IBSMD_TEST_FAKE_TRANSPORT_H
#define IBSMD_TEST_FAKE_TRANSPORT_H

#include "mad/transport.h"

struct fake_transport;

typedef void (*fake_send_fn)(struct fake_transport *f, const struct mad_addr *to,
                             const uint8_t *mad, size_t len, void *ctx);

struct fake_transport {
	struct mad_transport base;
	int sp[2];
	fake_send_fn on_send;
	void *ctx;
	unsigned long sends;
	uint32_t last_timeout_ms; /* what the last send asked the kernel to wait */
	/* fake_link: the peer, our LID (the peer sees MADs from it) and the loss rules */
	struct fake_transport *peer;
	uint16_t lid;
	unsigned drop_percent;   /* random loss of every MAD */
	unsigned drop_rmpp_data; /* loss of RMPP DATA segments, percent */
	unsigned drop_rmpp_ack;  /* loss of RMPP ACKs, percent */
	unsigned seed;
};

struct fake_transport *fake_transport_new(void);
void fake_deliver(struct fake_transport *f, const struct mad_addr *from, const uint8_t *mad,
                  size_t len, unsigned flags);
/* Connect a and b: what one sends the other receives, less the configured losses. */
void fake_link(struct fake_transport *a, struct fake_transport *b);

#endif
