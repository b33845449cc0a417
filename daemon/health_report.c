/* The fabric health report (`ibsa health`): one command an administrator runs before a job
 * goes on a fabric, and a monitoring system polls. Each check gives ok, warn or fail, how
 * many things it found and the first few of them:
 * - sm: this SM is master with the subnet up; each standby asking it for the sync's copy,
 *   and one configured differently (the sync's digests of partitions, routing and keys)
 *   named with what differs, a warning;
 * - duplicates: node or port GUIDs the last sweeps found twice (fail: half the fabric may
 *   be unreachable);
 * - ports: linked ports not ACTIVE, links the SM quarantined for flapping;
 * - links: links running below what both their ends support (a bad cable, a port forced);
 * - errors: ports whose error counters grow faster than the health_*_per_hour thresholds
 *   over the performance manager's last one to two hours, or whose XmitWait passes its
 *   share of the time they sent;
 * - routing: every endpoint reaches every LID along the tables the switches hold, with no
 *   forwarding loop and no credit loop on the SLs the paths use (skipped on a fabric too
 *   large to walk while the SM waits);
 * - partitions: ibsmd.yaml's GUID members not in the fabric (warn), the API's pending ones,
 *   P_Key tables a port refused or lost (warn).
 * Written from the SM's model in the event loop: reading it only, in one pass per check. */
#include "daemon/health_report.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/link_speed.h"
#include "pm/pm.h"
#include "sm/tenants.h"
#include "sync/sync.h"
#include "util/escape.h"

#define SHOWN       5           /* things a check names; the count says how many there are */
#define WALK_BUDGET 50000000ull /* switches x LIDs the routing check walks at most */

enum { H_OK, H_WARN, H_FAIL };
static const char *const status_name[] = {"ok", "warn", "fail"};

struct check {
	const char *name;
	int status;
	uint64_t count;
	char summary[160];
	char item[SHOWN][200];
	int item_status[SHOWN];
	uint32_t item_port[SHOWN]; /* the topo port an item is about (TOPO_NONE: none) */
	unsigned nitems;
};

static void vitem(struct check *c, int status, uint32_t port, const char *fmt, va_list ap)
{
	c->count++;
	if (status > c->status)
		c->status = status;
	if (c->nitems == SHOWN)
		return;
	c->item_status[c->nitems] = status;
	c->item_port[c->nitems] = port;
	vsnprintf(c->item[c->nitems++], sizeof(c->item[0]), fmt, ap);
}

