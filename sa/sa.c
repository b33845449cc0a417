/* The SA agent: decode, check, select, answer. See sa.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "sa/sa_int.h"

#define SA_CAP_MASK 0x2602 /* as OpenSM: traps and notices, multicast, reinit */

struct sa_attr {
	uint16_t id;
	const struct mad_layout *layout;
	sa_build_fn build;   /* every record, then the component filter picks */
	sa_select_fn select; /* or: picks the records itself */
};                           /* neither: computed per request (PathRecord) */

static const struct sa_attr attrs[] = {
    {MAD_ATTR_NODE_RECORD, &mad_node_record_layout, sa_build_node_records, NULL},
    {MAD_ATTR_PORT_INFO_RECORD, &mad_port_info_record_layout, sa_build_port_info_records, NULL},
    {MAD_ATTR_LINK_RECORD, &mad_link_record_layout, sa_build_link_records, NULL},
    {MAD_ATTR_SWITCH_INFO_RECORD, &mad_switch_info_record_layout, sa_build_switch_info_records,
     NULL},
    {MAD_ATTR_LFT_RECORD, &mad_lft_record_layout, sa_build_lft_records, NULL},
    {MAD_ATTR_MFT_RECORD, &mad_mft_record_layout, sa_build_mft_records, NULL},
    {MAD_ATTR_PKEY_TABLE_RECORD, &mad_pkey_table_record_layout, sa_build_pkey_records, NULL},
    {MAD_ATTR_GUID_INFO_RECORD, &mad_guid_info_record_layout, sa_build_guid_info_records, NULL},
    {MAD_ATTR_SM_INFO_RECORD, &mad_sm_info_record_layout, sa_build_sm_info_records, NULL},
    {MAD_ATTR_PATH_RECORD, &mad_path_record_layout, NULL, NULL},
    {MAD_ATTR_SERVICE_RECORD, &mad_service_record_layout, sa_build_service_records, NULL},
    {MAD_ATTR_INFORM_INFO_RECORD, &mad_inform_info_record_layout, sa_build_inform_records, NULL},
    {MAD_ATTR_SL2VL_RECORD, &mad_sl2vl_record_layout, NULL, sa_select_sl2vl_records},
    {MAD_ATTR_VLARB_RECORD, &mad_vlarb_record_layout, NULL, sa_select_vlarb_records},
};

#define NATTRS (sizeof(attrs) / sizeof(attrs[0]))
_Static_assert(sizeof(attrs) / sizeof(attrs[0]) == SA_NATTRS, "SA_NATTRS in sa_int.h");

/* PathRecord components (IBA 15.2.5.16): ServiceID counts as two. */
static const struct sa_components path_components = {
    .n = 23,
    .c = {{0, 32},   {32, 32}, {64, 128}, {192, 128}, {320, 16}, {336, 16}, {352, 1},  {353, 3},
          {356, 20}, {376, 8}, {384, 8},  {392, 1},   {393, 7},  {400, 16}, {416, 12}, {428, 4},
          {432, 2},  {434, 6}, {440, 2},  {442, 6},   {448, 2},  {450, 6},  {456, 8}},
};

/* A table refused (BUSY, NO_RESOURCES): the status alone, as a GetResp like other errors. */
static void send_refusal(struct sa *sa, const struct mad_addr *addr, struct mad_sa_hdr h,
                         uint16_t status)
{
	uint8_t hdr[MAD_SIZE] = {0};
	h.hdr.status = status;
	h.hdr.method = MAD_METHOD_GET_RESP;
	h.attr_offset = 0;
	mad_sa_hdr_encode(&h, hdr, sizeof(hdr), NULL);
	mad_dispatcher_respond(sa->sm->d, addr, hdr, MAD_SIZE);
}

