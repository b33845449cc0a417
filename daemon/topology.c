/* Slurm's topology.conf and a graphviz graph from the SM's model (daemon/topology.h).
 * Written by hand: both are line formats whose readers (slurmctld's topology/tree plugin,
 * dot) are the specification, and the tests make them read what this writes. */
#include "daemon/topology.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mad/link_speed.h"
#include "util/escape.h"

/* a NodeDescription's 64 bytes, or "sw-0x" and a GUID */
#define TNAME_LEN 72

/* A link between switches that routing may use: both ends seen and linked, neither held
 * out of routing. The far end's switch index in *far. */
static bool switch_link(const struct topo *t, uint32_t p, uint32_t *far)
{
	if (!topo_port_linked(t, p) || t->ports[p].unrouted)
		return false;
	uint32_t q = t->ports[p].peer;
	uint32_t n = t->ports[q].node;
	if (!topo_is_switch(t, n) || !t->nodes[n].present || t->ports[q].unrouted)
		return false;
	*far = t->nodes[n].sw;
	return true;
}

/* The host (a CA or router the last sweep reached) at the far end of switch port p. */
static bool host_at(const struct topo *t, uint32_t p, uint32_t *node)
{
	if (!topo_port_linked(t, p))
		return false;
	uint32_t n = t->ports[t->ports[p].peer].node;
	if (topo_is_switch(t, n) || !t->nodes[n].present)
		return false;
	*node = n;
	return true;
}

static bool has_hosts(const struct topo *t, uint32_t s)
{
	const struct topo_node *nd = &t->nodes[t->sws[s].node];
	uint32_t h;
	for (unsigned k = 1; k <= nd->nports; k++)
		if (host_at(t, nd->first_port + k, &h))
			return true;
	return false;
}

int topology_levels(const struct topo *t, uint16_t *lv)
{
	uint32_t *queue = malloc(sizeof(*queue) * (t->nsws + 1));
	if (!queue)
		return -1;
	uint32_t head = 0, tail = 0;
	for (uint32_t s = 0; s < t->nsws; s++) {
		lv[s] = TOPOLOGY_NO_LEVEL;
		if (t->nodes[t->sws[s].node].present && has_hosts(t, s)) {
			lv[s] = 0;
			queue[tail++] = s;
		}
	}
	int top = 0;
	while (head < tail) {
		uint32_t s = queue[head++], o;
		const struct topo_node *nd = &t->nodes[t->sws[s].node];
		for (unsigned k = 1; k <= nd->nports; k++)
			if (switch_link(t, nd->first_port + k, &o) && lv[o] == TOPOLOGY_NO_LEVEL) {
				lv[o] = (uint16_t)(lv[s] + 1);
				top = lv[o] > top ? lv[o] : top;
				queue[tail++] = o;
			}
	}
	free(queue);
	return top;
}

/* ---- names ---- */

/* Slurm reads a name of letters, digits, '.', '_' and '-' as itself; anything else (',',
 * '[', '=', a blank, bytes beyond ASCII) would change what the line means to it. */
static bool slurm_name_ok(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* A host's name: the first word of its NodeDescription, as rdma-ndd writes it ("%h %d":
 * "host-1 mlx5_0" -> host-1). False when there is none Slurm could take. */
static bool host_name(const char *desc, char *buf, size_t len)
{
	desc += strspn(desc, " \t");
	size_t n = strcspn(desc, " \t");
	if (n >= len || !slurm_name_ok(desc, n))
		return false;
	memcpy(buf, desc, n);
	buf[n] = 0;
	return true;
}

/* A switch's name: the first word of its NodeDescription, or in the form NVIDIA's managed
 * switches give ("MF0;ib-leaf-1:MQM8700/U1") what stands between ';' and ':'. */
static bool switch_name(const char *desc, char *buf, size_t len)
{
	desc += strspn(desc, " \t");
	size_t n = strcspn(desc, " \t");
	const char *semi = memchr(desc, ';', n);
	if (semi) {
		n -= (size_t)(semi + 1 - desc);
		desc = semi + 1;
		const char *colon = memchr(desc, ':', n);
		if (colon)
			n = (size_t)(colon - desc);
	}
	if (n >= len || !slurm_name_ok(desc, n))
		return false;
	memcpy(buf, desc, n);
	buf[n] = 0;
	return true;
}

