/* The daemon's event stream (daemon/event_stream.c): JSON lines that parse whatever a
 * NodeDescription holds, the recent ones for a newcomer, every new one to each follower,
 * a follower that goes closed, one that stops reading dropped, no more than the limit. */
#include <check.h>
#include <ev.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/event_stream.h"

static struct ev_loop *loop;
static struct log lg;
static struct event_stream s;

static void setup(void)
{
	loop = ev_loop_new(EVFLAG_AUTO);
	log_init(&lg);
	lg.level = LOGL_ERR; /* the drop's warning is not this test's output */
	event_stream_init(&s, loop, &lg);
}

static void teardown(void)
{
	event_stream_free(&s);
	ev_loop_destroy(loop);
}

static void put(const char *event, const char *desc)
{
	struct log_field f[2] = {{.key = "node_desc"}, {.key = "port"}};
	snprintf(f[0].value, sizeof(f[0].value), "%s", desc);
	snprintf(f[1].value, sizeof(f[1].value), "3");
	event_stream_put(&s, 1764950400.25, LOGL_NOTICE, event, f, 2, "link down at a port");
}

/* What the peer of a follower has read so far (the loop turned until nothing more comes). */
static size_t drain(int fd, char *buf, size_t cap)
{
	size_t got = 0;
	for (int idle = 0; idle < 3;) {
		ev_run(loop, EVRUN_NOWAIT);
		ssize_t n = read(fd, buf + got, cap - 1 - got);
		if (n > 0)
			got += (size_t)n, idle = 0;
		else
			idle++, usleep(2000);
	}
	buf[got] = 0;
	return got;
}

static int follower(int *peer)
{
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	*peer = sv[1];
	return sv[0];
}

START_TEST(lines_and_recent)
{
	put("link_down", "host-1 \"mlx5_0\"\n\x01\xff");
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	event_stream_recent(&s, out);
	fclose(out);
	/* one line, the wire's bytes escaped: quote, newline, control byte, a byte not UTF-8 */
	ck_assert_str_eq(
	    text,
	    "{\"seq\":1,\"time\":\"2025-12-05T16:00:00.250Z\",\"level\":\"notice\","
	    "\"event\":\"link_down\",\"message\":\"link down at a port\",\"fields\":{"
	    "\"node_desc\":\"host-1 \\\"mlx5_0\\\"\\u000a\\u0001\\ufffd\",\"port\":\"3\"}}\n");
	free(text);
	/* the ring keeps the last EVENT_STREAM_RECENT, oldest first */
	for (unsigned i = 0; i < EVENT_STREAM_RECENT + 5; i++)
		put("link_up", "x");
	text = NULL;
	out = open_memstream(&text, &len);
	event_stream_recent(&s, out);
	fclose(out);
	unsigned lines = 0;
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	ck_assert_uint_eq(lines, EVENT_STREAM_RECENT);
	ck_assert_ptr_nonnull(strstr(text, "{\"seq\":7,"));
	ck_assert_ptr_null(strstr(text, "{\"seq\":6,"));
	free(text);
}
END_TEST

START_TEST(followers_get_recent_then_new)
{
	put("sm_state", "a");
	int peer, fd = follower(&peer);
	ck_assert_int_eq(event_stream_follow(&s, fd), 0);
	put("subnet_up", "b");
	char buf[8192];
	drain(peer, buf, sizeof(buf));
	const char *a = strstr(buf, "\"event\":\"sm_state\""),
	           *b = strstr(buf, "\"event\":\"subnet_up\"");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert(a < b);
	/* the follower goes: its slot is free again */
	close(peer);
	drain(fd, buf, 1); /* (fd is the stream's: this only turns the loop) */
	unsigned used = 0;
	for (unsigned i = 0; i < EVENT_STREAM_FOLLOWERS; i++)
		used += s.followers[i] != NULL;
	ck_assert_uint_eq(used, 0);
}
END_TEST

START_TEST(limit_and_slow_follower)
{
	int peers[EVENT_STREAM_FOLLOWERS + 1];
	for (unsigned i = 0; i < EVENT_STREAM_FOLLOWERS; i++)
		ck_assert_int_eq(event_stream_follow(&s, follower(&peers[i])), 0);
	int extra = follower(&peers[EVENT_STREAM_FOLLOWERS]);
	ck_assert_int_eq(event_stream_follow(&s, extra), -1); /* the fd stays the caller's */
	close(extra);
	close(peers[EVENT_STREAM_FOLLOWERS]);
	/* nobody reads: past the backlog every follower is dropped, the daemon's memory bounded */
	char desc[80];
	memset(desc, 'x', sizeof(desc) - 1);
	desc[sizeof(desc) - 1] = 0;
	for (unsigned i = 0; i < 40000 && s.dropped < EVENT_STREAM_FOLLOWERS; i++) {
		put("trap", desc);
		ev_run(loop, EVRUN_NOWAIT);
	}
	ck_assert_uint_eq(s.dropped, EVENT_STREAM_FOLLOWERS);
	for (unsigned i = 0; i < EVENT_STREAM_FOLLOWERS; i++) {
		ck_assert_ptr_null(s.followers[i]);
		/* what they had read stays readable, then EOF: the stream closed its end */
		char buf[4096];
		ssize_t n;
		while ((n = read(peers[i], buf, sizeof(buf))) > 0)
			;
		ck_assert_int_eq(n, 0);
		close(peers[i]);
	}
}
END_TEST

int main(void)
{
	Suite *su = suite_create("event_stream");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, lines_and_recent);
	tcase_add_test(tc, followers_get_recent_then_new);
	tcase_add_test(tc, limit_and_slow_follower);
	suite_add_tcase(su, tc);
	SRunner *sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
