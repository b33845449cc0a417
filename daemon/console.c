/* OpenSM's console commands on the control socket (see console.h). */
#include "daemon/console.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mad/link_speed.h"
#include "mad/mad_types.h"
#include "util/escape.h"

/* "4xHDR" of a port's active width and speed */
static void link_name(const struct mad_port_info *pi, char *buf, size_t len)
{
	snprintf(buf, len, "%ux%s", mad_link_lanes(pi->link_width_active),
	         mad_link_speed_name(mad_link_speed_active(pi)));
}

static void put_node(FILE *out, const struct topo_node *n, bool json)
{
	if (json) {
		json_put_str(out, n->desc, sizeof(n->desc));
		return;
	}
	char d[4 * sizeof(n->desc)];
	fprintf(out, "\"%s\"", text_desc(d, sizeof(d), n->desc));
}

/* querylid LID: the port that holds it */
static void querylid(struct control *c, const char *arg, FILE *out, bool json)
{
	const struct topo *t = sm_fabric(c->rl->sm);
	char *e;
	unsigned long lid = strtoul(arg, &e, 0);
	if (*e || !lid || lid >= TOPO_LID_COUNT) {
		fprintf(out, "error: querylid LID: \"%s\" is not a unicast LID\n", arg);
		return;
	}
	uint32_t p = t->lid_port[lid];
	if (p == TOPO_NONE) {
		fprintf(out, "error: no port holds LID %lu\n", lid);
		return;
	}
	const struct topo_port *pt = &t->ports[p];
	const struct topo_node *n = &t->nodes[pt->node];
	/* a switch's LID is its port 0's: its state and link are not a link's */
	/* (peers as readers see them: a sweep under way has forgotten the links it is finding) */
	uint32_t pp = topo_reader_peer(t, p);
	const struct topo_port *lp = pp == TOPO_NONE && topo_is_switch(t, pt->node) ? NULL : pt;
	char link[16] = "-";
	if (lp && pp != TOPO_NONE)
		link_name(&lp->pi, link, sizeof(link));
	const struct topo_port *peer = lp && pp != TOPO_NONE ? &t->ports[pp] : NULL;
	if (json) {
		fprintf(out, "{\"lid\":%lu,\"base_lid\":%u,\"lmc\":%u,\"node\":", lid, pt->lid,
		        pt->lmc);
		put_node(out, n, true);
		fprintf(out,
		        ",\"node_guid\":\"0x%016" PRIx64 "\",\"type\":\"%s\",\"port\":%u,"
		        "\"port_guid\":\"0x%016" PRIx64 "\",\"state\":\"%s\",\"link\":\"%s\"",
		        n->guid, node_type_str(n->type), pt->num, topo_port_guid(t, p),
		        port_state_str(pt->pi.port_state), link);
		if (peer) {
			fputs(",\"peer\":{\"node\":", out);
			put_node(out, &t->nodes[peer->node], true);
			fprintf(out, ",\"guid\":\"0x%016" PRIx64 "\",\"port\":%u}",
			        t->nodes[peer->node].guid, peer->num);
		}
		fputs("}\n", out);
		return;
	}
	fprintf(out, "LID %lu (base %u, LMC %u): ", lid, pt->lid, pt->lmc);
	put_node(out, n, false);
	fprintf(out, " port %u, %s, node GUID 0x%016" PRIx64 ", port GUID 0x%016" PRIx64 ", %s, %s",
	        pt->num, node_type_str(n->type), n->guid, topo_port_guid(t, p),
	        port_state_str(pt->pi.port_state), link);
	if (peer) {
		fputs(", to ", out);
		put_node(out, &t->nodes[peer->node], false);
		fprintf(out, " port %u", peer->num);
	}
	fputc('\n', out);
}

struct port_census {
	unsigned linked, state[5], disabled, reduced;
	char (*rates)[16]; /* distinct "4xHDR" names and their counts */
	unsigned *rate_n, nrates;
};

static void count_rate(struct port_census *pc, const char *name)
{
	for (unsigned i = 0; i < pc->nrates; i++)
		if (!strcmp(pc->rates[i], name)) {
			pc->rate_n[i]++;
			return;
		}
	if (pc->nrates == 64)
		return; /* widths x speeds: far fewer */
	snprintf(pc->rates[pc->nrates], sizeof(pc->rates[0]), "%s", name);
	pc->rate_n[pc->nrates++] = 1;
}

