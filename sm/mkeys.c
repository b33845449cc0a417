/* M_Keys (IBA 14.2.4): which key each port should carry, which key it carries now, and the
 * file that keeps the second across restarts.
 *
 * Without a secret every port gets the configured m_key. With m_key_secret, each port gets
 * its own key, a keyed BLAKE2b of its GUID (libsodium): a host that reads its own port's key
 * learns nothing about any other port's. The key that protects a switch is port 0's, a CA's
 * that of the port an SMP enters by, so the GUID of that port names the key.
 *
 * A port may still carry a key other than the one it should: set by a previous master, by
 * a master with the static m_key, or before the secret changed. The keys in use are kept
 * here (GUID -> key, only ports whose key is not 0), learned from Sets that succeeded and
 * from PortInfo answers that show the key, saved in the state directory (mode 0600: they
 * open every port) and mirrored to standbys by the sync, so that a new master presents the
 * right key at once. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "sm/saved.h"
#include "sm/sm_int.h"
#include "util/statefile.h"

uint64_t mkey_wanted(const struct sm *sm, uint64_t guid)
{
	const struct ibsmd_config *c = sm->cfg;
	if (!c->has_m_key_secret || !guid)
		return c->m_key;
	uint8_t in[8], out[16];
	for (int i = 0; i < 8; i++)
		in[i] = (uint8_t)(guid >> (56 - 8 * i));
	crypto_generichash(out, sizeof(out), in, sizeof(in), c->m_key_secret_key,
	                   sizeof(c->m_key_secret_key));
	uint64_t k = 0;
	for (int i = 0; i < 8; i++)
		k = k << 8 | out[i];
	return k ? k : 1; /* 0 would mean no key at all */
}

uint64_t mkey_guid(const struct topo *t, uint32_t port)
{
	if (port == TOPO_NONE)
		return 0;
	const struct topo_node *n = &t->nodes[t->ports[port].node];
	return n->type == NODE_TYPE_SWITCH ? n->ni.port_guid : t->ports[port].guid;
}

bool mkey_known(const struct sm *sm, uint64_t guid, uint64_t *key)
{
	uint32_t i = guid ? u64map_get(&sm->mk.idx, guid) : U64MAP_NONE;
	if (i == U64MAP_NONE)
		return false;
	*key = sm->mk.v[i].key;
	return true;
}

uint64_t mkey_in_use(const struct sm *sm, uint64_t guid)
{
	uint64_t k;
	return mkey_known(sm, guid, &k) ? k : mkey_wanted(sm, guid);
}

void mkey_learned(struct sm *sm, uint64_t guid, uint64_t key)
{
	struct sm_mkeys *m = &sm->mk;
	if (!guid)
		return;
	uint32_t i = u64map_get(&m->idx, guid);
	if (i != U64MAP_NONE) {
		if (m->v[i].key == key)
			return;
		if (key) {
			m->v[i].key = key;
		} else {
			u64map_del(&m->idx, guid);
			vec_swap_remove(m, i);
			if (i < m->n)
				u64map_put(&m->idx, m->v[i].guid, i);
		}
	} else {
		if (!key)
			return;
		struct sm_mkey *e = vec_push(m);
		if (!e || u64map_put(&m->idx, guid, m->n - 1) < 0) {
			if (e)
				m->n--;
			log_err(sm->log, "mkeys",
			        "out of memory: the M_Key of " GUID_FMT " is not kept", guid);
			return;
		}
		e->guid = guid;
		e->key = key;
	}
	m->dirty = true;
	m->changes++;
}

static void state_path(const struct sm *sm, char *buf, size_t len)
{
	snprintf(buf, len, "%s/mkeys", sm->cfg->state_dir);
}

int mkeys_load(struct sm *sm)
{
	char path[512];
	state_path(sm, path, sizeof(path));
	statefile_discard_tmp(sm->cfg->state_dir, "mkeys");
	FILE *fp = fopen(path, "r");
	if (!fp)
		return errno == ENOENT ? 0 : -1;
	struct stat st;
	if (fstat(fileno(fp), &st) == 0 && (st.st_mode & 077))
		log_warn(sm->log, "mkeys",
		         "%s can be read by others (mode %04o): it opens every port; chmod 600 it",
		         path, (unsigned)(st.st_mode & 07777));
	char line[256];
	unsigned lineno = 0, kept = 0;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		uint64_t guid, key;
		uint8_t port;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sm_saved_kind(line) == SM_SAVED_HOP) {
			if (sm_saved_parse_hop(line, &guid, &port, &key))
				sm_hops_set(sm, guid, port, key);
			continue;
		}
		if (sscanf(line, "%" SCNx64 " %" SCNx64, &guid, &key) != 2 || !guid) {
			log_warn(sm->log, "mkeys", "%s:%u: not \"PORT-GUID M_KEY\": skipped", path,
			         lineno);
			continue;
		}
		mkey_learned(sm, guid, key);
		kept++;
	}
	fclose(fp);
	sm->mk.dirty = false;
	log_info(sm->log, "mkeys", "%s: the M_Keys of %u ports kept from the last run", path, kept);
	return 0;
}

