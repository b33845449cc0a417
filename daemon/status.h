/* What "ibsa status" shows: the SM's state and priority, the other SMs it knows, the subnet,
 * the sweeps and the last one's phase times, MAD counters, the SA's requests and their rate,
 * the standby sync; as text or JSON. */
#ifndef IBSMD_DAEMON_STATUS_H
#define IBSMD_DAEMON_STATUS_H

#include <stdbool.h>
#include <stdio.h>

struct control;
void status_write(const struct control *c, FILE *out, bool json);

#endif
