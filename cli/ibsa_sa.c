/* ibsa's SA commands: one query each, the records printed as a table or JSON. */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "mad/mad_header.h"
#include "mad/sa_records.h"

int sa_query(struct cli *c, uint8_t method, uint16_t attr, uint64_t mask, const uint8_t *req,
             size_t reqlen, struct sa_answer *out, const char *what)
{
	memset(out, 0, sizeof(*out));
	if (!c->local.sm_lid) {
		fprintf(stderr,
		        "ibsa: %s: the local port knows no SM (its SMLID is 0): is an SM "
		        "running?\n",
		        what);
		return EXIT_TRANSPORT;
	}
	struct mad_sa_hdr h;
	mad_sa_hdr_init(&h, method, attr, mask);
	h.sm_key = c->sm_key;
	uint8_t buf[MAD_SIZE] = {0};
	mad_sa_hdr_encode(&h, buf, sizeof(buf), NULL);
	if (req)
		memcpy(buf + MAD_SA_HDR_END, req,
		       reqlen > MAD_SA_DATA_SIZE ? MAD_SA_DATA_SIZE : reqlen);
	struct mad_request rq = {
	    .to = {.lid = c->local.sm_lid, .qpn = QP1, .qkey = QP1_QKEY},
	    .mad = buf,
	    .len = sizeof(buf),
	    .retries = -1,
	};
	cli_call(c, &rq, &out->a);
	if (out->a.error == 0 && (out->a.status & 0x7fff) == MAD_STATUS_SA_NO_RECORDS)
		return EXIT_OK; /* an empty answer, not a failure */
	int rc = cli_answer_exit(&out->a, what);
	if (rc != EXIT_OK)
		return rc;
	struct mad_sa_hdr rh;
	if (mad_sa_hdr_decode(out->a.mad, out->a.len, &rh, NULL) < 0) {
		fprintf(stderr, "ibsa: %s: malformed answer\n", what);
		return EXIT_BAD_ANSWER;
	}
	out->recs = out->a.mad + MAD_SA_HDR_END;
	out->stride = (size_t)rh.attr_offset * 8;
	if (method == MAD_METHOD_GET)
		out->n = 1;
	else
		out->n = out->stride ? (uint32_t)((out->a.len - MAD_SA_HDR_END) / out->stride) : 0;
	return EXIT_OK;
}

void print_records(struct cli *c, const struct mad_layout *l, const struct sa_answer *ans,
                   const char *title)
{
	uint8_t host[2048];
	if (c->json)
		fputc('[', stdout);
	for (uint32_t i = 0; i < ans->n; i++) {
		if (mad_layout_decode(l, ans->recs + (size_t)i * ans->stride, ans->stride, host,
		                      NULL) < 0)
			continue;
		if (c->json) {
			if (i)
				fputc(',', stdout);
			mad_layout_print_json(l, host, stdout);
		} else {
			printf("%s %u\n", title, i + 1);
			mad_layout_print(l, host, stdout, 2);
		}
	}
	if (c->json)
		fputs("]\n", stdout);
	else
		printf("# %u record%s\n", ans->n, ans->n == 1 ? "" : "s");
}

/* A table query with one optional LID selector: COMMAND [LID] */
static int table_cmd(struct cli *c, int argc, char **argv, uint16_t attr,
                     const struct mad_layout *l, const char *title, int lid_bits)
{
	uint8_t req[MAD_SA_DATA_SIZE] = {0};
	uint64_t mask = 0;
	if (argc > 2) {
		fprintf(stderr, "ibsa %s: at most one argument, a LID\n", argv[0]);
		return EXIT_USAGE;
	}
	if (argc == 2) {
		char *e;
		unsigned long lid = strtoul(argv[1], &e, 0);
		if (*e || !lid || lid > 0xbfff) {
			fprintf(stderr, "ibsa %s: \"%s\" is not a unicast LID\n", argv[0], argv[1]);
			return EXIT_USAGE;
		}
		mad_bits_set(req, 0, (unsigned)lid_bits, lid);
		mask = 1; /* the LID is every one of these records' first component */
	}
	struct sa_answer ans;
	int rc = sa_query(c, MAD_METHOD_GET_TABLE, attr, mask, req, sizeof(req), &ans, argv[0]);
	if (rc == EXIT_OK)
		print_records(c, l, &ans, title);
	cli_answer_free(&ans.a);
	return rc;
}

