/* SPDX-License-Identifier: MIT */
/*
 * What the programs share (common/): the one parser of command-line
 * numbers at both edges, and the unix socket that removes only the path
 * it bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "count.h"
#include "devmem.h"
#include "unixsock.h"

int check_passed, check_failed;
const char *check_scope;

int check_summary(const char *what)
{
	printf("%s: %d passed, %d failed\n", what, check_passed, check_failed);
	return check_failed ? 1 : 0;
}

static void numbers(void)
{
	unsigned long long v = 42;

	check_scope = "number_parse";
	/* The edges, accepted: min and max exactly, whole and untruncated. */
	CHECK_INT(number_parse("60", 60, 100, &v), 0);
	CHECK_INT(v, 60);
	CHECK_INT(number_parse("100", 60, 100, &v), 0);
	CHECK_INT(v, 100);
	CHECK_INT(number_parse("0", 0, 5, &v), 0);
	CHECK_INT(v, 0);
	CHECK_INT(number_parse("000000000000000000000000000000000000000007", 0,
			       9, &v),
		  0);
	CHECK_INT(v, 7);
	CHECK_INT(number_parse("18446744073709551615", 0, ULLONG_MAX, &v), 0);
	CHECK_INT(v == ULLONG_MAX, 1);
	/* Refused, *v untouched. */
	v = 42;
	CHECK_INT(number_parse("59", 60, 100, &v), -1);
	CHECK_INT(number_parse("101", 60, 100, &v), -1);
	CHECK_INT(number_parse("18446744073709551616", 0, ULLONG_MAX, &v), -1);
	CHECK_INT(number_parse("", 0, 9, &v), -1);
	CHECK_INT(number_parse(NULL, 0, 9, &v), -1);
	CHECK_INT(number_parse(" 1", 0, 9, &v), -1);
	CHECK_INT(number_parse("1 ", 0, 9, &v), -1);
	CHECK_INT(number_parse("+1", 0, 9, &v), -1);
	CHECK_INT(number_parse("-0", 0, 9, &v), -1);
	CHECK_INT(number_parse("0x1", 0, 99, &v), -1);
	CHECK_INT(number_parse("1k", 0, 9999, &v), -1);
	CHECK_INT(v, 42);
	check_scope = "count_parse";
	CHECK_INT(count_parse("1", 5, &v), 0);
	CHECK_INT(v, 1);
	CHECK_INT(count_parse("5", 5, &v), 0);
	CHECK_INT(v, 5);
	CHECK_INT(count_parse("0", 5, &v), -1);
	CHECK_INT(count_parse("6", 5, &v), -1);
}

static void specs(void)
{
	char err[256];
	int cuda = -1, dev = -1;

	check_scope = "devmem_parse";
	CHECK_INT(devmem_parse("host", &cuda, &dev, err, sizeof(err)), 0);
	CHECK_INT(cuda, 0);
	CHECK_INT(devmem_parse("cuda", &cuda, &dev, err, sizeof(err)), 0);
	CHECK_INT(cuda, 1);
	CHECK_INT(dev, 0);
	CHECK_INT(devmem_parse("cuda:65535", &cuda, &dev, err, sizeof(err)), 0);
	CHECK_INT(dev, 65535);
	CHECK_INT(devmem_parse("cuda:0000000000000000000000000000003", &cuda,
			       &dev, err, sizeof(err)),
		  0);
	CHECK_INT(dev, 3);
	CHECK_INT(devmem_parse("cuda:65536", &cuda, &dev, err, sizeof(err)),
		  -1);
	CHECK_HAS(err, "unknown memory 'cuda:65536'");
	CHECK_INT(devmem_parse("cuda:", &cuda, &dev, err, sizeof(err)), -1);
	CHECK_INT(devmem_parse("cudax", &cuda, &dev, err, sizeof(err)), -1);
	CHECK_INT(devmem_parse("Host", &cuda, &dev, err, sizeof(err)), -1);
}

static int bound_here(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISSOCK(st.st_mode);
}

