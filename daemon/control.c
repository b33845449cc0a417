/* The control socket. A line protocol over a local socket, as BIRD's birdc and lldpd's
 * lldpcli talk to their daemons: nothing in the libraries we use offers a local RPC, and a
 * command line in, text or JSON out, is all ibsa needs. Every connection is bounded (a line
 * of 512 bytes, 5 s, 16 at once) and handled in the event loop, never blocking it: answers
 * are written as the socket takes them. */
#include "daemon/control.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/console.h"
#include "daemon/status.h"
#include "daemon/topology.h"
#include "fabric/dump.h"
#include "pm/pm.h"
#include "mad/link_speed.h"
#include "daemon/health_report.h"
#include "sm/tenants.h"
#include "util/escape.h"
#include "util/statefile.h"

#define LINE_MAX_BYTES 512

struct control_conn {
	struct control *c;
	int fd;
	ev_io io;
	ev_timer timeout;
	char line[LINE_MAX_BYTES];
	size_t have;
	char *out; /* the answer, from open_memstream */
	size_t out_len, out_at;
	unsigned slot;
	uid_t uid; /* the peer's, from SO_PEERCRED: who asked, for the journal */
};

static void conn_close(struct control_conn *k)
{
	ev_io_stop(k->c->loop, &k->io);
	ev_timer_stop(k->c->loop, &k->timeout);
	close(k->fd);
	k->c->conns[k->slot] = NULL;
	free(k->out);
	free(k);
}

/* May this peer (cr, from SO_PEERCRED) use the socket? The file's mode already says so; the
 * credentials check again, in case the socket's directory or mode were changed behind our
 * back. */
static bool peer_allowed(const struct control *c, const struct ucred *cr)
{
	if (cr->uid == 0 || cr->uid == geteuid())
		return true;
	if (c->gid == (gid_t)-1)
		return false;
	if (cr->gid == c->gid)
		return true;
	struct passwd *pw = getpwuid(cr->uid);
	if (!pw)
		return false;
	gid_t groups[256];
	int n = 256;
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
		return false;
	for (int i = 0; i < n; i++)
		if (groups[i] == c->gid)
			return true;
	return false;
}

/* ---- partitions changed at run time (sm/tenants.h) ---- */

/* "control socket uid 1000 (alice)" for the journal's who: the uid is what the kernel
 * vouches for; the name, when the user database has one, is for the reader. Looked up only
 * when a change is made, not for every connection, as a directory service may be slow. */
static void peer_who(uid_t uid, char *who, size_t len)
{
	struct passwd pw, *found = NULL;
	char buf[1024];
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found)
		snprintf(who, len, "control socket uid %u (%s)", (unsigned)uid, found->pw_name);
	else
		snprintf(who, len, "control socket uid %u", (unsigned)uid);
}

static const char *member_kind(uint8_t kind)
{
	static const char *const names[] = {
	    [CM_GUID] = "guid",       [CM_ALL] = "all",
	    [CM_ALL_CAS] = "all_cas", [CM_ALL_SWITCHES] = "all_switches",
	    [CM_SELF] = "self",       [CM_ALL_ROUTERS] = "all_routers"};
	return kind <= CM_ALL_ROUTERS ? names[kind] : "?";
}

static const char *ms_word(uint8_t ms)
{
	return ms == CM_BOTH ? "both" : ms == CM_LIMITED ? "limited" : "full";
}

static void partition_put(const struct tenants_partition *p, FILE *out, bool json)
{
	char mtu[8] = "none", sl[8] = "none";
	if (p->mtu_limit)
		snprintf(mtu, sizeof(mtu), "%u", 128u << p->mtu_limit);
	if (p->has_sl)
		snprintf(sl, sizeof(sl), "%u", p->sl);
	const char *rate = p->rate_limit ? mad_rate_name(p->rate_limit) : "none";
	if (!json) {
		fprintf(out, "0x%04x %s (%s) index0 %s ipoib %s mtu_limit %s rate_limit %s sl %s\n",
		        p->pkey, p->name, p->from_file ? "ibsmd.yaml" : "API",
		        p->index0 ? "yes" : "no", p->ipoib ? "yes" : "no", mtu, rate, sl);
		for (unsigned i = 0; i < p->nmembers; i++) {
			const struct tenants_member *m = &p->members[i];
			if (m->kind == CM_GUID)
				fprintf(out, "  0x%016" PRIx64, m->guid);
			else
				fprintf(out, "  %s", member_kind(m->kind));
			fprintf(out, " %s %s%s\n", ms_word(m->membership),
			        m->from_api ? "api" : "file",
			        m->in_fabric  ? (m->alias ? " (alias)" : "")
			        : m->from_api ? " pending (not in the fabric yet)"
			                      : " (not in the fabric)");
		}
		return;
	}
	fprintf(out, "{\"pkey\":\"0x%04x\",\"name\":", p->pkey);
	json_put_str(out, p->name, sizeof(p->name));
	fprintf(out,
	        ",\"from_file\":%s,\"defined\":%s,\"index0\":%s,\"ip_over_ib\":%s,"
	        "\"mtu_limit\":%u,\"rate_limit\":\"%s\",\"sl\":%d,\"members\":[",
	        p->from_file ? "true" : "false", p->defined ? "true" : "false",
	        p->index0 ? "true" : "false", p->ipoib ? "true" : "false",
	        p->mtu_limit ? 128u << p->mtu_limit : 0, p->rate_limit ? rate : "",
	        p->has_sl ? p->sl : -1);
	for (unsigned i = 0; i < p->nmembers; i++) {
		const struct tenants_member *m = &p->members[i];
		fprintf(out, "%s{\"kind\":\"%s\"", i ? "," : "", member_kind(m->kind));
		if (m->kind == CM_GUID)
			fprintf(out, ",\"guid\":\"0x%016" PRIx64 "\"", m->guid);
		fprintf(out,
		        ",\"membership\":\"%s\",\"from_api\":%s,\"in_fabric\":%s,\"pending\":%s,"
		        "\"alias\":%s}",
		        ms_word(m->membership), m->from_api ? "true" : "false",
		        m->in_fabric ? "true" : "false",
		        m->from_api && !m->in_fabric ? "true" : "false",
		        m->alias ? "true" : "false");
	}
	fprintf(out, "]}");
}

