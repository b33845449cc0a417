/* The SA agent: decode, check, select, answer. See sa.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "sa/sa_int.h"

#define SA_CAP_MASK 0x2602 /* as OpenSM: traps and notices, multicast, reinit */

/* The methods an attribute may take, as slots of its handler table. */
enum sa_slot { SLOT_GET, SLOT_GET_TABLE, SLOT_SET, SLOT_DELETE, SLOT_GET_MULTI, SLOT_N };

/* A handler fills rq->out and returns 0 or an SA status; the dispatcher answers. */
typedef uint16_t (*sa_handler_fn)(struct sa_req *rq);

static uint16_t h_records(struct sa_req *rq);
static uint16_t h_paths(struct sa_req *rq);
static uint16_t h_multipaths(struct sa_req *rq);
static uint16_t h_services(struct sa_req *rq);
static uint16_t h_service_set(struct sa_req *rq);
static uint16_t h_service_delete(struct sa_req *rq);
static uint16_t h_guidinfo_set(struct sa_req *rq);
static uint16_t h_guidinfo_delete(struct sa_req *rq);
static uint16_t h_inform_set(struct sa_req *rq);
static uint16_t h_mcmember(struct sa_req *rq);
static uint16_t h_class_port_info(struct sa_req *rq);

struct sa_attr {
	uint16_t id;
	const struct mad_layout *layout; /* its records, asked and answered */
	bool trusted;                    /* only for requesters with the SM_Key (IBA 15.4.1) */
	bool comps;                      /* a component mask beyond comps[] is invalid */
	bool get_first;                  /* a Get that matches several records answers the first */
	bool clients;      /* the clients' own state, restored from the state file after a sweep */
	sa_build_fn build; /* h_records: every record, then the component filter picks */
	sa_select_fn select; /* ... or: picks the records itself */
	sa_handler_fn on[SLOT_N];
};

#define GETS(fn)                                                                                   \
	{                                                                                          \
		[SLOT_GET] = fn, [SLOT_GET_TABLE] = fn                                             \
	}

/* Records filtered by every component of their layout; RECORDS are asked by Get and GetTable
 * and answered by h_records from a build (or select) function. */
#define RECORDS_ON(id_, layout_, ...)                                                              \
	{                                                                                          \
		.id = (id_), .layout = &(layout_), .comps = true, __VA_ARGS__                      \
	}
#define RECORDS(id_, layout_, ...) RECORDS_ON(id_, layout_, .on = GETS(h_records), __VA_ARGS__)

/* The clients' state, a kind of line each (sa/state.c), in the order the file lists them. */
static const struct sa_state_kind kinds[] = {
    {.prefix = "service",
     .pass = 1,
     .save = sa_service_save,
     .restore = sa_service_restore,
     .forget = sa_service_forget},
    {.prefix = "group",
     .pass = 2,
     .save = sa_mcast_save, /* and its members' lines after each group */
     .restore = sa_mcast_restore_group,
     .restored = sa_mcast_restore_done,
     .forget = sa_mcast_forget},
    {.prefix = "member", .pass = 3, .restore = sa_mcast_restore_member},
    {.prefix = "sub",
     .pass = 4,
     .save = sa_inform_save,
     .restore = sa_inform_restore,
     .forget = sa_inform_forget},
    {.prefix = "alias",
     .pass = 0,
     .save = sa_guidinfo_save,
     .restore = sa_guidinfo_restore,
     .forget = sa_guidinfo_forget},
};

