/* The partition API (see api.h): routing, authentication and UFM's answer shapes here, the
 * parsing of what clients send in api_parse.c, the operations in sm/tenants.c. */
#include "daemon/api.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <microhttpd.h>

#include "daemon/health_report.h"
#include "daemon/topology.h"
#include "daemon/ufm_events.h"
#include "fabric/dump.h"
#include "mad/link_speed.h"
#include "sm/tenants.h"

#define REALM "ibsmd"
/* connections at once: enough for an orchestrator's workers on one address, few enough that
 * one address cannot take them all */
#define API_CONNECTIONS 32
#define API_PER_ADDRESS 16
#ifndef IBSMD_VERSION /* CMake's project version; a bare compile (test/call_cycles.py) lacks it */
#define IBSMD_VERSION "unknown"
#endif

/* One request's state, from its headers to its last body byte. */
struct api_req {
	char *body;
	size_t len, cap;
	bool too_big;
	char who[160];   /* "https alice@10.0.0.5", for the journal */
	char client[72]; /* "https:alice": whose pending GUIDs (api_max_pending) */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void peer_of(struct MHD_Connection *conn, char *out, size_t len)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	snprintf(out, len, "?");
	if (ci && ci->client_addr)
		getnameinfo(ci->client_addr, sizeof(struct sockaddr_storage), out, (socklen_t)len,
		            NULL, 0, NI_NUMERICHOST);
}

/* ---- answers ---- */

/* text (malloc'ed, taken) as the body; header: one more header's name and value, or NULL. */
static enum MHD_Result answer_text_h(struct MHD_Connection *conn, unsigned code, char *text,
                                     const char *type, const char *header, const char *value)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	if (header)
		MHD_add_response_header(r, header, value);
	if (code == MHD_HTTP_SERVICE_UNAVAILABLE || code == MHD_HTTP_TOO_MANY_REQUESTS)
		MHD_add_response_header(r, "Retry-After", "1");
	enum MHD_Result ret = code == MHD_HTTP_UNAUTHORIZED
	                          ? MHD_queue_basic_auth_fail_response(conn, REALM, r)
	                          : MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result answer_text(struct MHD_Connection *conn, unsigned code, char *text,
                                   const char *type)
{
	return answer_text_h(conn, code, text, type, NULL, NULL);
}

/* v (a reference taken) as the JSON body. */
static enum MHD_Result answer_json(struct MHD_Connection *conn, unsigned code, json_t *v)
{
	char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
	json_decref(v);
	if (!text)
		return MHD_NO;
	return answer_text(conn, code, text, "application/json");
}

static enum MHD_Result answer_error(struct MHD_Connection *conn, unsigned code, const char *msg)
{
	return answer_json(conn, code, json_pack("{s:s}", "error", msg));
}

/* ---- authentication ---- */

