/* Standby sync (sync/sync.h): the MADs, the timers and what each side does with the items.
 * The bookkeeping (generations, deltas, checksums) is sync/journal.c. */
#include "sync/sync.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <ev.h>
#include <sodium.h>

#include "config/config.h"
#include "mad/dispatcher.h"
#include "mad/mad_header.h"
#include "mad/sync_msg.h"
#include "sm/saved.h"
#include "sm/tenants.h"
#include "sync/auth.h"
#include "sync/journal.h"
#include "util/log.h"
#include "util/u64map.h"
#include "util/vec.h"

#define SAVE_DELAY      1.0  /* the standby writes its copy a second after the last change */
#define REQ_TIMEOUT_MS  1000 /* per attempt; RMPP keeps a long answer going on its own */
#define REQ_RETRIES     1
#define JOURNAL_MIN_MAX 65536 /* changes kept for deltas, at least */
/* A handover waits for the standby to hold the master's items: at most this long for one
 * that never asks (not an ibsmd: OpenSM keeps no copy) or that does not get in step. */
#define HANDOVER_WAIT_SILENT 3.0
#define HANDOVER_WAIT_MAX    15.0
/* The master's SA shows this ServiceRecord when it serves the sync. A standby asks for it
 * before it sends anything of the vendor class: an SM that is no ibsmd (OpenSM) does not
 * know the class, and OpenSM under libumad2sim.so crashes on a MAD of a class it did not
 * register. ServiceID: the OUI's range (IBA A3.2.3). */
#define SYNC_SERVICE_ID   ((uint64_t)MAD_SYNC_OUI << 32 | 0x5359u)
#define SYNC_SERVICE_NAME "ibsmd.sync"
#define PROBE_AGAIN       60.0 /* a master without the service is asked again this late */
/* An answer that does not settle whether the master serves the sync (BUSY: its first sweep
 * has not restored client state yet; no answer; NO_RECORDS once or twice) is asked again
 * after a wait that doubles from the poll interval up to this. */
#define PROBE_BACKOFF_MAX 4.0
/* NO_RECORDS this many times in a row, across the backoff, settles it: no sync there (an
 * ibsmd master answers BUSY, never NO_RECORDS, until its SA holds the service) */
#define PROBE_NO_SETTLES 3

/* A standby as the master sees it: whether it holds the master's current items yet. */
struct sync_peer {
	uint64_t guid;
	bool asked;         /* it has asked for the copy: an ibsmd that syncs */
	uint64_t in_step;   /* the generation it showed it holds in full (0: none yet) */
	uint64_t epoch;     /* ... of this master instance */
	double first_check; /* when a handover first waited for it */
	double seen;        /* when it last asked (0: never; a handover only waits for it) */
	uint16_t lid;       /* ... from this LID */
	uint8_t differs;    /* ... showing these digests unlike ours (bit i: digest_names[i]) */
};

struct sync {
	struct sm *sm;
	struct sa *sa;
	struct mad_dispatcher *d;
	const struct log *log;
	const struct ibsmd_config *cfg;
	struct ev_loop *loop;
	uint64_t digest[SYNC_NDIGESTS];
	struct sync_stats st;
	struct log_rl rl_refused, rl_config, rl_bad, rl_served, rl_auth;
	struct sync_auth auth;

	/* master */
	struct sync_journal j;
	VEC(struct sync_peer) peers; /* the standbys that asked, or that a handover waits for */
	struct u64map peer_by_guid;
	bool journal_on;
	uint64_t seen_lids, seen_sa, seen_mkeys, seen_hops; /* change counts in the journal */

	/* standby */
	struct sync_mirror m;
	bool have_copy;      /* the mirror holds a master's items (the SA's pending lines follow) */
	bool asking;         /* a request is out */
	bool sa_dirty;       /* the SA's copy of the mirror is behind */
	bool lids_dirty;     /* guid2lid changed: save it */
	bool mkeys_dirty;    /* the M_Keys in use changed: save them */
	bool pmembers_dirty; /* partition members added at run time changed: save them */
	uint64_t seen_pmembers;
	bool stopped;
	uint64_t digest_reported[SYNC_NDIGESTS];
	uint8_t master_differs; /* the master's digests unlike ours (bit i: digest_names[i]) */
	ev_timer poll, save;
	double asked_at;
	uint8_t nonce[MAD_SYNC_NONCE_BYTES]; /* of the request out: its answer's MAC covers it */
	/* does the master serve the sync? found in its SA, per master */
	uint64_t probed_guid; /* the master it is known for (0: none) */
	enum { PROBE_NONE, PROBE_OUT, PROBE_YES, PROBE_LATER, PROBE_NO } probe;
	double probe_again;   /* PROBE_LATER, PROBE_NO: when to ask again */
	double probe_wait;    /* PROBE_LATER: the wait after the next unsettled answer */
	unsigned probe_noes;  /* NO_RECORDS in a row from this master */
	unsigned probe_later; /* unsettled answers in a row from this master */
	uint64_t told_no;     /* the master GUID the "no sync" notice was given for */
	uint64_t told_later;  /* ... and the "asking again" notice */
};

static const char *const digest_names[SYNC_NDIGESTS] = {"partitions", "routing", "keys"};

static uint64_t new_epoch(void)
{
	uint64_t e = 0;
	if (getrandom(&e, sizeof(e), GRND_NONBLOCK) != sizeof(e))
		e = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)&e;
	return e ? e : 1;
}

/* ---- the items: the SM's lines (LIDs, M_Keys, hops), then the SA's state-file lines ---- */