static const struct sa_attr attrs[] = {
    RECORDS(MAD_ATTR_NODE_RECORD, mad_node_record_layout, .build = sa_build_node_records),
    RECORDS(MAD_ATTR_PORT_INFO_RECORD, mad_port_info_record_layout,
            .build = sa_build_port_info_records),
    RECORDS(MAD_ATTR_LINK_RECORD, mad_link_record_layout, .build = sa_build_link_records),
    RECORDS(MAD_ATTR_SWITCH_INFO_RECORD, mad_switch_info_record_layout,
            .build = sa_build_switch_info_records),
    RECORDS(MAD_ATTR_LFT_RECORD, mad_lft_record_layout, .build = sa_build_lft_records),
    RECORDS(MAD_ATTR_MFT_RECORD, mad_mft_record_layout, .build = sa_build_mft_records),
    RECORDS(MAD_ATTR_PKEY_TABLE_RECORD, mad_pkey_table_record_layout,
            .build = sa_build_pkey_records, .trusted = true),
    RECORDS_ON(MAD_ATTR_GUID_INFO_RECORD, mad_guid_info_record_layout,
               .build = sa_build_guid_info_records, .clients = true,
               .on = {[SLOT_GET] = h_records,
                      [SLOT_GET_TABLE] = h_records,
                      [SLOT_SET] = h_guidinfo_set,
                      [SLOT_DELETE] = h_guidinfo_delete}),
    RECORDS(MAD_ATTR_SM_INFO_RECORD, mad_sm_info_record_layout, .build = sa_build_sm_info_records),
    RECORDS_ON(MAD_ATTR_PATH_RECORD, mad_path_record_layout, .get_first = true,
               .on = GETS(h_paths)),
    RECORDS_ON(MAD_ATTR_SERVICE_RECORD, mad_service_record_layout,
               .build = sa_build_service_records, .clients = true,
               .on = {[SLOT_GET] = h_services,
                      [SLOT_GET_TABLE] = h_services,
                      [SLOT_SET] = h_service_set,
                      [SLOT_DELETE] = h_service_delete}),
    RECORDS(MAD_ATTR_INFORM_INFO_RECORD, mad_inform_info_record_layout,
            .build = sa_build_inform_records, .clients = true),
    RECORDS(MAD_ATTR_SL2VL_RECORD, mad_sl2vl_record_layout, .select = sa_select_sl2vl_records),
    RECORDS(MAD_ATTR_VLARB_RECORD, mad_vlarb_record_layout, .select = sa_select_vlarb_records),
    /* not in comps[]: their masks are checked by their handlers, or mean nothing */
    {.id = MAD_ATTR_MCMEMBER_RECORD,
     .layout = &mad_mcmember_record_layout,
     .clients = true,
     .on = {[SLOT_GET] = h_mcmember,
            [SLOT_GET_TABLE] = h_mcmember,
            [SLOT_SET] = h_mcmember,
            [SLOT_DELETE] = h_mcmember}},
    {.id = MAD_ATTR_MULTIPATH_RECORD,
     .layout = &mad_path_record_layout,
     .on = {[SLOT_GET_MULTI] = h_multipaths}},
    {.id = MAD_ATTR_INFORM_INFO,
     .layout = &mad_inform_info_layout,
     .clients = true,
     .on = {[SLOT_SET] = h_inform_set}},
    {.id = MAD_ATTR_CLASS_PORT_INFO, .on = {[SLOT_GET] = h_class_port_info}},
};

#define NATTRS (sizeof(attrs) / sizeof(attrs[0]))
_Static_assert(SA_NATTRS <= sizeof(attrs) / sizeof(attrs[0]), "SA_NATTRS in sa_int.h");

/* PathRecord components (IBA 15.2.5.16): ServiceID counts as two. */
#define PC(off, len)                                                                               \
	{                                                                                          \
		.bitoff = (off), .bitlen = (len)                                                   \
	}
static const struct sa_components path_components = {
    .n = 23,
    .c = {PC(0, 32),  PC(32, 32),  PC(64, 128), PC(192, 128), PC(320, 16), PC(336, 16),
          PC(352, 1), PC(353, 3),  PC(356, 20), PC(376, 8),   PC(384, 8),  PC(392, 1),
          PC(393, 7), PC(400, 16), PC(416, 12), PC(428, 4),   PC(432, 2),  PC(434, 6),
          PC(440, 2), PC(442, 6),  PC(448, 2),  PC(450, 6),   PC(456, 8)},
};
#undef PC