static void partition_show(struct sm *sm, int argc, char **argv, FILE *out, bool json)
{
	char err[256];
	if (argc == 3) {
		char *e;
		unsigned long pk = strtoul(argv[2], &e, 16);
		struct tenants_partition p;
		if (*e || pk > 0xffff) {
			fprintf(out, "error: \"%s\" is not a P_Key (0x0001 to 0x7ffe)\n", argv[2]);
			return;
		}
		if (tenants_get(sm, (uint16_t)pk, &p, err, sizeof(err)) != TENANTS_OK) {
			fprintf(out, "error: %s\n", err);
			return;
		}
		partition_put(&p, out, json);
		if (json)
			fputc('\n', out);
		tenants_partition_free(&p);
		return;
	}
	struct tenants_partition *all;
	unsigned n;
	if (tenants_list(sm, &all, &n, err, sizeof(err)) != TENANTS_OK) {
		fprintf(out, "error: %s\n", err);
		return;
	}
	if (json)
		fprintf(out, "{\"partitions\":[");
	for (unsigned i = 0; i < n; i++) {
		if (json && i)
			fputc(',', out);
		partition_put(&all[i], out, json);
	}
	if (json)
		fprintf(out, "]}\n");
	tenants_list_free(all, n);
}

/* "GUID,GUID,...": each hex, with or without 0x. The count, or -1 with the bad word in err. */
static int parse_guids(char *list, uint64_t *guids, unsigned cap, char *err, size_t errlen)
{
	unsigned n = 0;
	for (char *save = NULL, *w = strtok_r(list, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		char *e;
		errno = 0;
		uint64_t g = strtoull(w, &e, 16);
		if (*e || e == w || errno || !g || n == cap) {
			snprintf(err, errlen, n == cap ? "too many GUIDs" : "\"%s\" is not a GUID",
			         w);
			return -1;
		}
		guids[n++] = g;
	}
	return (int)n;
}

/* add's options after PKEY GUIDS: --membership full|limited, --no-index0, --no-ipoib */
static int parse_add_opts(int argc, char **argv, struct tenants_add *rq, char *err, size_t errlen)
{
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--no-index0"))
			rq->index0 = false;
		else if (!strcmp(argv[i], "--no-ipoib"))
			rq->ipoib = false;
		else if (!strcmp(argv[i], "--membership") && i + 1 < argc) {
			i++;
			if (!strcmp(argv[i], "full") || !strcmp(argv[i], "limited"))
				rq->membership = argv[i][0] == 'f' ? CM_FULL : CM_LIMITED;
			else {
				snprintf(err, errlen, "membership is full or limited, not \"%s\"",
				         argv[i]);
				return -1;
			}
		} else {
			snprintf(err, errlen,
			         "\"%s\": add takes --membership full|limited, --no-index0, "
			         "--no-ipoib",
			         argv[i]);
			return -1;
		}
	}
	return 0;
}

/* A partition change's answer: the message, or the error (logged, rate limited). */
static void control_answer(struct control *c, bool ok, const char *cmd, char *msg, FILE *out,
                           bool json)
{
	if (!ok) {
		log_rl(c->rl->log, &c->rl_refused, LOGL_NOTICE, "control",
		       "partition %s refused: %s", cmd, msg);
		fprintf(out, "error: %s\n", msg);
	} else if (json) {
		fputs("{\"ok\":true,\"message\":", out);
		json_put_str(out, msg, strlen(msg) + 1);
		fputs("}\n", out);
	} else {
		fprintf(out, "%s\n", msg);
	}
}

/* define's options after PKEY: --name N, --[no-]index0, --[no-]ipoib, --mtu-limit BYTES,
 * --rate-limit GBPS, --sl N (what is not given is kept) */
