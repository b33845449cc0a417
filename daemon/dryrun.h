/* ibsmd --dry-run (daemon/dryrun.c). */
#ifndef IBSMD_DAEMON_DRYRUN_H
#define IBSMD_DAEMON_DRYRUN_H

#include "config/config.h"
#include "mad/transport.h"
#include "util/log.h"

/* One read-only sweep on the open transport and the report on standard output: 0 when
 * ibsmd's own routes pass every check, 1 otherwise. */
int dry_run(struct ibsmd_config *cfg, const struct log *lg, struct mad_transport *t);

#endif