static void item(struct check *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void item(struct check *c, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vitem(c, status, TOPO_NONE, fmt, ap);
	va_end(ap);
}

/* An item about one port: the UFM-shaped alarm names its node. */
static void item_at(struct check *c, int status, uint32_t port, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void item_at(struct check *c, int status, uint32_t port, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vitem(c, status, port, fmt, ap);
	va_end(ap);
}

static const char *name_of(const struct topo *t, uint32_t port, char *buf, size_t len)
{
	const struct topo_node *n = &t->nodes[t->ports[port].node];
	char d[4 * 65];
	snprintf(buf, len, "%s (0x%016" PRIx64 ") port %u", text_desc(d, sizeof(d), n->desc),
	         n->guid, t->ports[port].num);
	return buf;
}

/* Every standby asking this master for its copy is named with what it holds otherwise: a
 * takeover by it would change the subnet. */
static void check_sm(struct sm *sm, const struct sync *sy, struct check *c)
{
	struct mad_sm_info si = sm_info(sm);
	struct sm_status st = sm_status(sm);
	if (si.state != SM_STATE_MASTER)
		item(c, H_FAIL, "this SM is not the master (state %u): ask the master", si.state);
	else if (!st.up)
		item(c, H_FAIL, "the subnet is not up yet (%s)",
		     st.stage && st.stage[0] ? st.stage : "sweeping");
	struct sync_standby sb[64]; /* a subnet has a handful of SMs */
	unsigned nsb = sy ? sync_standbys(sy, sb, 64) : 0, alike = 0;
	char what[64];
	for (unsigned i = 0; i < nsb && i < 64; i++) {
		if (!sb[i].differs) {
			alike++;
			continue;
		}
		item(c, H_WARN,
		     "standby SM 0x%016" PRIx64 " (LID %u) is configured differently (%s): a "
		     "takeover by it would change the subnet",
		     sb[i].guid, sb[i].lid, sync_differs_text(sb[i].differs, what, sizeof(what)));
	}
	if (si.state != SM_STATE_MASTER && sy && sync_config_differs(sy))
		item(c, H_WARN,
		     "the master is configured differently (partitions, routing or keys): a "
		     "takeover would change the subnet");
	snprintf(c->summary, sizeof(c->summary),
	         "%s, subnet %s, %" PRIu64 " sweeps, %u standby%s (%u configured alike)",
	         si.state == SM_STATE_MASTER ? "master" : "not master", st.up ? "up" : "not up",
	         st.sweeps, nsb, nsb == 1 ? "" : "s", alike);
}

static void check_duplicates(struct sm *sm, struct check *c)
{
	const struct sm_anomalies *a = sm_anomalies(sm);
	for (unsigned i = 0; i < a->n && i < SM_ANOMALIES_KEPT; i++)
		item(c, H_FAIL, "%s", a->what[i]);
	c->count = a->total;
	snprintf(c->summary, sizeof(c->summary),
	         "%" PRIu64 " GUIDs found twice in the last heavy sweep", a->total);
}

static void check_ports(struct sm *sm, const struct topo *t, struct check *c)
{
	char n[300];
	uint32_t linked = 0;
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct topo_port *pt = &t->ports[p];
		if (!pt->num || !t->nodes[pt->node].present || !topo_port_linked(t, p))
			continue;
		linked++;
		if (pt->pi.port_state != PORT_STATE_ACTIVE)
			item_at(c, H_WARN, p, "%s is %s, not ACTIVE", name_of(t, p, n, sizeof(n)),
			        pt->pi.port_state == PORT_STATE_ARMED  ? "ARMED"
			        : pt->pi.port_state == PORT_STATE_INIT ? "INIT"
			                                               : "DOWN");
	}
	unsigned held = sm_links_held(sm);
	for (unsigned i = 0; i < held; i++)
		item_at(c, H_WARN, sm_link_held_port(sm, i),
		        "%s: quarantined for flapping (ibsa release to enable it)",
		        name_of(t, sm_link_held_port(sm, i), n, sizeof(n)));
	snprintf(c->summary, sizeof(c->summary), "%u linked ports, %u links quarantined", linked,
	         held);
}

static void check_links(const struct topo *t, struct check *c)
{
	char n[300];
	uint32_t links = 0;
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct topo_port *pt = &t->ports[p];
		uint32_t q = pt->peer;
		if (!pt->num || !topo_port_linked(t, p) || q < p || !t->nodes[pt->node].present ||
		    !t->nodes[t->ports[q].node].present)
			continue; /* each link between present nodes once, from its lower port */
		links++;
		uint8_t w;
		enum link_speed s;
		if (!mad_link_below_best(&pt->pi, &t->ports[q].pi, &w, &s))
			continue;
		char n2[300];
		item_at(c, H_WARN, p, "%s to %s runs %ux%s where both ends could run %ux%s",
		        name_of(t, p, n, sizeof(n)), name_of(t, q, n2, sizeof(n2)),
		        mad_link_lanes(pt->pi.link_width_active),
		        mad_link_speed_name(mad_link_speed_active(&pt->pi)), mad_link_lanes(w),
		        mad_link_speed_name(s));
	}
	snprintf(c->summary, sizeof(c->summary), "%u links", links);
}

#define XMIT_WAIT_FLOOR 1000 /* ticks: a port that waited less is not judged on its share */

/* One port against the thresholds: the counter furthest over its own (0 when none is),
 * as a rate and its threshold; an XmitWait share is judged apart. */
static bool port_errors_over(const struct ibsmd_config *cfg, const struct pm_port_stats *s,
                             enum pm_counter *which, double *rate, uint32_t *limit)
{
	double worst = 0;
	for (unsigned i = 0; i < PM_NERRORS; i++) {
		if (!pm_rate_grown(&s->window, s->total, (enum pm_counter)i))
			continue;
		uint32_t th = i == PM_SYMBOL_ERRORS ? cfg->health_symbol_errors_per_hour
		              : i == PM_LINK_DOWNED ? cfg->health_link_downed_per_hour
		                                    : cfg->health_errors_per_hour;
		double r = pm_rate_per_hour(&s->window, s->total, (enum pm_counter)i);
		if (!th || r < th || r / th <= worst)
			continue;
		worst = r / th;
		*which = (enum pm_counter)i;
		*rate = r;
		*limit = th;
	}
	return worst > 0;
}

