/* Master and standby (IBA 14.4): SMInfo as this SM answers and takes it, the other SMs the
 * sweeps find (IsSM in PortInfo, trap 144) and what they say, who is master, the standby's
 * polling of its master, takeover and handover.
 *
 * The order between SMs is IBA's: the higher priority, then the lower port GUID. At start an
 * SM that finds a master, or a higher SM that is not master yet, stands by; otherwise it is
 * master. A master hands the subnet over to a standby only of strictly higher priority (an
 * SM that comes back with the same priority and a lower GUID does not take the subnet back),
 * and not at all when sm_sticky is set; of two masters the lesser hands over to the greater.
 * A standby polls its master and takes over after sm_poll_retries unanswered polls.
 *
 * SM_Keys: an SM that answers with a non-zero key that is not ours belongs to someone else:
 * it is ignored and reported, never followed, and its Sets are refused. An SM that answers
 * with key 0 declined to show it; every SM of the subnet shows it to a question that proves
 * the key (ibsmd) or carries its port's M_Key (OpenSM 3.3 shows it to anyone without M_Key
 * protection), so one that never has is a stranger: this SM neither stands by for it nor
 * hands it the subnet, and obeys a Set only from an SM that proves the key (below).
 *
 * The key is shown only to a requester that proves it knows it (IBA 14.4.1): by the M_Key
 * of this SM's port when ports are protected, or by a proof in its SMInfo payload. ibsmd
 * puts there, instead of the key, a keyed hash of the key and both port GUIDs: it names
 * the asker and the asked, so the port that receives it (a stranger too) learns nothing it
 * could show anyone else. A Set is obeyed when its payload carries the key or that proof,
 * or when it comes from the port of an SM that has shown the key; HANDOVER and DISCOVER
 * also from the port of the master this SM stands by for (OpenSM's Sets carry key 0). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "sm/sm_int.h"

enum { SMINFO_HANDOVER = 1, SMINFO_ACKNOWLEDGE, SMINFO_DISABLE, SMINFO_STANDBY, SMINFO_DISCOVER };

const char *sm_state_name(uint8_t s)
{
	static const char *const n[] = {"NOT-ACTIVE", "DISCOVERING", "STANDBY", "MASTER"};
	return s < 4 ? n[s] : "(invalid state)";
}

/* Master now: the MFTs may hold what another master wrote since this one last did. */
static void become_master(struct sm *sm)
{
	if (sm->state != SM_STATE_MASTER)
		mcast_became_master(sm);
	sm_set_state(sm, SM_STATE_MASTER);
}

static const char *state_str(uint8_t s)
{
	return sm_state_name(s);
}

static const char *mod_str(uint32_t mod)
{
	static const char *const n[] = {"?",       "HANDOVER", "ACKNOWLEDGE",
	                                "DISABLE", "STANDBY",  "DISCOVER"};
	return mod >= 1 && mod <= 5 ? n[mod] : "(invalid modifier)";
}

/* IBA 14.4.1.1: the higher priority wins, then the lower GUID. */
static bool greater(uint8_t pa, uint64_t ga, uint8_t pb, uint64_t gb)
{
	return pa > pb || (pa == pb && ga < gb);
}

static bool above_me(const struct sm *sm, const struct sm_remote *r)
{
	return greater(r->si.priority, r->guid, sm->cfg->sm_priority, sm->local.port_guid);
}

static uint64_t port_guid(const struct topo *t, uint32_t p)
{
	const struct topo_node *n = &t->nodes[t->ports[p].node];
	return n->type == NODE_TYPE_SWITCH ? n->ni.port_guid : t->ports[p].guid;
}

/* Where an SM of this port GUID sits in the model: TOPO_NONE if nowhere. */
static uint32_t port_of_guid(const struct topo *t, uint64_t guid)
{
	uint32_t p = u64map_get(&t->by_port_guid, guid);
	if (p != U64MAP_NONE)
		return p;
	/* a switch's port 0: its port GUID is the one in NodeInfo */
	for (uint32_t s = 0; s < t->nsws; s++) {
		const struct topo_node *n = &t->nodes[t->sws[s].node];
		if (n->present && n->ni.port_guid == guid)
			return n->first_port;
	}
	return TOPO_NONE;
}

static struct sm_remote *remote_find(struct sm *sm, uint64_t guid)
{
	uint32_t i = u64map_get(&sm->el.by_guid, guid);
	return i == U64MAP_NONE ? NULL : &sm->el.sms.v[i];
}

static struct sm_remote *remote_add(struct sm *sm, uint64_t guid, uint32_t port)
{
	struct sm_remote *r = remote_find(sm, guid);
	if (r) {
		if (port != TOPO_NONE)
			r->port = port;
		return r;
	}
	if (!guid || u64map_put(&sm->el.by_guid, guid, sm->el.sms.n) < 0)
		return NULL;
	r = vec_push(&sm->el.sms);
	if (!r) {
		u64map_del(&sm->el.by_guid, guid);
		return NULL;
	}
	/* a fresh entry: the slot may hold what a forgotten SM left (vec_push does not clear),
	 * and a stranger must not inherit another SM's proof of the key */
	*r = (struct sm_remote){.guid = guid, .port = port};
	return r;
}

static void remote_forget(struct sm *sm, uint64_t guid)
{
	uint32_t i = u64map_get(&sm->el.by_guid, guid);
	if (i == U64MAP_NONE)
		return;
	struct sm_election *el = &sm->el;
	u64map_del(&el->by_guid, guid);
	if (i != el->sms.n - 1) {
		vec_swap_remove(&el->sms, i);
		u64map_put(&el->by_guid, el->sms.v[i].guid, i);
	} else {
		el->sms.n--;
	}
}

static uint16_t remote_lid(const struct sm *sm, const struct sm_remote *r)
{
	uint16_t l =
	    r->port != TOPO_NONE ? sm->topo.ports[topo_lid_port(&sm->topo, r->port)].pi.lid : 0;
	return l ? l : r->lid;
}

/* The proof of the SM_Key an SMInfo payload carries from port GUID `from` to port GUID `to`
 * (see the top of this file): SipHash-2-4 (libsodium's short hash, a MAC for short messages)
 * keyed by a BLAKE2b digest of the key, and of m_key_secret when it is set: the port that
 * receives a proof could test guesses of a 64-bit key against it offline, not of a secret of
 * 256 bits. 0 when there is no key to prove. */
static uint64_t key_proof(const struct sm *sm, uint64_t from, uint64_t to)
{
	uint64_t key = sm->cfg->sm_key;
	if (!key || !from || !to)
		return 0;
	static const char label[] = "ibsmd SMInfo SM_Key proof v1";
	uint8_t in[sizeof(label) - 1 + 8], k[crypto_shorthash_KEYBYTES], msg[16],
	    out[crypto_shorthash_BYTES];
	memcpy(in, label, sizeof(label) - 1);
	for (int i = 0; i < 8; i++) {
		in[sizeof(label) - 1 + i] = (uint8_t)(key >> (56 - 8 * i));
		msg[i] = (uint8_t)(from >> (56 - 8 * i));
		msg[8 + i] = (uint8_t)(to >> (56 - 8 * i));
	}
	const struct ibsmd_config *c = sm->cfg;
	crypto_generichash(k, sizeof(k), in, sizeof(in),
	                   c->has_m_key_secret ? c->m_key_secret_key : NULL,
	                   c->has_m_key_secret ? sizeof(c->m_key_secret_key) : 0);
	crypto_shorthash(out, msg, sizeof(msg), k);
	sodium_memzero(k, sizeof(k));
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | out[i];
	return v && v != key ? v : 1;
}

