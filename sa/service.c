/* ServiceRecords: services that clients register (Set), find (Get, GetTable) and remove
 * (Delete), each for a lease. A service is known by ServiceID, ServiceGID and ServiceP_Key;
 * it is seen only by requesters that share its partition, and it goes when its lease runs out
 * or its port leaves the fabric (checked whenever services are looked at, which is when
 * anyone could notice). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "sa/sa_int.h"
#include "util/vec.h"

#define SR_SIZE           176
#define SR_COMP_ID        (1ull << 0)
#define SR_COMP_GID       (1ull << 1)
#define SR_COMP_PKEY      (1ull << 2)
#define SR_COMP_LEASE     (1ull << 4)
#define SR_COMP_KEY       (1ull << 5)
#define SR_LEASE_INFINITE 0xffffffffu

struct sa_service {
	uint8_t rec[SR_SIZE]; /* as registered, on the wire */
	double expires;       /* ev_now time; 0 never */
	uint64_t by; /* the GUID of the port that registered it (0: a trusted requester the SA
	              * could not place): it counts against that port's sa_services_per_port */
};

static uint32_t svcs_of(const struct sa *sa, uint64_t by)
{
	return by ? u64map_count(&sa->svcs_of_port, by) : 0;
}

/* A service gone: room for one more of its registrant's. */
static void uncount(struct sa *sa, const struct sa_service *s)
{
	if (s->by)
		u64map_count_add(&sa->svcs_of_port, s->by, -1);
}

/* Count a new service against its registrant; false when out of memory. */
static bool count(struct sa *sa, uint64_t by)
{
	if (!by)
		return true;
	uint32_t was = svcs_of(sa, by);
	return u64map_count_add(&sa->svcs_of_port, by, 1) == was + 1;
}

/* IBA 15.2.5.14: each ServiceData element is a component of its own, which a layout cannot
 * say (it describes the arrays whole). */
void sa_service_components(struct sa_components *c)
{
	static const struct sa_component head[] = {
	    {0, 64, false},   {64, 128, false},  {192, 16, false},  {208, 16, false},
	    {224, 32, false}, {256, 128, false}, {384, 512, false},
	};
	c->n = 0;
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		c->c[c->n++] = head[i];
	for (unsigned i = 0; i < 16; i++)
		c->c[c->n++] = (struct sa_component){(uint16_t)(896 + 8 * i), 8, false};
	for (unsigned i = 0; i < 8; i++)
		c->c[c->n++] = (struct sa_component){(uint16_t)(1024 + 16 * i), 16, false};
	for (unsigned i = 0; i < 4; i++)
		c->c[c->n++] = (struct sa_component){(uint16_t)(1152 + 32 * i), 32, false};
	for (unsigned i = 0; i < 2; i++)
		c->c[c->n++] = (struct sa_component){(uint16_t)(1280 + 64 * i), 64, false};
}

static uint16_t rec_pkey(const uint8_t *rec)
{
	return (uint16_t)(rec[24] << 8 | rec[25]);
}

/* Does the requester share the partition? Requesters the SA cannot place see nothing. */
static bool requester_in(const struct sa_req *rq, uint16_t pkey)
{
	const struct sa *sa = rq->sa;
	if (rq->trusted)
		return true;
	if (rq->requester == TOPO_NONE)
		return false;
	if ((pkey & 0x7fff) == 0x7fff || pkey == 0)
		return true; /* the default partition, or none named */
	bool full;
	return sa_port_has_pkey(sa, rq->requester, pkey, &full);
}

/* May the requester see a registered service? It must share the service's partition with
 * the port that registered it (a limited member meets only full members there); with no
 * partition named (P_Key 0) or the default one, it must share one with that port at all.
 * Before, the default and none were shown to anyone. */
static bool requester_sees(const struct sa_req *rq, const uint8_t *rec)
{
	const struct sa *sa = rq->sa;
	if (rq->trusted)
		return true;
	if (rq->requester == TOPO_NONE)
		return false;
	uint32_t owner = sa_guid_port(sa, mad_bits_get(rec + 8, 64, 64));
	if (owner == TOPO_NONE)
		return false;
	uint16_t pkey = rec_pkey(rec);
	if ((pkey & 0x7fff) == 0x7fff || pkey == 0)
		return sa_visible(rq, owner);
	bool rfull, ofull;
	return sa_port_has_pkey(sa, rq->requester, pkey, &rfull) &&
	       sa_port_has_pkey(sa, owner, pkey, &ofull) &&
	       (rfull || ofull || owner == rq->requester);
}

