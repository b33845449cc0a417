#include "topo_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

static uint32_t add(struct topo *t, uint8_t type, unsigned nports)
{
	struct mad_node_info ni = {
	    .base_version = 1,
	    .class_version = 1,
	    .node_type = type,
	    .num_ports = (uint8_t)nports,
	    .node_guid = 0x1000 + (uint64_t)t->nnodes * 2,
	    .partition_cap = 32,
	};
	ni.port_guid = type == NODE_TYPE_SWITCH ? ni.node_guid : ni.node_guid + 1;
	uint32_t n = topo_add_node(t, &ni);
	struct topo_node *node = &t->nodes[n];
	snprintf(node->desc, sizeof(node->desc), "%s-%u", type == NODE_TYPE_SWITCH ? "sw" : "host",
	         n);
	node->present = true;
	for (unsigned p = type == NODE_TYPE_SWITCH ? 0 : 1; p <= nports; p++) {
		struct topo_port *port = &t->ports[node->first_port + p];
		port->known = true;
		port->pi.port_state = p == 0 ? PORT_STATE_ACTIVE : PORT_STATE_DOWN;
		port->pi.local_port_num = (uint8_t)p;
		if (type != NODE_TYPE_SWITCH) {
			port->guid = ni.port_guid;
			u64map_put(&t->by_port_guid, port->guid, node->first_port + p);
		}
	}
	if (type == NODE_TYPE_SWITCH)
		t->sws[node->sw].si.partition_enforcement_cap = 32;
	return n;
}

uint32_t fix_switch(struct topo *t, unsigned nports)
{
	return add(t, NODE_TYPE_SWITCH, nports);
}

uint32_t fix_ca(struct topo *t)
{
	return add(t, NODE_TYPE_CA, 1);
}

void fix_link(struct topo *t, uint32_t a, unsigned pa, uint32_t b, unsigned pb)
{
	uint32_t x = topo_port(t, a, pa), y = topo_port(t, b, pb);
	topo_link(t, x, y);
	t->ports[x].pi.port_state = t->ports[y].pi.port_state = PORT_STATE_ACTIVE;
	/* VL0-7, as today's switches and HCAs */
	t->ports[x].pi.vl_cap = t->ports[y].pi.vl_cap = 4;
}

unsigned fix_free_port(const struct topo *t, uint32_t node)
{
	const struct topo_node *n = &t->nodes[node];
	for (unsigned p = 1; p <= n->nports; p++)
		if (t->ports[n->first_port + p].peer == TOPO_NONE)
			return p;
	return 0;
}

void fix_connect(struct topo *t, uint32_t a, uint32_t b)
{
	fix_link(t, a, fix_free_port(t, a), b, fix_free_port(t, b));
}

void fix_finish(struct topo *t, uint32_t sm, const struct ibsmd_config *cfg)
{
	t->sm_node = sm;
	t->sm_port = topo_port(t, sm, 1);
	topo_update_paths(t, true);
	uint16_t lid = 1;
	for (uint32_t p = 0; p < t->nports; p++)
		t->ports[p].lid = topo_port_endpoint(t, p) ? lid++ : 0;
	topo_rebuild_lids(t);
	struct ibsmd_config def;
	if (!cfg) {
		config_defaults(&def);
		cfg = &def;
	}
	topo_pkeys_update(t, cfg);
	t->stable = true;
	t->generation++;
}

static void hosts_on(struct topo *t, uint32_t sw, unsigned hosts, uint32_t *first)
{
	for (unsigned h = 0; h < hosts; h++) {
		uint32_t c = fix_ca(t);
		if (*first == TOPO_NONE)
			*first = c;
		fix_connect(t, sw, c);
	}
}

uint32_t fix_ring(struct topo *t, unsigned switches, unsigned hosts)
{
	uint32_t base = t->nnodes, first = TOPO_NONE;
	for (unsigned i = 0; i < switches; i++)
		fix_switch(t, 2 + hosts);
	for (unsigned i = 0; i < switches; i++)
		fix_connect(t, base + i, base + (i + 1) % switches);
	for (unsigned i = 0; i < switches; i++)
		hosts_on(t, base + i, hosts, &first);
	return first;
}

