/* Forwarding tables checked from the model. See check.h.
 *
 * Paths from every endpoint of a switch to a LID take the same route through the tables,
 * so each (switch, LID) is walked once and counts for the switch's endpoints. Every endpoint
 * counts for reachability, the CAs' paths alone for credit loops (a switch's own traffic
 * is management on VL15), as fabricsim verify counts them. A dependency
 * is kept per switch as (input port, output port) with a bit per SL layer, as cdg.c keeps
 * them; a layer has a credit loop when its channel graph (a channel is a link in one
 * direction) has a cycle, found by a depth-first search. */
#include "routing/check.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

struct checker {
	const struct routing_ctx *ctx;
	const struct topo *t;
	uint32_t nch;       /* channels: port_base[s] + port */
	uint32_t *peer_sw;  /* per channel: the switch it leads to, NONE: none */
	uint32_t *back;     /* per channel: the channel arriving at this port, NONE: none */
	uint32_t *dep_base; /* per switch: where its (ports + 1)^2 dependencies start */
	uint16_t *deps;     /* per dependency: bit l when layer l has it */
	uint32_t *dst_sw;   /* per LID: the switch its endpoint hangs off, NONE: no endpoint */
	uint8_t *dst_port;  /* ... and the port it hangs off (0: the switch itself) */
};

static unsigned nports(const struct checker *c, uint32_t s)
{
	return c->ctx->port_base[s + 1] - c->ctx->port_base[s] - 1;
}

static int checker_init(struct checker *c, const struct routing_ctx *ctx)
{
	memset(c, 0, sizeof(*c));
	c->ctx = ctx;
	c->t = ctx->t;
	c->nch = ctx->port_base[ctx->nsw];
	c->peer_sw = malloc(sizeof(uint32_t) * (c->nch + 1));
	c->back = malloc(sizeof(uint32_t) * (c->nch + 1));
	c->dep_base = calloc(ctx->nsw + 1, sizeof(uint32_t));
	c->dst_sw = malloc(sizeof(uint32_t) * ((size_t)ctx->max_lid + 1));
	c->dst_port = calloc((size_t)ctx->max_lid + 1, 1);
	if (!c->peer_sw || !c->back || !c->dep_base || !c->dst_sw || !c->dst_port)
		return -1;
	for (uint32_t i = 0; i < c->nch; i++)
		c->peer_sw[i] = c->back[i] = NONE;
	for (uint32_t l = 0; l <= ctx->max_lid; l++)
		c->dst_sw[l] = NONE;
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		unsigned np = nports(c, s) + 1;
		c->dep_base[s + 1] = c->dep_base[s] + np * np;
		for (uint32_t e = ctx->adj_start[s]; e < ctx->adj_start[s + 1]; e++)
			c->peer_sw[ctx->port_base[s] + ctx->adj[e].port] = ctx->adj[e].to;
		for (uint32_t d = ctx->dst_start[s]; d < ctx->dst_start[s + 1]; d++) {
			c->dst_sw[ctx->dst[d].lid] = s;
			c->dst_port[ctx->dst[d].lid] = ctx->dst[d].port;
		}
	}
	/* the channel that arrives by each switch port: the peer's, by the model's links */
	for (uint32_t s = 0; s < ctx->nsw; s++) {
		const struct topo_node *n = &c->t->nodes[c->t->sws[s].node];
		for (unsigned p = 1; p <= nports(c, s); p++) {
			uint32_t ch = ctx->port_base[s] + p;
			if (c->peer_sw[ch] == NONE)
				continue;
			uint32_t peer = c->t->ports[n->first_port + p].peer;
			uint32_t nb = c->peer_sw[ch];
			/* the model may have moved on since ctx was built (a link gone or
			 * recabled in a sweep under way): a link it no longer has is none */
			if (peer == TOPO_NONE || c->t->ports[peer].node != c->t->sws[nb].node ||
			    c->t->ports[peer].num > nports(c, nb)) {
				c->peer_sw[ch] = NONE;
				continue;
			}
			c->back[ch] = ctx->port_base[nb] + c->t->ports[peer].num;
		}
	}
	c->deps = calloc((size_t)c->dep_base[ctx->nsw] + 1, sizeof(uint16_t));
	return c->deps ? 0 : -1;
}

static void checker_free(struct checker *c)
{
	free(c->peer_sw);
	free(c->back);
	free(c->dep_base);
	free(c->deps);
	free(c->dst_sw);
	free(c->dst_port);
}

/* Walk from switch s0 to dlid, adding the dependencies to the layers in mask. 1 reached,
 * 0 not, -1 a forwarding loop. */
