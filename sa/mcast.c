/* Multicast groups: MCMemberRecord join, create, leave and queries (IBA 15.2.5.17, o15-0.1.x
 * and o15-0.2.x), the IPoIB broadcast groups, and traps 66/67.
 *
 * A group is its MGID with one MLID and the parameters its creator chose or the SA filled in
 * (Q_Key, P_Key, MTU, rate, SL...); its members are ports with a JoinState (full, non-member,
 * send-only non-member, send-only full). The first full member makes the group exist for
 * subscribers (trap 66); when the last full member leaves, the group goes (trap 67) with
 * its remaining members, except the broadcast groups the SA keeps for IPoIB. Every change of
 * membership hands the MLID's new port list to the SM (sm_mcast_set), which rebuilds that
 * MLID's tree and programs the MFTs.
 *
 * Where the specification leaves a choice, the choices are OpenSM's, so that clients and
 * osmtest see the same answers from either SA. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa_int.h"
#include "util/vec.h"

#define JOIN_FULL           0x1
#define JOIN_NON_MEMBER     0x2
#define JOIN_SEND_ONLY      0x4
#define JOIN_SEND_ONLY_FULL 0x8
#define JOIN_FULLISH        (JOIN_FULL | JOIN_SEND_ONLY_FULL) /* counts as a full member */

#define SEL_GREATER 0
#define SEL_LESS    1
#define SEL_EXACTLY 2
#define SEL_LARGEST 3

#define SCOPE_LINK_LOCAL 0x2
#define TRAP_MGID_IN     66
#define TRAP_MGID_OUT    67
#define IPOIB_QKEY       0x0b1b

#define MCM_REQUIRED (MCM_COMP_MGID | MCM_COMP_PORT_GID | MCM_COMP_JOIN_STATE)
#define MCM_CREATE                                                                                 \
	(MCM_REQUIRED | MCM_COMP_QKEY | MCM_COMP_TCLASS | MCM_COMP_PKEY | MCM_COMP_FLOW_LABEL |    \
	 MCM_COMP_SL)

struct sa_member {
	uint64_t guid;   /* the port's GUID (the PortGID's interface ID) */
	uint32_t port;   /* its port index */
	uint8_t gid[16]; /* PortGID as it joined */
	uint8_t scope, join;
	bool proxy; /* joined on its behalf by another port */
};

struct sa_group {
	struct mad_mcmember_record rec; /* MGID, MLID, parameters; scope and JoinState of
	                                   the request that created it */
	struct sa_member *m;
	uint32_t n, cap;
	struct u64map by_guid; /* member by port GUID */
	uint32_t full;         /* members with a full JoinState bit */
	bool well_known;       /* an IPoIB broadcast group the SA keeps */
	uint64_t creator;      /* the GUID of the port whose join created it (0: the SA's own): it
	                        * counts against that port's sa_groups_per_port while it exists */
};

static const uint8_t zero_gid[16];

