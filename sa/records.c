/* The SA's records, built from the SM's topology: one builder per record family. */
#include <string.h>

#include "sa/sa_int.h"

static uint16_t node_lid(const struct topo *t, uint32_t port)
{
	return t->ports[topo_lid_port(t, port)].lid;
}

/* One NodeRecord per switch, one per CA port that has a LID (as OpenSM), one per VF whose
 * virtual node was read. */
void sa_build_node_records(const struct sa_req *rq, struct sa_records *out)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	for (uint32_t n = 0; n < t->nnodes; n++) {
		const struct topo_node *node = &t->nodes[n];
		if (!node->present)
			continue;
		for (unsigned p = 0; p <= node->nports; p++) {
			const struct topo_port *port = &t->ports[node->first_port + p];
			bool sw = node->type == NODE_TYPE_SWITCH;
			if (sw ? p != 0 : (p == 0 || !port->lid))
				continue;
			if ((rq->only_lid && rq->only_lid != port->lid) ||
			    !sa_visible(rq, node->first_port + p))
				continue;
			struct mad_node_record nr = {.lid = port->lid, .info = node->ni};
			nr.info.port_guid = sw ? node->guid : port->guid;
			nr.info.local_port_num = (uint8_t)p;
			memcpy(nr.desc.desc, node->desc, sizeof(nr.desc.desc));
			uint8_t *rec = sa_records_add(out);
			if (rec)
				mad_node_record_encode(&nr, rec, out->size, NULL);
		}
	}
	sa_build_vport_node_records(rq, out);
}

/* Every port of every switch (the switch's LID), every CA port with a LID. */
void sa_build_port_info_records(const struct sa_req *rq, struct sa_records *out)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct topo_port *port = &t->ports[p];
		const struct topo_node *node = &t->nodes[port->node];
		if (!node->present || !port->known)
			continue;
		bool sw = node->type == NODE_TYPE_SWITCH;
		if ((!sw && !port->lid) || (rq->only_lid && rq->only_lid != node_lid(t, p)) ||
		    !sa_visible(rq, p))
			continue;
		struct mad_port_info_record r = {
		    .lid = node_lid(t, p), .port_num = port->num, .info = port->pi};
		/* the M_Key only to a trusted requester (IBA 15.2.5.3, as OpenSM answers): with
		 * it any host could rewrite the port. Blanked before the record is matched
		 * against the request, so that its M_Key component is no oracle either. */
		if (!rq->trusted)
			r.info.mkey = 0;
		uint8_t *rec = sa_records_add(out);
		if (rec)
			mad_port_info_record_encode(&r, rec, out->size, NULL);
	}
	sa_build_vport_port_info_records(rq, out);
}

/* Both directions of every link between present nodes. */
void sa_build_link_records(const struct sa_req *rq, struct sa_records *out)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct topo_port *port = &t->ports[p];
		if (port->peer == TOPO_NONE || !t->nodes[port->node].present ||
		    !sa_visible(rq, p) || !sa_visible(rq, port->peer))
			continue;
		struct mad_link_record r = {.from_lid = node_lid(t, p),
		                            .from_port = port->num,
		                            .to_port = t->ports[port->peer].num,
		                            .to_lid = node_lid(t, port->peer)};
		uint8_t *rec = sa_records_add(out);
		if (rec)
			mad_link_record_encode(&r, rec, out->size, NULL);
	}
}

void sa_build_switch_info_records(const struct sa_req *rq, struct sa_records *out)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	for (uint32_t s = 0; s < t->nsws; s++) {
		const struct topo_switch *sw = &t->sws[s];
		const struct topo_node *node = &t->nodes[sw->node];
		if (!node->present)
			continue;
		struct mad_switch_info_record r = {.lid = t->ports[node->first_port].lid,
		                                   .info = sw->si};
		uint8_t *rec = sa_records_add(out);
		if (rec)
			mad_switch_info_record_encode(&r, rec, out->size, NULL);
	}
}

