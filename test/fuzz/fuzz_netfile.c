/* Fuzz target: fabricsim's readers of topology text (test/fabricsim/netfile.c and
 * generate.c). First byte even: the bytes are an ibsim net file or an ibnetdiscover dump;
 * odd: a generator spec ("fattree:radix=8,levels=2", capped to small fabrics below). A
 * fabric that loads is finalized; one that fails says why. Nothing may crash, leak or read
 * past the text, whatever the bytes. */
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1u << 20))
		return 0;
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	struct fabric f;
	fabric_init(&f);
	struct fs_error err = {{0}};
	int rc;
	if (data[0] & 1) {
		/* a spec: only numbers up to 64, or the fuzzer spends its time building big
		 * fabrics (the generator itself refuses what no fabric has) */
		bool small = true;
		for (char *c = text; *c && small;) {
			if (isdigit((unsigned char)*c))
				small = strtoul(c, &c, 10) <= 64;
			else
				c++;
		}
		rc = small ? generate(&f, text, &err) : -2;
	} else {
		rc = netfile_parse(&f, "fuzz.net", text, &err);
	}
	if (rc == 0)
		fabric_finalize(&f);
	else if (rc == -1 && !err.msg[0])
		abort(); /* a refusal says why */
	fabric_free(&f);
	free(text);
	return 0;
}