/* An SMInfo payload from GUID `from` proves the SM_Key to this SM. */
static bool payload_proves(const struct sm *sm, const struct mad_sm_info *si)
{
	uint64_t key = sm->cfg->sm_key;
	return key && si->sm_key &&
	       (si->sm_key == key || si->sm_key == key_proof(sm, si->guid, sm->local.port_guid));
}

/* Our SMInfo as a payload for the SM at port GUID `to`: the key itself for an SM that has
 * shown it knows it, the proof for any other (0: to whoever answers at a port). */
static void own_payload(const struct sm *sm, uint8_t state, uint64_t to, bool with_key,
                        uint8_t data[64])
{
	struct mad_sm_info si = sm_info(sm);
	si.state = state;
	si.sm_key = with_key ? sm->cfg->sm_key : key_proof(sm, sm->local.port_guid, to);
	memset(data, 0, 64);
	mad_sm_info_encode(&si, data, 64, NULL);
}

/* r->proved is set by remote_update, the one place an answer is taken in */
static bool knows_key(const struct sm *sm, const struct sm_remote *r)
{
	return r->answered && sm->cfg->sm_key && r->proved;
}

/* ---- asking other SMs ---- */

enum { ASK_QUERY, ASK_POLL_MASTER };

struct ask {
	uint64_t guid; /* 0: whoever answers at the port */
	uint32_t port;
	uint8_t why;
};

static void on_answer(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                      void *ctx);

static void ask(struct sm *sm, uint32_t port, uint64_t guid, uint8_t why, bool counted, int retries,
                unsigned timeout_ms)
{
	uint8_t data[64];
	uint64_t to = guid ? guid : port != TOPO_NONE ? port_guid(&sm->topo, port) : 0;
	own_payload(sm, sm->state, to, false, data);
	struct ask a = {.guid = guid, .port = port, .why = why};
	if (!counted)
		sm->detached++;
	sm->send_retries = retries;
	sm->send_timeout_ms = timeout_ms;
	const struct sm_remote *r = guid ? remote_find(sm, guid) : NULL;
	if (port != TOPO_NONE)
		sm_send_dr_port(sm, port, MAD_METHOD_GET, MAD_ATTR_SM_INFO, 0, data, sizeof(data),
		                on_answer, &a, sizeof(a));
	else if (r && r->lid)
		/* an SM that is not in the model (this one sees nothing past its own port):
		 * by the LID it spoke from */
		sm_send_lid(sm, r->lid, guid, MAD_METHOD_GET, MAD_ATTR_SM_INFO, 0, data,
		            sizeof(data), on_answer, &a, sizeof(a));
	sm->send_retries = -1;
	sm->send_timeout_ms = 0;
	if (!counted)
		sm->detached--;
}

static void send_set(struct sm *sm, struct sm_remote *r, uint32_t mod, uint8_t state, sm_smp_fn cb);

static void on_handover_answer(struct sm *sm, const struct mad_result *res,
                               const struct mad_smp *smp, void *ctx)
{
	(void)res;
	uint64_t guid = *(const uint64_t *)ctx;
	if (sm->el.handover_to != guid)
		return;
	if (!smp || smp->dr_status) {
		log_warn(sm->log, "election",
		         "HANDOVER to SM GUID " GUID_FMT " %s: staying master, trying again after "
		         "the next sweep (its ACKNOWLEDGE, should it come, still ends this SM's "
		         "mastership)",
		         guid, smp ? mad_status_str(smp->dr_status) : "got no answer");
		sm->el.handover_to = 0;
		return;
	}
	if (sm->state == SM_STATE_MASTER)
		sm_become_standby(sm, guid);
}

static void handover(struct sm *sm, struct sm_remote *r)
{
	if (sm->cfg->sm_key && !knows_key(sm, r)) {
		/* a host that runs an SM of its own with a high priority must not get the
		 * subnet for the asking */
		log_rl(sm->log, &sm->el.rl_unproved, LOGL_WARN, "election",
		       "SM GUID " GUID_FMT " (LID %u, priority %u, %s) outranks this one but has "
		       "not shown this subnet's SM_Key: not handing the subnet over. If it is "
		       "one of this subnet's SMs, give it the same sm_key",
		       r->guid, remote_lid(sm, r), r->si.priority, state_str(r->si.state));
		return;
	}
	sm->el.handover_to = sm->el.handover_last = r->guid;
	sm->el.handovers_sent++;
	log_notice(sm->log, "election",
	           "handing the subnet over to SM GUID " GUID_FMT " (LID %u, priority %u, %s; "
	           "ours %u)",
	           r->guid, remote_lid(sm, r), r->si.priority, state_str(r->si.state),
	           sm->cfg->sm_priority);
	send_set(sm, r, SMINFO_HANDOVER, SM_STATE_MASTER, on_handover_answer);
}

/* A master hears from another SM. */
static void master_consider(struct sm *sm, struct sm_remote *r)
{
	const struct ibsmd_config *c = sm->cfg;
	if (sm->el.handover_to)
		return;
	if (r->si.state == SM_STATE_STANDBY && !c->sm_sticky && r->si.priority > c->sm_priority) {
		if (c->sm_key && !knows_key(sm, r)) {
			handover(sm, r); /* says why it does not; the sync is not asked */
			return;
		}
		for (unsigned i = 0; i < sm->nlisteners; i++) {
			const struct sm_listener *l = &sm->listeners[i];
			if (l->handover_ready && !l->handover_ready(l->ctx, r->guid)) {
				/* asked again soon rather than at the next light sweep */
				if (!ev_is_active(&sm->el.poll_timer)) {
					double iv = c->sm_poll_interval_ms / 1000.0;
					ev_timer_set(&sm->el.poll_timer, iv, 0.);
					ev_timer_start(sm->loop, &sm->el.poll_timer);
				}
				return;
			}
		}
		handover(sm, r);
	} else if (r->si.state == SM_STATE_DISCOVERING && !above_me(sm, r) && r->discovering >= 3 &&
	           ev_now(sm->loop) - r->discovering_since >= 2.0) {
		/* an SM that stays DISCOVERING has not found this master: one that cannot see
		 * past its own port (M_Keys) holds back rather than take the subnet; told to
		 * stand by, it polls this master by LID and gets the sync */
		log_notice(sm->log, "election",
		           "SM GUID " GUID_FMT " (LID %u, priority %u) is still DISCOVERING: "
		           "telling it to stand by",
		           r->guid, remote_lid(sm, r), r->si.priority);
		r->discovering = 0;
		send_set(sm, r, SMINFO_STANDBY, SM_STATE_MASTER, NULL);
	} else if (r->si.state == SM_STATE_MASTER) {
		/* two masters (a merged subnet, or a master that ignored us): the lesser yields */
		if (above_me(sm, r))
			handover(sm, r);
		else if (c->sm_key && !knows_key(sm, r))
			/* not one of this subnet's SMs: it will not hand over, and it may try to
			 * program the ports (M_Keys stop it) */
			log_rl(sm->log, &sm->el.rl_unproved, LOGL_WARN, "election",
			       "ALARM: SM GUID " GUID_FMT " (LID %u, priority %u) says it is "
			       "master too and has not shown this subnet's SM_Key: a stranger; "
			       "remove it",
			       r->guid, remote_lid(sm, r), r->si.priority);
		else
			log_rl(sm->log, &sm->el.rl_set, LOGL_NOTICE, "election",
			       "SM GUID " GUID_FMT " (LID %u, priority %u) is master too: it "
			       "ranks below this one and should hand the subnet over",
			       r->guid, remote_lid(sm, r), r->si.priority);
	}
}