/* Who the request's Basic credentials name, in r->who; else an answer queued and false. */
static bool authenticate(struct api *a, struct MHD_Connection *conn, struct api_req *r,
                         enum MHD_Result *ret)
{
	const struct log *lg = a->ctl->rl->log;
	char peer[64], *pass = NULL;
	peer_of(conn, peer, sizeof(peer));
	char *name = MHD_basic_auth_get_username_password(conn, &pass);
	enum api_auth res = API_AUTH_UNKNOWN_USER;
	if (name && pass) {
		res = api_users_check(&a->users, name, pass, false);
		uint64_t held;
		if (res == API_AUTH_NEED_VERIFY && log_rl_allow(&a->verify_bucket, now_ns(), &held))
			res = api_users_check(&a->users, name, pass, true);
	}
	if (res == API_AUTH_OK || res == API_AUTH_CACHED) {
		snprintf(r->who, sizeof(r->who), "https %s@%s", name, peer);
		snprintf(r->client, sizeof(r->client), "https:%s", name);
	}
	if (pass) {
		sodium_memzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (res == API_AUTH_OK || res == API_AUTH_CACHED) {
		MHD_free(name);
		return true;
	}
	if (res == API_AUTH_NEED_VERIFY) {
		log_rl(lg, &a->rl_auth, LOGL_WARN, "api",
		       "%s: password checks over their rate; answered 429", peer);
		*ret = answer_error(conn, MHD_HTTP_TOO_MANY_REQUESTS,
		                    "too many password checks at once; retry");
	} else {
		a->unauthorized++;
		log_rl(lg, &a->rl_auth, LOGL_WARN, "api", "%s: %s; answered 401", peer,
		       !name                          ? "no Basic credentials"
		       : res == API_AUTH_UNKNOWN_USER ? "an unknown user"
		                                      : "a wrong password");
		*ret = answer_error(conn, MHD_HTTP_UNAUTHORIZED, "wrong user name or password");
	}
	if (name)
		MHD_free(name);
	return false;
}

/* ---- the routes ---- */

static unsigned http_status(int st)
{
	switch (st) {
	case TENANTS_OK: return MHD_HTTP_OK;
	case TENANTS_INVALID: return MHD_HTTP_BAD_REQUEST;
	case TENANTS_NOT_FOUND: return MHD_HTTP_NOT_FOUND;
	case TENANTS_REFUSED: return MHD_HTTP_FORBIDDEN;
	case TENANTS_NOT_MASTER: return MHD_HTTP_SERVICE_UNAVAILABLE;
	default: return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
}

/* GET /ufmRest/app/ufm_version: what ib-kubernetes asks to know the SM is there; 200 only
 * from a master with the subnet up, so that it talks to the SM that can act. */
static enum MHD_Result route_version(struct api *a, struct MHD_Connection *conn)
{
	struct sm *sm = a->ctl->rl->sm;
	struct sm_status st = sm_status(sm);
	if (sm_info(sm).state != SM_STATE_MASTER || !st.up)
		return answer_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
		                    sm_info(sm).state != SM_STATE_MASTER
		                        ? "this SM is not the master"
		                        : "the subnet is not up yet");
	return answer_json(conn, MHD_HTTP_OK,
	                   json_pack("{s:s}", "ufm_release_version", "ibsmd " IBSMD_VERSION));
}

/* A number as UFM writes it: an integer when it is one (clients read mtu_limit into an
 * integer type, and 2.0 would not parse there), else a real (a rate of 2.5). */
static json_t *number_json(double v)
{
	return v == (double)(json_int_t)v ? json_integer((json_int_t)v) : json_real(v);
}

/* A partition's "qos_conf" as UFM shows it: mtu_limit in KB, rate_limit in Gb/s and
 * service_level; where no cap was given, what its IPoIB group runs at (and SL 0). */
static json_t *qos_json(const struct tenants_partition *p)
{
	uint8_t mtu = p->mtu_limit ? p->mtu_limit : p->ipoib_mtu;
	uint8_t rate = p->rate_limit ? p->rate_limit : p->ipoib_rate;
	const char *g = mad_rate_name(rate);
	return json_pack("{s:o,s:i,s:o}", "mtu_limit", number_json((128u << mtu) / 1024.0),
	                 "service_level", p->has_sl ? p->sl : 0, "rate_limit",
	                 number_json(g ? strtod(g, NULL) : 0.0));
}

/* A partition in UFM's shape: {"partition", "ip_over_ib", "guids": [{"guid", "membership",
 * "index0", ...}]}, the GUIDs as UFM writes them (16 hex digits, no 0x) and only with
 * guids_data. Members that are not GUIDs (ALL, SELF...) have no UFM form and are left out.
 * Each GUID also says where it is as UFM's port listing does: "lid" (65535 for a GUID not
 * in the fabric), "logical_state" ("Unknown" then) and "port_type" (physical, virtual for
 * an alias), and ibsmd's "pending" (added before the fabric showed it). */
static json_t *partition_json(const struct tenants_partition *p, bool guids, bool qos)
{
	json_t *o = json_pack("{s:s,s:b}", "partition", p->name, "ip_over_ib", p->ipoib);
	if (o && qos)
		json_object_set_new(o, "qos_conf", qos_json(p));
	if (!o || !guids)
		return o;
	json_t *list = json_array();
	for (unsigned i = 0; list && i < p->nmembers; i++) {
		const struct tenants_member *m = &p->members[i];
		if (m->kind != CM_GUID)
			continue;
		char g[17];
		snprintf(g, sizeof(g), "%016" PRIx64, m->guid);
		static const char *states[] = {"Unknown", "Down", "Initialize", "Armed", "Active"};
		bool known = m->in_fabric && m->lid;
		json_array_append_new(
		    list, json_pack("{s:s,s:s,s:b,s:i,s:s,s:s,s:b}", "guid", g, "membership",
		                    m->membership == CM_LIMITED ? "limited" : "full", "index0",
		                    p->index0, "lid", known ? m->lid : 65535, "logical_state",
		                    states[m->in_fabric && m->port_state <= 4 ? m->port_state : 0],
		                    "port_type", m->alias ? "virtual" : "physical", "pending",
		                    m->from_api && !m->in_fabric));
	}
	json_object_set_new(o, "guids", list ? list : json_null());
	return o;
}

static bool want(struct MHD_Connection *conn, const char *arg)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, arg);
	return v && !strcmp(v, "true");
}

