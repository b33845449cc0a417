/* Every port's counters, state, rate and peer under infiniband_exporter's names and labels
 * (github.com/treydock/infiniband_exporter, v0.10: data in bytes, guid and port on every
 * port series, the name and peer on *_info series that rules join on guid and port), so that
 * a site's dashboards, recording rules and alerts built on that exporter work on ibsmd's
 * metrics unchanged, without a second tool sweeping the fabric with perfquery. The figures
 * are the performance manager's (pm/): the 64-bit totals it keeps, read at pm_interval.
 *
 * The text format wants each family's samples together: one pass over the chosen ports per
 * family. Ports: those with a link, switches' first, at most metrics_max_ports. */
#include "daemon/metrics.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mad/link_speed.h"
#include "pm/pm.h"
#include "util/escape.h"

#define IB "infiniband_"

/* the counter families: the exporter's suffix and the PM's counter */
static const struct {
	const char *suffix;
	enum pm_counter c;
	bool ext; /* only PortCountersExtended has it */
} counters[] = {
    {"transmit_data_bytes_total", PM_XMIT_DATA, false},
    {"receive_data_bytes_total", PM_RCV_DATA, false},
    {"transmit_packets_total", PM_XMIT_PKTS, false},
    {"receive_packets_total", PM_RCV_PKTS, false},
    {"unicast_transmit_packets_total", PM_XMIT_UPKTS, true},
    {"unicast_receive_packets_total", PM_RCV_UPKTS, true},
    {"multicast_transmit_packets_total", PM_XMIT_MPKTS, true},
    {"multicast_receive_packets_total", PM_RCV_MPKTS, true},
    {"symbol_error_total", PM_SYMBOL_ERRORS, false},
    {"link_error_recovery_total", PM_LINK_ERROR_RECOVERY, false},
    {"link_downed_total", PM_LINK_DOWNED, false},
    {"receive_errors_total", PM_RCV_ERRORS, false},
    {"receive_remote_physical_errors_total", PM_RCV_REMOTE_PHYS_ERRORS, false},
    {"receive_switch_relay_errors_total", PM_RCV_SWITCH_RELAY_ERRORS, false},
    {"transmit_discards_total", PM_XMIT_DISCARDS, false},
    {"transmit_constraint_errors_total", PM_XMIT_CONSTRAINT_ERRORS, false},
    {"receive_constraint_errors_total", PM_RCV_CONSTRAINT_ERRORS, false},
    {"local_link_integrity_errors_total", PM_LOCAL_LINK_INTEGRITY_ERRORS, false},
    {"excessive_buffer_overrun_errors_total", PM_EXCESSIVE_BUFFER_OVERRUNS, false},
    {"vl15_dropped_total", PM_VL15_DROPPED, false},
    {"transmit_wait_total", PM_XMIT_WAIT, false},
};

/* One lane's signalling rate in Gb/s, as the exporter's table gives it (the effective data
 * rate is mad_link_lane_mbps's). */
static double lane_raw_gbps(enum link_speed s)
{
	static const double raw[LINK_SPEEDS] = {2.5, 5, 10, 14.0625, 25.78125, 50, 100, 250};
	return s < LINK_SPEEDS ? raw[s] : 0;
}

struct chosen {
	const struct topo *t;
	const struct pm *pm;
	uint32_t *port;
	uint32_t n, nsw; /* ports, the first nsw of them switches' */
};

static bool is_sw(const struct chosen *ch, uint32_t i)
{
	return i < ch->nsw;
}

/* The GUID the exporter labels a port with: a switch's node GUID, an HCA's port GUID. */
static uint64_t label_guid(const struct topo *t, uint32_t p)
{
	const struct topo_node *nd = &t->nodes[t->ports[p].node];
	return nd->type == NODE_TYPE_SWITCH ? nd->guid : t->ports[p].guid;
}

static uint16_t lid_of(const struct topo *t, uint32_t p)
{
	return t->ports[topo_lid_port(t, p)].lid;
}

static void head(FILE *out, const char *name, const char *type, const char *text)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

/* name{guid="...",port="N" */
static void port_labels(FILE *out, const char *name, const struct topo *t, uint32_t p)
{
	fprintf(out, "%s{guid=\"0x%016" PRIx64 "\",port=\"%u\"", name, label_guid(t, p),
	        t->ports[p].num);
}