/* Take in an SMInfo answer. false: it is a foreign SM's. */
static bool remote_update(struct sm *sm, struct sm_remote *r, const struct mad_sm_info *si)
{
	bool was = r->answered;
	uint8_t before = r->si.state;
	r->si = *si;
	r->answered = true;
	r->answered_sweep = sm->topo.sweep;
	r->misses = 0;
	if (si->state != SM_STATE_DISCOVERING)
		r->discovering = 0;
	else if (r->discovering++ == 0)
		r->discovering_since = ev_now(sm->loop);
	if (r->discovering == 255)
		r->discovering = 254;
	r->rogue = sm->cfg->sm_key && si->sm_key && si->sm_key != sm->cfg->sm_key;
	if (sm->cfg->sm_key && si->sm_key == sm->cfg->sm_key)
		r->proved = true;
	if (r->rogue) {
		r->proved = false;
		log_rl(sm->log, &sm->el.rl_rogue, LOGL_WARN, "election",
		       "ALARM: an SM at port GUID " GUID_FMT " (LID %u) answers SMInfo with an "
		       "SM_Key that is not this subnet's: ignored (it says %s, priority %u); it "
		       "learns no key from this SM and its Sets are refused. Remove it, or give "
		       "it this subnet's sm_key",
		       r->guid, remote_lid(sm, r), state_str(si->state), si->priority);
		return false;
	}
	if (!was || before != si->state)
		log_notice(sm->log, "election", "SM GUID " GUID_FMT " (LID %u): %s, priority %u",
		           r->guid, remote_lid(sm, r), state_str(si->state), si->priority);
	if (!was) {
		char g[20], lid[8], prio[4];
		snprintf(g, sizeof(g), "0x%016" PRIx64, r->guid);
		snprintf(lid, sizeof(lid), "%u", remote_lid(sm, r));
		snprintf(prio, sizeof(prio), "%u", si->priority);
		const char *kv[] = {"sm_guid",  g,          "sm_lid",
		                    lid,        "sm_state", state_str(si->state),
		                    "priority", prio,       NULL};
		sm_event(sm, LOGL_NOTICE, "sm_appeared", kv,
		         "another SM answers: GUID " GUID_FMT " (LID %u), %s, priority %u", r->guid,
		         remote_lid(sm, r), state_str(si->state), si->priority);
	}
	return true;
}

/* Trap 144 (SM priority changed) from this SM's port to the master r. */
static void send_trap144(struct sm *sm, const struct sm_remote *r)
{
	const struct topo *t = &sm->topo;
	uint16_t to = remote_lid(sm, r), lid = sm->local.lid;
	uint32_t cap = sm->local.capability_mask;
	if (t->sm_port != TOPO_NONE && t->ports[t->sm_port].pi.lid) {
		lid = t->ports[t->sm_port].pi.lid; /* the master's, newer than the start's */
		cap = t->ports[t->sm_port].pi.capability_mask;
	}
	if (!to || !lid)
		return;
	struct mad_notice no = {
	    .is_generic = 1,
	    .type = 4, /* informational */
	    .producer_type = t->sm_node != TOPO_NONE && topo_is_switch(t, t->sm_node) ? 2 : 1,
	    .trap_number = 144,
	    .issuer_lid = lid,
	};
	/* DataDetails: reserved 16, LIDADDR 16, reserved 16, CapabilityMask 32, reserved 16,
	 * ChangeFlags 16 (bit 3: SM priority) */
	no.data_details[2] = (uint8_t)(lid >> 8);
	no.data_details[3] = (uint8_t)lid;
	for (int i = 0; i < 4; i++)
		no.data_details[6 + i] = (uint8_t)(cap >> (24 - 8 * i));
	no.data_details[13] = 0x08;
	uint8_t notice[80] = {0};
	mad_notice_encode(&no, notice, sizeof(notice), NULL);
	sm->detached++;
	/* an SMP carries the Notice's first 64 bytes; a trap bears its own port's M_Key */
	sm_send_lid(sm, to, sm->local.port_guid, MAD_METHOD_TRAP, MAD_ATTR_NOTICE, 0, notice, 64,
	            NULL, NULL, 0);
	sm->detached--;
}

/* A master of lower priority than this standby should hand the subnet over (a tie on
 * priority keeps the master: no handover, no reminder). One that learns of SMs only by
 * sweeping (OpenSM) never does if its one question, when this SM's IsSM went up, came
 * before this SM answered (a loaded machine) or was lost: it is reminded by trap 144, which
 * makes it sweep, at the first poll that finds it so and then after 2, 4 ... 64 polls
 * (OpenSM ignores a trap repeated 10 times within 5 s), REMIND_MAX times in all: a master
 * that still keeps the subnet (sm_sticky, or it does not know our SM_Key) is not made to
 * sweep heavily every half minute for good. */
#define REMIND_MAX 10
static void remind_master(struct sm *sm, const struct sm_remote *r)
{
	struct sm_election *el = &sm->el;
	if (r->si.state != SM_STATE_MASTER || r->si.priority >= sm->cfg->sm_priority ||
	    el->handover_to) {
		el->remind_polls = el->remind_every = el->remind_sent = 0;
		return;
	}
	if (el->remind_sent >= REMIND_MAX ||
	    (el->remind_every && ++el->remind_polls < el->remind_every))
		return;
	el->remind_sent++;
	el->remind_polls = 0;
	el->remind_every = el->remind_every ? el->remind_every * 2 : 2;
	if (el->remind_every > 64)
		el->remind_every = 64;
	log_notice(sm->log, "election",
	           "master SM GUID " GUID_FMT " (LID %u, priority %u) ranks below this SM and "
	           "has not handed the subnet over: telling it of this SM (trap 144)",
	           r->guid, remote_lid(sm, r), r->si.priority);
	send_trap144(sm, r);
}

static void poll_master(struct sm *sm, struct sm_remote *r)
{
	r->polling = true;
	sm->el.poll_owed = false;
	/* no retries: each poll is one try, sm_poll_retries of them in a row decide */
	ask(sm, r->port, r->guid, ASK_POLL_MASTER, false, 0, sm->cfg->sm_poll_interval_ms);
}

