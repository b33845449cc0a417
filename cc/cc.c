/* The congestion control manager's passes: a list of requests built at a sweep's end (a
 * CongestionInfo Get for a port new to it, the Sets a port lacks), sent with at most
 * max_outstanding_mads in flight and none while the SM sweeps. What a port holds is kept as
 * generations: each part of the settings (switch, CA, table) gets a new one when a reload
 * changes it, and a port is sent a part whose generation it has not acknowledged. */
#include "cc/cc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mad/cc.h"
#include "mad/mad_header.h"
#include "mad/mad_types.h"
#include "util/vec.h"

#define CCM_TIMEOUTS_MAX 3 /* unanswered in a row before a port is left alone, as OpenSM */

enum { CCP_UNKNOWN, CCP_READY, CCP_UNAVAILABLE };

struct ccm_port {
	uint64_t guid; /* the port this slot is for: a reused index starts afresh */
	uint8_t num;
	uint8_t state;
	uint8_t cct_cap;  /* CongestionInfo:ControlTableCap, in 64-entry blocks */
	uint8_t timeouts; /* unanswered in a row */
	uint8_t cct_ok;   /* blocks of table generation cct_want acknowledged */
	uint32_t lives;   /* the node's life the generations below went into */
	uint32_t sw_gen, ca_gen, cct_gen, cct_want, key_gen;
	uint64_t key; /* the CC_Key the port checks, as far as we know: what requests carry */
};

struct ccm_op {
	uint32_t port;
	uint16_t attr;
	uint8_t method, block;
};

struct ccm {
	struct sm *sm;
	struct topo *t;
	struct mad_dispatcher *d;
	const struct log *log;
	const struct ibsmd_config *cfg;
	struct ev_loop *loop;
	ev_timer resume_timer;
	struct ccm_port *ports;
	uint32_t ports_cap;
	struct ccm_op *ops;
	uint32_t ops_cap, nops, next;
	unsigned inflight;
	bool active, again, stopped;
	double started;
	uint64_t pass_sets;    /* Sets of this pass */
	struct config_cc last; /* the settings the generations below are of */
	uint32_t sw_gen, ca_gen, cct_gen, key_gen;
	struct ccm_stats st;
	struct log_rl rl;
};

struct ccm_req {
	struct ccm *ccm;
	uint64_t guid;
	uint32_t port, gen;
	uint16_t attr;
	uint8_t block;
};

static void pump(struct ccm *ccm);
static void add_sets(struct ccm *ccm, uint32_t p);

static struct ccm_port *state_of(struct ccm *ccm, uint32_t p)
{
	if (array_reserve(&ccm->ports, &ccm->ports_cap, (uint64_t)p + 1) < 0)
		return NULL;
	struct ccm_port *ps = &ccm->ports[p];
	uint64_t guid = topo_port_guid(ccm->t, p);
	if (ps->guid != guid || ps->num != ccm->t->ports[p].num) {
		memset(ps, 0, sizeof(*ps));
		ps->guid = guid;
		ps->num = ccm->t->ports[p].num;
		ps->lives = ccm->t->nodes[ccm->t->ports[p].node].lives;
		ps->key = ccm->cfg->cc.cc_key;
	}
	return ps;
}

static uint16_t port_lid(const struct ccm *ccm, uint32_t p)
{
	return ccm->t->ports[topo_lid_port(ccm->t, p)].lid;
}

/* the table's blocks a port is sent: enough for the entries (one, with CCTI_Limit 0, for
 * none), at most what it holds */
static unsigned cct_blocks(const struct ccm *ccm, const struct ccm_port *ps)
{
	unsigned len = ccm->cfg->cc.cct_len;
	unsigned n = len ? (len + MAD_CC_CCT_BLOCK - 1) / MAD_CC_CCT_BLOCK : 1;
	return n < ps->cct_cap ? n : ps->cct_cap;
}