int cmd_nodes(struct cli *c, int argc, char **argv)
{
	return table_cmd(c, argc, argv, MAD_ATTR_NODE_RECORD, &mad_node_record_layout, "node", 16);
}

int cmd_ports(struct cli *c, int argc, char **argv)
{
	return table_cmd(c, argc, argv, MAD_ATTR_PORT_INFO_RECORD, &mad_port_info_record_layout,
	                 "port", 16);
}

int cmd_links(struct cli *c, int argc, char **argv)
{
	return table_cmd(c, argc, argv, MAD_ATTR_LINK_RECORD, &mad_link_record_layout, "link", 16);
}

int cmd_switches(struct cli *c, int argc, char **argv)
{
	return table_cmd(c, argc, argv, MAD_ATTR_SWITCH_INFO_RECORD, &mad_switch_info_record_layout,
	                 "switch", 16);
}

int cmd_sm(struct cli *c, int argc, char **argv)
{
	return table_cmd(c, argc, argv, MAD_ATTR_SM_INFO_RECORD, &mad_sm_info_record_layout, "sm",
	                 16);
}

int cmd_lft(struct cli *c, int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "ibsa lft: name the switch by LID\n");
		return EXIT_USAGE;
	}
	return table_cmd(c, argc, argv, MAD_ATTR_LFT_RECORD, &mad_lft_record_layout, "block", 16);
}

int cmd_pkeys(struct cli *c, int argc, char **argv)
{
	return table_cmd(c, argc, argv, MAD_ATTR_PKEY_TABLE_RECORD, &mad_pkey_table_record_layout,
	                 "pkeys", 16);
}

int cmd_guids(struct cli *c, int argc, char **argv)
{
	return table_cmd(c, argc, argv, MAD_ATTR_GUID_INFO_RECORD, &mad_guid_info_record_layout,
	                 "guids", 16);
}

int cmd_sl2vl(struct cli *c, int argc, char **argv)
{
	return table_cmd(c, argc, argv, MAD_ATTR_SL2VL_RECORD, &mad_sl2vl_record_layout, "sl2vl",
	                 16);
}

int cmd_vlarb(struct cli *c, int argc, char **argv)
{
	return table_cmd(c, argc, argv, MAD_ATTR_VLARB_RECORD, &mad_vlarb_record_layout, "vlarb",
	                 16);
}

/* alias add LID INDEX [GUID] | alias delete LID INDEX [GUID]: an alias GUID at an index of the
 * port's GUIDInfo table (index 0 is the port GUID); without GUID on add, the SA makes one up */
int cmd_alias(struct cli *c, int argc, char **argv)
{
	if (argc < 4 || argc > 5 || (strcmp(argv[1], "add") && strcmp(argv[1], "delete"))) {
		fprintf(stderr, "ibsa alias: add|delete LID INDEX [GUID]\n");
		return EXIT_USAGE;
	}
	char *e1, *e2, *e3 = NULL;
	unsigned long lid = strtoul(argv[2], &e1, 0), index = strtoul(argv[3], &e2, 0);
	unsigned long long guid = argc == 5 ? strtoull(argv[4], &e3, 0) : 0;
	if (*e1 || *e2 || (e3 && *e3) || !lid || lid > 0xbfff || !index || index >= 8 * 256) {
		fprintf(stderr, "ibsa alias: LID 1..0xbfff, INDEX 1..2047, GUID a number\n");
		return EXIT_USAGE;
	}
	struct mad_guid_info_record r = {.lid = (uint16_t)lid, .block_num = (uint8_t)(index / 8)};
	r.info.guid[index % 8] = guid;
	uint8_t req[MAD_SA_DATA_SIZE] = {0};
	mad_guid_info_record_encode(&r, req, sizeof(req), NULL);
	uint64_t mask = 1 | 2 | (1ull << (4 + index % 8)); /* LID, BlockNum, that GUID */
	struct sa_answer ans;
	int rc = sa_query(c, !strcmp(argv[1], "add") ? MAD_METHOD_SET : MAD_METHOD_DELETE,
	                  MAD_ATTR_GUID_INFO_RECORD, mask, req, sizeof(req), &ans, "alias");
	if (rc == EXIT_OK) {
		ans.n = 1;
		print_records(c, &mad_guid_info_record_layout, &ans, "guids");
	}
	cli_answer_free(&ans.a);
	return rc;
}