/* A poll ended: the tick that came while it was out polls now. */
static void poll_if_owed(struct sm *sm, struct sm_remote *r)
{
	if (sm->el.poll_owed)
		poll_master(sm, r);
}

static void on_answer(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                      void *ctx)
{
	(void)res;
	const struct ask *a = ctx;
	struct sm_remote *r = a->guid ? remote_find(sm, a->guid) : NULL;
	if (r)
		r->polling = false;
	if (res->error == -ECANCELED)
		return; /* the SM stops: no miss counted, no poll owed sent from the cancel loop */
	struct mad_sm_info si = {0};
	bool ok = smp && !smp->dr_status &&
	          mad_sm_info_decode(smp->data, sizeof(smp->data), &si, NULL) == 0 && si.guid;
	if (ok && a->guid && si.guid != a->guid) {
		log_rl(sm->log, &sm->rl_garbage, LOGL_WARN, "election",
		       "SMInfo asked of GUID " GUID_FMT " answered by GUID " GUID_FMT ": ignored",
		       a->guid, si.guid);
		ok = false;
	}
	/* every SM of the subnet shows the key to our questions (see the top): an answer
	 * without it, from an SM that has shown it before, is not taken (a host that guessed
	 * the TID could otherwise keep a dead master alive, or make it seem to stand down) */
	if (ok && sm->cfg->sm_key && si.sm_key != sm->cfg->sm_key && r && r->proved) {
		log_rl(sm->log, &sm->el.rl_rogue, LOGL_WARN, "election",
		       "an SMInfo answer for SM GUID " GUID_FMT " does not show the SM_Key it "
		       "showed before: not taken (forged?)",
		       r->guid);
		ok = false;
	}
	if (a->why == ASK_POLL_MASTER) {
		if (!r || sm->state != SM_STATE_STANDBY || sm->el.master != r->guid)
			return; /* stale: things moved on */
		if (!ok) {
			if (++r->misses >= sm->cfg->sm_poll_retries) {
				char why[160];
				snprintf(why, sizeof(why),
				         "master SM GUID " GUID_FMT " missed %u polls in a row",
				         r->guid, r->misses);
				sm_take_over(sm, why);
			} else {
				poll_if_owed(sm, r);
			}
			return;
		}
		bool was_master = r->si.state == SM_STATE_MASTER;
		if (!remote_update(sm, r, &si)) {
			sm_take_over(sm, "the master's SM_Key is no longer this subnet's");
			return;
		}
		if (si.state == SM_STATE_MASTER ||
		    (!was_master &&
		     (si.state == SM_STATE_DISCOVERING || si.state == SM_STATE_STANDBY) &&
		     above_me(sm, r))) {
			/* alive, or about to be master. A standby that looked at the fabric
			 * before the master gave out LIDs knows no LID for it: its own port's
			 * MasterSMLID, which the master set, says it */
			struct mad_local_port lp;
			if (si.state == SM_STATE_MASTER && !remote_lid(sm, r) &&
			    sm->t->ops->query_port(sm->t, &lp) == 0 && lp.sm_lid)
				r->lid = lp.sm_lid;
			remind_master(sm, r);
			poll_if_owed(sm, r);
			return;
		}
		/* a master that stood down handed the subnet to someone: find out whom */
		char why[160];
		snprintf(why, sizeof(why), "SM GUID " GUID_FMT " is %s now, no longer master",
		         r->guid, state_str(si.state));
		sm_take_over(sm, why);
		return;
	}
	/* a query: after a sweep, a light sweep's poll, or a trap 144 */
	if (!ok) {
		/* one asked while this SM was master, of the SM it now stands by for: the polls
		 * count that one's misses, not a question from before */
		if (r && sm->state == SM_STATE_STANDBY && r->guid == sm->el.master)
			return;
		if (r && ++r->misses >= sm->cfg->sm_poll_retries) {
			log_notice(sm->log, "election",
			           "SM GUID " GUID_FMT
			           " does not answer SMInfo any more: forgotten",
			           r->guid);
			remote_forget(sm, r->guid);
		} else if (r && sm->state == SM_STATE_MASTER && !ev_is_active(&sm->el.poll_timer)) {
			/* asked again at the poll interval, not at the next light sweep (there may
			 * be none: sweep_interval 0): a lost answer must not stall a handover */
			double iv = sm->cfg->sm_poll_interval_ms / 1000.0;
			ev_timer_set(&sm->el.poll_timer, iv, 0.);
			ev_timer_start(sm->loop, &sm->el.poll_timer);
		}
		return;
	}
	if (si.guid == sm->local.port_guid)
		return;
	if (a->port != TOPO_NONE && port_guid(&sm->topo, a->port) &&
	    si.guid != port_guid(&sm->topo, a->port)) {
		/* an SM answers for its own port: one that names another would be taken for
		 * an SM it is not */
		log_rl(sm->log, &sm->el.rl_rogue, LOGL_WARN, "election",
		       "ALARM: the SM at port GUID " GUID_FMT " answers SMInfo as GUID " GUID_FMT
		       ": ignored",
		       port_guid(&sm->topo, a->port), si.guid);
		return;
	}
	r = remote_add(sm, si.guid, a->port);
	if (!r)
		return;
	if (remote_update(sm, r, &si) && sm->state == SM_STATE_MASTER) {
		master_consider(sm, r);
		/* an SM still making up its mind is asked again soon, not at the next light
		 * sweep: it may be the one to hand the subnet to */
		if (si.state == SM_STATE_DISCOVERING && !ev_is_active(&sm->el.poll_timer)) {
			double iv = sm->cfg->sm_poll_interval_ms / 1000.0;
			ev_timer_set(&sm->el.poll_timer, iv, 0.);
			ev_timer_start(sm->loop, &sm->el.poll_timer);
		}
	}
}

void election_query(struct sm *sm)
{
	if (sm->cfg->ignore_other_sm)
		return;
	const struct topo *t = &sm->topo;
	bool wait = sm->state != SM_STATE_MASTER;
	/* one pass over the ports the discovery just read: IsSM is in each one's PortInfo */
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct topo_port *port = &t->ports[p];
		if (p == t->sm_port || !port->known ||
		    !(port->pi.capability_mask & PORT_CAP_IS_SM) || !topo_port_endpoint(t, p))
			continue;
		uint64_t g = port_guid(t, p);
		struct sm_remote *r = g ? remote_find(sm, g) : NULL;
		if (r && r->polling && ev_now(sm->loop) - r->asked < 5.0)
			continue;
		if (r) {
			r->polling = true;
			r->asked = ev_now(sm->loop);
		}
		/* one retry: an SM that does not answer twice is not there to follow */
		ask(sm, p, r ? g : 0, ASK_QUERY, wait, 1, 0);
	}
}

/* May this SM stand by for r? Only if r knows the SM_Key: every SM of the subnet shows it
 * to a question that proves it (ibsmd) or to a master's or one with its M_Key (OpenSM 3.3
 * shows it to anyone without M_Key protection); an SM that does not is a stranger, and
 * following it would leave the subnet to it. */