static void expire(struct sa *sa)
{
	double now = ev_now(sa->loop);
	uint32_t keep = 0;
	for (uint32_t i = 0; i < sa->nsvcs; i++) {
		struct sa_service *s = &sa->svcs[i];
		if (s->expires && s->expires <= now) {
			log_rl(sa->log, &sa->rl_client, LOGL_INFO, "sa",
			       "service 0x%016llx of GID port 0x%016llx: lease ended",
			       (unsigned long long)mad_bits_get(s->rec, 0, 64),
			       (unsigned long long)mad_bits_get(s->rec, 128, 64));
			uncount(sa, s);
			continue;
		}
		if (sa_guid_port(sa, mad_bits_get(s->rec + 8, 64, 64)) == TOPO_NONE) {
			log_rl(sa->log, &sa->rl_client, LOGL_INFO, "sa",
			       "service 0x%016llx of GID port 0x%016llx: port left the fabric",
			       (unsigned long long)mad_bits_get(s->rec, 0, 64),
			       (unsigned long long)mad_bits_get(s->rec, 128, 64));
			uncount(sa, s);
			continue;
		}
		sa->svcs[keep++] = *s;
	}
	if (keep != sa->nsvcs)
		sa_state_changed(sa);
	sa->nsvcs = keep;
}

/* The record as a requester sees it: the lease is what is left of it, and the ServiceKey
 * (the owner's secret) reads as zeros. IBA (and OpenSM) would show it to a trusted requester;
 * nobody needs it back, so nobody gets it. */
#define SR_KEY 32 /* byte offset of ServiceKey */
static void present(const struct sa *sa, const struct sa_service *s, uint8_t *out)
{
	memcpy(out, s->rec, SR_SIZE);
	memset(out + SR_KEY, 0, 16);
	if (s->expires) {
		double left = s->expires - ev_now(sa->loop);
		uint32_t secs = left <= 0 ? 0 : (uint32_t)(left + 0.999);
		mad_bits_set(out, 224, 32, secs);
	}
}

/* The same 16 bytes, in a time that does not tell how many matched. */
static bool key_equal(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;
	for (size_t i = 0; i < 16; i++)
		d |= (uint8_t)(a[i] ^ b[i]);
	return d == 0;
}

/* Is the requester the port the service belongs to (its ServiceGID's)? */
static bool requester_owns(const struct sa_req *rq, const uint8_t *rec)
{
	return rq->requester != TOPO_NONE &&
	       sa_guid_port(rq->sa, mad_bits_get(rec + 8, 64, 64)) == rq->requester;
}

/* May the requester replace or delete a registered service? IBA ties a service to its
 * ServiceKey (15.2.5.14): the request must carry the record's key, or come from the
 * service's own port, or be trusted (the SM_Key). Before, any member of the partition could
 * take over or remove another host's service. A record registered without a key (zeros,
 * what every client sends when it has none) is its port's alone: zeros prove nothing. */
static bool may_change(const struct sa_req *rq, const uint8_t *stored, const uint8_t *req)
{
	static const uint8_t none[16];
	if (rq->trusted || requester_owns(rq, stored))
		return true;
	return !key_equal(stored + SR_KEY, none) && key_equal(stored + SR_KEY, req + SR_KEY);
}

/* Logged by sa_request_finish, rate limited. */
static uint16_t refuse_change(struct sa_req *rq)
{
	rq->why = "the service is another port's: the request has neither its ServiceKey nor "
	          "the SM_Key";
	return MAD_STATUS_SA_REQ_DENIED;
}

void sa_service_builtin(struct sa *sa, const struct mad_service_record *r)
{
	sa->builtin_svc = *r;
}

void sa_build_service_records(const struct sa_req *rq, struct sa_records *out)
{
	struct sa *sa = rq->sa;
	expire(sa);
	for (uint32_t i = 0; i < sa->nsvcs; i++) {
		if (!requester_sees(rq, sa->svcs[i].rec))
			continue;
		/* a query may select by the key (sa_service_hide_keys blanks it after), but only
		 * one that may know it: else the answers would tell a guess right from wrong */
		bool knows = rq->trusted || requester_owns(rq, sa->svcs[i].rec);
		if ((rq->h.comp_mask & SR_COMP_KEY) && !knows)
			continue;
		uint8_t *rec = sa_records_add(out);
		if (rec) {
			present(sa, &sa->svcs[i], rec);
			memcpy(rec + SR_KEY, sa->svcs[i].rec + SR_KEY, 16);
		}
	}
	/* the SM's own record only to a query that names its ServiceID: a listing of the
	 * services shows what clients registered, as OpenSM's does */
	if (sa->builtin_svc.id && sa->t->sm_port != TOPO_NONE && (rq->h.comp_mask & SR_COMP_ID) &&
	    rq->data && rq->len >= 8 && mad_bits_get(rq->data, 0, 64) == sa->builtin_svc.id) {
		struct mad_service_record b = sa->builtin_svc;
		sa_port_gid(sa, sa->t->sm_port, b.gid);
		b.pkey = 0xffff;
		b.lease = SR_LEASE_INFINITE;
		memset(b.key, 0, sizeof(b.key));
		uint8_t *rec = sa_records_add(out);
		if (rec)
			mad_service_record_encode(&b, rec, SR_SIZE, NULL);
	}
}

