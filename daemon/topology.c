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
#include "util/name_map.h"

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
	uint32_t id;   /* its name's rank among the names */
	bool listed;
};

struct slurm_job {
	const struct topo *t;
	const struct slurm_opts *o;
	FILE *problems;
	int nproblems;
	uint16_t *lv;
	char (*swname)[TNAME_LEN]; /* per switch */
	bool *written;             /* per switch: its line is in the file */
	struct host_entry *hosts;
	size_t nhosts;
	/* rail-optimized (a host under several leaves): each switch's stand-in, the first by
	 * name of those serving the same hosts (itself when none does); rank: by name */
	bool rail;
	uint32_t *rep, *rank;
	/* per switch: a leaf with two nodes of one name (two HCAs of a host, or hosts that
	 * did not name themselves): its hosts are not one per rail, it stands alone */
	bool *alone;
};

/* The name a node goes by: node_name_map's, else its NodeDescription. */
static const char *node_label(const struct slurm_job *j, uint32_t n)
{
	const char *m = j->o->names ? name_map_get(j->o->names, j->t->nodes[n].guid) : NULL;
	return m ? m : j->t->nodes[n].desc;
}

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
		if (switch_name(node_label(j, t->sws[s].node), j->swname[s], TNAME_LEN))
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
			if (!host_name(node_label(j, h), e->name, TNAME_LEN)) {
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
	/* a name is one host, whatever its ports or HCAs; under two leaves the fabric is
	 * rail-optimized (or two hosts share a name) */
	uint32_t id = 0;
	for (size_t i = 0; i < j->nhosts; i++) {
		struct host_entry *h = &j->hosts[i], *prev = i ? h - 1 : NULL;
		if (prev && strcmp(h->name, prev->name))
			id++;
		else if (prev && h->sw != prev->sw)
			j->rail = true;
		else if (prev && h->guid != prev->guid)
			j->alone[h->sw] = true;
		h->id = id;
	}
	return 0;
}

/* Each host listed once, under its first leaf's stand-in; a host whose leaves do not stand
 * as one (their hosts differ: a rail cabled otherwise than the others, or two hosts of one
 * name) is reported, as Slurm places a node under one leaf. */
static void place_hosts(struct slurm_job *j)
{
	for (size_t i = 0; i < j->nhosts;) {
		size_t k = i + 1;
		uint32_t at = j->rep[j->hosts[i].sw];
		bool told = false; /* once per host, whatever the leaves */
		j->hosts[i].listed = true;
		for (; k < j->nhosts && j->hosts[k].id == j->hosts[i].id; k++)
			if (j->rep[j->hosts[k].sw] != at && !told && (told = true))
				problem(
				    j,
				    "host %s: under %s and %s, which serve different hosts (a "
				    "host cabled to two leaf switches otherwise than the others, "
				    "or two hosts of one name): listed under %s only",
				    j->hosts[i].name, j->swname[at],
				    j->swname[j->rep[j->hosts[k].sw]], j->swname[at]);
		j->hosts[i].sw = at;
		i = k;
	}
}

/* ---- rail-optimized fabrics: switches that serve the same hosts stand as one ---- */

/* Each switch's list of what is below it (leaves: host name ids; above: the stand-ins of the
 * switches below), ascending, without repeats: items[start[s] .. end[s]), room for a
 * switch's ports from start[s]. */
struct below {
	uint32_t *start, *end, *items;
	uint64_t *hash;
	const uint32_t *rank;
};

static int same_below(const struct below *b, uint32_t a, uint32_t c)
{
	if (b->hash[a] != b->hash[c])
		return b->hash[a] < b->hash[c] ? -1 : 1;
	uint32_t la = b->end[a] - b->start[a], lc = b->end[c] - b->start[c];
	if (la != lc)
		return la < lc ? -1 : 1;
	return memcmp(b->items + b->start[a], b->items + b->start[c], la * sizeof(uint32_t));
}

static int below_cmp(const void *x, const void *y, void *arg)
{
	const struct below *b = arg;
	uint32_t a = *(const uint32_t *)x, c = *(const uint32_t *)y;
	int m = same_below(b, a, c);
	if (m)
		return m;
	return b->rank[a] < b->rank[c] ? -1 : b->rank[a] > b->rank[c];
}

/* The stand-in of each of the n switches in sw: the first by name of those whose lists are
 * the same and not empty. */
static void group(struct slurm_job *j, struct below *b, uint32_t *sw, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = sw[i];
		uint64_t h = 1469598103934665603ull; /* FNV-1a over the list */
		for (uint32_t k = b->start[s]; k < b->end[s]; k++)
			h = (h ^ b->items[k]) * 1099511628211ull;
		b->hash[s] = h;
	}
	qsort_r(sw, n, sizeof(*sw), below_cmp, b);
	for (uint32_t i = 0; i < n;) {
		uint32_t k = i + 1;
		while (k < n && b->end[sw[i]] > b->start[sw[i]] && !same_below(b, sw[i], sw[k]))
			j->rep[sw[k++]] = sw[i];
		i = k;
	}
}

