/* A state file written whole or not at all: into a temporary file of a random name in the
 * same directory, created new (never a name someone else made: O_EXCL|O_NOFOLLOW, so a
 * symlink planted in a writable directory cannot lead the write elsewhere), flushed to disk,
 * renamed over NAME, and the directory synced, so a crash leaves the old file or the new
 * one, never half of either. The state directory is created if missing. One way for
 * guid2lid, mkeys, sa-state, the dumps and the metrics file. */
#ifndef IBSMD_UTIL_STATEFILE_H
#define IBSMD_UTIL_STATEFILE_H

#include <stdio.h>
#include <sys/types.h>

struct statefile {
	FILE *f;   /* write the contents here */
	int dirfd; /* the directory, held so that the rename lands where the file was made */
	char dir[256], path[512];
	char name[256];    /* NAME, inside dir */
	char tmpname[280]; /* ".NAME.tmp-XXXXXXXXXXXX", inside dir */
	char tmp[540];     /* dir/tmpname, for messages */
};

/* 0, or -1 with errno set (sf->tmp, or sf->dir, names what failed). mode is the file's
 * (0600 for secrets); the file is never readable more widely while it is written. */
int statefile_begin(struct statefile *sf, const char *dir, const char *name, mode_t mode);
/* Close, sync, rename. 0, or -1 with errno set; the temporary file is removed either way. */
int statefile_commit(struct statefile *sf);
/* Remove the temporary files of NAME that a process killed while writing left behind (kill -9
 * between the open and the rename), and NAME.tmp of older versions: regular files of this
 * user only, never followed. Called when the state is loaded. */
void statefile_discard_tmp(const char *dir, const char *name);

#endif