/* The blocks each switch holds, as programmed, up to its LinearFDBTop. */
void sa_build_lft_records(const struct sa_req *rq, struct sa_records *out)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	for (uint32_t s = 0; s < t->nsws; s++) {
		const struct topo_switch *sw = &t->sws[s];
		const struct topo_node *node = &t->nodes[sw->node];
		if (!node->present || !sw->lft_hw ||
		    (rq->only_lid && rq->only_lid != t->ports[node->first_port].lid))
			continue;
		for (uint32_t b = 0; b * 64 <= sw->lft_top && b * 64 < sw->lft_hw_size; b++) {
			struct mad_lft_record r = {.lid = t->ports[node->first_port].lid,
			                           .block_num = (uint16_t)b};
			memcpy(r.lft.port, sw->lft_hw + b * 64, 64);
			uint8_t *rec = sa_records_add(out);
			if (rec)
				mad_lft_record_encode(&r, rec, out->size, NULL);
		}
	}
}

/* The MFT blocks the SM programmed: for each switch, every 32-MLID block up to the highest
 * MLID it holds an entry for, each position (16 ports) of it. */
void sa_build_mft_records(const struct sa_req *rq, struct sa_records *out)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	for (uint32_t s = 0; s < t->nsws; s++) {
		const struct topo_switch *sw = &t->sws[s];
		const struct topo_node *node = &t->nodes[sw->node];
		if (!node->present || !sw->mft_hw ||
		    (rq->only_lid && rq->only_lid != t->ports[node->first_port].lid))
			continue;
		uint32_t top = 0; /* blocks in use */
		for (uint32_t i = 0; i < sw->mft_mlids; i++)
			for (unsigned pos = 0; pos < sw->mft_pos; pos++)
				if (sw->mft_hw[(size_t)i * sw->mft_pos + pos])
					top = i / 32 + 1;
		uint16_t lid = t->ports[node->first_port].lid;
		for (uint32_t b = 0; b < top; b++) {
			for (unsigned pos = 0; pos < sw->mft_pos; pos++) {
				struct mad_mft_record r = {
				    .lid = lid, .position = (uint8_t)pos, .block_num = (uint16_t)b};
				for (unsigned j = 0; j < 32; j++)
					r.mft.mask[j] =
					    sw->mft_hw[((size_t)b * 32 + j) * sw->mft_pos + pos];
				uint8_t *rec = sa_records_add(out);
				if (rec)
					mad_mft_record_encode(&r, rec, out->size, NULL);
			}
		}
	}
}

/* Every block of each CA port's P_Key table up to the node's PartitionCap, as programmed
 * (the keys the policy gives it, 32 a block, then empty blocks); the tables of the switch
 * ports that face CAs, and of switch management ports the policy gives keys. Other switch
 * ports keep tables the SM neither sets nor reads. */