/* Append v to switch s's list unless it is there (the lists are short: a leaf's hosts, a
 * switch's neighbours below). */
static void below_add(struct below *b, uint32_t s, uint32_t v)
{
	for (uint32_t k = b->start[s]; k < b->end[s]; k++)
		if (b->items[k] == v)
			return;
	b->items[b->end[s]++] = v;
}

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, c = *(const uint32_t *)y;
	return a < c ? -1 : a > c;
}

/* Level l's lists: a leaf's host name ids, a switch's stand-ins one level below. */
static void fill_level(struct slurm_job *j, struct below *b, int l)
{
	const struct topo *t = j->t;
	if (l == 0) {
		for (size_t i = 0; i < j->nhosts; i++)
			if (!j->alone[j->hosts[i].sw])
				below_add(b, j->hosts[i].sw, j->hosts[i].id);
		return;
	}
	for (uint32_t s = 0; s < t->nsws; s++) {
		if (j->lv[s] != l)
			continue;
		const struct topo_node *nd = &t->nodes[t->sws[s].node];
		for (unsigned k = 1; k <= nd->nports; k++) {
			uint32_t o;
			if (switch_link(t, nd->first_port + k, &o) && j->lv[o] + 1 == l)
				below_add(b, s, j->rep[o]);
		}
	}
}

/* Level by level from the leaves, the switches that serve the same hosts (leaves) or the
 * same stand-ins below stand as one, as NVIDIA's topograph merges them; when no two leaves
 * serve the same hosts, none. -1 out of memory. */
static int merge_switches(struct slurm_job *j, int top)
{
	const struct topo *t = j->t;
	struct below b = {.rank = j->rank};
	uint32_t *sw = malloc(sizeof(*sw) * (t->nsws + 1));
	b.start = malloc(sizeof(*b.start) * (t->nsws + 1));
	b.end = malloc(sizeof(*b.end) * (t->nsws + 1));
	b.hash = malloc(sizeof(*b.hash) * (t->nsws + 1));
	b.items = malloc(sizeof(*b.items) * (t->nports + 1));
	int rc = -1;
	if (!sw || !b.start || !b.end || !b.hash || !b.items)
		goto out;
	/* a switch's list holds at most one item per port: its hosts, or its links below */
	for (uint32_t s = 0, at = 0; s < t->nsws; s++) {
		b.start[s] = at;
		at += t->nodes[t->sws[s].node].nports + 1u;
	}
	for (int l = 0; l <= top; l++) {
		uint32_t n = 0;
		for (uint32_t s = 0; s < t->nsws; s++)
			if (j->lv[s] == l) {
				b.end[s] = b.start[s];
				sw[n++] = s;
			}
		fill_level(j, &b, l);
		for (uint32_t i = 0; i < n; i++)
			qsort(b.items + b.start[sw[i]], b.end[sw[i]] - b.start[sw[i]],
			      sizeof(uint32_t), u32_cmp);
		group(j, &b, sw, n);
		/* leaves that stand alone (two hosts of one name, not rails): nothing to merge
		 * above them either */
		bool merged = false;
		for (uint32_t i = 0; i < n && !merged; i++)
			merged = j->rep[sw[i]] != sw[i];
		if (l == 0 && !merged)
			break;
	}
	rc = 0;
out:
	free(sw);
	free(b.start);
	free(b.end);
	free(b.hash);
	free(b.items);
	return rc;
}

/* A switch that stands for others (they serve the same hosts): a comment naming them. */
static int put_stands_for(struct slurm_job *j, uint32_t s, const uint32_t *order, uint32_t nsw,
                          FILE *out, const char **names)
{
	size_t n = 0;
	for (uint32_t i = 0; i < nsw; i++)
		if (j->rep[order[i]] == s)
			names[n++] = j->swname[order[i]];
	if (n < 2)
		return 0;
	fprintf(out, "%s# %s stands for ", j->o->yaml ? "      " : "", j->swname[s]);
	if (put_hostlist(out, names, n) < 0)
		return -1;
	fputs(j->lv[s] ? ": they reach the same switches below\n"
	               : ": they serve the same hosts (one per rail)\n",
	      out);
	return 0;
}

/* One switch's entry: Nodes (a leaf) or Switches (above) in the form asked. */
static int put_entry(struct slurm_job *j, uint32_t s, bool leaf, FILE *out, const char **names,
                     size_t n)
{
	if (j->o->yaml)
		fprintf(out, "      - switch: \"%s\"\n        %s: \"", j->swname[s],
		        leaf ? "nodes" : "children");
	else
		fprintf(out, "SwitchName=%s %s=", j->swname[s], leaf ? "Nodes" : "Switches");
	if (put_hostlist(out, names, n) < 0)
		return -1;
	fputs(j->o->yaml ? "\"\n" : "\n", out);
	j->written[s] = true;
	return 0;
}

