/* SLtoVLMappingTableRecord and VLArbitrationTableRecord: the tables sm/vl.c programmed.
 *
 * These select for themselves instead of going through the generic component filter, for
 * two reasons: a CA port is named by its LID alone (clients give port 0 and OpenSM answers
 * with the CA's port, so osmtest and saquery depend on it), and a switch holds (ports + 1)^2
 * SL-to-VL tables, too many to build for every Get. Tables the SM did not set read as zeros,
 * as OpenSM reports tables it never read. */
#include <string.h>

#include "sa/sa_int.h"

/* Component bits (IBA 15.2.5.4 and 15.2.5.9). */
#define SL2VL_LID      (1u << 0)
#define SL2VL_IN_PORT  (1u << 1)
#define SL2VL_OUT_PORT (1u << 2)
#define VLARB_LID      (1u << 0)
#define VLARB_OUT_PORT (1u << 1)
#define VLARB_BLOCK    (1u << 2)

/* Past what one transfer carries the answer is NO_RESOURCES anyway (sa.c): stop building. */
static bool full(const struct sa_records *out)
{
	return (size_t)out->n * out->stride > MAD_RMPP_MAX_BYTES;
}

/* The SM keeps a table as 16 nibbles, SL0 in the top one. */
static void unpack_sl2vl(uint64_t v, struct mad_sl2vl_table *tbl)
{
	for (unsigned sl = 0; sl < 16; sl++)
		tbl->vl[sl] = (uint8_t)((v >> (60 - 4 * sl)) & 0xf);
}

/* The nodes to look at: the one holding the requested LID, or all. For a CA, *only_port is
 * the port that holds it (TOPO_NONE: every port with a LID). false: no such LID. */
static bool nodes_of(const struct sa *sa, bool by_lid, uint16_t lid, uint32_t *first,
                     uint32_t *last, uint32_t *only_port)
{
	const struct topo *t = sa->t;
	*only_port = TOPO_NONE;
	if (!by_lid) {
		*first = 0;
		*last = t->nnodes;
		return true;
	}
	if (!lid || lid >= TOPO_LID_COUNT || t->lid_port[lid] == TOPO_NONE)
		return false;
	uint32_t p = t->lid_port[lid];
	*first = t->ports[p].node;
	*last = *first + 1;
	if (!topo_is_switch(t, *first))
		*only_port = p;
	return true;
}

void sa_select_sl2vl_records(const struct sa_req *rq, const uint8_t *req, uint64_t mask,
                             struct sa_records *out)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	struct mad_sl2vl_record q;
	if (mad_sl2vl_record_decode(req, mad_sl2vl_record_layout.size, &q, NULL) < 0)
		return;
	uint32_t first, last, only;
	if (!nodes_of(sa, mask & SL2VL_LID, q.lid, &first, &last, &only))
		return;
	for (uint32_t node = first; node < last && !full(out); node++) {
		const struct topo_node *n = &t->nodes[node];
		if (!n->present)
			continue;
		if (!topo_is_switch(t, node)) {
			/* one table per CA port; the ports of the request do not apply */
			for (unsigned num = 1; num <= n->nports; num++) {
				uint32_t p = n->first_port + num;
				if ((only != TOPO_NONE && p != only) || !t->ports[p].lid ||
				    !sa_visible(rq, p))
					continue;
				struct mad_sl2vl_record r = {.lid = t->ports[p].lid};
				unpack_sl2vl(topo_sl2vl_of(t, p, 0), &r.table);
				uint8_t *rec = sa_records_add(out);
				if (rec)
					mad_sl2vl_record_encode(&r, rec, out->size, NULL);
			}
			continue;
		}
		if (!sa_visible(rq, n->first_port))
			continue;
		unsigned in0 = 0, in1 = n->nports, out0 = 0, out1 = n->nports;
		if (mask & SL2VL_IN_PORT)
			in0 = in1 = q.in_port;
		if (mask & SL2VL_OUT_PORT)
			out0 = out1 = q.out_port;
		for (unsigned o = out0; o <= out1 && o <= n->nports; o++) {
			for (unsigned i = in0; i <= in1 && i <= n->nports; i++) {
				struct mad_sl2vl_record r = {.lid = t->ports[n->first_port].lid,
				                             .in_port = (uint8_t)i,
				                             .out_port = (uint8_t)o};
				unpack_sl2vl(topo_sl2vl_of(t, n->first_port + o, i), &r.table);
				uint8_t *rec = sa_records_add(out);
				if (rec)
					mad_sl2vl_record_encode(&r, rec, out->size, NULL);
			}
		}
	}
}

static void add_vlarb(const struct topo *t, uint32_t p, uint16_t lid, unsigned block,
                      struct sa_records *out)
{
	struct mad_vlarb_record r = {
	    .lid = lid, .out_port = t->ports[p].num, .block_num = (uint8_t)block};
	uint16_t idx = t->ports[p].vlarb[block - 1];
	if (idx && idx <= t->nvlarb)
		r.table = t->vlarb[idx - 1];
	uint8_t *rec = sa_records_add(out);
	if (rec)
		mad_vlarb_record_encode(&r, rec, out->size, NULL);
}

void sa_select_vlarb_records(const struct sa_req *rq, const uint8_t *req, uint64_t mask,
                             struct sa_records *out)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	struct mad_vlarb_record q;
	if (mad_vlarb_record_decode(req, mad_vlarb_record_layout.size, &q, NULL) < 0)
		return;
	uint32_t first, last, only;
	if (!nodes_of(sa, mask & VLARB_LID, q.lid, &first, &last, &only))
		return;
	unsigned b0 = 1, b1 = 4;
	if (mask & VLARB_BLOCK)
		b0 = b1 = q.block_num;
	for (uint32_t node = first; node < last && !full(out); node++) {
		const struct topo_node *n = &t->nodes[node];
		if (!n->present)
			continue;
		bool sw = topo_is_switch(t, node);
		unsigned p0 = sw ? 0 : 1, p1 = n->nports;
		if (sw && (mask & VLARB_OUT_PORT))
			p0 = p1 = q.out_port;
		for (unsigned num = p0; num <= p1 && num <= n->nports; num++) {
			uint32_t p = n->first_port + num;
			if (!sw && ((only != TOPO_NONE && p != only) || !t->ports[p].lid))
				continue; /* a CA port is named by its LID; its number does not
				             apply */
			if (!sa_visible(rq, p))
				continue;
			uint16_t lid = t->ports[topo_lid_port(t, p)].lid;
			for (unsigned b = b0; b <= b1 && b >= 1 && b <= 4; b++)
				add_vlarb(t, p, lid, b, out);
		}
	}
}
