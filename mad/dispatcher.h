/* The MAD dispatcher: every MAD ibsmd, the SA and ibsa send or receive goes through one.
 *
 * - Requests get a transaction ID, a timeout and a retry count, and wait in a queue until the
 *   window allows them out: at most `window` in flight in total and `window_per_dest` per
 *   destination (a node, named by the caller's dest_key). Answers are matched on the low 32
 *   bits of the TID: the kernel (agent id) and ibsim (client id) rewrite the upper bits.
 * - Requests to peers that may never answer (the SA's Reports to subscribers) go in a lane of
 *   their own, with its own window and a bounded backlog per destination (MAD_LANE_REPORT).
 * - Each request ends in exactly one call of its callback: with the answer, or with an error
 *   after its retries (late and duplicate answers are counted and dropped).
 * - Unsolicited MADs (requests to us: traps, SMInfo, SA queries) go to a handler per class.
 * - RMPP (IBA 13.6) both ways over single 256-byte MADs: answers that arrive segmented are
 *   reassembled before the callback; mad_dispatcher_respond_rmpp() sends a segmented answer.
 * It runs on one libev loop and never blocks.
 */
#ifndef IBSMD_MAD_DISPATCHER_H
#define IBSMD_MAD_DISPATCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "mad/transport.h"

struct mad_dispatcher;

struct mad_dispatcher_opts {
	/* Zero means the default for every field. */
	unsigned window;          /* in flight in total; default 64 */
	unsigned window_per_dest; /* in flight per destination key; default 4 (UINT_MAX: none) */
	unsigned timeout_ms;      /* default per-attempt timeout; default 200 */
	unsigned retries;         /* default retries after the first attempt; default 3 */
	unsigned rmpp_window;     /* segments a receiver accepts per ACK; default 32 */
	unsigned rmpp_timeout_ms; /* RMPP segment/ACK timeout; default 200 */
	unsigned rmpp_retries;    /* default 5 */
	/* Transfers a peer starts unasked (a request sent by RMPP, such as a MultiPathRecord
	 * GetMulti): at most this many at once in all, per source LID, and bytes each; more
	 * are refused, so that first segments never continued cannot take the memory or
	 * the time of every lookup. Defaults 256, 8 and 65,536. Transfers that answer our
	 * own requests are not bound by these. */
	unsigned rmpp_recv_max, rmpp_recv_per_peer, rmpp_recv_bytes;
	/* The Report lane (MAD_LANE_REPORT), beside `window` and never within it: in flight in
	 * all and per destination, and waiting per destination (the oldest is dropped for a
	 * newer one) and in all (a new one is refused). Defaults 16, 1, 1,024 and 65,536. */
	unsigned report_window, report_per_dest, report_backlog_per_dest, report_backlog;
	/* Transactions held at once, queued or in flight: more are refused (-ENOMEM) until
	 * some end. Default (0) and most: 2^20, what the TID's slot bits number. */
	unsigned max_txns;
	const struct log *log;
};

struct mad_counters {
	uint64_t sent;          /* MADs handed to the transport, retries and RMPP included */
	uint64_t received;      /* MADs read from the transport */
	uint64_t requests;      /* transactions submitted */
	uint64_t completed;     /* transactions answered */
	uint64_t retried;       /* attempts after the first */
	uint64_t timed_out;     /* transactions failed after all retries */
	uint64_t unmatched;     /* answers for no transaction in flight: late or duplicate */
	uint64_t mismatched;    /* ... of them, with a TID in flight but another class,
	                           attribute or source: not its answer */
	uint64_t malformed;     /* MADs too short or with broken headers, dropped */
	uint64_t send_errors;   /* transport refused a send or returned a MAD undelivered */
	uint64_t unhandled;     /* requests for a class nobody handles */
	uint64_t busy;          /* answers with status BUSY (retried) */
	uint64_t retried_lossy; /* retries beyond the default, for the loss seen (see .retries) */
	uint64_t rmpp_sent_transfers, rmpp_recv_transfers, rmpp_aborted;
	uint64_t rmpp_reclaimed;    /* sent whole, unACKed, ended by the requester's next ask */
	uint64_t rmpp_refused;      /* unasked transfers refused: too many at once, or too large */
	uint64_t status_code[8];    /* answers by MAD status code field (bits 2-4), 0 unused */
	uint64_t status_class[128]; /* answers by class-specific status (bits 8-14), 0 unused */
	unsigned inflight, inflight_max, queued; /* MAD_LANE_MAIN's */
	/* MAD_LANE_REPORT's: requests in flight and waiting, and those dropped or refused for
	 * a full backlog (ended with -ENOBUFS) */
	unsigned report_inflight, report_queued;
	uint64_t report_dropped;
};

/* The outcome of a request. */
struct mad_result {
	int error;          /* 0 answered; -ETIMEDOUT no answer after retries; -ECOMM RMPP aborted;
	                       -ECANCELED dispatcher closed; -ENOBUFS dropped unsent from a full
	                       MAD_LANE_REPORT backlog */
	uint16_t status;    /* the answer's MAD status (directed route: the 15-bit status) */
	const uint8_t *mad; /* the answer; for RMPP the header of the first segment and all data */
	size_t len;
	struct mad_addr from;
	unsigned attempts;
	uint64_t tid;
};

typedef void (*mad_result_fn)(struct mad_dispatcher *d, const struct mad_result *res, void *ctx);