/* GET /ufmRest/resources/pkeys[/]: {"0x5": {...}, ...}, ib-kubernetes's ListGuidsInUse. */
static enum MHD_Result route_list(struct api *a, struct MHD_Connection *conn)
{
	struct tenants_partition *ps = NULL;
	unsigned n = 0;
	char err[256] = "";
	int st = tenants_list(a->ctl->rl->sm, &ps, &n, err, sizeof(err));
	if (st != TENANTS_OK)
		return answer_error(conn, http_status(st), err);
	json_t *all = json_object();
	bool guids = want(conn, "guids_data"), qos = want(conn, "qos_conf");
	for (unsigned i = 0; all && i < n; i++) {
		char key[8];
		snprintf(key, sizeof(key), "0x%x", ps[i].pkey);
		json_object_set_new(all, key, partition_json(&ps[i], guids, qos));
	}
	tenants_list_free(ps, n);
	return answer_json(conn, MHD_HTTP_OK, all);
}

/* GET /ufmRest/resources/pkeys/<pkey>[?guids_data=true] */
static enum MHD_Result route_get(struct api *a, struct MHD_Connection *conn, const char *arg)
{
	uint16_t pkey;
	if (api_parse_pkey(arg, &pkey) < 0)
		return answer_error(
		    conn, MHD_HTTP_BAD_REQUEST,
		    "the P_Key in the path: a hexadecimal number from 0x1 to 0x7ffe");
	struct tenants_partition p;
	char err[256] = "";
	int st = tenants_get(a->ctl->rl->sm, pkey, &p, err, sizeof(err));
	if (st != TENANTS_OK)
		return answer_error(conn, http_status(st), err);
	json_t *o = partition_json(&p, want(conn, "guids_data"), want(conn, "qos_conf"));
	tenants_partition_free(&p);
	return answer_json(conn, MHD_HTTP_OK, o);
}

/* POST /ufmRest/resources/pkeys[/] and /ufmRest/actions/remove_guids_from_pkey: UFM answers
 * both with 200 and an empty body, which is what ib-kubernetes checks. */
