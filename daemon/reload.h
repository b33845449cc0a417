/* SIGHUP: read the configuration again and apply to the running daemon what it can take
 * without a restart; the rest is logged as waiting for one. */
#ifndef IBSMD_DAEMON_RELOAD_H
#define IBSMD_DAEMON_RELOAD_H

#include "daemon/notify.h"

struct metrics;
struct pm;
#include "daemon/settings.h"
#include "sm/sm.h"
#include "sync/sync.h"
#include "util/name_map.h"

struct reload {
	const struct settings *settings;
	struct ibsmd_config *cfg; /* the configuration the SM, SA and sync read */
	struct log *log;
	int verbose; /* -v given this many times, on top of log_level */
	struct sm *sm;
	struct sync *sync;
	struct notify *notify;
	struct metrics *metrics;
	struct pm *pm;
	struct name_map names; /* node_name_map as last read well (empty: none) */
};

/* Read node_name_map again (every reload: sites edit the file and send SIGHUP). A file that
 * cannot be read or parsed is logged with its line and the map read before stays. */
void reload_names(struct reload *r);

/* The log level the configuration and -v ask for. */
enum log_level reload_log_level(const struct ibsmd_config *cfg, int verbose);
/* Reread and apply. 0; -1 when the file is refused (logged; nothing changes). */
int reload_apply(struct reload *r);

#endif
