/* The verifier. Per destination LID the LFTs form a graph of next hops; following it once
 * per switch (memoised) gives every source's hop count in O(switches) per LID, so a whole
 * fabric costs O(switches x LIDs), not O(endpoints^2 x hops). */
#include "verify.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mad/mad_types.h"

#define UNKNOWN  0xfffe
#define VISITING 0xfffd
#define FAIL     0xffff

static void issue(struct verify_report *r, unsigned max, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void issue(struct verify_report *r, unsigned max, const char *fmt, ...)
{
	r->ok = false;
	if (r->nissues >= max) {
		r->issues_dropped++;
		return;
	}
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char **n = realloc(r->issues, sizeof(char *) * (r->nissues + 1));
	if (!n)
		return;
	r->issues = n;
	r->issues[r->nissues++] = strdup(buf);
}

static bool active_link(const struct fabric *f, uint32_t p)
{
	const struct fs_port *a = &f->ports[p];
	return a->peer != FS_NONE && fabric_link_up(f, p) &&
	       a->pi.port_state == PORT_STATE_ACTIVE &&
	       f->ports[a->peer].pi.port_state == PORT_STATE_ACTIVE;
}

struct endpoint {
	uint32_t port;  /* the LID-carrying port */
	uint32_t sw;    /* switch index it hangs off (itself for port 0), FS_NONE if none */
	uint32_t sw_in; /* port index on that switch it enters by (switch port 0 for itself) */
	uint16_t lid;
	uint8_t lmc;
};

struct ctx {
	const struct fabric *f;
	const struct verify_opts *o;
	struct verify_report *r;
	struct endpoint *ep;
	uint32_t nep;
	uint32_t *lid_ep; /* LID -> endpoint, FS_NONE */
	uint16_t *dist;   /* per switch: hops to the current LID along the LFTs */
	uint8_t *down;    /* per switch: its walk to the current LID ends at a link that is down */
	bool last_down;   /* ... the last lft_dist's walk did */
	uint16_t *bfs;    /* per switch: shortest switch hops to the current destination switch */
	uint32_t bfs_from;
	uint32_t *queue;
	uint32_t *nsrc;      /* per switch: source endpoints entering there */
	uint64_t *load;      /* per port index: routes leaving through it */
	uint64_t *load_base; /* ... towards base LIDs only */
	/* channel dependency graph edges (from, to) as channel*16+vl */
	uint64_t *edges;
	size_t nedges, edges_cap;
	uint32_t *stamp; /* per channel*16+sl: the LID being walked when last visited */
	/* the path SL dump: distinct rows of SLs by destination LID, and each source LID's */
	uint8_t *sl_rows;
	uint32_t nrows, row_len;
	uint32_t *lid_row; /* FS_MAX_UCAST entries, FS_NONE: the file has no row */
	bool *vl_seen;     /* per channel*16+vl: reported as a VL its link does not run */
	/* APM: the switches sources enter by, one source endpoint on each (to name a pair),
	 * room for one destination's 2^LMC routes, pairs all of whose routes cross a link (by
	 * the link's lower port index) and the distinct routes counted */
	uint32_t *apm_sws, napm_sws, *apm_src;
	/* per switch: its 2-edge-connected component (switches no one link failure parts) */
	uint32_t *apm_comp;
	struct apm_route *apm_routes;
	uint64_t *apm_spof, apm_route_sum;
};

static uint32_t switch_of(const struct fabric *f, uint32_t node)
{
	return f->nodes[node].sw;
}

static void collect_endpoints(struct ctx *c)
{
	const struct fabric *f = c->f;
	c->ep = calloc(f->nports, sizeof(*c->ep));
	c->lid_ep = malloc(sizeof(uint32_t) * FS_MAX_UCAST);
	for (uint32_t i = 0; i < FS_MAX_UCAST; i++)
		c->lid_ep[i] = FS_NONE;
	for (uint32_t p = 0; p < f->nports; p++) {
		const struct fs_port *port = &f->ports[p];
		const struct fs_node *n = &f->nodes[port->node];
		if (!n->present)
			continue;
		bool sw = n->type == NODE_TYPE_SWITCH;
		if (sw && port->num != 0)
			continue;
		if (!sw && !fabric_link_up(f, p))
			continue;
		struct endpoint *e = &c->ep[c->nep++];
		e->port = p;
		e->lid = port->pi.lid;
		e->lmc = port->pi.lmc;
		if (sw) {
			e->sw = n->sw;
			e->sw_in = p;
		} else {
			uint32_t peer = port->peer;
			e->sw = fs_is_switch(f, f->ports[peer].node)
			            ? switch_of(f, f->ports[peer].node)
			            : FS_NONE;
			e->sw_in = peer;
		}
	}
	c->r->endpoints = c->nep;
	for (uint32_t i = 0; i < c->nep; i++) {
		struct endpoint *e = &c->ep[i];
		const char *name = fs_node_of(f, e->port)->name;
		if (!e->lid) {
			c->r->lids_zero++;
			issue(c->r, c->o->max_issues, "\"%s\" port %u has no LID", name,
			      f->ports[e->port].num);
			continue;
		}
		if (e->lid & ((1u << e->lmc) - 1)) {
			c->r->lids_misaligned++;
			issue(c->r, c->o->max_issues, "\"%s\" LID %u not aligned to its LMC %u",
			      name, e->lid, e->lmc);
		}
		for (uint32_t l = e->lid; l < e->lid + (1u << e->lmc) && l < FS_MAX_UCAST; l++) {
			if (c->lid_ep[l] != FS_NONE) {
				c->r->lids_duplicate++;
				issue(c->r, c->o->max_issues, "LID %u held by \"%s\" and \"%s\"", l,
				      fs_node_of(f, c->ep[c->lid_ep[l]].port)->name, name);
				continue;
			}
			c->lid_ep[l] = i;
		}
	}
}

/* Hops from switch s to `lid` along the LFTs, FAIL if it never gets there. The switches
 * walked through get their distances too, so each is walked once per LID. */
static uint16_t lft_dist(struct ctx *c, uint32_t s, uint16_t lid, const struct endpoint *dst)
{
	const struct fabric *f = c->f;
	uint32_t path[130];
	unsigned n = 0;
	uint16_t d; /* distance of where the walk stopped, beyond the last switch in path */
	bool down = false;
	for (;;) {
		if (c->dist[s] != UNKNOWN) {
			d = c->dist[s] == VISITING ? FAIL : c->dist[s]; /* VISITING: a loop */
			down = d == FAIL && c->dist[s] != VISITING && c->down[s];
			break;
		}
		if (dst->sw == s && dst->port == f->nodes[f->sws[s].node].first_port) {
			c->dist[s] = 0;
			d = 0;
			break;
		}
		c->dist[s] = VISITING;
		path[n++] = s;
		const struct fs_switch *sw = &f->sws[s];
		if (n >= 128 || lid >= sw->lft_size || lid > sw->si.linear_fdb_top ||
		    sw->lft[lid] == 0xff || sw->lft[lid] == 0) {
			d = FAIL;
			break;
		}
		uint32_t out = fabric_port(f, sw->node, sw->lft[lid]);
		if (out == FS_NONE || !active_link(f, out)) {
			d = FAIL;
			down = out != FS_NONE && f->ports[out].peer != FS_NONE &&
			       !fabric_link_up(f, out);
			break;
		}
		uint32_t peer = f->ports[out].peer;
		uint32_t pn = f->ports[peer].node;
		if (!fs_is_switch(f, pn)) {
			d = peer == dst->port ? 0 : FAIL;
			break;
		}
		s = switch_of(f, pn);
	}
	for (unsigned i = 0; i < n; i++) {
		c->dist[path[i]] = d == FAIL ? FAIL : (uint16_t)(d + (n - i));
		c->down[path[i]] = down;
	}
	c->last_down = down;
	return n ? c->dist[path[0]] : d;
}

/* Shortest switch-to-switch hop counts to switch t over ACTIVE links. */
static void bfs_to(struct ctx *c, uint32_t t)
{
	const struct fabric *f = c->f;
	if (c->bfs_from == t)
		return;
	c->bfs_from = t;
	for (uint32_t i = 0; i < f->nsws; i++)
		c->bfs[i] = FAIL;
	uint32_t head = 0, tail = 0;
	c->bfs[t] = 0;
	c->queue[tail++] = t;
	while (head < tail) {
		uint32_t s = c->queue[head++];
		const struct fs_node *n = &f->nodes[f->sws[s].node];
		for (unsigned num = 1; num <= n->nports; num++) {
			uint32_t p = n->first_port + num;
			if (!active_link(f, p))
				continue;
			uint32_t pn = f->ports[f->ports[p].peer].node;
			if (!fs_is_switch(f, pn))
				continue;
			uint32_t s2 = switch_of(f, pn);
			if (c->bfs[s2] == FAIL) {
				c->bfs[s2] = (uint16_t)(c->bfs[s] + 1);
				c->queue[tail++] = s2;
			}
		}
	}
}

/* ---- channel dependency graph ---- */

static uint8_t vl_of(const struct fabric *f, uint32_t in, uint32_t out, uint8_t sl)
{
	const struct fs_node *n = fs_node_of(f, out);
	const uint8_t *t;
	if (n->type == NODE_TYPE_SWITCH) {
		const struct fs_switch *s = &f->sws[n->sw];
		if (!s->sl2vl)
			return 0;
		unsigned np = n->nports + 1u;
		t = s->sl2vl + ((size_t)f->ports[in].num * np + f->ports[out].num) * 8;
	} else {
		t = f->ports[out].sl2vl;
	}
	uint8_t b = t[sl / 2];
	return sl % 2 ? b & 0xf : b >> 4;
}

/* Does the link at this port run the VL? OperVLs 1-5: VL0, 0-1, 0-3, 0-7, 0-14. */
static bool vl_runs(const struct fabric *f, uint32_t port, uint8_t vl)
{
	static const uint8_t n[] = {1, 1, 2, 4, 8, 15};
	uint8_t op = f->ports[port].pi.oper_vls;
	return vl < (op < sizeof(n) ? n[op] : 1);
}

/* A path's channel on a VL its link does not run: its packets are dropped there. */
static void check_vl(struct ctx *c, uint32_t out, uint8_t vl, uint8_t sl)
{
	if (vl_runs(c->f, out, vl))
		return;
	if (!c->vl_seen && !(c->vl_seen = calloc((size_t)c->f->nports * 16, sizeof(bool))))
		abort();
	if (c->vl_seen[(size_t)out * 16 + vl])
		return;
	c->vl_seen[(size_t)out * 16 + vl] = true;
	c->r->vl_unrun++;
	issue(c->r, c->o->max_issues,
	      "SL %u leaves \"%s\" port %u on VL %u, which its link does not run", sl,
	      fs_node_of(c->f, out)->name, c->f->ports[out].num, vl);
}

static int cmp_u64pair(const void *a, const void *b);

/* Sort the edges and drop repeats: the same dependency comes back from many LIDs, and
 * unsorted the list grows with LIDs x channels (70 GB on a 40,000-host tree) where the
 * distinct edges are a few million. */
static void compact_edges(struct ctx *c)
{
	qsort(c->edges, c->nedges, 2 * sizeof(uint64_t), cmp_u64pair);
	size_t n = 0;
	for (size_t i = 0; i < c->nedges; i++)
		if (!n || c->edges[2 * i] != c->edges[2 * (n - 1)] ||
		    c->edges[2 * i + 1] != c->edges[2 * (n - 1) + 1]) {
			c->edges[2 * n] = c->edges[2 * i];
			c->edges[2 * n + 1] = c->edges[2 * i + 1];
			n++;
		}
	c->nedges = n;
}

static void add_edge(struct ctx *c, uint64_t from, uint64_t to)
{
	/* full and large: first drop the repeats; grow when they were under half of it */
	bool full = c->nedges == c->edges_cap;
	if (full && c->edges_cap >= (1u << 22)) {
		compact_edges(c);
		full = c->nedges * 2 >= c->edges_cap;
	}
	if (full) {
		c->edges_cap = c->edges_cap ? c->edges_cap * 2 : 4096;
		c->edges = realloc(c->edges, c->edges_cap * 2 * sizeof(uint64_t));
		if (!c->edges)
			abort();
	}
	c->edges[2 * c->nedges] = from;
	c->edges[2 * c->nedges + 1] = to;
	c->nedges++;
}

/* Walk the paths to `lid` from every source, adding the dependencies they create: a packet
 * holding channel (link into s, VL) waits for (link out of s, VL'). Each (channel, VL) is
 * walked once per LID. */
static uint8_t path_sl(const struct ctx *c, uint16_t slid, uint16_t dlid)
{
	uint8_t sl = c->o->sl;
	if (c->lid_row && c->lid_row[slid] != FS_NONE && dlid >= 1 && dlid <= c->row_len)
		sl = (uint8_t)(sl + c->sl_rows[(size_t)c->lid_row[slid] * c->row_len + dlid - 1]);
	return sl & 0xf;
}

static void cdg_lid(struct ctx *c, uint16_t lid, uint32_t lid_index)
{
	const struct fabric *f = c->f;
	for (uint32_t i = 0; i < c->nep; i++) {
		const struct endpoint *src = &c->ep[i];
		if (src->sw == FS_NONE || src->lid == lid)
			continue;
		if (!c->o->all && fs_is_switch(f, f->ports[src->port].node))
			continue;
		/* each path on its own SL; a channel is walked once per LID and SL (paths of
		 * one SL that meet go on alike) */
		uint8_t sl = path_sl(c, src->lid, lid);
		c->r->sls_used |= (uint16_t)(1u << sl);
		/* the first channel: from a CA, its link into the switch; a switch's own port 0
		 * injects without holding a link */
		uint32_t in = src->sw_in;
		uint64_t held = UINT64_MAX;
		uint32_t s = src->sw;
		if (!fs_is_switch(f, f->ports[src->port].node)) {
			uint8_t vl = vl_of(f, src->port, src->port, sl);
			held = (uint64_t)src->port * 16 + vl;
			uint64_t key = (uint64_t)src->port * 16 + sl;
			if (c->stamp[key] == lid_index)
				continue;
			c->stamp[key] = lid_index;
			c->r->vls_used |= (uint16_t)(1u << vl);
			check_vl(c, src->port, vl, sl);
		}
		for (unsigned hop = 0; hop < 64; hop++) {
			const struct fs_switch *sw = &f->sws[s];
			if (lid >= sw->lft_size || sw->lft[lid] == 0xff || sw->lft[lid] == 0)
				break;
			uint32_t out = fabric_port(f, sw->node, sw->lft[lid]);
			if (out == FS_NONE || !active_link(f, out))
				break;
			uint8_t vl = vl_of(f, in, out, sl);
			uint64_t next = (uint64_t)out * 16 + vl;
			if (held != UINT64_MAX)
				add_edge(c, held, next);
			uint64_t key = (uint64_t)out * 16 + sl;
			if (c->stamp[key] == lid_index)
				break; /* the rest of this path is walked already */
			c->stamp[key] = lid_index;
			c->r->vls_used |= (uint16_t)(1u << vl);
			check_vl(c, out, vl, sl);
			held = next;
			uint32_t peer = f->ports[out].peer;
			if (!fs_is_switch(f, f->ports[peer].node))
				break;
			in = peer;
			s = switch_of(f, f->ports[peer].node);
		}
	}
}

static int cmp_u64pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

static void describe_channel(const struct fabric *f, uint64_t ch, char *buf, size_t len)
{
	uint32_t p = (uint32_t)(ch / 16);
	snprintf(buf, len, "\"%s\"/%u->\"%s\"/%u VL%u", fs_node_of(f, p)->name, f->ports[p].num,
	         fs_node_of(f, f->ports[p].peer)->name, f->ports[f->ports[p].peer].num,
	         (unsigned)(ch % 16));
}

/* Cycle search over the CDG (iterative DFS on the sorted edge list). */
static void cdg_cycles(struct ctx *c)
{
	struct verify_report *r = c->r;
	if (!c->nedges)
		return;
	compact_edges(c);
	size_t n = c->nedges;
	r->cdg_edges = n;
	/* nodes are channel*16+vl; index them through the edge list's sources */
	size_t nch = (size_t)c->f->nports * 16;
	uint8_t *color = calloc(nch, 1); /* 0 white, 1 on stack, 2 done */
	size_t *first = malloc(sizeof(size_t) * (nch + 1));
	size_t *stack_node = malloc(sizeof(size_t) * (nch + 1));
	size_t *stack_edge = malloc(sizeof(size_t) * (nch + 1));
	for (size_t i = 0, e = 0; i <= nch; i++) {
		while (e < n && c->edges[2 * e] < i)
			e++;
		first[i] = e;
	}
	for (size_t i = 0; i < nch; i++)
		if (first[i] != first[i + 1])
			r->cdg_channels++;
	for (size_t start = 0; start < nch && !r->credit_loop; start++) {
		if (color[start] || first[start] == first[start + 1])
			continue;
		size_t sp = 0;
		stack_node[sp] = start;
		stack_edge[sp] = first[start];
		color[start] = 1;
		while (sp != SIZE_MAX && !r->credit_loop) {
			size_t v = stack_node[sp];
			if (stack_edge[sp] == first[v + 1]) {
				color[v] = 2;
				sp = sp ? sp - 1 : SIZE_MAX;
				continue;
			}
			size_t w = c->edges[2 * stack_edge[sp]++ + 1];
			if (color[w] == 1) {
				/* found: the stack from w to v is the cycle */
				r->credit_loop = true;
				size_t k = 0;
				while (stack_node[k] != w)
					k++;
				size_t off = 0;
				for (; k <= sp && off < sizeof(r->cycle) - 80; k++) {
					char d[160];
					describe_channel(c->f, stack_node[k], d, sizeof(d));
					off +=
					    (size_t)snprintf(r->cycle + off, sizeof(r->cycle) - off,
					                     "%s%s", off ? " -> " : "", d);
				}
				issue(r, UINT32_MAX, "credit loop: %s", r->cycle);
			} else if (!color[w]) {
				color[w] = 1;
				sp++;
				stack_node[sp] = w;
				stack_edge[sp] = first[w];
			}
		}
	}
	free(color);
	free(first);
	free(stack_node);
	free(stack_edge);
}

/* ---- balance: routes per directed switch-to-switch link, per LID by flow accumulation ---- */

static void balance_lid(struct ctx *c, uint16_t lid, const struct endpoint *dst, bool base)
{
	const struct fabric *f = c->f;
	/* switches by their distance to the LID, farthest first, so every switch's flow is
	 * complete before it passes it on */
	uint32_t *order = c->queue;
	uint32_t cnt[66] = {0};
	uint32_t start[66];
	for (uint32_t s = 0; s < f->nsws; s++)
		if (c->dist[s] < 64)
			cnt[c->dist[s]]++;
	start[64] = 0;
	for (int d = 63; d >= 0; d--)
		start[d] = start[d + 1] + cnt[d + 1];
	uint64_t *fl = calloc(f->nsws, sizeof(uint64_t));
	for (uint32_t s = 0; s < f->nsws; s++) {
		if (c->dist[s] < 64)
			order[start[c->dist[s]]++] = s;
		fl[s] = c->nsrc[s];
	}
	/* the destination does not send to itself */
	if (dst->sw != FS_NONE && fl[dst->sw] &&
	    (c->o->all || !fs_is_switch(f, f->ports[dst->port].node)))
		fl[dst->sw]--;
	uint32_t total = 0;
	for (int d = 0; d < 64; d++)
		total += cnt[d];
	for (uint32_t i = 0; i < total; i++) {
		uint32_t s = order[i];
		if (c->dist[s] == 0)
			continue;
		const struct fs_switch *sw = &f->sws[s];
		uint32_t out = fabric_port(f, sw->node, sw->lft[lid]);
		uint32_t pn = f->ports[f->ports[out].peer].node;
		c->load[out] += fl[s];
		if (base)
			c->load_base[out] += fl[s];
		if (fs_is_switch(f, pn))
			fl[switch_of(f, pn)] += fl[s];
	}
	free(fl);
}

/* A multicast copy reaching an end port: true (and reported) if it already had one. */
static bool deliver_once(struct verify_report *r, const struct verify_opts *o, uint32_t *got,
                         uint32_t port, uint32_t gen, unsigned m)
{
	if (got[port] == gen) {
		issue(r, o->max_issues, "MLID 0x%04x: a port gets two copies", FS_MCAST_BASE + m);
		return true;
	}
	got[port] = gen;
	return false;
}

/* ---- shift permutations: host i to host i + k, for every k ---- */

/* The worst number of flows of one shift permutation on a directed switch-to-switch link,
 * over all shifts, hosts in port order: 1 means every shift is free of congestion (what
 * fat-tree engines aim at). Linear in hosts squared times hops: done up to 8192 hosts. */
static void shift_permutations(struct ctx *c)
{
	const struct fabric *f = c->f;
	struct verify_report *r = c->r;
	uint32_t *host = malloc(sizeof(uint32_t) * (c->nep + 1)), nh = 0;
	for (uint32_t i = 0; i < c->nep; i++) {
		const struct endpoint *e = &c->ep[i];
		if (!fs_is_switch(f, f->ports[e->port].node) && e->sw != FS_NONE && e->lid)
			host[nh++] = i;
	}
	uint32_t *use = calloc(f->nports + 1u, sizeof(uint32_t));
	uint32_t *touched = malloc(sizeof(uint32_t) * ((size_t)nh * 16 + 1));
	if (!host || !use || !touched || nh < 2 || nh > 8192) {
		free(host);
		free(use);
		free(touched);
		return;
	}
	r->shift_checked = true;
	for (uint32_t k = 1; k < nh; k++) {
		uint32_t nt = 0;
		for (uint32_t i = 0; i < nh; i++) {
			const struct endpoint *src = &c->ep[host[i]],
			                      *dst = &c->ep[host[(i + k) % nh]];
			uint32_t s = src->sw;
			for (unsigned hop = 0; hop < 16; hop++) {
				const struct fs_switch *sw = &f->sws[s];
				if (dst->lid >= sw->lft_size || sw->lft[dst->lid] == 0xff)
					break;
				uint32_t out = fabric_port(f, sw->node, sw->lft[dst->lid]);
				if (out == FS_NONE || f->ports[out].peer == FS_NONE)
					break;
				uint32_t pn = f->ports[f->ports[out].peer].node;
				if (!fs_is_switch(f, pn))
					break; /* delivered: the host link is the flow's own */
				if (!use[out]++)
					touched[nt++] = out;
				if (use[out] > r->shift_worst) {
					r->shift_worst = use[out];
					r->shift_worst_k = k;
				}
				s = switch_of(f, pn);
			}
		}
		for (uint32_t i = 0; i < nt; i++)
			use[touched[i]] = 0;
	}
	r->shift_hosts = nh;
	free(host);
	free(use);
	free(touched);
}

/* ---- alternate paths (APM): the 2^LMC routes from a switch to one destination ---- */

#define APM_HOPS 64

struct apm_route {
	bool ok;                   /* it reaches the destination */
	unsigned n;                /* switch-to-switch links crossed */
	uint32_t link[APM_HOPS];   /* each as its lower port index: a failure takes both ways */
	uint32_t sw[APM_HOPS + 1]; /* the switches, the source's first, the destination's last */
};

/* Follows the LFTs from switch s to `lid` (one of dst's), as lft_dist does, keeping the links
 * and switches: the route a packet to that LID takes. */
static void apm_walk(const struct ctx *c, uint32_t s, uint16_t lid, const struct endpoint *dst,
                     struct apm_route *rt)
{
	const struct fabric *f = c->f;
	rt->n = 0;
	rt->ok = false;
	for (;;) {
		rt->sw[rt->n] = s;
		if (dst->sw == s && dst->port == f->nodes[f->sws[s].node].first_port) {
			rt->ok = true; /* the destination is this switch's port 0 */
			return;
		}
		const struct fs_switch *sw = &f->sws[s];
		if (rt->n >= APM_HOPS || lid >= sw->lft_size || lid > sw->si.linear_fdb_top ||
		    sw->lft[lid] == 0xff || sw->lft[lid] == 0)
			return;
		uint32_t out = fabric_port(f, sw->node, sw->lft[lid]);
		if (out == FS_NONE || !active_link(f, out))
			return;
		uint32_t peer = f->ports[out].peer;
		uint32_t pn = f->ports[peer].node;
		if (!fs_is_switch(f, pn)) {
			rt->ok = peer == dst->port;
			return;
		}
		rt->link[rt->n++] = out < peer ? out : peer;
		s = switch_of(f, pn);
	}
}

static bool apm_same(const struct apm_route *a, const struct apm_route *b)
{
	return a->n == b->n && !memcmp(a->link, b->link, sizeof(a->link[0]) * a->n);
}

static bool apm_link_apart(const struct apm_route *a, const struct apm_route *b)
{
	for (unsigned i = 0; i < a->n; i++)
		for (unsigned j = 0; j < b->n; j++)
			if (a->link[i] == b->link[j])
				return false;
	return true;
}

/* No switch in common but the two ends' own: sw[1..n-1] are the ones in between. Two
 * one-hop routes over the same link have none in between and are still one route: link
 * disjoint is asked too. */
static bool apm_switch_apart(const struct apm_route *a, const struct apm_route *b)
{
	if (!apm_link_apart(a, b))
		return false;
	for (unsigned i = 1; i < a->n; i++)
		for (unsigned j = 1; j < b->n; j++)
			if (a->sw[i] == b->sw[j])
				return false;
	return true;
}

/* The links on every route that arrives: the pairs' single points of failure. */
static void apm_common_links(struct ctx *c, unsigned nok, uint64_t weight)
{
	const struct apm_route *first = &c->apm_routes[0];
	for (unsigned i = 0; i < first->n; i++) {
		bool all = true;
		for (unsigned k = 1; k < nok && all; k++) {
			const struct apm_route *o = &c->apm_routes[k];
			all = false;
			for (unsigned j = 0; j < o->n; j++)
				if (o->link[j] == first->link[i])
					all = true;
		}
		if (all)
			c->apm_spof[first->link[i]] += weight;
	}
}

/* One source switch to one destination: its distinct routes, and whether two of them are
 * link- or switch-disjoint, counted for every source endpoint entering there (their routes
 * are the switch's). */
static void apm_pair(struct ctx *c, uint32_t s, uint32_t di)
{
	const struct endpoint *dst = &c->ep[di];
	struct verify_report *r = c->r;
	unsigned nok = 0; /* routes [0, nok) are the distinct ones that arrive */
	for (uint32_t k = 0; k < (1u << dst->lmc) && dst->lid + k < FS_MAX_UCAST; k++) {
		struct apm_route *rt = &c->apm_routes[nok];
		apm_walk(c, s, (uint16_t)(dst->lid + k), dst, rt);
		if (!rt->ok)
			continue;
		bool dup = false;
		for (unsigned j = 0; j < nok && !dup; j++)
			dup = apm_same(&c->apm_routes[j], rt);
		if (!dup)
			nok++;
	}
	bool link_apart = false, sw_apart = false;
	for (unsigned i = 0; i < nok && !sw_apart; i++)
		for (unsigned j = i + 1; j < nok && !sw_apart; j++) {
			const struct apm_route *a = &c->apm_routes[i], *b = &c->apm_routes[j];
			if (apm_link_apart(a, b)) {
				link_apart = true;
				sw_apart = apm_switch_apart(a, b);
			}
		}
	uint64_t w = c->nsrc[s];
	r->apm_pairs += w;
	c->apm_route_sum += w * nok;
	r->apm_link_disjoint += link_apart ? w : 0;
	r->apm_switch_disjoint += sw_apart ? w : 0;
	if (c->apm_comp[s] == c->apm_comp[dst->sw]) { /* no bridge between them */
		r->apm_possible += w;
		r->apm_possible_link_disjoint += link_apart ? w : 0;
	}
	if (nok)
		apm_common_links(c, nok, w);
	if (!link_apart && !r->apm_example[0])
		snprintf(r->apm_example, sizeof(r->apm_example),
		         "\"%s\" -> \"%s\" (LID %u): %u route(s), none link-disjoint",
		         fs_node_of(c->f, c->ep[c->apm_src[s]].port)->name,
		         fs_node_of(c->f, dst->port)->name, dst->lid, nok);
}

/* The switch at the far end of switch port p's active link to another switch, FS_NONE if
 * none. */
static uint32_t isl_peer(const struct fabric *f, uint32_t p)
{
	if (!active_link(f, p))
		return FS_NONE;
	uint32_t n = f->ports[f->ports[p].peer].node;
	return fs_is_switch(f, n) && f->nodes[n].present ? switch_of(f, n) : FS_NONE;
}

/* Label each switch's 2-edge-connected component over the active switch-to-switch links
 * (Tarjan's bridges, iterative: a DFS path, a component stack; two cables between the same
 * switches are two edges, so neither is a bridge). Written here rather than shared with
 * the SM: the checker must not reuse what it checks. false out of memory. */
static bool two_edge_components(const struct fabric *f, uint32_t *comp)
{
	uint32_t n = f->nsws, *disc = malloc(sizeof(uint32_t) * (n + 1)),
	         *low = malloc(sizeof(uint32_t) * (n + 1)),
	         *in = malloc(sizeof(uint32_t) * (n + 1)), /* the DFS parent's port to it */
	             *it = malloc(sizeof(uint32_t) * (n + 1)),
	         *path = malloc(sizeof(uint32_t) * (n + 1)),
	         *stk = malloc(sizeof(uint32_t) * (n + 1));
	bool ok = disc && low && in && it && path && stk;
	uint32_t clock = 0, ncomp = 0;
	for (uint32_t v = 0; ok && v < n; v++)
		disc[v] = FS_NONE;
	for (uint32_t r = 0; ok && r < n; r++) {
		if (disc[r] != FS_NONE)
			continue;
		uint32_t vs = 0, sp = 0;
		disc[r] = low[r] = clock++;
		in[r] = FS_NONE;
		it[r] = 1;
		path[vs++] = r;
		stk[sp++] = r;
		while (vs) {
			uint32_t v = path[vs - 1];
			const struct fs_node *nd = &f->nodes[f->sws[v].node];
			if (it[v] <= nd->nports) {
				uint32_t p = nd->first_port + it[v]++, w = isl_peer(f, p);
				if (w == FS_NONE || (in[v] != FS_NONE && f->ports[p].peer == in[v]))
					continue; /* no switch there, or the cable v came by */
				if (disc[w] == FS_NONE) {
					disc[w] = low[w] = clock++;
					in[w] = p;
					it[w] = 1;
					path[vs++] = w;
					stk[sp++] = w;
				} else if (disc[w] < low[v]) {
					low[v] = disc[w];
				}
				continue;
			}
			vs--;
			if (vs && low[v] < low[path[vs - 1]])
				low[path[vs - 1]] = low[v];
			if (low[v] == disc[v]) { /* v heads a component */
				uint32_t x;
				do {
					x = stk[--sp];
					comp[x] = ncomp;
				} while (x != v);
				ncomp++;
			}
		}
	}
	free(disc), free(low), free(in), free(it), free(path), free(stk);
	return ok;
}

/* Whether APM is measured (an endpoint has LMC > 0), and its tables if so: the switches
 * sources enter by, one source endpoint on each, and the switches' 2-edge-connected
 * components. */
static void apm_setup(struct ctx *c)
{
	const struct fabric *f = c->f;
	bool any = false;
	for (uint32_t i = 0; i < c->nep; i++)
		any |= c->ep[i].lmc > 0;
	if (!any)
		return;
	c->apm_sws = malloc(sizeof(uint32_t) * (f->nsws + 1));
	c->apm_src = malloc(sizeof(uint32_t) * (f->nsws + 1));
	c->apm_routes = malloc(sizeof(struct apm_route) * 128);
	c->apm_spof = calloc(f->nports + 1u, sizeof(uint64_t));
	c->apm_comp = malloc(sizeof(uint32_t) * (f->nsws + 1));
	if (!c->apm_sws || !c->apm_src || !c->apm_routes || !c->apm_spof || !c->apm_comp ||
	    !two_edge_components(f, c->apm_comp)) {
		free(c->apm_spof); /* apm_dest() then measures nothing */
		c->apm_spof = NULL;
		return;
	}
	for (uint32_t s = 0; s < f->nsws; s++)
		c->apm_src[s] = FS_NONE;
	for (uint32_t i = 0; i < c->nep; i++) {
		const struct endpoint *e = &c->ep[i];
		if (e->sw == FS_NONE || !e->lid ||
		    (!c->o->all && fs_is_switch(f, f->ports[e->port].node)) ||
		    c->apm_src[e->sw] != FS_NONE)
			continue;
		c->apm_src[e->sw] = i;
		c->apm_sws[c->napm_sws++] = e->sw;
	}
	c->r->apm_checked = true;
}

/* Every source switch to destination di (called from the destination loop). */
static void apm_dest(struct ctx *c, uint32_t di)
{
	const struct endpoint *dst = &c->ep[di];
	if (!c->r->apm_checked || !c->apm_spof || !dst->lid || dst->sw == FS_NONE ||
	    (!c->o->all && fs_is_switch(c->f, c->f->ports[dst->port].node)))
		return;
	if (dst->lmc > c->r->apm_lmc)
		c->r->apm_lmc = dst->lmc;
	for (uint32_t i = 0; i < c->napm_sws; i++)
		if (c->apm_sws[i] != dst->sw)
			apm_pair(c, c->apm_sws[i], di);
}

/* The figures from the sums, the worst single point of failure named; frees the tables. */
static void apm_finish(struct ctx *c)
{
	const struct fabric *f = c->f;
	struct verify_report *r = c->r;
	if (r->apm_pairs)
		r->apm_routes_mean = (double)c->apm_route_sum / (double)r->apm_pairs;
	for (uint32_t p = 0; c->apm_spof && p < f->nports; p++) {
		if (c->apm_spof[p] <= r->apm_spof_pairs)
			continue;
		uint32_t q = f->ports[p].peer;
		r->apm_spof_pairs = c->apm_spof[p];
		snprintf(r->apm_spof_link, sizeof(r->apm_spof_link), "\"%s\"/%u - \"%s\"/%u",
		         fs_node_of(f, p)->name, f->ports[p].num, fs_node_of(f, q)->name,
		         f->ports[q].num);
	}
	free(c->apm_sws);
	free(c->apm_src);
	free(c->apm_routes);
	free(c->apm_spof);
	free(c->apm_comp);
}

/* The SM's path SL dump (ibsmd writes it as ibsmd-path-sl.dump):
 *   max_lid 0x0096
 *   row 0 0120-...        one SL digit (hex) per destination LID 1..max_lid, '-': none
 *   lid 0x0001 row 0      the row of each source LID
 * 0, or -1 with why (file and line). */
static int load_path_sl(struct ctx *c, const char *path, char *why, size_t len)
{
	FILE *in = fopen(path, "r");
	if (!in) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	unsigned ln = 0;
	int rc = -1;
	c->lid_row = malloc(sizeof(uint32_t) * FS_MAX_UCAST);
	if (!c->lid_row)
		abort();
	for (uint32_t i = 0; i < FS_MAX_UCAST; i++)
		c->lid_row[i] = FS_NONE;
	while (getline(&line, &cap, in) > 0) {
		ln++;
		line[strcspn(line, "\r\n")] = 0;
		unsigned long a, b;
		char digits_at;
		int n = 0;
		if (line[0] == '#' || !line[0])
			continue;
		if (sscanf(line, "max_lid %li%n", (long *)&a, &n) == 1 && !line[n]) {
			if (c->row_len || !a || a >= FS_MAX_UCAST)
				goto bad;
			c->row_len = (uint32_t)a;
		} else if (sscanf(line, "row %lu %c%n", &a, &digits_at, &n) == 2) {
			const char *d = line + n - 1;
			if (!c->row_len || a != c->nrows || strlen(d) != c->row_len)
				goto bad;
			c->sl_rows = realloc(c->sl_rows, (size_t)(c->nrows + 1) * c->row_len);
			if (!c->sl_rows)
				abort();
			uint8_t *row = c->sl_rows + (size_t)c->nrows * c->row_len;
			for (uint32_t i = 0; i < c->row_len; i++) {
				if (d[i] == '-')
					row[i] = 0;
				else if (isxdigit((unsigned char)d[i]))
					row[i] = (uint8_t)(isdigit((unsigned char)d[i])
					                       ? d[i] - '0'
					                       : tolower((unsigned char)d[i]) -
					                             'a' + 10);
				else
					goto bad;
			}
			c->nrows++;
		} else if (sscanf(line, "lid %li row %lu%n", (long *)&a, &b, &n) == 2 && !line[n]) {
			if (!a || a >= FS_MAX_UCAST || b >= c->nrows)
				goto bad;
			c->lid_row[a] = (uint32_t)b;
		} else {
			goto bad;
		}
	}
	if (!c->row_len) {
		snprintf(why, len, "%s: no max_lid line", path);
		goto out;
	}
	rc = 0;
	goto out;
bad:
	snprintf(why, len, "%s:%u: not a path SL line: \"%.60s\"", path, ln, line);
out:
	free(line);
	fclose(in);
	return rc;
}

static const char *rate_text(uint8_t width, unsigned speed, char *buf, size_t len)
{
	snprintf(buf, len, "%ux%s", mad_link_lanes(width),
	         mad_link_speed_name((enum link_speed)speed));
	return buf;
}

/* What each link runs, against what both its ends could: reported, not a failure (a cable
 * may well carry less), but a link slower than both ends is worth a look. */
static void link_speeds(const struct fabric *f, struct verify_report *r)
{
	static const uint8_t widths[] = {LINK_WIDTH_1X, LINK_WIDTH_2X, LINK_WIDTH_4X, LINK_WIDTH_8X,
	                                 LINK_WIDTH_12X};
	unsigned count[5][LINK_SPEEDS] = {{0}};
	for (uint32_t p = 0; p < f->nports; p++) {
		const struct fs_port *a = &f->ports[p];
		if (a->peer == FS_NONE || a->peer < p || !fabric_link_up(f, p))
			continue;
		const struct fs_port *b = &f->ports[a->peer];
		r->links++;
		uint8_t w = a->pi.link_width_active;
		unsigned sp = mad_link_speed_active(&a->pi);
		for (unsigned i = 0; i < 5; i++)
			if (w == widths[i] && sp < LINK_SPEEDS)
				count[i][sp]++;
		uint8_t bw;
		unsigned bs;
		fabric_link_best(f, p, &bw, &bs);
		uint8_t ew =
		    mad_link_width_widest(a->pi.link_width_enabled & b->pi.link_width_enabled &
		                          a->width_cap & b->width_cap);
		unsigned es = LINK_SPEEDS;
		uint16_t em = mad_link_speeds_enabled(&a->pi) & mad_link_speeds_enabled(&b->pi) &
		              a->speed_cap & b->speed_cap;
		for (unsigned i = 0; i < LINK_SPEEDS; i++)
			if (em & (1u << i))
				es = i;
		bool below_best = mad_link_lanes(w) < mad_link_lanes(bw) || sp < bs;
		if (!below_best)
			continue;
		bool below_enabled =
		    mad_link_lanes(w) < mad_link_lanes(ew) || (es < LINK_SPEEDS && sp < es);
		char now[16], could[16];
		rate_text(w, sp, now, sizeof(now));
		rate_text(bw, bs, could, sizeof(could));
		char *ex = below_enabled ? r->slow_example : r->disabled_example;
		if (below_enabled)
			r->links_slow++;
		else
			r->links_disabled_speed++;
		if (!ex[0])
			snprintf(ex, sizeof(r->slow_example),
			         "\"%s\"/%u-\"%s\"/%u runs %s, both ends %s",
			         fs_node_of(f, p)->name, a->num, fs_node_of(f, a->peer)->name,
			         b->num, now, could);
	}
	size_t off = 0;
	for (unsigned i = 0; i < 5; i++)
		for (unsigned sp = 0; sp < LINK_SPEEDS; sp++)
			if (count[i][sp] && off < sizeof(r->link_rates)) {
				char t[16];
				off += (size_t)snprintf(
				    r->link_rates + off, sizeof(r->link_rates) - off, "%s%s %u",
				    off ? ", " : "", rate_text(widths[i], sp, t, sizeof(t)),
				    count[i][sp]);
			}
}

/* Does switch sw's LFT chain lead dlid to port dst (the physical port behind a vport)? */
static bool lft_reaches(const struct fabric *f, uint32_t sw, uint16_t dlid, uint32_t dst)
{
	uint32_t node = f->sws[sw].node;
	for (unsigned hops = 0; hops < 64; hops++) {
		const struct fs_switch *s = &f->sws[f->nodes[node].sw];
		uint8_t out = dlid < s->lft_size ? s->lft[dlid] : 0xff;
		uint32_t p = fabric_port(f, node, out);
		if (out == 0 || p == FS_NONE || !fabric_link_up(f, p))
			return false;
		uint32_t peer = f->ports[p].peer;
		if (peer == dst)
			return true;
		node = f->ports[peer].node;
		if (!fs_is_switch(f, node))
			return false;
	}
	return false;
}

/* VFs: each up (ACTIVE), and a vport's own LID held by it alone and routed to its port from
 * every switch. */
static void check_vports(const struct fabric *f, struct verify_report *r, unsigned max)
{
	for (uint32_t p = 0; p < f->nports; p++) {
		const struct fs_port *pt = &f->ports[p];
		const struct fs_node *n = fs_node_of(f, p);
		if (!pt->vports || !n->present || !fabric_link_up(f, p))
			continue;
		for (unsigned i = 0; i < pt->vport_cap; i++) {
			const struct fs_vport *v = &pt->vports[i];
			if (v->state == PORT_STATE_DOWN || (i == 0 && !pt->virt_enable))
				continue;
			r->vports++;
			uint8_t st = fabric_vport_state(f, p, i);
			if (st == PORT_STATE_ACTIVE)
				r->vports_active++;
			else
				issue(r, max, "\"%s\" port %u vport %u is %s%s", n->name, pt->num,
				      i, port_state_str(st),
				      pt->virt_enable ? "" : " (virtualization not enabled)");
			if (!i || !v->lid_required)
				continue;
			r->vport_lids++;
			if (!v->lid || f->lid_port[v->lid] != p || v->lid == pt->pi.lid) {
				issue(r, max, "\"%s\" port %u vport %u: LID %u %s", n->name,
				      pt->num, i, v->lid,
				      v->lid ? "is another port's too" : "not given");
				continue;
			}
			for (uint32_t s = 0; s < f->nsws; s++)
				if (f->nodes[f->sws[s].node].present &&
				    !lft_reaches(f, s, v->lid, p)) {
					if (!r->vport_lids_unreached++)
						issue(r, max,
						      "vport LID %u (\"%s\" port %u vport %u) is "
						      "not routed to its port from \"%s\"",
						      v->lid, n->name, pt->num, i,
						      f->nodes[f->sws[s].node].name);
				}
			if (r->vport_lids_unreached)
				r->ok = false;
		}
	}
}

void verify_run(const struct fabric *f, const struct verify_opts *opts, struct verify_report *r)
{
	struct verify_opts o = opts ? *opts : (struct verify_opts){0};
	if (!o.max_issues)
		o.max_issues = 20;
	memset(r, 0, sizeof(*r));
	r->ok = true;
	struct ctx c = {.f = f, .o = &o, .r = r, .bfs_from = FS_NONE};

	for (uint32_t p = 0; p < f->nports; p++) {
		const struct fs_port *port = &f->ports[p];
		if (port->peer == FS_NONE || !fabric_link_up(f, p))
			continue;
		r->ports_linked++;
		if (port->pi.port_state == PORT_STATE_ACTIVE) {
			r->ports_active++;
		} else {
			issue(r, o.max_issues, "\"%s\" port %u is %s", fs_node_of(f, p)->name,
			      port->num, port_state_str(port->pi.port_state));
		}
	}
	link_speeds(f, r);
	check_vports(f, r, o.max_issues);
	collect_endpoints(&c);
	if (o.path_sl) {
		char why[512];
		if (load_path_sl(&c, o.path_sl, why, sizeof(why)) < 0) {
			issue(r, UINT32_MAX, "path SLs: %s", why);
			free(c.lid_row);
			c.lid_row = NULL;
		}
	}

	c.dist = malloc(sizeof(uint16_t) * (f->nsws + 1));
	c.down = calloc(f->nsws + 1, 1);
	c.bfs = malloc(sizeof(uint16_t) * (f->nsws + 1));
	c.queue = malloc(sizeof(uint32_t) * (f->nsws + 1));
	c.nsrc = calloc(f->nsws + 1, sizeof(uint32_t));
	c.load = calloc(f->nports, sizeof(uint64_t));
	c.load_base = calloc(f->nports, sizeof(uint64_t));
	c.stamp = calloc((size_t)f->nports * 16, sizeof(uint32_t));
	for (uint32_t i = 0; i < c.nep; i++)
		if (c.ep[i].sw != FS_NONE &&
		    (o.all || !fs_is_switch(f, f->ports[c.ep[i].port].node)))
			c.nsrc[c.ep[i].sw]++;
	apm_setup(&c);

	uint64_t hop_sum = 0, base_hop_sum = 0;
	uint32_t lid_index = 0;
	for (uint32_t di = 0; di < c.nep; di++) {
		const struct endpoint *dst = &c.ep[di];
		if (!dst->lid || dst->sw == FS_NONE)
			continue;
		bfs_to(&c, dst->sw);
		for (uint32_t lid = dst->lid;
		     lid < dst->lid + (1u << dst->lmc) && lid < FS_MAX_UCAST; lid++) {
			if (c.lid_ep[lid] != di)
				continue; /* a duplicate: reported already */
			for (uint32_t s = 0; s < f->nsws; s++)
				c.dist[s] = UNKNOWN;
			unsigned bad_here = 0;
			for (uint32_t si = 0; si < c.nep; si++) {
				const struct endpoint *src = &c.ep[si];
				if (si == di || src->sw == FS_NONE)
					continue;
				r->pairs++;
				bool from_ca = !fs_is_switch(f, f->ports[src->port].node);
				uint16_t d = lft_dist(&c, src->sw, (uint16_t)lid, dst);
				if (d == FAIL) {
					r->pairs_unreached++;
					r->pairs_unreached_down += c.last_down;
					if (bad_here++ < 2)
						issue(r, o.max_issues,
						      "\"%s\" port %u cannot reach LID %u "
						      "(\"%s\")",
						      fs_node_of(f, src->port)->name,
						      f->ports[src->port].num, lid,
						      fs_node_of(f, dst->port)->name);
					continue;
				}
				r->pairs_reached++;
				unsigned hops = d + from_ca;
				unsigned minimal = c.bfs[src->sw] + from_ca +
				                   !fs_is_switch(f, f->ports[dst->port].node);
				if (hops > minimal)
					r->pairs_nonminimal++;
				hop_sum += hops;
				if (lid == dst->lid) {
					r->base_pairs++;
					r->base_nonminimal += hops > minimal;
					base_hop_sum += hops;
				}
				if (hops > r->hops_max)
					r->hops_max = hops;
			}
			/* make sure every switch's distance is known for the balance pass */
			for (uint32_t s = 0; s < f->nsws; s++)
				if (c.dist[s] == UNKNOWN && f->nodes[f->sws[s].node].present)
					lft_dist(&c, s, (uint16_t)lid, dst);
			if (o.all || !fs_is_switch(f, f->ports[dst->port].node)) {
				balance_lid(&c, (uint16_t)lid, dst, lid == dst->lid);
				cdg_lid(&c, (uint16_t)lid, ++lid_index);
			}
		}
		apm_dest(&c, di);
	}
	apm_finish(&c);
	if (r->pairs_reached)
		r->hops_mean = (double)hop_sum / (double)r->pairs_reached;
	if (r->base_pairs)
		r->base_hops_mean = (double)base_hop_sum / (double)r->base_pairs;
	cdg_cycles(&c);

	shift_permutations(&c);

	/* balance over switch-to-switch links */
	uint64_t sum = 0, base_sum = 0, nlinks = 0;
	r->link_routes_min = UINT64_MAX;
	for (uint32_t p = 0; p < f->nports; p++) {
		const struct fs_port *port = &f->ports[p];
		if (!fs_is_switch(f, port->node) || port->num == 0 || !active_link(f, p) ||
		    !fs_is_switch(f, f->ports[port->peer].node))
			continue;
		nlinks++;
		sum += c.load[p];
		base_sum += c.load_base[p];
		if (c.load_base[p] > r->base_link_max)
			r->base_link_max = c.load_base[p];
		if (c.load[p] < r->link_routes_min)
			r->link_routes_min = c.load[p];
		if (c.load[p] >= r->link_routes_max) {
			r->link_routes_max = c.load[p];
			snprintf(r->worst_link, sizeof(r->worst_link), "\"%s\"/%u -> \"%s\"/%u",
			         fs_node_of(f, p)->name, port->num, fs_node_of(f, port->peer)->name,
			         f->ports[port->peer].num);
		}
	}
	if (!nlinks)
		r->link_routes_min = 0;
	else
		r->link_routes_mean = (double)sum / (double)nlinks;
	if (nlinks)
		r->base_link_mean = (double)base_sum / (double)nlinks;

	/* multicast: every MLID's MFT tree reaches each member port once, loop-free */
	uint32_t *visit = calloc(f->nsws, sizeof(uint32_t));
	uint32_t *got = calloc(f->nports, sizeof(uint32_t));
	uint32_t gen = 0;
	for (unsigned m = 0; m < FS_MFT_CAP; m++) {
		/* members: endpoints whose attachment port's bit is set */
		uint32_t members[256], nm = 0;
		bool any = false;
		for (uint32_t s = 0; s < f->nsws; s++) {
			const struct fs_switch *sw = &f->sws[s];
			if (!sw->mft || !f->nodes[sw->node].present)
				continue;
			for (unsigned pos = 0; pos < sw->positions; pos++)
				if (sw->mft[m * sw->positions + pos])
					any = true;
		}
		if (!any)
			continue;
		r->mlids++;
		for (uint32_t i = 0; i < c.nep && nm < 256; i++) {
			const struct endpoint *e = &c.ep[i];
			if (e->sw == FS_NONE)
				continue;
			const struct fs_switch *sw = &f->sws[e->sw];
			unsigned bit = f->ports[e->sw_in].num;
			if (sw->mft && (sw->mft[m * sw->positions + bit / 16] >> (bit % 16)) & 1)
				members[nm++] = i;
		}
		r->mlid_members += nm;
		bool bad = false;
		for (uint32_t k = 0; k < nm && k < 16 && !bad; k++) {
			/* flood from member k */
			gen++;
			const struct endpoint *src = &c.ep[members[k]];
			uint32_t head = 0, tail = 0;
			uint32_t *qs = c.queue;
			uint32_t *qin = malloc(sizeof(uint32_t) * (f->nsws + 1));
			qs[tail] = src->sw;
			qin[tail++] = src->sw_in;
			visit[src->sw] = gen;
			while (head < tail && !bad) {
				uint32_t s = qs[head], in = qin[head++];
				const struct fs_switch *sw = &f->sws[s];
				const struct fs_node *n = &f->nodes[sw->node];
				for (unsigned num = 0; num <= n->nports; num++) {
					uint32_t p = n->first_port + num;
					if (p == in || !sw->mft ||
					    !((sw->mft[m * sw->positions + num / 16] >>
					       (num % 16)) &
					      1))
						continue;
					if (num == 0) {
						if (p != src->port &&
						    deliver_once(r, &o, got, p, gen, m))
							bad = true;
						continue;
					}
					if (!active_link(f, p))
						continue;
					uint32_t peer = f->ports[p].peer;
					uint32_t pn = f->ports[peer].node;
					if (!fs_is_switch(f, pn)) {
						if (peer != src->port &&
						    deliver_once(r, &o, got, peer, gen, m))
							bad = true;
						continue;
					}
					uint32_t s2 = switch_of(f, pn);
					if (visit[s2] == gen) {
						bad = true;
						issue(r, o.max_issues,
						      "MLID 0x%04x: loop or second path at "
						      "\"%s\"",
						      FS_MCAST_BASE + m, f->nodes[sw->node].name);
						break;
					}
					visit[s2] = gen;
					qs[tail] = s2;
					qin[tail++] = peer;
				}
			}
			free(qin);
			for (uint32_t j = 0; j < nm && !bad; j++) {
				const struct endpoint *e = &c.ep[members[j]];
				if (j != k && got[e->port] != gen) {
					bad = true;
					issue(r, o.max_issues,
					      "MLID 0x%04x: member \"%s\" not reached from "
					      "\"%s\"",
					      FS_MCAST_BASE + m, fs_node_of(f, e->port)->name,
					      fs_node_of(f, src->port)->name);
				}
			}
		}
		if (bad)
			r->mlids_bad++;
	}
	free(visit);
	free(got);

	if (r->pairs_unreached || r->lids_zero || r->lids_duplicate || r->lids_misaligned ||
	    r->credit_loop || r->mlids_bad || r->ports_active < r->ports_linked || r->vl_unrun)
		r->ok = false;
	free(c.ep);
	free(c.lid_ep);
	free(c.dist);
	free(c.down);
	free(c.bfs);
	free(c.queue);
	free(c.nsrc);
	free(c.load);
	free(c.load_base);
	free(c.stamp);
	free(c.vl_seen);
	free(c.edges);
	free(c.sl_rows);
	free(c.lid_row);
}

/* "0-2,5" */
static void mask_str(uint16_t m, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < 16 && off < len; i++) {
		if (!(m & (1u << i)))
			continue;
		unsigned j = i;
		while (j + 1 < 16 && (m & (1u << (j + 1))))
			j++;
		off += (size_t)snprintf(buf + off, len - off, j > i ? "%s%u-%u" : "%s%u",
		                        off ? "," : "", i, j);
		i = j;
	}
	if (!off)
		snprintf(buf, len, "none");
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void apm_print(const struct verify_report *r, FILE *out)
{
	fprintf(out,
	        "APM:       LMC %u, %" PRIu64 " pairs on different switches: %.1f%% with a "
	        "link-disjoint alternate, %.1f%% switch-disjoint, %.2f routes per pair\n",
	        r->apm_lmc, r->apm_pairs, pct(r->apm_link_disjoint, r->apm_pairs),
	        pct(r->apm_switch_disjoint, r->apm_pairs), r->apm_routes_mean);
	fprintf(out,
	        "           %" PRIu64 " pairs no single link failure parts (no bridge between "
	        "their switches): %.1f%% of them with a link-disjoint alternate\n",
	        r->apm_possible, pct(r->apm_possible_link_disjoint, r->apm_possible));
	fprintf(out,
	        "           primary routes (base LIDs): %" PRIu64 " not minimal, hops mean %.2f, "
	        "routes per switch link max %" PRIu64 " mean %.1f\n",
	        r->base_nonminimal, r->base_hops_mean, r->base_link_max, r->base_link_mean);
	if (r->apm_spof_pairs)
		fprintf(out, "           worst link: %s on every route of %" PRIu64 " pairs\n",
		        r->apm_spof_link, r->apm_spof_pairs);
	if (r->apm_example[0])
		fprintf(out, "           e.g. %s\n", r->apm_example);
}

void verify_print(const struct verify_report *r, FILE *out)
{
	fprintf(out, "ports:     %u of %u linked ports ACTIVE\n", r->ports_active, r->ports_linked);
	fprintf(out, "links:     %u (%s); %u slower than both ends could run%s%s%s\n", r->links,
	        r->link_rates[0] ? r->link_rates : "none", r->links_slow,
	        r->slow_example[0] ? " (" : "", r->slow_example, r->slow_example[0] ? ")" : "");
	if (r->links_disabled_speed)
		fprintf(out, "           %u slower because an end does not enable it (%s)\n",
		        r->links_disabled_speed, r->disabled_example);
	fprintf(out, "LIDs:      %u endpoints, %u without LID, %u duplicate, %u misaligned\n",
	        r->endpoints, r->lids_zero, r->lids_duplicate, r->lids_misaligned);
	fprintf(out,
	        "unicast:   %" PRIu64 " pairs, %" PRIu64 " reached, %" PRIu64
	        " unreachable (%" PRIu64 " at a link that is down), %" PRIu64
	        " not minimal, hops max %u mean %.2f\n",
	        r->pairs, r->pairs_reached, r->pairs_unreached, r->pairs_unreached_down,
	        r->pairs_nonminimal, r->hops_max, r->hops_mean);
	fprintf(out, "credit:    %" PRIu64 " channels, %" PRIu64 " dependencies, %s\n",
	        r->cdg_channels, r->cdg_edges, r->credit_loop ? "CREDIT LOOP" : "no credit loop");
	char sls[64], vls[64];
	mask_str(r->sls_used, sls, sizeof(sls));
	mask_str(r->vls_used, vls, sizeof(vls));
	fprintf(out,
	        "VLs:       SLs %s on VLs %s; %" PRIu64
	        " channels on a VL their link does not run\n",
	        sls, vls, r->vl_unrun);
	if (r->credit_loop)
		fprintf(out, "           cycle: %s\n", r->cycle);
	fprintf(out, "multicast: %u MLIDs, %" PRIu64 " member ports, %u bad\n", r->mlids,
	        r->mlid_members, r->mlids_bad);
	fprintf(out,
	        "balance:   routes per switch link min %" PRIu64 " max %" PRIu64
	        " mean %.1f, worst %s\n",
	        r->link_routes_min, r->link_routes_max, r->link_routes_mean,
	        r->worst_link[0] ? r->worst_link : "-");
	if (r->shift_checked)
		fprintf(out,
		        "shift:     worst link load %u over %u shift permutations of %u hosts%s\n",
		        r->shift_worst, r->shift_hosts - 1, r->shift_hosts,
		        r->shift_worst <= 1 ? " (every one free of congestion)" : "");
	if (r->apm_checked)
		apm_print(r, out);
	if (r->vports)
		fprintf(out,
		        "vports:    %u, %u ACTIVE; %u with a LID of their own, %" PRIu64
		        " switch routes to them missing\n",
		        r->vports, r->vports_active, r->vport_lids, r->vport_lids_unreached);
	for (unsigned i = 0; i < r->nissues; i++)
		fprintf(out, "problem:   %s\n", r->issues[i]);
	if (r->issues_dropped)
		fprintf(out, "problem:   ... and %u more\n", r->issues_dropped);
	fprintf(out, "verdict:   %s\n", r->ok ? "PASS" : "FAIL");
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

void verify_print_json(const struct verify_report *r, FILE *out)
{
	fprintf(out,
	        "{\"ok\":%s,\"ports\":{\"linked\":%u,\"active\":%u},"
	        "\"links\":{\"count\":%u,\"slow\":%u,\"disabled_speed\":%u},"
	        "\"lids\":{\"endpoints\":%u,\"zero\":%u,\"duplicate\":%u,\"misaligned\":%u},"
	        "\"unicast\":{\"pairs\":%" PRIu64 ",\"reached\":%" PRIu64
	        ",\"unreachable\":%" PRIu64 ",\"unreachable_link_down\":%" PRIu64
	        ",\"nonminimal\":%" PRIu64 ",\"hops_max\":%u,\"hops_mean\":%.3f},"
	        "\"vl_unrun\":%" PRIu64 ",\"sls_used\":%u,\"vls_used\":%u,"
	        "\"credit_loops\":{\"channels\":%" PRIu64 ",\"dependencies\":%" PRIu64
	        ",\"loop\":%s,\"cycle\":",
	        r->ok ? "true" : "false", r->ports_linked, r->ports_active, r->links, r->links_slow,
	        r->links_disabled_speed, r->endpoints, r->lids_zero, r->lids_duplicate,
	        r->lids_misaligned, r->pairs, r->pairs_reached, r->pairs_unreached,
	        r->pairs_unreached_down, r->pairs_nonminimal, r->hops_max, r->hops_mean,
	        r->vl_unrun, r->sls_used, r->vls_used, r->cdg_channels, r->cdg_edges,
	        r->credit_loop ? "true" : "false");
	json_str(out, r->cycle);
	fprintf(out, "},\"shift\":{\"checked\":%s,\"hosts\":%u,\"worst\":%u,\"worst_k\":%u",
	        r->shift_checked ? "true" : "false", r->shift_hosts, r->shift_worst,
	        r->shift_worst_k);
	fprintf(out,
	        "},\"multicast\":{\"mlids\":%u,\"members\":%" PRIu64 ",\"bad\":%u},"
	        "\"balance\":{\"min\":%" PRIu64 ",\"max\":%" PRIu64 ",\"mean\":%.2f,\"worst\":",
	        r->mlids, r->mlid_members, r->mlids_bad, r->link_routes_min, r->link_routes_max,
	        r->link_routes_mean);
	json_str(out, r->worst_link);
	fprintf(out,
	        "},\"apm\":{\"checked\":%s,\"lmc\":%u,\"pairs\":%" PRIu64
	        ",\"link_disjoint\":%" PRIu64 ",\"switch_disjoint\":%" PRIu64
	        ",\"link_disjoint_pct\":%.2f,\"switch_disjoint_pct\":%.2f,\"routes_mean\":%.3f,"
	        "\"spof_pairs\":%" PRIu64 ",\"spof_link\":",
	        r->apm_checked ? "true" : "false", r->apm_lmc, r->apm_pairs, r->apm_link_disjoint,
	        r->apm_switch_disjoint, pct(r->apm_link_disjoint, r->apm_pairs),
	        pct(r->apm_switch_disjoint, r->apm_pairs), r->apm_routes_mean, r->apm_spof_pairs);
	json_str(out, r->apm_spof_link);
	fputs(",\"example\":", out);
	json_str(out, r->apm_example);
	fprintf(out, ",\"possible\":%" PRIu64 ",\"possible_link_disjoint_pct\":%.2f",
	        r->apm_possible, pct(r->apm_possible_link_disjoint, r->apm_possible));
	fprintf(out,
	        ",\"primary\":{\"pairs\":%" PRIu64 ",\"nonminimal\":%" PRIu64
	        ",\"hops_mean\":%.3f,\"link_routes_max\":%" PRIu64 ",\"link_routes_mean\":%.2f}",
	        r->base_pairs, r->base_nonminimal, r->base_hops_mean, r->base_link_max,
	        r->base_link_mean);
	fprintf(out,
	        "},\"vports\":{\"count\":%u,\"active\":%u,\"own_lids\":%u,"
	        "\"lid_routes_missing\":%" PRIu64,
	        r->vports, r->vports_active, r->vport_lids, r->vport_lids_unreached);
	fputs("},\"issues\":[", out);
	for (unsigned i = 0; i < r->nissues; i++) {
		if (i)
			fputc(',', out);
		json_str(out, r->issues[i]);
	}
	fputs("]}\n", out);
}

void verify_report_free(struct verify_report *r)
{
	for (unsigned i = 0; i < r->nissues; i++)
		free(r->issues[i]);
	free(r->issues);
	r->issues = NULL;
	r->nissues = 0;
}
