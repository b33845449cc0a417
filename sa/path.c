/* PathRecords, from the forwarding tables the SM programmed: a path exists when the LFTs
 * deliver its DLID; its MTU and rate are the smallest along the way. No graph walks beyond
 * following the tables, one hop per switch. */
#include <stdlib.h>
#include <string.h>

#include "sa/sa_int.h"

#define PKT_LIFE_DEFAULT 18 /* as OpenSM: about 1 s at the default subnet timeout */

/* A selector (0 greater, 1 less, 2 exactly, 3 largest) applied to what the path offers, by
 * an order (bigger is better). 0 when it cannot be met, else the value to answer. */
static unsigned apply_selector(unsigned sel, unsigned want, unsigned have)
{
	switch (sel) {
	case 0: return have > want ? have : 0;
	case 1: return want > 1 ? (have < want ? have : want - 1) : 0;
	case 2: return have >= want ? want : 0;
	default: return have;
	}
}

/* The endpoints (ports with a LID) the requester may see. */
static void endpoints(const struct sa_req *rq, uint32_t *list, uint32_t *n)
{
	const struct topo *t = rq->sa->t;
	*n = 0;
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct topo_port *port = &t->ports[p];
		if (port->lid && t->nodes[port->node].present && sa_visible(rq, p))
			list[(*n)++] = p;
	}
}

/* Traced paths, kept between sweeps: a path's hops, MTU and rate change only when a sweep
 * reprograms tables or links, so each (source port, DLID) is followed once per sweep. While
 * a sweep is under way the tables are changing: nothing is cached then. */
struct sa_path_cache {
	struct u64map idx; /* (source port + 1) << 16 | DLID -> entry */
	struct sa_trace *paths;
	bool *ok;
	uint32_t n, cap;
	uint64_t generation; /* of the model, that the entries belong to */
};

#define PATH_CACHE_MAX (4u << 20) /* entries; beyond, paths are traced every time */

static bool cached_trace(struct sa *sa, uint32_t src, uint16_t dlid, struct sa_trace *pa)
{
	const struct topo *t = sa->t;
	if (!t->stable)
		return sa_trace(t, src, dlid, pa, NULL, NULL);
	struct sa_path_cache *c = sa->pcache;
	if (!c) {
		c = sa->pcache = calloc(1, sizeof(*c));
		if (!c)
			return sa_trace(t, src, dlid, pa, NULL, NULL);
		c->generation = t->generation;
	}
	if (c->generation != t->generation) {
		u64map_clear(&c->idx);
		c->n = 0;
		c->generation = t->generation;
	}
	uint64_t key = ((uint64_t)src + 1) << 16 | dlid;
	uint32_t i = u64map_get(&c->idx, key);
	if (i != U64MAP_NONE) {
		*pa = c->paths[i];
		sa->st.path_cache_hits++;
		return c->ok[i];
	}
	bool ok = sa_trace(t, src, dlid, pa, NULL, NULL);
	if (c->n == c->cap && c->cap < PATH_CACHE_MAX) {
		uint32_t ncap = c->cap ? c->cap * 2 : 4096;
		struct sa_trace *np = realloc(c->paths, sizeof(*np) * ncap);
		if (np)
			c->paths = np;
		bool *no = np ? realloc(c->ok, ncap) : NULL;
		if (no) {
			c->ok = no;
			c->cap = ncap;
		}
	}
	if (c->n < c->cap && u64map_put(&c->idx, key, c->n) == 0) {
		c->paths[c->n] = *pa;
		c->ok[c->n++] = ok;
	}
	return ok;
}

void sa_path_cache_free(struct sa *sa)
{
	struct sa_path_cache *c = sa->pcache;
	if (!c)
		return;
	u64map_free(&c->idx);
	free(c->paths);
	free(c->ok);
	free(c);
	sa->pcache = NULL;
}