/* The SM's items are written and parsed by sm/saved.c, as its state files are. */
static void put_lid(void *ctx, uint64_t guid, uint16_t lid)
{
	sm_saved_put_lid(ctx, guid, lid);
}

static void save_lids(struct sync *s, FILE *f)
{
	sm_guid2lid_each(s->sm, put_lid, f);
}

/* A standby's guid2lid follows the master's lines. */
static void apply_lid(struct sync *s, char op, const char *line)
{
	uint64_t guid;
	uint16_t lid;
	if (!sm_saved_parse_lid(line, &guid, &lid))
		return;
	sm_guid2lid_set(s->sm, guid, op == '+' ? lid : 0);
	s->lids_dirty = true;
}

/* The M_Keys ports carry: secrets, as the rest of this channel, that only SMs that hold the
 * sync key get. */
static void put_mkey(void *ctx, uint64_t guid, uint64_t key)
{
	sm_saved_put_mkey(ctx, guid, key);
}

static void save_mkeys(struct sync *s, FILE *f)
{
	sm_mkeys_each(s->sm, put_mkey, f);
}

/* A key the master no longer lists is forgotten only if it is still the one we hold: a
 * change comes as the old line out and the new one in, in either order. Keys the standby
 * learned itself stay (they are knowledge of the ports, not assignments). */
static void apply_mkey(struct sync *s, char op, const char *line)
{
	uint64_t guid, key, held;
	if (!sm_saved_parse_mkey(line, &guid, &key))
		return;
	if (op == '+')
		sm_mkeys_set(s->sm, guid, key);
	else if (sm_mkeys_get(s->sm, guid, &held) && held == key)
		sm_mkeys_set(s->sm, guid, 0);
	s->mkeys_dirty = true;
}

/* Where the master's ports lead, under M_Key protection level 2 (sm_hops_each). */
static void put_hop(void *ctx, uint64_t node_guid, uint8_t port, uint64_t far_guid)
{
	sm_saved_put_hop(ctx, node_guid, port, far_guid);
}

static void save_hops(struct sync *s, FILE *f)
{
	sm_hops_each(s->sm, put_hop, f);
}

static void apply_hop(struct sync *s, char op, const char *line)
{
	uint64_t guid, far;
	uint8_t port;
	if (!sm_saved_parse_hop(line, &guid, &port, &far))
		return;
	if (op == '+')
		sm_hops_set(s->sm, guid, port, far);
	else if (sm_hops_get(s->sm, guid, port) == far)
		sm_hops_set(s->sm, guid, port, 0); /* not a newer line's */
}

/* Partition members added at run time (sm/tenants.h): a standby's follow the master's at
 * once, into its running policy, and are saved with the rest (flush_copy). */
static void save_pmembers(struct sync *s, FILE *f)
{
	tenants_each(s->sm, f);
}

static void apply_pmember(struct sync *s, char op, const char *line)
{
	tenants_apply(s->sm, op, line);
	s->pmembers_dirty = true;
}

/* The API's partitions' lines are written with the members' (tenants_each, above), and
 * taken in by the same apply. */
static void save_nothing(struct sync *s, FILE *f)
{
	(void)s;
	(void)f;
}

/* The SA's lines (sa/state.c's kinds) go to its pending state whole (flush_copy). */
static void save_sa(struct sync *s, FILE *f)
{
	sa_state_write(s->sa, f);
}

static void apply_sa(struct sync *s, char op, const char *line)
{
	(void)op;
	(void)line;
	s->sa_dirty = true;
}

/* The kinds of item, in the order the master lists them; a line of no SM kind is the SA's.
 * A standby hands each changed line to its kind's apply, and after a full copy every line
 * (op '+'), so that an item is taken in by one piece of code whichever way it came. */
static const struct item_kind {
	enum sm_saved_kind kind;
	void (*save)(struct sync *s, FILE *f);
	void (*apply)(struct sync *s, char op, const char *line);
} kinds[] = {
    {SM_SAVED_LID, save_lids, apply_lid},
    {SM_SAVED_MKEY, save_mkeys, apply_mkey},
    {SM_SAVED_HOP, save_hops, apply_hop},
    {SM_SAVED_PMEMBER, save_pmembers, apply_pmember},
    {SM_SAVED_PARTITION, save_nothing, apply_pmember},
    {SM_SAVED_NONE, save_sa, apply_sa},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static const struct item_kind *kind_of(const char *line)
{
	enum sm_saved_kind k = sm_saved_kind(line);
	for (size_t i = 0; i < NKINDS; i++)
		if (kinds[i].kind == k)
			return &kinds[i];
	return &kinds[NKINDS - 1];
}

/* Bring the journal up to what the SM and the SA hold now, if either changed. */
static void refresh(struct sync *s)
{
	uint64_t lids = sm_guid2lid_changes(s->sm), sa = sa_state_changes(s->sa);
	uint64_t mkeys = sm_mkeys_changes(s->sm), hops = sm_hops_changes(s->sm);
	uint64_t pm = tenants_changes(s->sm);
	if (s->journal_on && lids == s->seen_lids && sa == s->seen_sa && mkeys == s->seen_mkeys &&
	    hops == s->seen_hops && pm == s->seen_pmembers)
		return;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		log_err(s->log, "sync", "out of memory: standbys are not updated");
		return;
	}
	for (size_t i = 0; i < NKINDS; i++)
		kinds[i].save(s, f);
	if (fclose(f) != 0) {
		free(text);
		log_err(s->log, "sync", "out of memory: standbys are not updated");
		return;
	}
	int n = sync_journal_update(&s->j, text, len);
	free(text);
	if (n < 0) {
		log_err(s->log, "sync", "out of memory: standbys will get full copies");
		return;
	}
	s->journal_on = true;
	s->seen_lids = lids;
	s->seen_mkeys = mkeys;
	s->seen_hops = hops;
	s->seen_pmembers = pm;
	s->seen_sa = sa;
	s->st.items = lineset_count(&s->j.cur);
	s->st.gen = s->j.gen;
	if (n)
		log_debug(s->log, "sync", "generation %" PRIu64 ": %d changes, %u items", s->j.gen,
		          n, s->st.items);
}