static void send_answer(struct sa *sa, const struct mad_addr *to, const struct mad_sa_hdr *req,
                        uint8_t method, uint16_t status, const struct sa_records *recs, bool table)
{
	struct mad_sa_hdr h = *req;
	h.hdr.method = method;
	h.hdr.status = status;
	h.rmpp = (struct mad_rmpp_hdr){0};
	h.sm_key = 0;
	h.attr_offset = recs ? (uint16_t)(recs->stride / 8) : 0;
	uint8_t hdr[MAD_SIZE] = {0};
	mad_sa_hdr_encode(&h, hdr, sizeof(hdr), NULL);
	struct mad_addr addr = *to;
	addr.qkey = QP1_QKEY;
	size_t len = table && recs ? (size_t)recs->n * recs->stride : 0;
	size_t held = table ? mad_dispatcher_rmpp_bytes(sa->sm->d) : 0;
	uint16_t refuse = 0;
	if (table && !status && len > MAD_RMPP_MAX_BYTES) {
		/* beyond what one transfer carries (a whole-fabric SL-to-VL table of tens of
		 * thousands of hosts): say so, rather than nothing */
		log_notice(
		    sa->sm->log, "sa",
		    "a table of %u or more records (%zu MB) for LID %u is more than one transfer "
		    "carries (%u MB): answered NO_RESOURCES; a query with a narrower "
		    "component mask (a LID) gets its part",
		    recs->n, len >> 20, to->lid, MAD_RMPP_MAX_BYTES >> 20);
		refuse = MAD_STATUS_SA_NO_RESOURCES;
		sa->st.errors++;
	} else if (table && !status &&
	           (mad_dispatcher_rmpp_active(sa->sm->d) >= SA_MAX_TRANSFERS ||
	            (held && held + len > SA_MAX_TRANSFER_BYTES))) {
		/* Too many tables, or too many bytes of them, on their way already: say BUSY, so
		 * the client retries later, rather than take memory without bound or drop the
		 * request unanswered. One table alone always goes. */
		sa->st.busy++;
		refuse = MAD_STATUS_BUSY;
	}
	if (status)
		sa->st.errors += status != MAD_STATUS_SA_NO_RECORDS;
	else if (!refuse)
		sa->st.answered++;
	if (refuse) {
		send_refusal(sa, &addr, h, refuse);
		return;
	}
	if (table && !status) {
		/* GetTableResp always goes by RMPP, even with one segment */
		int r = mad_dispatcher_respond_rmpp(sa->sm->d, &addr, hdr, MAD_SA_HDR_END,
		                                    recs ? recs->buf : NULL, len);
		if (r < 0) {
			log_warn(sa->sm->log, "sa", "a table for LID %u could not be sent: %s",
			         to->lid, strerror(-r));
			send_refusal(sa, &addr, h, MAD_STATUS_SA_NO_RESOURCES);
		}
		return;
	}
	if (recs && recs->n)
		memcpy(hdr + MAD_SA_HDR_END, recs->buf, recs->size);
	mad_dispatcher_respond(sa->sm->d, &addr, hdr, MAD_SIZE);
}

static void answer_error(struct sa *sa, const struct mad_addr *to, const struct mad_sa_hdr *req,
                         uint16_t status)
{
	uint8_t method = (uint8_t)(req->hdr.method | MAD_METHOD_RESP);
	/* SubnAdmSet is answered by GetResp (IBA 15.2.2); errors to a GetTable come back as
	 * GetResp too, as OpenSM sends them */
	if (req->hdr.method == MAD_METHOD_GET_TABLE || req->hdr.method == MAD_METHOD_SET)
		method = MAD_METHOD_GET_RESP;
	send_answer(sa, to, req, method, status, NULL, false);
}

static void class_port_info(struct sa *sa, const struct mad_addr *from, const struct mad_sa_hdr *h)
{
	struct sa_records one = {.size = 72, .stride = 72};
	uint8_t *rec = sa_records_add(&one);
	if (!rec)
		return;
	struct mad_class_port_info cpi = {
	    .base_version = 1,
	    .class_version = 2,
	    .capability_mask = SA_CAP_MASK,
	    .resp_time_value = 18,
	};
	mad_class_port_info_encode(&cpi, rec, 72, NULL);
	send_answer(sa, from, h, MAD_METHOD_GET_RESP, 0, &one, false);
	sa_records_free(&one);
}