int cmd_mft(struct cli *c, int argc, char **argv)
{
	return table_cmd(c, argc, argv, MAD_ATTR_MFT_RECORD, &mad_mft_record_layout, "block", 16);
}

/* mcast [MGID]: multicast groups; with the SA's SM_Key (--sm-key), one record per member */
int cmd_mcast(struct cli *c, int argc, char **argv)
{
	uint8_t req[MAD_SA_DATA_SIZE] = {0};
	uint64_t mask = 0;
	if (argc > 2) {
		fprintf(stderr, "ibsa mcast: at most one argument, an MGID\n");
		return EXIT_USAGE;
	}
	if (argc == 2) {
		if (inet_pton(AF_INET6, argv[1], req) != 1) {
			fprintf(stderr, "ibsa mcast: \"%s\" is not an MGID\n", argv[1]);
			return EXIT_USAGE;
		}
		mask = MCM_COMP_MGID;
	}
	struct sa_answer ans;
	int rc = sa_query(c, MAD_METHOD_GET_TABLE, MAD_ATTR_MCMEMBER_RECORD, mask, req, sizeof(req),
	                  &ans, "mcast");
	if (rc == EXIT_OK)
		print_records(c, &mad_mcmember_record_layout, &ans, "group");
	cli_answer_free(&ans.a);
	return rc;
}

/* SRC/DST: a LID, a port GUID, a GID, or a node description */
static int endpoint(struct cli *c, const char *s, uint8_t gid[16], uint16_t *lid)
{
	char *e;
	*lid = 0;
	memset(gid, 0, 16);
	if (strchr(s, ':')) {
		if (inet_pton(AF_INET6, s, gid) == 1)
			return 1;
		fprintf(stderr, "ibsa: \"%s\" is not a GID\n", s);
		return -1;
	}
	unsigned long long v = strtoull(s, &e, 0);
	if (!*e && v) {
		if (v <= 0xbfff) {
			*lid = (uint16_t)v;
			return 0;
		}
		/* a port GUID: the GID of our subnet */
		uint64_t prefix = 0xfe80000000000000ull;
		for (int i = 0; i < 8; i++) {
			gid[i] = (uint8_t)(prefix >> (56 - 8 * i));
			gid[8 + i] = (uint8_t)(v >> (56 - 8 * i));
		}
		return 1;
	}
	/* a node description: look it up */
	struct sa_answer ans;
	if (sa_query(c, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 0, NULL, 0, &ans, "nodes") !=
	    EXIT_OK)
		return -1;
	int found = -1;
	for (uint32_t i = 0; i < ans.n && found < 0; i++) {
		struct mad_node_record nr;
		mad_node_record_decode(ans.recs + (size_t)i * ans.stride, ans.stride, &nr, NULL);
		if (!strcmp(nr.desc.desc, s)) {
			*lid = nr.lid;
			found = 0;
		}
	}
	cli_answer_free(&ans.a);
	if (found < 0)
		fprintf(stderr, "ibsa: no node described \"%s\"\n", s);
	return found;
}

/* The base LID of the port that answers to lid (one of its 2^LMC), from the PortInfoRecords;
 * lid itself where none holds it. */
static uint16_t base_lid(struct cli *c, uint16_t lid)
{
	struct sa_answer ans;
	if (sa_query(c, MAD_METHOD_GET_TABLE, MAD_ATTR_PORT_INFO_RECORD, 0, NULL, 0, &ans,
	             "ports") != EXIT_OK)
		return lid;
	uint16_t base = lid;
	for (uint32_t i = 0; i < ans.n; i++) {
		struct mad_port_info_record pr;
		mad_port_info_record_decode(ans.recs + (size_t)i * ans.stride, ans.stride, &pr,
		                            NULL);
		uint16_t b = pr.info.lid;
		if (b && pr.info.lmc < 8 && lid > b && (unsigned)(lid - b) < (1u << pr.info.lmc)) {
			base = b;
			break;
		}
	}
	cli_answer_free(&ans.a);
	return base;
}