static const char *gid_str(const uint8_t *gid, char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

/* A refusal, with the reason for the log. */
static uint16_t refuse(struct sa_req *rq, uint16_t status, const char *why)
{
	rq->why = why;
	return status;
}

/* Groups are found by MGID through a hash index and by MLID through a flat table over the
 * 16K multicast LIDs, so that creating n groups costs O(n), not a scan per lookup. */
static uint32_t mgid_hash(const uint8_t *mgid)
{
	return idxmap_hash_bytes(mgid, 16);
}

static bool mgid_eq(const void *key, uint32_t idx, const void *ctx)
{
	const struct sa *sa = ctx;
	return !memcmp(sa->groups[idx].rec.mgid, key, 16);
}

static struct sa_group *find_group(struct sa *sa, const uint8_t *mgid)
{
	uint32_t i = idxmap_find(&sa->group_by_mgid, mgid_hash(mgid), mgid, mgid_eq, sa);
	return i == IDXMAP_NONE ? NULL : &sa->groups[i];
}

static struct sa_group *group_by_mlid(struct sa *sa, uint16_t mlid)
{
	if (!sa->group_of_mlid || mlid < SM_MLID_BASE || mlid - SM_MLID_BASE >= SM_MLID_MAX)
		return NULL;
	uint32_t i = sa->group_of_mlid[mlid - SM_MLID_BASE];
	return i ? &sa->groups[i - 1] : NULL;
}

static struct sa_member *find_member(struct sa_group *g, uint64_t guid)
{
	uint32_t i = u64map_get(&g->by_guid, guid);
	return i == U64MAP_NONE ? NULL : &g->m[i];
}

/* Hand the MLID's ports to the SM. */
static void update_tree(struct sa *sa, const struct sa_group *g)
{
	uint32_t *ports = malloc(sizeof(uint32_t) * (g->n ? g->n : 1));
	if (!ports) {
		log_err(sa->log, "sa", "out of memory: MLID 0x%04x keeps its old tree",
		        g->rec.mlid);
		return;
	}
	for (uint32_t i = 0; i < g->n; i++)
		ports[i] = g->m[i].port;
	if (sm_mcast_set(sa->sm, g->rec.mlid, ports, g->n) < 0)
		log_err(sa->log, "sa", "MLID 0x%04x: cannot update its tree", g->rec.mlid);
	free(ports);
}

static void remove_member(struct sa_group *g, uint32_t i)
{
	u64map_del(&g->by_guid, g->m[i].guid);
	if (i != g->n - 1) {
		g->m[i] = g->m[g->n - 1];
		u64map_put(&g->by_guid, g->m[i].guid, i); /* the key exists: cannot fail */
	}
	g->n--;
}

static void drop_group(struct sa *sa, struct sa_group *g)
{
	char mgid[48];
	log_rl(sa->log, &sa->rl_client, LOGL_INFO, "sa", "multicast group %s (MLID 0x%04x) deleted",
	       gid_str(g->rec.mgid, mgid, sizeof(mgid)), g->rec.mlid);
	sm_mcast_set(sa->sm, g->rec.mlid, NULL, 0);
	if (g->creator) /* room for one more of its creator's */
		u64map_count_add(&sa->groups_of_port, g->creator, -1);
	free(g->m);
	u64map_free(&g->by_guid);
	uint32_t i = (uint32_t)(g - sa->groups), last = sa->ngroups - 1;
	uint32_t off = g->rec.mlid - SM_MLID_BASE;
	idxmap_del(&sa->group_by_mgid, mgid_hash(g->rec.mgid), i);
	sa->group_of_mlid[off] = 0;
	if (off < sa->mlid_hint)
		sa->mlid_hint = off;
	if (i != last) {
		/* the last group moves into the hole: its indexes follow */
		struct sa_group *m = &sa->groups[last];
		idxmap_move(&sa->group_by_mgid, mgid_hash(m->rec.mgid), last, i);
		sa->group_of_mlid[m->rec.mlid - SM_MLID_BASE] = i + 1;
		*g = *m;
	}
	sa->ngroups--;
}

/* The last full member left: trap 67, then the group goes with its other members (the
 * broadcast groups stay, empty). g is invalid afterwards. */
static void last_full_left(struct sa *sa, struct sa_group *g)
{
	sa_report_mgid(sa, TRAP_MGID_OUT, g->rec.mgid, g->rec.pkey);
	g->n = 0;
	u64map_clear(&g->by_guid);
	if (g->well_known)
		update_tree(sa, g);
	else
		drop_group(sa, g);
}

/* A new group under rec's MGID and MLID, both free (the callers checked). */
static struct sa_group *new_group(struct sa *sa, const struct mad_mcmember_record *rec,
                                  bool well_known)
{
	uint32_t off = rec->mlid - SM_MLID_BASE;
	if (rec->mlid < SM_MLID_BASE || off >= SM_MLID_MAX)
		return NULL;
	if (!sa->group_of_mlid &&
	    !(sa->group_of_mlid = calloc(SM_MLID_MAX, sizeof(*sa->group_of_mlid))))
		return NULL;
	if (array_reserve(&sa->groups, &sa->groups_cap, sa->ngroups + 1ull) < 0 ||
	    idxmap_add(&sa->group_by_mgid, mgid_hash(rec->mgid), sa->ngroups) < 0)
		return NULL;
	sa->group_of_mlid[off] = sa->ngroups + 1;
	struct sa_group *g = &sa->groups[sa->ngroups++];
	*g = (struct sa_group){.rec = *rec, .well_known = well_known};
	/* the group's record answers with exact selectors */
	g->rec.mtu_selector = g->rec.rate_selector = g->rec.pkt_life_selector = SEL_EXACTLY;
	return g;
}

/* The lowest free MLID, or the one asked for if it is free and in range; 0 if none. The hint
 * skips the low MLIDs known to be taken, so n creations cost O(n) together. */
static uint16_t new_mlid(struct sa *sa, uint16_t asked)
{
	uint32_t cap = sm_mcast_cap(sa->sm);
	if (cap > SM_MLID_MAX)
		cap = SM_MLID_MAX;
	if (asked >= SM_MLID_BASE && (uint32_t)(asked - SM_MLID_BASE) < cap &&
	    !group_by_mlid(sa, asked))
		return asked;
	for (uint32_t i = sa->mlid_hint; i < cap; i++) {
		if (!group_by_mlid(sa, (uint16_t)(SM_MLID_BASE + i))) {
			sa->mlid_hint = i;
			return (uint16_t)(SM_MLID_BASE + i);
		}
	}
	return 0;
}

static uint8_t port_mtu(const struct sa *sa, uint32_t p)
{
	const struct mad_port_info *pi = &sa->t->ports[p].pi;
	return pi->neighbor_mtu ? pi->neighbor_mtu : pi->mtu_cap;
}

static uint8_t port_rate(const struct sa *sa, uint32_t p)
{
	const struct mad_port_info *pi = &sa->t->ports[p].pi;
	return mad_link_rate(pi);
}

/* Do the group's MTU and rate satisfy the request's selectors? */
static bool selectors_match(const struct sa_group *g, const struct mad_mcmember_record *q,
                            uint64_t mask)
{
	if (mask & MCM_COMP_MTU_SELECTOR) {
		uint8_t want = q->mtu, have = g->rec.mtu;
		if ((q->mtu_selector == SEL_GREATER && have <= want) ||
		    (q->mtu_selector == SEL_LESS && have >= want) ||
		    (q->mtu_selector == SEL_EXACTLY && have != want))
			return false;
	}
	if (mask & MCM_COMP_RATE_SELECTOR) {
		int c = mad_rate_cmp(g->rec.rate, q->rate);
		if ((q->rate_selector == SEL_GREATER && c <= 0) ||
		    (q->rate_selector == SEL_LESS && c >= 0) ||
		    (q->rate_selector == SEL_EXACTLY && c != 0))
			return false;
	}
	return true;
}

/* Do the request's other components agree with the group (Q_Key, P_Key, TClass, SL,
 * FlowLabel, HopLimit)? */
static bool fields_match(const struct sa_group *g, const struct mad_mcmember_record *q,
                         uint64_t mask)
{
	const struct mad_mcmember_record *r = &g->rec;
	if ((mask & MCM_COMP_QKEY) && q->qkey != r->qkey)
		return false;
	if (mask & MCM_COMP_PKEY) {
		if (!(q->pkey & 0x8000) && !(r->pkey & 0x8000))
			return false; /* two limited members cannot talk */
		if ((q->pkey & 0x7fff) != (r->pkey & 0x7fff))
			return false;
	}
	if ((mask & MCM_COMP_TCLASS) && q->tclass != r->tclass)
		return false;
	if ((mask & MCM_COMP_SL) && q->sl != r->sl)
		return false;
	if ((mask & MCM_COMP_FLOW_LABEL) && q->flow_label != r->flow_label)
		return false;
	if ((mask & MCM_COMP_HOP_LIMIT) && q->hop_limit != r->hop_limit)
		return false;
	return true;
}

/* Can the port carry the group's MTU and rate? */
static bool port_can(const struct sa *sa, uint32_t p, const struct sa_group *g)
{
	return port_mtu(sa, p) >= g->rec.mtu && mad_rate_cmp(port_rate(sa, p), g->rec.rate) >= 0;
}

/* The MTU and rate of a new group: what the request's selectors ask for, realizable by the
 * creating port; false if they cannot be met. */
static bool choose_mtu_rate(const struct sa *sa, uint32_t p, struct mad_mcmember_record *q,
                            uint64_t mask)
{
	uint8_t pm = port_mtu(sa, p), pr = port_rate(sa, p);
	if (!(mask & MCM_COMP_MTU) || !(mask & MCM_COMP_MTU_SELECTOR) ||
	    q->mtu_selector == SEL_LARGEST) {
		q->mtu = pm;
	} else {
		int mtu = q->mtu;
		if (q->mtu_selector == SEL_GREATER) {
			if (q->mtu >= pm)
				return false;
			mtu = pm;
		} else if (q->mtu_selector == SEL_LESS) {
			mtu = q->mtu > pm ? pm : q->mtu - 1;
		}
		if (mtu < 1 || mtu > 5)
			return false;
		q->mtu = (uint8_t)mtu;
	}
	if (!(mask & MCM_COMP_RATE) || !(mask & MCM_COMP_RATE_SELECTOR) ||
	    q->rate_selector == SEL_LARGEST) {
		q->rate = pr;
	} else {
		uint8_t rate = q->rate;
		if (q->rate_selector == SEL_GREATER) {
			if (mad_rate_cmp(q->rate, pr) >= 0)
				return false;
			rate = pr;
		} else if (q->rate_selector == SEL_LESS) {
			rate = mad_rate_cmp(q->rate, pr) > 0 ? pr : mad_rate_step(q->rate, -1);
		}
		if (!mad_rate_mbps(rate))
			return false;
		q->rate = rate;
	}
	return true;
}

static uint16_t mgid_signature(const uint8_t *mgid)
{
	return (uint16_t)(mgid[2] << 8 | mgid[3]);
}

/* The IPv4 broadcast MGID of a partition at a scope. */
static void bcast_mgid(uint8_t *mgid, uint8_t scope, uint16_t pkey)
{
	static const uint8_t base[16] = {0xff, 0x10, 0x40, 0x1b, 0,    0,    0,    0,
	                                 0,    0,    0,    0,    0xff, 0xff, 0xff, 0xff};
	memcpy(mgid, base, 16);
	mgid[1] = (uint8_t)(0x10 | (scope & 0xf));
	mgid[4] = (uint8_t)(pkey >> 8);
	mgid[5] = (uint8_t)pkey;
}

/* Is an MGID a client may ask to create well formed (IBA 4.1.1)? IPoIB MGIDs of a partition
 * need its broadcast group to exist first and to agree with it. */
static bool mgid_acceptable(struct sa *sa, const struct mad_mcmember_record *q, uint64_t mask)
{
	const uint8_t *m = q->mgid;
	if (m[0] != 0xff)
		return false;
	uint16_t sig = mgid_signature(m);
	if (sig == 0x401b || sig == 0x601b) {
		uint8_t b[16];
		bcast_mgid(b, m[1] & 0xf, (uint16_t)(m[4] << 8 | m[5]));
		if (sig == 0x401b && !memcmp(b, m, 16))
			return true; /* the broadcast group itself */
		struct sa_group *bg = find_group(sa, b);
		return bg && fields_match(bg, q, mask);
	}
	if (m[1] & 0xe0)
		return false; /* reserved flags */
	if (sig == 0xa01b && (m[1] & 0xf) == SCOPE_LINK_LOCAL)
		return false; /* the SA's own signature: only MGIDs it makes up carry it */
	return true;
}

/* An MGID the SA makes up: ff1<scope>:a01b:<subnet prefix>:<counter>. */
static bool make_mgid(struct sa *sa, struct mad_mcmember_record *q, uint64_t mask)
{
	uint8_t scope = (mask & MCM_COMP_SCOPE) ? q->scope : SCOPE_LINK_LOCAL;
	for (unsigned tries = 0; tries < 1000; tries++) {
		uint8_t *m = q->mgid;
		m[0] = 0xff;
		m[1] = (uint8_t)(0x10 | (scope & 0xf));
		m[2] = 0xa0;
		m[3] = 0x1b;
		mad_bits_set(m, 32, 64, sa->cfg->subnet_prefix);
		mad_bits_set(m, 96, 32, sa->mgid_seq++);
		if (!find_group(sa, m))
			return true;
	}
	return false;
}

static uint16_t check_prefix(struct sa *sa, struct mad_mcmember_record *q)
{
	uint64_t prefix = mad_bits_get(q->port_gid, 0, 64);
	if (prefix != sa->cfg->subnet_prefix && prefix != 0xfe80000000000000ull)
		return MAD_STATUS_SA_INVALID_GID;
	return 0;
}

static bool rate_mtu_valid(const struct mad_mcmember_record *q, uint64_t mask)
{
	if ((mask & MCM_COMP_RATE) && (mask & MCM_COMP_RATE_SELECTOR) && !mad_rate_mbps(q->rate))
		return false;
	if ((mask & MCM_COMP_MTU) && (mask & MCM_COMP_MTU_SELECTOR) && (q->mtu < 1 || q->mtu > 5))
		return false;
	return true;
}

/* May the requester change this member (o15-0.2.1)? Its own port, or for a proxy join any
 * port of the group's partition. */
static bool may_modify(const struct sa_req *rq, const struct sa_group *g,
                       const struct sa_member *mb)
{
	const struct sa *sa = rq->sa;
	if (rq->requester == TOPO_NONE)
		return false;
	if (!mb->proxy)
		return topo_lid_port(sa->t, rq->requester) == topo_lid_port(sa->t, mb->port);
	bool full;
	return sa_port_has_pkey(sa, rq->requester, g->rec.pkey, &full);
}

static void answer(const struct mad_mcmember_record *r, struct sa_records *out)
{
	struct mad_mcmember_record a = *r;
	a.mtu_selector = a.rate_selector = a.pkt_life_selector = SEL_EXACTLY;
	uint8_t *rec = sa_records_add(out);
	if (rec)
		mad_mcmember_record_encode(&a, rec, out->size, NULL);
}

/* The port joining (*p) and whether the requester joins it for another (*proxy): 0, else the
 * status refusing the join. */
static uint16_t join_port(struct sa_req *rq, const struct mad_mcmember_record *q, uint64_t mask,
                          uint32_t *p, bool *proxy)
{
	struct sa *sa = rq->sa;
	*p = sa_gid_port(sa, q->port_gid);
	if (*p == TOPO_NONE)
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID, "PortGID names no port of the subnet");
	if (rq->requester == TOPO_NONE)
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID, "the requester's LID names no port");
	*proxy = topo_lid_port(sa->t, *p) != topo_lid_port(sa->t, rq->requester);
	if (*proxy && !sa_ports_share(sa, *p, rq->requester))
		return refuse(
		    rq, MAD_STATUS_SA_REQ_INVALID,
		    "a proxy join for a port that shares no partition with the requester");
	if ((mask & MCM_COMP_PKEY) && !(q->pkey & 0x7fff))
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID, "P_Key 0 is no partition");
	return 0;
}