static int parse_define_opts(int argc, char **argv, struct tenants_define *d, char *err,
                             size_t errlen)
{
	for (int i = 3; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *e = NULL;
		unsigned long n = v ? strtoul(v, &e, 10) : 0;
		bool num = v && e != v && !*e;
		if (!strcmp(o, "--index0") || !strcmp(o, "--no-index0")) {
			d->has_index0 = true;
			d->index0 = o[2] == 'i';
			continue;
		}
		if (!strcmp(o, "--ipoib") || !strcmp(o, "--no-ipoib")) {
			d->has_ipoib = true;
			d->ipoib = o[2] == 'i';
			continue;
		}
		i++;
		if (!strcmp(o, "--name") && v) {
			d->name = v;
		} else if (!strcmp(o, "--mtu-limit") && num && n >= 256 && n <= 4096 &&
		           !(n & (n - 1))) {
			d->has_mtu = true;
			d->mtu = (uint8_t)(__builtin_ctzl(n) - 7);
		} else if (!strcmp(o, "--rate-limit") && v && mad_rate_parse(v)) {
			d->has_rate = true;
			d->rate = mad_rate_parse(v);
		} else if (!strcmp(o, "--sl") && num && n <= 15) {
			d->has_sl = true;
			d->sl = (uint8_t)n;
		} else {
			snprintf(err, errlen,
			         "\"%s\": define takes --name NAME, --[no-]index0, --[no-]ipoib, "
			         "--mtu-limit 256..4096, --rate-limit GBPS (2.5, 10, 100...), --sl "
			         "0..15",
			         o);
			return -1;
		}
	}
	return 0;
}

/* partition define PKEY [opts] | delete PKEY: a partition of the API's own, members or
 * none, as UFM's /pkeys/add and DELETE /pkeys/PKEY. */
static void partition_define_cmd(struct control *c, const char *who, const char *client, int argc,
                                 char **argv, FILE *out, bool json)
{
	char err[512], *e;
	unsigned long pk = strtoul(argv[2], &e, 16);
	if (*e || e == argv[2] || pk > 0xffff) {
		fprintf(out, "error: \"%s\" is not a P_Key (0x0001 to 0x7ffe)\n", argv[2]);
		return;
	}
	struct tenants_define d = {.pkey = (uint16_t)pk, .client = client};
	bool def = !strcmp(argv[1], "define");
	if (def && parse_define_opts(argc, argv, &d, err, sizeof(err)) < 0) {
		fprintf(out, "error: %s\n", err);
		return;
	}
	int rc = def ? tenants_define(c->rl->sm, who, &d, err, sizeof(err))
	             : tenants_delete(c->rl->sm, who, d.pkey, err, sizeof(err));
	control_answer(c, rc == TENANTS_OK, argv[1], err, out, json);
}

/* partition add PKEY GUID[,GUID..] [opts] | remove PKEY GUID[,GUID..] | show [PKEY] |
 * define PKEY [opts] | delete PKEY; uid: the peer's, who asked */
static void partition_cmd(struct control *c, uid_t uid, int argc, char **argv, FILE *out, bool json)
{
	struct sm *sm = c->rl->sm;
	bool add = argc >= 4 && !strcmp(argv[1], "add");
	bool rm = argc == 4 && !strcmp(argv[1], "remove");
	bool def = argc >= 3 && !strcmp(argv[1], "define");
	bool del = argc == 3 && !strcmp(argv[1], "delete");
	if (argc >= 2 && argc <= 3 && !strcmp(argv[1], "show")) {
		partition_show(sm, argc, argv, out, json);
		return;
	}
	char who[128], client[24];
	peer_who(uid, who, sizeof(who));
	snprintf(client, sizeof(client), "uid:%u", (unsigned)uid);
	if (def || del) {
		partition_define_cmd(c, who, client, argc, argv, out, json);
		return;
	}
	if (!add && !rm) {
		fprintf(out, "error: partition add PKEY GUID[,GUID..] [--membership full|limited] "
		             "[--no-index0] [--no-ipoib], partition remove PKEY GUID[,GUID..], "
		             "partition show [PKEY], partition define PKEY [options], partition "
		             "delete PKEY\n");
		return;
	}
	char err[512], *e;
	static uint64_t guids[LINE_MAX_BYTES / 2];
	unsigned long pk = strtoul(argv[2], &e, 16);
	if (*e || e == argv[2] || pk > 0xffff) {
		fprintf(out, "error: \"%s\" is not a P_Key (0x0001 to 0x7ffe)\n", argv[2]);
		return;
	}
	int n = parse_guids(argv[3], guids, sizeof(guids) / sizeof(guids[0]), err, sizeof(err));
	struct tenants_add rq = {.pkey = (uint16_t)pk,
	                         .guids = guids,
	                         .nguids = n > 0 ? (unsigned)n : 0,
	                         .membership = CM_FULL,
	                         .index0 = true,
	                         .ipoib = true};
	if (n < 0 || (add && parse_add_opts(argc, argv, &rq, err, sizeof(err)) < 0)) {
		fprintf(out, "error: %s\n", err);
		return;
	}
	rq.client = client;
	int rc = add ? tenants_add(sm, who, &rq, err, sizeof(err))
	             : tenants_remove(sm, who, rq.pkey, guids, rq.nguids, err, sizeof(err));
	control_answer(c, rc == TENANTS_OK, argv[1], err, out, json);
}