static void render_counters(FILE *out, const struct chosen *ch, bool sw)
{
	const char *fam = sw ? IB "switch_port_" : IB "hca_port_";
	for (size_t k = 0; k < sizeof(counters) / sizeof(counters[0]); k++) {
		char name[96];
		snprintf(name, sizeof(name), "%s%s", fam, counters[k].suffix);
		head(out, name, "counter",
		     "the port's counter as the performance manager totals it");
		for (uint32_t i = 0; i < ch->n; i++) {
			if (is_sw(ch, i) != sw)
				continue;
			const struct pm_port_stats *s =
			    ch->pm ? pm_port(ch->pm, ch->port[i]) : NULL;
			if (!s || !s->read || (counters[k].ext && !s->ext))
				continue; /* the exporter too leaves out what perfquery did not
				             print */
			port_labels(out, name, ch->t, ch->port[i]);
			fprintf(out, "} %" PRIu64 "\n", s->total[counters[k].c]);
		}
	}
}

/* infiniband_{switch,hca}_info: one per switch (its first chosen port) or HCA port */
static void render_info(FILE *out, const struct chosen *ch, bool sw)
{
	const struct topo *t = ch->t;
	const char *name = sw ? IB "switch_info" : IB "hca_info";
	head(out, name, "gauge",
	     sw ? "a switch: its name and LID" : "an HCA port: its name and LID");
	uint32_t last_node = TOPO_NONE;
	for (uint32_t i = 0; i < ch->n; i++) {
		uint32_t p = ch->port[i];
		if (is_sw(ch, i) != sw || (sw && t->ports[p].node == last_node))
			continue;
		last_node = t->ports[p].node;
		const struct topo_node *nd = &t->nodes[t->ports[p].node];
		fprintf(out, "%s{guid=\"0x%016" PRIx64 "\",%s=\"", name, label_guid(t, p),
		        sw ? "switch" : "hca");
		prom_put_label(out, nd->desc, sizeof(nd->desc));
		fprintf(out, "\",lid=\"%u\"} 1\n", lid_of(t, p));
	}
}

static const char *type_of(uint8_t node_type)
{
	return node_type == NODE_TYPE_SWITCH ? "SW" : node_type == NODE_TYPE_ROUTER ? "RT" : "CA";
}

/* infiniband_{switch,hca}_uplink_info: what each port's link leads to */
static void render_uplinks(FILE *out, const struct chosen *ch, bool sw)
{
	const struct topo *t = ch->t;
	const char *name = sw ? IB "switch_uplink_info" : IB "hca_uplink_info";
	head(out, name, "gauge", "the far end of the port's link");
	for (uint32_t i = 0; i < ch->n; i++) {
		if (is_sw(ch, i) != sw)
			continue;
		uint32_t p = ch->port[i], q = t->ports[p].peer;
		const struct topo_node *nd = &t->nodes[t->ports[p].node];
		const struct topo_node *far = &t->nodes[t->ports[q].node];
		port_labels(out, name, t, p);
		fprintf(out, ",%s=\"", sw ? "switch" : "hca");
		prom_put_label(out, nd->desc, sizeof(nd->desc));
		fputs("\",uplink=\"", out);
		prom_put_label(out, far->desc, sizeof(far->desc));
		fprintf(out,
		        "\",uplink_guid=\"0x%016" PRIx64
		        "\",uplink_type=\"%s\",uplink_port=\"%u\",uplink_lid=\"%u\"} 1\n",
		        label_guid(t, q), type_of(far->type), t->ports[q].num, lid_of(t, q));
	}
}

/* The rate of the link a port runs, bytes per second: the data rate, or raw signalling. */
static double port_rate(const struct topo *t, uint32_t p, bool raw)
{
	const struct mad_port_info *pi = &t->ports[p].pi;
	enum link_speed s = mad_link_speed_active(pi);
	unsigned lanes = mad_link_lanes(pi->link_width_active);
	double gbps = raw ? lane_raw_gbps(s) : (s < LINK_SPEEDS ? mad_link_lane_mbps(s) / 1e3 : 0);
	return lanes * gbps * 1e9 / 8;
}

static void render_rates(FILE *out, const struct chosen *ch, bool sw, bool raw)
{
	const struct topo *t = ch->t;
	char name[80];
	snprintf(name, sizeof(name), IB "%s%srate_bytes_per_second", sw ? "switch_port_" : "hca_",
	         raw ? "raw_" : "");
	head(out, name, "gauge",
	     raw ? "the link's signalling rate, bytes per second"
	         : "the link's data rate, bytes per second");
	for (uint32_t i = 0; i < ch->n; i++) {
		if (is_sw(ch, i) != sw)
			continue;
		uint32_t p = ch->port[i];
		if (sw)
			port_labels(out, name, t, p);
		else /* per HCA port GUID, as the exporter's per-device series */
			fprintf(out, "%s{guid=\"0x%016" PRIx64 "\"", name, label_guid(t, p));
		fprintf(out, "} %.17g\n", port_rate(t, p, raw));
	}
}