uint16_t sa_service_set(struct sa_req *rq, const uint8_t *req, uint64_t mask, uint8_t *answer)
{
	struct sa *sa = rq->sa;
	/* ServiceID and ServiceGID name the service; IBA leaves the rest to defaults */
	if ((mask & (SR_COMP_ID | SR_COMP_GID)) != (SR_COMP_ID | SR_COMP_GID))
		return MAD_STATUS_SA_INSUF_COMPONENTS;
	expire(sa);
	struct sa_service n = {0};
	memcpy(n.rec, req, SR_SIZE);
	if (!(mask & SR_COMP_PKEY))
		mad_bits_set(n.rec, 192, 16,
		             0); /* no partition named: none, as OpenSM records it */
	if (!(mask & SR_COMP_LEASE))
		mad_bits_set(n.rec, 224, 32, SR_LEASE_INFINITE);
	mad_bits_set(n.rec, 208, 16, 0);
	if (sa_guid_port(sa, mad_bits_get(n.rec + 8, 64, 64)) == TOPO_NONE) {
		log_rl(sa->log, &sa->rl_client, LOGL_INFO, "sa",
		       "ServiceRecord 0x%016llx refused: ServiceGID %016llx:%016llx names no port "
		       "of the subnet",
		       (unsigned long long)mad_bits_get(n.rec, 0, 64),
		       (unsigned long long)mad_bits_get(n.rec + 8, 0, 64),
		       (unsigned long long)mad_bits_get(n.rec + 8, 64, 64));
		return MAD_STATUS_SA_INVALID_GID;
	}
	uint16_t pkey = rec_pkey(n.rec);
	bool full;
	uint32_t owner = sa_guid_port(sa, mad_bits_get(n.rec + 8, 64, 64));
	if (!requester_in(rq, pkey) || (pkey && !sa_port_has_pkey(sa, owner, pkey, &full)))
		return MAD_STATUS_SA_REQ_DENIED; /* a service in a partition its port is not in */
	uint32_t lease = (uint32_t)mad_bits_get(n.rec, 224, 32);
	n.expires = lease == SR_LEASE_INFINITE ? 0 : ev_now(sa->loop) + lease;
	if (lease == 0)
		n.expires = ev_now(sa->loop); /* registered and at once gone, as asked */
	struct sa_service *slot = NULL;
	for (uint32_t i = 0; i < sa->nsvcs && !slot; i++) {
		const uint8_t *r = sa->svcs[i].rec;
		if (!memcmp(r, n.rec, 24) && (rec_pkey(r) & 0x7fff) == (pkey & 0x7fff))
			slot = &sa->svcs[i]; /* the same service registered again: renewed */
	}
	if (slot && !may_change(rq, slot->rec, n.rec))
		return refuse_change(rq);
	if (slot) {
		n.by = slot->by; /* a renewal takes no new room: it stays its registrant's */
	} else {
		/* counted against the port that asks, not the ServiceGID's: a host may register
		 * for another port, and must not fill that port's room (nor all of the SA's) */
		n.by = rq->requester == TOPO_NONE ? 0 : topo_port_guid(sa->t, rq->requester);
		if (n.by && svcs_of(sa, n.by) >= sa->cfg->sa_services_per_port) {
			log_rl(sa->log, &sa->rl_client, LOGL_WARN, "sa",
			       "LID %u (port GUID " GUID_FMT
			       ") has registered %u services, the most "
			       "sa_services_per_port allows: ServiceRecord 0x%016llx refused",
			       rq->from.lid, n.by, svcs_of(sa, n.by),
			       (unsigned long long)mad_bits_get(n.rec, 0, 64));
			return MAD_STATUS_SA_NO_RESOURCES;
		}
		if (sa->nsvcs >= SA_MAX_SERVICES ||
		    array_reserve(&sa->svcs, &sa->svcs_cap, sa->nsvcs + 1ull) < 0 ||
		    !count(sa, n.by))
			return MAD_STATUS_SA_NO_RESOURCES;
		slot = &sa->svcs[sa->nsvcs++];
	}
	*slot = n;
	present(sa, slot, answer);
	sa_state_changed(sa);
	/* with "lease ended" below, the two ends of a lease in the log */
	if (lease != SR_LEASE_INFINITE)
		log_rl(sa->log, &sa->rl_client, LOGL_INFO, "sa",
		       "service 0x%016llx of GID port 0x%016llx: registered, lease %u s",
		       (unsigned long long)mad_bits_get(n.rec, 0, 64),
		       (unsigned long long)mad_bits_get(n.rec, 128, 64), lease);
	return 0;
}