/* A table refused (BUSY, NO_RESOURCES): the status alone, as a GetResp like other errors. */
static const char *attr_name(uint16_t id)
{
	switch (id) {
	case MAD_ATTR_CLASS_PORT_INFO: return "ClassPortInfo";
	case MAD_ATTR_NODE_RECORD: return "NodeRecord";
	case MAD_ATTR_PORT_INFO_RECORD: return "PortInfoRecord";
	case MAD_ATTR_SWITCH_INFO_RECORD: return "SwitchInfoRecord";
	case MAD_ATTR_LINK_RECORD: return "LinkRecord";
	case MAD_ATTR_GUID_INFO_RECORD: return "GUIDInfoRecord";
	case MAD_ATTR_SERVICE_RECORD: return "ServiceRecord";
	case MAD_ATTR_PKEY_TABLE_RECORD: return "P_KeyTableRecord";
	case MAD_ATTR_PATH_RECORD: return "PathRecord";
	case MAD_ATTR_MULTIPATH_RECORD: return "MultiPathRecord";
	case MAD_ATTR_MCMEMBER_RECORD: return "MCMemberRecord";
	case MAD_ATTR_LFT_RECORD: return "LinearForwardingTableRecord";
	case MAD_ATTR_MFT_RECORD: return "MulticastForwardingTableRecord";
	case MAD_ATTR_SM_INFO_RECORD: return "SMInfoRecord";
	case MAD_ATTR_INFORM_INFO: return "InformInfo";
	case MAD_ATTR_INFORM_INFO_RECORD: return "InformInfoRecord";
	case MAD_ATTR_VLARB_RECORD: return "VLArbitrationTableRecord";
	default: return NULL;
	}
}

/* One answer, by attribute and outcome. The attributes are a fixed handful (the table
 * above), so a scan of it is bounded. */
static void count_answer(struct sa *sa, uint16_t id, uint16_t status)
{
	struct sa_stats *st = &sa->st;
	struct sa_attr_stats *a = NULL;
	for (unsigned i = 0; i < st->nattrs && !a; i++)
		if (st->attr[i].id == id)
			a = &st->attr[i];
	if (!a)
		a = &st->attr[st->nattrs - 1]; /* "other" */
	status &= 0x7fff;
	if (!status)
		a->ok++;
	else if (status == MAD_STATUS_SA_NO_RECORDS)
		a->no_records++;
	else if (status == MAD_STATUS_BUSY)
		a->busy++;
	else
		a->error++;
}