/* ---- the master's side ---- */

static struct sync_peer *peer_get(struct sync *s, uint64_t guid)
{
	uint32_t i = u64map_get(&s->peer_by_guid, guid);
	if (i != U64MAP_NONE)
		return &s->peers.v[i];
	struct sync_peer *p = vec_push(&s->peers);
	if (!p)
		return NULL;
	if (u64map_put(&s->peer_by_guid, guid, s->peers.n - 1) < 0) {
		s->peers.n--;
		return NULL;
	}
	*p = (struct sync_peer){.guid = guid};
	return p;
}

/* Hand the subnet over only to a standby that holds what this master holds (or that does not
 * sync at all, or after a while): otherwise the clients' state would go back in time. */
static bool handover_ready(void *ctx, uint64_t guid)
{
	struct sync *s = ctx;
	struct sync_peer *p = peer_get(s, guid);
	if (!p)
		return true;
	double now = ev_now(s->loop);
	if (!p->first_check)
		p->first_check = now;
	double waited = now - p->first_check;
	if (sa_state_ready(s->sa))
		refresh(s);
	if (p->asked && p->epoch == s->j.epoch && p->in_step == s->j.gen) {
		p->first_check = 0;
		return true;
	}
	if (!p->asked && waited >= HANDOVER_WAIT_SILENT) {
		log_notice(s->log, "sync",
		           "SM GUID " GUID_FMT " never asked for the standby copy (not an ibsmd?): "
		           "handing over without it",
		           guid);
		p->first_check = 0;
		return true;
	}
	if (waited >= HANDOVER_WAIT_MAX) {
		log_warn(s->log, "sync",
		         "SM GUID " GUID_FMT " is not in step with this master after %.0f s: "
		         "handing over anyway; clients' state may go back to its copy's",
		         guid, waited);
		p->first_check = 0;
		return true;
	}
	log_rl(s->log, &s->rl_served, LOGL_INFO, "sync",
	       "handover to SM GUID " GUID_FMT " waits until it holds this master's state", guid);
	return false;
}

/* `standby`, `nonce`: whom the answer is for and the nonce of its request, which the
 * answer's MAC covers */
static void respond(struct sync *s, const struct mad_addr *from, const struct mad_hdr *req,
                    uint16_t status, const struct mad_sync_resp *resp, const char *payload,
                    size_t len, uint64_t standby, const uint8_t *nonce)
{
	struct mad_hdr h = *req;
	h.method = MAD_METHOD_GET_RESP;
	h.status = status;
	uint8_t hdr[MAD_SIZE] = {0};
	mad_hdr_encode(&h, hdr, sizeof(hdr), NULL);
	mad_sync_set_oui(hdr);
	struct mad_addr to = *from;
	to.qkey = QP1_QKEY;
	if (status || !resp) {
		mad_dispatcher_respond(s->d, &to, hdr, MAD_SIZE);
		return;
	}
	size_t total = MAD_SYNC_RESP_SIZE + len;
	uint8_t *data = calloc(1, total);
	if (!data) {
		log_err(s->log, "sync", "out of memory answering LID %u", from->lid);
		return;
	}
	struct mad_sync_resp out = *resp;
	memcpy(out.digest, s->digest, sizeof(out.digest)); /* every answer says how we are set up */
	mad_sync_resp_encode(&out, data, MAD_SYNC_RESP_SIZE, NULL);
	if (len)
		memcpy(data + MAD_SYNC_RESP_SIZE, payload, len);
	sync_auth_sign_resp(&s->auth, standby, nonce, data, total);
	/* always by RMPP, even when one segment holds it: the standby expects one form */
	int r = mad_dispatcher_respond_rmpp(s->d, &to, hdr, MAD_SYNC_HDR_END, data, total);
	free(data);
	if (r < 0)
		log_rl(s->log, &s->rl_refused, LOGL_WARN, "sync",
		       "the copy for the standby at LID %u (%zu bytes) could not be sent: %s; it "
		       "asks again",
		       from->lid, total, strerror(-r));
}

/* Which of a peer's digests are unlike ours (bit i: digest_names[i]); logged when any is. */
static uint8_t check_digests(struct sync *s, const uint64_t *theirs, const char *who, uint64_t guid,
                             uint16_t lid)
{
	char parts[64];
	uint8_t mask = 0;
	for (unsigned i = 0; i < SYNC_NDIGESTS; i++)
		if (theirs[i] != s->digest[i])
			mask |= (uint8_t)(1u << i);
	if (!mask)
		return 0;
	log_rl(s->log, &s->rl_config, LOGL_WARN, "sync",
	       "%s SM GUID " GUID_FMT " (LID %u) is configured differently (%s): a takeover "
	       "would change the subnet; make the configurations agree",
	       who, guid, lid, sync_differs_text(mask, parts, sizeof(parts)));
	return mask;
}

const char *sync_differs_text(uint8_t mask, char *buf, size_t len)
{
	if (len)
		buf[0] = 0;
	for (unsigned i = 0; i < SYNC_NDIGESTS; i++)
		if (mask >> i & 1)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "",
			         digest_names[i]);
	return buf;
}

