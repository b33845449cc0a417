/* The performance manager's rate window (pm/rate.c): rates the health report judges ports
 * by cover the last one to two hours of readings, never only the last burst nor everything
 * since the start. */
#include <check.h>
#include <string.h>

#include "pm/rate.h"
#include "check_run.h"

/* one reading every `step` seconds from t0 to t1, symbol errors growing `per_reading` */
static double readings(struct pm_rate_window *w, uint64_t *total, double t0, double t1, double step,
                       uint64_t per_reading, int first)
{
	double t = t0;
	for (; t <= t1; t += step) {
		pm_rate_roll(w, total, t, first);
		first = 0;
		total[PM_SYMBOL_ERRORS] += per_reading;
	}
	return t - step;
}

START_TEST(under_an_hour_the_count_itself)
{
	struct pm_rate_window w;
	uint64_t total[PM_NCOUNTERS] = {0};
	total[PM_SYMBOL_ERRORS] = 500; /* counted before the first reading: history */
	pm_rate_roll(&w, total, 100, 1);
	ck_assert_uint_eq(pm_rate_grown(&w, total, PM_SYMBOL_ERRORS), 0);
	total[PM_SYMBOL_ERRORS] += 12;
	pm_rate_roll(&w, total, 400, 0); /* 12 in five minutes: at least 12 an hour */
	ck_assert_uint_eq(pm_rate_grown(&w, total, PM_SYMBOL_ERRORS), 12);
	ck_assert(pm_rate_per_hour(&w, total, PM_SYMBOL_ERRORS) == 12.);
	ck_assert(pm_rate_hours(&w) > 0.08 && pm_rate_hours(&w) < 0.09);
}
END_TEST

START_TEST(an_old_burst_leaves_the_window)
{
	struct pm_rate_window w;
	uint64_t total[PM_NCOUNTERS] = {0};
	/* a burst of 1,000 in the first minute, then nothing for five hours */
	pm_rate_roll(&w, total, 0, 1);
	total[PM_SYMBOL_ERRORS] += 1000;
	double t = readings(&w, total, 60, 5 * 3600, 60, 0, 0);
	ck_assert_uint_eq(pm_rate_grown(&w, total, PM_SYMBOL_ERRORS), 0);
	ck_assert(pm_rate_per_hour(&w, total, PM_SYMBOL_ERRORS) == 0.);
	/* the window spans one to two hours, ending at the last reading */
	ck_assert(pm_rate_hours(&w) >= 1. && pm_rate_hours(&w) < 2.);
	ck_assert(w.read_at == t);
}
END_TEST

START_TEST(a_steady_rate_is_measured_as_such)
{
	struct pm_rate_window w;
	uint64_t total[PM_NCOUNTERS] = {0};
	/* 2 errors a minute (120 an hour) for 3.5 hours, read each minute */
	readings(&w, total, 0, 3.5 * 3600, 60, 2, 1);
	double r = pm_rate_per_hour(&w, total, PM_SYMBOL_ERRORS);
	ck_assert_msg(r > 118. && r < 122., "rate %f", r);
	/* a slow steady rate under an hour's threshold stays under it: not diluted upwards */
	memset(total, 0, sizeof(total));
	readings(&w, total, 0, 3 * 3600, 600, 1, 1); /* 6 an hour */
	r = pm_rate_per_hour(&w, total, PM_SYMBOL_ERRORS);
	ck_assert_msg(r > 5. && r < 7.5, "rate %f", r);
}
END_TEST

START_TEST(readings_far_apart)
{
	struct pm_rate_window w;
	uint64_t total[PM_NCOUNTERS] = {0};
	/* a pm_interval longer than the window: each reading starts a new one */
	pm_rate_roll(&w, total, 0, 1);
	total[PM_LINK_DOWNED] = 3;
	pm_rate_roll(&w, total, 3 * 3600, 0);
	ck_assert_uint_eq(pm_rate_grown(&w, total, PM_LINK_DOWNED), 3);
	ck_assert(pm_rate_per_hour(&w, total, PM_LINK_DOWNED) == 1.);
	pm_rate_roll(&w, total, 6 * 3600, 0);
	ck_assert_uint_eq(pm_rate_grown(&w, total, PM_LINK_DOWNED), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pm_rate");
	TCase *tc = tcase_create("window");
	tcase_add_test(tc, under_an_hour_the_count_itself);
	tcase_add_test(tc, an_old_burst_leaves_the_window);
	tcase_add_test(tc, a_steady_rate_is_measured_as_such);
	tcase_add_test(tc, readings_far_apart);
	suite_add_tcase(s, tc);
	return check_run(s);
}