#define SA_PATHS_DONE 0xffffu /* scan_init: answered already (no pair to scan) */

/* A PathRecord query over its pairs of endpoints, resumable: a table of every pair is
 * built a slice at a time (sa_path_job) while the event loop goes on answering. */
struct path_scan {
	struct mad_path_record q;
	uint64_t mask;
	uint16_t pkey; /* asked for, else 0xffff */
	uint32_t numb;
	bool lead; /* tables at LMC > 0: the two most independent LID pairs first (lead_first) */
	uint32_t *srcs, *dsts, ns, nd, i, j;
	uint32_t one_s, one_d;
	bool too_big; /* past what one transfer carries: stopped, NO_RESOURCES */
	/* the destination is another subnet's GID, reached through the router port one_d:
	 * the records carry that GID, and a hop limit that lets the router forward */
	bool off_subnet;
};

/* One (SLID, DLID) of a pair of endpoints, with the Preference its place in the order gives
 * it: 1 when a record was added, 0 when none matches, -1 when out of memory. */
static int path_lids(struct sa_req *rq, const struct path_scan *sc, uint32_t sslot, uint32_t dslot,
                     uint16_t pkey, uint16_t slid, uint16_t dlid, uint8_t pref,
                     struct sa_records *out)
{
	struct sa *sa = rq->sa;
	/* a vport's slot: its port for the route, its own GUID in the GIDs */
	uint32_t s = topo_slot_port(sa->t, sslot), d = topo_slot_port(sa->t, dslot);
	const struct mad_path_record q = sc->q;
	uint64_t mask = sc->mask;
	if ((mask & PR_COMP_SLID) && slid != q.slid)
		return 0;
	if ((mask & PR_COMP_DLID) && dlid != q.dlid)
		return 0;
	struct sa_trace pa;
	if (!cached_trace(sa, s, dlid, &pa))
		return 0;
	/* the QoS class (the level's SL, else the
	 * partition's) with the routing engine's layer
	 * (deadlock avoidance; sm_path_sl_class); the level
	 * also caps MTU and rate */
	const struct config_qos_level *lv = sa_qos_level(
	    sa, s, d, mask & (PR_COMP_SERVICE_ID | PR_COMP_SERVICE_ID << 1), q.service_id, pkey);
	uint8_t cls = 0;
	if (lv)
		cls = lv->sl;
	const struct sa_pkey_qos *pq = sa->pkey_qos ? &sa->pkey_qos[pkey & 0x7fff] : NULL;
	if (!lv && pq && pq->sl1)
		cls = (uint8_t)(pq->sl1 - 1);
	/* a vport's own LID is on its port's routes: that one's layer */
	uint8_t sl =
	    sm_path_sl_class(sa->sm, topo_lid_base(sa->t, slid), topo_lid_base(sa->t, dlid), cls);
	uint8_t pkt_life = PKT_LIFE_DEFAULT;
	if (lv && lv->mtu_limit && pa.mtu > lv->mtu_limit)
		pa.mtu = lv->mtu_limit;
	if (lv && lv->rate_limit && mad_rate_mbps(pa.rate) > mad_rate_mbps(lv->rate_limit))
		pa.rate = lv->rate_limit;
	/* and the partition's caps (UFM's mtu_limit and rate_limit), whichever is lower */
	if (pq && pq->mtu_limit && pa.mtu > pq->mtu_limit)
		pa.mtu = pq->mtu_limit;
	if (pq && pq->rate_limit && mad_rate_mbps(pa.rate) > mad_rate_mbps(pq->rate_limit))
		pa.rate = pq->rate_limit;
	if (lv && lv->packet_life != 0xff)
		pkt_life = lv->packet_life;
	struct mad_path_record r = {
	    .service_id = q.service_id,
	    .dlid = dlid,
	    .slid = slid,
	    .hop_limit = 0,
	    .tclass = q.tclass,
	    .flow_label = q.flow_label,
	    .reversible = 1,
	    .num_path = 0,
	    .pkey = (uint16_t)(pkey | 0x8000),
	    .sl = sl,
	    .mtu_selector = 2,
	    .mtu = pa.mtu,
	    .rate_selector = 2,
	    .rate = pa.rate,
	    .pkt_life_selector = 2,
	    .pkt_life = pkt_life,
	    .preference = pref,
	};
	if ((mask & PR_COMP_SL) && q.sl != sl)
		return 0;
	if (mask & PR_COMP_MTU) {
		unsigned sel = mask & PR_COMP_MTU_SELECTOR ? q.mtu_selector : 2;
		unsigned v = apply_selector(sel, q.mtu, pa.mtu);
		if (!v)
			return 0;
		r.mtu = (uint8_t)v;
	}
	if (mask & PR_COMP_RATE) {
		unsigned sel = mask & PR_COMP_RATE_SELECTOR ? q.rate_selector : 2;
		unsigned v = apply_selector(sel, mad_rate_mbps(q.rate), mad_rate_mbps(pa.rate));
		if (!v)
			return 0;
		if (v != mad_rate_mbps(pa.rate))
			r.rate = q.rate;
	}
	if (mask & PR_COMP_PKT_LIFE) {
		unsigned sel = mask & PR_COMP_PKT_LIFE_SELECTOR ? q.pkt_life_selector : 2;
		/* shorter is better: compare inverted */
		unsigned v = apply_selector(sel == 0   ? 1
		                            : sel == 1 ? 0
		                                       : sel,
		                            64 - q.pkt_life, 64 - pkt_life);
		if (!v)
			return 0;
		r.pkt_life = (uint8_t)(64 - v);
	}
	sa_port_gid(sa, sslot, r.sgid);
	sa_port_gid(sa, dslot, r.dgid);
	if (sc->off_subnet) {
		memcpy(r.dgid, q.dgid, sizeof(r.dgid));
		r.hop_limit = 0xff;
	}
	uint8_t *rec = sa_records_add(out);
	if (!rec)
		return -1;
	mad_path_record_encode(&r, rec, out->size, NULL);
	return 1;
}