static bool follows(struct sm *sm, const struct sm_remote *r)
{
	if (!sm->cfg->sm_key || knows_key(sm, r))
		return true;
	if (r->si.state == SM_STATE_MASTER || above_me(sm, r))
		log_rl(sm->log, &sm->el.rl_nofollow, LOGL_WARN, "election",
		       "SM GUID " GUID_FMT " (LID %u, priority %u, %s) has not shown this "
		       "subnet's SM_Key: not standing by for it. If it is one of this subnet's "
		       "SMs, give it the same sm_key",
		       r->guid, remote_lid(sm, r), r->si.priority, state_str(r->si.state));
	return false;
}

bool election_decide(struct sm *sm)
{
	if (sm->state == SM_STATE_MASTER)
		return true; /* it acts on the answers as they come (master_consider) */
	if (sm->state != SM_STATE_DISCOVERING)
		return false;
	const struct sm_remote *master = NULL, *higher = NULL;
	for (uint32_t i = 0; i < sm->el.sms.n && !sm->cfg->ignore_other_sm; i++) {
		const struct sm_remote *r = &sm->el.sms.v[i];
		if (r->rogue || !r->answered || r->answered_sweep != sm->topo.sweep)
			continue;
		if (!follows(sm, r))
			continue;
		if (r->si.state == SM_STATE_MASTER) {
			if (!master ||
			    greater(r->si.priority, r->guid, master->si.priority, master->guid))
				master = r;
		} else if ((r->si.state == SM_STATE_DISCOVERING ||
		            r->si.state == SM_STATE_STANDBY) &&
		           above_me(sm, r)) {
			if (!higher ||
			    greater(r->si.priority, r->guid, higher->si.priority, higher->guid))
				higher = r;
		}
	}
	if (master || higher) {
		sm_become_standby(sm, (master ? master : higher)->guid);
		return false;
	}
	log_notice(sm->log, "election",
	           "this SM is master of the subnet (priority %u, %u other SM%s)",
	           sm->cfg->sm_priority, sm->el.sms.n, sm->el.sms.n == 1 ? "" : "s");
	become_master(sm);
	return true;
}

/* A known SM that was master or ranks above this one, and did not answer this sweep's
 * question, is not taken as gone on that alone: a new master in its first sweep (a large
 * fabric, a slow machine) can be late to answer, and deciding without it makes two masters.
 * The decision waits, asking it again every poll interval, while it has missed fewer than
 * sm_poll_retries questions in a row (a dead master has missed its polls already). */
bool election_wait_known(struct sm *sm)
{
	struct sm_election *el = &sm->el;
	if (sm->state != SM_STATE_DISCOVERING || sm->cfg->ignore_other_sm) {
		el->waited = 0;
		return false;
	}
	const struct sm_remote *late = NULL;
	for (uint32_t i = 0; i < el->sms.n; i++) {
		const struct sm_remote *r = &el->sms.v[i];
		if (r->rogue || !r->answered || (sm->cfg->sm_key && !knows_key(sm, r)))
			continue;
		bool outranks = r->si.state == SM_STATE_MASTER || above_me(sm, r);
		if (!outranks)
			continue;
		if (r->answered_sweep == sm->topo.sweep) {
			el->waited = 0;
			return false; /* it answered: the decision can be made */
		}
		if (r->port != TOPO_NONE && r->misses < sm->cfg->sm_poll_retries && !late)
			late = r;
	}
	if (!late || el->waited >= sm->cfg->sm_poll_retries) {
		el->waited = 0;
		return false;
	}
	el->waited++;
	double iv = sm->cfg->sm_poll_interval_ms / 1000.0;
	log_notice(sm->log, "election",
	           "SM GUID " GUID_FMT " (%s, priority %u when it last answered) has not "
	           "answered this sweep's question: asking again in %.1f s before deciding "
	           "(%u of %u)",
	           late->guid, state_str(late->si.state), late->si.priority, iv, el->waited,
	           sm->cfg->sm_poll_retries);
	return true;
}

bool election_hold(struct sm *sm)
{
	struct sm_election *el = &sm->el;
	const struct topo *t = &sm->topo;
	if (sm->state != SM_STATE_DISCOVERING || sm->cfg->ignore_other_sm) {
		el->held = 0;
		return false;
	}
	const struct topo_port *own = &t->ports[t->sm_port];
	/* a CA whose link is up, with nothing answering behind it: M_Keys it does not know
	 * (another SM protects the fabric), or a dead link; as master it would give its own
	 * port a LID and call itself the subnet's master */
	if (topo_is_switch(t, t->sm_node) || !topo_port_up(own) || own->peer != TOPO_NONE) {
		el->held = 0;
		return false;
	}
	el->held++;
	log_rl(sm->log, &el->rl_blind, LOGL_ERR, "election",
	       "nothing answers behind this SM's own port, whose link is up: not taking the "
	       "subnet; if another SM protects it with M_Keys, give this one the same m_key or "
	       "m_key_secret (trying again, %u so far)",
	       el->held);
	if (sm->once && el->held >= 3) {
		sm->exit_code = 1;
		snprintf(sm->exit_reason, sizeof(sm->exit_reason),
		         "nothing answers behind this SM's own port (M_Keys of another SM?)");
		ev_break(sm->loop, EVBREAK_ALL);
		return true;
	}
	/* again after a poll interval, backing off to 10 s while it stays blind */
	double iv = sm->cfg->sm_poll_interval_ms / 1000.0 * el->held;
	sm->full = true;
	ev_timer_stop(sm->loop, &sm->kick_timer);
	ev_timer_set(&sm->kick_timer, iv < 10. ? iv : 10., 0.);
	ev_timer_start(sm->loop, &sm->kick_timer);
	return true;
}

void election_poll_known(struct sm *sm)
{
	for (uint32_t i = 0; i < sm->el.sms.n; i++) {
		struct sm_remote *r = &sm->el.sms.v[i];
		if ((r->polling && ev_now(sm->loop) - r->asked < 5.0) || r->port == TOPO_NONE)
			continue;
		r->polling = true;
		r->asked = ev_now(sm->loop);
		ask(sm, r->port, r->guid, ASK_QUERY, false, 0, 0);
	}
}

static void on_cap_port_info(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                             void *ctx)
{
	(void)res;
	uint32_t p = *(const uint32_t *)ctx;
	struct topo *t = &sm->topo;
	if (!smp || smp->dr_status || p >= t->nports)
		return;
	mad_port_info_decode(smp->data, sizeof(smp->data), &t->ports[p].pi, NULL);
	uint64_t g = port_guid(t, p);
	if (t->ports[p].pi.capability_mask & PORT_CAP_IS_SM) {
		if (p != t->sm_port && !sm->cfg->ignore_other_sm)
			ask(sm, p, 0, ASK_QUERY, false, 1, 0);
	} else if (g && remote_find(sm, g)) {
		log_notice(sm->log, "election", "SM GUID " GUID_FMT " left (IsSM cleared)", g);
		remote_forget(sm, g);
	}
}

