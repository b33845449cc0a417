/* ibsmd --import-opensm: an OpenSM configuration (opensm.conf, partitions.conf, a QoS
 * policy) written as the equivalent ibsmd YAML, with a comment for each OpenSM option that
 * has no counterpart and what ibsmd does instead. What cannot be translated is an error
 * naming the file and line. */
#ifndef IBSMD_IMPORT_OPENSM_H
#define IBSMD_IMPORT_OPENSM_H

#include <stddef.h>
#include <stdio.h>

/* Any of the files may be NULL. 0, or -1 with "FILE:LINE: what" in err. */
int import_opensm(const char *conf, const char *partitions, const char *qos, FILE *out, char *err,
                  size_t errlen);

#endif