#define NONE UINT32_MAX

/* LIDs weighed at each end of a port pair for the lead (16 LID pairs at most). */
#define LEAD_LIDS 4

/* How two traced LID pairs do together: no switch in common (3), no cable (2), else the
 * fewer cables shared the better (below 2); 0 where either was not traced. */
static int lead_score(const struct topo *t, const struct sa_cand *a, const struct sa_cand *b)
{
	if (!a->nhops[0] || !b->nhops[0])
		return 0;
	if (!sa_cand_conflict(t, a, b, SA_INDEP_NODE))
		return 3 << 8;
	unsigned shared = sa_cand_shared(t, a, b, SA_INDEP_LINK, 255);
	return shared ? 256 - (int)shared : 2 << 8;
}

/* A port pair's LID pairs (offsets at the source and destination) that matched the query,
 * of the first LEAD_LIDS at each end: where each one's record is (NONE: not in the
 * answer), and its paths both ways, traced when first weighed. */
struct lead {
	const struct topo *t;
	uint32_t s, d;
	uint16_t slid, dlid;
	unsigned w, v;
	uint32_t rec[LEAD_LIDS][LEAD_LIDS];
	bool traced[LEAD_LIDS][LEAD_LIDS];
	struct sa_cand c[LEAD_LIDS][LEAD_LIDS];
};

static const struct sa_cand *lead_cand(struct lead *l, unsigned i, unsigned j)
{
	if (!l->traced[i][j]) {
		sa_cand_trace(l->t, l->s, l->d, (uint16_t)(l->slid + i), (uint16_t)(l->dlid + j),
		              &l->c[i][j]);
		l->traced[i][j] = true;
	}
	return &l->c[i][j];
}