void election_cap_changed(struct sm *sm, uint32_t port)
{
	const struct topo *t = &sm->topo;
	if (sm->state != SM_STATE_MASTER || !topo_port_endpoint(t, port))
		return;
	sm->detached++;
	sm_send_dr_port(sm, port, MAD_METHOD_GET, MAD_ATTR_PORT_INFO,
	                sm_port_info_mod(sm, port, false), NULL, 0, on_cap_port_info, &port,
	                sizeof(port));
	sm->detached--;
}

/* ---- changing state ---- */

static void poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sm *sm = (struct sm *)((char *)w - offsetof(struct sm, el.poll_timer));
	if (sm->state == SM_STATE_MASTER) {
		election_poll_known(sm);
		return;
	}
	struct sm_remote *r = remote_find(sm, sm->el.master);
	if (sm->state != SM_STATE_STANDBY)
		return;
	if (!r || (r->port == TOPO_NONE && !r->lid)) {
		sm_take_over(sm, "the master is no longer in the model");
		return;
	}
	if (r->polling) {
		/* the last poll times out one interval after it went, a little after this
		 * tick: skipping the tick made each lost poll cost two intervals (a dead
		 * master found 3 s late where the kernel times the polls). It goes when the
		 * last one ends */
		sm->el.poll_owed = true;
		return;
	}
	poll_master(sm, r);
}

static void abandon_sweep(struct sm *sm)
{
	/* what is in flight still lands in the model, but no phase follows; a routing
	 * under way ends first (its thread reads the model the next sweep would change) */
	route_wait(sm, false);
	sm->phase_next = NULL;
	sm->busy = false;
	sm->again = false;
	ev_timer_stop(sm->loop, &sm->kick_timer);
	ev_timer_stop(sm->loop, &sm->election_wait);
}

void sm_become_standby(struct sm *sm, uint64_t master_guid)
{
	struct sm_election *el = &sm->el;
	struct sm_remote *r = remote_add(sm, master_guid, port_of_guid(&sm->topo, master_guid));
	el->handover_to = 0;
	el->master = master_guid;
	if (r)
		r->misses = 0;
	abandon_sweep(sm);
	bool was_master = sm->state == SM_STATE_MASTER;
	if (was_master)
		topo_forget_all_tables(&sm->topo);
	sm_set_state(sm, SM_STATE_STANDBY);
	log_notice(sm->log, "election",
	           "%s: SM GUID " GUID_FMT " (LID %u, priority %u) is %s; polling it every "
	           "%u ms, taking over after %u missed polls",
	           was_master ? "handed over, standing by" : "standing by", master_guid,
	           r ? remote_lid(sm, r) : 0, r ? r->si.priority : 0,
	           r && r->si.state == SM_STATE_MASTER ? "master" : "to be master",
	           sm->cfg->sm_poll_interval_ms, sm->cfg->sm_poll_retries);
	double iv = sm->cfg->sm_poll_interval_ms / 1000.0;
	el->poll_owed = false;
	el->remind_polls = el->remind_every = el->remind_sent = 0;
	ev_timer_stop(sm->loop, &el->poll_timer);
	ev_timer_set(&el->poll_timer, iv, iv);
	ev_timer_start(sm->loop, &el->poll_timer);
}

static void sweep_now(struct sm *sm)
{
	sm->full = true;
	ev_timer_stop(sm->loop, &sm->kick_timer);
	ev_timer_set(&sm->kick_timer, 0., 0.);
	ev_timer_start(sm->loop, &sm->kick_timer);
}

void sm_take_over(struct sm *sm, const char *why)
{
	struct sm_election *el = &sm->el;
	log_notice(sm->log, "election", "%s: looking for the master again, taking over if none",
	           why);
	ev_timer_stop(sm->loop, &el->poll_timer);
	if (el->master) {
		struct sm_remote *r = remote_find(sm, el->master);
		if (r)
			r->polling = false;
	}
	el->master = 0;
	el->rereg = true; /* a new master: the hosts re-register */
	el->trust_fabric = true;
	el->takeovers++;
	abandon_sweep(sm);
	sm_set_state(sm, SM_STATE_DISCOVERING);
	sweep_now(sm);
}

/* ---- SMInfo requests to this SM ---- */

static void respond(struct sm *sm, const struct mad_addr *from, struct mad_smp *smp,
                    uint16_t status, bool show_key)
{
	struct mad_sm_info si = sm_info(sm);
	if (show_key)
		si.sm_key = sm->cfg->sm_key;
	memset(smp->data, 0, sizeof(smp->data));
	mad_sm_info_encode(&si, smp->data, sizeof(smp->data), NULL);
	smp->hdr.method = MAD_METHOD_GET_RESP;
	if (smp->hdr.mgmt_class == MAD_CLASS_SUBN_DR) {
		smp->dr_status = status;
		smp->direction = 1;
	} else {
		smp->hdr.status = status;
	}
	uint8_t out[MAD_SIZE] = {0};
	mad_smp_encode(smp, out, sizeof(out), NULL);
	mad_dispatcher_respond(sm->d, from, out, MAD_SIZE);
}

static void send_set(struct sm *sm, struct sm_remote *r, uint32_t mod, uint8_t state, sm_smp_fn cb)
{
	if (r->port == TOPO_NONE)
		r->port = port_of_guid(&sm->topo, r->guid);
	if (r->port == TOPO_NONE && !r->lid) {
		log_warn(sm->log, "election",
		         "SM GUID " GUID_FMT " is not in the model: no %s sent", r->guid,
		         mod_str(mod));
		if (cb)
			sm->el.handover_to = 0;
		return;
	}
	uint8_t data[64];
	/* the key itself only by directed route to the SM's port in the model: a LID may come
	 * from a MasterSMLID that a port without M_Key protection lets anyone set */
	own_payload(sm, state, r->guid, knows_key(sm, r) && r->port != TOPO_NONE, data);
	sm->detached++;
	if (r->port != TOPO_NONE)
		sm_send_dr_port(sm, r->port, MAD_METHOD_SET, MAD_ATTR_SM_INFO, mod, data,
		                sizeof(data), cb, &r->guid, sizeof(r->guid));
	else
		sm_send_lid(sm, r->lid, r->guid, MAD_METHOD_SET, MAD_ATTR_SM_INFO, mod, data,
		            sizeof(data), cb, &r->guid, sizeof(r->guid));
	sm->detached--;
}

/* The port an SMP came from, as the model knows it: by its source LID when LID-routed; on a
 * directed route, back from this SM's port along the ports each node recorded in the return
 * path as it received it (IBA 14.2.2.2). TOPO_NONE when the model cannot tell. */