/* The group a join asks for and that does not exist, made for it: 0 with *gp, else the
 * status refusing the join. */
static uint16_t create_group(struct sa_req *rq, const struct mad_mcmember_record *q, uint64_t mask,
                             uint32_t p, uint8_t js, struct sa_group **gp)
{
	struct sa *sa = rq->sa;
	if (!(js & JOIN_FULLISH))
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID,
		              "no such group, and only a full member creates one (o15-0.1.9)");
	if ((mask & MCM_CREATE) != MCM_CREATE)
		return refuse(rq, MAD_STATUS_SA_INSUF_COMPONENTS,
		              "creating a group needs Q_Key, P_Key, SL, FlowLabel and TClass "
		              "(o15-0.1.3)");
	/* each group takes an MLID: one port must not take them all. Counted against the port
	 * that asks (a proxy join creates for the requester), trusted or not, as subscriptions
	 * are; joining a group that exists takes no MLID */
	uint64_t creator = topo_port_guid(sa->t, rq->requester);
	uint32_t made = u64map_count(&sa->groups_of_port, creator);
	if (made >= sa->cfg->sa_groups_per_port) {
		log_rl(sa->log, &sa->rl_client, LOGL_WARN, "sa",
		       "LID %u (port GUID " GUID_FMT ") has created %u multicast groups, the "
		       "most sa_groups_per_port allows: a new group refused",
		       rq->from.lid, creator, made);
		return MAD_STATUS_SA_NO_RESOURCES;
	}
	struct mad_mcmember_record c = *q;
	if (!memcmp(c.mgid, zero_gid, 16)) {
		if (!make_mgid(sa, &c, mask))
			return refuse(rq, MAD_STATUS_SA_NO_RESOURCES, "no free MGID");
	} else if (!mgid_acceptable(sa, &c, mask)) {
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID,
		              "MGID malformed, or an IPoIB MGID without (or unlike) its "
		              "partition's broadcast group");
	}
	if (!choose_mtu_rate(sa, p, &c, mask))
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID,
		              "the MTU or rate asked for is beyond the port's");
	c.mlid = new_mlid(sa, q->mlid);
	if (!c.mlid)
		return refuse(rq, MAD_STATUS_SA_NO_RESOURCES, "no free MLID");
	struct sa_group *g = new_group(sa, &c, false);
	if (!g)
		return refuse(rq, MAD_STATUS_SA_NO_RESOURCES, "out of memory");
	if (u64map_count_add(&sa->groups_of_port, creator, 1) != made + 1) {
		drop_group(sa, g);
		return refuse(rq, MAD_STATUS_SA_NO_RESOURCES, "out of memory");
	}
	g->creator = creator;
	*gp = g;
	return 0;
}

