/* Event subscriptions (InformInfo) and the Reports they ask for.
 *
 * A port subscribes with SubnAdmSet(InformInfo) to a trap number (0xffff: all), optionally
 * narrowed to one GID or a LID range; the SA keeps the subscription, lists it as an
 * InformInfoRecord, and after each sweep compares the endpoints in service with those of the
 * sweep before: ports that came sends trap 64 (GID in service), ports that went trap 65, as
 * Reports to every subscriber that asked. A subscription ends by an unsubscribe, or when the
 * subscriber's port leaves the fabric. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "sa/sa_int.h"
#include "util/vec.h"

#define TRAP_GID_IN      64
#define TRAP_GID_OUT     65
#define ALL_16           0xffffu
#define QKEY_GSI         0x80010000u
#define NOTICE_TYPE_INFO 4
#define PRODUCER_SM      4 /* ProducerType: subnet management */

struct sa_sub {
	uint32_t port;               /* the subscriber's port: Reports go to its LID now */
	struct mad_inform_info info; /* what it asked for, the QPN inside */
	uint16_t enumr; /* SubscriberEnum: stable while it lasts, kept across restarts */
	bool trusted;   /* subscribed with the SM_Key: hears of every port and group, and gets
	                 * the security traps (kept in the state file and the standby's copy) */
};

/* Security traps (IBA 14.2.5.1: 256 Bad M_Key, 257 Bad P_Key, 258 Bad Q_Key, 259 P_Key
 * violation at a switch port) name the keys presented and tell an attacker which probes
 * were seen: only for subscribers that gave the SM_Key, both when they subscribe and when
 * a trap is delivered (a subscription to 0xffff names no trap at all). */
static bool trap_needs_trust(bool is_generic, uint16_t trap)
{
	return is_generic && trap >= 256 && trap <= 259;
}

/* sub_by_enum key: port and SubscriberEnum (never 0: ports count from 1 here) */
static uint64_t enum_key(uint32_t port, uint16_t e)
{
	return ((uint64_t)port + 1) << 16 | e;
}

static bool enum_taken(const struct sa *sa, uint32_t port, uint16_t e)
{
	return u64map_get(&sa->sub_by_enum, enum_key(port, e)) != U64MAP_NONE;
}

/* The smallest SubscriberEnum this port does not use: as many lookups as the port has
 * subscriptions, and at most SA_MAX_SUBSCRIPTIONS (65,536) exist, so one is always free. */
static int free_enum(const struct sa *sa, uint32_t port, uint16_t *out)
{
	for (uint32_t e = 0; e <= UINT16_MAX; e++) {
		if (!enum_taken(sa, port, (uint16_t)e)) {
			*out = (uint16_t)e;
			return 0;
		}
	}
	return -1;
}

static bool same_sub(const struct sa_sub *s, uint32_t port, const struct mad_inform_info *i)
{
	return s->port == port && s->info.trap_number == i->trap_number && s->info.qpn == i->qpn &&
	       s->info.type == i->type && s->info.is_generic == i->is_generic &&
	       !memcmp(s->info.gid, i->gid, 16) && s->info.lid_range_begin == i->lid_range_begin &&
	       s->info.lid_range_end == i->lid_range_end;
}

/* What same_sub compares, hashed (FNV-1a), never 0. A requester that finds two of its own
 * subscriptions with one hash only confuses its own: the port is part of the key, and a
 * hit is checked with same_sub. */
static uint64_t what_key(uint32_t port, const struct mad_inform_info *i)
{
	uint32_t v[] = {port,          i->trap_number,     i->qpn,          i->type,
	                i->is_generic, i->lid_range_begin, i->lid_range_end};
	uint64_t h = 14695981039346656037ull;
	for (size_t k = 0; k < 16; k++)
		h = (h ^ i->gid[k]) * 1099511628211ull;
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		for (unsigned sh = 0; sh < 32; sh += 8)
			h = (h ^ ((v[k] >> sh) & 0xff)) * 1099511628211ull;
	return h ? h : 1;
}

static uint32_t subs_of(const struct sa *sa, uint32_t port)
{
	return u64map_count(&sa->subs_of_port, (uint64_t)port + 1);
}