static void sockets(void)
{
	char dir[] = "/tmp/gdr-unixsock-XXXXXX", path[100], other[100];
	char err[512];
	struct unixsock s;
	struct stat st;
	int c, fd;

	check_scope = "unixsock";
	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	snprintf(path, sizeof(path), "%s/a.sock", dir);
	snprintf(other, sizeof(other), "%s/b", dir);

	/* A new path: bound, answers, removed at the close. */
	CHECK_INT(unixsock_listen(path, &s, err, sizeof(err)), 0);
	CHECK(s.fd >= 0 && bound_here(path));
	c = unixsock_connect(path, err, sizeof(err));
	CHECK(c >= 0);
	if (c >= 0)
		close(c);
	/* A second listener on the live one: refused, the first kept. */
	{
		struct unixsock t;

		CHECK_INT(unixsock_listen(path, &t, err, sizeof(err)), -1);
		CHECK_HAS(err, "another process listens");
		CHECK_INT(t.fd, -1);
		CHECK(bound_here(path));
	}
	unixsock_close(&s);
	CHECK_INT(s.fd, -1);
	CHECK(!bound_here(path) && lstat(path, &st) && errno == ENOENT);
	unixsock_close(&s); /* twice: nothing more happens */

	/* Replaced by someone else while listening (a file renamed over
	 * it): the close removes nothing it did not make. */
	CHECK_INT(unixsock_listen(path, &s, err, sizeof(err)), 0);
	fd = open(other, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_INT(rename(other, path), 0);
	unixsock_close(&s);
	CHECK(!lstat(path, &st) && S_ISREG(st.st_mode));
	unlink(path);

	/* Replaced by another socket at the same path: kept too. */
	CHECK_INT(unixsock_listen(path, &s, err, sizeof(err)), 0);
	{
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int o = socket(AF_UNIX, SOCK_STREAM, 0);

		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
		CHECK_INT(unlink(path), 0);
		CHECK_INT(bind(o, (struct sockaddr *)&a, sizeof(a)), 0);
		unixsock_close(&s);
		CHECK(bound_here(path));
		close(o);
		unlink(path);
	}

	/* A stale socket (bound, its fd closed): taken over. */
	{
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int o = socket(AF_UNIX, SOCK_SEQPACKET, 0);

		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
		CHECK_INT(bind(o, (struct sockaddr *)&a, sizeof(a)), 0);
		close(o);
		CHECK_INT(unixsock_listen(path, &s, err, sizeof(err)), 0);
		c = unixsock_connect(path, err, sizeof(err));
		CHECK(c >= 0);
		if (c >= 0)
			close(c);
		unixsock_close(&s);
		CHECK(!bound_here(path));
	}

	/* The longest path sun_path holds is taken, one more is not. */
	{
		char lp[200];
		size_t room = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
		size_t at = strlen(dir) + 1;

		snprintf(lp, sizeof(lp), "%s/", dir);
		memset(lp + at, 'x', room - at);
		lp[room] = '\0';
		CHECK_INT(unixsock_listen(lp, &s, err, sizeof(err)), 0);
		unixsock_close(&s);
		CHECK(!bound_here(lp));
		lp[room] = 'x';
		lp[room + 1] = '\0';
		CHECK_INT(unixsock_listen(lp, &s, err, sizeof(err)), -1);
		CHECK_HAS(err, "takes 1 to 107 bytes, this one has 108");
		CHECK_INT(unixsock_connect(lp, err, sizeof(err)), -1);
		CHECK_HAS(err, "this one has 108");
		CHECK_INT(unixsock_listen("", &s, err, sizeof(err)), -1);
		CHECK_HAS(err, "takes 1 to 107 bytes, this one has 0");
	}
	/* A stream listener (a Python owner's default socket): connected
	 * too, as a stream; a stale one is refused with its errno. */
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	{
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int o = socket(AF_UNIX, SOCK_STREAM, 0), type = 0;
		socklen_t tl = sizeof(type);

		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
		CHECK_INT(bind(o, (struct sockaddr *)&a, sizeof(a)), 0);
		CHECK_INT(listen(o, 1), 0);
		c = unixsock_connect(path, err, sizeof(err));
		CHECK(c >= 0);
		if (c >= 0) {
			CHECK_INT(getsockopt(c, SOL_SOCKET, SO_TYPE, &type,
					     &tl),
				  0);
			CHECK_INT(type, SOCK_STREAM);
			close(c);
		}
		close(o);
		CHECK_INT(unixsock_connect(path, err, sizeof(err)), -1);
		CHECK_HAS(err, "Connection refused");
		unlink(path);
	}
	/* A directory that does not exist: bind's own errno. */
	snprintf(path, sizeof(path), "%s/no/a.sock", dir);
	CHECK_INT(unixsock_listen(path, &s, err, sizeof(err)), -1);
	CHECK_HAS(err, "cannot bind");
	CHECK_HAS(err, "No such file or directory");
	rmdir(dir);
}

int main(void)
{
	numbers();
	specs();
	sockets();
	return check_summary("common");
}