/* Names in natural order (leaf-2 before leaf-10): runs of digits compared as numbers. */
static int name_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			while (*a == '0' && a[1] >= '0' && a[1] <= '9')
				a++;
			while (*b == '0' && b[1] >= '0' && b[1] <= '9')
				b++;
			size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");
			if (la != lb)
				return la < lb ? -1 : 1;
			int c = strncmp(a, b, la);
			if (c)
				return c;
			a += la;
			b += lb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

/* ---- Slurm's hostlist form ---- */

/* A name as Slurm's hostlist sees it: a prefix, then trailing digits (a number of up to 9
 * digits: beyond that the name is written whole). */
struct hl_name {
	const char *s;
	size_t plen;   /* the prefix's length */
	unsigned dlen; /* digits after it, 0: none */
	unsigned long num;
};

static int hl_cmp(const void *x, const void *y)
{
	const struct hl_name *a = x, *b = y;
	size_t m = a->plen < b->plen ? a->plen : b->plen;
	int c = strncmp(a->s, b->s, m);
	if (c || a->plen != b->plen)
		return c ? c : a->plen < b->plen ? -1 : 1;
	if ((a->dlen > 0) != (b->dlen > 0))
		return a->dlen ? 1 : -1;
	if (a->num != b->num)
		return a->num < b->num ? -1 : 1;
	return a->dlen < b->dlen ? -1 : a->dlen > b->dlen;
}

/* May b follow a in one range lo-hi? Slurm writes every number of a range as wide as lo's,
 * so a zero-padded number joins only numbers of its width ("08-10"), and numbers without
 * leading zeros join each other whatever their widths ("8-10"). */
static bool hl_next(const struct hl_name *a, const struct hl_name *b)
{
	bool a_plain = a->dlen == 1 || a->s[a->plen] != '0';
	bool b_plain = b->dlen == 1 || b->s[b->plen] != '0';
	return b->num == a->num + 1 && (a->dlen == b->dlen || (a_plain && b_plain));
}

/* One group of names with the same prefix and trailing numbers, n > 1: prefix[ranges]. */
static void hl_put_group(FILE *out, const struct hl_name *g, size_t n)
{
	fprintf(out, "%.*s[", (int)g[0].plen, g[0].s);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && hl_next(&g[j], &g[j + 1]))
			j++;
		fprintf(out, "%s%s", i ? "," : "", g[i].s + g[i].plen);
		if (j > i)
			fprintf(out, "-%s", g[j].s + g[j].plen);
		i = j + 1;
	}
	fputc(']', out);
}

/* names (n, distinct) in Slurm's hostlist form: host-[1-18,20],login1. 0, or -1 out of
 * memory. */
static int put_hostlist(FILE *out, const char *const *names, size_t n)
{
	struct hl_name *h = malloc(sizeof(*h) * (n + 1));
	if (!h)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]), d = 0;
		while (d < len && names[i][len - 1 - d] >= '0' && names[i][len - 1 - d] <= '9')
			d++;
		h[i] = (struct hl_name){.s = names[i], .plen = len, .dlen = 0};
		if (d && d <= 9) {
			h[i].plen = len - d;
			h[i].dlen = (unsigned)d;
			h[i].num = strtoul(names[i] + len - d, NULL, 10);
		}
	}
	qsort(h, n, sizeof(*h), hl_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (h[i].dlen && j < n && h[j].dlen && h[j].plen == h[i].plen &&
		       !strncmp(h[j].s, h[i].s, h[i].plen))
			j++;
		if (i)
			fputc(',', out);
		if (j - i > 1)
			hl_put_group(out, h + i, j - i);
		else
			fputs(h[i].s, out);
		i = j;
	}
	free(h);
	return 0;
}

/* ---- topology.conf ---- */

