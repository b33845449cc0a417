/* Internals shared by dispatcher.c (transactions, windows) and rmpp.c (segmented transfers). */
#ifndef IBSMD_MAD_DISPATCHER_INT_H
#define IBSMD_MAD_DISPATCHER_INT_H

#include "mad/dispatcher.h"
#include "mad/mad_header.h"
#include "util/idxmap.h"
#include "util/log.h"
#include "util/u64map.h"

#define TXN_CHUNK    1024
#define TXN_IDX_BITS 20 /* low 20 bits of the TID's low word: slot; top 12: generation */
#define TXN_MAX      (1u << TXN_IDX_BITS)
#define NIL          UINT32_MAX

enum txn_state {
	TXN_FREE,
	TXN_QUEUED,   /* waiting for the window */
	TXN_INFLIGHT, /* sent, timer running */
	TXN_RMPP,     /* answer arriving by RMPP; the RMPP session owns the timing */
};

struct txn {
	enum txn_state state;
	uint16_t gen;
	uint32_t next; /* queue link */
	uint32_t dest; /* index into the destination table, NIL if unlimited */
	uint32_t tid_low;
	uint64_t tid;
	struct mad_addr to;
	uint8_t mad[MAD_SIZE];
	size_t len;
	unsigned timeout_ms, retries_left, attempts;
	/* attempts a reports_timeouts transport holds (each comes back answered or timed
	 * out); more than one only after the backstop timer resent */
	unsigned outstanding;
	/* the dispatcher's default retries and timeout: more attempts, and shorter waits for
	 * each, when MADs get lost (see adapted_attempts, attempt_timeout) */
	bool adaptive;
	bool report;    /* in MAD_LANE_REPORT */
	double sent_at; /* the last attempt's */
	mad_result_fn cb;
	void *ctx;
	ev_timer timer;
	struct mad_dispatcher *d;
	uint32_t idx;
};

struct dest {
	uint64_t key;
	unsigned inflight;
	/* the main lane: requests popped while the destination was full; the Report lane:
	 * every request waiting for it, oldest first */
	uint32_t blocked_head, blocked_tail;
	uint32_t nblocked; /* Report lane: how many wait */
	uint32_t run_next; /* Report lane: next in the dispatcher's run list */
	bool runnable;     /* Report lane: in the run list */
};

struct fifo {
	uint32_t head, tail;
};

struct rmpp_session;

struct mad_dispatcher {
	struct ev_loop *loop;
	struct mad_transport *t;
	struct mad_dispatcher_opts o;
	ev_io io;
	ev_prepare flush; /* sends the transport's batch before the loop blocks */

	struct txn **chunks; /* txns in fixed chunks: ev_timers must not move */
	uint32_t nchunks, ntxn, free_head;
	uint32_t live;     /* txns held (not free): against o.max_txns */
	uint16_t gen_base; /* first generation of every slot: differs between processes */
	struct fifo pending, ready;

	/* Report-lane destinations with requests waiting and room in flight, in turn */
	uint32_t run_head, run_tail;

	struct dest *dests; /* destinations, indexed through dest_index */
	uint32_t ndests, dests_cap;
	struct u64map dest_index;

	struct {
		mad_request_fn fn;
		void *ctx;
	} handlers[256];

	struct rmpp_session **rmpp;
	uint32_t nrmpp, rmpp_cap;
	struct idxmap rmpp_index;   /* (sender?, peer LID, TID) -> index in rmpp */
	struct u64map rmpp_unasked; /* peer LID + 1 -> its unasked receive sessions */
	uint32_t nunasked;          /* unasked receive sessions in all */
	struct log_rl rl_rmpp;      /* receive failures a peer can cause at will */
	struct log_rl rl_mismatch;  /* responses that name a TID of ours but do not answer it */

	struct mad_counters c;
	/* attempts and answered transactions, each decayed per finished transaction: their
	 * ratio estimates the chance that one attempt is answered (see adapted_attempts) */
	double est_attempts, est_answered;
	/* round trips of answers to first attempts (RFC 6298's smoothed mean and variation) */
	double srtt, rttvar;
	bool rtt_known;
	uint8_t rxbuf[MAD_SIZE];
};

static inline struct txn *txn_at(const struct mad_dispatcher *d, uint32_t idx)
{
	return &d->chunks[idx / TXN_CHUNK][idx % TXN_CHUNK];
}

/* dispatcher.c, for rmpp.c */
struct txn *disp_match_answer(struct mad_dispatcher *d, const struct mad_addr *from,
                              const struct mad_hdr *hdr);
int disp_xmit(struct mad_dispatcher *d, const struct mad_addr *to, const uint8_t *mad, size_t len,
              uint32_t timeout_ms);
struct txn *disp_find_txn(struct mad_dispatcher *d, uint64_t tid);
void disp_txn_finish(struct mad_dispatcher *d, struct txn *t, int error, uint16_t status,
                     const uint8_t *mad, size_t len, const struct mad_addr *from);

/* rmpp.c */
/* A MAD with the RMPP active flag: handled here. */
void rmpp_input(struct mad_dispatcher *d, const struct mad_addr *from, const uint8_t *mad,
                size_t len, const struct mad_hdr *hdr);
int rmpp_send(struct mad_dispatcher *d, const struct mad_addr *to, const uint8_t *hdr,
              size_t hdr_len, const uint8_t *data, size_t data_len);
void rmpp_free_all(struct mad_dispatcher *d);
unsigned rmpp_active(const struct mad_dispatcher *d);

#endif