/* Why port p may not join g as asked (mb: its membership, if any), or 0. */
static uint16_t join_refusal(struct sa_req *rq, const struct mad_mcmember_record *q, uint64_t mask,
                             uint32_t p, uint8_t js, const struct sa_group *g,
                             const struct sa_member *mb)
{
	struct sa *sa = rq->sa;
	bool full;
	if (!selectors_match(g, q, mask))
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID,
		              "the group's MTU or rate is not as asked");
	if (!port_can(sa, p, g))
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID,
		              "the port cannot carry the group's MTU or rate");
	if (!js)
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID, "JoinState 0");
	/* a VF joining by its vport's GID: its own keys decide, not its physical port's */
	uint32_t slot = sa_gid_slot(sa, q->port_gid);
	if (!sa_port_has_pkey(sa, slot != TOPO_NONE ? slot : p, g->rec.pkey, &full))
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID,
		              "the port is not in the group's partition");
	if (mb && !may_modify(rq, g, mb))
		return refuse(
		    rq, MAD_STATUS_SA_REQ_INVALID,
		    "the member joined by itself: only its own port changes it (o15-0.2.1)");
	return 0;
}

/* Port p a new member of g by guid: 0 with *mbp, or the status when out of memory. */
static uint16_t add_member(struct sa *sa, struct sa_group *g, const struct mad_mcmember_record *q,
                           uint64_t guid, uint32_t p, bool proxy, struct sa_member **mbp)
{
	if (array_reserve(&g->m, &g->cap, g->n + 1ull) < 0)
		return MAD_STATUS_SA_NO_RESOURCES;
	if (u64map_put(&g->by_guid, guid, g->n) < 0)
		return MAD_STATUS_SA_NO_RESOURCES;
	struct sa_member *mb = &g->m[g->n++];
	*mb = (struct sa_member){.guid = guid, .port = p, .scope = q->scope, .proxy = proxy};
	sa_port_gid(sa, p, mb->gid);
	mad_bits_set(mb->gid, 64, 64, guid); /* the GUID it joined with */
	update_tree(sa, g);
	*mbp = mb;
	return 0;
}

