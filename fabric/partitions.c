/* Each port's P_Keys, materialised from the partition policy once per sweep, so that the
 * SA's visibility checks (two per record) and the SM's P_Key programming read a short array
 * instead of scanning the configured GUID lists. */
#include <stdlib.h>
#include <string.h>

#include "fabric/fabric.h"
#include "util/vec.h"

/* The slots that hold P_Keys: the ports, then the vports (slot nports + v). */
static uint32_t nslots(const struct topo *t)
{
	return t->nports + t->vports.n;
}

/* May this port hold P_Keys of the policy: a CA port, or a switch's management port 0 (and
 * every vport, a CA's). */
static bool keyed(const struct topo *t, uint32_t p)
{
	if (p >= t->nports)
		return true;
	bool sw = topo_is_switch(t, t->ports[p].node);
	return sw ? t->ports[p].num == 0 : t->ports[p].num != 0;
}

struct pkey_pair {
	uint32_t port;
	uint16_t key;
	bool indx0;
};

/* A member's ports, with their membership bits or'ed into flags[] (touched once each). */
static void mark(struct topo *t, const struct config_member *m, uint8_t ms, uint8_t *flags,
                 uint32_t *touched, uint32_t *ntouched)
{
	uint32_t only = TOPO_NONE;
	switch (m->kind) {
	case CM_GUID: {
		only = u64map_get(&t->by_port_guid, m->guid);
		if (only == U64MAP_NONE) { /* a switch, by its GUID: its port 0 */
			uint32_t n = u64map_get(&t->by_guid, m->guid);
			only = n != U64MAP_NONE && topo_is_switch(t, n) ? t->nodes[n].first_port
			                                                : TOPO_NONE;
		}
		/* a vport's: its own table */
		if (only == TOPO_NONE) {
			uint32_t v = topo_vport_by_guid(t, m->guid);
			only = v != TOPO_NONE ? t->nports + v : TOPO_NONE;
		}
		/* an alias GUID (a virtual function's, as orchestrators give them): the P_Key
		 * table that enforces it is its physical port's */
		if (only == TOPO_NONE) {
			only = topo_alias_port(t, m->guid);
			t->pkeys_by_alias++;
		}
		if (only == TOPO_NONE || only >= nslots(t))
			return;
		break;
	}
	case CM_SELF:
		only = t->sm_port;
		if (only == TOPO_NONE)
			return;
		break;
	default: break;
	}
	uint32_t from = only != TOPO_NONE ? only : 0, to = only != TOPO_NONE ? only + 1 : nslots(t);
	for (uint32_t p = from; p < to; p++) {
		if (!keyed(t, p))
			continue;
		/* a vport is a CA's */
		uint8_t type = p < t->nports ? t->nodes[t->ports[p].node].type : NODE_TYPE_CA;
		if ((m->kind == CM_ALL_CAS && type != NODE_TYPE_CA) ||
		    (m->kind == CM_ALL_SWITCHES && type != NODE_TYPE_SWITCH) ||
		    (m->kind == CM_ALL_ROUTERS && type != NODE_TYPE_ROUTER))
			continue;
		if (!flags[p])
			touched[(*ntouched)++] = p;
		flags[p] = ms; /* the last entry naming a port decides, as in OpenSM */
	}
}

/* A port listed several times (ALL, then its GUID...) gets the membership of the last entry
 * naming it, as OpenSM decides; "both" gives it the full and the limited key. */
#define MS_BOTH_SEEN 4

/* topo_pkeys_update's working arrays, per port */
struct pkey_work {
	uint8_t *flags;
	uint32_t *touched;
	uint32_t *count;
	struct pkey_pair *pairs; /* (port, key) of every partition but the default */
	uint32_t npairs, pairs_cap;
};

/* Partition pt's members: as (port, key) pairs, or for the default partition each port's
 * first key, kept in count[] for the moment (1 limited, 2 full, 3 both). 0; -1 out of
 * memory. */