uint32_t fix_fattree(struct topo *t, unsigned leaves, unsigned spines, unsigned hosts)
{
	uint32_t first = TOPO_NONE, lbase = t->nnodes;
	for (unsigned i = 0; i < leaves; i++)
		fix_switch(t, spines + hosts);
	uint32_t sbase = t->nnodes;
	for (unsigned i = 0; i < spines; i++)
		fix_switch(t, leaves);
	for (unsigned l = 0; l < leaves; l++)
		for (unsigned s = 0; s < spines; s++)
			fix_connect(t, lbase + l, sbase + s);
	for (unsigned l = 0; l < leaves; l++)
		hosts_on(t, lbase + l, hosts, &first);
	return first;
}

uint32_t fix_fattree3(struct topo *t, unsigned k)
{
	/* as fabricsim's generator: k pods of k/2 leaves and k/2 aggregation switches,
	 * (k/2)^2 cores; aggregation switch a of every pod reaches cores a*k/2 .. */
	unsigned half = k / 2;
	uint32_t first = TOPO_NONE, cbase = t->nnodes;
	for (unsigned c = 0; c < half * half; c++)
		fix_switch(t, k);
	uint32_t *leaves = calloc(k * half, sizeof(uint32_t));
	for (unsigned p = 0; p < k; p++) {
		uint32_t abase = t->nnodes;
		for (unsigned a = 0; a < half; a++)
			fix_switch(t, k);
		for (unsigned l = 0; l < half; l++) {
			leaves[p * half + l] = fix_switch(t, k);
			for (unsigned a = 0; a < half; a++)
				fix_connect(t, leaves[p * half + l], abase + a);
		}
		for (unsigned a = 0; a < half; a++)
			for (unsigned c = 0; c < half; c++)
				fix_connect(t, abase + a, cbase + a * half + c);
	}
	for (unsigned i = 0; i < k * half; i++)
		hosts_on(t, leaves[i], half, &first);
	free(leaves);
	return first;
}

uint32_t fix_torus(struct topo *t, unsigned x, unsigned y, unsigned hosts)
{
	uint32_t first = TOPO_NONE, base = t->nnodes;
	for (unsigned i = 0; i < x * y; i++)
		fix_switch(t, 4 + hosts);
	for (unsigned j = 0; j < y; j++)
		for (unsigned i = 0; i < x; i++) {
			uint32_t s = base + j * x + i;
			if (x > 2 || i + 1 < x)
				fix_connect(t, s, base + j * x + (i + 1) % x);
			if (y > 2 || j + 1 < y)
				fix_connect(t, s, base + ((j + 1) % y) * x + i);
		}
	for (unsigned i = 0; i < x * y; i++)
		hosts_on(t, base + i, hosts, &first);
	return first;
}

uint32_t fix_grid(struct topo *t, const unsigned *n, unsigned ndims, bool torus, unsigned hosts)
{
	uint32_t first = TOPO_NONE, base = t->nnodes, total = 1;
	for (unsigned d = 0; d < ndims; d++)
		total *= n[d];
	for (uint32_t i = 0; i < total; i++)
		fix_switch(t, hosts + 2 * ndims);
	for (uint32_t i = 0; i < total; i++) {
		unsigned c[3] = {0}, r = i;
		for (unsigned d = 0; d < ndims; d++) {
			c[d] = r % n[d];
			r /= n[d];
		}
		for (unsigned d = 0, stride = 1; d < ndims; stride *= n[d], d++) {
			if (c[d] + 1 == n[d] && (!torus || n[d] <= 2))
				continue;
			uint32_t j = c[d] + 1 == n[d] ? i - c[d] * stride : i + stride;
			fix_link(t, base + i, hosts + 2 * d + 2, base + j, hosts + 2 * d + 1);
		}
	}
	for (uint32_t i = 0; i < total; i++)
		hosts_on(t, base + i, hosts, &first);
	return first;
}

/* ---- the checker ---- */

