/* Choosing a transport by name. */
#include "mad/transport.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int mad_transport_open(const char *kind, const struct mad_transport_opts *opts,
                       struct mad_transport **out, char *err, size_t errlen)
{
	if (!kind || strcmp(kind, "umad") == 0)
		return mad_transport_open_umad(opts, out, err, errlen);
	if (strcmp(kind, "sim") == 0)
		return mad_transport_open_sim(opts, out, err, errlen);
	snprintf(err, errlen,
	         "unknown transport \"%s\": use umad (hardware) or sim (ibsim, "
	         "fabricsim)",
	         kind);
	return -EINVAL;
}
