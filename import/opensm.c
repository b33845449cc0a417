/* The importer. OpenSM's files are line formats of their own (no library reads them): the
 * parsers here follow OpenSM's documented grammar (doc/partition-config.txt, opensm(8)) and
 * the behaviour OpenSM 3.3 shows on the wire, which the suite checks port by port. */
#include "import/opensm.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import/opensm_fates.h"
#include "config/config.h"
#include "import/qos.h"
#include "mad/link_speed.h"
#include "routing/engine.h"
#include "routing/torus_conf.h"

struct imp {
	char *err;
	size_t errlen;
	FILE *out;
	bool allow_both;        /* opensm.conf allow_both_pkeys */
	bool qos;               /* opensm.conf qos */
	const char *partitions; /* partition_config_file, unless given on the command line */
	char partitions_buf[256];
	struct qos_import *qi; /* the qos: section, from qos_* options and qos-policy.conf */
	char qos_file[256];    /* qos_policy_file */
	FILE *warn;            /* what the site loses, one line each (NULL: nowhere) */
	unsigned warnings;
	char sa_key[24], sm_key[24]; /* as given, to compare: ibsmd's SA takes sm_key */
	/* perfmgr_xmit_wait_log and its threshold (OpenSM's default 0xffff), which go
	 * together into pm_threshold_xmit_wait */
	bool xwait_log;
	unsigned long xwait_threshold;
	/* congestion_control and the cc_* options, written as one mapping at the end */
	struct config_cc cc;
	bool cc_seen;
};

