/* ibsa cc: Get one Congestion Control attribute (class 0x21) from a port by LID, with the
 * CC_Key the port checks, and print it: what an SM's congestion control manager left there. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "mad/cc.h"
#include "mad/mad_header.h"
#include "mad/mad_types.h"

struct cc_attr {
	const char *name;
	uint16_t id;
	const struct mad_layout *layout;
};

static const struct cc_attr attrs[] = {
    {"info", MAD_ATTR_CC_INFO, &mad_cc_info_layout},
    {"keyinfo", MAD_ATTR_CC_KEY_INFO, &mad_cc_key_info_layout},
    {"switch", MAD_ATTR_CC_SWITCH_SETTING, &mad_cc_switch_setting_layout},
    {"ca", MAD_ATTR_CC_CA_SETTING, &mad_cc_ca_setting_layout},
    {"cct", MAD_ATTR_CC_TABLE, &mad_cc_table_layout},
};

static int parse_args(int argc, char **argv, long *lid, uint32_t *mod, uint64_t *key,
                      const struct cc_attr **a)
{
	static const struct option opts[] = {
	    {"lid", required_argument, NULL, 'l'},
	    {"mod", required_argument, NULL, 'm'},
	    {"cc-key", required_argument, NULL, 'k'},
	    {NULL, 0, NULL, 0},
	};
	int o;
	char *e;
	optind = 0; /* 0 makes GNU getopt start afresh after main()'s parse */
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'l':
			*lid = strtol(optarg, &e, 0);
			if (*e || *lid < 1 || *lid > 0xbfff) {
				fprintf(stderr, "ibsa cc: --lid %s: a unicast LID, 1-0xbfff\n",
				        optarg);
				return EXIT_USAGE;
			}
			break;
		case 'm': *mod = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'k':
			*key = strtoull(optarg, &e, 0);
			if (*e || !*optarg) {
				fprintf(stderr, "ibsa cc: --cc-key %s: not a number\n", optarg);
				return EXIT_USAGE;
			}
			break;
		default: return EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || *lid < 0) {
		fprintf(stderr, "ibsa cc: name one attribute and give --lid\n");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (!strcmp(argv[optind], attrs[i].name))
			*a = &attrs[i];
	if (!*a) {
		fprintf(stderr,
		        "ibsa cc: unknown attribute \"%s\" (info, keyinfo, switch, ca, cct)\n",
		        argv[optind]);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cmd_cc(struct cli *c, int argc, char **argv)
{
	long lid = -1;
	uint32_t mod = 0;
	uint64_t key = 0;
	const struct cc_attr *a = NULL;
	int rc = parse_args(argc, argv, &lid, &mod, &key, &a);
	if (rc != EXIT_OK)
		return rc;
	uint8_t buf[MAD_SIZE];
	struct mad_request req = {.retries = -1,
	                          .to = {.lid = (uint16_t)lid, .qpn = 1, .qkey = QP1_QKEY}};
	req.len = mad_cc_request(buf, MAD_METHOD_GET, a->id, mod, key);
	req.mad = buf;
	struct cli_answer ans;
	cli_call(c, &req, &ans);
	char what[64];
	snprintf(what, sizeof(what), "congestion control %s at LID %ld", a->name, lid);
	rc = cli_answer_exit(&ans, what);
	if (rc != EXIT_OK) {
		if (rc == EXIT_TIMEOUT)
			fprintf(stderr, "ibsa cc: a port with a CC_Key drops requests without it: "
			                "--cc-key\n");
		cli_answer_free(&ans);
		return rc;
	}
	char title[96];
	snprintf(title, sizeof(title), "%s (attribute 0x%04x, modifier 0x%x) at LID %ld", a->name,
	         a->id, mod, lid);
	if (ans.len < MAD_SIZE) {
		fprintf(stderr, "ibsa cc: a short answer (%zu bytes)\n", ans.len);
		rc = EXIT_BAD_ANSWER;
	} else {
		rc = cli_print_attribute(c, "cc", a->layout, ans.mad + MAD_CC_DATA_OFFSET,
		                         MAD_CC_DATA_SIZE, title);
	}
	cli_answer_free(&ans);
	return rc;
}