static enum MHD_Result route_change(struct api *a, struct MHD_Connection *conn, struct api_req *r,
                                    enum api_req_kind kind)
{
	const struct log *lg = a->ctl->rl->log;
	if (r->too_big)
		return answer_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "the body is over 1 MiB");
	struct api_pkey_req rq;
	char why[300] = "";
	if (api_parse_pkey_req(r->body ? r->body : "", r->len, kind, &rq, why, sizeof(why)) < 0) {
		api_pkey_req_free(&rq);
		log_rl(lg, &a->rl_bad, LOGL_WARN, "api", "%s: refused, 400: %s", r->who, why);
		return answer_error(conn, MHD_HTTP_BAD_REQUEST, why);
	}
	char err[300] = "";
	int st;
	if (kind != API_REQ_REMOVE) {
		uint8_t *ms = NULL;
		if (rq.fulls && !(ms = malloc(rq.nguids))) {
			api_pkey_req_free(&rq);
			return answer_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		}
		for (size_t i = 0; ms && i < rq.nguids; i++)
			ms[i] = rq.fulls[i] ? CM_FULL : CM_LIMITED;
		struct tenants_add add = {.pkey = rq.pkey,
		                          .guids = rq.guids,
		                          .nguids = (unsigned)rq.nguids,
		                          .membership = rq.full ? CM_FULL : CM_LIMITED,
		                          .index0 = rq.index0,
		                          .ipoib = rq.ip_over_ib,
		                          .client = r->client,
		                          .memberships = ms,
		                          .replace = kind == API_REQ_SET};
		st = tenants_add(a->ctl->rl->sm, r->who, &add, err, sizeof(err));
		free(ms);
	} else {
		st = tenants_remove(a->ctl->rl->sm, r->who, rq.pkey, rq.guids, (unsigned)rq.nguids,
		                    err, sizeof(err));
	}
	log_rl(lg, st == TENANTS_OK ? &a->rl_change : &a->rl_bad,
	       st == TENANTS_OK ? LOGL_INFO : LOGL_WARN, "api",
	       "%s: %s %zu GUID(s) %s P_Key 0x%04x: %s", r->who,
	       kind == API_REQ_ADD   ? "add"
	       : kind == API_REQ_SET ? "set"
	                             : "remove",
	       rq.nguids,
	       kind == API_REQ_REMOVE ? "from"
	       : kind == API_REQ_SET  ? "as"
	                              : "to",
	       rq.pkey, st == TENANTS_OK ? "done" : err);
	api_pkey_req_free(&rq);
	if (st != TENANTS_OK)
		return answer_error(conn, http_status(st), err);
	return answer_text(conn, MHD_HTTP_OK, strdup(""), "application/json");
}

/* POST /ufmRest/resources/pkeys/add (a partition without members, with its QoS) and PUT
 * or POST /ufmRest/resources/pkeys/qos_conf (its QoS): 200 and an empty body. Clients
 * differ on qos_conf's method (NVIDIA's client PUTs, others POST): both are taken. */
static enum MHD_Result route_define(struct api *a, struct MHD_Connection *conn, struct api_req *r,
                                    bool qos)
{
	const struct log *lg = a->ctl->rl->log;
	if (r->too_big)
		return answer_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "the body is over 1 MiB");
	struct api_partition_req rq;
	char why[300] = "", err[300] = "";
	if (api_parse_partition_req(r->body ? r->body : "", r->len, qos, &rq, why, sizeof(why)) <
	    0) {
		log_rl(lg, &a->rl_bad, LOGL_WARN, "api", "%s: refused, 400: %s", r->who, why);
		return answer_error(conn, MHD_HTTP_BAD_REQUEST, why);
	}
	struct tenants_define d = {.pkey = rq.pkey,
	                           .name = rq.has_name ? rq.name : NULL,
	                           .qos_only = qos,
	                           .has_index0 = rq.has_index0,
	                           .index0 = rq.index0,
	                           .has_ipoib = rq.has_ipoib,
	                           .ipoib = rq.ipoib,
	                           .has_mtu = rq.has_mtu,
	                           .has_rate = rq.has_rate,
	                           .has_sl = rq.has_sl,
	                           .mtu = rq.mtu,
	                           .rate = rq.rate,
	                           .sl = rq.sl,
	                           .client = r->client};
	int st = tenants_define(a->ctl->rl->sm, r->who, &d, err, sizeof(err));
	log_rl(lg, st == TENANTS_OK ? &a->rl_change : &a->rl_bad,
	       st == TENANTS_OK ? LOGL_INFO : LOGL_WARN, "api", "%s: %s P_Key 0x%04x: %s", r->who,
	       qos ? "QoS of" : "define", rq.pkey, err);
	if (st != TENANTS_OK)
		return answer_error(conn, http_status(st), err);
	return answer_text(conn, MHD_HTTP_OK, strdup(""), "application/json");
}

