/* MultiPathRecords (IBA 15.2.5.20): the PathRecords of every SGID-DGID pair, and, when the
 * requester asks for independence (APM wants a primary and an alternate path that do not
 * fail together), a set of paths that share no link (IndependenceSelector 1) or no switch
 * (2) put first. Independence is judged from the tables the switches hold, both ways,
 * since a connection's acknowledgements come back by the reverse path. */
#include <stdlib.h>
#include <string.h>

#include "sa/sa_int.h"

/* MultiPathRecord component bits (IBA 15.2.5.20), and the PathRecord bits they map to */
static const struct {
	uint64_t mpr, pr;
} mpr_to_pr[] = {
    {1ull << 0, PR_COMP_RAW_TRAFFIC},        {1ull << 2, PR_COMP_FLOW_LABEL},
    {1ull << 3, PR_COMP_HOP_LIMIT},          {1ull << 4, PR_COMP_TCLASS},
    {1ull << 5, PR_COMP_REVERSIBLE},         {1ull << 7, PR_COMP_PKEY},
    {1ull << 8, PR_COMP_QOS_CLASS},          {1ull << 9, PR_COMP_SL},
    {1ull << 10, PR_COMP_MTU_SELECTOR},      {1ull << 11, PR_COMP_MTU},
    {1ull << 12, PR_COMP_RATE_SELECTOR},     {1ull << 13, PR_COMP_RATE},
    {1ull << 14, PR_COMP_PKT_LIFE_SELECTOR}, {1ull << 15, PR_COMP_PKT_LIFE},
    {1ull << 16, PR_COMP_SERVICE_ID},      /* ServiceID, 8 MSBs ... */
    {1ull << 21, PR_COMP_SERVICE_ID << 1}, /* ... and 56 LSBs */
};
#define MPR_COMP_NUMB_PATH  (1ull << 6)
#define MPR_COMP_INDEP      (1ull << 17)
#define MPR_COMP_SGID_COUNT (1ull << 19)
#define MPR_COMP_DGID_COUNT (1ull << 20)
#define MPR_FIXED           24

/* Paths weighed for independence: past these (a request of 11 GIDs at LMC 7 has half a
 * million) the rest follow unweighed; a set of independent paths is found long before. */
#define MPR_CANDIDATES_MAX 1024
/* Candidates a set is grown from, each in turn: the set from the first (S0/D0 of the first
 * pair) may be one path where two others are independent (a torus's alternates). */
#define MPR_STARTS 16

/* The request's shared components as a PathRecord and its component mask. */
static void mpr_as_path(const uint8_t *req, uint64_t mask, struct mad_path_record *p,
                        uint64_t *pmask)
{
	memset(p, 0, sizeof(*p));
	p->raw_traffic = (uint8_t)mad_bits_get(req, 0, 1);
	p->flow_label = (uint32_t)mad_bits_get(req, 4, 20);
	p->hop_limit = (uint8_t)mad_bits_get(req, 24, 8);
	p->tclass = req[4];
	p->reversible = (uint8_t)mad_bits_get(req, 40, 1);
	p->pkey = (uint16_t)mad_bits_get(req, 48, 16);
	p->qos_class = (uint16_t)mad_bits_get(req, 64, 12);
	p->sl = (uint8_t)mad_bits_get(req, 76, 4);
	p->mtu_selector = (uint8_t)mad_bits_get(req, 80, 2);
	p->mtu = (uint8_t)mad_bits_get(req, 82, 6);
	p->rate_selector = (uint8_t)mad_bits_get(req, 88, 2);
	p->rate = (uint8_t)mad_bits_get(req, 90, 6);
	p->pkt_life_selector = (uint8_t)mad_bits_get(req, 96, 2);
	p->pkt_life = (uint8_t)mad_bits_get(req, 98, 6);
	p->service_id = mad_bits_get(req, 104, 8) << 56 | mad_bits_get(req, 136, 56);
	*pmask = PR_COMP_SGID | PR_COMP_DGID;
	for (size_t i = 0; i < sizeof(mpr_to_pr) / sizeof(mpr_to_pr[0]); i++)
		if (mask & mpr_to_pr[i].mpr)
			*pmask |= mpr_to_pr[i].pr;
}