struct host_entry {
	char name[TNAME_LEN];
	uint32_t sw;   /* its leaf switch */
	uint64_t guid; /* its node's */
	bool listed;
};

struct slurm_job {
	const struct topo *t;
	FILE *problems;
	int nproblems;
	uint16_t *lv;
	char (*swname)[TNAME_LEN]; /* per switch */
	bool *written;             /* per switch: its line is in the file */
	struct host_entry *hosts;
	size_t nhosts;
};

static void problem(struct slurm_job *j, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void problem(struct slurm_job *j, const char *fmt, ...)
{
	j->nproblems++;
	if (!j->problems)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(j->problems, fmt, ap);
	va_end(ap);
	fputc('\n', j->problems);
}

static const struct slurm_job *sort_job; /* qsort has no context argument */

static int sw_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	int c = name_cmp(sort_job->swname[a], sort_job->swname[b]);
	return c ? c : a < b ? -1 : a > b;
}

/* Every present switch's name; one without a usable name, or with a name an earlier switch
 * (in name order, then index) has, is named by its GUID. order: the switches by name. */
static void name_switches(struct slurm_job *j, uint32_t *order, uint32_t *n)
{
	const struct topo *t = j->t;
	char d[4 * 65];
	*n = 0;
	for (uint32_t s = 0; s < t->nsws; s++) {
		const struct topo_node *nd = &t->nodes[t->sws[s].node];
		if (!nd->present || j->lv[s] == TOPOLOGY_NO_LEVEL)
			continue;
		order[(*n)++] = s;
		if (switch_name(nd->desc, j->swname[s], TNAME_LEN))
			continue;
		snprintf(j->swname[s], TNAME_LEN, "sw-0x%016" PRIx64, nd->guid);
		problem(j, "switch 0x%016" PRIx64 " (\"%s\"): no name Slurm can take: named %s",
		        nd->guid, text_desc(d, sizeof(d), nd->desc), j->swname[s]);
	}
	sort_job = j;
	qsort(order, *n, sizeof(*order), sw_cmp);
	for (uint32_t i = 1; i < *n; i++) {
		uint32_t s = order[i];
		if (strcmp(j->swname[s], j->swname[order[i - 1]]))
			continue;
		uint64_t g = t->nodes[t->sws[s].node].guid;
		problem(j,
		        "switch 0x%016" PRIx64 ": %s is also another switch's name: named "
		        "sw-0x%016" PRIx64,
		        g, j->swname[s], g);
		snprintf(j->swname[s], TNAME_LEN, "sw-0x%016" PRIx64, g);
	}
	qsort(order, *n, sizeof(*order), sw_cmp);
}

static int host_cmp(const void *x, const void *y)
{
	const struct host_entry *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	c = name_cmp(sort_job->swname[a->sw], sort_job->swname[b->sw]);
	if (c)
		return c;
	return a->guid < b->guid ? -1 : a->guid > b->guid;
}

/* The hosts under the leaf switches, by name; one without a usable name reported (once per
 * node) and left out. -1 out of memory. */