/* The index of the port's subscription to the same, or UINT32_MAX: one lookup. */
static uint32_t sub_find(const struct sa *sa, uint32_t port, const struct mad_inform_info *i)
{
	uint32_t at = u64map_get(&sa->sub_by_what, what_key(port, i));
	return at != U64MAP_NONE && same_sub(&sa->subs[at], port, i) ? at : UINT32_MAX;
}

static void sub_index(struct sa *sa, uint32_t i)
{
	const struct sa_sub *s = &sa->subs[i];
	u64map_put(&sa->sub_by_enum, enum_key(s->port, s->enumr), i);
	u64map_put(&sa->sub_by_what, what_key(s->port, &s->info), i);
}

/* Room was reserved by the caller. */
static int sub_add(struct sa *sa, const struct sa_sub *s)
{
	uint64_t what = what_key(s->port, &s->info);
	if (u64map_put(&sa->sub_by_enum, enum_key(s->port, s->enumr), sa->nsubs) < 0 ||
	    u64map_put(&sa->sub_by_what, what, sa->nsubs) < 0 ||
	    u64map_put(&sa->subs_of_port, (uint64_t)s->port + 1, subs_of(sa, s->port) + 1) < 0) {
		u64map_del(&sa->sub_by_enum, enum_key(s->port, s->enumr));
		if (u64map_get(&sa->sub_by_what, what) == sa->nsubs)
			u64map_del(&sa->sub_by_what, what);
		return -1;
	}
	sa->subs[sa->nsubs++] = *s;
	return 0;
}

static void sub_del(struct sa *sa, uint32_t i)
{
	const struct sa_sub *s = &sa->subs[i];
	u64map_del(&sa->sub_by_enum, enum_key(s->port, s->enumr));
	if (u64map_get(&sa->sub_by_what, what_key(s->port, &s->info)) == i)
		u64map_del(&sa->sub_by_what, what_key(s->port, &s->info));
	u64map_count_add(&sa->subs_of_port, (uint64_t)s->port + 1, -1);
	sa->subs[i] = sa->subs[--sa->nsubs];
	if (i < sa->nsubs)
		sub_index(sa, i);
}

void sa_inform_forget(struct sa *sa)
{
	sa->nsubs = 0;
	u64map_clear(&sa->sub_by_enum);
	u64map_clear(&sa->sub_by_what);
	u64map_clear(&sa->subs_of_port);
	sa->served_once = false; /* as master again, the first sweep is a baseline again */
}

uint16_t sa_inform_set(struct sa_req *rq, const uint8_t *req, uint8_t *answer)
{
	struct sa *sa = rq->sa;
	struct mad_inform_info in;
	if (mad_inform_info_decode(req, MAD_SA_DATA_SIZE, &in, NULL) < 0 || in.subscribe > 1)
		return MAD_STATUS_SA_REQ_INVALID;
	if (rq->requester == TOPO_NONE)
		return MAD_STATUS_SA_REQ_DENIED; /* Reports need a port to go to */
	if (in.subscribe && trap_needs_trust(in.is_generic, in.trap_number) && !rq->trusted)
		return MAD_STATUS_SA_REQ_INVALID;
	/* Reports go to the QP the subscription came from (as OpenSM keeps it); an
	 * unsubscription names that QP in the record */
	if (in.subscribe)
		in.qpn = rq->from.qpn;
	if (in.lid_range_begin != ALL_16 && in.lid_range_end != 0 &&
	    in.lid_range_end < in.lid_range_begin)
		return MAD_STATUS_SA_REQ_INVALID;
	uint32_t at = sub_find(sa, rq->requester, &in);
	if (in.subscribe) {
		if (at == UINT32_MAX) {
			struct sa_sub ns = {
			    .port = rq->requester, .info = in, .trusted = rq->trusted};
			if (subs_of(sa, rq->requester) >= sa->cfg->sa_subscriptions_per_port) {
				/* one port cannot take the room (and the Reports) of all */
				log_rl(sa->log, &sa->rl_client, LOGL_WARN, "sa",
				       "LID %u (port GUID " GUID_FMT ") holds %u subscriptions, "
				       "the most sa_subscriptions_per_port allows: refused",
				       rq->from.lid, topo_port_guid(sa->t, rq->requester),
				       subs_of(sa, rq->requester));
				return MAD_STATUS_SA_NO_RESOURCES;
			}
			if (sa->nsubs >= SA_MAX_SUBSCRIPTIONS ||
			    array_reserve(&sa->subs, &sa->subs_cap, sa->nsubs + 1ull) < 0 ||
			    free_enum(sa, rq->requester, &ns.enumr) < 0 || sub_add(sa, &ns) < 0)
				return MAD_STATUS_SA_NO_RESOURCES;
		} else {
			sa->subs[at].info = in; /* the same subscription again: its enum stays */
			sa->subs[at].trusted = rq->trusted;
		}
		log_rl(sa->log, &sa->rl_client, LOGL_INFO, "sa",
		       "LID %u QPN %u subscribed to trap %u", rq->from.lid, in.qpn, in.trap_number);
	} else {
		if (at == UINT32_MAX)
			return MAD_STATUS_SA_REQ_INVALID; /* no such subscription */
		sub_del(sa, at);
		log_rl(sa->log, &sa->rl_client, LOGL_INFO, "sa",
		       "LID %u QPN %u unsubscribed from trap %u", rq->from.lid, in.qpn,
		       in.trap_number);
	}
	mad_inform_info_encode(&in, answer, MAD_SA_DATA_SIZE, NULL);
	sa_state_changed(sa);
	return 0;
}