uint16_t sa_service_delete(struct sa_req *rq, const uint8_t *req, uint64_t mask, uint8_t *answer)
{
	struct sa *sa = rq->sa;
	/* The record deleted is the one the request's ServiceID, ServiceGID and P_Key name
	 * (its record ID), whatever the mask says, as OpenSM deletes; masked components must
	 * match too, but for the ServiceKey: in a Delete it is the credential (may_change), and
	 * a wrong one is refused as such, not answered as "no such record". One request never
	 * wipes more than that one record. */
	expire(sa);
	struct sa_components c;
	sa_service_components(&c);
	for (uint32_t i = 0; i < sa->nsvcs; i++) {
		struct sa_service *s = &sa->svcs[i];
		bool rid = !memcmp(s->rec, req, 8) &&
		           mad_bits_get(s->rec + 8, 64, 64) == mad_bits_get(req + 8, 64, 64) &&
		           (rec_pkey(s->rec) == rec_pkey(req) ||
		            (!(mask & SR_COMP_PKEY) && !rec_pkey(req)));
		if (!rid || !requester_in(rq, rec_pkey(s->rec)) ||
		    !sa_components_match(&c, mask & ~SR_COMP_KEY, req, s->rec))
			continue;
		if (!may_change(rq, s->rec, req))
			return refuse_change(rq);
		present(sa, s, answer);
		uncount(sa, s);
		memmove(s, s + 1, (sa->nsvcs - i - 1) * sizeof(*s));
		sa->nsvcs--;
		sa_state_changed(sa);
		return 0;
	}
	return MAD_STATUS_SA_NO_RECORDS;
}

void sa_service_hide_keys(struct sa_records *r)
{
	for (uint32_t i = 0; i < r->n; i++)
		memset(r->buf + (size_t)i * r->stride + SR_KEY, 0, 16);
}

/* The registrant goes with each record, so that the counts per port come back with the
 * records (from the state file, or a standby's copy) and are never kept apart from them. */
void sa_service_save(struct sa *sa, FILE *f)
{
	for (uint32_t i = 0; i < sa->nsvcs; i++) {
		fprintf(f, "service %.3f ", sa->svcs[i].expires);
		sa_hex_put(f, sa->svcs[i].rec, SR_SIZE);
		fprintf(f, " 0x%016llx\n", (unsigned long long)sa->svcs[i].by);
	}
}

bool sa_service_restore(struct sa *sa, const char *line)
{
	struct sa_service n;
	char hex[2 * SR_SIZE + 2];
	unsigned long long by;
	int got = sscanf(line, "%lf %353s %llx", &n.expires, hex, &by);
	if (got < 2 || !sa_hex_get(hex, n.rec, SR_SIZE))
		return false;
	/* files from before the registrant was kept: most hosts register their own services */
	n.by = got == 3 ? (uint64_t)by : mad_bits_get(n.rec + 8, 64, 64);
	if ((n.expires && n.expires <= ev_now(sa->loop)) ||
	    sa_guid_port(sa, mad_bits_get(n.rec + 8, 64, 64)) == TOPO_NONE)
		return false; /* its lease ended or its port left while ibsmd was down */
	/* a port over sa_services_per_port (lowered since) keeps what it had: the bound is on
	 * new registrations, and a restart must not drop a host's services */
	if (sa->nsvcs >= SA_MAX_SERVICES ||
	    array_reserve(&sa->svcs, &sa->svcs_cap, sa->nsvcs + 1ull) < 0 || !count(sa, n.by))
		return false;
	sa->svcs[sa->nsvcs++] = n;
	return true;
}

void sa_service_forget(struct sa *sa)
{
	sa->nsvcs = 0;
	u64map_clear(&sa->svcs_of_port);
}
