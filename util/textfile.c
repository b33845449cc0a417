/* Whole files read into memory (see textfile.h). */
#include "util/textfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int textfile_read(const char *path, size_t max, char **text, size_t *len, char *why, size_t whylen)
{
	*text = NULL;
	*len = 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (;;) {
		if (n + 1 >= cap) {
			size_t want = cap ? cap * 2 : 65536;
			char *nb = cap <= max ? realloc(buf, want) : NULL;
			if (!nb) {
				if (cap > max)
					snprintf(why, whylen, "%s: larger than %zu MB", path,
					         max >> 20);
				else
					snprintf(why, whylen, "%s: out of memory", path);
				rc = -1;
				break;
			}
			buf = nb;
			cap = want;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (!got) {
			if (ferror(f)) {
				snprintf(why, whylen, "%s: read error", path);
				rc = -1;
			}
			break;
		}
	}
	fclose(f);
	if (rc == 0 && n > max) {
		snprintf(why, whylen, "%s: larger than %zu MB", path, max >> 20);
		rc = -1;
	}
	if (rc < 0) {
		free(buf);
		return -1;
	}
	buf[n] = 0;
	*text = buf;
	*len = n;
	return 0;
}