static int collect_hosts(struct slurm_job *j)
{
	const struct topo *t = j->t;
	bool *told = calloc(t->nnodes + 1, sizeof(*told));
	j->hosts = malloc(sizeof(*j->hosts) * (t->nports + 1));
	if (!told || !j->hosts) {
		free(told);
		return -1;
	}
	char d[4 * 65];
	for (uint32_t s = 0; s < t->nsws; s++) {
		const struct topo_node *nd = &t->nodes[t->sws[s].node];
		if (j->lv[s] != 0)
			continue;
		for (unsigned k = 1; k <= nd->nports; k++) {
			uint32_t h;
			if (!host_at(t, nd->first_port + k, &h))
				continue;
			struct host_entry *e = &j->hosts[j->nhosts];
			if (!host_name(t->nodes[h].desc, e->name, TNAME_LEN)) {
				if (!told[h])
					problem(j,
					        "host 0x%016" PRIx64
					        " (\"%s\") under %s: no name Slurm "
					        "can take (the first word of its NodeDescription): "
					        "left out",
					        t->nodes[h].guid,
					        text_desc(d, sizeof(d), t->nodes[h].desc),
					        j->swname[s]);
				told[h] = true;
				continue;
			}
			e->sw = s;
			e->guid = t->nodes[h].guid;
			e->listed = false;
			j->nhosts++;
		}
	}
	free(told);
	sort_job = j;
	qsort(j->hosts, j->nhosts, sizeof(*j->hosts), host_cmp);
	/* a name under one switch is one host, whatever its ports or HCAs there; under two
	 * switches it is reported (a host cabled to two leaves, or two hosts of one name) and
	 * listed under the first, as Slurm places a node under one leaf */
	for (size_t i = 0; i < j->nhosts;) {
		size_t k = i + 1;
		j->hosts[i].listed = true;
		for (; k < j->nhosts && !strcmp(j->hosts[k].name, j->hosts[i].name); k++)
			if (j->hosts[k].sw != j->hosts[k - 1].sw)
				problem(
				    j,
				    "host %s: under %s and %s (a host cabled to two leaf switches, "
				    "or two hosts of one name): listed under %s only",
				    j->hosts[i].name, j->swname[j->hosts[i].sw],
				    j->swname[j->hosts[k].sw], j->swname[j->hosts[i].sw]);
		i = k;
	}
	return 0;
}

/* One leaf's line: its listed hosts. Not written when it has none. */
static int write_leaf(struct slurm_job *j, uint32_t s, FILE *out, const char **names)
{
	size_t n = 0;
	for (size_t i = 0; i < j->nhosts; i++)
		if (j->hosts[i].listed && j->hosts[i].sw == s)
			names[n++] = j->hosts[i].name;
	if (!n)
		return 0;
	fprintf(out, "SwitchName=%s Nodes=", j->swname[s]);
	if (put_hostlist(out, names, n) < 0)
		return -1;
	fputc('\n', out);
	j->written[s] = true;
	return 0;
}

/* One upper switch's line: the switches one level below it that are written. */
static int write_upper(struct slurm_job *j, uint32_t s, FILE *out, const char **names)
{
	const struct topo *t = j->t;
	const struct topo_node *nd = &t->nodes[t->sws[s].node];
	size_t n = 0;
	for (unsigned k = 1; k <= nd->nports; k++) {
		uint32_t o;
		if (!switch_link(t, nd->first_port + k, &o) || j->lv[o] + 1 != j->lv[s] ||
		    !j->written[o])
			continue;
		bool dup = false; /* parallel links */
		for (size_t i = 0; i < n && !dup; i++)
			dup = names[i] == j->swname[o];
		if (!dup)
			names[n++] = j->swname[o];
	}
	if (!n)
		return 0;
	fprintf(out, "SwitchName=%s Switches=", j->swname[s]);
	if (put_hostlist(out, names, n) < 0)
		return -1;
	fputc('\n', out);
	j->written[s] = true;
	return 0;
}

static int slurm_lines(struct slurm_job *j, int top, const uint32_t *order, uint32_t nsw, FILE *out)
{
	const struct topo *t = j->t;
	size_t cap = j->nhosts > t->nports ? j->nhosts : t->nports;
	const char **names = malloc(sizeof(*names) * (cap + 1));
	if (!names)
		return -1;
	fprintf(
	    out,
	    "# Slurm topology.conf (TopologyPlugin=topology/tree), written by ibsmd from the "
	    "fabric as its SM sees it:\n# leaf switches are those with hosts, each switch above "
	    "lists the switches one hop nearer the leaves.\n");
	int rc = 0;
	for (int l = 0; l <= top && !rc; l++)
		for (uint32_t i = 0; i < nsw && !rc; i++)
			if (j->lv[order[i]] == l)
				rc = l ? write_upper(j, order[i], out, names)
				       : write_leaf(j, order[i], out, names);
	free(names);
	return rc;
}