static void send_refusal(struct sa *sa, const struct mad_addr *addr, struct mad_sa_hdr h,
                         uint16_t status)
{
	count_answer(sa, h.hdr.attr_id, status);
	uint8_t hdr[MAD_SIZE] = {0};
	h.hdr.status = status;
	h.hdr.method = MAD_METHOD_GET_RESP;
	h.attr_offset = 0;
	mad_sa_hdr_encode(&h, hdr, sizeof(hdr), NULL);
	mad_dispatcher_respond(sa->d, addr, hdr, MAD_SIZE);
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
	/* counted here, or (tables) once sent or refused */
	if (!table || status)
		count_answer(sa, h.hdr.attr_id, status);
	mad_sa_hdr_encode(&h, hdr, sizeof(hdr), NULL);
	struct mad_addr addr = *to;
	addr.qkey = QP1_QKEY;
	size_t len = table && recs ? (size_t)recs->n * recs->stride : 0;
	size_t held = table ? mad_dispatcher_rmpp_bytes(sa->d) : 0;
	uint16_t refuse = 0;
	if (table && !status && len > MAD_RMPP_MAX_BYTES) {
		/* beyond what one transfer carries (a whole-fabric SL-to-VL table of tens of
		 * thousands of hosts): say so, rather than nothing */
		log_notice(
		    sa->log, "sa",
		    "a table of %u or more records (%zu MB) for LID %u is more than one transfer "
		    "carries (%u MB): answered NO_RESOURCES; a query with a narrower "
		    "component mask (a LID) gets its part",
		    recs->n, len >> 20, to->lid, MAD_RMPP_MAX_BYTES >> 20);
		refuse = MAD_STATUS_SA_NO_RESOURCES;
		sa->st.errors++;
	} else if (table && !status &&
	           (mad_dispatcher_rmpp_active(sa->d) >= SA_MAX_TRANSFERS ||
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
		int r = mad_dispatcher_respond_rmpp(sa->d, &addr, hdr, MAD_SA_HDR_END,
		                                    recs ? recs->buf : NULL, len);
		if (r < 0) {
			log_rl(sa->log, &sa->rl_refused, LOGL_WARN, "sa",
			       "a table for LID %u could not be sent: %s", to->lid, strerror(-r));
			send_refusal(sa, &addr, h, MAD_STATUS_SA_NO_RESOURCES);
		} else {
			count_answer(sa, h.hdr.attr_id, 0);
		}
		return;
	}
	if (recs && recs->n)
		memcpy(hdr + MAD_SA_HDR_END, recs->buf, recs->size);
	if (sa->holding)
		sa_state_hold(sa, &addr, hdr);
	else
		mad_dispatcher_respond(sa->d, &addr, hdr, MAD_SIZE);
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

static void request_finish(struct sa_req *rqp, uint16_t st);

/* ---- handlers ---- */

static const struct sa_attr *attr_of(const struct sa_req *rq)
{
	for (size_t i = 0; i < NATTRS; i++)
		if (attrs[i].id == rq->h.hdr.attr_id)
			return &attrs[i];
	return NULL;
}

/* Records built or selected, then filtered by the masked components. */
static uint16_t h_records(struct sa_req *rq)
{
	struct sa *sa = rq->sa;
	const struct sa_attr *a = rq->attr;
	const struct sa_components *cp = &sa->comps[a - attrs];
	uint64_t mask = rq->h.comp_mask;
	if (a->select) {
		a->select(rq, rq->data, mask, &rq->out);
		return 0;
	}
	/* records that begin with a LID: builders may leave out other LIDs' (a hint, the
	 * component filter below still decides) */
	rq->only_lid = 0;
	if ((mask & 1) && cp->n && cp->c[0].bitoff == 0 && cp->c[0].bitlen == 16)
		rq->only_lid = (uint16_t)(rq->data[0] << 8 | rq->data[1]);
	/* filtered as they are built, and no more than the answer can use: a Get (one
	 * record, or TOO_MANY_RECORDS) holds two at most, a table one transfer's worth (more
	 * is NO_RESOURCES when it is sent); a whole-fabric build per Get took memory in
	 * proportion to the fabric for every request any host sent */
	uint32_t max = rq->h.hdr.method == MAD_METHOD_GET
	                   ? (a->get_first ? 1 : 2)
	                   : (uint32_t)(MAD_RMPP_MAX_BYTES / rq->out.stride + 1);
	sa_records_filter(&rq->out, cp, mask, rq->data, max);
	a->build(rq, &rq->out);
	sa_records_settle(&rq->out);
	rq->only_lid = 0;
	return 0;
}

static uint16_t h_paths(struct sa_req *rq)
{
	if (rq->h.hdr.method == MAD_METHOD_GET_TABLE)
		return sa_path_table(rq); /* perhaps every pair: a slice at a time */
	return sa_paths(rq, rq->data, rq->h.comp_mask, false, NULL, &rq->out);
}

static uint16_t h_multipaths(struct sa_req *rq)
{
	/* the request may come by RMPP: len covers all its GIDs */
	return sa_multipaths(rq, rq->data, rq->len, rq->h.comp_mask, &rq->out);
}

static uint16_t h_services(struct sa_req *rq)
{
	uint16_t st = h_records(rq);
	sa_service_hide_keys(&rq->out);
	return st;
}

/* Set and Delete answer one record. */
static uint8_t *one_record(struct sa_req *rq)
{
	return sa_records_add(&rq->out);
}

static uint16_t h_service_set(struct sa_req *rq)
{
	uint8_t *rec = one_record(rq);
	return rec ? sa_service_set(rq, rq->data, rq->h.comp_mask, rec)
	           : MAD_STATUS_SA_NO_RESOURCES;
}

static uint16_t h_service_delete(struct sa_req *rq)
{
	uint8_t *rec = one_record(rq);
	return rec ? sa_service_delete(rq, rq->data, rq->h.comp_mask, rec)
	           : MAD_STATUS_SA_NO_RESOURCES;
}

static uint16_t h_guidinfo_set(struct sa_req *rq)
{
	uint8_t *rec = one_record(rq);
	return rec ? sa_guidinfo_change(rq, true, rq->data, rq->h.comp_mask, rec)
	           : MAD_STATUS_SA_NO_RESOURCES;
}

static uint16_t h_guidinfo_delete(struct sa_req *rq)
{
	uint8_t *rec = one_record(rq);
	return rec ? sa_guidinfo_change(rq, false, rq->data, rq->h.comp_mask, rec)
	           : MAD_STATUS_SA_NO_RESOURCES;
}

static uint16_t h_inform_set(struct sa_req *rq)
{
	uint8_t *rec = one_record(rq);
	return rec ? sa_inform_set(rq, rq->data, rec) : MAD_STATUS_SA_NO_RESOURCES;
}

/* MCMemberRecord: joins and leaves answer the one record, queries as other records do. */
static uint16_t h_mcmember(struct sa_req *rq)
{
	if (rq->h.comp_mask >> 18)
		return MAD_STATUS_SA_REQ_INVALID; /* beyond ProxyJoin */
	return sa_mcast_request(rq, &rq->h, rq->data, &rq->out);
}

static uint16_t h_class_port_info(struct sa_req *rq)
{
	uint8_t *rec = one_record(rq);
	if (!rec)
		return MAD_STATUS_SA_NO_RESOURCES;
	struct mad_class_port_info cpi = {
	    .base_version = 1,
	    .class_version = 2,
	    .capability_mask = SA_CAP_MASK,
	    .resp_time_value = 18,
	};
	mad_class_port_info_encode(&cpi, rec, 72, NULL);
	return 0;
}

/* ---- the dispatcher ---- */

static int slot_of(uint8_t method)
{
	switch (method) {
	case MAD_METHOD_GET: return SLOT_GET;
	case MAD_METHOD_GET_TABLE: return SLOT_GET_TABLE;
	case MAD_METHOD_SET: return SLOT_SET;
	case MAD_METHOD_DELETE: return SLOT_DELETE;
	case MAD_METHOD_GET_MULTI: return SLOT_GET_MULTI;
	default: return -1;
	}
}

/* Decode, place the requester, check key, method and mask, run the attribute's handler
 * for the method, answer. */
static void on_sa_request(struct mad_dispatcher *d, const struct mad_addr *from, const uint8_t *mad,
                          size_t len, void *ctx)
{
	(void)d;
	struct sa *sa = ctx;
	struct sa_req rq = {
	    .sa = sa, .from = *from, .requester = TOPO_NONE, .requester_slot = TOPO_NONE};
	struct mad_error err;
	sa->st.requests++;
	uint8_t state = sm_info(sa->sm).state;
	if (state == SM_STATE_STANDBY || state == SM_STATE_NOT_ACTIVE) {
		/* the SA is the master's (IBA 15.1, and OpenSM ignores them too): a standby's
		 * model is from its last look at the fabric and it holds none of the clients'
		 * state, so its answers would mislead */
		log_rl(sa->log, &sa->rl_refused, LOGL_INFO, "sa",
		       "ignored a request from LID %u: this SM is %s, not master", from->lid,
		       state == SM_STATE_STANDBY ? "STANDBY" : "NOT-ACTIVE");
		return;
	}
	if (mad_sa_hdr_decode(mad, len, &rq.h, &err) < 0) {
		sa->st.malformed++;
		log_rl(sa->log, &sa->rl_malformed, LOGL_INFO, "sa",
		       "dropped a request from LID %u: %s", from->lid, err.msg);
		return;
	}
	const struct mad_sa_hdr *h = &rq.h;
	if (h->hdr.class_version != MAD_CLASS_VERSION_SA) {
		answer_error(sa, from, h, MAD_STATUS_BAD_VERSION);
		return;
	}
	if (len < MAD_SIZE) {
		/* a record cut short: say so rather than read what is not there */
		sa->st.malformed++;
		answer_error(sa, from, h, MAD_STATUS_SA_REQ_INVALID);
		return;
	}
	if (h->sm_key && h->sm_key != sa->cfg->sm_key &&
	    h->hdr.attr_id != MAD_ATTR_CLASS_PORT_INFO) {
		/* IBA 15.4.1: a request with a wrong SM_Key is discarded, unanswered, so that
		 * keys cannot be guessed by their answers */
		sa->st.bad_key++;
		log_rl(sa->log, &sa->rl_bad_key, LOGL_INFO, "sa",
		       "discarded a request from LID %u (attribute 0x%04x) with a wrong SM_Key",
		       from->lid, h->hdr.attr_id);
		return;
	}
	rq.trusted = h->sm_key != 0 && h->sm_key == sa->cfg->sm_key;
	rq.changes = sa->state_changes;
	rq.finish = request_finish;
	/* a VF asking from a LID of its own is placed at its physical port, and sees what its
	 * own keys let it */
	rq.requester = topo_lid_to_port(sa->t, from->lid);
	uint32_t vp = topo_vport_by_lid(sa->t, from->lid);
	rq.requester_slot = vp != TOPO_NONE ? sa->t->nports + vp : rq.requester;
	rq.data = mad + MAD_SA_HDR_END;
	rq.len = len - MAD_SA_HDR_END;
	const struct sa_attr *a = rq.attr = attr_of(&rq);
	int slot = slot_of(h->hdr.method);
	if (!a || slot < 0 || !a->on[slot]) {
		answer_error(sa, from, h, MAD_STATUS_UNSUP_METHOD_ATTR);
		return;
	}
	if (a->clients && !sa->state_ready) {
		/* Services, groups and subscriptions come back from the state file (or the
		 * master's copy) only once the first sweep has found their ports: until then a
		 * query would miss them, and a change would be acknowledged before it could be
		 * saved (kill -9 then lost it). BUSY: the client comes back in a moment. */
		sa->st.busy++;
		log_rl(sa->log, &sa->rl_refused, LOGL_INFO, "sa",
		       "attribute 0x%04x from LID %u answered BUSY: the clients' state is restored "
		       "when the first sweep ends",
		       h->hdr.attr_id, from->lid);
		send_refusal(sa, from, *h, MAD_STATUS_BUSY);
		return;
	}
	if (a->trusted && !rq.trusted) {
		/* P_Key tables are for trusted requesters (IBA 15.4.1), as OpenSM answers */
		answer_error(sa, from, h, MAD_STATUS_SA_REQ_INVALID);
		return;
	}
	if (a->comps) {
		const struct sa_components *cp = &sa->comps[a - attrs];
		if (cp->n < 64 && (h->comp_mask >> cp->n)) {
			/* bits beyond the record's components */
			answer_error(sa, from, h, MAD_STATUS_SA_REQ_INVALID);
			return;
		}
	}
	if (a->layout) {
		rq.out.size = a->layout->size;
		rq.out.stride = mad_sa_record_stride(a->layout);
	} else {
		rq.out.size = rq.out.stride = 72; /* ClassPortInfo */
	}
	bool table = slot == SLOT_GET_TABLE || slot == SLOT_GET_MULTI;
	/* before the table is built, not after: a burst of whole-fabric tables must not take
	 * the loop to learn there is no room to send them */
	uint16_t refuse = table ? sa_tables_refusal(sa, &rq) : 0;
	if (refuse) {
		send_refusal(sa, from, *h, refuse);
		return;
	}
	uint16_t st = a->on[slot](&rq);
	if (st == SA_DEFERRED)
		return; /* a job builds it a slice at a time and answers (rq.finish) */
	request_finish(&rq, st);
}

/* The requester's LIDs: per port, not per LID, as a port of LMC k answers at 2^k LIDs. */
static void port_lids(const struct sa *sa, const struct sa_req *rq, uint16_t *base, unsigned *count)
{
	*base = rq->from.lid;
	*count = 1;
	if (rq->requester != TOPO_NONE && sa->t->ports[rq->requester].lid) {
		*base = sa->t->ports[rq->requester].lid;
		*count = 1u << sa->t->ports[rq->requester].lmc;
	}
}

uint16_t sa_tables_refusal(struct sa *sa, const struct sa_req *rq)
{
	uint16_t base;
	unsigned count;
	port_lids(sa, rq, &base, &count);
	/* A new question is the sign its answers sent whole were taken or abandoned: without
	 * this, a client with no RMPP ACKs (libumad2sim.so) asking one at a time ran into the
	 * quota below after 16 answers. */
	mad_dispatcher_rmpp_reclaim(sa->d, MAD_CLASS_SUBN_ADM, base, count, rq->h.hdr.tid);
	if (sa_tables_busy(sa)) {
		sa->st.busy++;
		return MAD_STATUS_BUSY; /* the SA's room, shared by all: come back later */
	}
	if (rq->trusted)
		return 0; /* the administrator's tools */
	unsigned held = mad_dispatcher_rmpp_sends_to(sa->d, base, count);
	if (held >= SA_TRANSFERS_PER_PORT) {
		/* this port's own share (the SA's ERR_NO_RESOURCES), by transfers still under
		 * way after its answers sent whole were ended above: many at once */
		sa->st.errors++;
		log_rl(sa->log, &sa->rl_refused, LOGL_WARN, "sa",
		       "LID %u (port GUID " GUID_FMT ") has %u table transfers under way, "
		       "unacknowledged, the most one port may: a table of attribute 0x%04x "
		       "answered NO_RESOURCES",
		       rq->from.lid,
		       rq->requester == TOPO_NONE ? 0 : topo_port_guid(sa->t, rq->requester), held,
		       rq->h.hdr.attr_id);
		return MAD_STATUS_SA_NO_RESOURCES;
	}
	unsigned mine = 0;
	for (const struct sa_path_job *j = sa->jobs; j; j = sa_path_job_next(j))
		mine += sa_path_job_requester(j) == rq->requester;
	if (mine < SA_JOBS_PER_PORT)
		return 0;
	sa->st.busy++; /* its table being built ends in seconds: come back then */
	return MAD_STATUS_BUSY;
}

bool sa_tables_busy(const struct sa *sa)
{
	return mad_dispatcher_rmpp_active(sa->d) >= SA_MAX_TRANSFERS ||
	       mad_dispatcher_rmpp_bytes(sa->d) >= SA_MAX_TRANSFER_BYTES ||
	       sa->njobs >= SA_MAX_JOBS;
}

/* Answer a request its handler ended with status st, and free its records. */
static void request_finish(struct sa_req *rqp, uint16_t st)
{
	struct sa_req rq = *rqp;
	struct sa *sa = rq.sa;
	const struct mad_sa_hdr *h = &rq.h;
	const struct mad_addr *from = &rq.from;
	int slot = slot_of(h->hdr.method);
	const struct sa_attr *a = rq.attr;
	if (st && rq.why)
		log_rl(sa->log, &sa->rl_refused, LOGL_INFO, "sa",
		       "attribute 0x%04x method 0x%02x from LID %u refused (status 0x%04x): %s",
		       h->hdr.attr_id, h->hdr.method, from->lid, st, rq.why);
	bool table = slot == SLOT_GET_TABLE || slot == SLOT_GET_MULTI;
	if (!st && slot == SLOT_GET) {
		if (rq.out.n == 0)
			st = MAD_STATUS_SA_NO_RECORDS;
		else if (rq.out.n > 1 && !a->get_first)
			st = MAD_STATUS_SA_TOO_MANY_RECORDS;
	}
	if (st == MAD_STATUS_SA_NO_RECORDS)
		sa->st.no_records++;
	static const uint8_t resp[SLOT_N] = {
	    [SLOT_GET] = MAD_METHOD_GET_RESP,
	    [SLOT_GET_TABLE] = MAD_METHOD_GET_TABLE_RESP,
	    [SLOT_SET] = MAD_METHOD_GET_RESP,
	    [SLOT_DELETE] = MAD_METHOD_DELETE_RESP,
	    [SLOT_GET_MULTI] = MAD_METHOD_GET_MULTI_RESP,
	};
	/* what changed the clients' state is answered once it is on disk */
	sa->holding = !st && !table && sa->state_changes != rq.changes && sa->state_dirty;
	if (st)
		answer_error(sa, from, h, st);
	else
		send_answer(sa, from, h, resp[slot], 0, &rq.out, table);
	sa->holding = false;
	sa_records_free(&rqp->out);
}

struct sa *sa_new(struct sm *sm)
{
	struct sa *sa = calloc(1, sizeof(*sa));
	if (!sa)
		return NULL;
	sa->sm = sm;
	sa->t = sm_fabric(sm);
	sa->d = sm_dispatcher(sm);
	sa->log = sm_log(sm);
	sa->cfg = sm_config(sm);
	sa->loop = sm_loop(sm);
	sa->rl_malformed = sa->rl_bad_key = sa->rl_refused = LOG_RL_DEFAULT;
	sa->rl_client = LOG_RL_INIT(50, 1000);
	for (size_t i = 0; i < NATTRS; i++) {
		const char *n = attr_name(attrs[i].id);
		if (!n || sa->st.nattrs == SA_STATS_MAX_ATTRS - 1)
			continue;
		bool dup = false;
		for (unsigned k = 0; k < sa->st.nattrs; k++)
			dup |= sa->st.attr[k].id == attrs[i].id;
		if (!dup)
			sa->st.attr[sa->st.nattrs++] =
			    (struct sa_attr_stats){.id = attrs[i].id, .name = n};
	}
	sa->st.attr[sa->st.nattrs++] = (struct sa_attr_stats){.id = 0xffff, .name = "other"};
	/* each record's components, once: deriving them probes every field of the layout */
	for (size_t i = 0; i < NATTRS; i++) {
		struct sa_components *c = &sa->comps[i];
		if (i >= SA_NATTRS)
			break; /* the rest check their masks themselves */
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
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		sa_state_register(sa, &kinds[i]);
	sa_state_load(sa);
	mad_dispatcher_set_handler(sa->d, MAD_CLASS_SUBN_ADM, on_sa_request, sa);
	return sa;
}

void sa_free(struct sa *sa)
{
	if (!sa)
		return;
	log_info(sa->log, "sa",
	         "%llu requests: %llu answered, %llu without records, %llu errors, "
	         "%llu malformed, %llu BUSY, %llu with a wrong SM_Key",
	         (unsigned long long)sa->st.requests, (unsigned long long)sa->st.answered,
	         (unsigned long long)sa->st.no_records, (unsigned long long)sa->st.errors,
	         (unsigned long long)sa->st.malformed, (unsigned long long)sa->st.busy,
	         (unsigned long long)sa->st.bad_key);
	free(sa->pkey_qos);
	free(sa->qos_groups);
	if (sa->d)
		mad_dispatcher_set_handler(sa->d, MAD_CLASS_SUBN_ADM, NULL, NULL);
	sa_state_free(sa);
	sa_mcast_free(sa);
	sa_path_jobs_free(sa);
	sa_path_cache_free(sa);
	free(sa->svcs);
	u64map_free(&sa->svcs_of_port);
	free(sa->subs);
	u64map_free(&sa->sub_by_enum);
	u64map_free(&sa->sub_by_what);
	u64map_free(&sa->subs_of_port);
	free(sa->served);
	free(sa);
}

/* What every sweep asks of the SA, in order: the state file's clients placed once ports are
 * known, alias GUIDs, subscriptions and the in/out-of-service reports, multicast trees, the
 * QoS policy's ports. */
void sa_sweep_done(struct sa *sa)
{
	sa_state_apply(sa);
	sa_guidinfo_sweep_done(sa);
	sa_inform_sweep_done(sa);
	sa_mcast_sweep_done(sa);
	sa_qos_sweep_done(sa);
}

static void on_sweep_done(void *ctx, bool structural)
{
	(void)structural;
	sa_sweep_done(ctx);
}

static void on_trap(void *ctx, const struct mad_notice *trap)
{
	sa_forward_trap(ctx, trap);
}

static void on_state_changed(void *ctx, uint8_t state)
{
	/* the paths cached went with the aliases the clients' state held */
	if (state == SM_STATE_STANDBY && sa_state_reset(ctx))
		sa_path_cache_free(ctx);
}

static void on_partitions_changed(void *ctx)
{
	sa_mcast_partitions(ctx);
}

struct sm_listener sa_listener(struct sa *sa)
{
	return (struct sm_listener){.ctx = sa,
	                            .sweep_done = on_sweep_done,
	                            .trap = on_trap,
	                            .state_changed = on_state_changed,
	                            .partitions_changed = on_partitions_changed};
}

struct sa_counts sa_counts(const struct sa *sa)
{
	return (struct sa_counts){
	    .groups = sa->ngroups, .services = sa->nsvcs, .subscriptions = sa->nsubs};
}

const struct sa_stats *sa_stats(const struct sa *sa)
{
	return &sa->st;
}