/* ibsmd's own: what the exporters do not publish */
static void render_link(FILE *out, const struct chosen *ch)
{
	const struct topo *t = ch->t;
	static const char *const names[] = {"ibsmd_port_state", "ibsmd_port_phys_state",
	                                    "ibsmd_port_width_lanes", "ibsmd_port_speed_gbps"};
	static const char *const texts[] = {
	    "PortInfo PortState: 1 down, 2 init, 3 armed, 4 active",
	    "PortInfo PortPhysicalState: 2 polling, 3 disabled, 5 link up", "lanes the link runs",
	    "one lane's data rate, Gb/s"};
	for (unsigned k = 0; k < 4; k++) {
		head(out, names[k], "gauge", texts[k]);
		for (uint32_t i = 0; i < ch->n; i++) {
			uint32_t p = ch->port[i];
			const struct mad_port_info *pi = &t->ports[p].pi;
			enum link_speed s = mad_link_speed_active(pi);
			double v = k == 0   ? pi->port_state
			           : k == 1 ? pi->phys_state
			           : k == 2 ? mad_link_lanes(pi->link_width_active)
			                    : (s < LINK_SPEEDS ? mad_link_lane_mbps(s) / 1e3 : 0);
			port_labels(out, names[k], t, p);
			fprintf(out, "} %.17g\n", v);
		}
	}
}

/* infiniband_exporter's own health series, from the performance manager's last sweep */
static void render_collectors(FILE *out, const struct pm *pm, bool hcas)
{
	static const char *const names[] = {IB "exporter_collect_errors",
	                                    IB "exporter_collect_timeouts",
	                                    IB "exporter_collector_duration_seconds"};
	static const char *const texts[] = {
	    "ports that answered the last sweep's PortCounters with an error",
	    "ports that did not answer the last sweep's PortCounters",
	    "the last performance manager sweep, seconds"};
	const struct pm_stats *st = pm_stats(pm);
	for (unsigned k = 0; k < 3; k++) {
		head(out, names[k], "gauge", texts[k]);
		for (unsigned ca = 0; ca <= (unsigned)hcas; ca++) {
			double v = k == 0   ? st->last_errors[ca]
			           : k == 1 ? st->last_timeouts[ca]
			                    : st->last_sweep_s;
			fprintf(out, "%s{collector=\"%s\"} %.17g\n", names[k],
			        ca ? "hca" : "switch", v);
		}
	}
}

/* The ports to show: linked, switches' first, at most max (0: all). */
static int choose(struct chosen *ch, const struct ibsmd_config *cfg, uint32_t *left_out)
{
	const struct topo *t = ch->t;
	bool all = !strcmp(cfg->metrics_ports, "all");
	ch->port = malloc(sizeof(uint32_t) * (t->nports + 1));
	if (!ch->port)
		return -1;
	ch->n = ch->nsw = 0;
	*left_out = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t p = 0; p < t->nports; p++) {
			const struct topo_port *pt = &t->ports[p];
			bool sw = topo_is_switch(t, pt->node);
			if (sw != (pass == 0) || (!sw && !all) || !pt->num ||
			    !t->nodes[pt->node].present || !topo_port_linked(t, p))
				continue;
			if (cfg->metrics_max_ports && ch->n >= cfg->metrics_max_ports) {
				(*left_out)++;
				continue;
			}
			ch->port[ch->n++] = p;
		}
		if (pass == 0)
			ch->nsw = ch->n;
	}
	return 0;
}

void metrics_render_ports(FILE *out, const struct pm *pm, const struct topo *t,
                          const struct ibsmd_config *cfg)
{
	if (!strcmp(cfg->metrics_ports, "none"))
		return;
	struct chosen ch = {.t = t, .pm = pm};
	uint32_t left_out;
	if (choose(&ch, cfg, &left_out) < 0)
		return;
	bool hcas = !strcmp(cfg->metrics_ports, "all");
	for (int sw = 1; sw >= 0; sw--) {
		if (!sw && !hcas)
			break;
		render_counters(out, &ch, sw);
		render_info(out, &ch, sw);
		render_uplinks(out, &ch, sw);
		render_rates(out, &ch, sw, false);
		render_rates(out, &ch, sw, true);
	}
	render_link(out, &ch);
	if (pm)
		render_collectors(out, pm, hcas);
	head(out, "ibsmd_metrics_ports_left_out", "gauge",
	     "linked ports past metrics_max_ports, without per-port series");
	fprintf(out, "ibsmd_metrics_ports_left_out %" PRIu32 "\n", left_out);
	free(ch.port);
}
