/* SPDX-License-Identifier: MIT */
/*
 * What the programs share (common/): the one parser of command-line
 * numbers at both edges, the unix socket that removes only the path it
 * bound, and the buffer in host or device memory (the device half over
 * the fake libcuda.so.1, whose "device memory" is host memory).
 */
#include <dlfcn.h>
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
	/* Only ':' separates the ordinal; "host" is the whole word. */
	CHECK_INT(devmem_parse("cudax1", &cuda, &dev, err, sizeof(err)), -1);
	CHECK_INT(devmem_parse("cuda-1", &cuda, &dev, err, sizeof(err)), -1);
	CHECK_INT(devmem_parse("cuda01", &cuda, &dev, err, sizeof(err)), -1);
	CHECK_INT(devmem_parse("hostile", &cuda, &dev, err, sizeof(err)), -1);
	CHECK_HAS(err, "unknown memory 'hostile'");
	CHECK_INT(devmem_parse("host:0", &cuda, &dev, err, sizeof(err)), -1);
}

/* The byte devmem_pattern() puts at @k of a @size-byte message. */
static int is_pattern(const unsigned char *p, size_t size, int invert)
{
	size_t k;

	for (k = 0; k < size; k++)
		if (p[k] != (unsigned char)(invert ? ~devmem_pattern(k, size)
						   : devmem_pattern(k, size)))
			return 0;
	return 1;
}

/*
 * Writes and reads at an offset, the pattern written to the last byte (and
 * its complement), and the check's answer: 0, or the first wrong byte + 1.
 * @view is the buffer as host memory (the fake's device memory is).
 */
static void pattern_edges(struct devmem *m, unsigned char *view)
{
	unsigned char b[4];

	CHECK_INT(devmem_write(m, 10, "abcd", 4), 0);
	CHECK(!memcmp(view + 10, "abcd", 4));
	CHECK_INT(devmem_read(m, 11, b, 2), 0);
	CHECK(!memcmp(b, "bc", 2));

	memset(view, 0, 64);
	CHECK_INT(devmem_fill(m, 64, 0), 0);
	CHECK(is_pattern(view, 64, 0));
	CHECK_INT(devmem_check(m, 64), 0);
	view[0] ^= 0xff;
	CHECK_INT(devmem_check(m, 64), 1);
	view[0] ^= 0xff;
	view[63] ^= 0xff;
	CHECK_INT(devmem_check(m, 64), 64);
	view[63] ^= 0xff;
	view[5] ^= 0xff;
	view[9] ^= 0xff;
	CHECK_INT(devmem_check(m, 64), 6); /* the first, not the last */
	/* The complement: nothing of it passes. */
	CHECK_INT(devmem_fill(m, 64, 1), 0);
	CHECK(is_pattern(view, 64, 1));
	CHECK_INT(devmem_check(m, 64), 1);
}

static void buffers(void)
{
	struct devmem m;
	char err[256];

	check_scope = "devmem host";
	CHECK_INT(devmem_alloc("host", 64, &m, err, sizeof(err)), 0);
	CHECK_INT(m.cuda, 0);
	pattern_edges(&m, m.ptr);
	devmem_free(&m);
	CHECK(m.ptr == NULL);
	devmem_free(&m); /* twice: nothing more happens */
}

/* The device half, over the fake libcuda.so.1 (one GPU, ordinal 0). */
static void device_buffers(void)
{
	struct devmem m;
	char err[256];
	void *cuda;
	int *live;

	check_scope = "devmem cuda";
	if (!getenv("GDR_FAKE_GPU_MEMORY")) {
		printf("devmem cuda: skipped (no fake libcuda.so.1 here)\n");
		return;
	}
	/* A GPU the driver does not have: said by its ordinal. */
	CHECK_INT(devmem_alloc("cuda:1", 64, &m, err, sizeof(err)), -1);
	CHECK_HAS(err, "CUDA device 1 is not usable");
	CHECK(m.ptr == NULL);

	CHECK_INT(devmem_alloc("cuda:0", 64, &m, err, sizeof(err)), 0);
	CHECK_INT(m.cuda, 1);
	CHECK_INT(m.device, 0);
	cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	live = cuda ? dlsym(cuda, "fake_cuda_allocations") : NULL;
	CHECK(live && *live == 1);
	pattern_edges(&m, m.ptr);

	/* A copy that fails is said, never taken for done or for a pass. */
	setenv("GDR_FAKE_GPU_COPY_FAIL", "1", 1);
	CHECK_INT(devmem_write(&m, 0, "x", 1), -1);
	CHECK_INT(devmem_read(&m, 0, err, 1), -1);
	CHECK_INT(devmem_fill(&m, 64, 0), -1);
	CHECK_INT(devmem_check(&m, 64), -1);
	unsetenv("GDR_FAKE_GPU_COPY_FAIL");

	devmem_free(&m);
	CHECK(m.ptr == NULL);
	CHECK(live && *live == 0); /* given back to the driver */
	devmem_free(&m);
	CHECK(live && *live == 0);
	if (cuda)
		dlclose(cuda);
}

static int bound_here(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISSOCK(st.st_mode);
}

/* The lowest free fd: a call that leaked one moves it. */
static int next_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd;
}

static int cloexec(int fd)
{
	int f = fcntl(fd, F_GETFD);

	return f >= 0 && (f & FD_CLOEXEC);
}

static void sockets(void)
{
	char dir[] = "/tmp/gdr-unixsock-XXXXXX", path[100], other[100];
	char err[512];
	struct unixsock s;
	struct stat st;
	int c, fd, free_fd;

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
	CHECK(cloexec(s.fd)); /* not handed to what the owner runs */
	c = unixsock_connect(path, err, sizeof(err));
	CHECK(c >= 0 && cloexec(c));
	if (c >= 0)
		close(c);
	/* A second listener on the live one: refused, the first kept, no fd
	 * left open. */
	{
		struct unixsock t;

		free_fd = next_fd();
		CHECK_INT(unixsock_listen(path, &t, err, sizeof(err)), -1);
		CHECK_HAS(err, "another process listens");
		CHECK_INT(t.fd, -1);
		CHECK(bound_here(path));
		CHECK_INT(next_fd(), free_fd);
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

	/* A live owner whose backlog is full (a non-blocking connect gets
	 * EAGAIN): live all the same, refused and left as it was. */
	{
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int o = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		int nb = SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC;
		int cs[64], k, n = 0;
		struct stat was;

		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
		CHECK_INT(bind(o, (struct sockaddr *)&a, sizeof(a)), 0);
		CHECK_INT(listen(o, 0), 0);
		for (k = 0; k < 64; k++) {
			cs[n] = socket(AF_UNIX, nb, 0);
			if (!connect(cs[n], (struct sockaddr *)&a, sizeof(a))) {
				n++;
				continue;
			}
			close(cs[n]);
			break;
		}
		CHECK(k < 64 && errno == EAGAIN); /* the backlog filled */
		CHECK_INT(lstat(path, &was), 0);
		CHECK_INT(unixsock_listen(path, &s, err, sizeof(err)), -1);
		CHECK_HAS(err, "another process listens");
		CHECK(!lstat(path, &st) && st.st_ino == was.st_ino);
		while (n > 0)
			close(cs[--n]);
		close(o);
		unlink(path);
	}

	/* A connect that fails leaves no fd open. */
	free_fd = next_fd();
	CHECK_INT(unixsock_connect(path, err, sizeof(err)), -1);
	CHECK_HAS(err, "start the owner first");
	CHECK_INT(next_fd(), free_fd);

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
	buffers();
	device_buffers();
	sockets();
	return check_summary("common");
}