/* The port GUID of the NodeRecord whose LID is lid: 1 found, 0 none, -1 the query failed. */
static int node_port_guid(struct cli *c, uint16_t lid, uint64_t *guid)
{
	uint8_t req[MAD_SA_DATA_SIZE] = {0};
	mad_bits_set(req, 0, 16, lid);
	struct sa_answer ans;
	if (sa_query(c, MAD_METHOD_GET_TABLE, MAD_ATTR_NODE_RECORD, 1, req, sizeof(req), &ans,
	             "nodes") != EXIT_OK)
		return -1;
	int found = 0;
	if (ans.n) {
		struct mad_node_record nr;
		mad_node_record_decode(ans.recs, ans.stride, &nr, NULL);
		*guid = nr.info.port_guid;
		found = 1;
	}
	cli_answer_free(&ans.a);
	return found;
}

/* An endpoint as a GID: one given by LID becomes its NodeRecord's port GUID on the
 * link-local prefix; a port's other LIDs (LMC > 0) by its base LID's. */
static int endpoint_gid(struct cli *c, const char *s, uint8_t gid[16])
{
	uint16_t lid;
	int k = endpoint(c, s, gid, &lid);
	if (k != 0)
		return k < 0 ? -1 : 0;
	uint64_t guid = 0;
	int found = node_port_guid(c, lid, &guid);
	uint16_t base = found == 0 ? base_lid(c, lid) : lid;
	if (found == 0 && base != lid)
		found = node_port_guid(c, base, &guid);
	if (found < 0)
		return -1;
	if (!found) {
		fprintf(stderr, "ibsa: no node has LID %u\n", lid);
		return -1;
	}
	mad_bits_set(gid, 0, 64, 0xfe80000000000000ull);
	mad_bits_set(gid, 64, 64, guid);
	return 0;
}

/* mpaths' --independent: the IndependenceSelector asked for (link 1, node 2), 0 for none,
 * -1 when the word is not one. */
static int independence_arg(int argc, char **argv)
{
	if (argc == 3)
		return 0;
	if (argc == 5 && !strcmp(argv[3], "--independent")) {
		if (!strcmp(argv[4], "link"))
			return 1;
		if (!strcmp(argv[4], "node"))
			return 2;
	}
	return -1;
}

/* mpaths SRC[,SRC...] DST[,DST...] [--independent link|node]: a MultiPathRecord GetMulti
 * for every pair, the paths that share no link (or no switch) first when asked */
int cmd_mpaths(struct cli *c, int argc, char **argv)
{
	int indep = independence_arg(argc, argv);
	if (indep < 0) {
		if (argc == 5 && !strcmp(argv[3], "--independent"))
			fprintf(stderr,
			        "ibsa mpaths: --independent \"%s\": link (no cable in common, "
			        "IndependenceSelector 1) or node (no switch either, 2)\n",
			        argv[4]);
		else
			fprintf(stderr,
			        "ibsa mpaths: give SRC[,SRC...] and DST[,DST...], and maybe "
			        "--independent link|node\n");
		return EXIT_USAGE;
	}
	struct mad_multipath_record mp = {.independence_selector = (uint8_t)indep};
	for (int side = 0; side < 2; side++) {
		char *list = strdup(argv[1 + side]), *save = NULL;
		if (!list)
			return EXIT_FAILURE;
		for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			unsigned n = mp.sgid_count + mp.dgid_count;
			if (n >= MAD_MPR_MAX_GIDS) {
				fprintf(stderr, "ibsa mpaths: at most %d endpoints in all\n",
				        MAD_MPR_MAX_GIDS);
				free(list);
				return EXIT_USAGE;
			}
			if (endpoint_gid(c, t, mp.gid[n]) < 0) {
				free(list);
				return EXIT_USAGE;
			}
			if (side == 0)
				mp.sgid_count++;
			else
				mp.dgid_count++;
		}
		free(list);
	}
	uint8_t req[MAD_SA_DATA_SIZE] = {0};
	mad_multipath_record_encode(&mp, req, sizeof(req), NULL);
	struct sa_answer ans;
	/* SGIDCount and DGIDCount, and IndependenceSelector when asked */
	uint64_t mask = (1ull << 19) | (1ull << 20) | (indep ? 1ull << 17 : 0);
	int rc = sa_query(c, MAD_METHOD_GET_MULTI, MAD_ATTR_MULTIPATH_RECORD, mask, req,
	                  sizeof(req), &ans, "mpaths");
	if (rc == EXIT_OK) {
		print_records(c, &mad_path_record_layout, &ans, "path");
		if (!ans.n)
			rc = EXIT_MAD_STATUS;
		else if (indep && !c->json) {
			/* ibsmd says in each record's NumbPath how many lead the answer as the
			 * independent set (Preference 0) */
			struct mad_path_record first;
			mad_path_record_decode(ans.recs, ans.stride, &first, NULL);
			printf("# %u %s-independent path%s first\n", first.num_path,
			       indep == 1 ? "link" : "node", first.num_path == 1 ? "" : "s");
		}
	}
	cli_answer_free(&ans.a);
	return rc;
}