static void warn_site(struct imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn_site(struct imp *im, const char *fmt, ...)
{
	im->warnings++;
	if (!im->warn)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(im->warn, "ibsmd: warning: ");
	vfprintf(im->warn, fmt, ap);
	fputc('\n', im->warn);
	va_end(ap);
}

static int fail(struct imp *im, const char *file, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(struct imp *im, const char *file, unsigned line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(im->err, im->errlen, "%s:%u: %s", file, line, msg);
	return -1;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* ---- opensm.conf ---- */

enum how {
	COPY,
	HEXCOPY,
	BOOL,
	STRING,
	ENGINES,
	ROOTS,
	PM,
	PARTFILE,
	QOS,
	QOSFILE,
	BOTHKEYS,
	VLCAP,
	VIRT,
	PREFIXES,
	TORUSCONF,
	XWAIT
};
static const struct {
	const char *osm, *ours;
	enum how how;
	/* OpenSM's default, where ibsmd's own is better for the same fabric: a file that
	 * holds OpenSM's default keeps ibsmd's, and the comment says why; a site's own value
	 * carries over */
	const char *dflt, *why_ours;
} options[] = {
    {"lmc", "lmc", COPY, NULL, NULL},
    {"lmc_esp0", "lmc_esp0", BOOL, NULL, NULL},
    {"sm_priority", "sm_priority", COPY, NULL, NULL},
    {"sweep_interval", "sweep_interval", COPY, NULL, NULL},
    {"subnet_prefix", "subnet_prefix", HEXCOPY, NULL, NULL},
    {"sm_key", "sm_key", HEXCOPY, NULL, NULL},
    {"m_key", "m_key", HEXCOPY, NULL, NULL},
    {"m_key_lease_period", "m_key_lease", COPY, NULL, NULL},
    {"m_key_protection_level", "m_key_protect", COPY, NULL, NULL},
    {"sminfo_polling_timeout", "sm_poll_interval_ms", COPY, "10000",
     "ibsmd's standbys poll the master every 500 ms (sm_poll_interval_ms): a dead master is "
     "replaced in under 2 s, not 40"},
    {"polling_retry_number", "sm_poll_retries", COPY, "4",
     "ibsmd's standbys take over after 3 unanswered polls (sm_poll_retries)"},
    {"max_wire_smps", "mad_window", COPY, "4",
     "ibsmd keeps 64 SMPs in flight, 4 per node (mad_window, mad_window_per_node), which "
     "brings a subnet up several times faster"},
    {"transaction_timeout", "mad_timeout_ms", COPY, NULL, NULL},
    {"transaction_retries", "mad_retries", COPY, NULL, NULL},
    {"subnet_timeout", "subnet_timeout", COPY, NULL, NULL},
    {"ignore_other_sm", "ignore_other_sm", BOOL, NULL, NULL},
    {"routing_engine", "routing_engine", ENGINES, NULL, NULL},
    {"root_guid_file", "root_guids", ROOTS, NULL, NULL},
    {"cn_guid_file", "cn_guid_file", STRING, NULL, NULL},
    {"hop_weights_file", "hop_weights_file", STRING, NULL, NULL},
    {"port_prof_ignore_file", "port_prof_ignore_file", STRING, NULL, NULL},
    {"ids_guid_file", "ids_guid_file", STRING, NULL, NULL},
    {"scatter_ports", "scatter_ports", COPY, NULL, NULL},
    {"port_shifting", "port_shifting", BOOL, NULL, NULL},
    {"guid_routing_order_file", "guid_routing_order_file", STRING, NULL, NULL},
    {"guid_routing_order_no_scatter", "guid_routing_order_no_scatter", BOOL, NULL, NULL},
    {"lfts_file", "lfts_file", STRING, NULL, NULL},
    {"nue_max_num_vls", "routing_max_vls", VLCAP, NULL, NULL},
    {"head_of_queue_lifetime", "head_of_queue_lifetime", COPY, NULL, NULL},
    {"leaf_head_of_queue_lifetime", "leaf_head_of_queue_lifetime", COPY, NULL, NULL},
    {"vl_stall_count", "vl_stall_count", COPY, NULL, NULL},
    {"leaf_vl_stall_count", "leaf_vl_stall_count", COPY, NULL, NULL},
    {"packet_life_time", "packet_life_time", COPY, NULL, NULL},
    {"force_link_speed", "link_speed_enabled", COPY, NULL, NULL},
    {"force_link_width", "link_width_enabled", COPY, NULL, NULL},
    {"force_link_speed_ext", "link_speed_ext_enabled", COPY, NULL, NULL},
    /* NVIDIA's SM (virtual ports, IBA Annex A18) */
    {"virt_enabled", "virtualization", VIRT, NULL, NULL},
    {"virt_max_ports_in_process", "virt_max_ports_in_process", COPY, NULL, NULL},
    {"perfmgr", "pm_interval", PM, NULL, NULL},
    {"perfmgr_sweep_time_s", "pm_interval", PM, NULL, NULL},
    {"partition_config_file", "partitions", PARTFILE, NULL, NULL},
    {"qos", NULL, QOS, NULL, NULL},
    {"qos_policy_file", NULL, QOSFILE, NULL, NULL},
    {"allow_both_pkeys", NULL, BOTHKEYS, NULL, NULL},
    {"prefix_routes_file", "prefix_routes", PREFIXES, NULL, NULL},
    {"torus_config", "torus_config", TORUSCONF, NULL, NULL},
    {"node_name_map_name", "node_name_map", STRING, NULL, NULL},
    {"perfmgr_ignore_cas", "pm_ignore_cas", BOOL, NULL, NULL},
    {"perfmgr_xmit_wait_log", "pm_threshold_xmit_wait", XWAIT, NULL, NULL},
    {"perfmgr_xmit_wait_threshold", "pm_threshold_xmit_wait", XWAIT, NULL, NULL},
};

/* One word of a prefix-routes.conf line: hex (0x optional) or *. */
static bool prefix_word_ok(const char *w)
{
	if (!strcmp(w, "*"))
		return true;
	char *e;
	errno = 0;
	unsigned long long v = strtoull(w, &e, 16);
	return *w && !*e && !errno && v && *w != '-' && *w != '+';
}

/* OpenSM's prefix-routes.conf ("PREFIX GUID" lines, * for any, # comments) as
 * prefix_routes; a file that is not there is no routes, as OpenSM takes it. */
static int put_prefix_routes(struct imp *im, const char *file, unsigned line, const char *key,
                             const char *val)
{
	FILE *fp = fopen(val, "r");
	if (!fp) {
		fprintf(
		    im->out,
		    "# opensm %s %s: %s; no prefix routes: a PathRecord to another subnet's GID "
		    "gets INVALID_GID, as OpenSM answers without them\n",
		    key, val, strerror(errno));
		/* OpenSM's own default names a file most sites never write */
		if (strcmp(val, "/etc/opensm/prefix-routes.conf"))
			warn_site(im, "%s:%u: %s %s: %s; no prefix routes imported", file, line,
			          key, val, strerror(errno));
		return 0;
	}
	char l[512];
	unsigned n = 0, ln = 0;
	fprintf(im->out, "# opensm %s %s:\nprefix_routes:", key, val);
	while (fgets(l, sizeof(l), fp)) {
		ln++;
		l[strcspn(l, "#")] = 0;
		char *save = NULL, *a = strtok_r(l, " \t\r\n", &save);
		if (!a)
			continue;
		char *b = strtok_r(NULL, " \t\r\n", &save),
		     *extra = strtok_r(NULL, " \t\r\n", &save);
		if (!b || extra || !prefix_word_ok(a) || !prefix_word_ok(b)) {
			fclose(fp);
			return fail(im, val, ln, "not \"PREFIX GUID\" (hex, or * for any)");
		}
		fprintf(im->out, "\n  - \"%s %s\"", a, b);
		n++;
	}
	fclose(fp);
	fprintf(im->out, "%s\n", n ? "" : " []");
	return 0;
}

/* OpenSM's torus-2QoS.conf, which ibsmd's torus reads as it is: checked here, so that a
 * file torus would refuse fails the import with its line; one that is not there (OpenSM's
 * default names one most sites never write) leaves the torus to find itself. */
static int put_torus_config(struct imp *im, const char *file, unsigned line, const char *key,
                            const char *val)
{
	if (strchr(val, '"') || strchr(val, '\\'))
		return fail(im, file, line, "%s: \"%s\" has quotes or backslashes", key, val);
	if (access(val, F_OK) < 0) {
		fprintf(im->out,
		        "# opensm %s %s: %s; ibsmd's torus finds the torus's size and datelines "
		        "from the cabling, as without one\n",
		        key, val, strerror(errno));
		return 0;
	}
	struct torus_conf tc;
	char why[400];
	if (torus_conf_read(val, &tc, why, sizeof(why)) < 0) {
		snprintf(im->err, im->errlen, "%s", why);
		return -1;
	}
	fprintf(im->out, "# opensm %s: torus reads OpenSM's file as it is\ntorus_config: \"%s\"\n",
	        key, val);
	return 0;
}

/* perfmgr_xmit_wait_log and its threshold, kept for pm_threshold_xmit_wait at the end: the
 * two make one setting */
static void note_xmit_wait(struct imp *im, const char *key, const char *val)
{
	if (!strcmp(key, "perfmgr_xmit_wait_log"))
		im->xwait_log = !strcasecmp(val, "TRUE");
	else
		im->xwait_threshold = strtoul(val, NULL, 0);
	fprintf(im->out,
	        "# opensm %s %s: pm_threshold_xmit_wait, when perfmgr_xmit_wait_log is TRUE (an "
	        "event where OpenSM logs a line)\n",
	        key, val);
}

/* a number of OpenSM's congestion control options, up to max */
static int cc_num(struct imp *im, const char *file, unsigned line, const char *key, const char *val,
                  unsigned long long max, unsigned long long *out)
{
	char *e;
	errno = 0;
	*out = strtoull(val, &e, 0);
	if (!*val || *e || errno || *val == '-' || *out > max)
		return fail(im, file, line, "%s: \"%s\" is not a number up to %llu", key, val, max);
	return 0;
}

/* cc_ca_cong_setting_<field> "SL VALUE": one SL's entry */
static int cc_sl_entry(struct imp *im, const char *file, unsigned line, const char *key,
                       const char *val, const char *field)
{
	char sl_s[16], v_s[32];
	unsigned long long sl, v;
	if (sscanf(val, "%15s %31s", sl_s, v_s) != 2)
		return fail(im, file, line, "%s: \"%s\" is not \"SL VALUE\"", key, val);
	if (cc_num(im, file, line, key, sl_s, MAD_CC_CA_SLS - 1, &sl) < 0 ||
	    cc_num(im, file, line, key, v_s, strcmp(field, "ccti_timer") ? 255 : 0xffff, &v) < 0)
		return -1;
	struct mad_cc_ca_setting *ca = &im->cc.ca;
	if (!strcmp(field, "ccti_timer"))
		ca->ccti_timer[sl] = (uint16_t)v;
	else if (!strcmp(field, "ccti_increase"))
		ca->ccti_increase[sl] = (uint8_t)v;
	else if (!strcmp(field, "trigger_threshold"))
		ca->trigger_threshold[sl] = (uint8_t)v;
	else
		ca->ccti_min[sl] = (uint8_t)v;
	return 0;
}

/* congestion_control and cc_*: 1 taken, 0 not one of them, -1 refused (with the line) */
static int cc_option(struct imp *im, const char *file, unsigned line, const char *key,
                     const char *val)
{
	static const char sw[] = "cc_sw_cong_setting_", ca[] = "cc_ca_cong_setting_";
	struct config_cc *cc = &im->cc;
	unsigned long long v = 0;
	int rc = 0;
	if (strcmp(key, "congestion_control") && strncmp(key, "cc_", 3))
		return 0;
	if (!im->cc_seen)
		config_cc_defaults(cc);
	im->cc_seen = true;
	if (!strcmp(key, "congestion_control")) {
		cc->enable = !strcasecmp(val, "TRUE");
	} else if (!strcmp(key, "cc_key")) {
		rc = cc_num(im, file, line, key, val, UINT64_MAX, &v);
		cc->cc_key = v;
	} else if (!strcmp(key, "cc_max_outstanding_mads")) {
		rc = cc_num(im, file, line, key, val, 65535, &v);
		cc->max_outstanding = v ? (uint32_t)v : 1;
	} else if (!strcmp(key, "cc_cct")) {
		char buf[4096];
		snprintf(buf, sizeof(buf), "%s", val);
		cc->cct_len = 0;
		for (char *save = NULL, *e = strtok_r(buf, ",", &save); e && rc == 0;
		     e = strtok_r(NULL, ",", &save)) {
			if (cc->cct_len == CONFIG_CC_CCT_MAX)
				rc = fail(im, file, line, "%s: more than %d entries", key,
				          CONFIG_CC_CCT_MAX);
			else if (config_cc_shift_mult(trim(e), &cc->cct[cc->cct_len++]) < 0)
				rc = fail(
				    im, file, line,
				    "%s: \"%s\" is not SHIFT:MULTIPLIER (shift 0-3, multiplier "
				    "0-16383)",
				    key, e);
		}
	} else if (!strncmp(key, sw, sizeof(sw) - 1)) {
		const char *f = key + sizeof(sw) - 1;
		struct mad_cc_switch_setting *s = &cc->sw;
		if (!strcmp(f, "control_map") && !(rc = cc_num(im, file, line, key, val, 0x1f, &v)))
			s->control_map = (uint32_t)v;
		else if (!strcmp(f, "victim_mask") || !strcmp(f, "credit_mask")) {
			if (config_cc_mask(val, f[0] == 'v' ? s->victim_mask : s->credit_mask) < 0)
				rc = fail(im, file, line,
				          "%s: \"%s\" is not a 256-bit hexadecimal mask", key, val);
		} else if (!strcmp(f, "threshold") &&
		           !(rc = cc_num(im, file, line, key, val, 15, &v)))
			s->threshold = (uint8_t)v;
		else if (!strcmp(f, "packet_size") &&
		         !(rc = cc_num(im, file, line, key, val, 255, &v)))
			s->packet_size = (uint8_t)v;
		else if (!strcmp(f, "credit_starvation_threshold") &&
		         !(rc = cc_num(im, file, line, key, val, 15, &v)))
			s->cs_threshold = (uint8_t)v;
		else if (!strcmp(f, "credit_starvation_return_delay")) {
			if (config_cc_shift_mult(val, &s->cs_return_delay) < 0)
				rc = fail(im, file, line, "%s: \"%s\" is not SHIFT:MULTIPLIER", key,
				          val);
		} else if (!strcmp(f, "marking_rate") &&
		           !(rc = cc_num(im, file, line, key, val, 0xffff, &v)))
			s->marking_rate = (uint16_t)v;
		else if (!rc)
			return 0; /* not OpenSM's: said so by the caller */
	} else if (!strncmp(key, ca, sizeof(ca) - 1)) {
		const char *f = key + sizeof(ca) - 1;
		if (!strcmp(f, "port_control") && !(rc = cc_num(im, file, line, key, val, 1, &v)))
			cc->ca.port_control = (uint16_t)v;
		else if (!strcmp(f, "control_map") &&
		         !(rc = cc_num(im, file, line, key, val, 0xffff, &v)))
			cc->ca.control_map = (uint16_t)v;
		else if (!strcmp(f, "ccti_timer") || !strcmp(f, "ccti_increase") ||
		         !strcmp(f, "trigger_threshold") || !strcmp(f, "ccti_min"))
			rc = cc_sl_entry(im, file, line, key, val, f);
		else if (!rc)
			return 0;
	} else {
		return 0;
	}
	if (rc < 0)
		return -1;
	fprintf(im->out, "# opensm %s %s: congestion_control, below\n", key, val);
	return 1;
}

/* root_guid_file: its GUIDs as root_guids */
static int put_roots(struct imp *im, const char *file, unsigned line, const char *val)
{
	FILE *fp = fopen(val, "r");
	if (!fp)
		return fail(im, file, line, "root_guid_file %s: %s", val, strerror(errno));
	char l[256], *e;
	unsigned n = 0, ln = 0;
	fprintf(im->out, "root_guids: [");
	while (fgets(l, sizeof(l), fp)) {
		ln++;
		char *t = trim(l);
		if (!*t || *t == '#')
			continue;
		errno = 0;
		unsigned long long g = strtoull(t, &e, 0);
		if (*trim(e) || errno || !g) {
			fclose(fp);
			return fail(im, val, ln, "\"%s\" is not a GUID", t);
		}
		fprintf(im->out, "%s0x%016llx", n++ ? ", " : "", g);
	}
	fclose(fp);
	fprintf(im->out, "]\n");
	return 0;
}

static int put_value(struct imp *im, const char *file, unsigned line, const char *key,
                     const char *ours, enum how how, const char *val)
{
	FILE *out = im->out;
	char *e;
	switch (how) {
	case COPY:
		errno = 0;
		strtoull(val, &e, 0);
		if (*e || errno)
			return fail(im, file, line, "%s: \"%s\" is not a number", key, val);
		fprintf(out, "%s: %s\n", ours, val);
		return 0;
	case VLCAP: {
		/* OpenSM's default (1) is in every opensm.conf it writes; as routing_max_vls it
		 * would hold dfsssp to one VL too: only a real choice is carried over */
		errno = 0;
		unsigned long n = strtoul(val, &e, 0);
		if (*e || errno || n > 15)
			return fail(im, file, line, "%s: \"%s\" is not a number of VLs (0-15)", key,
			            val);
		if (n > 1)
			fprintf(out, "%s: %lu\n", ours, n);
		else
			fprintf(out,
			        "# opensm %s %s: ibsmd's nue uses the VLs the links run; set "
			        "routing_max_vls to hold it (and dfsssp) to fewer\n",
			        key, val);
		return 0;
	}
	case HEXCOPY:
		errno = 0;
		unsigned long long v = strtoull(val, &e, 0);
		if (*e || errno)
			return fail(im, file, line, "%s: \"%s\" is not a number", key, val);
		fprintf(out, "%s: 0x%016llx\n", ours, v);
		return 0;
	case VIRT: {
		/* NVIDIA's SM: 0 ignore, 1 disable, 2 enable (manage) */
		static const char *const modes[] = {"ignore", "disable", "manage"};
		errno = 0;
		unsigned long n = strtoul(val, &e, 0);
		if (*e || errno || n > 2)
			return fail(im, file, line, "%s: \"%s\" is not 0, 1 or 2", key, val);
		fprintf(out, "%s: %s\n", ours, modes[n]);
		return 0;
	}
	case BOOL:
		if (!strcasecmp(val, "TRUE") || !strcasecmp(val, "FALSE")) {
			fprintf(out, "%s: %s\n", ours, !strcasecmp(val, "TRUE") ? "true" : "false");
			return 0;
		}
		return fail(im, file, line, "%s: \"%s\" is neither TRUE nor FALSE", key, val);
	case STRING:
		if (strchr(val, '"') || strchr(val, '\\'))
			return fail(im, file, line, "%s: \"%s\" has quotes or backslashes", key,
			            val);
		fprintf(out, "%s: \"%s\"\n", ours, val);
		return 0;
	case ENGINES: {
		char buf[256], chain[256] = "";
		snprintf(buf, sizeof(buf), "%s", val);
		for (char *save = NULL, *n = strtok_r(buf, ",", &save); n;
		     n = strtok_r(NULL, ",", &save)) {
			n = trim(n);
			const char *ours_e = routing_find(n) ? n : NULL;
			if (!strcmp(n, "torus-2QoS")) {
				/* the same algorithm: dimension order, a dateline per ring on two
				 * VLs, QoS classes on SL bits, around failed links and switches */
				fprintf(out,
				        "# opensm routing_engine torus-2QoS: ibsmd's torus routes "
				        "as it does, with its torus_config (torus-2QoS.conf) when "
				        "there is one\n");
				ours_e = "torus";
			}
			if (!ours_e) {
				fprintf(out,
				        "# opensm routing_engine %s: not an OpenSM engine; updn "
				        "routes any "
				        "topology free of credit loops, so it takes its place\n",
				        n);
				ours_e = "updn";
			}
			if (!strstr(chain, ours_e))
				snprintf(chain + strlen(chain), sizeof(chain) - strlen(chain),
				         "%s%s", chain[0] ? "," : "", ours_e);
		}
		/* OpenSM falls back to minhop when the engines fail */
		if (!strstr(chain, "minhop")) {
			fprintf(
			    out,
			    "# opensm routing_engine %s: minhop ends the chain, as OpenSM routes "
			    "by min-hop when its engines fail\n",
			    val);
			snprintf(chain + strlen(chain), sizeof(chain) - strlen(chain), ",minhop");
		}
		fprintf(out, "routing_engine: \"%s\"\n", chain);
		return 0;
	}
	case PREFIXES: return put_prefix_routes(im, file, line, key, val);
	case TORUSCONF: return put_torus_config(im, file, line, key, val);
	case XWAIT: note_xmit_wait(im, key, val); return 0;
	case ROOTS: return put_roots(im, file, line, val);
	default: return 0;
	}
}

/* An option without a key of its own: a comment saying what ibsmd does about it, and a
 * warning where the site's value asks for what ibsmd does not do. */
static void note_option(struct imp *im, const char *file, unsigned line, const char *key,
                        const char *val)
{
	if (!strcmp(key, "sa_key"))
		snprintf(im->sa_key, sizeof(im->sa_key), "%s", val);
	const struct opensm_fate *f = opensm_fate_of(key);
	if (!f) {
		fprintf(im->out, "# opensm %s %s: not an option of OpenSM 3.3.23; left out\n", key,
		        val);
		warn_site(im, "%s:%u: %s: not an option of OpenSM 3.3.23; left out", file, line,
		          key);
		return;
	}
	bool changed;
	const char *what = opensm_fate_text(f, val, &changed);
	fprintf(im->out, "# opensm %s %s: %s\n", key, val, what);
	if (changed)
		warn_site(im, "%s:%u: %s %s (OpenSM's default %s): %s", file, line, key, val,
		          strcmp(f->dflt, "(null)") ? f->dflt : "none", what);
}

static int import_conf(struct imp *im, const char *file)
{
	FILE *fp = fopen(file, "r");
	if (!fp) {
		snprintf(im->err, im->errlen, "%s: %s", file, strerror(errno));
		return -1;
	}
	char line[4096];
	unsigned ln = 0;
	bool pm = false, pm_seen = false;
	unsigned pm_sweep = 180; /* OpenSM's default perfmgr_sweep_time_s */
	int rc = 0;
	fprintf(im->out, "# from %s\n", file);
	while (rc == 0 && fgets(line, sizeof(line), fp)) {
		ln++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *t = trim(line);
		if (!*t)
			continue;
		char *sp = t;
		while (*sp && !isspace((unsigned char)*sp))
			sp++;
		char *val = *sp ? trim(sp + 1) : sp;
		*sp = 0;
		if (!*val || !strcmp(val, "(null)"))
			continue; /* OpenSM's "no value" */
		if (!strcmp(t, "sm_key"))
			snprintf(im->sm_key, sizeof(im->sm_key), "%s", val);
		int qr = qos_import_conf_option(im->qi, t, val, file, ln, im->err, im->errlen);
		if (qr < 0) {
			rc = -1;
			break;
		}
		if (qr)
			continue;
		int cr = cc_option(im, file, ln, t, val);
		if (cr < 0) {
			rc = -1;
			break;
		}
		if (cr)
			continue;
		bool done = false;
		for (size_t i = 0; i < sizeof(options) / sizeof(options[0]) && !done; i++) {
			if (strcmp(t, options[i].osm))
				continue;
			done = true;
			switch (options[i].how) {
			case PM:
				pm_seen = true;
				if (!strcmp(t, "perfmgr"))
					pm = !strcasecmp(val, "TRUE");
				else
					pm_sweep = (unsigned)strtoul(val, NULL, 0);
				break;
			case PARTFILE:
				snprintf(im->partitions_buf, sizeof(im->partitions_buf), "%s", val);
				break;
			case QOS: im->qos = !strcasecmp(val, "TRUE"); break;
			case QOSFILE:
				snprintf(im->qos_file, sizeof(im->qos_file), "%s", val);
				break;
			case BOTHKEYS:
				im->allow_both = !strcasecmp(val, "TRUE");
				fprintf(
				    im->out, "# opensm %s %s: %s\n", t, val,
				    im->allow_both
				        ? "partitions.conf's =both members get both keys "
				          "(membership: both)"
				        : "partitions.conf's =both members are full members, as "
				          "OpenSM makes them without it");
				break;
			default:
				if (options[i].dflt && opensm_same_value(val, options[i].dflt))
					fprintf(im->out, "# opensm %s %s: OpenSM's default; %s\n",
					        t, val, options[i].why_ours);
				else
					rc = put_value(im, file, ln, t, options[i].ours,
					               options[i].how, val);
			}
		}
		if (done)
			continue;
		note_option(im, file, ln, t, val);
	}
	fclose(fp);
	if (rc)
		return rc;
	if (pm_seen)
		fprintf(im->out, "pm_interval: %u\n", pm ? (pm_sweep ? pm_sweep : 180) : 0);
	if (im->cc_seen) {
		fprintf(im->out, "# OpenSM's congestion control manager's settings, programmed the "
		                 "same way\ncongestion_control:");
		config_cc_dump(im->out, &im->cc);
	}
	if (im->xwait_log) /* OpenSM logs XmitWait past its threshold; ibsmd raises an event */
		fprintf(im->out, "pm_threshold_xmit_wait: %lu\n",
		        im->xwait_threshold ? im->xwait_threshold : 0xffffUL);
	unsigned long long sak = strtoull(im->sa_key, NULL, 0), smk = strtoull(im->sm_key, NULL, 0);
	if (im->sa_key[0] && sak != (im->sm_key[0] ? smk : 1))
		warn_site(
		    im,
		    "%s: sa_key %s is not sm_key %s: ibsmd's SA trusts requests with sm_key; give "
		    "its trusted clients that key",
		    file, im->sa_key, im->sm_key[0] ? im->sm_key : "1 (OpenSM's default)");
	return 0;
}

/* ---- partitions.conf ---- */

struct ipart {
	char name[64];
	uint16_t pkey;
	unsigned line;
	uint8_t defmember; /* 1 full, 2 limited, 3 both */
	bool ipoib, indx0;
	unsigned mtu, rate, sl, scope_mask;
	uint32_t qkey;
	char *members; /* YAML lines */
	size_t members_len;
	char *groups; /* YAML lines */
	size_t groups_len;
};

static bool prefix_of(const char *s, const char *word)
{
	return *s && !strncmp(word, s, strlen(s)); /* OpenSM accepts abbreviations */
}

static int rate_gbps(unsigned code, const char **out)
{
	*out = code <= MAD_RATE_MAX_CODE ? mad_rate_name((uint8_t)code) : NULL;
	return *out ? 0 : -1;
}

static void append(char **buf, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char **buf, size_t *len, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	char *nb = realloc(*buf, *len + (size_t)n + 1);
	if (!nb)
		return;
	memcpy(nb + *len, tmp, (size_t)n + 1);
	*buf = nb;
	*len += (size_t)n;
}

/* "flag[=value]" of a header or a group */
static int group_flag(struct imp *im, const char *file, unsigned line, const char *flag,
                      const char *val, unsigned *mtu, unsigned *rate, unsigned *sl,
                      unsigned *scope_mask, uint32_t *qkey, unsigned *tclass, unsigned *flow)
{
	unsigned long v = val ? strtoul(val, NULL, 0) : 0;
	if (prefix_of(flag, "mtu")) {
		if (!v || v > 5)
			return fail(im, file, line, "mtu=%s: an IBA MTU code 1-5 (4 is 2048)",
			            val ? val : "");
		*mtu = (unsigned)v;
	} else if (prefix_of(flag, "rate")) {
		const char *g;
		if (rate_gbps((unsigned)v, &g) < 0)
			return fail(im, file, line,
			            "rate=%s: an IBA rate code 2-25 (3 is 10 Gb/s, 16 is 100 Gb/s)",
			            val ? val : "");
		*rate = (unsigned)v;
	} else if (prefix_of(flag, "sl")) {
		if (v > 15)
			return fail(im, file, line, "sl=%s: 0-15", val ? val : "");
		*sl = (unsigned)v;
	} else if (prefix_of(flag, "scope")) {
		if (!v || v > 15)
			return fail(im, file, line, "scope=%s: 1-15", val ? val : "");
		*scope_mask |= 1u << v;
	} else if (!strcmp(flag, "Q_Key")) {
		*qkey = (uint32_t)v;
	} else if (!strcmp(flag, "TClass")) {
		if (tclass)
			*tclass = (unsigned)v;
	} else if (prefix_of(flag, "FlowLabel")) {
		if (flow)
			*flow = (unsigned)v;
	} else {
		return 1; /* not a group flag */
	}
	return 0;
}

static unsigned one_scope(unsigned mask)
{
	for (unsigned s = 0; s < 16; s++)
		if (mask >> s & 1)
			return s;
	return 2;
}

/* partitions.conf without its comments, as one text, and the line each byte is on. 0; -1
 * with err. */
static int read_statements(struct imp *im, const char *file, char **textp, size_t *tlenp,
                           unsigned **lines_atp)
{
	FILE *fp = fopen(file, "r");
	if (!fp) {
		snprintf(im->err, im->errlen, "%s: %s", file, strerror(errno));
		return -1;
	}
	char *text = NULL;
	size_t tlen = 0;
	unsigned *lines_at = NULL; /* the line of each byte's start of statement */
	char l[4096];
	unsigned ln = 0;
	while (fgets(l, sizeof(l), fp)) {
		ln++;
		char *h = strchr(l, '#');
		if (h)
			*h = 0;
		size_t n = strlen(l);
		char *nt = realloc(text, tlen + n + 1);
		unsigned *nl = realloc(lines_at, (tlen + n + 1) * sizeof(unsigned));
		if (!nt || !nl) {
			free(nt ? nt : text);
			free(nl ? nl : lines_at);
			fclose(fp);
			snprintf(im->err, im->errlen, "out of memory");
			return -1;
		}
		text = nt;
		lines_at = nl;
		memcpy(text + tlen, l, n);
		for (size_t i = 0; i < n; i++)
			lines_at[tlen + i] = ln;
		tlen += n;
		text[tlen] = 0;
	}
	fclose(fp);
	*textp = text;
	*tlenp = tlen;
	*lines_atp = lines_at;
	return 0;
}

/* A header's flags after its name, into np. 0; -1 with err. */
static int partition_flags(struct imp *im, const char *file, unsigned sline, char **save,
                           struct ipart *np)
{
	int rc = 0;
	char *tok;
	while (rc == 0 && (tok = strtok_r(NULL, ",", save))) {
		char *f = trim(tok), *v = strchr(f, '=');
		if (v) {
			*v++ = 0;
			f = trim(f);
			v = trim(v);
		}
		int g = group_flag(im, file, sline, f, v, &np->mtu, &np->rate, &np->sl,
		                   &np->scope_mask, &np->qkey, NULL, NULL);
		if (g < 0) {
			rc = -1;
		} else if (g == 0) {
			continue;
		} else if (prefix_of(f, "ipoib")) {
			np->ipoib = true;
		} else if (prefix_of(f, "defmember")) {
			if (v && prefix_of(v, "full"))
				np->defmember = 1;
			else if (v && prefix_of(v, "both"))
				np->defmember = 3;
			else if (v && prefix_of(v, "limited"))
				np->defmember = 2;
			else
				rc = fail(im, file, sline, "defmember=%s: full, limited or both",
				          v ? v : "");
		} else if (!strcmp(f, "indx0")) {
			np->indx0 = true; /* newer OpenSMs: the key at index 0 */
		} else {
			rc = fail(im, file, sline, "unknown partition flag \"%s\"", f);
		}
	}
	return rc;
}

/* The header, Name[=PKey][,flag[=value]]..., into np. 0; -1 with err. */
static int partition_header(struct imp *im, const char *file, unsigned sline, char *hdr,
                            struct ipart *np)
{
	*np = (struct ipart){.defmember = 2, .mtu = 4, .rate = 3, .line = sline};
	bool has_pkey = false;
	char *save = NULL;
	char *tok = strtok_r(hdr, ",", &save);
	char *name = tok ? trim(tok) : NULL;
	char *eq = name ? strchr(name, '=') : NULL;
	if (eq) {
		*eq = 0;
		char *id = trim(eq + 1), *e;
		unsigned long pk = strtoul(id, &e, 0);
		if (*e || !*id || !(pk & 0x7fff) || pk > 0xffff)
			return fail(im, file, sline, "P_Key \"%s\" is not a 15-bit number", id);
		np->pkey = (uint16_t)(pk & 0x7fff);
		has_pkey = true;
		name = trim(name);
	} else if (name && isdigit((unsigned char)*name)) {
		np->pkey = (uint16_t)(strtoul(name, NULL, 0) & 0x7fff);
		has_pkey = np->pkey != 0;
		name = (char *)"";
	}
	if (!has_pkey)
		return fail(im, file, sline,
		            "partition \"%s\" has no P_Key: OpenSM makes one up, ibsmd needs it "
		            "written (Name=0xPKEY)",
		            name ? name : "");
	snprintf(np->name, sizeof(np->name), "%s", name && *name ? name : "");
	if (partition_flags(im, file, sline, &save, np) < 0)
		return -1;
	if (np->scope_mask & (np->scope_mask - 1))
		return fail(im, file, sline,
		            "several scope= flags (one IPoIB group per scope): ibsmd makes one "
		            "group per partition");
	return 0;
}

/* The partition np defines, merged with an earlier definition of the same P_Key (OpenSM
 * merges them). NULL with err when out of memory. */
static struct ipart *partition_merge(struct imp *im, const char *file, unsigned sline,
                                     struct ipart **parts, unsigned *nparts, const struct ipart *np)
{
	struct ipart *pt = NULL;
	for (unsigned i = 0; i < *nparts; i++)
		if ((*parts)[i].pkey == np->pkey)
			pt = &(*parts)[i];
	if (!pt) {
		struct ipart *n2 = realloc(*parts, (*nparts + 1) * sizeof(**parts));
		if (!n2) {
			fail(im, file, sline, "out of memory");
			return NULL;
		}
		*parts = n2;
		pt = &(*parts)[(*nparts)++];
		*pt = *np;
	} else {
		pt->ipoib |= np->ipoib;
		pt->indx0 |= np->indx0;
		/* a later header's flags apply to its own members: defmember is per line */
		pt->defmember = np->defmember;
	}
	return pt;
}

/* mgid=MGID and its flags (rest, the statement after it) as a group of pt, with the header's
 * np for what the flags leave. 0; -1 with err. */
static int partition_mgid(struct imp *im, const char *file, unsigned sline, const char *v,
                          char *rest, const struct ipart *np, struct ipart *pt)
{
	uint8_t gid[16];
	if (!v || inet_pton(AF_INET6, v, gid) != 1 || gid[0] != 0xff)
		return fail(im, file, sline, "mgid=%s: not a multicast GID", v ? v : "");
	unsigned mtu = np->mtu, rate = np->rate, sl = np->sl, smask = np->scope_mask, tclass = 0,
	         flow = 0;
	uint32_t qkey = np->qkey;
	int rc = 0;
	for (char *fs = NULL, *f = rest ? strtok_r(rest, ",", &fs) : NULL; f && !rc;
	     f = strtok_r(NULL, ",", &fs)) {
		char *fv = strchr(f, '=');
		if (fv)
			*fv++ = 0;
		int g = group_flag(im, file, sline, trim(f), fv ? trim(fv) : NULL, &mtu, &rate, &sl,
		                   &smask, &qkey, &tclass, &flow);
		if (g > 0)
			rc = fail(im, file, sline, "unknown group flag \"%s\"", trim(f));
		else if (g < 0)
			rc = -1;
	}
	if (rc)
		return rc;
	if (gid[2] == 0xa0 && gid[3] == 0x1b && (gid[1] & 0xf) == 2) {
		/* OpenSM refuses it (an SA-assigned signature with link-local scope): so does
		 * the import */
		fprintf(im->out,
		        "# %s line %u: mgid=%s left out: OpenSM refuses "
		        "the SA's "
		        "0xA01B signature with link-local scope\n",
		        file, sline, v);
		return 0;
	}
	/* an IP group (ff1x:401b or ff1x:601b) carries the partition's P_Key and, without
	 * one, IPoIB's Q_Key */
	if ((gid[2] == 0x40 || gid[2] == 0x60) && gid[3] == 0x1b) {
		uint16_t full = (uint16_t)(np->pkey | 0x8000);
		gid[4] = (uint8_t)(full >> 8);
		gid[5] = (uint8_t)full;
		if (!qkey)
			qkey = 0x0b1b;
	}
	char text6[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, gid, text6, sizeof(text6));
	const char *g = "10";
	rate_gbps(rate, &g);
	append(&pt->groups, &pt->groups_len,
	       "      - {mgid: \"%s\", mtu: %u, rate: %s, sl: %u, scope: "
	       "%u, q_key: "
	       "0x%08x, tclass: %u, flow_label: 0x%05x}\n",
	       text6, 128u << mtu, g, im->qos ? sl : 0, one_scope(smask), qkey, tclass, flow);
	return 0;
}

/* One member, NAME[=full|limited|both], of pt; defmember when it says none. 0; -1 with
 * err. */
static int partition_member(struct imp *im, const char *file, unsigned sline, const char *item,
                            const char *v, uint8_t defmember, struct ipart *pt)
{
	uint8_t ms = defmember;
	if (v) {
		ms = prefix_of(v, "full") ? 1 : prefix_of(v, "both") ? 3 : 2;
	}
	if (ms == 3 && !im->allow_both) {
		ms = 1; /* OpenSM gives "both" only with allow_both_pkeys */
	}
	const char *msn = ms == 1 ? "full" : ms == 3 ? "both" : "limited";
	const char *kind = NULL;
	if (!strcmp(item, "ALL"))
		kind = "all";
	else if (!strcmp(item, "ALL_CAS"))
		kind = "all_cas";
	else if (!strcmp(item, "ALL_SWITCHES"))
		kind = "all_switches";
	else if (!strcmp(item, "SELF"))
		kind = "self";
	else if (!strcmp(item, "ALL_ROUTERS"))
		kind = "all_routers";
	else if (!strcmp(item, "NONE") || !*item)
		kind = NULL;
	else {
		char *e;
		unsigned long long gu = strtoull(item, &e, 0);
		if (*e || !gu)
			return fail(im, file, sline, "\"%s\" is not a port GUID", item);
		append(&pt->members, &pt->members_len, "      - 0x%016llx: %s\n", gu, msn);
	}
	if (kind)
		append(&pt->members, &pt->members_len, "      - %s: %s\n", kind, msn);
	return 0;
}

/* The members, NAME[=full|limited|both], ..., or mgid=MGID[,flags] to the end, into pt.
 * 0; -1 with err. */
static int partition_members(struct imp *im, const char *file, unsigned sline, char *mem,
                             const struct ipart *np, struct ipart *pt)
{
	int rc = 0;
	char *m = mem;
	while (rc == 0 && m && *m) {
		char *comma = strchr(m, ',');
		char *item = m;
		if (comma)
			*comma = 0;
		item = trim(item);
		char *v = strchr(item, '=');
		if (v) {
			*v++ = 0;
			item = trim(item);
			v = trim(v);
		}
		if (!strcmp(item, "mgid")) /* the group, and its flags: the rest */
			return partition_mgid(im, file, sline, v, comma ? comma + 1 : NULL, np, pt);
		rc = partition_member(im, file, sline, item, v, np->defmember, pt);
		m = comma ? comma + 1 : NULL;
	}
	return rc;
}

/* One statement, header ':' members, into parts. 0; -1 with err. */
static int partition_statement(struct imp *im, const char *file, unsigned sline, char *stmt,
                               struct ipart **parts, unsigned *nparts)
{
	char *colon = strchr(stmt, ':');
	if (!colon)
		return fail(im, file, sline, "no ':' between the partition and its members");
	*colon = 0;
	struct ipart np;
	if (partition_header(im, file, sline, stmt, &np) < 0)
		return -1;
	struct ipart *pt = partition_merge(im, file, sline, parts, nparts, &np);
	if (!pt)
		return -1;
	return partition_members(im, file, sline, colon + 1, &np, pt);
}

static void write_partitions(struct imp *im, const char *file, const struct ipart *parts,
                             unsigned nparts)
{
	bool have_default = false;
	for (unsigned i = 0; i < nparts; i++)
		have_default |= parts[i].pkey == 0x7fff;
	fprintf(im->out, "# partitions from %s\npartitions:\n", file);
	if (!have_default)
		/* OpenSM's rule when the file says nothing of the default partition */
		fprintf(im->out, "  - name: \"Default\"\n    pkey: 0x7fff\n    members:\n"
		                 "      - all: limited\n      - self: full\n    ipoib: true\n");
	for (unsigned i = 0; i < nparts; i++) {
		const struct ipart *p = &parts[i];
		const char *g = "10";
		rate_gbps(p->rate, &g);
		fprintf(im->out, "  - name: \"%s\"    # %s line %u\n    pkey: 0x%04x\n", p->name,
		        file, p->line, p->pkey);
		if (p->indx0)
			fprintf(im->out, "    indx0: true\n");
		if (p->sl && im->qos)
			fprintf(im->out, "    sl: %u\n", p->sl);
		else if (p->sl)
			fprintf(im->out, "    # sl=%u: OpenSM uses it only with qos TRUE\n", p->sl);
		fprintf(im->out, "    members:%s\n%s", p->members_len ? "" : " []",
		        p->members ? p->members : "");
		fprintf(im->out,
		        "    ipoib: %s\n    mtu: %u\n    rate: %s\n    scope: %u\n    q_key: "
		        "0x%08x\n",
		        p->ipoib ? "true" : "false", 128u << p->mtu, g, one_scope(p->scope_mask),
		        p->qkey ? p->qkey : 0x0b1b);
		if (p->groups_len)
			fprintf(im->out, "    groups:\n%s", p->groups);
	}
}

static int import_partitions(struct imp *im, const char *file)
{
	/* the statements (up to ';'), with the line each starts on */
	char *text = NULL;
	size_t tlen = 0;
	unsigned *lines_at = NULL;
	if (read_statements(im, file, &text, &tlen, &lines_at) < 0)
		return -1;
	struct ipart *parts = NULL;
	unsigned nparts = 0;
	int rc = 0;
	size_t at = 0;
	while (rc == 0 && text && at < tlen) {
		char *semi = strchr(text + at, ';');
		size_t end = semi ? (size_t)(semi - text) : tlen;
		while (at < end && isspace((unsigned char)text[at]))
			at++;
		if (at >= end) {
			at = end + 1;
			continue;
		}
		unsigned sline = lines_at[at];
		if (!semi) {
			rc =
			    fail(im, file, sline, "a partition definition without its closing ';'");
			break;
		}
		text[end] = 0;
		char *stmt = text + at;
		at = end + 1;
		rc = partition_statement(im, file, sline, stmt, &parts, &nparts);
	}
	if (!rc)
		write_partitions(im, file, parts, nparts);
	for (unsigned i = 0; i < nparts; i++) {
		free(parts[i].members);
		free(parts[i].groups);
	}
	free(parts);
	free(text);
	free(lines_at);
	return rc;
}

int import_opensm(const char *conf, const char *partitions, const char *qos, FILE *out, FILE *warn,
                  char *err, size_t errlen)
{
	struct imp im = {.err = err, .errlen = errlen, .out = out, .warn = warn};
	int rc = -1;
	if (!(im.qi = qos_import_new())) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fprintf(out, "# ibsmd configuration imported from OpenSM's by ibsmd --import-opensm\n");
	if (conf && import_conf(&im, conf) < 0)
		goto out;
	const char *pf = partitions ? partitions : im.partitions_buf[0] ? im.partitions_buf : NULL;
	if (pf && !partitions && access(pf, R_OK) != 0) {
		/* opensm.conf names OpenSM's own path, which this machine may not have */
		fprintf(out,
		        "# opensm partition_config_file %s: not readable here; import it with "
		        "--partitions FILE\n",
		        pf);
		warn_site(&im,
		          "%s: partition_config_file %s is not readable here: import it with "
		          "--partitions FILE, or the partitions are ibsmd's default (every port a "
		          "full member of 0x7fff)",
		          conf, pf);
		pf = NULL;
	}
	if (pf && import_partitions(&im, pf) < 0)
		goto out;
	/* QoS: OpenSM applies its qos_* tables and qos-policy.conf only with qos TRUE; a
	 * policy named on the command line is imported whatever opensm.conf says */
	const char *qf = qos ? qos : im.qos && im.qos_file[0] ? im.qos_file : NULL;
	if (qf && !qos && access(qf, R_OK) != 0) {
		fprintf(out,
		        "# opensm qos_policy_file %s: not readable here; import it with "
		        "--qos-policy FILE\n",
		        qf);
		qf = NULL;
	}
	if (qf && qos_import_policy(im.qi, qf, err, errlen) < 0)
		goto out;
	if (im.qos || qos)
		qos_import_write(im.qi, out);
	else if (conf)
		fprintf(out, "# opensm qos FALSE: its qos_* options and QoS policy file do not "
		             "apply, and were not imported\n");
	rc = 0;
	if (im.warnings && warn)
		fprintf(warn,
		        "ibsmd: %u warning(s) above: settings ibsmd cannot honour as OpenSM would; "
		        "the YAML says what it does instead\n",
		        im.warnings);
out:
	qos_import_free(im.qi);
	return rc;
}