static const char *dump_dir(const struct control *c, char *buf, size_t len)
{
	const struct ibsmd_config *cfg = c->rl->cfg;
	if (cfg->dump_dir[0])
		snprintf(buf, len, "%s", cfg->dump_dir);
	else
		snprintf(buf, len, "%s/dump", cfg->state_dir);
	return buf;
}

static int write_one(const char *dir, const char *name, void (*fn)(const struct topo *, FILE *),
                     const struct topo *t, char *why, size_t len)
{
	struct statefile sf;
	if (statefile_begin(&sf, dir, name, 0644) < 0) {
		snprintf(why, len, "%s/%s: %s", dir, name, strerror(errno));
		return -1;
	}
	fn(t, sf.f);
	if (statefile_commit(&sf) < 0) {
		snprintf(why, len, "%s/%s: %s", dir, name, strerror(errno));
		return -1;
	}
	return 0;
}

int control_write_dumps(struct control *c, char *why, size_t len)
{
	char dir[300];
	dump_dir(c, dir, sizeof(dir));
	sm_routing_wait(c->rl->sm); /* the tables it fills are the ones dumped */
	const struct topo *t = sm_fabric(c->rl->sm);
	if (write_one(dir, "opensm-subnet.lst", topo_dump_subnet_lst, t, why, len) < 0 ||
	    write_one(dir, "opensm.fdbs", topo_dump_fdbs, t, why, len) < 0 ||
	    write_one(dir, "opensm.mcfdbs", topo_dump_mcfdbs, t, why, len) < 0 ||
	    write_one(dir, "opensm-lfts.dump", topo_dump_lfts, t, why, len) < 0 ||
	    write_one(dir, "ibnetdiscover.topo", topo_dump_ibnetdiscover, t, why, len) < 0)
		return -1;
	struct statefile sf;
	if (statefile_begin(&sf, dir, "ibsmd-path-sl.dump", 0644) < 0) {
		snprintf(why, len, "%s/ibsmd-path-sl.dump: %s", dir, strerror(errno));
		return -1;
	}
	int drc = sm_dump_path_sl(c->rl->sm, sf.f);
	if (statefile_commit(&sf) < 0 || drc < 0) {
		snprintf(why, len, "%s/ibsmd-path-sl.dump: %s", dir,
		         drc < 0 ? "out of memory" : strerror(errno));
		return -1;
	}
	snprintf(why, len, "%s", dir);
	return 0;
}

/* A node by its GUID or its description (the first that has it), TOPO_NONE if none. */
static uint32_t control_find_node(const struct topo *t, const char *spec)
{
	char *e;
	uint64_t guid = strtoull(spec, &e, 0);
	if (e != spec && !*e) {
		uint32_t n = u64map_get(&t->by_guid, guid);
		return n == U64MAP_NONE ? TOPO_NONE : n;
	}
	for (uint32_t n = 0; n < t->nnodes; n++)
		if (t->nodes[n].present && !strcmp(t->nodes[n].desc, spec))
			return n;
	return TOPO_NONE;
}

/* "counters [LID[:PORT] | NODE]": the performance manager's figures, port by port. */
static void counters(struct control *c, const char *spec, FILE *out, bool json)
{
	if (!c->pm) {
		fprintf(out, "error: the performance manager is off (pm_interval: 0)\n");
		return;
	}
	const struct topo *t = sm_fabric(c->rl->sm);
	long want_lid = -1, want_port = -1;
	if (spec) {
		char *e;
		long l = strtol(spec, &e, 0);
		if (e != spec && (!*e || *e == ':')) {
			want_lid = l;
			if (*e == ':')
				want_port = strtol(e + 1, NULL, 10);
		}
	}
	unsigned shown = 0;
	if (json)
		fputc('[', out);
	else
		fprintf(out, "%-24s %-18s %4s %5s %8s %6s %6s %8s %8s %6s %14s %14s %10s %10s\n",
		        "node", "guid", "port", "lid", "symbol", "recov", "downed", "rcv_err",
		        "xmt_disc", "ovrrun", "xmit_bytes", "rcv_bytes", "xmit_B/s", "rcv_B/s");
	for (uint32_t p = 0; p < t->nports; p++) {
		const struct pm_port_stats *ps = pm_port(c->pm, p);
		if (!ps)
			continue;
		const struct topo_node *nd = &t->nodes[t->ports[p].node];
		uint16_t lid = t->ports[topo_lid_port(t, p)].lid;
		if (want_lid >= 0 &&
		    (lid != want_lid || (want_port >= 0 && t->ports[p].num != want_port)))
			continue;
		if (spec && want_lid < 0 && strcmp(nd->desc, spec))
			continue;
		const uint64_t *k = ps->total;
		if (json) {
			fprintf(out, "%s{\"node\":", shown ? "," : "");
			json_put_str(out, nd->desc, sizeof(nd->desc));
			fprintf(out, ",\"guid\":\"0x%016" PRIx64 "\",\"port\":%u,\"lid\":%u",
			        nd->guid, t->ports[p].num, lid);
			for (unsigned i = 0; i < PM_NCOUNTERS; i++)
				fprintf(out, ",\"%s\":%" PRIu64,
				        pm_counter_name((enum pm_counter)i), k[i]);
			fprintf(out, ",\"xmit_bytes_per_s\":%.0f,\"rcv_bytes_per_s\":%.0f}",
			        ps->xmit_rate, ps->rcv_rate);
		} else {
			char d[4 * sizeof(nd->desc)];
			fprintf(out,
			        "%-24.24s 0x%016" PRIx64 " %4u %5u %8" PRIu64 " %6" PRIu64
			        " %6" PRIu64 " %8" PRIu64 " %8" PRIu64 " %6" PRIu64 " %14" PRIu64
			        " %14" PRIu64 " %10.0f %10.0f\n",
			        text_desc(d, sizeof(d), nd->desc), nd->guid, t->ports[p].num, lid,
			        k[PM_SYMBOL_ERRORS], k[PM_LINK_ERROR_RECOVERY], k[PM_LINK_DOWNED],
			        k[PM_RCV_ERRORS], k[PM_XMIT_DISCARDS],
			        k[PM_EXCESSIVE_BUFFER_OVERRUNS], k[PM_XMIT_DATA], k[PM_RCV_DATA],
			        ps->xmit_rate, ps->rcv_rate);
		}
		shown++;
	}
	if (json)
		fprintf(out, "]\n");
	else if (!shown && spec)
		fprintf(out, "error: no port read matches \"%s\"\n", spec);
}