int cmd_paths(struct cli *c, int argc, char **argv)
{
	struct mad_path_record pr = {.num_path = 0};
	uint64_t mask = 0;
	/* the service and partition the path is for: the QoS policy may give them their own
	 * SL, MTU and rate */
	for (int i = 3; i + 1 < argc; i += 2) {
		char *e;
		unsigned long long v = strtoull(argv[i + 1], &e, 0);
		if (*e || e == argv[i + 1]) {
			fprintf(stderr, "ibsa paths: %s \"%s\" is not a number\n", argv[i],
			        argv[i + 1]);
			return EXIT_USAGE;
		}
		if (!strcmp(argv[i], "--sid")) {
			pr.service_id = v;
			mask |= PR_COMP_SERVICE_ID | PR_COMP_SERVICE_ID << 1;
		} else if (!strcmp(argv[i], "--pkey") && v <= 0xffff) {
			pr.pkey = (uint16_t)v;
			mask |= PR_COMP_PKEY;
		} else {
			fprintf(stderr, "ibsa paths: unknown option %s (--sid ID, --pkey P_KEY)\n",
			        argv[i]);
			return EXIT_USAGE;
		}
	}
	if (argc < 3 || argc % 2 == 0) {
		fprintf(stderr, "ibsa paths: give SRC and DST (LID, port GUID, GID or node "
		                "description), and maybe --sid ID, --pkey P_KEY\n");
		return EXIT_USAGE;
	}
	/* "all": every endpoint the SA lets us see, at that end */
	if (strcmp(argv[1], "all")) {
		int k = endpoint(c, argv[1], pr.sgid, &pr.slid);
		if (k < 0)
			return EXIT_USAGE;
		mask |= k ? PR_COMP_SGID : PR_COMP_SLID;
	}
	if (strcmp(argv[2], "all")) {
		int k = endpoint(c, argv[2], pr.dgid, &pr.dlid);
		if (k < 0)
			return EXIT_USAGE;
		mask |= k ? PR_COMP_DGID : PR_COMP_DLID;
	}
	uint8_t req[MAD_SA_DATA_SIZE] = {0};
	mad_path_record_encode(&pr, req, sizeof(req), NULL);
	struct sa_answer ans;
	int rc = sa_query(c, MAD_METHOD_GET_TABLE, MAD_ATTR_PATH_RECORD, mask, req, sizeof(req),
	                  &ans, "paths");
	if (rc == EXIT_OK) {
		print_records(c, &mad_path_record_layout, &ans, "path");
		if (!ans.n)
			rc = EXIT_MAD_STATUS; /* no path is an answer a script wants to see */
	}
	cli_answer_free(&ans.a);
	return rc;
}

/* A ServiceKey: hex digits (0x optional, ':' between bytes allowed), up to 16 bytes, read as
 * one big-endian number, so that 0x5ec and 00:..:05:ec are the same key. */
static int parse_service_key(const char *s, uint8_t key[16])
{
	char hex[33];
	size_t n = 0;
	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		s += 2;
	for (; *s; s++) {
		if (*s == ':')
			continue;
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
		      (*s >= 'A' && *s <= 'F')) ||
		    n == 32)
			return -1;
		hex[n++] = *s;
	}
	if (!n)
		return -1;
	memset(key, 0, 16);
	for (size_t i = 0; i < n; i++) {
		char d = hex[n - 1 - i];
		unsigned v = d <= '9' ? (unsigned)(d - '0') : (unsigned)((d | 0x20) - 'a' + 10);
		key[15 - i / 2] |= (uint8_t)(i % 2 ? v << 4 : v);
	}
	return 0;
}