/* The answer to a join: the request, with the group's parameters and the port's JoinState. */
static void join_answer(const struct mad_mcmember_record *q, const struct sa_group *g,
                        const struct sa_member *mb, struct sa_records *out)
{
	struct mad_mcmember_record a = *q;
	memcpy(a.mgid, g->rec.mgid, 16);
	a.qkey = g->rec.qkey;
	a.mlid = g->rec.mlid;
	a.tclass = g->rec.tclass;
	a.pkey = g->rec.pkey;
	a.sl = g->rec.sl;
	a.flow_label = g->rec.flow_label;
	a.hop_limit = g->rec.hop_limit;
	a.mtu = g->rec.mtu;
	a.rate = g->rec.rate;
	a.pkt_life = g->rec.pkt_life;
	a.scope = mb->scope;
	a.join_state = mb->join;
	answer(&a, out);
}

static uint16_t join(struct sa_req *rq, struct mad_mcmember_record *q, uint64_t mask,
                     struct sa_records *out)
{
	struct sa *sa = rq->sa;
	uint64_t guid = mad_bits_get(q->port_gid, 64, 64);
	uint32_t p;
	bool proxy;
	uint16_t st = join_port(rq, q, mask, &p, &proxy);
	if (st)
		return st;
	uint8_t js = q->join_state & 0xf;
	struct sa_group *g = find_group(sa, q->mgid);
	bool created = !g;
	if (created) {
		if ((st = create_group(rq, q, mask, p, js, &g)))
			return st;
	} else if (!fields_match(g, q, mask)) {
		return refuse(
		    rq, MAD_STATUS_SA_REQ_INVALID,
		    "Q_Key, P_Key, TClass, SL, FlowLabel or HopLimit differ from the group's");
	}
	struct sa_member *mb = find_member(g, guid);
	uint8_t before = mb ? mb->join : 0;
	st = join_refusal(rq, q, mask, p, js, g, mb);
	if (!st && !mb)
		st = add_member(sa, g, q, guid, p, proxy, &mb);
	if (st) {
		if (created)
			drop_group(sa, g);
		return st;
	}
	mb->join |= js;
	if ((js & JOIN_FULLISH) && !(before & JOIN_FULLISH) && ++g->full == 1)
		sa_report_mgid(sa, TRAP_MGID_IN, g->rec.mgid, g->rec.pkey);
	if (created) {
		char mgid[48];
		log_rl(sa->log, &sa->rl_client, LOGL_INFO, "sa",
		       "multicast group %s created with MLID 0x%04x",
		       gid_str(g->rec.mgid, mgid, sizeof(mgid)), g->rec.mlid);
	}
	sa_state_changed(sa);
	join_answer(q, g, mb, out);
	return 0;
}

static uint16_t leave(struct sa_req *rq, struct mad_mcmember_record *q, struct sa_records *out)
{
	struct sa *sa = rq->sa;
	struct sa_group *g = find_group(sa, q->mgid);
	if (!g)
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID, "no such group");
	struct sa_member *mb = find_member(g, mad_bits_get(q->port_gid, 64, 64));
	uint8_t js = q->join_state & 0xf;
	/* o15-0.1.14: a member, leaving some of the states it holds, by itself or a proxy */
	if (!mb)
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID, "the port is no member");
	if (!(js & mb->join) || (js & ~mb->join))
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID,
		              "JoinState names states the member does not hold (o15-0.1.14)");
	if (!may_modify(rq, g, mb))
		return refuse(rq, MAD_STATUS_SA_REQ_INVALID,
		              "only the member's own port, or for a proxy join a port of its "
		              "partition, may leave for it");
	uint8_t old = mb->join, left = (uint8_t)(old & ~js);
	struct mad_mcmember_record a = *q;
	/* a port that keeps only non-full states stays while some other full member is there */
	if ((left & JOIN_FULL) || (left && g->full > ((old & JOIN_FULL) ? 1u : 0u))) {
		mb->join = left;
		a.scope = mb->scope;
		a.join_state = left;
	} else {
		a.scope = mb->scope;
		a.join_state = 0;
		remove_member(g, (uint32_t)(mb - g->m));
		update_tree(sa, g);
	}
	answer(&a, out);
	if ((old & JOIN_FULLISH) && !(left & JOIN_FULLISH) && --g->full == 0)
		last_full_left(sa, g);
	sa_state_changed(sa);
	return 0;
}

/* Get and GetTable: groups the requester's partitions let it see, narrowed by the mask.
 * Untrusted requesters get no PortGID, JoinState or ProxyJoin (IBA 15.2.5.17). */