int control_topology_dot(struct sm *sm, FILE *out)
{
	unsigned nheld = sm_links_held(sm);
	uint32_t *held = malloc(sizeof(*held) * (nheld + 1));
	for (unsigned i = 0; held && i < nheld; i++)
		held[i] = sm_link_held_port(sm, i);
	int rc = held ? topology_dot(sm_fabric(sm), held, nheld, out) : -1;
	free(held);
	return rc;
}

/* "topology slurm|dot": Slurm's topology.conf or a graphviz graph (daemon/topology.h). The
 * name problems of the first follow the file as "warning: " lines, which ibsa prints on
 * standard error. */
static bool topology_name_ok(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
	return n && n <= 64 && !s[n];
}

static void topology(struct control *c, const char *what, const char *name, FILE *out)
{
	const struct topo *t = sm_fabric(c->rl->sm);
	bool yaml = !strcmp(what, "slurm-yaml");
	if (name && (!yaml || !topology_name_ok(name))) {
		fprintf(out, "error: a topology name (letters, digits, '.', '_', '-') is given to "
		             "topology slurm-yaml only\n");
		return;
	}
	if (yaml || !strcmp(what, "slurm")) {
		char *buf = NULL;
		size_t len = 0;
		FILE *problems = open_memstream(&buf, &len);
		const struct slurm_opts o = {
		    .names = &c->rl->names, .yaml = yaml, .topology_name = name};
		int n = problems ? topology_slurm(t, &o, out, problems) : -1;
		if (problems)
			fclose(problems);
		for (char *line = buf, *nl; n > 0 && line && *line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			fprintf(out, "warning: %.*s\n", nl ? (int)(nl - line) : (int)strlen(line),
			        line);
		}
		free(buf);
		if (n < 0)
			fprintf(out, "error: out of memory\n");
		return;
	}
	if (strcmp(what, "dot")) {
		fprintf(out, "error: topology slurm, slurm-yaml [NAME] or dot, not \"%s\"\n", what);
		return;
	}
	if (control_topology_dot(c->rl->sm, out) < 0)
		fprintf(out, "error: out of memory\n");
}

/* "health": the report, then its verdict as a line ibsa turns into its exit status: a
 * "warning: " (6) or "failing: " (7), on standard error */
static void health(struct control *c, FILE *out, bool json)
{
	int rc = health_report(c->rl->sm, c->rl->sync, c->pm, out, json);
	if (rc < 0)
		fprintf(out, "error: out of memory\n");
	else if (rc == 1)
		fprintf(out, "warning: fabric health: some checks warn\n");
	else if (rc == 2)
		fprintf(out, "failing: fabric health: a check fails\n");
}

#define CONTROL_MAX_WORDS 16 /* "partition define PKEY" and its six options, with room */

/* The line's words into argv (at most CONTROL_MAX_WORDS), --json anywhere taken out: their
 * count, or -1 for more (refused whole, never cut short into another command). */
/* dump topology|routes|files; false for another word */
static bool dump_cmd(struct control *c, const char *what, FILE *out, bool json)
{
	struct sm *sm = c->rl->sm;
	if (!strcmp(what, "topology")) {
		if (json)
			topo_dump_topology_json(sm_fabric(sm), out);
		else
			topo_dump_ibnetdiscover(sm_fabric(sm), out);
	} else if (!strcmp(what, "routes")) {
		sm_routing_wait(sm); /* the tables it fills are the ones dumped */
		if (json)
			topo_dump_routes_json(sm_fabric(sm), out);
		else
			topo_dump_lfts(sm_fabric(sm), out);
	} else if (!strcmp(what, "files")) {
		char why[512];
		if (control_write_dumps(c, why, sizeof(why)) < 0)
			fprintf(out, "error: %s\n", why);
		else if (json) {
			fputs("{\"dir\":", out); /* a path: any bytes but NUL */
			json_put_str(out, why, sizeof(why));
			fputs("}\n", out);
		} else {
			fprintf(out, "written to %s\n", why);
		}
	} else {
		return false;
	}
	return true;
}