/* A standby asks every poll interval, its own: one silent for three of ours (and at least
 * 10 s, for a standby that polls more slowly) has stopped or gone. */
static bool peer_current(const struct sync *s, const struct sync_peer *p)
{
	double quiet = 3.0 * s->cfg->sm_poll_interval_ms / 1000.0 + 1.0;
	return p->seen > 0 && ev_now(s->loop) - p->seen <= (quiet > 10.0 ? quiet : 10.0);
}

unsigned sync_standbys(const struct sync *s, struct sync_standby *out, unsigned max)
{
	unsigned n = 0;
	if (sm_info(s->sm).state != SM_STATE_MASTER)
		return 0;
	for (size_t i = 0; i < s->peers.n; i++) {
		const struct sync_peer *p = &s->peers.v[i];
		if (!peer_current(s, p))
			continue;
		if (n < max)
			out[n] = (struct sync_standby){
			    .guid = p->guid, .lid = p->lid, .differs = p->differs};
		n++;
	}
	return n;
}

bool sync_config_differs(const struct sync *s)
{
	if (sm_info(s->sm).state != SM_STATE_MASTER)
		return s->master_differs != 0;
	for (size_t i = 0; i < s->peers.n; i++)
		if (peer_current(s, &s->peers.v[i]) && s->peers.v[i].differs)
			return true;
	return false;
}

static void on_request(struct mad_dispatcher *d, const struct mad_addr *from, const uint8_t *mad,
                       size_t len, void *ctx)
{
	(void)d;
	struct sync *s = ctx;
	struct mad_hdr h;
	struct mad_error err;
	if (mad_hdr_decode(mad, len, &h, &err) < 0 || len < MAD_SIZE) {
		log_rl(s->log, &s->rl_bad, LOGL_INFO, "sync", "dropped a sync MAD from LID %u: %s",
		       from->lid, len < MAD_SIZE ? "shorter than a MAD" : err.msg);
		return;
	}
	if (mad_is_response(h.method))
		return;
	if (mad_sync_get_oui(mad) != MAD_SYNC_OUI || h.class_version != MAD_SYNC_CLASS_VERSION) {
		log_rl(s->log, &s->rl_bad, LOGL_INFO, "sync",
		       "LID %u: class 0x%02x version %u OUI 0x%06x is not ibsmd's sync: answered "
		       "BAD_VERSION",
		       from->lid, h.mgmt_class, h.class_version, mad_sync_get_oui(mad));
		respond(s, from, &h, MAD_STATUS_BAD_VERSION, NULL, NULL, 0, 0, NULL);
		return;
	}
	if (h.method != MAD_METHOD_GET || h.attr_id != MAD_ATTR_SYNC_STATE) {
		log_rl(s->log, &s->rl_bad, LOGL_INFO, "sync",
		       "LID %u: method 0x%02x attribute 0x%04x: not one the sync knows", from->lid,
		       h.method, h.attr_id);
		respond(s, from, &h,
		        h.method != MAD_METHOD_GET ? MAD_STATUS_UNSUP_METHOD
		                                   : MAD_STATUS_UNSUP_METHOD_ATTR,
		        NULL, NULL, 0, 0, NULL);
		return;
	}
	struct mad_sync_req rq;
	mad_sync_req_decode(mad + MAD_SYNC_HDR_END, MAD_SYNC_DATA_SIZE, &rq, NULL);
	const uint8_t *data = mad + MAD_SYNC_HDR_END, *nonce = data + MAD_SYNC_REQ_NONCE_AT;
	uint64_t self = sm_info(s->sm).guid, guid = 0;
	if (!sync_auth_check_req(&s->auth, self, data)) {
		/* the items hold secrets (M_Keys, service keys): silence, as the SA gives a
		 * wrong key */
		s->st.refused++;
		s->st.unauthenticated++;
		log_rl(s->log, &s->rl_auth, LOGL_WARN, "sync",
		       "ALARM: LID %u (port GUID " GUID_FMT " by its word) asked for the standby "
		       "copy with a MAC that is not this subnet's: ignored. A standby of this "
		       "subnet needs the same m_key_secret (or, without one, the same sm_key)",
		       from->lid, rq.guid);
		return;
	}
	struct mad_sync_resp resp = {.kind = SYNC_NOT_READY};
	if (!sm_peer_at_lid(s->sm, from->lid, &guid) || guid != rq.guid) {
		/* not (yet) an SM this one polled and trusts, or not the port the request names:
		 * it asks again */
		s->st.refused++;
		log_rl(s->log, &s->rl_refused, LOGL_INFO, "sync",
		       "LID %u asked for the standby copy but is no SM this master knows (yet) "
		       "as port GUID " GUID_FMT ": answered not ready",
		       from->lid, rq.guid);
		respond(s, from, &h, 0, &resp, NULL, 0, rq.guid, nonce);
		return;
	}
	uint8_t differs = check_digests(s, rq.digest, "standby", guid, from->lid);
	struct sync_peer *peer = peer_get(s, guid);
	if (peer) {
		peer->seen = ev_now(s->loop);
		peer->lid = from->lid;
		peer->differs = differs;
	}
	if (sm_info(s->sm).state != SM_STATE_MASTER || !sa_state_ready(s->sa)) {
		respond(s, from, &h, 0, &resp, NULL, 0, guid, nonce);
		return;
	}
	refresh(s);
	char *payload = NULL;
	size_t plen = 0;
	if (sync_journal_answer(&s->j, &rq, &resp, &payload, &plen) < 0) {
		log_err(s->log, "sync", "out of memory answering the standby at LID %u", from->lid);
		return;
	}
	if (peer) {
		peer->asked = true;
		if (resp.kind == SYNC_CURRENT) {
			peer->in_step = resp.to_gen;
			peer->epoch = resp.epoch;
		}
	}
	if (resp.kind == SYNC_FULL) {
		s->st.served_full++;
		log_rl(s->log, &s->rl_served, LOGL_NOTICE, "sync",
		       "full copy to standby SM GUID " GUID_FMT " (LID %u): %u items, %zu bytes, "
		       "generation %" PRIu64,
		       guid, from->lid, resp.count, plen, resp.to_gen);
	} else if (resp.kind == SYNC_DELTA) {
		s->st.served_delta++;
	} else {
		s->st.served_current++;
	}
	respond(s, from, &h, 0, &resp, payload, plen, guid, nonce);
	free(payload);
}