/* Ports whose error counters grow faster than the health_*_per_hour thresholds, or that
 * waited for credit more than health_xmit_wait_percent of the time they sent. */
static void check_errors(const struct pm *pm, const struct topo *t, const struct ibsmd_config *cfg,
                         struct check *c)
{
	if (!pm) {
		snprintf(c->summary, sizeof(c->summary),
		         "the performance manager is off (pm_interval 0)");
		return;
	}
	char n[300];
	uint32_t read = 0, under = 0;
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct pm_port_stats *s = pm_port(pm, p);
		if (!s || !s->read)
			continue;
		read++;
		enum pm_counter k = PM_SYMBOL_ERRORS;
		double rate = 0;
		uint32_t limit = 0;
		double hours = pm_rate_hours(&s->window);
		if (port_errors_over(cfg, s, &k, &rate, &limit)) {
			/* a link that went down, or symbols lost on the wire: the cable's own */
			bool physical = k == PM_SYMBOL_ERRORS || k == PM_LINK_DOWNED ||
			                k == PM_LINK_ERROR_RECOVERY;
			item_at(c, H_WARN, p,
			        "%s: %" PRIu64 " %s in %.1f h, %.0f an hour (threshold %" PRIu32
			        ")%s",
			        name_of(t, p, n, sizeof(n)), pm_rate_grown(&s->window, s->total, k),
			        pm_counter_name(k), hours, rate, limit,
			        physical ? ": check the cable" : "");
		} else {
			for (unsigned i = 0; i < PM_NERRORS; i++)
				if (pm_rate_grown(&s->window, s->total, (enum pm_counter)i)) {
					under++;
					break;
				}
		}
		uint64_t wait = pm_rate_grown(&s->window, s->total, PM_XMIT_WAIT);
		uint64_t words = pm_rate_grown(&s->window, s->total, PM_XMIT_DATA) / 4;
		unsigned pct = cfg->health_xmit_wait_percent;
		if (pct && wait >= XMIT_WAIT_FLOOR && wait * 100 >= (wait + words) * pct)
			item_at(
			    c, H_WARN, p,
			    "%s: waited for credit %.0f%% of the time it sent in %.1f h (XmitWait "
			    "%" PRIu64 " ticks, threshold %u%%): congestion",
			    name_of(t, p, n, sizeof(n)),
			    100. * (double)wait / (double)(wait + words), hours, wait, pct);
	}
	snprintf(c->summary, sizeof(c->summary),
	         "%u ports read by the performance manager, rates over its last hour or two; %u "
	         "with errors under the thresholds",
	         read, under);
}

static void check_routing(struct sm *sm, struct check *c)
{
	struct routing_check rc;
	int r = sm_check_tables(sm, WALK_BUDGET, &rc);
	if (r == 2) {
		snprintf(c->summary, sizeof(c->summary),
		         "not walked: a sweep is under way; ask again");
		return;
	}
	if (r > 0) {
		snprintf(c->summary, sizeof(c->summary),
		         "not walked: a fabric this large (ibsmd --dry-run walks it off line)");
		return;
	}
	if (r < 0) {
		item(c, H_WARN, "no routes computed yet, or out of memory");
		return;
	}
	if (rc.unreachable)
		item(c, H_FAIL,
		     "%" PRIu64 " of %" PRIu64
		     " endpoint-to-LID pairs unreachable (LID %u to LID %u among them)",
		     rc.unreachable, rc.pairs, rc.example_src, rc.example_dst);
	if (rc.loops)
		item(c, H_FAIL, "%" PRIu64 " forwarding loops", rc.loops);
	for (unsigned l = 0; l < 16; l++)
		if (rc.cyclic >> l & 1)
			item(c, H_FAIL, "a credit loop on SL %u (a deadlock waiting to happen)", l);
	unsigned sls = 0;
	for (unsigned l = 0; l < 16; l++)
		sls += rc.layers >> l & 1;
	snprintf(c->summary, sizeof(c->summary),
	         "%" PRIu64 " endpoint-to-LID pairs along the tables, %u SL%s", rc.pairs, sls,
	         sls == 1 ? "" : "s");
}

/* Ports whose P_Key table is not what the partitions give: a CA port's Set refused or lost
 * (its members then miss partitions the SA answers for), a switch port that refused its
 * table (enforcement off there). Ports with a Set on its way are not judged. */