/* MCMemberRecord: joins and leaves answer the one record, queries as other records do. */
static void mcmember(struct sa *sa, const struct mad_addr *from, const struct mad_sa_hdr *h,
                     const uint8_t *req)
{
	uint8_t m = h->hdr.method;
	if (m != MAD_METHOD_GET && m != MAD_METHOD_GET_TABLE && m != MAD_METHOD_SET &&
	    m != MAD_METHOD_DELETE) {
		answer_error(sa, from, h, MAD_STATUS_UNSUP_METHOD_ATTR);
		return;
	}
	if (h->comp_mask >> 18) {
		answer_error(sa, from, h, MAD_STATUS_SA_REQ_INVALID); /* beyond ProxyJoin */
		return;
	}
	struct sa_records out = {.size = mad_mcmember_record_layout.size,
	                         .stride = mad_sa_record_stride(&mad_mcmember_record_layout)};
	sa->why = NULL;
	uint16_t st = sa_mcast_request(sa, h, req, &out);
	if (st && sa->why)
		log_info(sa->sm->log, "sa",
		         "MCMemberRecord %s from LID %u refused (status 0x%04x): %s",
		         m == MAD_METHOD_SET ? "join" : "leave", from->lid, st, sa->why);
	if (!st && m == MAD_METHOD_GET && out.n != 1)
		st = out.n ? MAD_STATUS_SA_TOO_MANY_RECORDS : MAD_STATUS_SA_NO_RECORDS;
	if (st == MAD_STATUS_SA_NO_RECORDS)
		sa->st.no_records++;
	if (st)
		answer_error(sa, from, h, st);
	else if (m == MAD_METHOD_GET_TABLE)
		send_answer(sa, from, h, MAD_METHOD_GET_TABLE_RESP, 0, &out, true);
	else
		send_answer(sa, from, h,
		            m == MAD_METHOD_DELETE ? MAD_METHOD_DELETE_RESP : MAD_METHOD_GET_RESP,
		            0, &out, false);
	sa_records_free(&out);
}

