/* A state file written whole or not at all: into NAME.tmp, flushed to disk, renamed over
 * NAME, and the directory synced, so a crash leaves the old file or the new one, never half
 * of either. The state directory is created if missing. One way for guid2lid, mkeys and
 * sa-state. */
#ifndef IBSMD_UTIL_STATEFILE_H
#define IBSMD_UTIL_STATEFILE_H

#include <stdio.h>
#include <sys/types.h>

struct statefile {
	FILE *f; /* write the contents here */
	char dir[256], path[512], tmp[520];
};

/* 0, or -1 with errno set (sf->tmp, or sf->dir, names what failed). mode is the file's
 * (0600 for secrets), whatever a stale temporary file had. */
int statefile_begin(struct statefile *sf, const char *dir, const char *name, mode_t mode);
/* Close, sync, rename. 0, or -1 with errno set; the temporary file is removed either way. */
int statefile_commit(struct statefile *sf);
/* Remove NAME.tmp that a process killed while writing left behind (kill -9 between the
 * open and the rename): called when the state is loaded. */
void statefile_discard_tmp(const char *dir, const char *name);

#endif