static int split_words(char *line, char **argv, bool *json)
{
	int argc = 0;
	for (char *save = NULL, *w = strtok_r(line, " \t", &save); w;
	     w = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(w, "--json"))
			*json = true;
		else if (argc < CONTROL_MAX_WORDS)
			argv[argc++] = w;
		else
			return -1;
	}
	return argc;
}

/* Run one command line from the peer uid; the answer goes to out. "error: ..." lines tell
 * ibsa it failed. */
static void run_command(struct control *c, uid_t uid, char *line, FILE *out)
{
	char *argv[CONTROL_MAX_WORDS];
	bool json = false;
	int argc = split_words(line, argv, &json);
	struct sm *sm = c->rl->sm;
	if (argc < 0) {
		fprintf(out, "error: more than %d words in one command\n", CONTROL_MAX_WORDS);
	} else if (!argc) {
		fprintf(out, "error: no command\n");
	} else if (!strcmp(argv[0], "status") && argc == 1) {
		status_write(c, out, json);
	} else if (!strcmp(argv[0], "sweep") && argc <= 2) {
		bool light = argc == 2 && !strcmp(argv[1], "light");
		if (argc == 2 && !light && strcmp(argv[1], "heavy")) {
			fprintf(out, "error: sweep light or sweep heavy, not \"%s\"\n", argv[1]);
			return;
		}
		if (sm_info(sm).state != SM_STATE_MASTER) {
			fprintf(out, "error: this SM is not master: it does not sweep\n");
			return;
		}
		if (light)
			sm_request_light_sweep(sm);
		else
			sm_request_sweep(sm, NULL, 0);
		log_notice(c->rl->log, "control", "%s sweep requested", light ? "light" : "heavy");
		fprintf(out, json ? "{\"sweep\":\"%s\"}\n" : "%s sweep started\n",
		        light ? "light" : "heavy");
	} else if (!strcmp(argv[0], "reroute") && argc == 1) {
		if (sm_info(sm).state != SM_STATE_MASTER) {
			fprintf(out, "error: this SM is not master: it does not route\n");
			return;
		}
		sm_request_reroute(sm);
		log_notice(c->rl->log, "control", "reroute requested");
		fprintf(out, json
		                 ? "{\"reroute\":true}\n"
		                 : "rerouting: every route computed afresh, changed blocks sent\n");
	} else if (!strcmp(argv[0], "release") && argc <= 3) {
		char *e = NULL;
		uint64_t guid = argc >= 2 ? strtoull(argv[1], &e, 0) : 0;
		unsigned long port = argc == 3 ? strtoul(argv[2], &e, 0) : 0;
		if (e && (*e || port > 254)) {
			fprintf(out, "error: release [GUID [PORT]]: \"%s\" is not a %s\n",
			        argv[argc - 1], argc == 3 ? "port number" : "GUID");
			return;
		}
		int n = sm_link_release(sm, guid, (unsigned)port);
		log_notice(c->rl->log, "control", "release: %d quarantined link(s) enabled", n);
		fprintf(out, json ? "{\"released\":%d}\n" : "%d link(s) enabled again\n", n);
	} else if (!strcmp(argv[0], "loglevel") && argc <= 2) {
		if (argc == 2) {
			int l = log_level_parse(argv[1]);
			if (l < 0) {
				fprintf(out,
				        "error: err, warn, notice, info or debug, not \"%s\"\n",
				        argv[1]);
				return;
			}
			c->rl->log->level = (enum log_level)l;
			log_notice(c->rl->log, "control", "log level now %s", log_level_name(l));
		}
		fprintf(out, json ? "{\"loglevel\":\"%s\"}\n" : "%s\n",
		        log_level_name(c->rl->log->level));
	} else if (!strcmp(argv[0], "partition")) {
		partition_cmd(c, uid, argc, argv, out, json);
	} else if (!strcmp(argv[0], "counters") && argc <= 2) {
		counters(c, argc == 2 ? argv[1] : NULL, out, json);
	} else if (!strcmp(argv[0], "dump") && argc == 2 && dump_cmd(c, argv[1], out, json)) {
	} else if (!strcmp(argv[0], "watch") && argc == 1) {
		if (c->events)
			event_stream_recent(c->events, out);
	} else if (!strcmp(argv[0], "watch") && argc == 2 && !strcmp(argv[1], "follow")) {
		/* (a follower is handed to the stream before this: here only when it is full) */
		fprintf(out, "error: %d followers already, or no event stream\n",
		        EVENT_STREAM_FOLLOWERS);
	} else if (console_command(c, argc, argv, out, json)) {
	} else if (!strcmp(argv[0], "vports")) {
		/* a description may have spaces: the words after the command, rejoined */
		char spec[72] = "";
		for (int i = 1; i < argc; i++)
			snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), "%s%s",
			         i > 1 ? " " : "", argv[i]);
		const struct topo *t = sm_fabric(sm);
		uint32_t node = TOPO_NONE;
		if (spec[0] && (node = control_find_node(t, spec)) == TOPO_NONE) {
			fprintf(out, "error: no node \"%s\" (a node GUID or description)\n", spec);
			return;
		}
		topo_dump_vports(t, node, json, out);
	} else if (!strcmp(argv[0], "health") && argc == 1) {
		health(c, out, json);
	} else if (!strcmp(argv[0], "topology") && (argc == 2 || argc == 3)) {
		topology(c, argv[1], argc == 3 ? argv[2] : NULL, out);
	} else {
		fprintf(
		    out,
		    "error: unknown command \"%s\" (status, sweep [light|heavy], reroute, "
		    "loglevel [LEVEL], counters [LID[:PORT]|NODE], dump topology|routes|files, "
		    "topology slurm|slurm-yaml [NAME]|dot, health, partition add|remove|show, "
		    "release [GUID [PORT]], "
		    "vports [NODE], watch [follow], querylid LID, portstatus [ca|switch|router], "
		    "switchbalance [verbose] [NODE], lidbalance [NODE], priority [N], "
		    "update-desc)\n",
		    argv[0]);
	}
}