static uint32_t sender_port(const struct sm *sm, const struct mad_addr *from,
                            const struct mad_smp *smp)
{
	const struct topo *t = &sm->topo;
	if (t->sm_port == TOPO_NONE || t->sm_port >= t->nports)
		return TOPO_NONE;
	if (smp->hdr.mgmt_class != MAD_CLASS_SUBN_DR)
		return from->lid && from->lid < TOPO_LID_COUNT ? t->lid_port[from->lid] : TOPO_NONE;
	if (smp->dr_slid != 0xffff || smp->dr_dlid != 0xffff || smp->hop_cnt > 63)
		return TOPO_NONE; /* partly LID-routed: not followed */
	if (smp->hop_cnt == 0)
		return t->sm_port;
	/* where it came in: this CA port, or the switch port the last hop recorded (an SM on
	 * a switch's port 0) */
	uint32_t cur = topo_is_switch(t, t->sm_node)
	                   ? topo_port(t, t->sm_node, smp->return_path[smp->hop_cnt])
	                   : t->sm_port;
	if (cur == TOPO_NONE || cur == t->nodes[t->sm_node].first_port)
		return TOPO_NONE;
	for (unsigned h = smp->hop_cnt - 1u; h >= 1; h--) {
		uint32_t peer = topo_reader_peer(t, cur);
		if (peer == TOPO_NONE)
			return TOPO_NONE;
		uint32_t n = t->ports[peer].node;
		if (!topo_is_switch(t, n) || smp->return_path[h] == 0)
			return TOPO_NONE;
		cur = topo_port(t, n, smp->return_path[h]);
		if (cur == TOPO_NONE)
			return TOPO_NONE;
	}
	return topo_reader_peer(t, cur);
}

/* A Set may change this SM's state only from an SM that knows the SM_Key (see the top of the
 * file); `src_ok`: it came from the port of the SM it names. */
static bool set_allowed(struct sm *sm, uint32_t mod, const struct mad_sm_info *asked,
                        const struct sm_remote *r, bool src_ok)
{
	if (!sm->cfg->sm_key)
		return !r || !r->rogue; /* no key to check: any SM of this subnet */
	if (payload_proves(sm, asked))
		return true;
	if (!src_ok || !r || r->rogue)
		return false;
	if (knows_key(sm, r))
		return true;
	/* OpenSM, master, hands over or has this standby sweep with key 0 in its Sets */
	return (mod == SMINFO_HANDOVER || mod == SMINFO_DISCOVER) &&
	       sm->state == SM_STATE_STANDBY && sm->el.master == asked->guid;
}

static void handle_set(struct sm *sm, const struct mad_addr *from, struct mad_smp *smp,
                       bool show_key)
{
	struct mad_sm_info asked = {0};
	mad_sm_info_decode(smp->data, sizeof(smp->data), &asked, NULL);
	uint32_t mod = smp->hdr.attr_mod;
	const struct ibsmd_config *c = sm->cfg;
	struct sm_remote *r = asked.guid ? remote_find(sm, asked.guid) : NULL;
	uint32_t sp = sender_port(sm, from, smp);
	bool src_ok = asked.guid && sp != TOPO_NONE && port_guid(&sm->topo, sp) == asked.guid;
	if (c->sm_key && asked.sm_key && asked.sm_key != c->sm_key && !payload_proves(sm, &asked)) {
		log_rl(sm->log, &sm->el.rl_rogue, LOGL_WARN, "election",
		       "ALARM: SMInfo Set %s from LID %u (GUID " GUID_FMT ") with an SM_Key that "
		       "is not this subnet's: refused",
		       mod_str(mod), from->lid, asked.guid);
		respond(sm, from, smp, MAD_STATUS_INVALID_FIELD, false);
		return;
	}
	if (!set_allowed(sm, mod, &asked, r, src_ok)) {
		log_rl(sm->log, &sm->el.rl_rogue, LOGL_WARN, "election",
		       "ALARM: SMInfo Set %s from LID %u naming SM GUID " GUID_FMT
		       " (which says it is %s): %s; refused",
		       mod_str(mod), from->lid, asked.guid, state_str(asked.state),
		       !src_ok ? "it does not come from that SM's port"
		       : r     ? "that SM has not shown this subnet's SM_Key"
		               : "no SM of that GUID has answered this one");
		respond(sm, from, smp, MAD_STATUS_INVALID_FIELD, false);
		return;
	}
	/* who may say what (C14-38): ACKNOWLEDGE comes from the standby that received a
	 * HANDOVER, the others from a master; each is legal only in some states */
	bool legal = false;
	uint8_t st = sm->state;
	switch (mod) {
	case SMINFO_HANDOVER:
		legal = asked.state == SM_STATE_MASTER && st != SM_STATE_NOT_ACTIVE;
		break;
	case SMINFO_ACKNOWLEDGE: legal = asked.state == SM_STATE_STANDBY; break;
	case SMINFO_DISABLE: legal = asked.state == SM_STATE_MASTER; break;
	case SMINFO_STANDBY:
		legal = asked.state == SM_STATE_MASTER &&
		        (st == SM_STATE_DISCOVERING || st == SM_STATE_MASTER);
		break;
	case SMINFO_DISCOVER:
		legal = asked.state == SM_STATE_MASTER &&
		        (st == SM_STATE_STANDBY || st == SM_STATE_NOT_ACTIVE);
		break;
	default: break;
	}
	if (!legal || !asked.guid) {
		log_rl(sm->log, &sm->el.rl_set, LOGL_WARN, "election",
		       "SMInfo Set %s from LID %u (GUID " GUID_FMT ", which says it is %s) while "
		       "this SM is %s: not a legal transition, refused",
		       mod_str(mod), from->lid, asked.guid, state_str(asked.state), state_str(st));
		respond(sm, from, smp, MAD_STATUS_INVALID_FIELD, show_key);
		return;
	}
	log_notice(sm->log, "election", "SMInfo Set %s from SM GUID " GUID_FMT " (LID %u) while %s",
	           mod_str(mod), asked.guid, from->lid, state_str(st));
	if (!r)
		r = remote_add(sm, asked.guid, port_of_guid(&sm->topo, asked.guid));
	if (r && src_ok && from->lid && from->lid < 0xc000)
		r->lid = from->lid;
	else if (r && asked.state == SM_STATE_MASTER && sm->topo.sm_port != TOPO_NONE &&
	         sm->topo.ports[sm->topo.sm_port].pi.master_sm_lid < 0xc000)
		/* by directed route: the master is where our port's MasterSMLID says */
		r->lid = sm->topo.ports[sm->topo.sm_port].pi.master_sm_lid;
	switch (mod) {
	case SMINFO_HANDOVER:
		if (st == SM_STATE_MASTER) {
			respond(sm, from, smp, 0, show_key); /* it yields; nothing changes here */
			break;
		}
		/* the acknowledgement says the state the HANDOVER found us in (OpenSM takes an
		 * ACKNOWLEDGE only from a standby) */
		if (r)
			send_set(sm, r, SMINFO_ACKNOWLEDGE, SM_STATE_STANDBY, NULL);
		ev_timer_stop(sm->loop, &sm->el.poll_timer);
		sm->el.master = 0;
		sm->el.rereg = true;
		sm->el.trust_fabric = true;
		sm->el.takeovers++;
		abandon_sweep(sm);
		become_master(sm);
		respond(sm, from, smp, 0, show_key);
		sweep_now(sm);
		break;
	case SMINFO_ACKNOWLEDGE:
		respond(sm, from, smp, 0, show_key);
		if (st == SM_STATE_MASTER && asked.guid &&
		    (sm->el.handover_to == asked.guid || sm->el.handover_last == asked.guid))
			sm_become_standby(sm, asked.guid);
		break;
	case SMINFO_DISABLE:
		ev_timer_stop(sm->loop, &sm->el.poll_timer);
		sm->el.master = 0;
		abandon_sweep(sm);
		sm_set_state(sm, SM_STATE_NOT_ACTIVE);
		respond(sm, from, smp, 0, show_key);
		log_notice(sm->log, "election",
		           "NOT-ACTIVE: this SM does nothing until an SM tells it to DISCOVER or "
		           "it restarts");
		break;
	case SMINFO_STANDBY:
		sm_become_standby(sm, asked.guid);
		respond(sm, from, smp, 0, show_key);
		break;
	case SMINFO_DISCOVER:
		respond(sm, from, smp, 0, show_key);
		sm_take_over(sm, "told to DISCOVER");
		break;
	}
}