void sa_build_inform_records(const struct sa_req *rq, struct sa_records *out)
{
	const struct sa *sa = rq->sa;
	for (uint32_t i = 0; i < sa->nsubs; i++) {
		/* another tenant's subscriptions name its ports: not shown */
		if (!sa_visible(rq, sa->subs[i].port))
			continue;
		struct mad_inform_info_record r = {.subscriber_enum = sa->subs[i].enumr,
		                                   .info = sa->subs[i].info};
		sa_port_gid(sa, sa->subs[i].port, r.subscriber_gid);
		uint8_t *rec = sa_records_add(out);
		if (rec)
			mad_inform_info_record_encode(&r, rec, out->size, NULL);
	}
}

static void on_report_answered(struct mad_dispatcher *d, const struct mad_result *r, void *ctx)
{
	(void)d;
	struct sa *sa = ctx;
	if (r->error == -ENOBUFS) {
		sa->st.reports_lost++;
		log_rl(sa->log, &sa->rl_refused, LOGL_WARN, "sa",
		       "Report to LID %u QPN %u dropped unsent: the subscriber leaves too many "
		       "unacknowledged",
		       r->from.lid, r->from.qpn);
	} else if (r->error) {
		sa->st.reports_lost++;
		log_rl(sa->log, &sa->rl_client, LOGL_INFO, "sa",
		       "Report to LID %u QPN %u not acknowledged: the subscriber may be gone",
		       r->from.lid, r->from.qpn);
	}
}

/* Does the subscription ask for this notice? gid: the GID it is about (for 64-67 the port or
 * group; for a forwarded trap its issuer); port: whose LID a LID range is checked against. */
static bool wants(const struct sa *sa, const struct sa_sub *s, const struct mad_notice *n,
                  uint32_t port, const uint8_t *gid)
{
	const struct mad_inform_info *i = &s->info;
	if (i->is_generic != n->is_generic)
		return false;
	if (i->trap_number != ALL_16 && i->trap_number != n->trap_number)
		return false;
	if (i->type != ALL_16 && i->type != n->type)
		return false;
	if (n->is_generic && i->producer_type != 0xffffff && i->producer_type != n->producer_type)
		return false;
	static const uint8_t zero[16];
	if (memcmp(i->gid, zero, 16))
		return !memcmp(i->gid, gid, 16);
	if (i->lid_range_begin != ALL_16) {
		if (port == TOPO_NONE)
			return false; /* a group's trap has no LID to range over */
		uint16_t lid = sa->t->ports[port].lid;
		uint16_t end = i->lid_range_end ? i->lid_range_end : i->lid_range_begin;
		return lid >= i->lid_range_begin && lid <= end;
	}
	return true;
}