int mkeys_save(struct sm *sm)
{
	struct sm_mkeys *m = &sm->mk;
	if (!m->dirty)
		return 0;
	struct statefile sf;
	if (statefile_begin(&sf, sm->cfg->state_dir, "mkeys", 0600) < 0) {
		log_err(sm->log, "mkeys",
		        "cannot write %s: %s; a restart will not know the M_Keys in use", sf.tmp,
		        strerror(errno));
		return -1;
	}
	FILE *fp = sf.f;
	fprintf(fp, "# port GUID -> the M_Key it carries, kept by ibsmd (secret: mode 0600)\n");
	for (uint32_t i = 0; i < m->n; i++)
		fprintf(fp, "0x%016" PRIx64 " 0x%016" PRIx64 "\n", m->v[i].guid, m->v[i].key);
	/* where the ports lead (protection level 2): a restart finds its way with them */
	for (uint32_t i = 0; i < m->hops.n; i++)
		sm_saved_put_hop(fp, m->hops.v[i].node_guid, m->hops.v[i].port,
		                 m->hops.v[i].far_guid);
	if (statefile_commit(&sf) < 0) {
		log_err(sm->log, "mkeys", "writing %s failed: %s", sf.path, strerror(errno));
		return -1;
	}
	m->dirty = false;
	return 0;
}

uint64_t sm_mkeys_changes(const struct sm *sm)
{
	return sm->mk.changes;
}

void sm_mkeys_each(const struct sm *sm, void (*fn)(void *ctx, uint64_t guid, uint64_t key),
                   void *ctx)
{
	for (uint32_t i = 0; i < sm->mk.n; i++)
		fn(ctx, sm->mk.v[i].guid, sm->mk.v[i].key);
}

void sm_mkeys_set(struct sm *sm, uint64_t guid, uint64_t key)
{
	mkey_learned(sm, guid, key);
}

bool sm_mkeys_get(const struct sm *sm, uint64_t guid, uint64_t *key)
{
	return mkey_known(sm, guid, key);
}

int sm_mkeys_save(struct sm *sm)
{
	return mkeys_save(sm);
}

/* ---- where each port leads, under protection level 2 ----
 *
 * A Get needs the right M_Key there too, NodeInfo included, so an SM that never saw the
 * fabric (a restart, a standby that takes over) cannot learn what is behind a port without
 * knowing whose key to present. A master keeps, per port with a link, the GUID that names
 * the key at the far end: in the mkeys file and in the sync ("hop" items); a discovery probe
 * looks it up by the node and port it leaves from. */

static uint64_t hop_key(uint64_t node_guid, uint8_t port)
{
	uint64_t k = node_guid * 0x9e3779b97f4a7c15ull ^ ((uint64_t)port << 56 | port);
	return k ? k : 1;
}

uint64_t mkey_hop_hint(const struct sm *sm, uint64_t node_guid, uint8_t port)
{
	uint32_t i = u64map_get(&sm->mk.hop_idx, hop_key(node_guid, port));
	if (i == U64MAP_NONE)
		return 0;
	const struct sm_hop *h = &sm->mk.hops.v[i];
	return h->node_guid == node_guid && h->port == port ? h->far_guid : 0;
}

void sm_hops_set(struct sm *sm, uint64_t node_guid, uint8_t port, uint64_t far_guid)
{
	struct sm_mkeys *m = &sm->mk;
	uint64_t k = hop_key(node_guid, port);
	uint32_t i = u64map_get(&m->hop_idx, k);
	if (i != U64MAP_NONE) {
		if (far_guid) {
			m->hops.v[i] = (struct sm_hop){node_guid, far_guid, port};
		} else {
			u64map_del(&m->hop_idx, k);
			vec_swap_remove(&m->hops, i);
			if (i < m->hops.n)
				u64map_put(&m->hop_idx,
				           hop_key(m->hops.v[i].node_guid, m->hops.v[i].port), i);
		}
		return;
	}
	if (!far_guid)
		return;
	struct sm_hop *h = vec_push(&m->hops);
	if (!h)
		return;
	*h = (struct sm_hop){node_guid, far_guid, port};
	if (u64map_put(&m->hop_idx, k, m->hops.n - 1) < 0)
		m->hops.n--;
}