/* A master polled by an SM it does not know (one it forgot while that SM was stopped or cut
 * off, whose IsSM never changed so no trap told of it): ask it, as a sweep would have. Only a
 * port of the model is asked (its IsSM there may predate the SM: trap 144 does not re-read
 * PortInfo), and only an answer adds an SM, under the GUID it answers with: a forged GUID
 * costs one SMInfo Get to a real port and leaves nothing behind. */
static void learn_poller(struct sm *sm, uint64_t guid)
{
	if (!guid || guid == sm->local.port_guid || sm->cfg->ignore_other_sm ||
	    remote_find(sm, guid))
		return;
	const struct topo *t = &sm->topo;
	uint32_t p = u64map_get(&t->by_port_guid, guid);
	if (p != U64MAP_NONE && t->ports[p].known)
		ask(sm, p, 0, ASK_QUERY, false, 1, 0);
}

void election_handle_sm_info(struct sm *sm, const struct mad_addr *from, const uint8_t *mad,
                             size_t len)
{
	struct mad_smp smp;
	struct mad_error err;
	if (mad_smp_decode(mad, len, &smp, &err) < 0) {
		log_rl(sm->log, &sm->rl_garbage, LOGL_WARN, "election",
		       "malformed SMInfo request from LID %u: %s", from->lid, err.msg);
		return;
	}
	if (mad_is_response(smp.hdr.method))
		return;
	/* The SM_Key goes to a requester that authenticates (IBA 14.4.1): with the M_Key of
	 * this SM's port when ibsmd protects its ports with one, or by proving the key in its
	 * SMInfo payload (ibsmd's standbys and masters do). OpenSM shows no key to ibsmd's
	 * questions as a standby and takes key 0 from ibsmd as "not shown", which IBA allows. */
	struct mad_sm_info asked = {0};
	mad_sm_info_decode(smp.data, sizeof(smp.data), &asked, NULL);
	const struct ibsmd_config *c = sm->cfg;
	uint64_t own = mkey_in_use(sm, sm->local.port_guid);
	bool mkey_protected = own && c->m_key_protect >= 1;
	bool knows = payload_proves(sm, &asked) ||
	             (mkey_protected &&
	              (smp.mkey == own || smp.mkey == mkey_wanted(sm, sm->local.port_guid))) ||
	             (!mkey_protected && c->show_sm_key);
	++sm->act_count;
	if (smp.hdr.method == MAD_METHOD_SET) {
		handle_set(sm, from, &smp, knows);
		return;
	}
	bool get = smp.hdr.method == MAD_METHOD_GET;
	respond(sm, from, &smp, get ? 0 : MAD_STATUS_UNSUP_METHOD,
	        knows); /* smp is the answer now */
	if (get && sm->state == SM_STATE_MASTER)
		learn_poller(sm, asked.guid);
}

/* ---- life cycle ---- */

void election_init(struct sm *sm)
{
	sm->el.rl_rogue = LOG_RL_INIT(3, 10000);
	sm->el.rl_blind = LOG_RL_INIT(3, 60000);
	sm->el.rl_set = LOG_RL_INIT(5, 1000);
	sm->el.rl_unproved = LOG_RL_INIT(2, 60000);
	sm->el.rl_nofollow = LOG_RL_INIT(2, 60000);
	if (sodium_init() < 0)
		log_err(sm->log, "election", "libsodium does not initialize: SM_Key proofs fail");
	uint64_t key = sm->cfg->sm_key;
	if (key && sm->cfg->m_key && sm->cfg->m_key_protect && !sm->cfg->has_m_key_secret)
		log_warn(
		    sm->log, "election",
		    "one m_key on every port: SMInfo shows the SM_Key to a requester with this "
		    "port's M_Key, and a host that reads its own port's key holds it; set "
		    "m_key_secret (each port then has a key of its own)");
	if (key == 0)
		log_warn(sm->log, "election",
		         "sm_key 0: any host that runs an SM can take this subnet's mastership; "
		         "set sm_key to a random 64-bit value, the same on every SM of the subnet");
	else if (key == 1)
		log_warn(sm->log, "election",
		         "sm_key 1 (the default, as OpenSM's): anyone can guess it and act as an "
		         "SM of this subnet, a trusted SA requester and a standby; set sm_key to a "
		         "random 64-bit value, the same on every SM of the subnet");
	ev_init(&sm->el.poll_timer, poll_cb);
}

void election_stop(struct sm *sm)
{
	ev_timer_stop(sm->loop, &sm->el.poll_timer);
}

void election_free(struct sm *sm)
{
	election_stop(sm);
	vec_free(&sm->el.sms);
	u64map_free(&sm->el.by_guid);
}

uint32_t sm_remote_count(const struct sm *sm)
{
	return sm->el.sms.n;
}

bool sm_remote_get(const struct sm *sm, uint32_t i, struct sm_remote_info *out)
{
	if (i >= sm->el.sms.n)
		return false;
	const struct sm_remote *r = &sm->el.sms.v[i];
	*out = (struct sm_remote_info){
	    .info = r->si,
	    .lid = remote_lid(sm, r),
	    .answered = r->answered,
	    .rogue = r->rogue,
	};
	out->info.guid = r->guid;
	out->info.sm_key = 0;
	return true;
}

uint16_t sm_master_lid(const struct sm *sm, uint64_t *guid)
{
	if (sm->state != SM_STATE_STANDBY || !sm->el.master)
		return 0;
	uint32_t i = u64map_get(&sm->el.by_guid, sm->el.master);
	if (i == U64MAP_NONE)
		return 0;
	if (guid)
		*guid = sm->el.master;
	return remote_lid(sm, &sm->el.sms.v[i]);
}

bool sm_peer_at_lid(const struct sm *sm, uint16_t lid, uint64_t *guid)
{
	const struct topo *t = &sm->topo;
	uint32_t p = lid < TOPO_LID_COUNT ? t->lid_port[lid] : TOPO_NONE;
	if (p == TOPO_NONE)
		return false;
	uint64_t g = topo_port_guid(t, p);
	uint32_t i = u64map_get(&sm->el.by_guid, g);
	if (i == U64MAP_NONE)
		return false;
	const struct sm_remote *r = &sm->el.sms.v[i];
	if (!r->answered || r->rogue)
		return false;
	if (guid)
		*guid = g;
	return true;
}
