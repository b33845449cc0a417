/* Runs a fuzz target over its seed corpus without libFuzzer, so that every build (GCC, under
 * AddressSanitizer in the test build) replays the seeds in ctest; with clang and
 * -DIBSMD_FUZZ=ON the same target links with -fsanitize=fuzzer instead. A loop over files,
 * which is all LLVM's own standalone driver (StandaloneFuzzTargetMain.c) does too.
 * Usage: NAME FILE|DIR... */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			uint8_t *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned runs = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]) < 0)
				return 1;
			runs++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			return 1;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s", argv[i], e->d_name);
			if (run_file(p) < 0) {
				closedir(d);
				return 1;
			}
			runs++;
		}
		closedir(d);
	}
	if (!runs) {
		fprintf(stderr, "%s: no inputs\n", argv[0]);
		return 1;
	}
	printf("%s: %u inputs, no crash\n", argv[0], runs);
	return 0;
}