static unsigned check_pkey_tables(const struct topo *t, struct check *c)
{
	char n[300];
	unsigned bad = 0;
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct topo_port *pt = &t->ports[p];
		const struct topo_node *nd = &t->nodes[pt->node];
		bool sw = nd->type == NODE_TYPE_SWITCH;
		/* an HCA port is judged once it has a LID and is ACTIVE: before, the SM has not
		 * sent its table yet */
		if (!nd->present || !pt->known || pt->pkey_inflight || (sw && !pt->num) ||
		    (!sw && (!topo_port_linked(t, p) || !pt->lid ||
		             pt->pi.port_state != PORT_STATE_ACTIVE)))
			continue;
		if (sw && (pt->refused & TOPO_REFUSED_PKEYS) && topo_port_linked(t, p)) {
			bad++;
			item_at(c, H_WARN, p,
			        "%s refused its P_Key table: partitions are not enforced there",
			        name_of(t, p, n, sizeof(n)));
		} else if (!sw && pt->npkeys && (pt->pkey_failed || !pt->pkey_sig)) {
			bad++;
			item_at(
			    c, H_WARN, p,
			    "%s: its P_Key table could not be set; it is not in every partition "
			    "the SA says (a sweep sends it again)",
			    name_of(t, p, n, sizeof(n)));
		}
	}
	return bad;
}

static void check_partitions(struct sm *sm, struct check *c)
{
	struct tenants_partition *all;
	unsigned n;
	char err[200];
	if (tenants_list(sm, &all, &n, err, sizeof(err)) != TENANTS_OK) {
		item(c, H_WARN, "%s", err);
		return;
	}
	unsigned pending = 0;
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < all[i].nmembers; k++) {
			const struct tenants_member *m = &all[i].members[k];
			if (m->kind != CM_GUID || m->in_fabric)
				continue;
			if (m->from_api)
				pending++;
			else
				item(c, H_WARN,
				     "partition %s (0x%04x): member 0x%016" PRIx64
				     " of ibsmd.yaml is not in the fabric",
				     all[i].name, all[i].pkey, m->guid);
		}
	unsigned tables = check_pkey_tables(sm_fabric(sm), c);
	snprintf(c->summary, sizeof(c->summary),
	         "%u partitions, %u API members pending (not in the fabric yet), %u P_Key "
	         "tables not as the partitions give",
	         n, pending, tables);
	tenants_list_free(all, n);
}

static void put_text(FILE *out, const struct check *c)
{
	fprintf(out, "%-4s  %-10s  %s", status_name[c->status], c->name, c->summary);
	if (c->count)
		fprintf(out, "; %" PRIu64 " found", c->count);
	fputc('\n', out);
	for (unsigned i = 0; i < c->nitems; i++)
		fprintf(out, "        %s\n", c->item[i]);
	if (c->count > c->nitems)
		fprintf(out, "        ... and %" PRIu64 " more\n", c->count - c->nitems);
}

static void put_json(FILE *out, const struct check *c, bool first)
{
	fprintf(out, "%s{\"name\":\"%s\",\"status\":\"%s\",\"count\":%" PRIu64 ",\"summary\":",
	        first ? "" : ",", c->name, status_name[c->status], c->count);
	json_put_str(out, c->summary, sizeof(c->summary));
	fputs(",\"items\":[", out);
	for (unsigned i = 0; i < c->nitems; i++) {
		if (i)
			fputc(',', out);
		json_put_str(out, c->item[i], sizeof(c->item[i]));
	}
	fputs("]}", out);
}

static const char *const check_names[] = {"sm",     "duplicates", "ports",     "links",
                                          "errors", "routing",    "partitions"};
enum { NCHECKS = sizeof(check_names) / sizeof(check_names[0]) };

/* Every check, in report order; NULL out of memory. *worst: the worst status. */
static struct check *run_checks(struct sm *sm, const struct sync *sy, const struct pm *pm,
                                int *worst)
{
	struct check *c = calloc(NCHECKS, sizeof(*c));
	if (!c)
		return NULL;
	for (unsigned i = 0; i < NCHECKS; i++)
		c[i].name = check_names[i];
	const struct topo *t = sm_fabric(sm);
	check_sm(sm, sy, &c[0]);
	check_duplicates(sm, &c[1]);
	check_ports(sm, t, &c[2]);
	check_links(t, &c[3]);
	check_errors(pm, t, sm_config(sm), &c[4]);
	check_routing(sm, &c[5]);
	check_partitions(sm, &c[6]);
	*worst = H_OK;
	for (unsigned i = 0; i < NCHECKS; i++)
		*worst = c[i].status > *worst ? c[i].status : *worst;
	return c;
}