static int partition_pairs(struct topo *t, const struct config_partition *pt, struct pkey_work *w)
{
	uint32_t ntouched = 0;
	for (unsigned m = 0; m < pt->nmembers; m++) {
		uint8_t ms = pt->members[m].membership ? pt->members[m].membership : pt->defmember;
		if (ms == CM_BOTH)
			ms |= MS_BOTH_SEEN;
		mark(t, &pt->members[m], ms, w->flags, w->touched, &ntouched);
	}
	for (uint32_t k = 0; k < ntouched; k++) {
		uint32_t p = w->touched[k];
		uint8_t f = w->flags[p];
		w->flags[p] = 0;
		if (pt->pkey == 0x7fff) {
			w->count[p] = (f & MS_BOTH_SEEN) ? 3 : (f & CM_FULL) ? 2 : 1;
			continue;
		}
		if (array_reserve(&w->pairs, &w->pairs_cap, w->npairs + 2ull) < 0)
			return -1;
		bool full = f & (CM_FULL | MS_BOTH_SEEN), limited = (f & MS_BOTH_SEEN) || !full;
		if (full)
			w->pairs[w->npairs++] =
			    (struct pkey_pair){p, (uint16_t)(pt->pkey | 0x8000), pt->indx0};
		if (limited)
			w->pairs[w->npairs++] = (struct pkey_pair){p, pt->pkey, pt->indx0 && !full};
	}
	return 0;
}

/* The default partition: full for every port unless configured; then as configured,
 * limited for the ports it does not list (switches' management ports included, as OpenSM
 * does), the SM's own port always full (it must manage everyone). Two keys a port in
 * first, the second 0 unless "both". */
static void default_keys(const struct topo *t, bool configured, const uint32_t *count,
                         uint16_t *first)
{
	for (uint32_t p = 0; p < nslots(t); p++) {
		uint32_t d = !configured ? 2 : count[p] ? count[p] : 1; /* not listed: limited */
		if (p == t->sm_port)
			d = d == 3 ? 3 : 2;
		first[2 * p] = d == 1 ? 0x7fff : 0xffff;
		first[2 * p + 1] = d == 3 ? 0x7fff : 0; /* "both": the limited key too */
	}
}

/* The pairs grouped by port (counting sort: linear in ports and pairs); after it count[p]
 * is the end of port p's pairs, its start count[p - 1] (0 for p = 0). NULL out of memory. */
static struct pkey_pair *pairs_by_port(const struct topo *t, struct pkey_work *w)
{
	memset(w->count, 0, (nslots(t) + 2u) * sizeof(uint32_t));
	for (uint32_t i = 0; i < w->npairs; i++)
		w->count[w->pairs[i].port + 1]++;
	for (uint32_t p = 0; p < nslots(t); p++)
		w->count[p + 1] += w->count[p];
	struct pkey_pair *sorted = malloc((w->npairs + 1u) * sizeof(*sorted));
	if (!sorted)
		return NULL;
	for (uint32_t i = 0; i < w->npairs; i++)
		sorted[w->count[w->pairs[i].port]++] = w->pairs[i];
	return sorted;
}

/* Where a port's keys go: index 0 as the policy says (indx0's key or the default), every
 * other key at the index it held before (old, nold), so that a key moves only when it must.
 * A QP or an IPoIB child interface holds its P_Key by index, and a key that shifts under it
 * when another partition leaves the port breaks it; OpenSM keeps indexes likewise
 * (keep_pkey_indexes, its default). A key whose membership changed keeps its index too; a
 * key that left becomes a hole (0), and a new key takes the first free index. The table's
 * length (up to its last key); *over when a key found no room. */
static unsigned place_keys(uint16_t *pk, unsigned cap, const uint16_t *want, unsigned nwant,
                           const uint16_t *old, unsigned nold, bool *over)
{
	bool placed[TOPO_MAX_PKEYS + 2] = {false};
	memset(pk, 0, cap * sizeof(uint16_t));
	pk[0] = want[0];
	placed[0] = true;
	if (nold > cap)
		nold = cap;
	/* the same key at its old index, then the same partition (membership changed) */
	for (int pass = 0; pass < 2; pass++) {
		uint16_t mask = pass ? 0x7fff : 0xffff;
		for (unsigned i = 1; i < nold; i++) {
			if (pk[i] || !(old[i] & 0x7fff))
				continue;
			for (unsigned j = 1; j < nwant; j++) {
				if (!placed[j] && (want[j] & mask) == (old[i] & mask)) {
					pk[i] = want[j];
					placed[j] = true;
					break;
				}
			}
		}
	}
	unsigned len = 1, free_at = 1;
	for (unsigned j = 1; j < nwant; j++) {
		if (placed[j])
			continue;
		while (free_at < cap && pk[free_at])
			free_at++;
		if (free_at == cap) {
			*over = true;
			break;
		}
		pk[free_at] = want[j];
	}
	for (unsigned i = cap; i-- > 1;) {
		if (pk[i]) {
			len = i + 1;
			break;
		}
	}
	return len;
}

/* Port p's keys in the model from its pairs (at to end) and its default keys (first),
 * placed by its previous table (old, nold). 0; -1 out of memory. */