/* services [ID]; services add ID [--name N] [--lease S] [--pkey P] [--gid G] [--key K];
 * services delete ID [--gid G] [--pkey P] [--key K]. Registration is for the local port unless
 * --gid names another. */
int cmd_services(struct cli *c, int argc, char **argv)
{
	const char *verb =
	    argc > 1 && (!strcmp(argv[1], "add") || !strcmp(argv[1], "delete")) ? argv[1] : NULL;
	int at = verb ? 2 : 1;
	uint8_t req[MAD_SA_DATA_SIZE] = {0};
	uint64_t mask = 0;
	if (at < argc && argv[at][0] != '-') {
		char *e;
		uint64_t id = strtoull(argv[at], &e, 0);
		if (*e) {
			fprintf(stderr, "ibsa services: \"%s\" is not a ServiceID\n", argv[at]);
			return EXIT_USAGE;
		}
		mad_bits_set(req, 0, 64, id);
		mask |= 1; /* ServiceID */
		at++;
	} else if (verb) {
		fprintf(stderr, "ibsa services %s: name the ServiceID\n", verb);
		return EXIT_USAGE;
	}
	if (verb) {
		/* the local port's GID unless told otherwise */
		uint64_t prefix = c->local.gid_prefix ? c->local.gid_prefix : 0xfe80000000000000ull;
		mad_bits_set(req, 64, 64, prefix);
		mad_bits_set(req, 128, 64, c->local.port_guid);
		mask |= 2;
	}
	for (; at < argc; at++) {
		const char *opt = argv[at], *val = at + 1 < argc ? argv[at + 1] : NULL;
		char *e = NULL;
		if (!verb || !val) {
			fprintf(stderr, "ibsa services: unexpected \"%s\"\n", opt);
			return EXIT_USAGE;
		}
		at++;
		if (!strcmp(opt, "--gid")) {
			uint8_t gid[16];
			if (inet_pton(AF_INET6, val, gid) != 1) {
				fprintf(stderr, "ibsa services: \"%s\" is not a GID\n", val);
				return EXIT_USAGE;
			}
			memcpy(req + 8, gid, 16);
		} else if (!strcmp(opt, "--name") && !strcmp(verb, "add")) {
			strncpy((char *)req + 48, val, 64);
			mask |= 1ull << 6;
		} else if (!strcmp(opt, "--lease") && !strcmp(verb, "add")) {
			mad_bits_set(req, 224, 32, strtoul(val, &e, 0));
			mask |= 1ull << 4;
		} else if (!strcmp(opt, "--pkey")) {
			mad_bits_set(req, 192, 16, strtoul(val, &e, 0));
			mask |= 1ull << 2;
		} else if (!strcmp(opt, "--key")) {
			/* the service's key: set with add, and what proves the right to replace or
			 * delete a service another port registered */
			if (parse_service_key(val, req + 32) < 0) {
				fprintf(stderr,
				        "ibsa services: \"%s\" is not a ServiceKey (up to 32 hex "
				        "digits)\n",
				        val);
				return EXIT_USAGE;
			}
			mask |= 1ull << 5;
		} else {
			fprintf(stderr, "ibsa services %s: unknown option \"%s\"\n", verb, opt);
			return EXIT_USAGE;
		}
		if (e && *e) {
			fprintf(stderr, "ibsa services: \"%s\" is not a number\n", val);
			return EXIT_USAGE;
		}
	}
	uint8_t method = !verb                  ? MAD_METHOD_GET_TABLE
	                 : !strcmp(verb, "add") ? MAD_METHOD_SET
	                                        : MAD_METHOD_DELETE;
	struct sa_answer ans;
	int rc = sa_query(c, method, MAD_ATTR_SERVICE_RECORD, mask, req, sizeof(req), &ans,
	                  verb ? verb : "services");
	if (rc == EXIT_OK) {
		if (verb && !ans.n && !ans.a.error &&
		    (ans.a.status & 0x7fff) == MAD_STATUS_SA_NO_RECORDS) {
			fprintf(stderr, "ibsa services delete: no such service\n");
			rc = EXIT_MAD_STATUS;
		} else {
			if (method != MAD_METHOD_GET_TABLE)
				ans.n = 1;
			print_records(c, &mad_service_record_layout, &ans, "service");
		}
	}
	cli_answer_free(&ans.a);
	return rc;
}