/* May the subscriber hear of this port (TOPO_NONE: of no port) and this partition (0:
 * none)? As a requester sees records: a port shown only to ports that share a partition
 * with it, a group only to ports of its partition; a trusted subscription hears of all.
 * Before, another tenant's ports coming and going reached every subscriber. */
static bool hears_of(const struct sa *sa, const struct sa_sub *s, uint32_t port, uint16_t pkey)
{
	if (s->trusted)
		return true;
	if (port != TOPO_NONE) {
		uint32_t lp = topo_lid_port(sa->t, port);
		if (lp != s->port && !sa_ports_share(sa, s->port, lp))
			return false;
	}
	bool full;
	return !pkey || sa_port_has_pkey(sa, s->port, pkey, &full);
}

/* A notice as a Report to every subscriber that asked for it and may hear of it. */
static void deliver(struct sa *sa, const struct mad_notice *n, uint32_t port, const uint8_t *gid,
                    uint16_t pkey)
{
	const struct topo *t = sa->t;
	for (uint32_t i = 0; i < sa->nsubs; i++) {
		const struct sa_sub *s = &sa->subs[i];
		if (!wants(sa, s, n, port, gid) || !hears_of(sa, s, port, pkey))
			continue;
		/* e.g. a subscription to every trap (0xffff) without the SM_Key */
		if (trap_needs_trust(n->is_generic, n->trap_number) && !s->trusted)
			continue;
		struct mad_sa_hdr h;
		mad_sa_hdr_init(&h, MAD_METHOD_REPORT, MAD_ATTR_NOTICE, 0);
		uint8_t mad[MAD_SIZE] = {0};
		mad_sa_hdr_encode(&h, mad, sizeof(mad), NULL);
		mad_notice_encode(n, mad + MAD_SA_HDR_END, MAD_SIZE - MAD_SA_HDR_END, NULL);
		struct mad_request rq = {
		    .to = {.lid = t->ports[s->port].lid, .qpn = s->info.qpn, .qkey = QKEY_GSI},
		    .mad = mad,
		    .len = sizeof(mad),
		    .retries = -1,
		    /* apart from the SM's SMPs: a subscriber that never acknowledges costs only
		     * its own Reports (see the lanes in mad/dispatcher.c) */
		    .lane = MAD_LANE_REPORT,
		    .cb = on_report_answered,
		    .ctx = sa,
		};
		int rc = mad_dispatcher_send(sa->d, &rq);
		if (rc == 0) {
			sa->st.reports_sent++;
		} else {
			sa->st.reports_lost++;
			log_rl(sa->log, &sa->rl_refused, LOGL_WARN, "sa",
			       "Report to LID %u not sent: %s", rq.to.lid,
			       rc == -ENOBUFS ? "too many Reports wait for their subscribers"
			                      : strerror(-rc));
		}
	}
}

/* Reports of a trap about a GID (a port's for 64/65, a group's MGID for 66/67; port is
 * TOPO_NONE for those) to every subscriber that asked. */
static void send_reports(struct sa *sa, uint16_t trap, const uint8_t *gid, uint32_t port,
                         uint16_t pkey)
{
	const struct topo *t = sa->t;
	struct mad_notice n = {
	    .is_generic = 1,
	    .type = NOTICE_TYPE_INFO,
	    .producer_type = PRODUCER_SM,
	    .trap_number = trap,
	    .issuer_lid = t->sm_port != TOPO_NONE ? t->ports[t->sm_port].lid : 0,
	};
	memcpy(n.data_details + 6, gid, 16); /* traps 64-67: 6 reserved bytes, then the GID */
	if (t->sm_port != TOPO_NONE)
		sa_port_gid(sa, t->sm_port, n.issuer_gid);
	deliver(sa, &n, port, gid, pkey);
}