int health_report(struct sm *sm, const struct sync *sy, const struct pm *pm, FILE *out, bool json)
{
	int worst;
	struct check *c = run_checks(sm, sy, pm, &worst);
	if (!c)
		return -1;
	unsigned counts[3] = {0};
	for (unsigned i = 0; i < NCHECKS; i++)
		counts[c[i].status]++;
	if (json) {
		fprintf(out, "{\"status\":\"%s\",\"checks\":[", status_name[worst]);
		for (unsigned i = 0; i < NCHECKS; i++)
			put_json(out, &c[i], i == 0);
		fputs("]}\n", out);
	} else {
		fprintf(out, "ibsmd fabric health: %s (%u ok, %u warn, %u fail)\n",
		        status_name[worst], counts[H_OK], counts[H_WARN], counts[H_FAIL]);
		for (unsigned i = 0; i < NCHECKS; i++)
			put_text(out, &c[i]);
	}
	free(c);
	return worst;
}

/* UFM's alarm for an item: what it is about (a node or port by its GUID as UFM writes it, and its
 * path; the fabric, "Grid", otherwise), its name by check, and the type numbers ibsmd
 * gives its checks (UFM's own numbers name UFM's events, which these are not). */
static void put_alarm(FILE *out, const struct topo *t, const struct check *c, unsigned check,
                      unsigned k, unsigned id, const char *stamp)
{
	static const char *const titles[NCHECKS] = {"Subnet manager",
	                                            "Duplicated GUID",
	                                            "Port not active",
	                                            "Link below capability",
	                                            "Port error counters",
	                                            "Routing unhealthy",
	                                            "Partition not as configured"};
	char obj[20] = "Grid", path[4 * 65 + 40] = "Grid", d[4 * 65];
	uint32_t p = c->item_port[k];
	if (p != TOPO_NONE && p < t->nports) {
		const struct topo_node *n = &t->nodes[t->ports[p].node];
		/* a switch by its node GUID, an HCA by the port's, as UFM names them */
		snprintf(obj, sizeof(obj), "%016" PRIx64,
		         n->type == NODE_TYPE_SWITCH ? n->guid : t->ports[p].guid);
		snprintf(path, sizeof(path), "default / %s: %s",
		         n->type == NODE_TYPE_SWITCH ? "Switch" : "Computer",
		         text_desc(d, sizeof(d), n->desc));
	}
	fprintf(out,
	        "%s{\"id\":%u,\"name\":\"%s\",\"summary\":\"%s\",\"reason\":", id > 1 ? "," : "",
	        id, titles[check], titles[check]);
	json_put_str(out, c->item[k], sizeof(c->item[k]));
	fprintf(out,
	        ",\"severity\":\"%s\",\"event_type\":%u,\"type\":%u,\"event_count\":1,"
	        "\"timestamp\":\"%s\",\"duration\":0,\"counter\":null,"
	        "\"related_object_name\":\"%s\",\"related_object_path\":",
	        c->item_status[k] == H_FAIL ? "Critical" : "Warning", 9100 + check, 9100 + check,
	        stamp, obj);
	json_put_str(out, path, sizeof(path));
	fputc('}', out);
}

int health_alarms(struct sm *sm, const struct sync *sy, const struct pm *pm, FILE *out, double now)
{
	int worst;
	struct check *c = run_checks(sm, sy, pm, &worst);
	if (!c)
		return -1;
	char stamp[40];
	time_t secs = (time_t)now;
	struct tm tm;
	gmtime_r(&secs, &tm);
	size_t at = strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(stamp + at, sizeof(stamp) - at, ".%03d",
	         (int)((now - (double)secs) * 1000) % 1000);
	const struct topo *t = sm_fabric(sm);
	unsigned id = 0;
	fputc('[', out);
	for (unsigned i = 0; i < NCHECKS; i++)
		for (unsigned k = 0; k < c[i].nitems; k++)
			if (c[i].item_status[k] != H_OK)
				put_alarm(out, t, &c[i], i, k, ++id, stamp);
	fputs("]\n", out);
	free(c);
	return (int)id;
}