/* DELETE /ufmRest/resources/pkeys/PKEY (the partition, with every member the API gave it)
 * and DELETE /ufmRest/resources/pkeys/PKEY/guids/G1,G2,... (those members; UFM's current
 * form of remove_guids_from_pkey): 200 and an empty body, as UFM answers. */
static enum MHD_Result route_delete(struct api *a, struct MHD_Connection *conn, struct api_req *r,
                                    const char *arg)
{
	const struct log *lg = a->ctl->rl->log;
	char pk[16], why[300] = "", err[300] = "";
	const char *guids = strstr(arg, "/guids/");
	size_t len = guids ? (size_t)(guids - arg) : strlen(arg);
	uint16_t pkey;
	snprintf(pk, sizeof(pk), "%.*s", (int)(len < sizeof(pk) ? len : sizeof(pk)), arg);
	if (len >= sizeof(pk) || api_parse_pkey(pk, &pkey) < 0)
		return answer_error(
		    conn, MHD_HTTP_BAD_REQUEST,
		    "the P_Key in the path: a hexadecimal number from 0x1 to 0x7ffe");
	int st;
	struct api_pkey_req rq = {0};
	if (guids) {
		if (api_parse_guid_list(guids + strlen("/guids/"), &rq, why, sizeof(why)) < 0) {
			api_pkey_req_free(&rq);
			log_rl(lg, &a->rl_bad, LOGL_WARN, "api", "%s: refused, 400: %s", r->who,
			       why);
			return answer_error(conn, MHD_HTTP_BAD_REQUEST, why);
		}
		st = tenants_remove(a->ctl->rl->sm, r->who, pkey, rq.guids, (unsigned)rq.nguids,
		                    err, sizeof(err));
	} else {
		st = tenants_delete(a->ctl->rl->sm, r->who, pkey, err, sizeof(err));
	}
	log_rl(lg, st == TENANTS_OK ? &a->rl_change : &a->rl_bad,
	       st == TENANTS_OK ? LOGL_INFO : LOGL_WARN, "api",
	       "%s: delete %s%zu%s P_Key 0x%04x: %s", r->who, guids ? "" : "partition", rq.nguids,
	       guids ? " GUID(s) of" : "", pkey, st == TENANTS_OK ? "done" : err);
	api_pkey_req_free(&rq);
	if (st != TENANTS_OK)
		return answer_error(conn, http_status(st), err);
	return answer_text(conn, MHD_HTTP_OK, strdup(""), "application/json");
}

/* GET /topology/slurm, /topology/slurm.yaml and /topology/dot: daemon/topology.h's texts, byte for
 * byte what the control socket gives ibsa, for the hosts that have no control socket (a Slurm
 * controller fetching its topology.conf). Only from a master with the subnet up: a standby does not
 * sweep, and a file from a model nobody keeps current would place jobs by links long gone.
 * The name problems ibsa prints are counted in a header, so a script can refuse the file. */