/* Two LID pairs (i, j) and (k, l) may go together: both in the answer, and each end gives
 * them two different LIDs where it has more than one. */
static bool lead_pair_ok(const struct lead *l, unsigned ns, unsigned nd, unsigned i, unsigned j,
                         unsigned k, unsigned m)
{
	return l->rec[i][j] != NONE && l->rec[k][m] != NONE && (i != k || ns == 1) &&
	       (j != m || nd == 1) && (i != k || j != m);
}

/* The two to lead with: S0/D0 and S1/D1 where they share no switch there and back; else S0/D0
 * and the pair most independent of it (the diagonal first, then row by row, the first of
 * the best); where none is apart from S0/D0 by cable, two others that are. false: keep
 * the order. */
static bool lead_choose(struct lead *l, unsigned ns, unsigned nd, unsigned lead[2][2])
{
	unsigned i1 = ns > 1, j1 = nd > 1;
	int best = -1;
	if (lead_pair_ok(l, ns, nd, 0, 0, i1, j1)) {
		best = lead_score(l->t, lead_cand(l, 0, 0), lead_cand(l, i1, j1));
		lead[0][0] = lead[0][1] = 0;
		lead[1][0] = i1;
		lead[1][1] = j1;
		if (best >= 3 << 8)
			return true;
	}
	for (unsigned diag = 2; diag-- > 0;)
		for (unsigned k = 0; k < l->w; k++)
			for (unsigned m = 0; m < l->v; m++) {
				if ((k == m) != diag || !lead_pair_ok(l, ns, nd, 0, 0, k, m))
					continue;
				int sc = lead_score(l->t, lead_cand(l, 0, 0), lead_cand(l, k, m));
				if (sc > best) {
					best = sc;
					lead[0][0] = lead[0][1] = 0;
					lead[1][0] = k;
					lead[1][1] = m;
				}
			}
	if (best >= 2 << 8)
		return true;
	/* none apart from S0/D0 by cable: two others that are */
	unsigned n = l->w * l->v;
	for (unsigned a = 1; a < n; a++)
		for (unsigned b = a + 1; b < n; b++) {
			unsigned i = a / l->v, j = a % l->v, k = b / l->v, m = b % l->v;
			if (!lead_pair_ok(l, ns, nd, i, j, k, m))
				continue;
			int sc = lead_score(l->t, lead_cand(l, i, j), lead_cand(l, k, m));
			if (sc >= 2 << 8 && sc > best) {
				best = sc;
				lead[0][0] = i;
				lead[0][1] = j;
				lead[1][0] = k;
				lead[1][1] = m;
			}
		}
	return best >= 0;
}

/* Record i of out moved to position at (those between shift down), with Preference 0. */
static void record_to(struct sa_records *out, uint32_t i, uint32_t at)
{
	uint8_t tmp[MAD_SA_DATA_SIZE];
	size_t st = out->stride;
	memcpy(tmp, out->buf + (size_t)i * st, st);
	memmove(out->buf + ((size_t)at + 1) * st, out->buf + (size_t)at * st,
	        (size_t)(i - at) * st);
	struct mad_path_record pr;
	mad_path_record_decode(tmp, out->size, &pr, NULL);
	pr.preference = 0;
	mad_path_record_encode(&pr, tmp, out->size, NULL);
	memcpy(out->buf + (size_t)at * st, tmp, st);
}

/* An APM client takes the first two PathRecords of a port pair as its primary and alternate
 * paths, and a connection's acknowledgements come back by the reverse path: of the records
 * just added for ports s and d (from first on), the two that share the least there and back
 * go first (lead_choose), each traced along the tables only when weighed. */