static uint16_t query(struct sa_req *rq, const struct mad_mcmember_record *q, uint64_t mask,
                      struct sa_records *out)
{
	struct sa *sa = rq->sa;
	if (rq->requester == TOPO_NONE)
		return MAD_STATUS_SA_NO_RECORDS;
	uint8_t smask = (uint8_t)(((mask & MCM_COMP_SCOPE) ? 0xf0 : 0) |
	                          ((mask & MCM_COMP_JOIN_STATE) ? 0x0f : 0));
	uint8_t want = (uint8_t)((q->scope << 4) | (q->join_state & 0xf));
	for (uint32_t i = 0; i < sa->ngroups; i++) {
		struct sa_group *g = &sa->groups[i];
		bool full;
		if ((mask & MCM_COMP_MGID) && memcmp(q->mgid, g->rec.mgid, 16))
			continue;
		if ((mask & MCM_COMP_MLID) && q->mlid != g->rec.mlid)
			continue;
		if (!sa_port_has_pkey(sa, rq->requester, g->rec.pkey, &full))
			continue;
		if (!fields_match(g, q, mask))
			continue;
		if ((mask & MCM_COMP_PROXY_JOIN) && q->proxy_join != g->rec.proxy_join)
			continue;
		if (!selectors_match(g, q, mask))
			continue;
		struct mad_mcmember_record r = g->rec;
		if (mask & MCM_COMP_PORT_GID) {
			struct sa_member *mb = find_member(g, mad_bits_get(q->port_gid, 64, 64));
			if (!mb)
				continue;
			memcpy(r.port_gid, mb->gid, 16);
			r.scope = mb->scope;
			r.join_state = mb->join;
			r.proxy_join = mb->proxy;
		} else if (rq->trusted) {
			/* every member that matches, one record each */
			for (uint32_t k = 0; k < g->n; k++) {
				const struct sa_member *mb = &g->m[k];
				if ((smask & want) != (smask & ((mb->scope << 4) | mb->join)))
					continue;
				memcpy(r.port_gid, mb->gid, 16);
				r.scope = mb->scope;
				r.join_state = mb->join;
				r.proxy_join = mb->proxy;
				answer(&r, out);
			}
			continue;
		} else {
			memset(r.port_gid, 0, 16);
			r.proxy_join = 0;
		}
		if ((smask & want) != (smask & ((r.scope << 4) | r.join_state)))
			continue;
		if (!rq->trusted) {
			memset(r.port_gid, 0, 16);
			r.join_state = 0;
			r.proxy_join = 0;
		}
		answer(&r, out);
	}
	return 0;
}

uint16_t sa_mcast_path(struct sa_req *rq, const struct mad_path_record *q, uint64_t mask,
                       uint32_t src, struct sa_records *out)
{
	struct sa *sa = rq->sa;
	struct sa_group *g = find_group(sa, q->dgid);
	bool full;
	if (!g)
		return MAD_STATUS_SA_INVALID_GID; /* no such group, as OpenSM says */
	if (!sa_port_has_pkey(sa, src, g->rec.pkey, &full) ||
	    (!rq->trusted && (rq->requester == TOPO_NONE ||
	                      !sa_port_has_pkey(sa, rq->requester, g->rec.pkey, &full))))
		return MAD_STATUS_SA_NO_RECORDS;
	const struct mad_mcmember_record *r = &g->rec;
	if (((mask & PR_COMP_PKEY) && (q->pkey & 0x7fff) != (r->pkey & 0x7fff)) ||
	    ((mask & PR_COMP_SL) && q->sl != r->sl) ||
	    ((mask & PR_COMP_TCLASS) && q->tclass != r->tclass) ||
	    ((mask & PR_COMP_FLOW_LABEL) && q->flow_label != r->flow_label))
		return MAD_STATUS_SA_NO_RECORDS;
	if ((mask & PR_COMP_MTU) &&
	    !((mask & PR_COMP_MTU_SELECTOR) ? (q->mtu_selector == SEL_GREATER   ? r->mtu > q->mtu
	                                       : q->mtu_selector == SEL_LESS    ? r->mtu < q->mtu
	                                       : q->mtu_selector == SEL_EXACTLY ? r->mtu == q->mtu
	                                                                        : true)
	                                    : r->mtu == q->mtu))
		return MAD_STATUS_SA_NO_RECORDS;
	uint16_t slid = sa->t->ports[topo_lid_port(sa->t, src)].lid;
	if ((mask & PR_COMP_SLID) && q->slid != slid)
		return MAD_STATUS_SA_NO_RECORDS;
	struct mad_path_record p = {
	    .service_id = q->service_id,
	    .dlid = r->mlid,
	    .slid = slid,
	    .flow_label = r->flow_label,
	    .hop_limit = r->hop_limit,
	    .tclass = r->tclass,
	    .pkey = r->pkey,
	    .sl = r->sl,
	    .mtu_selector = SEL_EXACTLY,
	    .mtu = r->mtu,
	    .rate_selector = SEL_EXACTLY,
	    .rate = r->rate,
	    .pkt_life_selector = SEL_EXACTLY,
	    .pkt_life = r->pkt_life,
	};
	memcpy(p.dgid, r->mgid, 16);
	sa_port_gid(sa, src, p.sgid);
	uint8_t *rec = sa_records_add(out);
	if (rec)
		mad_path_record_encode(&p, rec, out->size, NULL);
	return 0;
}

uint16_t sa_mcast_request(struct sa_req *rq, const struct mad_sa_hdr *h, const uint8_t *req,
                          struct sa_records *out)
{
	struct sa *sa = rq->sa;
	struct mad_mcmember_record q;
	if (mad_mcmember_record_decode(req, MAD_SA_DATA_SIZE, &q, NULL) < 0)
		return MAD_STATUS_SA_REQ_INVALID;
	uint64_t mask = h->comp_mask;
	bool change = h->hdr.method == MAD_METHOD_SET || h->hdr.method == MAD_METHOD_DELETE;
	if (change && (mask & MCM_REQUIRED) != MCM_REQUIRED)
		return MAD_STATUS_SA_INSUF_COMPONENTS;
	if (!rate_mtu_valid(&q, mask))
		return MAD_STATUS_SA_REQ_INVALID;
	if (!change)
		return query(rq, &q, mask, out);
	uint8_t prefix[8];
	memcpy(prefix, q.port_gid, 8);
	uint16_t st = check_prefix(sa, &q);
	if (st)
		return st;
	uint32_t before = out->n;
	st = h->hdr.method == MAD_METHOD_SET ? join(rq, &q, mask, out) : leave(rq, &q, out);
	if (!st && out->n > before) /* the answer keeps the prefix the request used */
		memcpy(out->buf + (size_t)before * out->stride + 16, prefix, 8);
	return st;
}

/* The IPoIB broadcast group of a partition, if it is not there yet. */
/* A group the configuration asks for (a partition's IPoIB broadcast group, or one of its
 * predefined groups), made once and kept when empty. */