static void cct_block(const struct ccm *ccm, const struct ccm_port *ps, unsigned b,
                      struct mad_cc_table *out)
{
	const struct config_cc *cc = &ccm->cfg->cc;
	unsigned len = cc->cct_len, room = (unsigned)ps->cct_cap * MAD_CC_CCT_BLOCK;
	if (len > room)
		len = room;
	memset(out, 0, sizeof(*out));
	out->ccti_limit = (uint16_t)(len ? len - 1 : 0);
	for (unsigned i = 0; i < MAD_CC_CCT_BLOCK && b * MAD_CC_CCT_BLOCK + i < len; i++)
		out->entry[i] = cc->cct[b * MAD_CC_CCT_BLOCK + i];
}

static int add_op(struct ccm *ccm, uint32_t p, uint8_t method, uint16_t attr, uint8_t block)
{
	if (array_reserve(&ccm->ops, &ccm->ops_cap, (uint64_t)ccm->nops + 1) < 0)
		return -ENOMEM;
	ccm->ops[ccm->nops++] =
	    (struct ccm_op){.port = p, .attr = attr, .method = method, .block = block};
	return 0;
}

static void add_sets(struct ccm *ccm, uint32_t p)
{
	struct ccm_port *ps = &ccm->ports[p];
	/* the key first: the Sets after it carry it */
	if (ccm->cfg->cc.protect && ps->key_gen != ccm->key_gen)
		add_op(ccm, p, MAD_METHOD_SET, MAD_ATTR_CC_KEY_INFO, 0);
	if (topo_is_switch(ccm->t, ccm->t->ports[p].node)) {
		if (ps->sw_gen != ccm->sw_gen)
			add_op(ccm, p, MAD_METHOD_SET, MAD_ATTR_CC_SWITCH_SETTING, 0);
		return;
	}
	if (ps->ca_gen != ccm->ca_gen)
		add_op(ccm, p, MAD_METHOD_SET, MAD_ATTR_CC_CA_SETTING, 0);
	if (ps->cct_gen == ccm->cct_gen)
		return;
	unsigned n = cct_blocks(ccm, ps);
	if (!n || (ccm->cfg->cc.cct_len > (unsigned)ps->cct_cap * MAD_CC_CCT_BLOCK))
		log_rl(ccm->log, &ccm->rl, LOGL_WARN, "cc",
		       "LID %u port GUID 0x%016" PRIx64 " holds %u CongestionControlTable "
		       "entries, not the %u of congestion_control: cct; the table is cut there",
		       port_lid(ccm, p), ps->guid, ps->cct_cap * MAD_CC_CCT_BLOCK,
		       ccm->cfg->cc.cct_len);
	ps->cct_want = ccm->cct_gen;
	ps->cct_ok = 0;
	if (!n)
		ps->cct_gen = ccm->cct_gen; /* nothing it can hold */
	for (unsigned b = 0; b < n; b++)
		add_op(ccm, p, MAD_METHOD_SET, MAD_ATTR_CC_TABLE, (uint8_t)b);
}

/* the generation of the settings an attribute carries */
static uint32_t gen_of(const struct ccm *ccm, uint16_t attr)
{
	switch (attr) {
	case MAD_ATTR_CC_KEY_INFO: return ccm->key_gen;
	case MAD_ATTR_CC_SWITCH_SETTING: return ccm->sw_gen;
	case MAD_ATTR_CC_CA_SETTING: return ccm->ca_gen;
	default: return ccm->cct_gen;
	}
}

