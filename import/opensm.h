/* ibsmd --import-opensm: an OpenSM configuration (opensm.conf, partitions.conf, a QoS
 * policy) written as the equivalent ibsmd YAML, with a comment for each OpenSM option that
 * has no counterpart and what ibsmd does instead. What cannot be translated is an error
 * naming the file and line. */
#ifndef IBSMD_IMPORT_OPENSM_H
#define IBSMD_IMPORT_OPENSM_H

#include <stddef.h>
#include <stdio.h>

/* Any of the files may be NULL. 0, or -1 with "FILE:LINE: what" in err. Each setting whose
 * value asks for what ibsmd does not do is a "ibsmd: warning: FILE:LINE: ..." line on warn
 * (NULL: none), and the YAML's comment beside it says what ibsmd does instead. */
int import_opensm(const char *conf, const char *partitions, const char *qos, FILE *out, FILE *warn,
                  char *err, size_t errlen);

#endif