static void lead_first(const struct topo *t, uint32_t s, uint32_t d, unsigned ns, unsigned nd,
                       struct sa_records *out, uint32_t first)
{
	struct lead l = {.t = t, .s = s, .d = d, .slid = t->ports[s].lid, .dlid = t->ports[d].lid};
	l.w = ns < LEAD_LIDS ? ns : LEAD_LIDS;
	l.v = nd < LEAD_LIDS ? nd : LEAD_LIDS;
	for (unsigned i = 0; i < LEAD_LIDS; i++)
		for (unsigned j = 0; j < LEAD_LIDS; j++)
			l.rec[i][j] = NONE;
	for (uint32_t r = first; r < out->n; r++) {
		struct mad_path_record pr;
		mad_path_record_decode(out->buf + (size_t)r * out->stride, out->size, &pr, NULL);
		unsigned i = (unsigned)(pr.slid - l.slid), j = (unsigned)(pr.dlid - l.dlid);
		if (i < l.w && j < l.v)
			l.rec[i][j] = r;
	}
	unsigned lead[2][2] = {{0, 0}, {0, 0}};
	if (out->stride > MAD_SA_DATA_SIZE || !lead_choose(&l, ns, nd, lead))
		return;
	uint32_t r0 = l.rec[lead[0][0]][lead[0][1]], r1 = l.rec[lead[1][0]][lead[1][1]];
	record_to(out, r0, first);
	if (r1 < r0)
		r1++; /* shifted down by the first move */
	record_to(out, r1, first + 1);
}

/* The records of one (source, destination) pair of a scan. false when out of memory. */
static bool path_pair(struct sa_req *rq, const struct path_scan *sc, uint32_t s, uint32_t d,
                      struct sa_records *out)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	/* a vport (slot past the ports) answers with its own P_Keys and LID, at its port */
	uint32_t sslot = s, dslot = d;
	s = topo_slot_port(t, sslot);
	d = topo_slot_port(t, dslot);
	const struct topo_port *sp = &t->ports[s], *dp = &t->ports[d];
	bool sfull, dfull;
	uint16_t pkey = sc->pkey;
	if (!(sc->mask & PR_COMP_PKEY)) {
		/* no partition asked for: one they share */
		pkey = topo_shared_pkey(t, sslot < t->nports ? topo_lid_port(t, s) : sslot,
		                        dslot < t->nports ? topo_lid_port(t, d) : dslot);
		if (!pkey)
			return true;
	}
	if (!sa_port_has_pkey(sa, sslot, pkey, &sfull) ||
	    !sa_port_has_pkey(sa, dslot, pkey, &dfull) || (!sfull && !dfull))
		return true; /* not partners in that partition */
	uint16_t slid0 = sslot < t->nports ? sp->lid : topo_vport_lid(t, sslot - t->nports);
	uint16_t dlid0 = dslot < t->nports ? dp->lid : topo_vport_lid(t, dslot - t->nports);
	/* The LID pairs in the order OpenSM gives them: S0/D0, S1/D1, ... first, Preference 0,
	 * then the rest with the source LID varying slowest, Preference 2; then, where the
	 * query leaves the LIDs open and asks for two paths or more, the two of those that
	 * matched which are most independent there and back go first (lead_first): S0/D0 and
	 * S1/D1 where no other pair is more. Up to 127 are listed for that choice, then cut to
	 * NumbPath. */
	unsigned ns = sslot < t->nports ? 1u << sp->lmc : 1,
	         nd = dslot < t->nports ? 1u << dp->lmc : 1;
	unsigned ndiag = ns < nd ? ns : nd;
	bool lead =
	    ns * nd > 1 && sc->numb > 1 && sc->lead && !(sc->mask & (PR_COMP_SLID | PR_COMP_DLID));
	unsigned count = 0, want = lead && sc->numb < 127 ? 127 : sc->numb;
	uint32_t first = out->n;
	for (unsigned k = 0; k < ndiag && count < want; k++) {
		int r = path_lids(rq, sc, sslot, dslot, pkey, (uint16_t)(slid0 + k),
		                  (uint16_t)(dlid0 + k), 0, out);
		if (r < 0)
			return false;
		count += (unsigned)r;
	}
	for (unsigned so = 0; so < ns; so++) {
		for (unsigned dof = 0; dof < nd && count < want; dof++) {
			if (so == dof)
				continue; /* on the diagonal, given above */
			int r = path_lids(rq, sc, sslot, dslot, pkey, (uint16_t)(slid0 + so),
			                  (uint16_t)(dlid0 + dof), 2, out);
			if (r < 0)
				return false;
			count += (unsigned)r;
		}
	}
	if (lead && count >= 2)
		lead_first(t, s, d, ns, nd, out, first);
	if (count > sc->numb)
		out->n = first + sc->numb; /* listed for the choice only */
	return true;
}