static void ensure_group(struct sa *sa, struct mad_mcmember_record *r, const char *what)
{
	r->pkt_life = sa->cfg->subnet_timeout;
	r->join_state = JOIN_FULL;
	r->pkey |= 0x8000;
	if (find_group(sa, r->mgid))
		return;
	char mgid[48];
	r->mlid = new_mlid(sa, 0);
	if (!r->mlid || !new_group(sa, r, true)) {
		log_err(sa->log, "sa", "no MLID or memory for the %s %s of P_Key 0x%04x", what,
		        gid_str(r->mgid, mgid, sizeof(mgid)), r->pkey);
		return;
	}
	sa_state_changed(sa);
	log_info(sa->log, "sa", "%s %s, MLID 0x%04x", what, gid_str(r->mgid, mgid, sizeof(mgid)),
	         r->mlid);
}

static void ensure_bcast(struct sa *sa, uint16_t pkey, uint8_t mtu, uint8_t rate, uint8_t sl,
                         uint8_t scope, uint32_t qkey)
{
	struct mad_mcmember_record r = {
	    .qkey = qkey, .mtu = mtu, .pkey = pkey, .rate = rate, .sl = sl, .scope = scope};
	bcast_mgid(r.mgid, scope, (uint16_t)(pkey | 0x8000));
	ensure_group(sa, &r, "IPoIB broadcast group");
}

/* Does the partition policy still ask for the SA's own group g (pt: the partition of its
 * P_Key, NULL if none)? Its IPoIB broadcast group as the partition defines it now (scope
 * included), one of its configured groups, or the default partition's broadcast group. */
static bool still_asked(const struct sa *sa, const struct sa_group *g,
                        const struct config_partition *pt)
{
	uint16_t pkey = g->rec.pkey & 0x7fff;
	uint8_t b[16];
	if (!pt && pkey == 0x7fff && sa->cfg->default_ipoib) {
		bcast_mgid(b, SCOPE_LINK_LOCAL, 0xffff);
		return !memcmp(b, g->rec.mgid, 16);
	}
	if (!pt)
		return false;
	bcast_mgid(b, pt->ipoib_scope, (uint16_t)(pkey | 0x8000));
	if (pt->ipoib && !memcmp(b, g->rec.mgid, 16))
		return true;
	for (unsigned k = 0; k < pt->ngroups; k++)
		if (!memcmp(pt->groups[k].mgid, g->rec.mgid, 16))
			return true;
	return false;
}

/* The SA's own groups (IPoIB broadcast, configured) whose partition is gone or no longer
 * asks for them go, members and all, as UFM deletes a P_Key's group with the P_Key: an API
 * partition's last member removed must not leave its MLID and MFT entries behind for good.
 * Groups clients created stay until their last full member leaves, as always. */
static void drop_unasked(struct sa *sa)
{
	const struct ibsmd_config *c = sa->cfg;
	uint32_t *at = calloc(0x8000, sizeof(*at)); /* P_Key: index of its partition + 1 */
	if (!at) {
		log_err(sa->log, "sa", "out of memory: groups of removed partitions kept");
		return;
	}
	for (unsigned i = 0; i < c->npartitions; i++)
		at[c->partitions[i].pkey & 0x7fff] = i + 1;
	bool changed = false;
	for (uint32_t i = 0; i < sa->ngroups;) {
		struct sa_group *g = &sa->groups[i];
		uint32_t k = at[g->rec.pkey & 0x7fff];
		if (!g->well_known || still_asked(sa, g, k ? &c->partitions[k - 1] : NULL)) {
			i++;
			continue;
		}
		if (g->full) /* its subscribers saw it in use: they learn it is gone */
			sa_report_mgid(sa, TRAP_MGID_OUT, g->rec.mgid, g->rec.pkey);
		drop_group(sa, g); /* moves the last group into slot i */
		changed = true;
	}
	free(at);
	if (changed)
		sa_state_changed(sa);
}

/* The groups the partition policy asks for (IPoIB broadcast groups, configured groups),
 * created if missing and dropped when no longer asked for, and each partition's SL: after
 * every sweep, and when partitions change at run time (sm/tenants.h). */
void sa_mcast_partitions(struct sa *sa)
{
	const struct ibsmd_config *c = sa->cfg;
	bool default_done = false;
	/* each partition's SL and caps, for the PathRecords on it (the policy may have been
	 * reloaded) */
	if (!sa->pkey_qos)
		sa->pkey_qos = calloc(0x8000, sizeof(*sa->pkey_qos));
	if (sa->pkey_qos) {
		memset(sa->pkey_qos, 0, 0x8000 * sizeof(*sa->pkey_qos));
		for (unsigned i = 0; i < c->npartitions; i++) {
			const struct config_partition *pt = &c->partitions[i];
			struct sa_pkey_qos *q = &sa->pkey_qos[pt->pkey & 0x7fff];
			q->sl1 = pt->has_sl ? (uint8_t)(pt->sl + 1) : 0;
			q->mtu_limit = pt->mtu_limit;
			q->rate_limit = pt->rate_limit;
		}
	}
	for (unsigned i = 0; i < c->npartitions; i++) {
		const struct config_partition *pt = &c->partitions[i];
		if (pt->pkey == 0x7fff)
			default_done = true;
		if (pt->ipoib)
			ensure_bcast(sa, pt->pkey, pt->ipoib_mtu, pt->ipoib_rate, pt->ipoib_sl,
			             pt->ipoib_scope, pt->ipoib_qkey);
		for (unsigned g = 0; g < pt->ngroups; g++) {
			const struct config_mgroup *cg = &pt->groups[g];
			struct mad_mcmember_record r = {.qkey = cg->qkey,
			                                .mtu = cg->mtu,
			                                .pkey = pt->pkey,
			                                .rate = cg->rate,
			                                .sl = cg->sl,
			                                .scope = cg->scope,
			                                .tclass = cg->tclass,
			                                .flow_label = cg->flow_label};
			memcpy(r.mgid, cg->mgid, 16);
			ensure_group(sa, &r, "configured multicast group");
		}
	}
	if (!default_done && c->default_ipoib)
		ensure_bcast(sa, 0x7fff, c->default_ipoib_mtu, c->default_ipoib_rate, 0,
		             SCOPE_LINK_LOCAL, IPOIB_QKEY);
	drop_unasked(sa);
}