static void conn_write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	struct control_conn *k = w->data;
	while (k->out_at < k->out_len) {
		ssize_t n = write(k->fd, k->out + k->out_at, k->out_len - k->out_at);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			conn_close(k);
			return;
		}
		k->out_at += (size_t)n;
	}
	conn_close(k);
}

static void conn_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)revents;
	struct control_conn *k = w->data;
	ssize_t n = read(k->fd, k->line + k->have, sizeof(k->line) - 1 - k->have);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(k);
		return;
	}
	k->have += (size_t)n;
	k->line[k->have] = 0;
	char *nl = strchr(k->line, '\n');
	if (!nl) {
		if (k->have == sizeof(k->line) - 1) {
			log_rl(k->c->rl->log, &k->c->rl_refused, LOGL_WARN, "control",
			       "dropped a control connection: no command within %d bytes",
			       LINE_MAX_BYTES);
			conn_close(k);
		}
		return;
	}
	*nl = 0;
	/* a follower of the events: its connection is the stream's from now */
	if (!strcmp(k->line, "watch follow") && k->c->events &&
	    event_stream_follow(k->c->events, k->fd) == 0) {
		ev_io_stop(loop, &k->io);
		ev_timer_stop(loop, &k->timeout);
		k->c->conns[k->slot] = NULL;
		free(k);
		return;
	}
	FILE *out = open_memstream(&k->out, &k->out_len);
	if (!out) {
		conn_close(k);
		return;
	}
	run_command(k->c, k->uid, k->line, out);
	if (fclose(out) != 0) {
		conn_close(k);
		return;
	}
	ev_io_stop(loop, &k->io);
	ev_io_set(&k->io, k->fd, EV_WRITE);
	ev_set_cb(&k->io, conn_write_cb);
	ev_io_start(loop, &k->io);
}

static void conn_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	conn_close(w->data);
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)revents;
	struct control *c = w->data;
	int fd = accept4(c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	unsigned slot = 0;
	while (slot < CONTROL_MAX_CONNS && c->conns[slot])
		slot++;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	bool known = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == 0;
	if (slot == CONTROL_MAX_CONNS || !known || !peer_allowed(c, &cr)) {
		log_rl(c->rl->log, &c->rl_refused, LOGL_WARN, "control", "%s",
		       slot == CONTROL_MAX_CONNS ? "refused a control connection: 16 under way"
		                                 : "refused a control connection from a user "
		                                   "neither root nor in control_group");
		close(fd);
		return;
	}
	struct control_conn *k = calloc(1, sizeof(*k));
	if (!k) {
		close(fd);
		return;
	}
	k->c = c;
	k->fd = fd;
	k->slot = slot;
	k->uid = cr.uid;
	c->conns[slot] = k;
	ev_io_init(&k->io, conn_read_cb, fd, EV_READ);
	k->io.data = k;
	ev_timer_init(&k->timeout, conn_timeout_cb, 5., 0.);
	k->timeout.data = k;
	ev_io_start(loop, &k->io);
	ev_timer_start(loop, &k->timeout);
}

static void sample_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)revents;
	struct control *c = w->data;
	c->sa_req[c->next] = sa_stats(c->sa)->requests;
	c->sa_at[c->next] = ev_now(loop);
	c->next = (c->next + 1) % CONTROL_RATE_SAMPLES;
	if (c->nsamples < CONTROL_RATE_SAMPLES)
		c->nsamples++;
}

/* Give the bound socket (mode 0660 by the umask) to control_group. chown to a group this
 * process is not in takes CAP_CHOWN, which a unit may not grant: then the socket is made
 * root only (0600), and the log says so instead of naming a group that has no access. A
 * directory made here is given to the group too, or its members could not reach the
 * socket; one made by others is only checked. */