static void scan_free(struct path_scan *sc)
{
	if (sc->srcs != &sc->one_s)
		free(sc->srcs);
	if (sc->dsts != &sc->one_d && sc->dsts != sc->srcs)
		free(sc->dsts);
	sc->srcs = sc->dsts = NULL;
}

/* The endpoint slot a LID names: its port's, or a vport's own (TOPO_NONE: nobody's). */
static uint32_t lid_slot(const struct topo *t, uint16_t lid)
{
	if (lid >= TOPO_LID_COUNT || !lid)
		return TOPO_NONE;
	if (t->lid_port[lid] != TOPO_NONE)
		return t->lid_port[lid];
	uint32_t v = topo_vport_by_lid(t, lid);
	return v == TOPO_NONE ? TOPO_NONE : t->nports + v;
}

/* Decode and check the query, and list its endpoints. A status, or 0 with the scan set. */
static uint16_t scan_init(struct sa_req *rq, const uint8_t *req, uint64_t mask, bool table,
                          struct sa_records *out, struct path_scan *sc)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	memset(sc, 0, sizeof(*sc));
	struct mad_path_record q;
	mad_path_record_decode(req, 64, &q, NULL);

	/* who: by GID or LID, or (GetTable only) everyone */
	uint32_t src_one = TOPO_NONE, dst_one = TOPO_NONE;
	if (mask & PR_COMP_SGID) {
		if ((src_one = sa_gid_slot(sa, q.sgid)) == TOPO_NONE)
			return MAD_STATUS_SA_INVALID_GID;
	} else if (mask & PR_COMP_SLID) {
		if ((src_one = lid_slot(t, q.slid)) == TOPO_NONE)
			return MAD_STATUS_SA_NO_RECORDS;
	}
	if ((mask & PR_COMP_DGID) && q.dgid[0] == 0xff) {
		/* to a multicast group: the path is its MLID with the group's parameters */
		if (src_one == TOPO_NONE)
			src_one = rq->requester;
		if (src_one == TOPO_NONE)
			return MAD_STATUS_SA_INSUF_COMPONENTS;
		uint16_t st = sa_mcast_path(rq, &q, mask, topo_slot_port(t, src_one), out);
		return st ? st : SA_PATHS_DONE;
	}
	bool off_subnet = false;
	if (mask & PR_COMP_DGID) {
		/* this subnet's port, else a router's towards another subnet (prefix_routes) */
		if ((dst_one = sa_gid_slot(sa, q.dgid)) == TOPO_NONE) {
			if ((dst_one = sa_prefix_router(sa, q.dgid)) == TOPO_NONE)
				return MAD_STATUS_SA_INVALID_GID;
			off_subnet = true;
		}
	} else if (mask & PR_COMP_DLID) {
		if ((dst_one = lid_slot(t, q.dlid)) == TOPO_NONE)
			return MAD_STATUS_SA_NO_RECORDS;
	}
	if (!table && (src_one == TOPO_NONE || dst_one == TOPO_NONE))
		return MAD_STATUS_SA_INSUF_COMPONENTS;
	/* a requester learns only of paths between ports it shares a partition with (or is):
	 * a tenant's paths are not another tenant's business */
	if ((src_one != TOPO_NONE && !sa_visible(rq, src_one)) ||
	    (dst_one != TOPO_NONE && !sa_visible(rq, dst_one)))
		return table ? SA_PATHS_DONE : MAD_STATUS_SA_NO_RECORDS;
	sc->q = q;
	sc->mask = mask;
	sc->pkey = (mask & PR_COMP_PKEY) ? q.pkey : 0xffff;
	sc->numb = (mask & PR_COMP_NUMB_PATH) && q.num_path ? q.num_path : 127;
	sc->lead = table; /* a Get answers one record: S0/D0 */
	sc->one_s = src_one;
	sc->one_d = dst_one;
	sc->off_subnet = off_subnet;
	sc->srcs = &sc->one_s;
	sc->dsts = &sc->one_d;
	sc->ns = sc->nd = 1;
	if (src_one == TOPO_NONE || dst_one == TOPO_NONE) {
		uint32_t *all = malloc(sizeof(uint32_t) * (t->nports + 1));
		if (!all)
			return MAD_STATUS_SA_NO_RESOURCES;
		uint32_t na;
		endpoints(rq, all, &na);
		if (src_one == TOPO_NONE) {
			sc->srcs = all;
			sc->ns = na;
		}
		if (dst_one == TOPO_NONE) {
			sc->dsts = all; /* the same list when both are every endpoint */
			sc->nd = na;
		}
	}
	return 0;
}