static enum MHD_Result route_topology(struct api *a, struct MHD_Connection *conn, bool slurm,
                                      bool yaml)
{
	struct sm *sm = a->ctl->rl->sm;
	if (sm_info(sm).state != SM_STATE_MASTER || !sm_status(sm).up)
		return answer_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
		                    sm_info(sm).state != SM_STATE_MASTER
		                        ? "this SM is not the master"
		                        : "the subnet is not up yet");
	char *text = NULL, count[16];
	size_t len = 0;
	int rc = -1;
	FILE *out = open_memstream(&text, &len);
	if (out) {
		const struct slurm_opts o = {.names = &a->ctl->rl->names, .yaml = yaml};
		rc = slurm ? topology_slurm(sm_fabric(sm), &o, out, NULL)
		           : control_topology_dot(sm, out);
		if (fclose(out))
			rc = -1;
	}
	if (rc < 0) {
		free(text);
		return answer_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	snprintf(count, sizeof(count), "%d", rc);
	return answer_text_h(conn, MHD_HTTP_OK, text,
	                     slurm ? "text/plain; charset=utf-8" : "text/vnd.graphviz",
	                     slurm ? "X-Ibsmd-Topology-Problems" : NULL, count);
}

/* GET /ufmRest/resources/vports: the virtual ports, in UFM's shape (topo_dump_vports). */
static enum MHD_Result route_vports(struct api *a, struct MHD_Connection *conn)
{
	struct sm *sm = a->ctl->rl->sm;
	if (sm_info(sm).state != SM_STATE_MASTER)
		return answer_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
		                    "this SM is not the master");
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (!out)
		return answer_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	topo_dump_vports(sm_fabric(sm), TOPO_NONE, true, out);
	if (fclose(out)) {
		free(text);
		return answer_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	return answer_text(conn, MHD_HTTP_OK, text, "application/json");
}

/* GET /health: the fabric health report as `ibsa --json health` gives it; 200 when no check
 * fails, 503 when one does, so that a probe that reads only the status code sees it. */
static enum MHD_Result route_health(struct api *a, struct MHD_Connection *conn)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int rc = out ? health_report(a->ctl->rl->sm, a->ctl->rl->sync, a->ctl->pm, out, true) : -1;
	if (out && fclose(out))
		rc = -1;
	if (rc < 0) {
		free(text);
		return answer_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	return answer_text(conn, rc == 2 ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK, text,
	                   "application/json");
}

/* GET /ufmRest/app/alarms: what the health report finds, one UFM alarm each; GET
 * /ufmRest/app/events: the recent events, in UFM's shape. */