static int send_op(struct ccm *ccm, const struct ccm_op *op, mad_result_fn cb)
{
	struct ccm_port *ps = &ccm->ports[op->port];
	struct ccm_req *rq = malloc(sizeof(*rq));
	if (!rq)
		return -ENOMEM;
	uint32_t gen = gen_of(ccm, op->attr);
	*rq = (struct ccm_req){.ccm = ccm,
	                       .guid = ps->guid,
	                       .port = op->port,
	                       .gen = gen,
	                       .attr = op->attr,
	                       .block = op->block};
	const struct config_cc *cc = &ccm->cfg->cc;
	uint8_t mad[MAD_SIZE];
	size_t len = mad_cc_request(mad, op->method, op->attr, op->block, ps->key);
	uint8_t *data = mad + MAD_CC_DATA_OFFSET;
	if (op->attr == MAD_ATTR_CC_KEY_INFO) {
		struct mad_cc_key_info ki = {.cc_key = cc->cc_key, .protect = 1};
		mad_cc_key_info_encode(&ki, data, MAD_CC_DATA_SIZE, NULL);
	} else if (op->attr == MAD_ATTR_CC_SWITCH_SETTING) {
		mad_cc_switch_setting_encode(&cc->sw, data, MAD_CC_DATA_SIZE, NULL);
	} else if (op->attr == MAD_ATTR_CC_CA_SETTING) {
		mad_cc_ca_setting_encode(&cc->ca, data, MAD_CC_DATA_SIZE, NULL);
	} else if (op->attr == MAD_ATTR_CC_TABLE) {
		struct mad_cc_table tb;
		cct_block(ccm, ps, op->block, &tb);
		mad_cc_table_encode(&tb, data, MAD_CC_DATA_SIZE, NULL);
	}
	struct mad_request r = {.to = {.lid = port_lid(ccm, op->port), .qpn = 1, .qkey = QP1_QKEY},
	                        .mad = mad,
	                        .len = len,
	                        .timeout_ms = 500,
	                        .retries = 1,
	                        .cb = cb,
	                        .ctx = rq};
	int rc = mad_dispatcher_send(ccm->d, &r);
	if (rc < 0) {
		free(rq);
		return rc;
	}
	ccm->inflight++;
	if (op->method == MAD_METHOD_SET) {
		ccm->st.sets++;
		ccm->pass_sets++;
	} else {
		ccm->st.gets++;
	}
	return 0;
}

static void pass_end(struct ccm *ccm)
{
	if (!ccm->active || ccm->inflight || ccm->next < ccm->nops)
		return;
	ccm->active = false;
	ccm->st.last_pass_s = ev_now(ccm->loop) - ccm->started;
	uint32_t programmed = 0, unavailable = 0;
	for (uint32_t p = 0; p < ccm->t->nports && p < ccm->ports_cap; p++) {
		const struct ccm_port *ps = &ccm->ports[p];
		if (!ps->guid || !topo_port_in_service(ccm->t, p) ||
		    ps->guid != topo_port_guid(ccm->t, p))
			continue;
		if (ps->state == CCP_UNAVAILABLE)
			unavailable++;
		else if (ps->state == CCP_READY &&
		         (topo_is_switch(ccm->t, ccm->t->ports[p].node)
		              ? ps->sw_gen == ccm->sw_gen
		              : ps->ca_gen == ccm->ca_gen && ps->cct_gen == ccm->cct_gen))
			programmed++;
	}
	ccm->st.programmed = programmed;
	ccm->st.unavailable = unavailable;
	if (ccm->pass_sets)
		log_notice(ccm->log, "cc",
		           "congestion control: %u ports hold the settings (%" PRIu64
		           " Sets in %.3f s), %u left alone",
		           programmed, ccm->pass_sets, ccm->st.last_pass_s, unavailable);
	if (ccm->again) {
		ccm->again = false;
		ccm_reconfigure(ccm);
	}
}

static void finish_one(struct ccm *ccm)
{
	ccm->inflight--;
	pump(ccm);
	pass_end(ccm);
}

/* the attribute of an answer that says why it failed, for a log line */
static const char *attr_name(uint16_t attr)
{
	switch (attr) {
	case MAD_ATTR_CC_INFO: return "CongestionInfo";
	case MAD_ATTR_CC_KEY_INFO: return "CongestionKeyInfo";
	case MAD_ATTR_CC_SWITCH_SETTING: return "SwitchCongestionSetting";
	case MAD_ATTR_CC_CA_SETTING: return "CACongestionSetting";
	case MAD_ATTR_CC_TABLE: return "CongestionControlTable";
	default: return "?";
	}
}