/* ---- the standby's side ---- */

static void schedule_save(struct sync *s)
{
	if (!ev_is_active(&s->save)) {
		ev_timer_set(&s->save, SAVE_DELAY, 0.);
		ev_timer_start(s->loop, &s->save);
	}
}

/* The SA's pending lines and guid2lid file follow the mirror. */
static void flush_copy(struct sync *s)
{
	ev_timer_stop(s->loop, &s->save);
	if (s->sa_dirty && !sa_state_ready(s->sa)) {
		const char **lines = malloc(sizeof(*lines) * (s->m.set.lines.n + 1));
		if (!lines) {
			log_err(s->log, "sync", "out of memory: the SA's copy is not updated");
			return;
		}
		uint32_t n = 0;
		for (uint32_t i = 0; i < s->m.set.lines.n; i++)
			if (kind_of(s->m.set.lines.v[i])->kind == SM_SAVED_NONE)
				lines[n++] = s->m.set.lines.v[i];
		if (sa_state_replace(s->sa, lines, n) == 0)
			s->sa_dirty = false;
		free(lines);
	}
	if (s->lids_dirty) {
		sm_guid2lid_save(s->sm);
		s->lids_dirty = false;
	}
	if (s->mkeys_dirty) {
		sm_mkeys_save(s->sm);
		s->mkeys_dirty = false;
	}
	if (s->pmembers_dirty) {
		tenants_save(s->sm);
		s->pmembers_dirty = false;
	}
}

static void save_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	flush_copy(w->data);
}

static void on_line(void *ctx, char op, const char *line)
{
	struct sync *s = ctx;
	kind_of(line)->apply(s, op, line);
}

struct lid_check {
	struct sync *s;
	uint64_t *drop;
	uint32_t n, cap;
};

static void check_lid(void *ctx, uint64_t guid, uint16_t lid)
{
	struct lid_check *c = ctx;
	char line[64];
	int n = sm_saved_lid_line(line, sizeof(line), guid, lid);
	if (lineset_has(&c->s->m.set, line, (size_t)n))
		return;
	if (array_reserve(&c->drop, &c->cap, c->n + 1ull) == 0)
		c->drop[c->n++] = guid;
}

/* After a full copy: partition members the master's copy does not list go. */
static void drop_pmembers(struct sync *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	tenants_each(s->sm, f);
	if (fclose(f) != 0) {
		free(text);
		return;
	}
	for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (!lineset_has(&s->m.set, line, strlen(line)))
			tenants_apply(s->sm, '-', line);
	}
	free(text);
	s->pmembers_dirty = true;
}

/* After a full copy: the SM's guid2lid is exactly the master's, and every line is taken in
 * as a delta's would be. */
static void reconcile_lids(struct sync *s)
{
	struct lid_check c = {.s = s};
	sm_guid2lid_each(s->sm, check_lid, &c);
	for (uint32_t i = 0; i < c.n; i++)
		sm_guid2lid_set(s->sm, c.drop[i], 0);
	free(c.drop);
	drop_pmembers(s);
	for (uint32_t i = 0; i < s->m.set.lines.n; i++)
		on_line(s, '+', s->m.set.lines.v[i]);
	s->mkeys_dirty = true;
	s->lids_dirty = true;
	s->sa_dirty = true;
}

