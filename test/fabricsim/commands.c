/* The control language of fabricsim: the admin socket, `fabricsim ctl`, and script files.
 * One command per line; the answer is text. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents.h"
#include "mad/mad_types.h"
#include "server.h"
#include "topology.h"
#include "verify.h"

/* "pkeys [NODE]": what the SMAs hold, so that a test compares every port's table with an
 * SM's policy in one call instead of an smpquery per port. */
static void put_pkeys(const struct fabric *f, const char *only, FILE *o)
{
	for (uint32_t i = 0; i < f->nports; i++) {
		const struct fs_port *pt = &f->ports[i];
		const struct fs_node *n = fs_node_of(f, i);
		bool sw0 = n->type == NODE_TYPE_SWITCH && pt->num == 0;
		if (!n->present || (!sw0 && pt->peer == FS_NONE) || (only && strcmp(only, n->name)))
			continue;
		fprintf(o, "%s %u 0x%016llx", n->name, pt->num, (unsigned long long)pt->guid);
		for (unsigned k = 0, cap = fabric_pkey_cap(f, i); k < cap; k++)
			if (pt->pkeys[k])
				fprintf(o, " 0x%04x", pt->pkeys[k]);
		fputc('\n', o);
	}
}

/* The endpoints "lids" and "mkeys" list: present CA ports with a cable, switch port 0. */
static bool listed_endpoint(const struct fabric *f, uint32_t i)
{
	const struct fs_port *pt = &f->ports[i];
	if (!fs_node_of(f, i)->present)
		return false;
	return fs_is_switch(f, pt->node) ? pt->num == 0 : pt->peer != FS_NONE;
}

static const char help[] =
    "link down|up NODE PORT      pull or reconnect the cable at a port\n"
    "node remove|add NODE        take a node out of the fabric, or bring it back reset\n"
    "drop PERCENT [NODE PORT]    lose MADs crossing a port, or everywhere\n"
    "train NODE PORT RATE|none   the cable carries at most RATE (e.g. 4xHDR, 2xNDR, EDR):\n"
    "                            the link trains again below what its ends could run\n"
    "desc NODE HEX               its NodeDescription becomes those bytes (up to 64, no 00),\n"
    "                            as a host's root may set any: quotes, newlines, not UTF-8;\n"
    "                            its ports with IsOtherLocalChangesNoticeSupported send\n"
    "                            trap 144 with NodeDescriptionChange\n"
    "legacy-sma NODE on|off      its SMA predates IBA 1.5: PortInfo with AttributeModifier\n"
    "                            bit 31 (SMSupportExtendedSpeeds) gets \"invalid field\"\n"
    "cc NODE on|off              off: the node has no congestion control agent (the kernel\n"
    "                            answers its class 0x21 Gets and Sets \"unsupported\")\n"
    "cc-sets                     CC settings Sets taken, fabric-wide\n"
    "cap-notice NODE on|off      its ports send trap 144 when IsSM changes (off: an SMA\n"
    "                            without IsCapabilityMaskNoticeSupported)\n"
    "refuse NODE ATTR            its SMA answers Sets of attribute ATTR (e.g. 0x18) with\n"
    "                            \"unsupported\" (0: none); prints how many it refused\n"
    "errors NODE PORT COUNTER N  raise a port's error counter by N, as a bad cable would\n"
    "                            (symbol_errors, link_error_recovery, link_downed,\n"
    "                            rcv_errors, rcv_remote_phys_errors, rcv_switch_relay_errors,\n"
    "                            xmit_discards, xmit_constraint_errors,\n"
    "                            rcv_constraint_errors, local_link_integrity_errors,\n"
    "                            excessive_buffer_overruns, vl15_dropped, xmit_wait)\n"
    "babble NODE PORT RATE       the port sends trap 129 RATE times a second while its\n"
    "                            link is up, heedless of TrapRepress (0: stops)\n"
    "vport add NODE PORT INDEX [GUID] [lid]\n"
    "                            a VF appears at vport INDEX of a port with virtualization\n"
    "                            (vports=N in the spec): its GUID (default derived), and\n"
    "                            \"lid\" if it asks for a LID of its own; trap 1146\n"
    "vport remove NODE PORT INDEX  the VF goes\n"
    "vports NODE                 each port's virtualization (enabled, VPortStateChange), then\n"
    "                            each vport not Down: PORT INDEX GUID LID STATE own|shared\n"
    "                            P_KEYS\n"
    "delay MS                    add a delay to every answer\n"
    "latency HOP_US SMA_US       per-hop latency and per-node SMA service time\n"
    "sets NODE                   SubnSets the programs attached at NODE sent\n"
    "traps on|off                traps reach the SM (on, the default) or are all lost (off)\n"
    "silent on|off               unroutable MADs vanish (on) or return status 110 (off)\n"
    "stats                       MAD counts and clients\n"
    "smp-counts                  SMP requests clients sent, by method and attribute:\n"
    "                            Get|Set ATTR COUNT (what a sweep cost, per attribute)\n"
    "lft-sets [NODE]             LFT blocks written by Set, per switch\n"
    "lft-order                   when each switch took its last LFT Set (a sequence number\n"
    "                            over the fabric): the order an SM wrote the switches in\n"
    "journal [SEQ]               what happened from event SEQ on, by the simulator's clock:\n"
    "                            SEQ TIME cable|node|phys|state|lft NODE PORT DETAIL\n"
    "                            (cables and nodes by ctl; phys, state and LFT blocks by\n"
    "                            SMs' Sets; the last 65,536 events)\n"
    "port NODE PORT              a port's state, LID and peer\n"
    "lft NODE                    a switch's LFT: LID port, for every set entry\n"
    "lids                        every endpoint's GUID, LID, LMC and node\n"
    "send NODE PORT DLID         a data packet from a port to DLID through the tables and\n"
    "                            port states as they are: where it arrives, or why it drops\n"
    "mcast                       every MLID in the switches' MFTs and the end ports whose\n"
    "                            attachment bit is set (port GUIDs)\n"
    "pkeys [NODE]                every cabled port's P_Key table (non-zero entries, in\n"
    "                            index order): node, port, GUID, keys\n"
    "mkeys                       every endpoint's GUID, M_Key, protection, lease, M_Key\n"
    "                            violations and node\n"
    "lid NODE PORT LID [LMC]     put a LID on a port, as a previous SM might have\n"
    "verify [--json] [--sl N] [--path-sl FILE] [--all]  check the programmed fabric (see "
    "fabricsim(1))\n"
    "dump                        the current topology as a net file\n";