static void on_sa_request(struct mad_dispatcher *d, const struct mad_addr *from, const uint8_t *mad,
                          size_t len, void *ctx)
{
	(void)d;
	struct sa *sa = ctx;
	struct mad_sa_hdr h;
	struct mad_error err;
	sa->st.requests++;
	if (mad_sa_hdr_decode(mad, len, &h, &err) < 0) {
		sa->st.malformed++;
		log_info(sa->sm->log, "sa", "dropped a request from LID %u: %s", from->lid,
		         err.msg);
		return;
	}
	if (h.hdr.class_version != MAD_CLASS_VERSION_SA) {
		answer_error(sa, from, &h, MAD_STATUS_BAD_VERSION);
		return;
	}
	if (len < MAD_SIZE) {
		/* a record cut short: say so rather than read what is not there */
		sa->st.malformed++;
		answer_error(sa, from, &h, MAD_STATUS_SA_REQ_INVALID);
		return;
	}
	if (h.hdr.attr_id == MAD_ATTR_CLASS_PORT_INFO) {
		if (h.hdr.method == MAD_METHOD_GET)
			class_port_info(sa, from, &h);
		else
			answer_error(sa, from, &h, MAD_STATUS_UNSUP_METHOD_ATTR);
		return;
	}
	sa->requester =
	    from->lid < SM_LID_COUNT ? sa->sm->topo.lid_port[from->lid] : (uint32_t)SM_NONE;
	if (h.sm_key && h.sm_key != sa->sm->cfg->sm_key) {
		/* IBA 15.4.1: a request with a wrong SM_Key is discarded, unanswered, so that
		 * keys cannot be guessed by their answers */
		sa->st.bad_key++;
		log_info(sa->sm->log, "sa",
		         "discarded a request from LID %u (attribute 0x%04x) with a wrong SM_Key",
		         from->lid, h.hdr.attr_id);
		return;
	}
	sa->trusted = h.sm_key != 0;
	if (h.hdr.attr_id == MAD_ATTR_MCMEMBER_RECORD) {
		mcmember(sa, from, &h, mad + MAD_SA_HDR_END);
		return;
	}
	if (h.hdr.attr_id == MAD_ATTR_MULTIPATH_RECORD) {
		if (h.hdr.method != MAD_METHOD_GET_MULTI) {
			answer_error(sa, from, &h, MAD_STATUS_UNSUP_METHOD_ATTR);
			return;
		}
		/* the request may come by RMPP: len covers all its GIDs */
		struct sa_records out = {.size = mad_path_record_layout.size,
		                         .stride = mad_sa_record_stride(&mad_path_record_layout)};
		uint16_t st = sa_multipaths(sa, mad + MAD_SA_HDR_END, len - MAD_SA_HDR_END,
		                            h.comp_mask, &out);
		if (st)
			answer_error(sa, from, &h, st);
		else
			send_answer(sa, from, &h, MAD_METHOD_GET_MULTI_RESP, 0, &out, true);
		sa_records_free(&out);
		return;
	}
	if (h.hdr.attr_id == MAD_ATTR_INFORM_INFO) {
		if (h.hdr.method != MAD_METHOD_SET) {
			answer_error(sa, from, &h, MAD_STATUS_UNSUP_METHOD_ATTR);
			return;
		}
		struct sa_records one = {.size = mad_inform_info_layout.size,
		                         .stride = mad_sa_record_stride(&mad_inform_info_layout)};
		uint8_t *rec = sa_records_add(&one);
		uint16_t st =
		    rec ? sa_inform_set(sa, from->lid, from->qpn, mad + MAD_SA_HDR_END, rec)
		        : MAD_STATUS_SA_NO_RESOURCES;
		if (st)
			answer_error(sa, from, &h, st);
		else
			send_answer(sa, from, &h, MAD_METHOD_GET_RESP, 0, &one, false);
		sa_records_free(&one);
		return;
	}
	const struct sa_attr *a = NULL;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (attrs[i].id == h.hdr.attr_id)
			a = &attrs[i];
	if (!a) {
		answer_error(sa, from, &h, MAD_STATUS_UNSUP_METHOD_ATTR);
		return;
	}
	if (a->id == MAD_ATTR_PKEY_TABLE_RECORD && !sa->trusted) {
		/* P_Key tables are for trusted requesters (IBA 15.4.1), as OpenSM answers */
		answer_error(sa, from, &h, MAD_STATUS_SA_REQ_INVALID);
		return;
	}
	bool table = h.hdr.method == MAD_METHOD_GET_TABLE;
	bool service = a->id == MAD_ATTR_SERVICE_RECORD;
	bool guids = a->id == MAD_ATTR_GUID_INFO_RECORD;
	bool change = h.hdr.method == MAD_METHOD_SET || h.hdr.method == MAD_METHOD_DELETE;
	if (h.hdr.method != MAD_METHOD_GET && !table && !(change && (service || guids))) {
		answer_error(sa, from, &h, MAD_STATUS_UNSUP_METHOD_ATTR);
		return;
	}
	const struct sa_components *cp = &sa->comps[a - attrs];
	if (cp->n < 64 && (h.comp_mask >> cp->n)) {
		/* bits beyond the record's components */
		answer_error(sa, from, &h, MAD_STATUS_SA_REQ_INVALID);
		return;
	}
	const uint8_t *req = mad + MAD_SA_HDR_END;
	if (change) {
		struct sa_records one = {.size = a->layout->size,
		                         .stride = mad_sa_record_stride(a->layout)};
		uint8_t *rec = sa_records_add(&one);
		uint16_t st = !rec    ? MAD_STATUS_SA_NO_RESOURCES
		              : guids ? sa_guidinfo_change(sa, h.hdr.method == MAD_METHOD_SET, req,
		                                           h.comp_mask, rec)
		              : h.hdr.method == MAD_METHOD_SET
		                  ? sa_service_set(sa, req, h.comp_mask, rec)
		                  : sa_service_delete(sa, req, h.comp_mask, rec);
		if (st)
			answer_error(sa, from, &h, st);
		else
			send_answer(sa, from, &h,
			            h.hdr.method == MAD_METHOD_SET ? MAD_METHOD_GET_RESP
			                                           : MAD_METHOD_DELETE_RESP,
			            0, &one, false);
		sa_records_free(&one);
		return;
	}
	struct sa_records all = {.size = a->layout->size,
	                         .stride = mad_sa_record_stride(a->layout)};
	struct sa_records sel = all;
	uint16_t status = 0;
	if (a->build) {
		/* records that begin with a LID: builders may leave out other LIDs' (a hint,
		 * the component filter below still decides) */
		sa->only_lid = 0;
		if ((h.comp_mask & 1) && cp->n && cp->c[0].bitoff == 0 && cp->c[0].bitlen == 16)
			sa->only_lid = (uint16_t)(req[0] << 8 | req[1]);
		a->build(sa, &all);
		sa->only_lid = 0;
		for (uint32_t i = 0; i < all.n; i++) {
			const uint8_t *rec = all.buf + (size_t)i * all.stride;
			if (!sa_components_match(cp, h.comp_mask, req, rec))
				continue;
			uint8_t *o = sa_records_add(&sel);
			if (o)
				memcpy(o, rec, all.stride);
		}
	} else if (a->select) {
		a->select(sa, req, h.comp_mask, &sel);
	} else {
		status = sa_paths(sa, req, h.comp_mask, table, &sel);
	}
	if (a->id == MAD_ATTR_SERVICE_RECORD)
		sa_service_hide_keys(&sel);
	if (!status && !table) {
		if (sel.n == 0)
			status = MAD_STATUS_SA_NO_RECORDS;
		else if (sel.n > 1 && (a->build || a->select))
			status = MAD_STATUS_SA_TOO_MANY_RECORDS;
	}
	if (status == MAD_STATUS_SA_NO_RECORDS)
		sa->st.no_records++;
	if (status)
		answer_error(sa, from, &h, status);
	else
		send_answer(sa, from, &h, table ? MAD_METHOD_GET_TABLE_RESP : MAD_METHOD_GET_RESP,
		            0, &sel, table);
	sa_records_free(&all);
	sa_records_free(&sel);
}