/* The window and queue a request waits in. */
enum mad_lane {
	MAD_LANE_MAIN, /* the SM's SMPs, SA and client requests: `window`, `window_per_dest` */
	/* notices to subscribers, who may never answer: report_* above, with fixed retries
	 * (their losses are not the fabric's, so they do not adapt retries and waits) */
	MAD_LANE_REPORT,
};

struct mad_request {
	struct mad_addr to;
	const uint8_t *mad; /* the request, at most 256 bytes; its TID is assigned here */
	size_t len;
	unsigned timeout_ms; /* 0: the dispatcher's default */
	int retries;         /* <0: the dispatcher's default, raised while MADs get lost */
	uint64_t dest_key;   /* per-destination window key (e.g. node index + 1); 0: LID-routed
	                        MADs use the LID, directed-route ones are not limited */
	enum mad_lane lane;  /* 0: MAD_LANE_MAIN */
	mad_result_fn cb;
	void *ctx;
};

/* An unsolicited MAD (a request to us), reassembled if it came as RMPP. */
typedef void (*mad_request_fn)(struct mad_dispatcher *d, const struct mad_addr *from,
                               const uint8_t *mad, size_t len, void *ctx);

struct mad_dispatcher *mad_dispatcher_new(struct ev_loop *loop, struct mad_transport *t,
                                          const struct mad_dispatcher_opts *opts);
/* Change opts.max_txns (0: the most): what memory the transactions may hold. */
void mad_dispatcher_set_max_txns(struct mad_dispatcher *d, unsigned n);
/* Ends every transaction with -ECANCELED and frees everything. */
/* End every transaction, in flight or queued, and every RMPP session: callbacks run with
 * -ECANCELED (so their owners free what they hold) while the caller's state is still there.
 * At shutdown, before the owners go; the dispatcher is then only good for freeing. */
void mad_dispatcher_cancel_all(struct mad_dispatcher *d);
void mad_dispatcher_free(struct mad_dispatcher *d);

/* Queue a request. 0, or -EINVAL/-EMSGSIZE/-ENOMEM, or -ENOBUFS for a Report-lane request
 * when that lane's whole backlog is full (the callback is then not called). A Report-lane
 * request may end the oldest waiting for the same destination (its callback runs before
 * this returns, with -ENOBUFS). */
int mad_dispatcher_send(struct mad_dispatcher *d, const struct mad_request *req);

void mad_dispatcher_set_handler(struct mad_dispatcher *d, uint8_t mgmt_class, mad_request_fn fn,
                                void *ctx);

/* Send a single-MAD answer as is (the caller set the response method, status and TID). */
int mad_dispatcher_respond(struct mad_dispatcher *d, const struct mad_addr *to, const uint8_t *mad,
                           size_t len);
/* Send an answer by RMPP: hdr is the first hdr_len bytes (MAD header, RMPP header, class
 * header: 56 for the SA); data is split into 256 - hdr_len byte segments. The transfer runs
 * on its own; failures are counted and logged. 0, -EMSGSIZE beyond MAD_RMPP_MAX_BYTES,
 * -EINVAL or -ENOMEM. */
int mad_dispatcher_respond_rmpp(struct mad_dispatcher *d, const struct mad_addr *to,
                                const uint8_t *hdr, size_t hdr_len, const uint8_t *data,
                                size_t data_len);

const struct mad_counters *mad_dispatcher_counters(const struct mad_dispatcher *d);
/* The share of attempts answered lately (1: none lost), the measure retries adapt to. */
double mad_dispatcher_answer_rate(const struct mad_dispatcher *d);
/* Log the counters at INFO, one line, plus nonzero status counts. */
void mad_dispatcher_log_counters(const struct mad_dispatcher *d);
/* True when nothing is queued, in flight (in either lane) or in an RMPP transfer. */
bool mad_dispatcher_idle(const struct mad_dispatcher *d);

/* The header length (MAD + RMPP + class header) of an RMPP-capable class, 0 if the class
 * does not use RMPP. */
size_t mad_rmpp_hdr_len(uint8_t mgmt_class);
/* RMPP transfers under way, both ways (a measure of load for whoever answers tables). */
unsigned mad_dispatcher_rmpp_active(const struct mad_dispatcher *d);
/* Bytes of the answers being sent by RMPP (memory held until they are ACKed). */
size_t mad_dispatcher_rmpp_bytes(const struct mad_dispatcher *d);
/* RMPP transfers this side is sending to LIDs lid..lid + count - 1 (one port's LMC range). */
unsigned mad_dispatcher_rmpp_sends_to(const struct mad_dispatcher *d, uint16_t lid, unsigned count);
/* A new request of mgmt_class under tid from the port at lid..lid + count - 1 says its
 * answers of that class that went out whole are taken or abandoned: end those not ACKed yet
 * (one segment; more only for the same agent, TID bits 32-63), so they hold none of its
 * room. Another class's (the standby sync's, on the same dispatcher) are not the
 * requester's to end. Returns how many. */
unsigned mad_dispatcher_rmpp_reclaim(struct mad_dispatcher *d, uint8_t mgmt_class, uint16_t lid,
                                     unsigned count, uint64_t tid);
/* The largest transfer either way: mad_dispatcher_respond_rmpp refuses more (-EMSGSIZE). */
#define MAD_RMPP_MAX_BYTES (64u << 20)

#endif
