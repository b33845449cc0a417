#include "util/vec.h"

#include <string.h>

static int grow(void *pp, uint32_t *cap, uint64_t need, size_t elem, int zero)
{
	if (need <= *cap)
		return 0;
	if (need > UINT32_MAX)
		return -1;
	uint64_t ncap = *cap ? *cap : 8;
	while (ncap < need)
		ncap *= 2;
	if (ncap > UINT32_MAX)
		ncap = UINT32_MAX;
	if (ncap > SIZE_MAX / elem)
		return -1;
	/* the pointer's bytes, whatever its type: read and written through memcpy, so no
	 * aliasing rule is bent */
	void *old;
	memcpy(&old, pp, sizeof(old));
	void *n = realloc(old, (size_t)ncap * elem);
	if (!n)
		return -1;
	if (zero)
		memset((char *)n + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
	memcpy(pp, &n, sizeof(n));
	*cap = (uint32_t)ncap;
	return 0;
}

int vec_grow_(void *pp, uint32_t *cap, uint64_t need, size_t elem)
{
	return grow(pp, cap, need, elem, 1);
}

int vec_grow_raw_(void *pp, uint32_t *cap, uint64_t need, size_t elem)
{
	return grow(pp, cap, need, elem, 0);
}