static int walk(struct checker *c, routing_lft_fn lft, uint32_t s0, uint16_t dlid, uint16_t mask)
{
	uint32_t cur = s0;
	unsigned in = 0; /* the port it came in by (0: it starts here) */
	for (uint32_t hops = 0; hops <= c->ctx->nsw; hops++) {
		uint8_t out = lft(c->t, cur, dlid);
		if (out == 0xff || out > nports(c, cur))
			return 0;
		if (c->dst_sw[dlid] == cur && c->dst_port[dlid] == out)
			return 1;
		uint32_t ch = c->ctx->port_base[cur] + out;
		uint32_t next = c->peer_sw[ch];
		if (next == NONE)
			return 0; /* a port with no switch behind it, not the destination's */
		if (in)
			c->deps[c->dep_base[cur] + in * (nports(c, cur) + 1) + out] |= mask;
		in = c->back[ch] - c->ctx->port_base[next]; /* as checker_init found it */
		cur = next;
	}
	return -1;
}

/* Does layer l's channel graph have a cycle? An iterative depth-first search: state 1 on the
 * stack, 2 done. The edges of a channel leading to switch v, arriving by port a, are v's
 * dependencies from a. */
static int cyclic(const struct checker *c, unsigned l, uint8_t *state, uint32_t *stack,
                  uint8_t *next_out)
{
	memset(state, 0, c->nch);
	for (uint32_t root = 0; root < c->nch; root++) {
		if (state[root] || c->peer_sw[root] == NONE)
			continue;
		uint32_t sp = 0;
		stack[sp++] = root;
		state[root] = 1;
		next_out[root] = 0;
		while (sp) {
			uint32_t ch = stack[sp - 1];
			uint32_t v = c->peer_sw[ch];
			/* the port ch arrives by at v */
			unsigned in = (unsigned)(c->back[ch] - c->ctx->port_base[v]);
			unsigned np = nports(c, v) + 1;
			bool pushed = false;
			while (next_out[ch] < np) {
				unsigned b = next_out[ch]++;
				if (!(c->deps[c->dep_base[v] + in * np + b] >> l & 1))
					continue;
				uint32_t nx = c->ctx->port_base[v] + b;
				if (state[nx] == 1)
					return 1;
				if (state[nx] == 0) {
					state[nx] = 1;
					next_out[nx] = 0;
					stack[sp++] = nx;
					pushed = true;
					break;
				}
			}
			if (!pushed) {
				state[ch] = 2;
				sp--;
			}
		}
	}
	return 0;
}

int routing_check(const struct routing_ctx *ctx, routing_lft_fn lft, routing_sl_fn sl, void *sl_arg,
                  struct routing_check *out)
{
	memset(out, 0, sizeof(*out));
	struct checker c;
	if (checker_init(&c, ctx) < 0) {
		checker_free(&c);
		return -1;
	}
	uint32_t ndst = ctx->dst_start[ctx->nsw];
	uint16_t *src = malloc(sizeof(uint16_t) * (ndst + 1)); /* a switch's endpoints' base LIDs */
	if (!src) {
		checker_free(&c);
		return -1;
	}
	for (uint32_t s0 = 0; s0 < ctx->nsw; s0++) {
		/* the switch's endpoints: one a port, by its first (base) LID */
		uint32_t nsrc = 0;
		for (uint32_t d = ctx->dst_start[s0]; d < ctx->dst_start[s0 + 1]; d++)
			if (d == ctx->dst_start[s0] || ctx->dst[d].port != ctx->dst[d - 1].port)
				src[nsrc++] = ctx->dst[d].lid;
		if (!nsrc)
			continue;
		for (uint32_t d = 0; d < ndst; d++) {
			uint16_t dlid = ctx->dst[d].lid;
			uint16_t mask = 0;
			uint32_t n = 0;
			for (uint32_t i = 0; i < nsrc; i++) {
				bool own =
				    c.dst_sw[dlid] == s0 && c.dst_port[dlid] == c.dst_port[src[i]];
				if (own)
					continue;
				n++;
				/* a switch's own traffic is management, on VL15 without credits:
				 * only the CAs' paths hold channels (as fabricsim verify counts) */
				if (c.dst_port[src[i]])
					mask |= (uint16_t)(1u << (sl ? sl(sl_arg, src[i], dlid) & 15
					                             : 0));
			}
			if (!n)
				continue;
			out->pairs += n;
			out->layers |= mask;
			int r = walk(&c, lft, s0, dlid, mask);
			if (r <= 0) {
				out->unreachable += n;
				if (!out->example_dst) {
					out->example_src = src[0] != dlid ? src[0] : src[nsrc - 1];
					out->example_dst = dlid;
				}
			}
			if (r < 0)
				out->loops++;
		}
	}
	free(src);
	uint8_t *state = malloc(c.nch + 1), *next_out = malloc(c.nch + 1);
	uint32_t *stack = malloc(sizeof(uint32_t) * (c.nch + 1));
	int rc = 0;
	if (!state || !next_out || !stack)
		rc = -1;
	for (unsigned l = 0; !rc && l < 16; l++)
		if ((out->layers >> l & 1) && cyclic(&c, l, state, stack, next_out))
			out->cyclic |= (uint16_t)(1u << l);
	free(state);
	free(next_out);
	free(stack);
	checker_free(&c);
	return rc;
}