static void on_answer(struct mad_dispatcher *d, const struct mad_result *res, void *ctx)
{
	(void)d;
	struct sync *s = ctx;
	s->asking = false;
	if (res->error == -ECANCELED || s->stopped)
		return;
	if (sm_info(s->sm).state != SM_STATE_STANDBY)
		return; /* no longer a standby: the answer is of no use */
	if (res->error || res->status) {
		s->st.failed++;
		log_rl(s->log, &s->rl_bad, LOGL_INFO, "sync",
		       "the master did not answer the sync request (%s); asking again",
		       res->error ? strerror(-res->error) : mad_status_str(res->status));
		return;
	}
	struct mad_sync_resp r;
	struct mad_error err;
	if (res->len < MAD_SYNC_HDR_END + MAD_SYNC_RESP_SIZE ||
	    mad_sync_resp_decode(res->mad + MAD_SYNC_HDR_END, res->len - MAD_SYNC_HDR_END, &r,
	                         &err) < 0 ||
	    r.payload_len > res->len - MAD_SYNC_HDR_END - MAD_SYNC_RESP_SIZE) {
		s->st.malformed++;
		log_rl(s->log, &s->rl_bad, LOGL_WARN, "sync",
		       "the master's answer is malformed (%zu bytes, PayloadLength beyond them): "
		       "dropped",
		       res->len);
		return;
	}
	uint64_t master = 0;
	sm_master_lid(s->sm, &master);
	if (!sync_auth_check_resp(&s->auth, sm_info(s->sm).guid, s->nonce,
	                          res->mad + MAD_SYNC_HDR_END,
	                          MAD_SYNC_RESP_SIZE + r.payload_len)) {
		s->st.unauthenticated++;
		log_rl(s->log, &s->rl_auth, LOGL_WARN, "sync",
		       "ALARM: an answer to the sync request from LID %u does not carry this "
		       "subnet's MAC for it: dropped, nothing taken from it. A master of this "
		       "subnet needs the same m_key_secret (or, without one, the same sm_key)",
		       res->from.lid);
		return;
	}
	if (r.kind != SYNC_NOT_READY) {
		/* the master's configuration, reported once per difference */
		bool changed = false;
		for (unsigned i = 0; i < SYNC_NDIGESTS; i++)
			changed |= r.digest[i] != s->digest_reported[i];
		if (changed) {
			memcpy(s->digest_reported, r.digest, sizeof(r.digest));
			s->master_differs =
			    check_digests(s, r.digest, "master", master, res->from.lid);
		}
	}
	const char *payload = (const char *)res->mad + MAD_SYNC_HDR_END + MAD_SYNC_RESP_SIZE;
	/* a full copy is reconciled with the SM's LIDs whole (reconcile_lids), not line by line */
	enum sync_apply_result a = sync_mirror_apply(&s->m, &r, payload, r.payload_len,
	                                             r.kind == SYNC_FULL ? NULL : on_line, s);
	if (r.kind == SYNC_NOT_READY)
		return;
	if (a == SYNC_MALFORMED) {
		s->st.malformed++;
		s->st.in_step = false;
		log_rl(s->log, &s->rl_bad, LOGL_WARN, "sync",
		       "the master's answer (kind %u, generation %" PRIu64 "->%" PRIu64
		       ") does not fit this copy or is malformed: asking for a full copy",
		       r.kind, r.from_gen, r.to_gen);
		return;
	}
	if (a == SYNC_NOMEM) {
		s->st.failed++;
		log_err(s->log, "sync", "out of memory applying the master's copy: asking again");
		return;
	}
	if (r.kind == SYNC_FULL) {
		s->st.got_full++;
		s->have_copy = true;
		reconcile_lids(s);
	} else if (r.kind == SYNC_DELTA) {
		s->st.got_delta++;
		log_debug(s->log, "sync", "changes %" PRIu64 "->%" PRIu64 " applied: %u items",
		          r.from_gen, r.to_gen, r.count);
	} else {
		s->st.got_current++;
	}
	s->st.items = lineset_count(&s->m.set);
	s->st.gen = r.to_gen;
	if (a == SYNC_DIVERGED) {
		s->st.diverged++;
		s->st.in_step = false;
		log_rl(
		    s->log, &s->rl_bad, LOGL_WARN, "sync",
		    "this copy differs from the master's (%u items here, %u there): asking for a "
		    "full copy",
		    lineset_count(&s->m.set), r.count);
		return;
	}
	bool was = s->st.in_step;
	s->st.in_step = true;
	if (r.kind == SYNC_FULL || !was)
		log_notice(s->log, "sync",
		           "in step with master SM GUID " GUID_FMT " (LID %u): %s, %u items, "
		           "generation %" PRIu64 ", %u bytes in %.3f s",
		           master, res->from.lid, r.kind == SYNC_FULL ? "full copy" : "changes",
		           r.count, r.to_gen, r.payload_len, ev_time() - s->asked_at);
	if (s->sa_dirty || s->lids_dirty || s->pmembers_dirty)
		schedule_save(s);
}

static void ask(struct sync *s);

/* What the master's SA answered to the sync's ServiceRecord query, settled or not. BUSY (the
 * master's first sweep has not restored client state: every new master answers so right
 * after a failover), no answer, or a NO_RECORDS not yet repeated say nothing about whether
 * the master is an ibsmd: they are asked again with backoff, never taken as "no sync". */
static void on_probe(struct mad_dispatcher *d, const struct mad_result *res, void *ctx)
{
	(void)d;
	struct sync *s = ctx;
	if (res->error == -ECANCELED || s->stopped || s->probe != PROBE_OUT)
		return;
	struct mad_service_record r = {0};
	bool yes = !res->error && !res->status &&
	           res->len >= (size_t)MAD_SA_HDR_END + mad_service_record_layout.size &&
	           mad_service_record_decode(res->mad + MAD_SA_HDR_END, res->len - MAD_SA_HDR_END,
	                                     &r, NULL) == 0 &&
	           r.id == SYNC_SERVICE_ID && !strcmp(r.name, SYNC_SERVICE_NAME);
	double now = ev_now(s->loop);
	if (yes) {
		if (s->told_no == s->probed_guid || s->probe_later)
			log_notice(s->log, "sync",
			           "master SM GUID " GUID_FMT
			           " serves the sync now (after %u answers "
			           "that said to ask again): asking for its copy",
			           s->probed_guid, s->probe_later + s->probe_noes);
		s->probe = PROBE_YES;
		s->probe_noes = s->probe_later = 0;
		s->told_no = s->told_later = 0;
		ask(s);
		return;
	}
	const char *what = res->error ? strerror(-res->error) : mad_status_str(res->status);
	bool no = !res->error && res->status == MAD_STATUS_SA_NO_RECORDS;
	if (no && ++s->probe_noes >= PROBE_NO_SETTLES) {
		s->probe = PROBE_NO;
		s->probe_again = now + PROBE_AGAIN;
		if (s->told_no != s->probed_guid) {
			s->told_no = s->probed_guid;
			log_notice(
			    s->log, "sync",
			    "master SM GUID " GUID_FMT " shows no %s service in its SA (%s, %u "
			    "times): not an ibsmd, no standby copy; what clients registered with "
			    "it is lost when this SM takes over (asked again every %.0f s)",
			    s->probed_guid, SYNC_SERVICE_NAME, what, s->probe_noes, PROBE_AGAIN);
		}
		return;
	}
	if (!no)
		s->probe_noes = 0;
	s->probe_later++;
	s->probe = PROBE_LATER;
	s->probe_again = now + s->probe_wait;
	if (s->told_later != s->probed_guid) {
		s->told_later = s->probed_guid;
		log_notice(s->log, "sync",
		           "master SM GUID " GUID_FMT " answered the %s query with %s: not settled "
		           "(a new master's first sweep, a lost MAD): asking again in %.1f s, then "
		           "backing off up to every %.0f s",
		           s->probed_guid, SYNC_SERVICE_NAME, what, s->probe_wait,
		           PROBE_BACKOFF_MAX);
	} else {
		log_debug(s->log, "sync",
		          "master SM GUID " GUID_FMT ": the %s query answered %s again (%u in a "
		          "row): asking again in %.1f s",
		          s->probed_guid, SYNC_SERVICE_NAME, what, s->probe_later, s->probe_wait);
	}
	s->probe_wait =
	    s->probe_wait * 2 < PROBE_BACKOFF_MAX ? s->probe_wait * 2 : PROBE_BACKOFF_MAX;
}