uint64_t sm_hops_get(const struct sm *sm, uint64_t node_guid, uint8_t port)
{
	return mkey_hop_hint(sm, node_guid, port);
}

uint64_t sm_hops_changes(const struct sm *sm)
{
	return sm->cfg->m_key_protect >= 2 ? sm->mk.hop_changes : 0;
}

void sm_hops_each(const struct sm *sm,
                  void (*fn)(void *ctx, uint64_t node_guid, uint8_t port, uint64_t far_guid),
                  void *ctx)
{
	if (sm->cfg->m_key_protect < 2)
		return; /* Gets need no key: discovery finds its way alone */
	const struct sm_mkeys *m = &sm->mk;
	for (uint32_t i = 0; i < m->hops.n; i++)
		fn(ctx, m->hops.v[i].node_guid, m->hops.v[i].port, m->hops.v[i].far_guid);
}

void mkey_hops_from_topo(struct sm *sm)
{
	struct sm_mkeys *m = &sm->mk;
	const struct topo *t = &sm->topo;
	bool had = m->hops.n != 0;
	u64map_clear(&m->hop_idx);
	m->hops.n = 0;
	m->hop_changes++;
	if (sm->cfg->m_key_protect < 2) {
		m->dirty |= had;
		return; /* Gets need no key: discovery finds its way alone */
	}
	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct topo_node *n = &t->nodes[i];
		if (!n->present)
			continue;
		for (unsigned p = 1; p <= n->nports; p++) {
			uint32_t peer = t->ports[n->first_port + p].peer;
			uint64_t g = peer != TOPO_NONE ? mkey_guid(t, peer) : 0;
			if (g)
				sm_hops_set(sm, n->guid, (uint8_t)p, g);
		}
	}
	m->dirty = true;
}

/* Trap 256 (IBA 14.2.5.1): a port refused an SMP for its M_Key. Data details: LIDADDR of
 * the requester, DRSLID, Method, reserved, AttributeID, AttributeModifier, M_Key. Ours are
 * never refused (we present each port's key), so this is somebody else: logged as an event
 * naming the port and who asked, rate limited (a rogue can send many). */
void mkey_violation_trap(struct sm *sm, uint32_t node, const struct mad_notice *no)
{
	const uint8_t *d = no->data_details;
	uint16_t lid = (uint16_t)(d[0] << 8 | d[1]), attr = (uint16_t)(d[6] << 8 | d[7]);
	uint8_t method = d[4];
	uint32_t mod = (uint32_t)d[8] << 24 | (uint32_t)d[9] << 16 | (uint32_t)d[10] << 8 | d[11];
	char name[160] = "an unknown port", who[180] = "", g[20] = "", l[8], a[8], m[8];
	if (node != TOPO_NONE)
		sm_node_name(sm, node, name, sizeof(name));
	uint32_t rp = lid < TOPO_LID_COUNT ? sm->topo.lid_port[lid] : TOPO_NONE;
	if (rp != TOPO_NONE) {
		char rn[160];
		snprintf(who, sizeof(who), " (%s)",
		         sm_node_name(sm, sm->topo.ports[rp].node, rn, sizeof(rn)));
	}
	if (node != TOPO_NONE)
		snprintf(g, sizeof(g), "0x%016" PRIx64, sm->topo.nodes[node].guid);
	snprintf(l, sizeof(l), "%u", lid);
	snprintf(a, sizeof(a), "0x%04x", attr);
	snprintf(m, sizeof(m), "0x%02x", method);
	const char *kv[] = {"node_guid", g, "requester_lid", l, "attribute", a, "method", m, NULL};
	sm_event(sm, LOGL_WARN, "mkey_violation", kv,
	         "M_Key violation at %s (LID %u): LID %u%s tried method 0x%02x attribute "
	         "0x%04x modifier 0x%x with a wrong M_Key; refused by the port",
	         name, no->issuer_lid, lid, who, method, attr, mod);
}