int topology_slurm(const struct topo *t, FILE *out, FILE *problems)
{
	struct slurm_job j = {.t = t, .problems = problems};
	j.lv = malloc(sizeof(*j.lv) * (t->nsws + 1));
	j.swname = malloc(sizeof(*j.swname) * (t->nsws + 1));
	j.written = calloc(t->nsws + 1, sizeof(*j.written));
	uint32_t *order = malloc(sizeof(*order) * (t->nsws + 1)), nsw = 0;
	int rc = -1;
	if (!j.lv || !j.swname || !j.written || !order)
		goto out;
	int top = topology_levels(t, j.lv);
	if (top < 0)
		goto out;
	name_switches(&j, order, &nsw);
	if (collect_hosts(&j) < 0 || slurm_lines(&j, top, order, nsw, out) < 0)
		goto out;
	rc = j.nproblems;
out:
	free(j.lv);
	free(j.swname);
	free(j.written);
	free(j.hosts);
	free(order);
	return rc;
}

/* ---- graphviz ---- */

/* A label for dot: a NodeDescription is any 64 bytes, so '"' and '\' are escaped and
 * whatever is not printable ASCII becomes '?': no description ends its string or the
 * graph. */
static void dot_label(FILE *out, const char *s, size_t max)
{
	fputc('"', out);
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else
			fputc(c >= 0x20 && c < 0x7f ? c : '?', out);
	}
	fputc('"', out);
}

static void rate_text(uint8_t width, int speed, char *buf, size_t len)
{
	unsigned lanes = mad_link_lanes(width);
	const char *sp = speed >= 0 && speed < LINK_SPEEDS ? mad_link_speed_name(speed) : "?";
	if (lanes)
		snprintf(buf, len, "%ux%s", lanes, sp);
	else
		snprintf(buf, len, "?x%s", sp);
}

/* Does the link at port a run below what both its ends support? Then *could says what. */
static bool below_capability(const struct topo *t, uint32_t a, char *could, size_t len)
{
	const struct mad_port_info *pa = &t->ports[a].pi, *pb = &t->ports[t->ports[a].peer].pi;
	uint8_t w = mad_link_width_widest(pa->link_width_supported & pb->link_width_supported);
	uint16_t both = mad_link_speeds_supported(pa) & mad_link_speeds_supported(pb);
	int best = -1;
	for (int i = 0; i < LINK_SPEEDS; i++)
		if (both & (1u << i))
			best = i;
	enum link_speed sp = mad_link_speed_active(pa);
	bool below = (w && mad_link_lanes(pa->link_width_active) < mad_link_lanes(w)) ||
	             (best >= 0 && sp < LINK_SPEEDS && (int)sp < best);
	if (below)
		rate_text(w ? w : pa->link_width_active, best >= 0 ? best : (int)sp, could, len);
	return below;
}

static void dot_id(FILE *out, const struct topo *t, uint32_t n)
{
	fprintf(out, "\"%c%016" PRIx64 "\"", topo_is_switch(t, n) ? 's' : 'h', t->nodes[n].guid);
}

static void dot_nodes(const struct topo *t, const uint16_t *lv, int top, FILE *out)
{
	for (int l = top; l >= 0; l--) {
		fprintf(out, "\tsubgraph level%d {\n\t\trank=same;\n", l);
		for (uint32_t s = 0; s < t->nsws; s++) {
			if (lv[s] != l)
				continue;
			const struct topo_node *nd = &t->nodes[t->sws[s].node];
			fputs("\t\t", out);
			dot_id(out, t, t->sws[s].node);
			fputs(" [label=", out);
			dot_label(out, nd->desc, sizeof(nd->desc));
			fprintf(out, ", tooltip=\"switch 0x%016" PRIx64 ", level %d\"];\n",
			        nd->guid, l);
		}
		fputs("\t}\n", out);
	}
	for (uint32_t n = 0; n < t->nnodes; n++) {
		const struct topo_node *nd = &t->nodes[n];
		if (!nd->present || (topo_is_switch(t, n) && lv[nd->sw] != TOPOLOGY_NO_LEVEL))
			continue;
		fputc('\t', out);
		dot_id(out, t, n);
		fputs(" [label=", out);
		dot_label(out, nd->desc, sizeof(nd->desc));
		fprintf(out, ", tooltip=\"0x%016" PRIx64 "\"%s];\n", nd->guid,
		        topo_is_switch(t, n) ? "" : ", shape=ellipse");
	}
}