static enum MHD_Result route_ufm_app(struct api *a, struct MHD_Connection *conn, bool alarms)
{
	if (!alarms)
		return a->ctl->events ? answer_json(conn, MHD_HTTP_OK, ufm_events(a->ctl->events))
		                      : answer_json(conn, MHD_HTTP_OK, json_array());
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int rc = out ? health_alarms(a->ctl->rl->sm, a->ctl->rl->sync, a->ctl->pm, out,
	                             (double)now.tv_sec + now.tv_nsec / 1e9)
	             : -1;
	if (out && fclose(out))
		rc = -1;
	if (rc < 0) {
		free(text);
		return answer_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	return answer_text(conn, MHD_HTTP_OK, text, "application/json");
}

#define TOPOLOGY "/topology/"
#define HEALTH   "/health"
#define ALARMS   "/ufmRest/app/alarms"
#define EVENTS   "/ufmRest/app/events"
#define VPORTS   "/ufmRest/resources/vports"
#define PKEYS    "/ufmRest/resources/pkeys"
#define VERSION  "/ufmRest/app/ufm_version"
#define REMOVE   "/ufmRest/actions/remove_guids_from_pkey"

static enum MHD_Result route(struct api *a, struct MHD_Connection *conn, struct api_req *r,
                             const char *url, const char *method)
{
	bool get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
	bool put = !strcmp(method, "PUT"), del = !strcmp(method, "DELETE");
	a->served++;
	if (!strcmp(url, VERSION) && get)
		return route_version(a, conn);
	if (!strcmp(url, PKEYS "/add") && post)
		return route_define(a, conn, r, false);
	if (!strcmp(url, PKEYS "/qos_conf") && (put || post))
		return route_define(a, conn, r, true);
	if (!strcmp(url, PKEYS "/add") || !strcmp(url, PKEYS "/qos_conf"))
		return answer_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "not with this method");
	if ((!strcmp(url, PKEYS) || !strcmp(url, PKEYS "/")) && get)
		return route_list(a, conn);
	if ((!strcmp(url, PKEYS) || !strcmp(url, PKEYS "/")) && post)
		return route_change(a, conn, r, API_REQ_ADD);
	if ((!strcmp(url, PKEYS) || !strcmp(url, PKEYS "/")) && put)
		return route_change(a, conn, r, API_REQ_SET);
	if (!strncmp(url, PKEYS "/", strlen(PKEYS "/")) && url[strlen(PKEYS "/")] && get)
		return route_get(a, conn, url + strlen(PKEYS "/"));
	if (!strncmp(url, PKEYS "/", strlen(PKEYS "/")) && url[strlen(PKEYS "/")] && del)
		return route_delete(a, conn, r, url + strlen(PKEYS "/"));
	if (!strcmp(url, REMOVE) && post)
		return route_change(a, conn, r, API_REQ_REMOVE);
	bool yaml = !strcmp(url, TOPOLOGY "slurm.yaml");
	bool slurm = yaml || !strcmp(url, TOPOLOGY "slurm"), dot = !strcmp(url, TOPOLOGY "dot");
	if ((slurm || dot) && get)
		return route_topology(a, conn, slurm, yaml);
	bool vports = !strcmp(url, VPORTS) || !strcmp(url, VPORTS "/");
	if (vports && get)
		return route_vports(a, conn);
	bool health = !strcmp(url, HEALTH),
	     alarms = !strcmp(url, ALARMS) || !strcmp(url, ALARMS "/");
	bool events = !strcmp(url, EVENTS) || !strcmp(url, EVENTS "/");
	if (health && get)
		return route_health(a, conn);
	if ((alarms || events) && get)
		return route_ufm_app(a, conn, alarms);
	if (!strcmp(url, VERSION) || !strncmp(url, PKEYS, strlen(PKEYS)) || !strcmp(url, REMOVE) ||
	    slurm || dot || vports || health || alarms || events)
		return answer_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "not with this method");
	return answer_error(conn, MHD_HTTP_NOT_FOUND,
	                    "not a path of this API (" VERSION ", " PKEYS ", " REMOVE ", " VPORTS
	                    ", " TOPOLOGY "slurm, " TOPOLOGY "dot, " HEALTH ", " ALARMS ", " EVENTS
	                    ")");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **state)
{
	(void)version;
	struct api *a = cls;
	struct api_req *r = *state;
	if (!r) { /* the headers: who asks, before a byte of the body is taken */
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		*state = r;
		enum MHD_Result ret = MHD_NO;
		if (!authenticate(a, conn, r, &ret))
			return ret;
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (r->too_big || r->len + n > API_MAX_BODY) {
			r->too_big = true;
			return MHD_YES;
		}
		if (r->len + n + 1 > r->cap) {
			size_t cap = (r->len + n + 1) * 2;
			char *nb = realloc(r->body, cap);
			if (!nb)
				return MHD_NO;
			r->body = nb;
			r->cap = cap;
		}
		memcpy(r->body + r->len, upload_data, n);
		r->len += n;
		return MHD_YES;
	}
	return route(a, conn, r, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **state,
                         enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)conn;
	(void)toe;
	struct api_req *r = *state;
	if (r) {
		free(r->body);
		free(r);
		*state = NULL;
	}
}

/* ---- start and stop ---- */

/* A PEM file whole, NUL-terminated, for MHD_OPTION_HTTPS_MEM_*. */
static char *read_pem(const char *path, char *why, size_t len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t n = 0;
	if (f) {
		buf = calloc(1, 1 << 20);
		n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
		fclose(f);
	}
	if (!f || !buf || !n) {
		snprintf(why, len, "%s: %s", path, !f ? strerror(errno) : "empty or unreadable");
		free(buf);
		return NULL;
	}
	return buf;
}