/* Ask the master's SA for the sync's ServiceRecord (a standard query every SM answers). */
static void probe(struct sync *s, uint16_t lid, uint64_t guid)
{
	uint8_t mad[MAD_SIZE] = {0};
	struct mad_sa_hdr h;
	mad_sa_hdr_init(&h, MAD_METHOD_GET, MAD_ATTR_SERVICE_RECORD,
	                1ull << 0 | 1ull << 1); /* ServiceID, ServiceGID */
	h.attr_offset =
	    (uint16_t)(mad_service_record_layout.size / 8); /* the record's size in 8-byte words */
	mad_sa_hdr_encode(&h, mad, sizeof(mad), NULL);
	struct mad_service_record r = {.id = SYNC_SERVICE_ID};
	for (int i = 0; i < 8; i++) {
		r.gid[i] = (uint8_t)(s->cfg->subnet_prefix >> (56 - 8 * i));
		r.gid[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
	}
	mad_service_record_encode(&r, mad + MAD_SA_HDR_END, MAD_SA_DATA_SIZE, NULL);
	struct mad_request req = {.to = {.lid = lid, .qpn = 1, .qkey = QP1_QKEY},
	                          .mad = mad,
	                          .len = MAD_SIZE,
	                          .timeout_ms = REQ_TIMEOUT_MS,
	                          .retries = REQ_RETRIES,
	                          .cb = on_probe,
	                          .ctx = s};
	if (guid != s->probed_guid) { /* another master: nothing known of it yet */
		s->probed_guid = guid;
		s->probe_noes = s->probe_later = 0;
		s->probe_wait = s->cfg->sm_poll_interval_ms / 1000.0;
	}
	if (mad_dispatcher_send(s->d, &req) == 0)
		s->probe = PROBE_OUT;
}

static void ask(struct sync *s)
{
	uint64_t guid = 0;
	uint16_t lid = sm_master_lid(s->sm, &guid);
	if (!lid || s->asking || s->stopped || s->probe == PROBE_OUT)
		return;
	if (guid != s->probed_guid || s->probe == PROBE_NONE ||
	    ((s->probe == PROBE_NO || s->probe == PROBE_LATER) &&
	     ev_now(s->loop) >= s->probe_again)) {
		probe(s, lid, guid);
		return;
	}
	if (s->probe != PROBE_YES)
		return;
	uint8_t mad[MAD_SIZE] = {0};
	struct mad_hdr h = {.base_version = MAD_BASE_VERSION,
	                    .mgmt_class = MAD_CLASS_IBSMD_SYNC,
	                    .class_version = MAD_SYNC_CLASS_VERSION,
	                    .method = MAD_METHOD_GET,
	                    .attr_id = MAD_ATTR_SYNC_STATE};
	mad_hdr_encode(&h, mad, sizeof(mad), NULL);
	mad_sync_set_oui(mad);
	struct mad_sync_req rq = {.guid = sm_info(s->sm).guid,
	                          .epoch = s->m.epoch,
	                          .generation = s->m.gen,
	                          .checksum = s->m.set.sum,
	                          .count = lineset_count(&s->m.set)};
	memcpy(rq.digest, s->digest, sizeof(rq.digest));
	mad_sync_req_encode(&rq, mad + MAD_SYNC_HDR_END, MAD_SYNC_DATA_SIZE, NULL);
	randombytes_buf(s->nonce, sizeof(s->nonce));
	memcpy(mad + MAD_SYNC_HDR_END + MAD_SYNC_REQ_NONCE_AT, s->nonce, sizeof(s->nonce));
	sync_auth_sign_req(&s->auth, guid, mad + MAD_SYNC_HDR_END);
	struct mad_request req = {.to = {.lid = lid, .qpn = 1, .qkey = QP1_QKEY},
	                          .mad = mad,
	                          .len = MAD_SIZE,
	                          .timeout_ms = REQ_TIMEOUT_MS,
	                          .retries = REQ_RETRIES,
	                          .cb = on_answer,
	                          .ctx = s};
	s->asked_at = ev_time();
	if (mad_dispatcher_send(s->d, &req) == 0)
		s->asking = true;
}

static void poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	ask(w->data);
}

