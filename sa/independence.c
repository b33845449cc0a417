/* Whether two paths fail together (APM): a path is judged with its way back, since a
 * connection's acknowledgements return by the reverse path, and two paths are independent
 * when they share no cable (or, asked for, no switch either) beyond what their common ends
 * force on both. Used by MultiPathRecord's IndependenceSelector (sa/multipath.c) and by the
 * order of a port pair's LMC PathRecords (sa/path.c), from the tables the switches hold. */
#include "sa/sa_int.h"

/* The switch a port's traffic is at: its own node for a switch, NONE for a CA's port. */
static uint32_t switch_of(const struct topo *t, uint32_t p)
{
	uint32_t n = t->ports[p].node;
	return topo_is_switch(t, n) ? n : TOPO_NONE;
}

/* The cable a port leaves by, named by the lower port index of its two ends. */
static uint32_t cable_of(const struct topo *t, uint32_t p)
{
	uint32_t q = topo_reader_peer(t, p);
	return q != TOPO_NONE && q < p ? q : p;
}

bool sa_cand_trace(const struct topo *t, uint32_t s, uint32_t d, uint16_t slid, uint16_t dlid,
                   struct sa_cand *c)
{
	c->s = s;
	c->d = d;
	c->nhops[0] = c->nhops[1] = 0;
	struct sa_trace pa;
	if (!sa_trace(t, s, dlid, &pa, c->hops[0], &c->nhops[0]) ||
	    !sa_trace(t, d, slid, &pa, c->hops[1], &c->nhops[1])) {
		c->nhops[0] = c->nhops[1] = 0;
		return false;
	}
	return true;
}

/* An end both paths have may be shared, with what cannot be avoided at it: a CA port's
 * cable and the switch it is cabled to, or the switch that is the end itself. */
static bool shared_end_allows(const struct topo *t, const struct sa_cand *a,
                              const struct sa_cand *b, uint32_t cable, uint32_t sw)
{
	const uint32_t ends[2] = {a->s, a->d};
	for (unsigned i = 0; i < 2; i++) {
		uint32_t e = ends[i];
		if (e != b->s && e != b->d)
			continue;
		uint32_t at = switch_of(t, e);
		if (at == TOPO_NONE) {
			uint32_t peer = topo_reader_peer(t, e);
			at = peer == TOPO_NONE ? TOPO_NONE : t->ports[peer].node;
			if (cable != TOPO_NONE && cable == cable_of(t, e))
				return true;
		}
		if (sw != TOPO_NONE && sw == at)
			return true;
	}
	return false;
}

unsigned sa_cand_shared(const struct topo *t, const struct sa_cand *a, const struct sa_cand *b,
                        unsigned sel, unsigned enough)
{
	unsigned n = 0;
	for (unsigned da = 0; da < 2; da++)
		for (unsigned i = 0; i < a->nhops[da]; i++) {
			uint32_t x = a->hops[da][i], cx = cable_of(t, x), sx = switch_of(t, x);
			for (unsigned db = 0; db < 2; db++)
				for (unsigned j = 0; j < b->nhops[db]; j++) {
					uint32_t y = b->hops[db][j];
					if (cx == cable_of(t, y) &&
					    !shared_end_allows(t, a, b, cx, TOPO_NONE))
						n++;
					else if (sel == SA_INDEP_NODE && sx != TOPO_NONE &&
					         sx == switch_of(t, y) &&
					         !shared_end_allows(t, a, b, TOPO_NONE, sx))
						n++;
					if (n >= enough)
						return n;
				}
		}
	return n;
}

bool sa_cand_conflict(const struct topo *t, const struct sa_cand *a, const struct sa_cand *b,
                      unsigned sel)
{
	return sa_cand_shared(t, a, b, sel, 1) > 0;
}
