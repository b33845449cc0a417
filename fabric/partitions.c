/* Each port's P_Keys, materialised from the partition policy once per sweep, so that the
 * SA's visibility checks (two per record) and the SM's P_Key programming read a short array
 * instead of scanning the configured GUID lists. */
#include <string.h>

#include "fabric/fabric.h"
#include "util/vec.h"

_Static_assert(CONFIG_MAX_PARTITIONS <= 64, "membership is a 64-bit mask per port");

int topo_pkeys_update(struct topo *t, const struct ibsmd_config *cfg)
{
	/* membership by listed GUID: one pass over the lists, not one per port */
	uint64_t *member = calloc(t->nports + 1u, sizeof(uint64_t));
	uint64_t *full = calloc(t->nports + 1u, sizeof(uint64_t));
	if (!member || !full) {
		free(member);
		free(full);
		return -1;
	}
	for (unsigned i = 0; i < cfg->npartitions; i++) {
		const struct config_partition *pt = &cfg->partitions[i];
		for (unsigned j = 0; !pt->all && j < pt->nguids; j++) {
			uint32_t p = u64map_get(&t->by_port_guid, pt->guids[j]);
			if (p == U64MAP_NONE || p >= t->nports)
				continue;
			member[p] |= 1ull << i;
			if (pt->full[j])
				full[p] |= 1ull << i;
		}
	}
	t->npkeys = 0;
	int rc = 0;
	for (uint32_t p = 0; p < t->nports; p++) {
		struct topo_port *port = &t->ports[p];
		const struct topo_node *n = &t->nodes[port->node];
		port->npkeys = 0;
		port->pkey_at = t->npkeys;
		bool sw = n->type == NODE_TYPE_SWITCH;
		if ((sw && port->num != 0) || (!sw && port->num == 0))
			continue;
		if (array_reserve(&t->pkeys, &t->pkeys_cap, t->npkeys + (uint64_t)TOPO_MAX_PKEYS) <
		    0) {
			rc = -1;
			break;
		}
		uint16_t *pk = t->pkeys + t->npkeys;
		unsigned k = 0;
		pk[k++] = 0xffff;
		if (!sw) {
			for (unsigned i = 0; i < cfg->npartitions; i++) {
				const struct config_partition *pt = &cfg->partitions[i];
				bool in = pt->all || (member[p] >> i & 1);
				bool f = pt->all ? pt->all_full : (full[p] >> i & 1);
				/* the default partition, limited unless the policy lists the port
				 * as a full member, so tenants cannot reach each other through it;
				 * the SM's own port stays full, or it could not manage anyone */
				if (pt->pkey == 0x7fff) {
					if (!(in && f) && p != t->sm_port)
						pk[0] = 0x7fff;
					continue;
				}
				if (in && k < TOPO_MAX_PKEYS)
					pk[k++] = (uint16_t)(pt->pkey | (f ? 0x8000 : 0));
			}
		}
		port->npkeys = (uint8_t)k;
		t->npkeys += k;
	}
	free(member);
	free(full);
	return rc;
}

bool topo_port_has_pkey(const struct topo *t, uint32_t p, uint16_t pkey, bool *full)
{
	unsigned n;
	const uint16_t *pk = topo_port_pkeys(t, p, &n);
	for (unsigned i = 0; i < n; i++) {
		if ((pk[i] & 0x7fff) == (pkey & 0x7fff)) {
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
			if ((pa[i] & 0x7fff) == (pb[j] & 0x7fff) && ((pa[i] | pb[j]) & 0x8000))
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
	unsigned k;
	const uint16_t *keys = topo_port_pkeys(t, sp->peer, &k);
	if (!k || k > enforce_cap || k > cap)
		return 0;
	memcpy(pk, keys, k * sizeof(uint16_t));
	return k;
}