static void failed(struct ccm *ccm, struct ccm_port *ps, const struct ccm_req *rq,
                   const struct mad_result *res)
{
	uint16_t lid = port_lid(ccm, rq->port);
	if (res->error) {
		ccm->st.timeouts++;
		if (++ps->timeouts < CCM_TIMEOUTS_MAX || ps->state == CCP_UNAVAILABLE)
			return;
		ps->state = CCP_UNAVAILABLE;
		log_rl(ccm->log, &ccm->rl, LOGL_WARN, "cc",
		       "LID %u port GUID 0x%016" PRIx64 " did not answer congestion control %u "
		       "times: left alone until it comes back (a CC_Key other than "
		       "congestion_control: cc_key drops Sets unanswered)",
		       lid, ps->guid, CCM_TIMEOUTS_MAX);
		return;
	}
	ccm->st.refused++;
	uint16_t code = res->status & 0x1c;
	if (code == MAD_STATUS_BAD_VERSION || code == MAD_STATUS_UNSUP_METHOD ||
	    code == MAD_STATUS_UNSUP_METHOD_ATTR) {
		ps->state = CCP_UNAVAILABLE;
		log_rl(ccm->log, &ccm->rl, LOGL_INFO, "cc",
		       "LID %u port GUID 0x%016" PRIx64 " has no congestion control (%s: %s): "
		       "left alone",
		       lid, ps->guid, attr_name(rq->attr), mad_status_str(res->status));
		return;
	}
	/* a value it cannot take: not sent again until the settings change */
	log_rl(ccm->log, &ccm->rl, LOGL_WARN, "cc",
	       "LID %u port GUID 0x%016" PRIx64 " refused %s: %s; check congestion_control", lid,
	       ps->guid, attr_name(rq->attr), mad_status_str(res->status));
	if (rq->attr == MAD_ATTR_CC_SWITCH_SETTING)
		ps->sw_gen = rq->gen;
	else if (rq->attr == MAD_ATTR_CC_CA_SETTING)
		ps->ca_gen = rq->gen;
	else if (rq->attr == MAD_ATTR_CC_TABLE)
		ps->cct_gen = rq->gen;
	else if (rq->attr == MAD_ATTR_CC_KEY_INFO)
		ps->key_gen = rq->gen;
}

/* Does the answer hold what was sent (the parts its control map marks)? */
static bool holds_switch(const struct mad_cc_switch_setting *want, const uint8_t *data)
{
	struct mad_cc_switch_setting got, w = *want;
	if (mad_cc_switch_setting_decode(data, MAD_CC_DATA_SIZE, &got, NULL) < 0)
		return false;
	uint32_t m = w.control_map;
	if (!(m & MAD_CC_SW_VICTIM_MASK))
		memcpy(w.victim_mask, got.victim_mask, sizeof(w.victim_mask));
	if (!(m & MAD_CC_SW_CREDIT_MASK))
		memcpy(w.credit_mask, got.credit_mask, sizeof(w.credit_mask));
	if (!(m & MAD_CC_SW_THRESHOLD))
		w.threshold = got.threshold, w.packet_size = got.packet_size;
	if (!(m & MAD_CC_SW_CS))
		w.cs_threshold = got.cs_threshold, w.cs_return_delay = got.cs_return_delay;
	if (!(m & MAD_CC_SW_MARKING_RATE))
		w.marking_rate = got.marking_rate;
	return config_cc_switch_equal(&w, &got);
}

static bool holds_ca(const struct mad_cc_ca_setting *want, const uint8_t *data)
{
	struct mad_cc_ca_setting got, w = *want;
	if (mad_cc_ca_setting_decode(data, MAD_CC_DATA_SIZE, &got, NULL) < 0)
		return false;
	for (unsigned sl = 0; sl < MAD_CC_CA_SLS; sl++) {
		if (w.control_map >> sl & 1)
			continue;
		w.ccti_timer[sl] = got.ccti_timer[sl];
		w.ccti_increase[sl] = got.ccti_increase[sl];
		w.trigger_threshold[sl] = got.trigger_threshold[sl];
		w.ccti_min[sl] = got.ccti_min[sl];
	}
	return config_cc_ca_equal(&w, &got);
}

static bool holds_cct(const struct ccm *ccm, const struct ccm_port *ps, unsigned b,
                      const uint8_t *data)
{
	struct mad_cc_table got, want;
	if (mad_cc_table_decode(data, MAD_CC_DATA_SIZE, &got, NULL) < 0)
		return false;
	cct_block(ccm, ps, b, &want);
	return got.ccti_limit == want.ccti_limit &&
	       !memcmp(got.entry, want.entry, sizeof(got.entry));
}