static bool cdg_has_cycle(uint32_t nch, const uint32_t *start, const uint32_t *to)
{
	/* iterative DFS, colours 0 white, 1 on the stack, 2 done */
	uint8_t *col = calloc(nch, 1);
	uint32_t *stack = malloc(sizeof(uint32_t) * (nch + 1)),
	         *pos = malloc(sizeof(uint32_t) * nch);
	bool cycle = false;
	for (uint32_t r = 0; r < nch && !cycle; r++) {
		if (col[r])
			continue;
		uint32_t sp = 0;
		stack[sp++] = r;
		col[r] = 1;
		pos[r] = start[r];
		while (sp && !cycle) {
			uint32_t c = stack[sp - 1];
			if (pos[c] == start[c + 1]) {
				col[c] = 2;
				sp--;
				continue;
			}
			uint32_t n = to[pos[c]++];
			if (col[n] == 1)
				cycle = true;
			else if (!col[n]) {
				col[n] = 1;
				pos[n] = start[n];
				stack[sp++] = n;
			}
		}
	}
	free(col);
	free(stack);
	free(pos);
	return cycle;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void fix_check_routes(const struct topo *t, struct fix_routes *out)
{
	fix_check_routes_sl(t, NULL, NULL, out);
}

void fix_check_routes_sl(const struct topo *t, fix_sl_fn sl_of, void *arg, struct fix_routes *out)
{
	fix_check_routes_vl(t, sl_of, NULL, arg, out);
}

void fix_check_routes_vl(const struct topo *t, fix_sl_fn sl_of, fix_vl_fn vl_of, void *arg,
                         struct fix_routes *out)
{
	memset(out, 0, sizeof(*out));
	uint32_t ns = t->nsws;
	/* switch-to-switch hop counts, for "shortest" */
	uint16_t *dist = malloc(sizeof(uint16_t) * ns * ns);
	uint32_t *q = malloc(sizeof(uint32_t) * (ns + 1));
	for (uint32_t a = 0; a < ns; a++) {
		uint16_t *d = dist + (size_t)a * ns;
		for (uint32_t b = 0; b < ns; b++)
			d[b] = UINT16_MAX;
		uint32_t h = 0, tl = 0;
		d[a] = 0;
		q[tl++] = a;
		while (h < tl) {
			uint32_t s = q[h++];
			const struct topo_node *n = &t->nodes[t->sws[s].node];
			for (unsigned p = 1; p <= n->nports; p++) {
				uint32_t peer = t->ports[n->first_port + p].peer;
				if (peer == TOPO_NONE || !topo_is_switch(t, t->ports[peer].node))
					continue;
				uint32_t m = t->nodes[t->ports[peer].node].sw;
				if (d[m] == UINT16_MAX) {
					d[m] = (uint16_t)(d[s] + 1);
					q[tl++] = m;
				}
			}
		}
	}
	VEC(uint64_t) deps = {0};
	for (uint32_t lid = 1; lid < TOPO_LID_COUNT; lid++) {
		uint32_t owner = t->lid_port[lid];
		if (owner == TOPO_NONE)
			continue;
		uint32_t on = t->ports[owner].node;
		uint32_t dsw = topo_is_switch(t, on) ? t->nodes[on].sw
		               : t->ports[owner].peer != TOPO_NONE
		                   ? t->nodes[t->ports[t->ports[owner].peer].node].sw
		                   : TOPO_NONE;
		for (uint32_t s0 = 0; s0 < ns; s0++) {
			out->pairs++;
			uint32_t s = s0, hops = 0;
			bool ok = false;
			while (hops <= ns) {
				const struct topo_switch *sw = &t->sws[s];
				const struct topo_node *n = &t->nodes[sw->node];
				uint8_t o = lid < sw->lft_size ? sw->lft[lid] : 0xff;
				if (o == 0) {
					ok = owner == n->first_port;
					break;
				}
				if (o == 0xff || o > n->nports)
					break;
				uint32_t ch = n->first_port + o, peer = t->ports[ch].peer;
				if (peer == TOPO_NONE)
					break;
				if (!topo_is_switch(t, t->ports[peer].node)) {
					ok = peer == owner;
					break;
				}
				s = t->nodes[t->ports[peer].node].sw;
				hops++;
			}
			if (!t->nodes[t->sws[s0].node].present) {
				out->pairs--; /* a switch that left routes nothing */
				continue;
			}
			if (!ok) {
				if (hops > ns)
					out->loops++;
				else
					out->unreachable++;
				if (!out->first_problem[0])
					snprintf(out->first_problem, sizeof(out->first_problem),
					         "%s cannot reach LID %u",
					         t->nodes[t->sws[s0].node].desc, lid);
			} else if (dsw != TOPO_NONE && hops > dist[(size_t)s0 * ns + dsw]) {
				out->longer_than_shortest++;
			}
		}
	}
	/* The channel dependency graph of the traffic that can hold credits: from every CA
	 * port (its link into its switch is the first channel held) to every LID, as fabricsim
	 * verify and ibdmchk judge it; switches' own traffic is management on VL15, outside
	 * credit flow control. A packet holding channel a and waiting for b adds a -> b.
	 * Channels are (port, VL): by vl_of, else each SL a VL of its own. */
	for (uint32_t src = 0; src < t->nports; src++) {
		const struct topo_port *sp = &t->ports[src];
		if (topo_is_switch(t, sp->node) || !topo_port_linked(t, src) || !sp->lid ||
		    !topo_is_switch(t, t->ports[sp->peer].node))
			continue;
		for (uint32_t lid = 1; lid < TOPO_LID_COUNT; lid++) {
			if (t->lid_port[lid] == TOPO_NONE || t->lid_port[lid] == src)
				continue;
			uint32_t sl = sl_of ? sl_of(arg, sp->lid, (uint16_t)lid) & 0xf : 0;
			uint32_t held = src * 16 + sl, s = t->nodes[t->ports[sp->peer].node].sw;
			uint8_t in = t->ports[sp->peer].num;
			for (uint32_t hops = 0; hops <= ns; hops++) {
				const struct topo_switch *sw = &t->sws[s];
				const struct topo_node *n = &t->nodes[sw->node];
				uint8_t o = lid < sw->lft_size ? sw->lft[lid] : 0xff;
				if (o == 0 || o == 0xff || o > n->nports)
					break;
				uint32_t ch = n->first_port + o, peer = t->ports[ch].peer;
				if (peer == TOPO_NONE)
					break;
				uint32_t vl = vl_of ? vl_of(arg, s, in, o, (uint8_t)sl) & 0xf : sl;
				uint64_t *e = vec_push(&deps);
				*e = (uint64_t)held << 32 | (ch * 16 + vl);
				if (!topo_is_switch(t, t->ports[peer].node))
					break;
				held = ch * 16 + vl;
				s = t->nodes[t->ports[peer].node].sw;
				in = t->ports[peer].num;
			}
		}
	}
	/* as CSR over port indexes */
	qsort(deps.v, deps.n, sizeof(uint64_t), cmp_u64);
	uint32_t nch = t->nports * 16;
	uint32_t *start = calloc(nch + 2, sizeof(uint32_t));
	uint32_t *to = malloc(sizeof(uint32_t) * (deps.n + 1));
	uint32_t m = 0;
	for (uint32_t i = 0; i < deps.n; i++) {
		if (i && deps.v[i] == deps.v[i - 1])
			continue;
		start[(deps.v[i] >> 32) + 1]++;
		to[m++] = (uint32_t)deps.v[i];
	}
	for (uint32_t c = 0; c <= nch; c++)
		start[c + 1] += start[c];
	out->credit_loop = cdg_has_cycle(nch, start, to);
	free(start);
	free(to);
	vec_free(&deps);
	free(dist);
	free(q);
}

uint32_t fix_random(struct topo *t, unsigned switches, unsigned radix, unsigned hosts,
                    unsigned extra_links, uint32_t seed)
{
	uint32_t base = t->nnodes, first = TOPO_NONE;
	uint64_t x = seed * 2654435761u + 1;
#define RND() (x = x * 6364136223846793005ull + 1442695040888963407ull, (uint32_t)(x >> 33))
	for (unsigned i = 0; i < switches; i++)
		fix_switch(t, radix);
	/* a random spanning tree keeps it connected; then random links while ports last */
	for (unsigned i = 1; i < switches; i++)
		fix_connect(t, base + i, base + RND() % i);
	for (unsigned k = 0, tries = 0; k < extra_links && tries < extra_links * 20; tries++) {
		uint32_t a = base + RND() % switches, b = base + RND() % switches;
		if (a == b || fix_free_port(t, a) + hosts > radix ||
		    fix_free_port(t, b) + hosts > radix || !fix_free_port(t, a) ||
		    !fix_free_port(t, b))
			continue;
		fix_connect(t, a, b);
		k++;
	}
#undef RND
	for (unsigned i = 0; i < switches; i++)
		hosts_on(t, base + i, hosts, &first);
	return first;
}