void sa_build_pkey_records(const struct sa_req *rq, struct sa_records *out)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct topo_port *port = &t->ports[p];
		const struct topo_node *node = &t->nodes[port->node];
		if (!node->present)
			continue;
		if (node->type == NODE_TYPE_SWITCH && port->num == 0 && port->pkey_sig) {
			/* a management port the policy gave keys (all_switches): as set */
			struct mad_pkey_table_record r = {.lid = port->lid};
			if ((rq->only_lid && rq->only_lid != r.lid) || !sa_visible(rq, p))
				continue;
			unsigned nk;
			const uint16_t *keys = topo_port_pkeys(t, p, &nk);
			for (unsigned b = 0; b < (nk + 31u) / 32u; b++) {
				r.block_num = (uint16_t)b;
				sa_pkey_block(keys, nk, b, &r.table);
				uint8_t *rec = sa_records_add(out);
				if (rec)
					mad_pkey_table_record_encode(&r, rec, out->size, NULL);
			}
			continue;
		}
		if (node->type == NODE_TYPE_SWITCH) {
			struct mad_pkey_table_record r = {.lid = t->ports[node->first_port].lid,
			                                  .port_num = port->num};
			if (!port->pkey_sig || (rq->only_lid && rq->only_lid != r.lid) ||
			    !sa_visible(rq, p) || !topo_switch_port_pkeys(t, p, r.table.pkey, 32))
				continue;
			unsigned cap = t->sws[node->sw].si.partition_enforcement_cap;
			for (unsigned b = 0; b < (cap + 31u) / 32u; b++) {
				r.block_num = (uint16_t)b;
				if (b == 1)
					memset(&r.table, 0, sizeof(r.table));
				uint8_t *rec = sa_records_add(out);
				if (rec)
					mad_pkey_table_record_encode(&r, rec, out->size, NULL);
			}
			continue;
		}
		if (!port->lid || (rq->only_lid && rq->only_lid != port->lid) || !sa_visible(rq, p))
			continue;
		unsigned blocks =
		    node->ni.partition_cap ? (node->ni.partition_cap + 31u) / 32u : 1u;
		for (unsigned b = 0; b < blocks; b++) {
			struct mad_pkey_table_record r = {
			    .lid = port->lid, .port_num = port->num, .block_num = (uint16_t)b};
			unsigned nk;
			const uint16_t *keys = topo_port_pkeys(t, p, &nk);
			sa_pkey_block(keys, nk, b, &r.table);
			uint8_t *rec = sa_records_add(out);
			if (rec)
				mad_pkey_table_record_encode(&r, rec, out->size, NULL);
		}
	}
	sa_build_vport_pkey_records(rq, out);
}

/* Every GUIDInfo block up to each port's GUIDCap, for CA and router ports and switch port 0
 * (the ports that have GIDs); index 0 is the port GUID, alias GUIDs are not assigned yet. */
void sa_build_guid_info_records(const struct sa_req *rq, struct sa_records *out)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct topo_port *port = &t->ports[p];
		const struct topo_node *node = &t->nodes[port->node];
		if (!node->present || !port->lid ||
		    (node->type == NODE_TYPE_SWITCH && port->num != 0) ||
		    (rq->only_lid && rq->only_lid != port->lid) || !sa_visible(rq, p))
			continue;
		unsigned blocks = port->pi.guid_cap ? (port->pi.guid_cap + 7u) / 8u : 1u;
		for (unsigned b = 0; b < blocks; b++) {
			struct mad_guid_info_record r = {.lid = port->lid, .block_num = (uint8_t)b};
			for (unsigned i = 0; i < 8; i++)
				r.info.guid[i] =
				    b == 0 && i == 0
				        ? (node->type == NODE_TYPE_SWITCH ? node->guid : port->guid)
				        : topo_alias_at(t, p, b * 8 + i);
			uint8_t *rec = sa_records_add(out);
			if (rec)
				mad_guid_info_record_encode(&r, rec, out->size, NULL);
		}
	}
	sa_build_vport_guid_info_records(rq, out);
}

/* This SM, and the other SMs it knows of. */
void sa_build_sm_info_records(const struct sa_req *rq, struct sa_records *out)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	if (t->sm_port == TOPO_NONE)
		return;
	struct mad_sm_info_record r = {
	    .lid = t->ports[t->sm_port].lid,
	    .info = sm_info(sa->sm),
	};
	uint8_t *rec = sa_records_add(out);
	if (rec)
		mad_sm_info_record_encode(&r, rec, out->size, NULL);
	/* and every other SM it knows of, foreign ones included: an SM with a key that is
	 * not ours shows here as what it claims to be, which is the alarm an operator sees */
	for (uint32_t i = 0; i < sm_remote_count(sa->sm); i++) {
		struct sm_remote_info ri;
		if (!sm_remote_get(sa->sm, i, &ri) || !ri.answered || !ri.lid)
			continue;
		struct mad_sm_info_record o = {.lid = ri.lid, .info = ri.info};
		rec = sa_records_add(out);
		if (rec)
			mad_sm_info_record_encode(&o, rec, out->size, NULL);
	}
}