static void answered(struct ccm *ccm, struct ccm_port *ps, const struct ccm_req *rq,
                     const uint8_t *data)
{
	ps->timeouts = 0;
	if (rq->attr == MAD_ATTR_CC_INFO) {
		struct mad_cc_info ci;
		mad_cc_info_decode(data, MAD_CC_DATA_SIZE, &ci, NULL);
		ps->cct_cap = ci.control_table_cap;
		ps->state = CCP_READY;
		add_sets(ccm, rq->port);
		return;
	}
	if (rq->gen != gen_of(ccm, rq->attr))
		return; /* settings changed since: the next pass sends the new ones */
	if (rq->attr == MAD_ATTR_CC_KEY_INFO) {
		ps->key = ccm->cfg->cc.cc_key;
		ps->key_gen = rq->gen;
		return;
	}
	bool holds = rq->attr == MAD_ATTR_CC_SWITCH_SETTING ? holds_switch(&ccm->cfg->cc.sw, data)
	             : rq->attr == MAD_ATTR_CC_CA_SETTING   ? holds_ca(&ccm->cfg->cc.ca, data)
	                                                    : holds_cct(ccm, ps, rq->block, data);
	if (!holds)
		log_rl(ccm->log, &ccm->rl, LOGL_WARN, "cc",
		       "LID %u port GUID 0x%016" PRIx64 " took %s but answers other values: "
		       "its firmware keeps its own; `ibsa cc` reads what it holds",
		       port_lid(ccm, rq->port), ps->guid, attr_name(rq->attr));
	if (rq->attr == MAD_ATTR_CC_SWITCH_SETTING) {
		ps->sw_gen = rq->gen;
	} else if (rq->attr == MAD_ATTR_CC_CA_SETTING) {
		ps->ca_gen = rq->gen;
	} else if (ps->cct_want == rq->gen) {
		ps->cct_ok |= (uint8_t)(1u << rq->block);
		if (ps->cct_ok == (1u << cct_blocks(ccm, ps)) - 1)
			ps->cct_gen = rq->gen;
	}
}

static void on_answer(struct mad_dispatcher *d, const struct mad_result *res, void *ctx)
{
	(void)d;
	struct ccm_req *rq = ctx;
	struct ccm *ccm = rq->ccm;
	if (res->error == -ECANCELED) {
		free(rq);
		return;
	}
	if ((uint64_t)rq->port < ccm->ports_cap && ccm->ports[rq->port].guid == rq->guid) {
		struct ccm_port *ps = &ccm->ports[rq->port];
		if (res->error || (res->status & 0x7fff) || res->len < MAD_SIZE)
			failed(ccm, ps, rq, res);
		else
			answered(ccm, ps, rq, res->mad + MAD_CC_DATA_OFFSET);
	}
	free(rq);
	finish_one(ccm);
}

static void pump(struct ccm *ccm)
{
	if (ccm->stopped || !ccm->active)
		return;
	unsigned window = ccm->cfg->cc.max_outstanding ? ccm->cfg->cc.max_outstanding : 1;
	while (ccm->inflight < window && ccm->next < ccm->nops) {
		if (sm_status(ccm->sm).sweeping) {
			/* the SM's work first: go on shortly */
			if (!ev_is_active(&ccm->resume_timer)) {
				ev_timer_set(&ccm->resume_timer, 0.1, 0.);
				ev_timer_start(ccm->loop, &ccm->resume_timer);
			}
			return;
		}
		struct ccm_op op = ccm->ops[ccm->next++];
		if (op.port >= ccm->t->nports || !topo_port_in_service(ccm->t, op.port) ||
		    ccm->ports[op.port].guid != topo_port_guid(ccm->t, op.port))
			continue; /* gone since the pass began */
		if (send_op(ccm, &op, on_answer) < 0)
			break;
	}
}

static void resume_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct ccm *ccm = w->data;
	pump(ccm);
	pass_end(ccm);
}

/* New generations for the parts of the settings a reload changed; a new CC_Key tries again
 * the ports that did not answer the old one. */
