/* Generator specs in YAML: a mapping with "generator" and the generator's keys, e.g.
 *   generator: fattree
 *   radix: 36
 *   levels: 3
 *   hosts: 5184
 * turned into the command-line form ("fattree:radix=36,levels=3,hosts=5184"). */
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "topology.h"

int generate_yaml(struct fabric *f, const char *path, struct fs_error *err)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		snprintf(err->msg, sizeof(err->msg), "%s: cannot open", path);
		return -1;
	}
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, fp);
	char kind[32] = "", args[400] = "", key[64] = "";
	int depth = 0, rc = 0;
	bool have_key = false, done = false;
	while (!done && rc == 0) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			snprintf(err->msg, sizeof(err->msg), "%s:%zu: %s", path,
			         p.problem_mark.line + 1, p.problem ? p.problem : "YAML error");
			rc = -1;
			break;
		}
		size_t line = ev.start_mark.line + 1;
		switch (ev.type) {
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (++depth > 1 || ev.type == YAML_SEQUENCE_START_EVENT) {
				snprintf(err->msg, sizeof(err->msg),
				         "%s:%zu: expected one mapping of "
				         "plain keys and values",
				         path, line);
				rc = -1;
			}
			break;
		case YAML_MAPPING_END_EVENT: depth--; break;
		case YAML_SCALAR_EVENT: {
			const char *v = (const char *)ev.data.scalar.value;
			if (!have_key) {
				snprintf(key, sizeof(key), "%s", v);
				have_key = true;
			} else if (!strcmp(key, "generator")) {
				snprintf(kind, sizeof(kind), "%s", v);
				have_key = false;
			} else {
				size_t n = strlen(args);
				snprintf(args + n, sizeof(args) - n, "%s%s=%s", n ? "," : "", key,
				         v);
				have_key = false;
			}
			break;
		}
		case YAML_STREAM_END_EVENT: done = true; break;
		default: break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	fclose(fp);
	if (rc)
		return rc;
	if (!kind[0]) {
		snprintf(err->msg, sizeof(err->msg), "%s: no \"generator:\" key", path);
		return -1;
	}
	char spec[512];
	snprintf(spec, sizeof(spec), "%s:%s", kind, args);
	if (generate(f, spec, err) < 0) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "%.200s: %.300s", path, err->msg);
		memcpy(err->msg, m, sizeof(m));
		return -1;
	}
	return 0;
}
