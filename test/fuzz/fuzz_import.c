/* Fuzz target: the importer of OpenSM's QoS configuration (import/qos.c) and of its
 * congestion control options (import/opensm.c). The first byte picks the input: even, a
 * qos-policy.conf; 1 modulo 4, opensm.conf lines ("key value") that may be qos_* table
 * options; 3 modulo 4, an opensm.conf whose congestion_control and cc_* lines (only those:
 * other options name files to read) go through the whole importer. Nothing here may crash, leak or
 * read past the input; whatever is accepted is written out as YAML. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "import/opensm.h"
#include "import/qos.h"

/* the congestion control lines of text as an opensm.conf, through import_opensm */
static void import_cc(const char *text, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/fuzz_import_cc.%d", (int)getpid());
	FILE *conf = fopen(path, "w");
	if (!conf)
		return;
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t e = nl ? (size_t)(nl - text) : len;
		const char *l = text + pos;
		size_t n = e - pos;
		if ((n >= 3 && !memcmp(l, "cc_", 3)) ||
		    (n >= 18 && !memcmp(l, "congestion_control", 18))) {
			fwrite(l, 1, n, conf);
			fputc('\n', conf);
		}
		pos = e + 1;
	}
	fclose(conf);
	char err[512], *out = NULL;
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);
	if (f) {
		if (import_opensm(path, NULL, NULL, f, NULL, err, sizeof(err)) < 0 && !err[0])
			abort(); /* a refusal says why */
		fclose(f);
	}
	free(out);
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if ((data[0] & 3) == 3) {
		import_cc((const char *)data + 1, size - 1);
		return 0;
	}
	struct qos_import *q = qos_import_new();
	if (!q)
		return 0;
	char err[512];
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	if (!(data[0] & 1)) {
		qos_import_policy_text(q, text, len, "fuzz", err, sizeof(err));
	} else {
		char line[512];
		unsigned ln = 0;
		for (size_t pos = 0; pos < len;) {
			size_t e = pos;
			while (e < len && text[e] != '\n')
				e++;
			size_t n = e - pos < sizeof(line) - 1 ? e - pos : sizeof(line) - 1;
			memcpy(line, text + pos, n);
			line[n] = 0;
			pos = e + 1;
			ln++;
			char *sp = strchr(line, ' ');
			if (!sp)
				continue;
			*sp = 0;
			if (qos_import_conf_option(q, line, sp + 1, "fuzz", ln, err, sizeof(err)) <
			    0)
				break;
		}
	}
	char *out = NULL;
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);
	if (f) {
		qos_import_write(q, f);
		fclose(f);
	}
	free(out);
	qos_import_free(q);
	return 0;
}
