/* ibsa health --compare FILE [--node-name-map MAP]: the daemon's health report, and one more
 * check, "topology": the fabric as ibsmd holds it (its `dump topology`) against the topology a
 * site saved (an ibnetdiscover file): nodes missing or new, cables pulled, new, or at another
 * port than saved. Done here rather than in the daemon: the file is the user's, read with the
 * user's rights. Missing and miswired fail; only new nodes or cables warn. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/escape.h"
#include "util/ibnet.h"
#include "util/name_map.h"

#define SHOWN 20 /* differences named; the count says how many there are */

struct compare {
	const struct ibnet *saved, *live;
	const struct name_map *names;
	unsigned count, fails;
	char items[SHOWN][400];
};

/* a node's name: the node-name-map's, the saved file's description, the fabric's */
static const char *node_name(const struct compare *cm, uint64_t guid)
{
	const char *n = cm->names ? name_map_get(cm->names, guid) : NULL;
	if (n)
		return n;
	const struct ibnet *in[2] = {cm->saved, cm->live};
	for (unsigned i = 0; i < 2; i++) {
		uint32_t k = u64map_get(&in[i]->by_guid, guid);
		if (k != U64MAP_NONE && in[i]->nodes[k].desc[0])
			return in[i]->nodes[k].desc;
	}
	return "?";
}

static void end(const struct compare *cm, char *buf, size_t len, uint64_t guid, unsigned port)
{
	snprintf(buf, len, "%s (0x%016" PRIx64 ") port %u", node_name(cm, guid), guid, port);
}

static void note(void *ctx, const struct ibnet_change *c)
{
	struct compare *cm = ctx;
	bool fail = c->kind != IBNET_NODE_EXTRA && c->kind != IBNET_LINK_EXTRA;
	cm->fails += fail;
	if (cm->count++ >= SHOWN)
		return;
	char a[110], want[110], got[110];
	char *out = cm->items[cm->count - 1];
	size_t len = sizeof(cm->items[0]);
	end(cm, a, sizeof(a), c->guid, c->port);
	end(cm, want, sizeof(want), c->want_guid, c->want_port);
	end(cm, got, sizeof(got), c->got_guid, c->got_port);
	switch (c->kind) {
	case IBNET_NODE_MISSING:
		snprintf(out, len, "missing node: %s (0x%016" PRIx64 ")", node_name(cm, c->guid),
		         c->guid);
		break;
	case IBNET_NODE_EXTRA:
		snprintf(out, len, "new node: %s (0x%016" PRIx64 ")", node_name(cm, c->guid),
		         c->guid);
		break;
	case IBNET_LINK_MISSING: snprintf(out, len, "missing cable: %s to %s", a, want); break;
	case IBNET_LINK_EXTRA: snprintf(out, len, "new cable: %s to %s", a, got); break;
	case IBNET_MISWIRED:
		snprintf(out, len, "miswired: %s goes to %s, saved: to %s", a, got, want);
		break;
	}
}