void sa_forward_trap(struct sa *sa, const struct mad_notice *trap)
{
	struct mad_notice n = *trap;
	const struct topo *t = sa->t;
	uint32_t p = n.issuer_lid < TOPO_LID_COUNT ? t->lid_port[n.issuer_lid] : TOPO_NONE;
	if (p != TOPO_NONE)
		sa_port_gid(sa, p,
		            n.issuer_gid); /* a trap SMP has no room for it: the SA fills it */
	deliver(sa, &n, p, n.issuer_gid, 0);
}

static void report(struct sa *sa, uint16_t trap, uint32_t port)
{
	uint8_t gid[16];
	sa_port_gid(sa, port, gid);
	send_reports(sa, trap, gid, port, 0);
}

void sa_report_mgid(struct sa *sa, uint16_t trap, const uint8_t *mgid, uint16_t pkey)
{
	send_reports(sa, trap, mgid, TOPO_NONE, pkey);
}

/* After a sweep: subscriptions of ports that left end, and ports that came into or went out
 * of service are reported (traps 64, 65). */
void sa_inform_sweep_done(struct sa *sa)
{
	const struct topo *t = sa->t;
	if (t->nports > sa->served_cap) {
		bool *nb = realloc(sa->served, t->nports);
		if (!nb)
			return;
		memset(nb + sa->served_cap, 0, t->nports - sa->served_cap);
		sa->served = nb;
		sa->served_cap = t->nports;
	}
	/* subscribers whose port left take their subscriptions with them */
	for (uint32_t i = 0; i < sa->nsubs;) {
		if (!topo_port_in_service(t, sa->subs[i].port)) {
			sub_del(sa, i);
			sa_state_changed(sa);
		} else {
			i++;
		}
	}
	bool baseline = !sa->served_once; /* the first sweep finds everything: no news */
	for (uint32_t p = 0; p < t->nports; p++) {
		bool now = topo_port_in_service(t, p);
		if (now != sa->served[p] && !baseline)
			report(sa, now ? TRAP_GID_IN : TRAP_GID_OUT, p);
		sa->served[p] = now;
	}
	sa->served_once = true;
}

void sa_inform_save(struct sa *sa, FILE *f)
{
	const struct topo *t = sa->t;
	for (uint32_t i = 0; i < sa->nsubs; i++) {
		uint8_t w[MAD_SA_DATA_SIZE] = {0};
		mad_inform_info_encode(&sa->subs[i].info, w, sizeof(w), NULL);
		fprintf(f, "sub 0x%016llx ",
		        (unsigned long long)topo_port_guid(t, sa->subs[i].port));
		sa_hex_put(f, w, mad_inform_info_layout.size);
		fprintf(f, " %u%s\n", sa->subs[i].enumr, sa->subs[i].trusted ? " trusted" : "");
	}
}

bool sa_inform_restore(struct sa *sa, const char *line)
{
	unsigned long long guid;
	char hex[2 * MAD_SA_DATA_SIZE + 2];
	uint8_t w[MAD_SA_DATA_SIZE] = {0};
	struct mad_inform_info in;
	unsigned e = UINT32_MAX; /* files from before SubscriberEnum was kept have none */
	if (sscanf(line, "%llx %401s %u", &guid, hex, &e) < 2 ||
	    !sa_hex_get(hex, w, mad_inform_info_layout.size) ||
	    mad_inform_info_decode(w, sizeof(w), &in, NULL) < 0)
		return false;
	uint32_t p = sa_guid_port(sa, guid);
	if (p == TOPO_NONE || !topo_port_in_service(sa->t, p) ||
	    sa->nsubs >= SA_MAX_SUBSCRIPTIONS ||
	    subs_of(sa, p) >= sa->cfg->sa_subscriptions_per_port ||
	    sub_find(sa, p, &in) != UINT32_MAX)
		return false;
	if (array_reserve(&sa->subs, &sa->subs_cap, sa->nsubs + 1ull) < 0)
		return false;
	struct sa_sub ns = {.port = p, .info = in, .trusted = strstr(line, " trusted") != NULL};
	if (e <= UINT16_MAX && !enum_taken(sa, p, (uint16_t)e))
		ns.enumr = (uint16_t)e;
	else if (free_enum(sa, p, &ns.enumr) < 0)
		return false;
	return sub_add(sa, &ns) == 0;
}
