/* ibsa smp: Get one SM attribute from a node, by directed route or LID, and print it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "mad/mad_header.h"
#include "mad/smp_attrs.h"
#include "mad/vport_attrs.h"

struct smp_attr {
	const char *name;
	uint16_t id;
	const struct mad_layout *layout;
	const char *mod_help;
};

static const struct smp_attr attrs[] = {
    {"nodeinfo", MAD_ATTR_NODE_INFO, &mad_node_info_layout, "unused"},
    {"nodedesc", MAD_ATTR_NODE_DESC, &mad_node_desc_layout, "unused"},
    {"portinfo", MAD_ATTR_PORT_INFO, &mad_port_info_layout, "port number"},
    {"switchinfo", MAD_ATTR_SWITCH_INFO, &mad_switch_info_layout, "unused"},
    {"sminfo", MAD_ATTR_SM_INFO, &mad_sm_info_layout, "unused"},
    {"pkeys", MAD_ATTR_PKEY_TABLE, &mad_pkey_table_layout, "port << 16 | block"},
    {"guidinfo", MAD_ATTR_GUID_INFO, &mad_guid_info_layout, "block"},
    {"sl2vl", MAD_ATTR_SL2VL_TABLE, &mad_sl2vl_table_layout, "in port << 8 | out port"},
    {"vlarb", MAD_ATTR_VLARB_TABLE, &mad_vlarb_table_layout, "port << 16 | block (1-4)"},
    {"lft", MAD_ATTR_LFT, &mad_lft_block_layout, "block (LIDs 64*block..+63)"},
    {"mft", MAD_ATTR_MFT, &mad_mft_block_layout, "position << 28 | block"},
    /* virtual ports (Annex A18; modifiers as mad/vport_attrs.h reads them) */
    {"virtinfo", MAD_ATTR_VIRT_INFO, &mad_virt_info_layout, "unused"},
    {"vportinfo", MAD_ATTR_VPORT_INFO, &mad_vport_info_layout, "vport"},
    {"vnodeinfo", MAD_ATTR_VNODE_INFO, &mad_vnode_info_layout, "vport"},
    {"vportstate", MAD_ATTR_VPORT_STATE, &mad_vport_state_layout, "block (128 vports each)"},
    {"vpkeys", MAD_ATTR_VPORT_PKEY_TABLE, &mad_pkey_table_layout, "vport << 16 | block"},
};

int cmd_smp(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"dr", required_argument, NULL, 'd'},
	    {"lid", required_argument, NULL, 'l'},
	    {"mod", required_argument, NULL, 'm'},
	    {NULL, 0, NULL, 0},
	};
	const char *dr = NULL;
	long lid = -1;
	uint32_t mod = 0;
	int o;
	optind = 0; /* 0 makes GNU getopt start afresh after main()'s parse */
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'd': dr = optarg; break;
		case 'l': lid = strtol(optarg, NULL, 0); break;
		case 'm': mod = (uint32_t)strtoul(optarg, NULL, 0); break;
		default: return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "ibsa smp: name one attribute\n");
		return EXIT_USAGE;
	}
	const struct smp_attr *a = NULL;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (strcmp(argv[optind], attrs[i].name) == 0)
			a = &attrs[i];
	if (!a) {
		fprintf(stderr, "ibsa smp: unknown attribute \"%s\"\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (dr && lid >= 0) {
		fprintf(stderr, "ibsa smp: give --dr or --lid, not both\n");
		return EXIT_USAGE;
	}
	if (lid > 0xffff) {
		fprintf(stderr, "ibsa smp: LID %ld out of range\n", lid);
		return EXIT_USAGE;
	}

	struct mad_smp smp;
	struct mad_error err;
	struct mad_request req = {.retries = -1};
	if (lid >= 0) {
		mad_smp_init_lid(&smp, MAD_METHOD_GET, a->id, mod);
		req.to.lid = (uint16_t)lid;
	} else {
		uint8_t path[64];
		int hops = mad_dr_path_parse(dr ? dr : "0", path, &err);
		if (hops < 0 || mad_smp_init_dr(&smp, MAD_METHOD_GET, a->id, mod, path,
		                                (unsigned)hops, &err) < 0) {
			fprintf(stderr, "ibsa smp: %s\n", err.msg);
			return EXIT_USAGE;
		}
		req.to.lid = LID_PERMISSIVE;
	}
	uint8_t buf[MAD_SIZE] = {0};
	mad_smp_encode(&smp, buf, sizeof(buf), NULL);
	req.mad = buf;
	req.len = sizeof(buf);

	struct cli_answer ans;
	cli_call(c, &req, &ans);
	char what[96];
	snprintf(what, sizeof(what), "%s via %s %s", argv[optind], lid >= 0 ? "LID" : "DR",
	         lid >= 0 ? "" : (dr ? dr : "0"));
	int rc = cli_answer_exit(&ans, what);
	if (rc != EXIT_OK) {
		cli_answer_free(&ans);
		return rc;
	}
	struct mad_smp resp;
	if (mad_smp_decode(ans.mad, ans.len, &resp, &err) < 0) {
		fprintf(stderr, "ibsa smp: malformed answer: %s\n", err.msg);
		cli_answer_free(&ans);
		return EXIT_BAD_ANSWER;
	}
	char title[160];
	snprintf(title, sizeof(title), "%s (attribute 0x%04x, modifier 0x%x) via %s %s",
	         argv[optind], a->id, mod, lid >= 0 ? "LID" : "directed route",
	         lid >= 0 ? argv[0] : (dr ? dr : "0"));
	rc = cli_print_attribute(c, "smp", a->layout, resp.data, sizeof(resp.data), title);
	cli_answer_free(&ans);
	return rc;
}