static int port_keys(struct topo *t, uint32_t p, const struct pkey_pair *sorted, uint32_t at,
                     uint32_t end, const uint16_t *first, const uint16_t *old, unsigned nold)
{
	/* as many keys as the port's table holds (PartitionCap; a vport's VPartitionCap), and
	 * the model keeps */
	unsigned cap = p < t->nports ? t->nodes[t->ports[p].node].ni.partition_cap
	                             : t->vports.v[p - t->nports].pkey_cap;
	if (!cap || cap > TOPO_MAX_PKEYS)
		cap = TOPO_MAX_PKEYS;
	if (array_reserve(&t->pkeys, &t->pkeys_cap, t->npkeys + (uint64_t)cap) < 0)
		return -1;
	/* the keys the policy gives, in its order: index 0's first */
	uint16_t want[TOPO_MAX_PKEYS + 2];
	unsigned k = 0;
	/* indx0: that partition's key first, the default after it */
	for (uint32_t i = at; i < end && !k; i++)
		if (sorted[i].indx0)
			want[k++] = sorted[i].key;
	want[k++] = first[2 * p];
	if (first[2 * p + 1])
		want[k++] = first[2 * p + 1];
	bool over = false;
	for (uint32_t i = at; i < end; i++) {
		if (sorted[i].indx0 && want[0] == sorted[i].key)
			continue;
		if (k == cap) {
			over = true;
			break;
		}
		want[k++] = sorted[i].key;
	}
	if (k > cap) { /* the default's second key past a tiny table */
		k = cap;
		over = true;
	}
	k = place_keys(t->pkeys + t->npkeys, cap, want, k, old, nold, &over);
	if (over)
		t->pkeys_truncated++;
	if (p < t->nports)
		t->ports[p].npkeys = (uint8_t)k;
	else
		t->vports.v[p - t->nports].npkeys = (uint8_t)k;
	t->npkeys += k;
	return 0;
}

/* A slot's table as the last update placed it (in old, of nold keys), or as the port
 * answered a read since (held: after a restart or a takeover, what the ports hold is the
 * only memory of where their keys were). */
static const uint16_t *old_keys(const struct topo *t, uint32_t p, const uint16_t *old,
                                uint32_t nold, const uint32_t *held_of, unsigned *n)
{
	if (held_of && held_of[p] != TOPO_NONE) {
		*n = 32;
		return t->pkeys_held.v[held_of[p]].keys;
	}
	uint32_t at = p < t->nports ? t->ports[p].pkey_at : t->vports.v[p - t->nports].pkey_at;
	unsigned k = p < t->nports ? t->ports[p].npkeys : t->vports.v[p - t->nports].npkeys;
	*n = old && (uint64_t)at + k <= nold ? k : 0;
	return *n ? old + at : NULL;
}

/* Every port's keys from the grouped pairs, placed by their previous tables (old, nold). 0;
 * -1 out of memory. */
static int all_port_keys(struct topo *t, const struct pkey_pair *sorted, const uint32_t *count,
                         const uint16_t *first, const uint16_t *old, uint32_t nold,
                         const uint32_t *held_of)
{
	t->npkeys = 0;
	uint32_t at = 0;
	for (uint32_t p = 0; p < nslots(t); p++) {
		uint32_t end = count[p];
		unsigned nprev;
		const uint16_t *prev = old_keys(t, p, old, nold, held_of, &nprev);
		if (p < t->nports) {
			t->ports[p].npkeys = 0;
			t->ports[p].pkey_at = t->npkeys;
		} else {
			t->vports.v[p - t->nports].npkeys = 0;
			t->vports.v[p - t->nports].pkey_at = t->npkeys;
		}
		if (keyed(t, p) && port_keys(t, p, sorted, at, end, first, prev, nprev) < 0)
			return -1;
		at = end;
	}
	return 0;
}

/* The ports' held tables by slot (TOPO_NONE: none read), NULL when none was read or out of
 * memory (the last placement stands in). */
static uint32_t *held_by_slot(const struct topo *t)
{
	if (!t->pkeys_held.n)
		return NULL;
	uint32_t *held_of = malloc((nslots(t) + 1u) * sizeof(uint32_t));
	if (!held_of)
		return NULL;
	memset(held_of, 0xff, (nslots(t) + 1u) * sizeof(uint32_t));
	for (uint32_t i = 0; i < t->pkeys_held.n; i++)
		if (t->pkeys_held.v[i].port < t->nports)
			held_of[t->pkeys_held.v[i].port] = i;
	return held_of;
}

