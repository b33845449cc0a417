/* The SA's records of virtual ports (IBA Annex A18): a VF is a node and a port of its own to
 * the SA, at the LID it answers to. NodeRecords for every VF whose virtual node was read; the
 * port-level records (PortInfo, GUIDInfo, P_KeyTable) only for a VF with a LID of its own, as
 * one that shares its PF's LID is the PF's port to whoever addresses it by LID. */
#include <string.h>

#include "sa/sa_int.h"

/* A vport to answer about: read, with a LID (its own when own_lid), matching the request's
 * LID, and visible to the requester. Its LID, 0 when not. */
static uint16_t vport_shown(const struct sa_req *rq, uint32_t v, bool own_lid)
{
	const struct topo *t = rq->sa->t;
	const struct topo_vport *vp = &t->vports.v[v];
	uint16_t lid = own_lid ? (vp->lid_required ? vp->lid : 0) : topo_vport_lid(t, v);
	if (!lid || (rq->only_lid && rq->only_lid != lid) || !sa_visible(rq, t->nports + v))
		return 0;
	return lid;
}

/* The port number a VF's records carry: its port on its virtual node, once read. */
static uint8_t vport_num(const struct topo *t, const struct topo_vport *vp)
{
	return vp->node_guid ? vp->local_port : t->ports[vp->port].num;
}

/* A VF's NodeRecord: its virtual node as VNodeInfo gave it, at the LID it answers to, its
 * device its HCA's, its description VNodeDescription's (its HCA's until that is read). */
void sa_build_vport_node_records(const struct sa_req *rq, struct sa_records *out)
{
	const struct topo *t = rq->sa->t;
	for (uint32_t v = 0; v < t->vports.n; v++) {
		const struct topo_vport *vp = &t->vports.v[v];
		uint16_t lid = vp->node_guid ? vport_shown(rq, v, false) : 0;
		if (!lid)
			continue;
		const struct topo_node *node = &t->nodes[t->ports[vp->port].node];
		struct mad_node_record nr = {.lid = lid, .info = node->ni};
		nr.info.node_type = NODE_TYPE_CA;
		nr.info.num_ports = vp->num_ports;
		nr.info.node_guid = vp->node_guid;
		nr.info.port_guid = vp->guid;
		nr.info.partition_cap = vp->pkey_cap;
		nr.info.local_port_num = vp->local_port;
		memcpy(nr.desc.desc, vp->desc[0] ? vp->desc : node->desc, sizeof(nr.desc.desc));
		uint8_t *rec = sa_records_add(out);
		if (rec)
			mad_node_record_encode(&nr, rec, out->size, NULL);
	}
}

/* A VF's PortInfoRecord: its physical port's link (the VF has no link of its own), its own
 * LID (LMC 0), state and GUIDCap; never an M_Key, which a vport does not have. */
void sa_build_vport_port_info_records(const struct sa_req *rq, struct sa_records *out)
{
	const struct topo *t = rq->sa->t;
	for (uint32_t v = 0; v < t->vports.n; v++) {
		const struct topo_vport *vp = &t->vports.v[v];
		uint16_t lid = vport_shown(rq, v, true);
		if (!lid)
			continue;
		struct mad_port_info_record r = {
		    .lid = lid, .port_num = vport_num(t, vp), .info = t->ports[vp->port].pi};
		r.info.lid = lid;
		r.info.lmc = 0;
		r.info.mkey = 0;
		r.info.port_state = vp->state;
		r.info.local_port_num = r.port_num;
		r.info.guid_cap = vp->guid_cap;
		uint8_t *rec = sa_records_add(out);
		if (rec)
			mad_port_info_record_encode(&r, rec, out->size, NULL);
	}
}

/* A VF's GUIDInfo blocks up to its GUIDCap: its own GUID at index 0. */
void sa_build_vport_guid_info_records(const struct sa_req *rq, struct sa_records *out)
{
	const struct topo *t = rq->sa->t;
	for (uint32_t v = 0; v < t->vports.n; v++) {
		const struct topo_vport *vp = &t->vports.v[v];
		uint16_t lid = vport_shown(rq, v, true);
		if (!lid)
			continue;
		unsigned blocks = vp->guid_cap ? (vp->guid_cap + 7u) / 8u : 1u;
		for (unsigned b = 0; b < blocks; b++) {
			struct mad_guid_info_record r = {.lid = lid, .block_num = (uint8_t)b};
			if (b == 0)
				r.info.guid[0] = vp->guid;
			uint8_t *rec = sa_records_add(out);
			if (rec)
				mad_guid_info_record_encode(&r, rec, out->size, NULL);
		}
	}
}

/* A VF's P_Key table up to its PartitionCap, as the policy gives it (what the SM writes with
 * VPortPKeyTable), in blocks of 32. */
void sa_build_vport_pkey_records(const struct sa_req *rq, struct sa_records *out)
{
	const struct topo *t = rq->sa->t;
	for (uint32_t v = 0; v < t->vports.n; v++) {
		const struct topo_vport *vp = &t->vports.v[v];
		uint16_t lid = vport_shown(rq, v, true);
		if (!lid || !vp->pkey_cap)
			continue;
		unsigned nk;
		const uint16_t *keys = topo_port_pkeys(t, t->nports + v, &nk);
		for (unsigned b = 0; b < (vp->pkey_cap + 31u) / 32u; b++) {
			struct mad_pkey_table_record r = {
			    .lid = lid, .port_num = vport_num(t, vp), .block_num = (uint16_t)b};
			sa_pkey_block(keys, nk, b, &r.table);
			uint8_t *rec = sa_records_add(out);
			if (rec)
				mad_pkey_table_record_encode(&r, rec, out->size, NULL);
		}
	}
}
