#include "util/statefile.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int statefile_begin(struct statefile *sf, const char *dir, const char *name, mode_t mode)
{
	snprintf(sf->dir, sizeof(sf->dir), "%s", dir);
	snprintf(sf->path, sizeof(sf->path), "%s/%s", dir, name);
	snprintf(sf->tmp, sizeof(sf->tmp), "%s.tmp", sf->path);
	sf->f = NULL;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	int fd = open(sf->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	if (fchmod(fd, mode) < 0 || !(sf->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		unlink(sf->tmp);
		errno = e;
		return -1;
	}
	return 0;
}

void statefile_discard_tmp(const char *dir, const char *name)
{
	char tmp[600];
	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, name);
	unlink(tmp); /* ENOENT: nothing was left, the usual case */
}

int statefile_commit(struct statefile *sf)
{
	bool ok = fflush(sf->f) == 0 && fsync(fileno(sf->f)) == 0;
	int e = errno;
	if (fclose(sf->f) != 0 && ok) {
		ok = false;
		e = errno;
	}
	sf->f = NULL;
	if (ok && rename(sf->tmp, sf->path) < 0) {
		ok = false;
		e = errno;
	}
	if (!ok) {
		unlink(sf->tmp);
		errno = e;
		return -1;
	}
	int dfd = open(sf->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}
