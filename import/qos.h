/* OpenSM's QoS configuration as ibsmd.yaml's qos: section: its qos-policy.conf (port groups,
 * QoS levels, match rules and the simplified qos-ulps) and opensm.conf's qos_* options (the
 * per port class SL-to-VL and VL arbitration tables). What ibsmd cannot express (per port
 * scopes of tables, node types, QoS classes, path bits) is refused with the file and line,
 * never dropped: a policy that silently lost a rule would move traffic to another SL. */
#ifndef IBSMD_IMPORT_QOS_H
#define IBSMD_IMPORT_QOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct qos_import;

/* NULL when out of memory. */
struct qos_import *qos_import_new(void);
void qos_import_free(struct qos_import *q);

/* An opensm.conf option: 1 taken (a qos_* table option), 0 not one of them, -1 refused with
 * err ("file:line: ..."). */
int qos_import_conf_option(struct qos_import *q, const char *key, const char *val, const char *file,
                           unsigned line, char *err, size_t errlen);

/* A qos-policy.conf: 0, or -1 with err ("file:line: ..."). */
int qos_import_policy(struct qos_import *q, const char *file, char *err, size_t errlen);
/* The same from text in memory (file names it in messages). */
int qos_import_policy_text(struct qos_import *q, const char *text, size_t len, const char *file,
                           char *err, size_t errlen);

/* The qos: section (nothing when nothing was imported). */
void qos_import_write(const struct qos_import *q, FILE *out);

#endif