/* One port of portstatus's census; a reduced or disabled one listed (text) as it is met. */
static void census_port(const struct topo *t, uint32_t p, struct port_census *pc, FILE *out,
                        bool json, bool *first)
{
	const struct topo_port *pt = &t->ports[p];
	if (pt->pi.phys_state == PHYS_STATE_DISABLED) {
		pc->disabled++;
		if (!json) {
			fputs("disabled: ", out);
			put_node(out, &t->nodes[pt->node], false);
			fprintf(out, " port %u\n", pt->num);
		}
		return;
	}
	uint32_t pp = topo_reader_peer(t, p);
	if (pp == TOPO_NONE)
		return;
	pc->linked++;
	pc->state[pt->pi.port_state < 5 ? pt->pi.port_state : 0]++;
	char name[16];
	link_name(&pt->pi, name, sizeof(name));
	count_rate(pc, name);
	uint8_t w;
	enum link_speed s;
	if (!mad_link_below_best(&pt->pi, &t->ports[pp].pi, &w, &s))
		return;
	pc->reduced++;
	if (json) {
		fprintf(out, "%s{\"node\":", *first ? "" : ",");
		put_node(out, &t->nodes[pt->node], true);
		fprintf(out,
		        ",\"guid\":\"0x%016" PRIx64
		        "\",\"port\":%u,\"runs\":\"%s\",\"could\":\"%ux%s\"}",
		        t->nodes[pt->node].guid, pt->num, name, mad_link_lanes(w),
		        mad_link_speed_name(s));
		*first = false;
		return;
	}
	fputs("reduced: ", out);
	put_node(out, &t->nodes[pt->node], false);
	fprintf(out, " port %u runs %s where both ends could run %ux%s\n", pt->num, name,
	        mad_link_lanes(w), mad_link_speed_name(s));
}

/* portstatus [ca|switch|router]: the ports' states and rates, and those below what both ends
 * of their link support or disabled */
static void portstatus(struct control *c, const char *only, FILE *out, bool json)
{
	uint8_t type = 0;
	if (only) {
		type = !strcmp(only, "ca")       ? NODE_TYPE_CA
		       : !strcmp(only, "switch") ? NODE_TYPE_SWITCH
		       : !strcmp(only, "router") ? NODE_TYPE_ROUTER
		                                 : 0;
		if (!type) {
			fprintf(out, "error: portstatus [ca|switch|router], not \"%s\"\n", only);
			return;
		}
	}
	const struct topo *t = sm_fabric(c->rl->sm);
	char rates[64][16];
	unsigned rate_n[64];
	struct port_census pc = {.rates = rates, .rate_n = rate_n};
	bool first = true;
	if (json)
		fputs("{\"reduced\":[", out);
	for (uint32_t n = 0; n < t->nnodes; n++) {
		const struct topo_node *nd = &t->nodes[n];
		if (!nd->present || (type && nd->type != type))
			continue;
		for (unsigned num = 1; num <= nd->nports; num++)
			census_port(t, nd->first_port + num, &pc, out, json, &first);
	}
	if (json) {
		fprintf(out,
		        "],\"linked\":%u,\"active\":%u,\"armed\":%u,\"init\":%u,\"down\":%u,"
		        "\"disabled\":%u,\"rates\":{",
		        pc.linked, pc.state[PORT_STATE_ACTIVE], pc.state[PORT_STATE_ARMED],
		        pc.state[PORT_STATE_INIT], pc.state[PORT_STATE_DOWN], pc.disabled);
		for (unsigned i = 0; i < pc.nrates; i++)
			fprintf(out, "%s\"%s\":%u", i ? "," : "", rates[i], rate_n[i]);
		fputs("}}\n", out);
		return;
	}
	fprintf(
	    out,
	    "ports: %u linked: %u ACTIVE, %u ARMED, %u INIT, %u DOWN; %u disabled; %u reduced\n",
	    pc.linked, pc.state[PORT_STATE_ACTIVE], pc.state[PORT_STATE_ARMED],
	    pc.state[PORT_STATE_INIT], pc.state[PORT_STATE_DOWN], pc.disabled, pc.reduced);
	for (unsigned i = 0; i < pc.nrates; i++)
		fprintf(out, "%s: %u\n", rates[i], rate_n[i]);
}

