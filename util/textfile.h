/* A whole text file in memory, for the parsers of files a site writes (node-name-map,
 * ibnetdiscover topologies): read once, bounded, with a reason naming the file. */
#ifndef IBSMD_UTIL_TEXTFILE_H
#define IBSMD_UTIL_TEXTFILE_H

#include <stddef.h>

/* 0 with *text (malloc'd, NUL-terminated, *len bytes before the NUL), or -1 with why
 * ("PATH: reason"): not there, unreadable, larger than max bytes, out of memory. */
int textfile_read(const char *path, size_t max, char **text, size_t *len, char *why, size_t whylen);

#endif