static int node_port(struct fabric *f, const char *node, const char *port, uint32_t *out, FILE *o)
{
	uint32_t n = fabric_find_node(f, node);
	if (n == FS_NONE) {
		fprintf(o, "no node \"%s\"\n", node);
		return -1;
	}
	char *e;
	unsigned long num = strtoul(port ? port : "", &e, 10);
	uint32_t p = (port && !*e) ? fabric_port(f, n, (unsigned)num) : FS_NONE;
	if (p == FS_NONE) {
		fprintf(o, "node \"%s\" has no port \"%s\"\n", node, port ? port : "");
		return -1;
	}
	*out = p;
	return 0;
}

static const char *const vstate_names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE"};

static void put_vports(const struct fabric *f, uint32_t node, FILE *o)
{
	const struct fs_node *n = &f->nodes[node];
	for (unsigned num = 1; num <= n->nports; num++) {
		uint32_t p = fabric_port(f, node, num);
		const struct fs_port *pt = &f->ports[p];
		if (!pt->vport_cap)
			continue;
		fprintf(o, "port %u cap %u %s change %d\n", num, pt->vport_cap,
		        pt->virt_enable ? "enabled" : "disabled", pt->vport_change);
		for (unsigned i = 0; i < pt->vport_cap; i++) {
			uint8_t st = fabric_vport_state(f, p, i);
			if (st == PORT_STATE_DOWN && (i || !pt->virt_enable))
				continue;
			const struct fs_vport *v = pt->vports ? &pt->vports[i] : NULL;
			fprintf(o, "%u %u 0x%016llx %u %s %s", num, i,
			        (unsigned long long)(i && v ? v->guid : pt->guid),
			        fabric_vport_lid(f, p, i), st < 5 ? vstate_names[st] : "?",
			        i && v && v->lid_required ? "own" : "shared");
			const uint16_t *pk = i && v ? v->pkeys : pt->pkeys;
			unsigned cap = i ? FS_VPORT_PKEYS : fabric_pkey_cap(f, p);
			for (unsigned k = 0; k < cap; k++)
				if (pk[k])
					fprintf(o, " 0x%04x", pk[k]);
			fputc('\n', o);
		}
	}
}

