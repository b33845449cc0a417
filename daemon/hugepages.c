/* Huge pages for ibsmd's heap.
 * At 40,000 hosts the SM's tables are half a gigabyte (nodes, ports, every switch's LFT as
 * wanted and as held, the hop matrix), first touched during the sweep that builds them: with
 * 4 KB pages that is 130,000 page faults, and on a virtual machine each costs microseconds
 * (a third of discovery's CPU here, where the sweep is bound by ibsmd's one loop). glibc
 * 2.35 and later back malloc's arenas with transparent huge pages when its tunable
 * glibc.malloc.hugetlb=1 is set; a tunable is read only as a program starts, so ibsmd starts
 * itself again, once, with it set, where the kernel gives huge pages to those that ask
 * ("madvise" in /sys/kernel/mm/transparent_hugepage/enabled). An administrator's own
 * setting of that tunable (0 included) is kept as it is.
 * glibc gives huge pages to its main arena and to large chunks, not to the arenas it makes
 * for other threads: the routing threads' tables (every switch's LFT, 156 MB at 40,000
 * hosts, in 44 KB pieces) came from those, 4 KB at a time. With huge pages ibsmd keeps one
 * arena; its threads are the routing workers, which allocate little once they run. */
#include "daemon/hugepages.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#define TUNABLE "glibc.malloc.hugetlb"

bool hugepages_tunables(const char *current, const char *thp_enabled, const char *glibc, char *out,
                        size_t n)
{
	unsigned major = 0, minor = 0;
	if (!thp_enabled || !strstr(thp_enabled, "[madvise]"))
		return false; /* "always": every heap has them already; "never": none to have */
	if (!glibc || sscanf(glibc, "%u.%u", &major, &minor) != 2 ||
	    (major < 2 || (major == 2 && minor < 35)))
		return false; /* the tunable came with 2.35 */
	if (current && strstr(current, TUNABLE))
		return false; /* set already: by us (started again) or by the administrator */
	int len = current && *current ? snprintf(out, n, "%s:" TUNABLE "=1", current)
	                              : snprintf(out, n, TUNABLE "=1");
	return len > 0 && (size_t)len < n;
}

void hugepages_start_again(char **argv)
{
#ifdef __GLIBC__
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (!f)
		return;
	if (!fgets(mode, sizeof(mode), f))
		mode[0] = 0;
	fclose(f);
	char value[1024];
	const char *now = getenv("GLIBC_TUNABLES");
	if (!hugepages_tunables(now, mode, gnu_get_libc_version(), value, sizeof(value))) {
		if (now && strstr(now, TUNABLE "=1"))
			mallopt(M_ARENA_MAX, 1);
		return;
	}
	/* the binary by its own path, not /proc/self/exe: the process's name (comm) comes from
	 * the path exec'd, and ps, pgrep and killall know ibsmd as "ibsmd" */
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0 || (size_t)len >= sizeof(self) - 1)
		return;
	self[len] = 0;
	if (setenv("GLIBC_TUNABLES", value, 1) < 0)
		return;
	execv(self, argv);
	/* not started again: on with 4 KB pages, as before */
#else
	(void)argv;
#endif
}