static void share_with_group(struct control *c, const struct log *lg, const char *dir,
                             bool made_dir)
{
	const char *group = c->rl->cfg->control_group;
	if (chown(c->path, (uid_t)-1, c->gid) < 0) {
		int e = errno;
		chmod(c->path, 0600);
		c->gid = (gid_t)-1;
		log_warn(lg, "control",
		         "control_group \"%s\": cannot give %s to that group (%s): the control "
		         "socket is root only (0600); the daemon needs CAP_CHOWN for it (in the "
		         "unit's CapabilityBoundingSet) or run without control_group",
		         group, c->path, strerror(e));
		return;
	}
	if (made_dir && chown(dir, (uid_t)-1, c->gid) < 0)
		log_warn(lg, "control", "cannot give %s to group %s: %s", dir, group,
		         strerror(errno));
	struct stat st;
	if (stat(dir, &st) == 0 && !(st.st_mode & S_IXOTH) &&
	    !(st.st_gid == c->gid && (st.st_mode & S_IXGRP)))
		log_warn(lg, "control",
		         "control_group \"%s\": its members cannot reach %s: the directory %s "
		         "(mode %04o) is closed to them; open it (RuntimeDirectoryMode=0755) or "
		         "give it to the group",
		         group, c->path, dir, (unsigned)(st.st_mode & 07777));
}

int control_start(struct control *c, struct reload *rl, struct sa *sa, struct ev_loop *loop)
{
	memset(c, 0, sizeof(*c));
	c->rl = rl;
	c->sa = sa;
	c->loop = loop;
	c->fd = -1;
	c->gid = (gid_t)-1;
	c->rl_refused = LOG_RL_DEFAULT;
	c->started = ev_now(loop);
	ev_timer_init(&c->sample, sample_cb, 0., 5.);
	c->sample.data = c;
	ev_timer_start(loop, &c->sample);
	const struct ibsmd_config *cfg = rl->cfg;
	const struct log *lg = rl->log;
	if (!cfg->control_socket[0])
		return 0; /* turned off */
	snprintf(c->path, sizeof(c->path), "%s", cfg->control_socket);
	if (cfg->control_group[0]) {
		struct group *g = getgrnam(cfg->control_group);
		if (!g) {
			log_err(
			    lg, "control",
			    "control_group \"%s\" does not exist: the control socket is for root "
			    "only",
			    cfg->control_group);
		} else {
			c->gid = g->gr_gid;
		}
	}
	/* the socket's directory: systemd makes /run/ibsmd (RuntimeDirectory); by hand, we */
	char dir[108];
	snprintf(dir, sizeof(dir), "%s", c->path);
	char *slash = strrchr(dir, '/');
	bool made_dir = false;
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0750) == 0)
			made_dir = true;
		else if (errno != EEXIST)
			log_warn(lg, "control", "cannot make %s: %s", dir, strerror(errno));
	} else {
		snprintf(dir, sizeof(dir), "%s", slash ? "/" : ".");
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa_un = {.sun_family = AF_UNIX};
	snprintf(sa_un.sun_path, sizeof(sa_un.sun_path), "%s", c->path);
	if (fd < 0)
		goto fail;
	/* a socket file left by a daemon that died is stale when nobody answers on it; one
	 * that answers belongs to a running ibsmd, which keeps it */
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0) {
		if (connect(probe, (struct sockaddr *)&sa_un, sizeof(sa_un)) == 0) {
			close(probe);
			close(fd);
			log_err(lg, "control",
			        "%s is in use by another running ibsmd: this one has no control "
			        "socket (set control_socket to another path)",
			        c->path);
			return -1;
		}
		close(probe);
	}
	unlink(c->path);
	mode_t old = umask(c->gid == (gid_t)-1 ? 0177 : 0117);
	int rc = bind(fd, (struct sockaddr *)&sa_un, sizeof(sa_un));
	umask(old);
	if (rc < 0)
		goto fail;
	if (c->gid != (gid_t)-1)
		share_with_group(c, lg, dir, made_dir);
	if (listen(fd, 16) < 0)
		goto fail;
	c->fd = fd;
	ev_io_init(&c->accept_w, accept_cb, fd, EV_READ);
	c->accept_w.data = c;
	ev_io_start(loop, &c->accept_w);
	if (c->gid == (gid_t)-1)
		log_info(lg, "control", "control socket %s (mode 0600, root only)", c->path);
	else
		log_info(lg, "control", "control socket %s (mode 0660, root and group %s)", c->path,
		         cfg->control_group);
	return 0;
fail:
	log_err(lg, "control", "cannot listen on %s: %s; the daemon runs without it", c->path,
	        strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

void control_stop(struct control *c)
{
	if (!c->loop)
		return;
	ev_timer_stop(c->loop, &c->sample);
	for (unsigned i = 0; i < CONTROL_MAX_CONNS; i++)
		if (c->conns[i])
			conn_close(c->conns[i]);
	if (c->fd >= 0) {
		ev_io_stop(c->loop, &c->accept_w);
		close(c->fd);
		unlink(c->path);
		c->fd = -1;
	}
	c->loop = NULL;
}

static void on_sweep_done(void *ctx, bool structural)
{
	struct control *c = ctx;
	if (!c->rl->cfg->dump_after_sweep || (!structural && !sm_status(c->rl->sm).heavy))
		return;
	char why[512];
	if (control_write_dumps(c, why, sizeof(why)) < 0)
		log_rl(c->rl->log, &c->rl_refused, LOGL_WARN, "control",
		       "dump_after_sweep: %s (the subnet is not affected)", why);
}

struct sm_listener control_listener(struct control *c)
{
	return (struct sm_listener){.ctx = c, .sweep_done = on_sweep_done};
}