void sa_mcast_sweep_done(struct sa *sa)
{
	sa_mcast_partitions(sa);
	/* members whose port left the fabric leave their groups */
	for (uint32_t i = 0; i < sa->ngroups;) {
		struct sa_group *g = &sa->groups[i];
		bool changed = false, gone = false;
		for (uint32_t k = 0; k < g->n;) {
			struct sa_member *mb = &g->m[k];
			if (sa_gid_port(sa, mb->gid) == mb->port) {
				k++;
				continue;
			}
			bool fullish = mb->join & JOIN_FULLISH;
			remove_member(g, k);
			changed = true;
			if (fullish && --g->full == 0) {
				last_full_left(sa, g); /* may move another group into slot i */
				gone = true;
				break;
			}
		}
		if (changed || gone)
			sa_state_changed(sa);
		if (gone)
			continue;
		if (changed)
			update_tree(sa, g);
		i++;
	}
}

void sa_mcast_free(struct sa *sa)
{
	for (uint32_t i = 0; i < sa->ngroups; i++) {
		free(sa->groups[i].m);
		u64map_free(&sa->groups[i].by_guid);
	}
	free(sa->groups);
	sa->groups = NULL;
	sa->ngroups = sa->groups_cap = 0;
	idxmap_free(&sa->group_by_mgid);
	u64map_free(&sa->groups_of_port);
	free(sa->group_of_mlid);
	sa->group_of_mlid = NULL;
	sa->mlid_hint = 0;
}

void sa_mcast_forget(struct sa *sa)
{
	for (uint32_t i = 0; i < sa->ngroups; i++)
		sm_mcast_set(sa->sm, sa->groups[i].rec.mlid, NULL, 0); /* a standby sends none */
	sa_mcast_free(sa);
}

void sa_mcast_save(struct sa *sa, FILE *f)
{
	for (uint32_t i = 0; i < sa->ngroups; i++) {
		const struct sa_group *g = &sa->groups[i];
		uint8_t w[MAD_SA_DATA_SIZE] = {0};
		mad_mcmember_record_encode(&g->rec, w, sizeof(w), NULL);
		fprintf(f, "group %d ", g->well_known);
		sa_hex_put(f, w, mad_mcmember_record_layout.size);
		/* the creator goes with the group: its count comes back with it */
		fprintf(f, " 0x%016llx\n", (unsigned long long)g->creator);
		for (uint32_t k = 0; k < g->n; k++) {
			const struct sa_member *mb = &g->m[k];
			fputs("member ", f);
			sa_hex_put(f, g->rec.mgid, 16);
			fprintf(f, " 0x%016llx ", (unsigned long long)mb->guid);
			sa_hex_put(f, mb->gid, 16);
			fprintf(f, " %u %u %u\n", mb->scope, mb->join, mb->proxy);
		}
	}
}

bool sa_mcast_restore_group(struct sa *sa, const char *line)
{
	int wk;
	char hex[2 * MAD_SA_DATA_SIZE + 2];
	uint8_t w[MAD_SA_DATA_SIZE] = {0};
	struct mad_mcmember_record r;
	unsigned long long creator = 0; /* files from before it was kept: counted for nobody */
	if (sscanf(line, "%d %401s %llx", &wk, hex, &creator) < 2 ||
	    !sa_hex_get(hex, w, mad_mcmember_record_layout.size) ||
	    mad_mcmember_record_decode(w, sizeof(w), &r, NULL) < 0)
		return false;
	uint32_t cap = sm_mcast_cap(sa->sm);
	if (find_group(sa, r.mgid) || group_by_mlid(sa, r.mlid) || r.mlid < SM_MLID_BASE ||
	    (uint32_t)(r.mlid - SM_MLID_BASE) >= cap)
		return false; /* the MLID is no longer there for it: the clients will join again */
	struct sa_group *g = new_group(sa, &r, wk != 0);
	if (!g)
		return false;
	/* counted even beyond sa_groups_per_port (lowered since): a restart drops no group
	 * that clients use, the bound is on new ones */
	uint32_t made = u64map_count(&sa->groups_of_port, creator);
	if (creator && u64map_count_add(&sa->groups_of_port, creator, 1) == made + 1)
		g->creator = creator;
	return true;
}

bool sa_mcast_restore_member(struct sa *sa, const char *line)
{
	char mh[40], gh[40];
	unsigned long long guid;
	unsigned scope, js, proxy;
	uint8_t mgid[16], gid[16];
	if (sscanf(line, "%39s %llx %39s %u %u %u", mh, &guid, gh, &scope, &js, &proxy) != 6 ||
	    !sa_hex_get(mh, mgid, 16) || !sa_hex_get(gh, gid, 16) || !(js & 0xf))
		return false;
	struct sa_group *g = find_group(sa, mgid);
	uint32_t p = sa_guid_port(sa, guid);
	if (!g || p == TOPO_NONE || find_member(g, guid))
		return false;
	if (array_reserve(&g->m, &g->cap, g->n + 1ull) < 0)
		return false;
	if (u64map_put(&g->by_guid, guid, g->n) < 0)
		return false;
	struct sa_member *mb = &g->m[g->n++];
	*mb = (struct sa_member){.guid = guid,
	                         .port = p,
	                         .scope = (uint8_t)scope,
	                         .join = (uint8_t)(js & 0xf),
	                         .proxy = proxy != 0};
	memcpy(mb->gid, gid, 16);
	if (mb->join & JOIN_FULLISH)
		g->full++;
	return true;
}

void sa_mcast_restore_done(struct sa *sa)
{
	for (uint32_t i = 0; i < sa->ngroups;) {
		struct sa_group *g = &sa->groups[i];
		if (!g->full && !g->well_known) {
			drop_group(sa, g); /* its full members left while ibsmd was down */
			continue;
		}
		if (g->n)
			update_tree(sa, g);
		i++;
	}
}