/* The lower end first: with rankdir=BT dot puts an edge's tail below its head. */
static bool lower_first(const struct topo *t, const uint16_t *lv, uint32_t a, uint32_t b)
{
	uint32_t na = t->ports[a].node, nb = t->ports[b].node;
	if (!topo_is_switch(t, na))
		return true;
	if (!topo_is_switch(t, nb))
		return false;
	return lv[t->nodes[na].sw] <= lv[t->nodes[nb].sw];
}

static void dot_edge(FILE *out, const struct topo *t, const uint16_t *lv, uint32_t a, uint32_t b,
                     const char *label, const char *style)
{
	if (!lower_first(t, lv, a, b)) {
		uint32_t x = a;
		a = b;
		b = x;
	}
	fputc('\t', out);
	dot_id(out, t, t->ports[a].node);
	fputs(" -- ", out);
	dot_id(out, t, t->ports[b].node);
	fprintf(out, " [label=\"%s\", tooltip=\"port %u - port %u\"%s];\n", label, t->ports[a].num,
	        t->ports[b].num, style);
}

static void dot_edges(const struct topo *t, const uint16_t *lv, const bool *quarantined, FILE *out)
{
	for (uint32_t p = 0; p < t->nports; p++) {
		uint32_t q = t->ports[p].peer;
		if (!topo_port_linked(t, p) || q < p || !t->nodes[t->ports[q].node].present)
			continue;
		char now[16], could[16], label[64];
		rate_text(t->ports[p].pi.link_width_active, mad_link_speed_active(&t->ports[p].pi),
		          now, sizeof(now));
		const char *style = "";
		snprintf(label, sizeof(label), "%s", now);
		if (quarantined[p] || quarantined[q]) {
			snprintf(label, sizeof(label), "%s quarantined", now);
			style = ", color=red, style=dashed, penwidth=2";
		} else if (t->ports[p].unrouted || t->ports[q].unrouted) {
			snprintf(label, sizeof(label), "%s held out of routing", now);
			style = ", color=orange, style=dashed, penwidth=2";
		} else if (below_capability(t, p, could, sizeof(could))) {
			snprintf(label, sizeof(label), "%s (could run %s)", now, could);
			style = ", color=red, fontcolor=red, penwidth=2";
		}
		dot_edge(out, t, lv, p, q, label, style);
	}
}

int topology_dot(const struct topo *t, const uint32_t *held, uint32_t nheld, FILE *out)
{
	uint16_t *lv = malloc(sizeof(*lv) * (t->nsws + 1));
	bool *quarantined = calloc(t->nports + 1, sizeof(*quarantined));
	int top = lv && quarantined ? topology_levels(t, lv) : -1;
	if (top < 0) {
		free(lv);
		free(quarantined);
		return -1;
	}
	for (uint32_t i = 0; i < nheld; i++)
		if (held[i] < t->nports)
			quarantined[held[i]] = true;
	fprintf(out, "// the fabric as ibsmd's SM sees it: switches by level from the hosts' "
	             "switches up;\n// red: a link below what both its ends support, dashed red: "
	             "quarantined, dashed orange: held out of routing\n"
	             "graph fabric {\n\trankdir=BT;\n\tnode [shape=box];\n");
	dot_nodes(t, lv, top, out);
	dot_edges(t, lv, quarantined, out);
	/* a quarantined port is disabled: its link is gone from the model but for last_peer */
	for (uint32_t i = 0; i < nheld; i++) {
		uint32_t p = held[i], q = p < t->nports ? t->ports[p].last_peer : TOPO_NONE;
		if (q == TOPO_NONE || q >= t->nports ||
		    (topo_port_linked(t, p) && t->ports[p].peer == q))
			continue;
		dot_edge(out, t, lv, p, q, "quarantined", ", color=red, style=dashed, penwidth=2");
	}
	fputs("}\n", out);
	free(lv);
	free(quarantined);
	return 0;
}