/* Every pair's PathRecords, in order, into all; with cands, each record's candidate too
 * (up to MPR_CANDIDATES_MAX). Returns the number of candidates. */
static uint32_t mpr_collect(struct sa_req *rq, const uint8_t *gids, unsigned ns, unsigned nd,
                            struct mad_path_record *p, uint64_t pmask, uint32_t limit,
                            struct sa_records *all, struct sa_cand *cands)
{
	struct sa *sa = rq->sa;
	uint32_t nc = 0;
	/* weighing: each pair an equal share of the candidates' room (at LMC 4 and above more
	 * than NumbPath's 127 for a few pairs, fewer for many), in the table's order, the set
	 * chosen here; not weighing: NumbPath's, the two most independent first */
	struct sa_paths_opt opt = {0};
	if (cands) {
		opt.numb = MPR_CANDIDATES_MAX / (ns * nd) ? MPR_CANDIDATES_MAX / (ns * nd) : 1;
		opt.no_lead = true;
	}
	for (unsigned s = 0; s < ns; s++) {
		for (unsigned d = 0; d < nd && all->n < limit; d++) {
			memcpy(p->sgid, gids + 16 * s, 16);
			memcpy(p->dgid, gids + 16 * (ns + d), 16);
			uint8_t wire[64] = {0};
			mad_path_record_encode(p, wire, sizeof(wire), NULL);
			struct sa_records one = {.size = all->size, .stride = all->stride};
			uint16_t st = sa_paths(rq, wire, pmask, true, &opt, &one);
			for (uint32_t k = 0; !st && k < one.n && all->n < limit; k++) {
				const uint8_t *src = one.buf + (size_t)k * one.stride;
				uint8_t *r = sa_records_add(all);
				if (!r)
					break;
				memcpy(r, src, all->stride);
				if (!cands || nc >= MPR_CANDIDATES_MAX)
					continue;
				struct sa_cand *c = &cands[nc++];
				struct mad_path_record pr;
				mad_path_record_decode(src, all->size, &pr, NULL);
				sa_cand_trace(sa->t, sa_gid_port(sa, p->sgid),
				              sa_gid_port(sa, p->dgid), pr.slid, pr.dlid, c);
				c->rec = all->n - 1;
			}
			sa_records_free(&one);
		}
	}
	return nc;
}

/* Copy record i of all to out with its Preference and, for the independent set's count,
 * its NumbPath. */
static void mpr_emit(const struct sa_records *all, uint32_t i, int pref, int numb,
                     struct sa_records *out)
{
	uint8_t *r = sa_records_add(out);
	if (!r)
		return;
	struct mad_path_record pr;
	mad_path_record_decode(all->buf + (size_t)i * all->stride, out->size, &pr, NULL);
	if (pref >= 0)
		pr.preference = (uint8_t)pref;
	if (numb >= 0)
		pr.num_path = (uint8_t)numb;
	memset(r, 0, out->stride);
	mad_path_record_encode(&pr, r, out->size, NULL);
}

/* The largest set of mutually independent candidates the greedy growth finds from each of
 * the first MPR_STARTS in turn (each start, then the others in order), into set; the
 * earliest start wins a tie. tmp: room for nc. Returns its size. */
static uint32_t best_set(const struct topo *t, const struct sa_cand *c, uint32_t nc, unsigned sel,
                         uint32_t *set, uint32_t *tmp)
{
	uint32_t best = 0;
	for (uint32_t st = 0; st < nc && st < MPR_STARTS; st++) {
		if (!c[st].nhops[0])
			continue; /* a path to itself, or lost: crosses nothing to judge */
		uint32_t n = 0;
		tmp[n++] = st;
		for (uint32_t i = 0; i < nc; i++) {
			if (i == st || !c[i].nhops[0])
				continue;
			bool free_of_all = true;
			for (uint32_t k = 0; k < n && free_of_all; k++)
				free_of_all = !sa_cand_conflict(t, &c[i], &c[tmp[k]], sel);
			if (free_of_all)
				tmp[n++] = i;
		}
		if (n > best) {
			best = n;
			memcpy(set, tmp, sizeof(uint32_t) * n);
		}
	}
	return best;
}