static int parse_args(int argc, char **argv, const char **file, const char **map)
{
	static const struct option opts[] = {
	    {"compare", required_argument, NULL, 'c'},
	    {"node-name-map", required_argument, NULL, 'n'},
	    {NULL, 0, NULL, 0},
	};
	int o;
	optind = 0;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 'c')
			*file = optarg;
		else if (o == 'n')
			*map = optarg;
		else
			return EXIT_USAGE;
	}
	if (optind != argc || !*file) {
		fprintf(stderr, "ibsa: health [--compare FILE [--node-name-map MAP]]\n");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* the two inputs: the saved topology and map, and the fabric as ibsmd holds it */
static int load(const char *path, const char *file, const char *map, struct ibnet *saved,
                struct ibnet *live, struct name_map *names)
{
	char why[512];
	memset(names, 0, sizeof(*names));
	if (ibnet_read(saved, file, why, sizeof(why)) < 0) {
		fprintf(stderr, "ibsa: health --compare: %s\n", why);
		return EXIT_USAGE;
	}
	if (map && name_map_read(names, map, why, sizeof(why)) < 0) {
		fprintf(stderr, "ibsa: health --node-name-map: %s\n", why);
		ibnet_free(saved);
		return EXIT_USAGE;
	}
	char *text = NULL;
	size_t len = 0;
	int rc = cli_control_read_all(path, "dump topology", &text, &len);
	if (rc == EXIT_OK &&
	    ibnet_parse(live, text, len, "ibsmd's dump topology", why, sizeof(why)) < 0) {
		fprintf(stderr, "ibsa: %s\n", why);
		rc = EXIT_BAD_ANSWER;
	}
	free(text);
	if (rc != EXIT_OK) {
		ibnet_free(saved);
		name_map_free(names);
	}
	return rc;
}

static void put_text(const struct compare *cm, const char *file)
{
	const char *st = cm->fails ? "fail" : cm->count ? "warn" : "ok";
	printf("%-4s  %-10s  the fabric against %s", st, "topology", file);
	if (cm->count)
		printf("; %u found", cm->count);
	putchar('\n');
	for (unsigned i = 0; i < cm->count && i < SHOWN; i++)
		printf("        %s\n", cm->items[i]);
	if (cm->count > SHOWN)
		printf("        ... and %u more\n", cm->count - SHOWN);
}

/* the daemon's JSON report with the topology check added to its checks and its verdict */
static int put_json(const struct compare *cm, const char *file, char *report, size_t len)
{
	int ours = cm->fails ? 2 : cm->count ? 1 : 0;
	static const char *const st[] = {"ok", "warn", "fail"};
	int theirs = strstr(report, "{\"status\":\"fail\"") == report   ? 2
	             : strstr(report, "{\"status\":\"warn\"") == report ? 1
	                                                                : 0;
	/* the object is the first line; the verdict's "warning: " or "failing: " line follows */
	char *nl = memchr(report, '\n', len);
	if (nl)
		len = (size_t)(nl - report);
	report[len] = 0;
	const char *checks = strstr(report, ",\"checks\":[");
	if (!checks || len < 2 || strcmp(report + len - 2, "]}"))
		return -1;
	report[len - 2] = 0; /* the checks' list and the object, closed again below */
	printf("{\"status\":\"%s\"%s,{\"name\":\"topology\",\"status\":\"%s\",\"count\":%u,"
	       "\"summary\":",
	       st[ours > theirs ? ours : theirs], checks, st[ours], cm->count);
	char summary[300];
	snprintf(summary, sizeof(summary), "the fabric against %s", file);
	json_put_str(stdout, summary, sizeof(summary));
	fputs(",\"items\":[", stdout);
	for (unsigned i = 0; i < cm->count && i < SHOWN; i++) {
		if (i)
			putchar(',');
		json_put_str(stdout, cm->items[i], sizeof(cm->items[i]));
	}
	fputs("]}]}\n", stdout);
	return ours > theirs ? ours : theirs;
}

int cli_health_compare(const char *path, bool json, int argc, char **argv)
{
	const char *file = NULL, *map = NULL;
	int rc = parse_args(argc, argv, &file, &map);
	if (rc != EXIT_OK)
		return rc;
	struct ibnet saved, live;
	struct name_map names;
	rc = load(path, file, map, &saved, &live, &names);
	if (rc != EXIT_OK)
		return rc;
	struct compare cm = {.saved = &saved, .live = &live, .names = map ? &names : NULL};
	ibnet_compare(&saved, &live, note, &cm);
	char *report = NULL;
	size_t len = 0;
	int worst = 0;
	if (json) {
		rc = cli_control_read_all(path, "health --json", &report, &len);
		if (rc == EXIT_OK && (worst = put_json(&cm, file, report, len)) < 0) {
			fprintf(stderr, "ibsa: ibsmd's health report is not the JSON expected\n");
			rc = EXIT_BAD_ANSWER;
		}
	} else {
		char *health[] = {"health"};
		rc = cli_control(path, false, 1, health); /* the report, its verdict on stderr */
		worst = rc == EXIT_UNHEALTHY ? 2 : rc == EXIT_WARNINGS ? 1 : 0;
		if (rc == EXIT_OK || rc == EXIT_WARNINGS || rc == EXIT_UNHEALTHY) {
			rc = EXIT_OK;
			put_text(&cm, file);
			if (cm.count)
				fprintf(stderr, "ibsa: topology: %u differences with %s\n",
				        cm.count, file);
			worst = cm.fails ? 2 : cm.count && worst < 1 ? 1 : worst;
		}
	}
	free(report);
	ibnet_free(&saved);
	ibnet_free(&live);
	name_map_free(&names);
	if (rc != EXIT_OK)
		return rc;
	return worst == 2 ? EXIT_UNHEALTHY : worst == 1 ? EXIT_WARNINGS : EXIT_OK;
}
