/* ibsa passwd NAME: a line for the partition API's users file (api_users_file): the name
 * and libsodium's crypto_pwhash_str of a password read on standard input, so that the
 * file holds no password and the daemon checks with crypto_pwhash_str_verify. */
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/cli.h"
#include "daemon/api_parse.h"

/* One line of standard input, without its newline; no echo on a terminal. */
static int read_password(char *buf, size_t len)
{
	struct termios old, quiet;
	bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &old) == 0;
	if (tty) {
		fprintf(stderr, "password: ");
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
	}
	char *got = fgets(buf, (int)len, stdin);
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
		fprintf(stderr, "\n");
	}
	if (!got)
		return -1;
	size_t n = strcspn(buf, "\r\n");
	if (buf[n] == 0 && n == len - 1)
		return -2; /* no newline within the buffer: longer than we take */
	buf[n] = 0;
	return n ? 0 : -1;
}

int cli_passwd(int argc, char **argv)
{
	if (argc != 2 || !api_user_name_ok(argv[1], strlen(argv[1]))) {
		fprintf(stderr,
		        "usage: ibsa passwd NAME   (NAME: 1-%d of A-Z a-z 0-9 . _ @ -; the "
		        "password on standard input)\n",
		        API_MAX_USER_NAME);
		return EXIT_USAGE;
	}
	if (sodium_init() < 0) {
		fprintf(stderr, "ibsa: libsodium cannot start\n");
		return EXIT_MAD_STATUS;
	}
	char pass[1024], hash[crypto_pwhash_STRBYTES];
	int rc = read_password(pass, sizeof(pass));
	if (rc < 0) {
		fprintf(stderr, "ibsa: %s\n",
		        rc == -2 ? "the password is over 1,022 bytes"
		                 : "no password on standard input");
		sodium_memzero(pass, sizeof(pass));
		return EXIT_USAGE;
	}
	/* libsodium's interactive limits: the daemon verifies a user's password once, then
	 * knows it by a keyed hash, so the cost is paid once per client */
	rc = crypto_pwhash_str(hash, pass, strlen(pass), crypto_pwhash_OPSLIMIT_INTERACTIVE,
	                       crypto_pwhash_MEMLIMIT_INTERACTIVE);
	sodium_memzero(pass, sizeof(pass));
	if (rc != 0) {
		fprintf(stderr, "ibsa: out of memory hashing the password\n");
		return EXIT_MAD_STATUS;
	}
	printf("%s:%s\n", argv[1], hash);
	return EXIT_OK;
}