/* The independent set first (Preference 0), then the rest (Preference at least 1), each
 * record's NumbPath saying how many of the answer's paths are in the set. */
static uint16_t mpr_independent(struct sa_req *rq, const uint8_t *gids, unsigned ns, unsigned nd,
                                struct mad_path_record *p, uint64_t pmask, unsigned sel,
                                uint32_t limit, struct sa_records *out)
{
	const struct topo *t = rq->sa->t;
	struct sa_cand *cands = calloc(MPR_CANDIDATES_MAX, sizeof(*cands));
	bool *in_set = calloc(MPR_CANDIDATES_MAX, sizeof(*in_set));
	uint32_t *set = calloc(MPR_CANDIDATES_MAX, sizeof(*set));
	uint32_t *tmp = calloc(MPR_CANDIDATES_MAX, sizeof(*tmp));
	struct sa_records all = {.size = out->size, .stride = out->stride};
	if (!cands || !in_set || !set || !tmp) {
		free(cands);
		free(in_set);
		free(set);
		free(tmp);
		return MAD_STATUS_SA_NO_RESOURCES;
	}
	uint32_t nc = mpr_collect(rq, gids, ns, nd, p, pmask, UINT32_MAX, &all, cands);
	uint32_t nset = best_set(t, cands, nc, sel, set, tmp);
	for (uint32_t k = 0; k < nset; k++)
		in_set[set[k]] = true;
	int count = (int)(nset < limit ? nset : limit);
	for (uint32_t k = 0; k < nset && out->n < limit; k++)
		mpr_emit(&all, cands[set[k]].rec, 0, count, out);
	for (uint32_t i = 0; i < all.n && out->n < limit; i++) {
		if (i < nc && in_set[i])
			continue;
		struct mad_path_record pr;
		mad_path_record_decode(all.buf + (size_t)i * all.stride, all.size, &pr, NULL);
		mpr_emit(&all, i, pr.preference ? pr.preference : 1, count, out);
	}
	sa_records_free(&all);
	free(cands);
	free(in_set);
	free(set);
	free(tmp);
	return 0;
}

uint16_t sa_multipaths(struct sa_req *rq, const uint8_t *req, size_t len, uint64_t mask,
                       struct sa_records *out)
{
	struct sa *sa = rq->sa;
	if (len < MPR_FIXED)
		return MAD_STATUS_SA_REQ_INVALID;
	if (!(mask & MPR_COMP_SGID_COUNT) || !(mask & MPR_COMP_DGID_COUNT))
		return MAD_STATUS_SA_INSUF_COMPONENTS;
	unsigned ns = req[15], nd = req[16]; /* SGIDCount, DGIDCount */
	if (!ns || !nd)
		return MAD_STATUS_SA_INSUF_COMPONENTS;
	if (MPR_FIXED + (size_t)(ns + nd) * 16 > len)
		return MAD_STATUS_SA_REQ_INVALID; /* more GIDs than the request carries */
	unsigned sel = mask & MPR_COMP_INDEP ? (unsigned)mad_bits_get(req, 112, 2) : SA_INDEP_NONE;
	if (sel > SA_INDEP_NODE)
		return MAD_STATUS_SA_REQ_INVALID; /* reserved */
	const uint8_t *gids = req + MPR_FIXED;
	for (unsigned i = 0; i < ns + nd; i++)
		if (sa_gid_port(sa, gids + 16 * i) == TOPO_NONE)
			return MAD_STATUS_SA_INVALID_GID;
	/* the PathRecord the shared components make, asked for each SGID-DGID pair */
	struct mad_path_record p;
	uint64_t pmask;
	mpr_as_path(req, mask, &p, &pmask);
	uint32_t limit = (mask & MPR_COMP_NUMB_PATH) && req[5] & 0x7f ? req[5] & 0x7f : 127;
	if (sel != SA_INDEP_NONE)
		return mpr_independent(rq, gids, ns, nd, &p, pmask, sel, limit, out);
	mpr_collect(rq, gids, ns, nd, &p, pmask, limit, out, NULL);
	return 0;
}
