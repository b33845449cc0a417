/* The tables the SM programmed, as the model keeps them: VL arbitration blocks and SL-to-VL
 * tables interned (a fabric holds a handful of distinct ones), read back by port. */
#include <string.h>

#include "fabric/fabric.h"
#include "util/vec.h"

/* Interning scans the few distinct tables: there are a handful (one per VL count a link
 * runs), never one per port. */
int topo_lft_hw_reserve(struct topo *t, uint32_t sw, uint32_t size)
{
	struct topo_switch *s = &t->sws[sw];
	if (s->lft_hw && s->lft_hw_size >= size)
		return 0;
	uint32_t had = s->lft_hw ? s->lft_hw_size : 0;
	uint8_t *n = realloc(s->lft_hw, size);
	if (!n)
		return -1;
	memset(n + had, 0xfe, size - had);
	s->lft_hw = n;
	s->lft_hw_size = size;
	return 0;
}

void topo_lft_hw_store(struct topo *t, uint32_t sw, uint32_t block, const uint8_t ports[64])
{
	struct topo_switch *s = &t->sws[sw];
	if (s->lft_hw && block * 64 + 64 <= s->lft_hw_size)
		memcpy(s->lft_hw + block * 64, ports, 64);
}

void topo_set_pkey_sig(struct topo *t, uint32_t port, uint32_t sig)
{
	t->ports[port].pkey_sig = sig;
}

uint16_t topo_vlarb_intern(struct topo *t, const struct mad_vlarb_table *tbl)
{
	for (uint32_t i = 0; i < t->nvlarb; i++)
		if (!memcmp(&t->vlarb[i], tbl, sizeof(*tbl)))
			return (uint16_t)(i + 1);
	if (t->nvlarb >= 4096)
		return 0; /* a port answering garbage: treat as unknown, it gets resent */
	if (array_reserve(&t->vlarb, &t->vlarb_cap, t->nvlarb + 1ull) < 0)
		return 0;
	t->vlarb[t->nvlarb++] = *tbl;
	return (uint16_t)t->nvlarb;
}

uint16_t topo_sl2vl_intern(struct topo *t, uint64_t v)
{
	for (uint32_t i = 0; i < t->nsl2vl; i++)
		if (t->sl2vl[i] == v)
			return (uint16_t)(i + 1);
	if (t->nsl2vl >= UINT16_MAX)
		return 0;
	if (array_reserve(&t->sl2vl, &t->sl2vl_cap, t->nsl2vl + 1ull) < 0)
		return 0;
	t->sl2vl[t->nsl2vl++] = v;
	return (uint16_t)t->nsl2vl;
}

uint64_t topo_switch_sl2vl(const struct topo *t, const struct topo_switch *sw, unsigned np,
                           unsigned in, unsigned out)
{
	uint16_t i = sw->sl2vl ? sw->sl2vl[in * np + out] : 0;
	return i && i <= t->nsl2vl ? t->sl2vl[i - 1] : TOPO_SL2VL_UNKNOWN;
}

/* What we programmed into a node's tables, forgotten: read or sent again. */
static void forget_node_tables(struct topo *t, uint32_t node)
{
	struct topo_node *n = &t->nodes[node];
	for (unsigned p = 0; p <= n->nports; p++) {
		struct topo_port *port = &t->ports[n->first_port + p];
		port->sl2vl = TOPO_SL2VL_UNKNOWN;
		memset(port->vlarb, 0, sizeof(port->vlarb));
		port->pkey_sig = 0;
	}
	if (n->sw != TOPO_NONE) {
		struct topo_switch *sw = &t->sws[n->sw];
		free(sw->sl2vl);
		sw->sl2vl = NULL;
		free(sw->lft_hw);
		sw->lft_hw = NULL;
		sw->lft_hw_size = 0;
		if (sw->mft_known)
			memset(sw->mft_known, 0, sw->mft_mlids / 32);
		/* a new life: its MFT Sets failing before (it was going) hold nothing back now */
		sw->mft_fails = sw->mft_wait = 0;
	}
}

void topo_forget_tables(struct topo *t, uint32_t node)
{
	struct topo_node *n = &t->nodes[node];
	n->lives++;
	/* a reset also lost its management port's LID and state: read it again */
	if (n->sw != TOPO_NONE)
		t->ports[n->first_port].known = false;
	forget_node_tables(t, node);
}

void topo_forget_all_tables(struct topo *t)
{
	for (uint32_t node = 0; node < t->nnodes; node++)
		forget_node_tables(t, node);
	for (uint32_t v = 0; v < t->vports.n; v++)
		t->vports.v[v].pkey_sig = 0;
}

uint64_t topo_sl2vl_of(const struct topo *t, uint32_t port, unsigned in)
{
	const struct topo_port *out = &t->ports[port];
	const struct topo_node *n = &t->nodes[out->node];
	uint64_t v = out->sl2vl;
	if (n->sw != TOPO_NONE) {
		const struct topo_switch *sw = &t->sws[n->sw];
		unsigned np = n->nports + 1u;
		v = in < np ? topo_switch_sl2vl(t, sw, np, in, out->num) : TOPO_SL2VL_UNKNOWN;
	}
	return v == TOPO_SL2VL_UNKNOWN ? 0 : v;
}