/* The switch a NODE argument names (GUID or description), or every switch (TOPO_NONE). */
static bool switch_arg(const struct topo *t, const char *arg, uint32_t *sw, FILE *out)
{
	*sw = TOPO_NONE;
	if (!arg)
		return true;
	char *e;
	uint64_t g = strtoull(arg, &e, 0);
	uint32_t n = !*e ? u64map_get(&t->by_guid, g) : U64MAP_NONE;
	for (uint32_t i = 0; n == U64MAP_NONE && i < t->nnodes; i++)
		if (!strcmp(t->nodes[i].desc, arg))
			n = i;
	if (n == U64MAP_NONE || !topo_is_switch(t, n)) {
		fprintf(out, "error: no switch \"%s\" (a switch's GUID or description)\n", arg);
		return false;
	}
	*sw = t->nodes[n].sw;
	return true;
}

/* The LIDs of the non-switch ports that a switch forwards out of each of its ports. */
static void lids_per_port(const struct topo *t, const struct topo_switch *sw, uint32_t *count)
{
	memset(count, 0, 256 * sizeof(uint32_t));
	for (uint32_t lid = 1; lid < sw->lft_size && lid < TOPO_LID_COUNT; lid++) {
		uint32_t p = t->lid_port[lid];
		if (p == TOPO_NONE || topo_is_switch(t, t->ports[p].node) || sw->lft[lid] == 0xff)
			continue;
		count[sw->lft[lid]]++;
	}
}

/* switchbalance [verbose] [NODE]: per switch, the hosts' LIDs each port to another switch
 * carries (ports to hosts carry their host's: not a matter of balance); unbalanced when
 * two such ports differ by more than one */
static void switchbalance(struct control *c, int argc, char **argv, FILE *out, bool json)
{
	bool verbose = argc > 1 && !strcmp(argv[1], "verbose");
	const char *arg = argc > 1 + verbose ? argv[1 + verbose] : NULL;
	struct sm *sm = c->rl->sm;
	sm_routing_wait(sm); /* the tables it fills are the ones counted */
	const struct topo *t = sm_fabric(sm);
	uint32_t only;
	if (argc > 2 + verbose || !switch_arg(t, arg, &only, out))
		return;
	unsigned unbalanced = 0, shown = 0;
	uint32_t count[256];
	if (json)
		fputc('[', out);
	for (uint32_t s = 0; s < t->nsws; s++) {
		const struct topo_switch *sw = &t->sws[s];
		const struct topo_node *nd = &t->nodes[sw->node];
		if ((only != TOPO_NONE && s != only) || !nd->present || !sw->lft)
			continue;
		lids_per_port(t, sw, count);
		uint32_t lo = UINT32_MAX, hi = 0;
		for (unsigned num = 1; num <= nd->nports; num++) {
			uint32_t pp = topo_reader_peer(t, nd->first_port + num);
			if (pp == TOPO_NONE || !topo_is_switch(t, t->ports[pp].node))
				continue;
			lo = count[num] < lo ? count[num] : lo;
			hi = count[num] > hi ? count[num] : hi;
		}
		bool bad = hi >= lo && hi - lo > 1;
		unbalanced += bad;
		if (!bad && !verbose && only == TOPO_NONE)
			continue;
		if (json) {
			fprintf(out, "%s{\"switch\":", shown ? "," : "");
			put_node(out, nd, true);
			fprintf(out, ",\"guid\":\"0x%016" PRIx64 "\",\"balanced\":%s,\"ports\":{",
			        nd->guid, bad ? "false" : "true");
		} else {
			fprintf(out, "%s switch 0x%016" PRIx64 " ", bad ? "Unbalanced" : "Balanced",
			        nd->guid);
			put_node(out, nd, false);
			fputc('\n', out);
		}
		bool firstp = true;
		for (unsigned num = 1; num <= nd->nports; num++) {
			uint32_t pp = topo_reader_peer(t, nd->first_port + num);
			if (pp == TOPO_NONE || !topo_is_switch(t, t->ports[pp].node))
				continue;
			if (json)
				fprintf(out, "%s\"%u\":%u", firstp ? "" : ",", num, count[num]);
			else
				fprintf(out, "  port %u: %u LIDs\n", num, count[num]);
			firstp = false;
		}
		if (json)
			fputs("}}", out);
		shown++;
	}
	if (json)
		fputs("]\n", out);
	else
		fprintf(out, "%u unbalanced switch(es)\n", unbalanced);
}

/* lidbalance [NODE]: per switch and host port with several LIDs (LMC > 0), whether its LIDs
 * leave by ports (and towards neighbours) that differ in count by more than one */