/* What api_listen and the TLS keys allow, before anything is opened. */
static int check_setup(struct api *a, struct sockaddr_storage *ss, char *why, size_t len)
{
	const struct ibsmd_config *cfg = a->ctl->rl->cfg;
	bool tls = cfg->api_tls_cert[0] || cfg->api_tls_key[0];
	if (httpd_parse_listen(cfg->api_listen, ss, why, len) < 0)
		return -1;
	if (!tls && !httpd_is_loopback(ss)) {
		snprintf(why, len,
		         "\"%s\" is not a loopback address, and plain HTTP would carry the "
		         "passwords across the network: set api_tls_cert and api_tls_key",
		         cfg->api_listen);
		return -1;
	}
	if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		snprintf(why, len, "this libmicrohttpd was built without TLS");
		return -1;
	}
	if (tls && (!(a->cert = read_pem(cfg->api_tls_cert, why, len)) ||
	            !(a->key = read_pem(cfg->api_tls_key, why, len))))
		return -1;
	return api_users_load(&a->users, cfg->api_users_file, why, len);
}

int api_start(struct api *a, struct control *ctl, struct ev_loop *loop)
{
	memset(a, 0, sizeof(*a));
	a->ctl = ctl;
	a->rl_auth = LOG_RL_DEFAULT;
	a->rl_bad = LOG_RL_DEFAULT;
	a->rl_change = LOG_RL_INIT(20, 100);
	a->verify_bucket = LOG_RL_INIT(8, 250);
	const struct ibsmd_config *cfg = ctl->rl->cfg;
	const struct log *lg = ctl->rl->log;
	if (!cfg->api_listen[0])
		return 0;
	struct sockaddr_storage ss;
	char why[512];
	if (check_setup(a, &ss, why, sizeof(why)) < 0) {
		log_err(lg, "api", "api_listen %s: %s; not starting", cfg->api_listen, why);
		api_stop(a);
		return -1;
	}
	if (httpd_listen(&a->http, &ss, why, sizeof(why)) < 0) {
		log_err(lg, "api", "cannot serve the API on %s: %s; not starting", cfg->api_listen,
		        why);
		api_stop(a);
		return -1;
	}
	bool tls = a->cert != NULL;
	struct MHD_OptionItem opts[] = {
	    {MHD_OPTION_CONNECTION_LIMIT, API_CONNECTIONS, NULL},
	    {MHD_OPTION_PER_IP_CONNECTION_LIMIT, API_PER_ADDRESS, NULL},
	    {MHD_OPTION_CONNECTION_TIMEOUT, 30, NULL},
	    {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, NULL},
	    {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, a->cert},
	    {tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, a->key},
	    {MHD_OPTION_END, 0, NULL},
	};
	errno = 0; /* MHD sets it for what the system refused; not for a bad PEM */
	struct MHD_Daemon *mhd =
	    MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | (tls ? MHD_USE_TLS : 0), 0,
	                     NULL, NULL, on_request, a, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (!mhd) {
		log_err(lg, "api", "cannot serve the API on %s: %s; not starting", cfg->api_listen,
		        errno ? strerror(errno) : "the certificate or key is not usable PEM");
		api_stop(a);
		return -1;
	}
	httpd_attach(&a->http, mhd, loop, lg, "api",
	             (struct httpd_limits){API_CONNECTIONS, API_PER_ADDRESS, NULL});
	log_notice(lg, "api",
	           "serving the partition API on %s://%s/ufmRest/ and the topology on /topology/ "
	           "for %zu user(s) of %s",
	           tls ? "https" : "http", cfg->api_listen, a->users.n, cfg->api_users_file);
	return 0;
}

void api_stop(struct api *a)
{
	httpd_detach(&a->http);
	api_users_free(&a->users);
	if (a->key)
		sodium_memzero(a->key, strlen(a->key));
	free(a->key);
	free(a->cert);
	a->key = a->cert = NULL;
}
