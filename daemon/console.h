/* OpenSM's console commands that a site's operators and scripts use, on the control socket
 * (`ibsa querylid|portstatus|switchbalance|lidbalance|priority|update-desc`): the same
 * questions answered from the SM's model, as text or JSON. */
#ifndef IBSMD_DAEMON_CONSOLE_H
#define IBSMD_DAEMON_CONSOLE_H

#include <stdbool.h>
#include <stdio.h>

#include "daemon/control.h"

/* argv[0] one of them: answered into out (an "error: " line when refused), true; false for
 * any other command. */
bool console_command(struct control *c, int argc, char **argv, FILE *out, bool json);

#endif