static void lidbalance(struct control *c, const char *arg, FILE *out, bool json)
{
	struct sm *sm = c->rl->sm;
	sm_routing_wait(sm);
	const struct topo *t = sm_fabric(sm);
	uint32_t only;
	if (!switch_arg(t, arg, &only, out))
		return;
	unsigned unbalanced = 0, checked = 0;
	if (json)
		fputs("{\"unbalanced\":[", out);
	for (uint32_t s = 0; s < t->nsws; s++) {
		const struct topo_switch *sw = &t->sws[s];
		const struct topo_node *nd = &t->nodes[sw->node];
		if ((only != TOPO_NONE && s != only) || !nd->present || !sw->lft)
			continue;
		for (uint32_t p = 0; p < t->nports; p++) {
			const struct topo_port *pt = &t->ports[p];
			if (!pt->lid || !pt->lmc || topo_is_switch(t, pt->node) ||
			    !t->nodes[pt->node].present)
				continue;
			/* its LIDs' egress ports (2^LMC of them at most, 128) and their counts */
			uint8_t port_of[128];
			unsigned n_of[128], used = 0, lo = UINT32_MAX, hi = 0;
			for (uint32_t l = pt->lid;
			     l < pt->lid + (1u << pt->lmc) && l < sw->lft_size; l++) {
				if (sw->lft[l] == 0xff)
					continue;
				unsigned i = 0;
				while (i < used && port_of[i] != sw->lft[l])
					i++;
				if (i == used) {
					port_of[used] = sw->lft[l];
					n_of[used++] = 0;
				}
				n_of[i]++;
			}
			for (unsigned i = 0; i < used; i++) {
				lo = n_of[i] < lo ? n_of[i] : lo;
				hi = n_of[i] > hi ? n_of[i] : hi;
			}
			checked++;
			if (!used || hi - lo <= 1)
				continue;
			unbalanced++;
			if (json) {
				fprintf(out,
				        "%s{\"switch\":\"0x%016" PRIx64
				        "\",\"port_guid\":\"0x%016" PRIx64
				        "\",\"ports\":%u,\"min\":%u,\"max\":%u}",
				        unbalanced > 1 ? "," : "", nd->guid, topo_port_guid(t, p),
				        used, lo, hi);
			} else {
				fprintf(out,
				        "Unbalanced: switch 0x%016" PRIx64 " sends the %u LIDs of ",
				        nd->guid, 1u << pt->lmc);
				put_node(out, &t->nodes[pt->node], false);
				fprintf(out, " port %u over %u ports, %u to %u each\n", pt->num,
				        used, lo, hi);
			}
		}
	}
	if (json)
		fprintf(out, "],\"checked\":%u}\n", checked);
	else if (!checked)
		fprintf(out, "no port holds more than one LID (LMC 0): nothing to balance\n");
	else
		fprintf(out, "%u of %u (switch, port) pairs unbalanced\n", unbalanced, checked);
}

bool console_command(struct control *c, int argc, char **argv, FILE *out, bool json)
{
	struct sm *sm = c->rl->sm;
	if (!strcmp(argv[0], "querylid") && argc == 2) {
		querylid(c, argv[1], out, json);
	} else if (!strcmp(argv[0], "portstatus") && argc <= 2) {
		portstatus(c, argc == 2 ? argv[1] : NULL, out, json);
	} else if (!strcmp(argv[0], "switchbalance") && argc <= 3) {
		switchbalance(c, argc, argv, out, json);
	} else if (!strcmp(argv[0], "lidbalance") && argc <= 2) {
		lidbalance(c, argc == 2 ? argv[1] : NULL, out, json);
	} else if (!strcmp(argv[0], "priority") && argc <= 2) {
		if (argc == 2) {
			char *e;
			unsigned long v = strtoul(argv[1], &e, 0);
			if (*e || v > 15) {
				fprintf(out, "error: priority 0-15, not \"%s\"\n", argv[1]);
				return true;
			}
			sm_set_priority(sm, (uint8_t)v);
			log_notice(c->rl->log, "control",
			           "SM priority now %lu (until a reload or restart: sm_priority "
			           "in the file stays)",
			           v);
		}
		fprintf(out, json ? "{\"priority\":%u}\n" : "%u\n", sm_info(sm).priority);
	} else if (!strcmp(argv[0], "update-desc") && argc == 1) {
		unsigned n = sm_update_descs(sm);
		if (!n) {
			fprintf(out, "error: this SM is not master: it reads no node\n");
			return true;
		}
		fprintf(out,
		        json ? "{\"asked\":%u}\n" : "%u nodes asked for their NodeDescription\n",
		        n);
	} else {
		return false;
	}
	return true;
}
