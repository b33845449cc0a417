/* When ibsmd starts itself again with glibc's huge-page tunable (daemon/hugepages.c); that a
 * running daemon has it is checked from outside by test/scenario/ibsmd_bringup.sh. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "daemon/hugepages.h"

static const char *madvise = "always [madvise] never\n";

START_TEST(set_where_the_kernel_gives_them_on_request)
{
	char out[256];
	ck_assert(hugepages_tunables(NULL, madvise, "2.36", out, sizeof(out)));
	ck_assert_str_eq(out, "glibc.malloc.hugetlb=1");
	ck_assert(hugepages_tunables("", madvise, "2.40", out, sizeof(out)));
	ck_assert_str_eq(out, "glibc.malloc.hugetlb=1");
	/* others' tunables are kept */
	ck_assert(hugepages_tunables("glibc.malloc.check=3", madvise, "3.0", out, sizeof(out)));
	ck_assert_str_eq(out, "glibc.malloc.check=3:glibc.malloc.hugetlb=1");
}
END_TEST

START_TEST(not_where_it_would_change_nothing)
{
	char out[256];
	/* THP for every heap already, or none at all */
	ck_assert(!hugepages_tunables(NULL, "[always] madvise never\n", "2.36", out, sizeof(out)));
	ck_assert(!hugepages_tunables(NULL, "always madvise [never]\n", "2.36", out, sizeof(out)));
	ck_assert(!hugepages_tunables(NULL, NULL, "2.36", out, sizeof(out)));
	/* a glibc without the tunable */
	ck_assert(!hugepages_tunables(NULL, madvise, "2.34", out, sizeof(out)));
	ck_assert(!hugepages_tunables(NULL, madvise, "1.99", out, sizeof(out)));
	ck_assert(!hugepages_tunables(NULL, madvise, "unknown", out, sizeof(out)));
	ck_assert(!hugepages_tunables(NULL, madvise, NULL, out, sizeof(out)));
}
END_TEST

START_TEST(set_once_and_the_administrators_value_kept)
{
	char out[256];
	/* started again: the tunable is there, no loop */
	ck_assert(!hugepages_tunables("glibc.malloc.hugetlb=1", madvise, "2.36", out, sizeof(out)));
	/* the administrator's own choice, off included */
	ck_assert(!hugepages_tunables("glibc.malloc.hugetlb=0", madvise, "2.36", out, sizeof(out)));
	ck_assert(!hugepages_tunables("glibc.malloc.check=3:glibc.malloc.hugetlb=2", madvise,
	                              "2.36", out, sizeof(out)));
	/* no room for the value: on as it is */
	char small[8];
	ck_assert(!hugepages_tunables(NULL, madvise, "2.36", small, sizeof(small)));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hugepages");
	TCase *tc = tcase_create("tunable");
	tcase_add_test(tc, set_where_the_kernel_gives_them_on_request);
	tcase_add_test(tc, not_where_it_would_change_nothing);
	tcase_add_test(tc, set_once_and_the_administrators_value_kept);
	suite_add_tcase(s, tc);
	return check_run(s);
}