void topo_pkeys_held(struct topo *t, uint32_t port, const uint16_t keys[32])
{
	struct topo_pkeys_held *h = vec_push(&t->pkeys_held);
	if (!h)
		return; /* out of memory: its keys are placed as the last update did */
	h->port = port;
	memcpy(h->keys, keys, sizeof(h->keys));
}

int topo_pkeys_update(struct topo *t, const struct ibsmd_config *cfg)
{
	struct pkey_work w = {.flags = calloc(nslots(t) + 1u, 1),
	                      .touched = malloc((nslots(t) + 1u) * sizeof(uint32_t)),
	                      .count = calloc(nslots(t) + 2u, sizeof(uint32_t))};
	uint16_t *first = NULL;
	struct pkey_pair *sorted = NULL;
	uint32_t *held_of = NULL;
	int rc = -1;
	t->pkeys_truncated = 0;
	t->pkeys_by_alias = 0;
	if (!w.flags || !w.touched || !w.count)
		goto out;
	/* every partition's members, as (port, key) pairs; the default partition decides each
	 * port's first key instead */
	const struct config_partition *dflt = NULL;
	for (unsigned i = 0; i < cfg->npartitions; i++) {
		const struct config_partition *pt = &cfg->partitions[i];
		if (pt->pkey == 0x7fff)
			dflt = pt;
		if (partition_pairs(t, pt, &w) < 0)
			goto out;
	}
	first = malloc((nslots(t) + 1u) * sizeof(uint16_t) * 2);
	if (!first)
		goto out;
	default_keys(t, dflt != NULL, w.count, first);
	sorted = pairs_by_port(t, &w);
	if (!sorted)
		goto out;
	/* the last placement is read while the new one is written: two buffers, swapped */
	uint16_t *old = t->pkeys;
	uint32_t nold = t->npkeys, old_cap = t->pkeys_cap;
	t->pkeys = t->pkeys_spare;
	t->pkeys_cap = t->pkeys_spare_cap;
	t->pkeys_spare = old;
	t->pkeys_spare_cap = old_cap;
	held_of = held_by_slot(t);
	rc = all_port_keys(t, sorted, w.count, first, old, nold, held_of);
	if (rc == 0)
		vec_free(&t->pkeys_held); /* placed: the model remembers them from now on */
out:
	free(held_of);
	free(sorted);
	free(first);
	free(w.flags);
	free(w.touched);
	free(w.count);
	free(w.pairs);
	return rc;
}

bool topo_port_has_pkey(const struct topo *t, uint32_t p, uint16_t pkey, bool *full)
{
	unsigned n;
	const uint16_t *pk = topo_port_pkeys(t, p, &n);
	for (unsigned i = 0; i < n; i++) {
		if ((pk[i] & 0x7fff) && (pk[i] & 0x7fff) == (pkey & 0x7fff)) {
			*full = pk[i] & 0x8000;
			return true;
		}
	}
	return false;
}

uint16_t topo_shared_pkey(const struct topo *t, uint32_t a, uint32_t b)
{
	unsigned na, nb;
	const uint16_t *pa = topo_port_pkeys(t, a, &na), *pb = topo_port_pkeys(t, b, &nb);
	for (unsigned i = 0; i < na; i++)
		for (unsigned j = 0; j < nb; j++)
			if ((pa[i] & 0x7fff) && (pa[i] & 0x7fff) == (pb[j] & 0x7fff) &&
			    ((pa[i] | pb[j]) & 0x8000))
				return (uint16_t)((pa[i] & 0x7fff) | 0x8000);
	return 0;
}

unsigned topo_switch_port_pkeys(const struct topo *t, uint32_t port, uint16_t *pk, unsigned cap)
{
	const struct topo_port *sp = &t->ports[port];
	const struct topo_node *n = &t->nodes[sp->node];
	if (n->sw == TOPO_NONE || sp->num == 0 || sp->peer == TOPO_NONE || !topo_port_up(sp))
		return 0;
	const struct topo_port *ca = &t->ports[sp->peer];
	unsigned enforce_cap = t->sws[n->sw].si.partition_enforcement_cap;
	if (topo_is_switch(t, ca->node) || !ca->lid || !enforce_cap)
		return 0;
	unsigned nk, k = 0;
	const uint16_t *keys = topo_port_pkeys(t, sp->peer, &nk);
	/* its keys without the CA's holes: a switch matches by value, not by index */
	for (unsigned i = 0; i < nk; i++) {
		if (!(keys[i] & 0x7fff))
			continue;
		if (k == enforce_cap || k == cap)
			return 0; /* more than it can enforce: none */
		pk[k++] = keys[i];
	}
	return k;
}
