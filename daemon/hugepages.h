/* Huge pages for ibsmd's heap (glibc's malloc tunable, set by starting again). */
#ifndef IBSMD_DAEMON_HUGEPAGES_H
#define IBSMD_DAEMON_HUGEPAGES_H

#include <stdbool.h>
#include <stddef.h>

/* The GLIBC_TUNABLES to start again with (into out), given the current value (NULL: unset),
 * the kernel's THP mode as /sys/kernel/mm/transparent_hugepage/enabled shows it and glibc's
 * version; false when ibsmd goes on as it is. */
bool hugepages_tunables(const char *current, const char *thp_enabled, const char *glibc, char *out,
                        size_t n);

/* Start ibsmd again with the tunable where hugepages_tunables says so; returns only when
 * it does not (and then, with the tunable set, keeps malloc to one arena, the one with huge
 * pages). The first thing main does: nothing is open yet that could be lost. */
void hugepages_start_again(char **argv);

#endif