struct sa *sa_new(struct sm *sm)
{
	struct sa *sa = calloc(1, sizeof(*sa));
	if (!sa)
		return NULL;
	sa->sm = sm;
	/* each record's components, once: deriving them probes every field of the layout */
	for (size_t i = 0; i < NATTRS; i++) {
		struct sa_components *c = &sa->comps[i];
		if (attrs[i].id == MAD_ATTR_SERVICE_RECORD)
			sa_service_components(c);
		else if (attrs[i].id == MAD_ATTR_GUID_INFO_RECORD)
			sa_guidinfo_components(c);
		else if (attrs[i].build || attrs[i].select)
			sa_components_from_layout(attrs[i].layout, c);
		else
			*c = path_components;
		if (attrs[i].layout == &mad_port_info_record_layout) {
			/* CapabilityMask selects ports that have at least those capabilities */
			for (unsigned j = 0; j < c->n; j++)
				if (c->c[j].bitoff == 32 + 20 * 8 && c->c[j].bitlen == 32)
					c->c[j].subset = true;
		}
	}
	sa_state_load(sa);
	mad_dispatcher_set_handler(sm->d, MAD_CLASS_SUBN_ADM, on_sa_request, sa);
	return sa;
}

void sa_free(struct sa *sa)
{
	if (!sa)
		return;
	log_info(sa->sm->log, "sa",
	         "%llu requests: %llu answered, %llu without records, %llu errors, "
	         "%llu malformed, %llu BUSY, %llu with a wrong SM_Key",
	         (unsigned long long)sa->st.requests, (unsigned long long)sa->st.answered,
	         (unsigned long long)sa->st.no_records, (unsigned long long)sa->st.errors,
	         (unsigned long long)sa->st.malformed, (unsigned long long)sa->st.busy,
	         (unsigned long long)sa->st.bad_key);
	if (sa->sm->d)
		mad_dispatcher_set_handler(sa->sm->d, MAD_CLASS_SUBN_ADM, NULL, NULL);
	sa_state_free(sa);
	sa_mcast_free(sa);
	sa_guidinfo_free(sa);
	sa_path_cache_free(sa);
	free(sa->svcs);
	free(sa->subs);
	free(sa->served);
	free(sa);
}

const struct sa_stats *sa_stats(const struct sa *sa)
{
	return &sa->st;
}