/* vport add|remove NODE PORT INDEX ..., vports NODE */
static int vport_command(struct fabric *f, int argc, char **argv, FILE *o)
{
	uint32_t p;
	if (!strcmp(argv[0], "vports")) {
		uint32_t n = fabric_find_node(f, argv[1]);
		if (n == FS_NONE) {
			fprintf(o, "no node \"%s\"\n", argv[1]);
			return -1;
		}
		put_vports(f, n, o);
		return 0;
	}
	if (node_port(f, argv[2], argv[3], &p, o) < 0)
		return -1;
	char *e;
	unsigned long idx = strtoul(argv[4], &e, 10);
	if (*e || idx > 0xffff) {
		fprintf(o, "INDEX: a vport number\n");
		return -1;
	}
	char why[128];
	int rc;
	if (!strcmp(argv[1], "remove")) {
		rc = argc == 5 ? fabric_vport_remove(f, p, (unsigned)idx, why, sizeof(why)) : -1;
	} else {
		uint64_t guid = 0;
		bool lid = false;
		for (int i = 5; i < argc; i++) {
			if (!strcmp(argv[i], "lid")) {
				lid = true;
				continue;
			}
			guid = strtoull(argv[i], &e, 0);
			if (*e || !guid) {
				fprintf(o, "GUID: a number like 0x0002c90300001234, not 0\n");
				return -1;
			}
		}
		rc = fabric_vport_add(f, p, (unsigned)idx, guid, lid, why, sizeof(why));
	}
	if (rc < 0)
		fprintf(o, "%s\n",
		        argc == 5 || strcmp(argv[1], "remove")
		            ? why
		            : "usage: vport remove NODE PORT INDEX");
	return rc;
}