/* ---- SM state changes ---- */

static void on_state(void *ctx, uint8_t state)
{
	struct sync *s = ctx;
	if (s->stopped)
		return;
	if (state == SM_STATE_STANDBY) {
		/* whatever this SM held as master is the new master's to give now */
		sync_journal_free(&s->j);
		s->j.epoch = 0;
		s->journal_on = false;
		s->m.epoch = s->m.gen = 0;
		s->st.in_step = false;
		/* the master may be another one, or the same one restarted: asked afresh, its
		 * configuration judged again from its first answer */
		s->probe = PROBE_NONE;
		s->master_differs = 0;
		memset(s->digest_reported, 0, sizeof(s->digest_reported));
		s->probed_guid = 0;
		double iv = s->cfg->sm_poll_interval_ms / 1000.0;
		ev_timer_set(&s->poll, 0.05, iv);
		ev_timer_start(s->loop, &s->poll);
		return;
	}
	ev_timer_stop(s->loop, &s->poll);
	if (state == SM_STATE_DISCOVERING || state == SM_STATE_MASTER) {
		if (s->have_copy) {
			/* taking over: the SA starts from the master's copy, the LIDs are in */
			s->sa_dirty = true;
			flush_copy(s);
			log_notice(s->log, "sync",
			           "taking over with the last master's copy: %u items, generation "
			           "%" PRIu64 "%s",
			           lineset_count(&s->m.set), s->m.gen,
			           s->st.in_step ? "" : " (it may miss the master's last changes)");
			s->have_copy = false;
		}
		if (s->j.epoch == 0)
			sync_journal_init(&s->j, new_epoch(), JOURNAL_MIN_MAX);
	}
}

/* ---- life ---- */

struct sync *sync_new(struct sm *sm, struct sa *sa)
{
	struct sync *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->sm = sm;
	s->sa = sa;
	s->d = sm_dispatcher(sm);
	s->log = sm_log(sm);
	s->cfg = sm_config(sm);
	s->loop = sm_loop(sm);
	s->rl_refused = LOG_RL_DEFAULT;
	s->rl_config = LOG_RL_INIT(1, 60000);
	s->rl_bad = LOG_RL_DEFAULT;
	s->rl_served = LOG_RL_DEFAULT;
	s->rl_auth = LOG_RL_INIT(3, 10000);
	if (sync_auth_init(&s->auth, s->cfg) < 0) {
		log_err(s->log, "sync", "libsodium does not initialize: no standby sync");
		free(s);
		return NULL;
	}
	if (!s->auth.from_secret)
		/* the SM_Key goes to whoever shows this port's M_Key, or to anyone */
		log_msg(s->log,
		        s->cfg->show_sm_key || (s->cfg->m_key && s->cfg->m_key_protect)
		            ? LOGL_WARN
		            : LOGL_NOTICE,
		        "sync",
		        "the standby sync is authenticated by a key derived from the sm_key%s; set "
		        "m_key_secret (the same file on every SM) and it is derived from that "
		        "secret instead, which never crosses the wire",
		        s->cfg->show_sm_key ? ", which show_sm_key shows any host"
		        : s->cfg->m_key && s->cfg->m_key_protect
		            ? ", which SMInfo shows any host that holds the one m_key every port "
		              "carries"
		            : "");
	for (unsigned i = 0; i < SYNC_NDIGESTS; i++)
		s->digest[i] = config_digest(s->cfg, (enum config_digest_part)i);
	sync_journal_init(&s->j, new_epoch(), JOURNAL_MIN_MAX);
	ev_init(&s->poll, poll_cb);
	s->poll.data = s;
	ev_init(&s->save, save_cb);
	s->save.data = s;
	mad_dispatcher_set_handler(s->d, MAD_CLASS_IBSMD_SYNC, on_request, s);
	struct mad_service_record svc = {.id = SYNC_SERVICE_ID};
	snprintf(svc.name, sizeof(svc.name), "%s", SYNC_SERVICE_NAME);
	svc.data8[0] = MAD_SYNC_CLASS_VERSION;
	sa_service_builtin(sa, &svc);
	return s;
}

void sync_config_changed(struct sync *s)
{
	for (unsigned i = 0; i < SYNC_NDIGESTS; i++)
		s->digest[i] = config_digest(s->cfg, (enum config_digest_part)i);
	if (sync_auth_init(&s->auth, s->cfg) < 0)
		log_err(s->log, "sync", "libsodium does not initialize: the sync key is unchanged");
	/* a master and a standby that now differ (or agree again) say so at once */
	memset(s->digest_reported, 0, sizeof(s->digest_reported));
}

struct sm_listener sync_listener(struct sync *s)
{
	return (struct sm_listener){
	    .ctx = s, .state_changed = on_state, .handover_ready = handover_ready};
}

void sync_stop(struct sync *s)
{
	if (!s)
		return;
	s->stopped = true;
	ev_timer_stop(s->loop, &s->poll);
	if (ev_is_active(&s->save))
		flush_copy(s);
	ev_timer_stop(s->loop, &s->save);
}

void sync_free(struct sync *s)
{
	if (!s)
		return;
	sync_stop(s);
	sync_journal_free(&s->j);
	sync_mirror_free(&s->m);
	sync_auth_wipe(&s->auth);
	vec_free(&s->peers);
	u64map_free(&s->peer_by_guid);
	free(s);
}

const struct sync_stats *sync_stats(const struct sync *s)
{
	return &s->st;
}