/* A table stopped at what one transfer carries: what was built goes, the answer says why. */
static uint16_t too_big(struct sa_req *rq, struct sa_records *out)
{
	sa_records_free(out);
	rq->why = "more paths than one transfer carries; a narrower component mask (a source "
	          "or a destination) gets its part";
	return MAD_STATUS_SA_NO_RESOURCES;
}

/* Go on with the scan for up to `pairs` pairs. true when it is over (all pairs, or out of
 * memory: what was found goes). */
static bool scan_step(struct sa_req *rq, struct path_scan *sc, struct sa_records *out,
                      uint64_t pairs)
{
	/* no more than one transfer carries (the rest would be NO_RESOURCES when sent): a
	 * table of every pair grows as the square of the fabric, 1.7 GB at 5,184 hosts */
	size_t most = MAD_RMPP_MAX_BYTES / out->stride;
	for (; sc->i < sc->ns; sc->i++, sc->j = 0) {
		for (; sc->j < sc->nd; sc->j++) {
			if (!pairs--)
				return false;
			if (out->n >= most) {
				sc->too_big = true;
				return true;
			}
			if (!path_pair(rq, sc, sc->srcs[sc->i], sc->dsts[sc->j], out))
				return true;
		}
	}
	return true;
}

uint16_t sa_paths(struct sa_req *rq, const uint8_t *req, uint64_t mask, bool table,
                  const struct sa_paths_opt *opt, struct sa_records *out)
{
	struct path_scan sc;
	uint16_t st = scan_init(rq, req, mask, table, out, &sc);
	if (st)
		return st == SA_PATHS_DONE ? 0 : st;
	if (opt && opt->numb)
		sc.numb = opt->numb;
	if (opt && opt->no_lead)
		sc.lead = false;
	scan_step(rq, &sc, out, UINT64_MAX);
	scan_free(&sc);
	return sc.too_big ? too_big(rq, out) : 0;
}

/* ---- PathRecord tables a slice at a time ---- */

/* A whole-fabric table (component mask 0: every pair) took the loop 0.3-0.44 s at 648
 * hosts, seconds under ASan; twenty of them left a valid Get unanswered for 3 s. */
#define SLICE_S     0.002 /* building per turn of the loop */
#define SLICE_PAIRS 64    /* pairs between looks at the clock */

