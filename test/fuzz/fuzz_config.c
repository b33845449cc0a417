/* Fuzz target: the YAML configuration (config/config.c, config/qos.c), read as
 * `ibsmd --check-config` reads a file: the pre-scan, libyaml's loader, every option's
 * parser, then the checks across options. Nothing here may crash, leak or hang, whatever
 * the bytes; a refusal must say why, and a file that loads must check without error or
 * with a message. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0; /* config_load refuses large files before reading them */
	FILE *fp = fmemopen((void *)data, size ? size : 1, "r");
	if (!fp)
		return 0;
	if (!size) { /* fmemopen wants a size: read an empty stream */
		fclose(fp);
		fp = fmemopen((void *)"", 1, "r");
		if (!fp)
			return 0;
		fgetc(fp);
	}
	struct ibsmd_config c;
	config_defaults(&c);
	char err[512] = "";
	if (config_load_stream(&c, fp, "fuzz.yaml", err, sizeof(err)) < 0) {
		if (!err[0])
			abort(); /* a refusal names its reason */
	} else {
		err[0] = 0;
		if (config_check(&c, err, sizeof(err)) < 0 && !err[0])
			abort();
	}
	fclose(fp);
	config_free(&c);
	return 0;
}