/* One leaf's line: its listed hosts. Not written when it has none. */
static int write_leaf(struct slurm_job *j, uint32_t s, FILE *out, const char **names)
{
	size_t n = 0;
	for (size_t i = 0; i < j->nhosts; i++)
		if (j->hosts[i].listed && j->hosts[i].sw == s)
			names[n++] = j->hosts[i].name;
	return n ? put_entry(j, s, true, out, names, n) : 0;
}

/* One upper switch's line: the switches one level below it that are written (their
 * stand-ins). */
static int write_upper(struct slurm_job *j, uint32_t s, FILE *out, const char **names)
{
	const struct topo *t = j->t;
	const struct topo_node *nd = &t->nodes[t->sws[s].node];
	size_t n = 0;
	for (unsigned k = 1; k <= nd->nports; k++) {
		uint32_t o;
		if (!switch_link(t, nd->first_port + k, &o) || j->lv[o] + 1 != j->lv[s])
			continue;
		o = j->rep[o];
		if (!j->written[o])
			continue;
		bool dup = false; /* parallel links, or switches standing as one */
		for (size_t i = 0; i < n && !dup; i++)
			dup = names[i] == j->swname[o];
		if (!dup)
			names[n++] = j->swname[o];
	}
	return n ? put_entry(j, s, false, out, names, n) : 0;
}

static void slurm_header(const struct slurm_job *j, FILE *out)
{
	if (!j->o->yaml) {
		fprintf(out,
		        "# Slurm topology.conf (TopologyPlugin=topology/tree), written by ibsmd "
		        "from the fabric as its SM sees it:\n# leaf switches are those with "
		        "hosts, each switch above lists the switches one hop nearer the "
		        "leaves.\n");
		return;
	}
	fprintf(out,
	        "# Slurm topology.yaml (Slurm 25.05 and later), written by ibsmd from the fabric "
	        "as its SM sees it:\n# a tree topology: leaf switches are those with hosts, each "
	        "switch above lists the switches one hop nearer the leaves.\n- topology: \"%s\"\n"
	        "  cluster_default: true\n  tree:\n    switches:\n",
	        j->o->topology_name && j->o->topology_name[0] ? j->o->topology_name : "ibsmd");
}

static int slurm_lines(struct slurm_job *j, int top, const uint32_t *order, uint32_t nsw, FILE *out)
{
	const struct topo *t = j->t;
	size_t cap = j->nhosts > t->nports ? j->nhosts : t->nports;
	const char **names = malloc(sizeof(*names) * (cap + 1));
	if (!names)
		return -1;
	slurm_header(j, out);
	int rc = 0;
	for (int l = 0; l <= top && !rc; l++)
		for (uint32_t i = 0; i < nsw && !rc; i++) {
			uint32_t s = order[i];
			if (j->lv[s] != l || j->rep[s] != s)
				continue;
			rc = put_stands_for(j, s, order, nsw, out, names);
			if (!rc)
				rc = l ? write_upper(j, s, out, names)
				       : write_leaf(j, s, out, names);
		}
	free(names);
	return rc;
}

/* Stand-ins: itself for every switch; on a rail-optimized fabric, those merge_switches
 * finds. */
static int stand_ins(struct slurm_job *j, int top, const uint32_t *order, uint32_t nsw)
{
	for (uint32_t s = 0; s < j->t->nsws; s++)
		j->rep[s] = s;
	for (uint32_t i = 0; i < nsw; i++)
		j->rank[order[i]] = i;
	return j->rail ? merge_switches(j, top) : 0;
}

int topology_slurm(const struct topo *t, const struct slurm_opts *o, FILE *out, FILE *problems)
{
	static const struct slurm_opts plain = {0};
	struct slurm_job j = {.t = t, .o = o ? o : &plain, .problems = problems};
	uint32_t n1 = t->nsws + 1;
	j.lv = malloc(sizeof(*j.lv) * n1);
	j.swname = malloc(sizeof(*j.swname) * n1);
	j.written = calloc(n1, sizeof(*j.written));
	j.rep = malloc(sizeof(*j.rep) * n1);
	j.rank = malloc(sizeof(*j.rank) * n1);
	j.alone = calloc(n1, sizeof(*j.alone));
	uint32_t *order = malloc(sizeof(*order) * n1), nsw = 0;
	int rc = -1;
	if (!j.lv || !j.swname || !j.written || !j.rep || !j.rank || !j.alone || !order)
		goto out;
	int top = topology_levels(t, j.lv);
	if (top < 0)
		goto out;
	name_switches(&j, order, &nsw);
	if (collect_hosts(&j) < 0 || stand_ins(&j, top, order, nsw) < 0)
		goto out;
	place_hosts(&j);
	if (slurm_lines(&j, top, order, nsw, out) < 0)
		goto out;
	rc = j.nproblems;
out:
	free(j.lv);
	free(j.swname);
	free(j.written);
	free(j.hosts);
	free(j.rep);
	free(j.rank);
	free(j.alone);
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
	uint8_t w;
	enum link_speed best;
	bool below = mad_link_below_best(pa, pb, &w, &best);
	if (below)
		rate_text(w ? w : pa->link_width_active, (int)best, could, len);
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
