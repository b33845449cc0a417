#include "util/statefile.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_TAG ".tmp-"

/* ".NAME.tmp-" + 12 random letters: hidden, and not ending in NAME's extension, so that
 * node_exporter does not read a half-written .prom file */
static int random_tmpname(char *buf, size_t len, const char *name)
{
	static const char letters[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint8_t r[12];
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	char suffix[sizeof(r) + 1];
	for (size_t i = 0; i < sizeof(r); i++)
		suffix[i] = letters[r[i] % (sizeof(letters) - 1)];
	suffix[sizeof(r)] = 0;
	if ((size_t)snprintf(buf, len, ".%s" TMP_TAG "%s", name, suffix) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int statefile_begin(struct statefile *sf, const char *dir, const char *name, mode_t mode)
{
	snprintf(sf->dir, sizeof(sf->dir), "%s", dir);
	snprintf(sf->path, sizeof(sf->path), "%s/%s", dir, name);
	snprintf(sf->name, sizeof(sf->name), "%s", name);
	snprintf(sf->tmp, sizeof(sf->tmp), "%s", sf->path); /* until there is a temporary name */
	sf->tmpname[0] = 0;
	sf->f = NULL;
	sf->dirfd = -1;
	if (strchr(name, '/') || strlen(name) >= sizeof(sf->name)) {
		errno = EINVAL;
		return -1;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	sf->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sf->dirfd < 0)
		return -1;
	int fd = -1;
	/* EEXIST: a name someone else made (or a 1 in 62^12 clash): draw again */
	for (int tries = 0; tries < 16 && fd < 0; tries++) {
		if (random_tmpname(sf->tmpname, sizeof(sf->tmpname), name) < 0)
			break;
		snprintf(sf->tmp, sizeof(sf->tmp), "%s/%s", dir, sf->tmpname);
		fd = openat(sf->dirfd, sf->tmpname,
		            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int e = errno;
		close(sf->dirfd);
		sf->dirfd = -1;
		errno = e;
		return -1;
	}
	/* created 0600 whatever the umask; widened (if asked) only once it is ours */
	if (fchmod(fd, mode) < 0 || !(sf->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		unlinkat(sf->dirfd, sf->tmpname, 0);
		close(sf->dirfd);
		sf->dirfd = -1;
		errno = e;
		return -1;
	}
	return 0;
}

void statefile_discard_tmp(const char *dir, const char *name)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return; /* no directory: nothing was left */
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	char prefix[300], legacy[300];
	snprintf(prefix, sizeof(prefix), ".%s" TMP_TAG, name);
	snprintf(legacy, sizeof(legacy), "%s.tmp", name);
	size_t plen = strlen(prefix);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, prefix, plen) != 0 && strcmp(de->d_name, legacy) != 0)
			continue;
		/* only what this writer could have made: not a link, not another user's file */
		struct stat st;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		unlinkat(dfd, de->d_name, 0);
	}
	closedir(d); /* closes dfd */
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
	if (ok && renameat(sf->dirfd, sf->tmpname, sf->dirfd, sf->name) < 0) {
		ok = false;
		e = errno;
	}
	if (!ok) {
		unlinkat(sf->dirfd, sf->tmpname, 0);
		close(sf->dirfd);
		sf->dirfd = -1;
		errno = e;
		return -1;
	}
	fsync(sf->dirfd); /* the rename itself on disk */
	close(sf->dirfd);
	sf->dirfd = -1;
	return 0;
}
