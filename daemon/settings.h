/* The daemon's effective configuration: defaults, then the YAML file, then the command line,
 * checked as a whole. Read at start, by --check-config and --dump-config, and again on
 * SIGHUP, so all four see the same thing. */
#ifndef IBSMD_DAEMON_SETTINGS_H
#define IBSMD_DAEMON_SETTINGS_H

#include <stddef.h>

#include "config/config.h"

#ifndef IBSMD_CONFDIR
#define IBSMD_CONFDIR "/etc/ibsmd"
#endif
#define SETTINGS_DEFAULT_FILE IBSMD_CONFDIR "/ibsmd.yaml"

struct settings {
	const char *config_file; /* NULL: defaults and the command line only */
	/* command-line values, which win over the file (NULL or -1: not given) */
	const char *state_dir, *engines, *control_socket;
	int lmc, sweep_interval, priority, log_level;
};

/* Fill cfg (config_defaults first). 0, or -1 with "FILE:LINE:COL: what" in err. */
int settings_load(const struct settings *s, struct ibsmd_config *cfg, char *err, size_t errlen);

#endif