int fs_server_command(struct fs_server *s, const char *line, char **out, size_t *outlen)
{
	struct fabric *f = fs_server_fabric(s);
	struct fs_server_opts *so = fs_server_opts(s);
	FILE *o = open_memstream(out, outlen);
	if (!o)
		return -1;
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", line);
	char *argv[16];
	int argc = 0;
	for (char *t = strtok(buf, " \t\r\n"); t && argc < 16; t = strtok(NULL, " \t\r\n"))
		argv[argc++] = t;
	int rc = 0;
	uint32_t p;
	if (argc == 0 || !strcmp(argv[0], "help")) {
		fputs(help, o);
	} else if (!strcmp(argv[0], "link") && argc == 4 &&
	           (!strcmp(argv[1], "down") || !strcmp(argv[1], "up"))) {
		rc = node_port(f, argv[2], argv[3], &p, o);
		if (!rc) {
			fs_journal_add(f, FS_J_CABLE, p, !strcmp(argv[1], "up"));
			fabric_set_link(f, p, !strcmp(argv[1], "up"));
		}
	} else if (!strcmp(argv[0], "node") && argc == 3 &&
	           (!strcmp(argv[1], "remove") || !strcmp(argv[1], "add"))) {
		uint32_t n = fabric_find_node(f, argv[2]);
		if (n == FS_NONE) {
			fprintf(o, "no node \"%s\"\n", argv[2]);
			rc = -1;
		} else if (!strcmp(argv[1], "remove")) {
			fs_journal_add(f, FS_J_NODE, n, 0);
			fabric_remove_node(f, n);
		} else {
			fs_journal_add(f, FS_J_NODE, n, 1);
			fabric_restore_node(f, n);
		}
	} else if (!strcmp(argv[0], "drop") && (argc == 2 || argc == 4)) {
		unsigned pct = (unsigned)atoi(argv[1]);
		if (pct > 100) {
			fprintf(o, "percent 0 to 100\n");
			rc = -1;
		} else if (argc == 2) {
			so->drop_percent = pct;
		} else if (!(rc = node_port(f, argv[2], argv[3], &p, o))) {
			f->ports[p].drop_percent = pct;
			if (f->ports[p].peer != FS_NONE)
				f->ports[f->ports[p].peer].drop_percent = pct;
		}
	} else if (!strcmp(argv[0], "train") && argc == 4) {
		uint8_t w = 0;
		unsigned sp = LINK_SPEEDS;
		if ((rc = node_port(f, argv[1], argv[2], &p, o)) == 0) {
			if (f->ports[p].peer == FS_NONE) {
				fprintf(o, "no cable at that port\n");
				rc = -1;
			} else if (strcmp(argv[3], "none") &&
			           fabric_parse_rate(argv[3], &w, &sp) < 0) {
				fprintf(
				    o,
				    "RATE: WIDTHxSPEED (1x 2x 4x 8x 12x; SDR ... XDR), or none\n");
				rc = -1;
			} else {
				fabric_cable_limit(f, p, w, sp);
			}
		}
	} else if (!strcmp(argv[0], "desc") && argc == 3) {
		/* hex, because the interesting bytes (space, newline) would not survive argv */
		uint32_t n = fabric_find_node(f, argv[1]);
		size_t hl = strlen(argv[2]);
		char d[sizeof(f->nodes[0].desc)] = {0};
		bool ok = n != FS_NONE && hl % 2 == 0 && hl / 2 < sizeof(d);
		for (size_t i = 0; ok && i < hl / 2; i++) {
			char two[3] = {argv[2][2 * i], argv[2][2 * i + 1], 0};
			ok = isxdigit((unsigned char)two[0]) && isxdigit((unsigned char)two[1]);
			d[i] = (char)strtoul(two, NULL, 16);
			ok = ok && d[i];
		}
		if (!ok) {
			fprintf(o,
			        "desc NODE HEX: a node and 1-64 bytes in hex, none of them 00\n");
			rc = -1;
		} else {
			fabric_set_desc(f, n, d);
		}
	} else if (!strcmp(argv[0], "legacy-sma") && argc == 3) {
		uint32_t n = fabric_find_node(f, argv[1]);
		if (n == FS_NONE) {
			fprintf(o, "no node \"%s\"\n", argv[1]);
			rc = -1;
		} else {
			f->nodes[n].legacy_sma = !strcmp(argv[2], "on");
		}
	} else if (!strcmp(argv[0], "cc") && argc == 3 &&
	           (!strcmp(argv[2], "on") || !strcmp(argv[2], "off"))) {
		uint32_t n = fabric_find_node(f, argv[1]);
		if (n == FS_NONE) {
			fprintf(o, "no node \"%s\"\n", argv[1]);
			rc = -1;
		} else {
			for (unsigned num = 0; num <= f->nodes[n].nports; num++) {
				uint32_t mp = fabric_port(f, n, num);
				if (mp != FS_NONE)
					f->ports[mp].cc_off = !strcmp(argv[2], "off");
			}
		}
	} else if (!strcmp(argv[0], "cc-sets") && argc == 1) {
		fprintf(o, "%" PRIu64 "\n", f->cc_sets);
	} else if (!strcmp(argv[0], "cap-notice") && argc == 3) {
		uint32_t n = fabric_find_node(f, argv[1]);
		if (n == FS_NONE) {
			fprintf(o, "no node \"%s\"\n", argv[1]);
			rc = -1;
		} else {
			const struct fs_node *nd = &f->nodes[n];
			unsigned np = nd->nports + (nd->type == NODE_TYPE_SWITCH); /* port 0 */
			for (unsigned i = 0; i < np; i++) {
				struct fs_port *pt = &f->ports[nd->first_port + i];
				if (!strcmp(argv[2], "on"))
					pt->pi.capability_mask |= PORT_CAP_IS_CAP_MASK_NOTICE;
				else
					pt->pi.capability_mask &= ~PORT_CAP_IS_CAP_MASK_NOTICE;
			}
		}
	} else if (!strcmp(argv[0], "refuse") && argc == 3) {
		uint32_t n = fabric_find_node(f, argv[1]);
		char *e;
		unsigned long a = strtoul(argv[2], &e, 0);
		if (n == FS_NONE || *e || a > 0xffff) {
			fprintf(
			    o, "refuse NODE ATTR: a node and an attribute ID (0x18, 0 for none)\n");
			rc = -1;
		} else {
			f->nodes[n].refuse_attr = (uint16_t)a;
			fprintf(o, "refused so far %u\n", f->nodes[n].refused);
		}
	} else if (!strcmp(argv[0], "errors") && argc == 5) {
		char *e;
		unsigned long long n = strtoull(argv[4], &e, 0);
		uint64_t *c = NULL;
		if (!(rc = node_port(f, argv[1], argv[2], &p, o))) {
			struct fs_counters *k = &f->ports[p].cnt;
			const struct {
				const char *name;
				uint64_t *v;
			} names[] = {
			    {"symbol_errors", &k->symbol_errors},
			    {"link_error_recovery", &k->link_error_recovery},
			    {"link_downed", &k->link_downed},
			    {"rcv_errors", &k->rcv_errors},
			    {"rcv_remote_phys_errors", &k->rcv_remote_phys_errors},
			    {"rcv_switch_relay_errors", &k->rcv_switch_relay_errors},
			    {"xmit_discards", &k->xmit_discards},
			    {"xmit_constraint_errors", &k->xmit_constraint_errors},
			    {"rcv_constraint_errors", &k->rcv_constraint_errors},
			    {"local_link_integrity_errors", &k->local_link_integrity_errors},
			    {"excessive_buffer_overruns", &k->excessive_buffer_overruns},
			    {"vl15_dropped", &k->vl15_dropped},
			    {"xmit_wait", &k->xmit_wait}};
			for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
				if (!strcmp(argv[3], names[i].name))
					c = names[i].v;
			if (!c || *e || !*argv[4]) {
				fprintf(
				    o,
				    "errors NODE PORT COUNTER N: no counter \"%s\" or N \"%s\"\n",
				    argv[3], argv[4]);
				rc = -1;
			} else {
				*c += n;
				fprintf(o, "%s %s port %s: %" PRIu64 "\n", argv[3], argv[1],
				        argv[2], *c);
			}
		}
	} else if (!strcmp(argv[0], "babble") && argc == 4) {
		char *e;
		double rate = strtod(argv[3], &e);
		if (!(rc = node_port(f, argv[1], argv[2], &p, o))) {
			if (*e || !(rate >= 0 && rate <= 100000)) {
				fprintf(o, "RATE: traps a second, 0 to 100000\n");
				rc = -1;
			} else {
				rc = fs_server_babble(s, p, rate);
			}
		}
	} else if (!strcmp(argv[0], "delay") && argc == 2) {
		so->reply_delay_ns = (uint32_t)(atof(argv[1]) * 1e6);
	} else if (!strcmp(argv[0], "latency") && argc == 3) {
		so->hop_latency_ns = (uint32_t)(atof(argv[1]) * 1e3);
		so->sma_service_ns = (uint32_t)(atof(argv[2]) * 1e3);
	} else if (!strcmp(argv[0], "traps") && argc == 2 &&
	           (!strcmp(argv[1], "on") || !strcmp(argv[1], "off"))) {
		so->lose_traps = !strcmp(argv[1], "off");
	} else if (!strcmp(argv[0], "silent") && argc == 2) {
		so->silent_drops = !strcmp(argv[1], "on");
	} else if (!strcmp(argv[0], "stats")) {
		const struct fs_stats *st = fs_server_stats(s);
		fprintf(o,
		        "nodes %u switches %u ports %u clients %u\n"
		        "mads_in %" PRIu64 " delivered %" PRIu64 " sma_answers %" PRIu64
		        " bounced %" PRIu64 " lost %" PRIu64 " traps %" PRIu64 "\n"
		        "sm_deactivated %" PRIu64 "\n"
		        "smp_sets %" PRIu64 "\n",
		        f->nnodes, f->nsws, f->nports, fs_server_clients(s), st->mads_in,
		        st->mads_delivered, st->sma_answers, st->bounced, st->lost, st->traps_sent,
		        f->sm_deactivated, st->smp_sets);
	} else if (!strcmp(argv[0], "smp-counts") && argc == 1) {
		/* SMP requests clients sent, by method and attribute: "Get 0x0015 N" */
		const struct fs_stats *st = fs_server_stats(s);
		for (unsigned m = 0; m < 2; m++)
			for (unsigned a = 0; a < FS_SMP_ATTRS; a++)
				if (st->smp_by_attr[m][a]) {
					char id[8] = "other";
					if (a < FS_SMP_ATTRS - 1)
						snprintf(id, sizeof(id), "0x%04x", a);
					fprintf(o, "%s %s %" PRIu64 "\n", m ? "Set" : "Get", id,
					        st->smp_by_attr[m][a]);
				}
	} else if (!strcmp(argv[0], "sets") && argc == 2) {
		uint32_t n = fabric_find_node(f, argv[1]);
		if (n == FS_NONE) {
			fprintf(o, "no node \"%s\"\n", argv[1]);
			rc = -1;
		} else {
			fprintf(o, "%" PRIu64 "\n", f->nodes[n].smp_sets);
		}
	} else if (!strcmp(argv[0], "lft-sets")) {
		uint64_t total = 0;
		for (uint32_t i = 0; i < f->nsws; i++) {
			const struct fs_node *n = &f->nodes[f->sws[i].node];
			if (argc > 1 && strcmp(n->name, argv[1]) != 0)
				continue;
			fprintf(o, "%s %" PRIu64 "\n", n->name, f->sws[i].lft_sets);
			total += f->sws[i].lft_sets;
		}
		fprintf(o, "total %" PRIu64 "\n", total);
	} else if (!strcmp(argv[0], "journal") && argc <= 2) {
		fs_journal_print(f, o, argc == 2 ? strtoull(argv[1], NULL, 10) : 0);
	} else if (!strcmp(argv[0], "lft-order")) {
		for (uint32_t i = 0; i < f->nsws; i++)
			if (f->sws[i].lft_sets)
				fprintf(o, "%s %" PRIu64 "\n", f->nodes[f->sws[i].node].name,
				        f->sws[i].lft_last);
	} else if (!strcmp(argv[0], "port") && argc == 3) {
		if (!(rc = node_port(f, argv[1], argv[2], &p, o))) {
			const struct fs_port *pt = &f->ports[p];
			const struct mad_port_info *lp = &f->ports[fabric_lid_port(f, p)].pi;
			fprintf(o, "state %s phys %u lid %u lmc %u sm_lid %u",
			        port_state_str(pt->pi.port_state), pt->pi.phys_state, lp->lid,
			        lp->lmc, lp->master_sm_lid);
			if (pt->peer != FS_NONE)
				fprintf(o, " peer \"%s\" %u", fs_node_of(f, pt->peer)->name,
				        f->ports[pt->peer].num);
			fputc('\n', o);
		}
	} else if (!strcmp(argv[0], "lft") && argc == 2) {
		uint32_t n = fabric_find_node(f, argv[1]);
		if (n == FS_NONE || !fs_is_switch(f, n)) {
			fprintf(o, "no switch \"%s\"\n", argv[1]);
			rc = -1;
		} else {
			const struct fs_switch *sw = &f->sws[f->nodes[n].sw];
			fprintf(o, "# LinearFDBTop %u\n", sw->si.linear_fdb_top);
			for (uint32_t l = 0; l < sw->lft_size && l <= sw->si.linear_fdb_top; l++)
				if (sw->lft[l] != 0xff)
					fprintf(o, "%u %u\n", l, sw->lft[l]);
		}
	} else if (!strcmp(argv[0], "lid") && (argc == 4 || argc == 5)) {
		/* what a previous SM (or a confused one) left on a port */
		if (!(rc = node_port(f, argv[1], argv[2], &p, o))) {
			uint32_t lp = fabric_lid_port(f, p);
			struct mad_port_info *pi = &f->ports[lp].pi;
			uint16_t old = pi->lid;
			uint8_t old_lmc = pi->lmc;
			pi->lid = (uint16_t)strtoul(argv[3], NULL, 0);
			pi->lmc = argc == 5 ? (uint8_t)atoi(argv[4]) : 0;
			fabric_lid_update(f, lp, old, old_lmc);
		}
	} else if (!strcmp(argv[0], "send") && argc == 4) {
		/* the data plane as a packet meets it (ACTIVE links only): what an HCA's traffic on
		 * a path does when a link fails and nobody has reprogrammed anything yet */
		uint32_t from;
		char *e;
		unsigned long dlid = strtoul(argv[3], &e, 0);
		if (node_port(f, argv[1], argv[2], &from, o) < 0) {
			rc = -1;
		} else if (*e || !dlid || dlid > 0xbfff) {
			fprintf(o, "bad DLID \"%s\"\n", argv[3]);
			rc = -1;
		} else {
			struct route r;
			if (route_lid(f, from, (uint16_t)dlid, false, &r) == 0) {
				fprintf(o, "delivered to \"%s\" port %u in %u hops\n",
				        f->nodes[f->ports[r.arrival].node].name,
				        f->ports[r.arrival].num, r.hops);
			} else {
				fprintf(o, "dropped after %u hops: %s\n", r.hops, r.why);
				rc = -1;
			}
		}
	} else if (!strcmp(argv[0], "lids")) {
		for (uint32_t i = 0; i < f->nports; i++) {
			if (!listed_endpoint(f, i))
				continue;
			const struct fs_port *pt = &f->ports[i];
			const struct fs_node *n = fs_node_of(f, i);
			fprintf(o, "0x%016llx %u %u %s\n", (unsigned long long)pt->guid, pt->pi.lid,
			        pt->pi.lmc, n->name);
		}
	} else if ((!strcmp(argv[0], "vport") && argc >= 5 && argc <= 7 &&
	            (!strcmp(argv[1], "add") || !strcmp(argv[1], "remove"))) ||
	           (!strcmp(argv[0], "vports") && argc == 2)) {
		rc = vport_command(f, argc, argv, o);
	} else if (!strcmp(argv[0], "mcast") && argc == 1) {
		verify_print_mcast(f, o);
	} else if (!strcmp(argv[0], "pkeys") && argc <= 2) {
		put_pkeys(f, argc == 2 ? argv[1] : NULL, o);
	} else if (!strcmp(argv[0], "mkeys")) {
		for (uint32_t i = 0; i < f->nports; i++) {
			if (!listed_endpoint(f, i))
				continue;
			const struct fs_port *pt = &f->ports[i];
			const struct fs_node *n = fs_node_of(f, i);
			fprintf(o, "0x%016llx 0x%016llx %u %u %u %s\n",
			        (unsigned long long)pt->guid, (unsigned long long)pt->pi.mkey,
			        pt->pi.mkey_protect_bits, pt->pi.mkey_lease_period,
			        pt->pi.mkey_violations, n->name);
		}
	} else if (!strcmp(argv[0], "verify")) {
		struct verify_opts vo = {0};
		bool json = false;
		for (int i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "--json"))
				json = true;
			else if (!strcmp(argv[i], "--all"))
				vo.all = true;
			else if (!strcmp(argv[i], "--sl") && i + 1 < argc)
				vo.sl = (uint8_t)atoi(argv[++i]);
			else if (!strcmp(argv[i], "--path-sl") && i + 1 < argc)
				vo.path_sl = argv[++i];
		}
		struct verify_report rep;
		verify_run(f, &vo, &rep);
		if (json)
			verify_print_json(&rep, o);
		else
			verify_print(&rep, o);
		rc = rep.ok ? 0 : -1;
		verify_report_free(&rep);
	} else if (!strcmp(argv[0], "dump")) {
		char tmp[] = "/tmp/fabricsim-dump.XXXXXX";
		int fd = mkstemp(tmp);
		struct fs_error err;
		if (fd < 0 || netfile_write(f, tmp, &err) < 0) {
			fprintf(o, "dump failed\n");
			rc = -1;
		} else {
			FILE *in = fopen(tmp, "r");
			char l[512];
			while (in && fgets(l, sizeof(l), in))
				fputs(l, o);
			if (in)
				fclose(in);
		}
		if (fd >= 0) {
			unlink(tmp);
			close(fd);
		}
	} else {
		fprintf(o, "unknown command \"%s\"; try help\n", argv[0]);
		rc = -1;
	}
	fclose(o);
	return rc;
}
