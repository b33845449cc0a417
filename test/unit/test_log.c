/* Logging: levels filter, lines carry level and subsystem, names parse. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"
#include "util/log.h"

START_TEST(levels_and_format)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct log lg;
	log_init(&lg);
	lg.stream = f;
	ck_assert_int_eq(lg.level, LOGL_NOTICE);
	log_info(&lg, "sm", "hidden at the default level");
	log_debug(&lg, "mad", "hidden too");
	log_warn(&lg, "sm", "node GUID " GUID_FMT " port %u did not answer", (uint64_t)0x2c9ull,
	         3u);
	lg.level = LOGL_DEBUG;
	log_debug(&lg, "mad", "now shown");
	fclose(f);
	ck_assert_ptr_null(strstr(buf, "hidden"));
	ck_assert_ptr_nonnull(
	    strstr(buf, "warn sm: node GUID 0x00000000000002c9 port 3 did not answer\n"));
	ck_assert_ptr_nonnull(strstr(buf, "debug mad: now shown\n"));
	free(buf);
}
END_TEST

/* An event: the prose, then its fields as [event=... key=value], filtered by level. */
START_TEST(event_fields)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct log lg;
	log_init(&lg);
	lg.stream = f;
	struct log_field fl[2] = {{.key = "port", .value = "3"}, {.key = "counter", .value = "x"}};
	log_event(&lg, LOGL_WARN, "counter_threshold", fl, 2, "port %u crossed", 3u);
	log_event(&lg, LOGL_INFO, "hidden_event", fl, 2, "below the level");
	fclose(f);
	ck_assert_ptr_nonnull(
	    strstr(buf, "warn event: port 3 crossed [event=counter_threshold port=3 counter=x]\n"));
	ck_assert_ptr_null(strstr(buf, "hidden_event"));
	free(buf);
}
END_TEST

START_TEST(level_names)
{
	ck_assert_int_eq(log_level_parse("debug"), LOGL_DEBUG);
	ck_assert_int_eq(log_level_parse("warning"), LOGL_WARN);
	ck_assert_int_eq(log_level_parse("err"), LOGL_ERR);
	ck_assert_int_eq(log_level_parse("loud"), -1);
	ck_assert_str_eq(log_level_name(LOGL_NOTICE), "notice");
	/* no logger: warnings and errors still reach stderr, nothing crashes */
	log_err(NULL, "test", "stderr fallback works");
	ck_assert(!log_enabled(NULL, LOGL_INFO));
}
END_TEST

/* A NodeDescription is 64 bytes any host sets: in a log line it must not end the line (and
 * forge the next), whatever it holds. */
START_TEST(wire_text_stays_on_its_line)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct log lg;
	log_init(&lg);
	lg.stream = f;
	const char desc[] = "a\"b\\c\nwarn sm: forged\x01\xff\xc3\xa9";
	log_warn(&lg, "sm", "node \"%s\" port %u", desc, 1u);
	struct log_field fl[1] = {{.key = "node_desc"}};
	snprintf(fl[0].value, sizeof(fl[0].value), "%s", desc);
	log_event(&lg, LOGL_WARN, "link_down", fl, 1, "link down at \"%s\"", desc);
	fclose(f);
	/* two entries, two lines; the valid UTF-8 (e-acute) kept, the rest as \xNN */
	ck_assert_str_eq(
	    buf, "warn sm: node \"a\"b\\c\\x0awarn sm: forged\\x01\\xff\xc3\xa9\" port 1\n"
	         "warn event: link down at \"a\"b\\c\\x0awarn sm: forged\\x01\\xff\xc3\xa9\" "
	         "[event=link_down node_desc=a\"b\\c\\x0awarn sm: forged\\x01\\xff\xc3\xa9]\n");
	free(buf);
}
END_TEST

/* JSON (RFC 8259) of the same: escapes where JSON needs them, U+FFFD for a stray byte. */
START_TEST(json_string_escapes)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char desc[] = "a\"b\\c\n\x01\x7f\xff\xc3\xa9\xc0\xaf\xed\xa0\x80\xe2\x80\xa8z";
	json_put_str(f, desc, sizeof(desc));
	fputc(' ', f);
	json_put_str(f, "0123456789", 4); /* a field without its NUL: no further than its size */
	fclose(f);
	ck_assert_str_eq(buf, "\"a\\\"b\\\\c\\u000a\\u0001\\u007f\\ufffd\xc3\xa9"
	                      "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\u2028z\" \"0123\"");
	free(buf);
	const unsigned char four[] = {0xf0, 0x9f, 0x98, 0x80};
	ck_assert_uint_eq(utf8_seq_len(four, 4), 4);
	ck_assert_uint_eq(utf8_seq_len(four, 3), 0); /* cut short */
}
END_TEST

/* A Prometheus label of the same: the text format's three escapes, U+FFFD for a stray byte. */
/* A text dump's field: the description itself when plain (no copy), else escaped so that
 * it can close neither its quotes nor its braces nor its line. */
START_TEST(text_desc_keeps_its_field)
{
	char buf[4 * 65];
	const char *plain = "host-1 HCA-1";
	ck_assert_ptr_eq(text_desc(buf, sizeof(buf), plain), plain);
	ck_assert_str_eq(text_desc(buf, sizeof(buf), "a\"b'c\\d{e}f\ng\001h\377"),
	                 "a\\x22b\\x27c\\x5cd\\x7be\\x7df\\x0ag\\x01h\\xff");
	ck_assert_str_eq(text_desc(buf, sizeof(buf), "caf\xc3\xa9"), "caf\xc3\xa9"); /* UTF-8 */
	char small[8];
	ck_assert_str_eq(text_desc(small, sizeof(small), "\n\n\n"), "\\x0a"); /* cut whole */
}
END_TEST

START_TEST(prom_label_escapes)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	prom_put_label(f, "a\"b\\c\n\x01\xff\xc3\xa9", 64);
	fclose(f);
	ck_assert_str_eq(buf, "a\\\"b\\\\c\\n\x01\xef\xbf\xbd\xc3\xa9");
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");
	tcase_add_test(tc, levels_and_format);
	tcase_add_test(tc, level_names);
	tcase_add_test(tc, event_fields);
	tcase_add_test(tc, wire_text_stays_on_its_line);
	tcase_add_test(tc, json_string_escapes);
	tcase_add_test(tc, prom_label_escapes);
	tcase_add_test(tc, text_desc_keeps_its_field);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