struct sa_path_job {
	struct sa_req rq; /* its data points at req below; rq.out is the table so far */
	uint8_t req[MAD_SIZE];
	struct path_scan sc;
	uint64_t generation; /* of the model the table is built from */
	ev_timer w;
	struct sa_path_job *next;
};

const struct sa_path_job *sa_path_job_next(const struct sa_path_job *j)
{
	return j->next;
}

uint32_t sa_path_job_requester(const struct sa_path_job *j)
{
	return j->rq.requester;
}

static void job_end(struct sa *sa, struct sa_path_job *job, uint16_t st)
{
	for (struct sa_path_job **pp = &sa->jobs; *pp; pp = &(*pp)->next) {
		if (*pp == job) {
			*pp = job->next;
			break;
		}
	}
	sa->njobs--;
	ev_timer_stop(sa->loop, &job->w);
	scan_free(&job->sc);
	job->rq.finish(&job->rq, st);
	free(job);
}

/* Build for one slice; true when the table is done. */
static bool job_slice(struct sa_path_job *job)
{
	double end = ev_time() + SLICE_S;
	do {
		if (scan_step(&job->rq, &job->sc, &job->rq.out, SLICE_PAIRS))
			return true;
	} while (ev_time() < end);
	return false;
}

static void job_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sa_path_job *job = w->data;
	struct sa *sa = job->rq.sa;
	if (!sa->t->stable || sa->t->generation != job->generation) {
		/* the fabric changed under the table: asking again gets the new one */
		log_rl(sa->log, &sa->rl_refused, LOGL_INFO, "sa",
		       "PathRecord table for LID %u: the fabric changed while it was built; "
		       "answered BUSY",
		       job->rq.from.lid);
		sa->st.busy++;
		job_end(sa, job, MAD_STATUS_BUSY);
		return;
	}
	if (job_slice(job))
		job_end(sa, job, job->sc.too_big ? too_big(&job->rq, &job->rq.out) : 0);
	else
		ev_timer_again(sa->loop, &job->w);
}

uint16_t sa_path_table(struct sa_req *rq)
{
	struct sa *sa = rq->sa;
	struct sa_path_job *job = calloc(1, sizeof(*job));
	if (!job)
		return MAD_STATUS_SA_NO_RESOURCES;
	job->rq = *rq;
	memcpy(job->req, rq->data, rq->len < sizeof(job->req) ? rq->len : sizeof(job->req));
	job->rq.data = job->req;
	uint16_t st = scan_init(&job->rq, job->req, rq->h.comp_mask, true, &job->rq.out, &job->sc);
	if (st) {
		rq->out = job->rq.out; /* a multicast path, answered at once */
		free(job);
		return st == SA_PATHS_DONE ? 0 : st;
	}
	/* the first slice now: a table of one source's paths is done within it (while a
	 * sweep is under way it is built whole, as before: a job would only be abandoned) */
	bool done = sa->t->stable ? job_slice(job)
	                          : scan_step(&job->rq, &job->sc, &job->rq.out, UINT64_MAX);
	if (done) {
		rq->out = job->rq.out;
		bool big = job->sc.too_big;
		scan_free(&job->sc);
		free(job);
		return big ? too_big(rq, &rq->out) : 0;
	}
	job->generation = sa->t->generation;
	ev_init(&job->w, job_cb);
	job->w.repeat = 1e-9; /* next turn of the loop, after what came in meanwhile */
	job->w.data = job;
	ev_timer_again(sa->loop, &job->w);
	job->next = sa->jobs;
	sa->jobs = job;
	sa->njobs++;
	rq->out = (struct sa_records){0};
	return SA_DEFERRED;
}

void sa_path_jobs_free(struct sa *sa)
{
	while (sa->jobs) {
		struct sa_path_job *job = sa->jobs;
		sa->jobs = job->next;
		ev_timer_stop(sa->loop, &job->w);
		scan_free(&job->sc);
		sa_records_free(&job->rq.out);
		free(job);
	}
	sa->njobs = 0;
}