static void take_settings(struct ccm *ccm)
{
	const struct config_cc *cc = &ccm->cfg->cc;
	if (!config_cc_switch_equal(&cc->sw, &ccm->last.sw))
		ccm->sw_gen++;
	if (!config_cc_ca_equal(&cc->ca, &ccm->last.ca))
		ccm->ca_gen++;
	if (cc->cct_len != ccm->last.cct_len ||
	    memcmp(cc->cct, ccm->last.cct, cc->cct_len * sizeof(cc->cct[0])))
		ccm->cct_gen++;
	if (cc->cc_key != ccm->last.cc_key || cc->protect != ccm->last.protect)
		ccm->key_gen++;
	if (cc->cc_key != ccm->last.cc_key)
		for (uint32_t p = 0; p < ccm->ports_cap; p++)
			if (ccm->ports[p].state == CCP_UNAVAILABLE && ccm->ports[p].timeouts)
				ccm->ports[p].state = CCP_UNKNOWN, ccm->ports[p].timeouts = 0;
	ccm->last = *cc;
}

static void plan_port(struct ccm *ccm, uint32_t p)
{
	const struct topo *t = ccm->t;
	uint8_t type = t->nodes[t->ports[p].node].type;
	if ((type != NODE_TYPE_SWITCH && type != NODE_TYPE_CA) || !topo_port_in_service(t, p))
		return;
	struct ccm_port *ps = state_of(ccm, p);
	if (!ps)
		return;
	uint32_t lives = t->nodes[t->ports[p].node].lives;
	if (ps->lives != lives) {
		/* a reset: it holds power-on settings, and may be another device since */
		ps->lives = lives;
		ps->sw_gen = ps->ca_gen = ps->cct_gen = ps->key_gen = 0;
		ps->key = ccm->cfg->cc.cc_key; /* its key went with the rest */
		ps->state = CCP_UNKNOWN;
		ps->timeouts = 0;
	}
	if (ps->state == CCP_UNKNOWN)
		add_op(ccm, p, MAD_METHOD_GET, MAD_ATTR_CC_INFO, 0);
	else if (ps->state == CCP_READY)
		add_sets(ccm, p);
}

void ccm_reconfigure(struct ccm *ccm)
{
	if (!ccm || ccm->stopped || !ccm->cfg->cc.enable)
		return;
	if (ccm->active) {
		ccm->again = true;
		return;
	}
	struct mad_sm_info si = sm_info(ccm->sm);
	if (si.state != SM_STATE_MASTER || !sm_status(ccm->sm).up)
		return;
	take_settings(ccm);
	const struct topo *t = ccm->t;
	if (array_reserve(&ccm->ports, &ccm->ports_cap, t->nports + 1ull) < 0)
		return;
	ccm->nops = ccm->next = 0;
	for (uint32_t p = 0; p < t->nports; p++)
		plan_port(ccm, p);
	ccm->st.passes++;
	ccm->pass_sets = 0;
	ccm->active = true;
	ccm->started = ev_now(ccm->loop);
	pump(ccm);
	pass_end(ccm);
}

static void sweep_done(void *ctx, bool structural)
{
	(void)structural; /* a light sweep may have found a node's new life too */
	ccm_reconfigure(ctx);
}

struct sm_listener ccm_listener(struct ccm *ccm)
{
	return (struct sm_listener){.ctx = ccm, .sweep_done = ccm ? sweep_done : NULL};
}

struct ccm *ccm_new(struct sm *sm)
{
	struct ccm *ccm = calloc(1, sizeof(*ccm));
	if (!ccm)
		return NULL;
	ccm->sm = sm;
	ccm->t = sm_fabric(sm);
	ccm->d = sm_dispatcher(sm);
	ccm->log = sm_log(sm);
	ccm->cfg = sm_config(sm);
	ccm->loop = sm_loop(sm);
	ccm->rl = LOG_RL_DEFAULT;
	ccm->sw_gen = ccm->ca_gen = ccm->cct_gen = ccm->key_gen = 1;
	ccm->last = ccm->cfg->cc;
	ev_init(&ccm->resume_timer, resume_cb);
	ccm->resume_timer.data = ccm;
	return ccm;
}

void ccm_stop(struct ccm *ccm)
{
	if (!ccm || ccm->stopped)
		return;
	ccm->stopped = true;
	ev_timer_stop(ccm->loop, &ccm->resume_timer);
}

void ccm_free(struct ccm *ccm)
{
	if (!ccm)
		return;
	free(ccm->ports);
	free(ccm->ops);
	free(ccm);
}

const struct ccm_stats *ccm_stats(const struct ccm *ccm)
{
	return &ccm->st;
}
