/* What config.c's parts share (config.c, qos.c): the parser's state and the helpers that read
 * one value with a message naming file:line:column. Not for other layers. */
#ifndef IBSMD_CONFIG_INT_H
#define IBSMD_CONFIG_INT_H

#include <stdio.h>
#include <yaml.h>

#include "config/config.h"

/* Bounds checked before libyaml loads a file: no configuration comes near them */
#define CONFIG_MAX_DEPTH 32
#define CONFIG_MAX_SIZE  (16u << 20)

struct cfgp {
	const char *path;
	yaml_document_t *doc;
	char *err;
	size_t errlen;
	bool seen[CONFIG_NKEYS]; /* given in this file (a key twice is a mistake) */
};

/* Always -1, with "FILE:LINE:COLUMN: message" in p->err. */
int cfg_err(struct cfgp *p, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *cfg_scalar(struct cfgp *p, const yaml_node_t *n, const char *key);
int cfg_u64(struct cfgp *p, const yaml_node_t *n, const char *key, uint64_t max, uint64_t *out);
int cfg_bool(struct cfgp *p, const yaml_node_t *n, const char *key, bool *out);
int cfg_str(struct cfgp *p, const yaml_node_t *n, const char *key, char *dst, size_t len);
int cfg_mtu(struct cfgp *p, const yaml_node_t *n, const char *key, uint8_t *out);
int cfg_rate(struct cfgp *p, const yaml_node_t *n, const char *key, uint8_t *out);
void cfg_dump_str(FILE *out, const char *s);
const char *cfg_rate_name(uint8_t code);

/* The qos option (config/qos.c). */
int cfg_parse_qos(struct cfgp *p, struct ibsmd_config *c, const yaml_node_t *v);
void cfg_dump_qos(FILE *out, const struct config_qos *q);
bool cfg_qos_equal(const struct config_qos *a, const struct config_qos *b);

/* The congestion_control option (config/cc.c). */
int cfg_parse_cc(struct cfgp *p, struct ibsmd_config *c, const yaml_node_t *v);
bool cfg_cc_equal(const struct config_cc *a, const struct config_cc *b);

#endif
