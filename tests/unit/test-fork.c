/* SPDX-License-Identifier: MIT */
/*
 * fork(): the library holds no lock across a call into CUDA, verbs or the
 * dynamic loader, so nothing can deadlock when one of them forks (the CUDA
 * driver may run nvidia-modprobe from inside cuInit), and a child forked in
 * the middle of a probe finds nothing locked. A child forked after its
 * parent used CUDA still registers host memory.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fakes.h"

static void *dev;

static void *first_call(void *arg)
{
	struct ibv_mr *mr = gdr_register(&fake_pd, dev, 4096);

	(void)arg;
	if (mr)
		gdr_deregister(mr);
	return mr;
}

static void *report(void *arg)
{
	struct gdr_report *r = gdr_report_create(NULL, 0, 0);

	(void)arg;
	gdr_report_destroy(r);
	return r;
}

/*
 * The child of fork(), registering host memory within 10 s. It says how
 * that went through a pipe: its exit status is not its own under valgrind,
 * which counts the parent's allocations as the child's leaks.
 */
static int result[2];

static int child_registers(void)
{
	char buf[4096], ok;
	struct ibv_mr *mr;

	alarm(10); /* a deadlock ends in SIGALRM, not a hang */
	mr = gdr_register(&fake_pd, buf, sizeof(buf));
	ok = mr && mr->addr == buf && !gdr_deregister(mr) ? 'y' : 'n';
	if (write(result[1], &ok, 1) != 1)
		return 2;
	return 0;
}

static pid_t fork_child(void)
{
	if (pipe(result))
		return -1;
	return fork();
}

static void wait_ok(pid_t pid, const char *what)
{
	int status = -1;
	char ok = 0;

	CHECK(pid > 0);
	close(result[1]);
	CHECK_INT(read(result[0], &ok, 1), 1);
	close(result[0]);
	CHECK_INT(ok, 'y');
	CHECK_INT(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		printf("%s: child killed by signal %d (deadlock?)\n", what,
		       WTERMSIG(status));
	CHECK(WIFEXITED(status));
}

int main(void)
{
	struct timespec ms50 = { 0, 50 * 1000 * 1000 };
	struct fixture fx;
	struct ibv_mr *mr;
	pthread_t t;
	void *res;
	pid_t pid;

	fakes_reset();
	fake_cu.init_delay_ms = 300; /* a slow first probe */
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	dev = fake_alloc_device(0, 1 << 20);

	check_scope = "fork while another thread is inside cuInit";
	pthread_create(&t, NULL, report, NULL);
	nanosleep(&ms50, NULL); /* the thread is inside cuInit now */
	pid = fork_child();
	if (pid == 0)
		_exit(child_registers());
	wait_ok(pid, check_scope);
	pthread_join(t, &res);
	CHECK(res != NULL);

	check_scope = "a driver whose cuInit forks";
	fakes_reset();
	fake_cu.init_forks = 1;
	fakes_install(&fx, NULL, NULL, NULL);
	fake_cu.init_child_status = -1;
	/* In a thread, so that a deadlock shows as a missed deadline. */
	pthread_create(&t, NULL, report, NULL);
	pthread_join(t, &res);
	CHECK(res != NULL);
	CHECK_INT(fake_cu.inits, 1);
	CHECK_INT(fake_cu.init_child_status, 0);

	check_scope = "a registration racing with a fork";
	fakes_reset();
	fakes_install(&fx, NULL, NULL, NULL);
	dev = fake_alloc_device(0, 1 << 20);
	pthread_create(&t, NULL, first_call, NULL);
	pid = fork_child();
	if (pid == 0)
		_exit(child_registers());
	wait_ok(pid, check_scope);
	pthread_join(t, &res);
	CHECK(res != NULL);

	check_scope = "a child forked after the parent used CUDA";
	mr = gdr_register(&fake_pd, dev, 4096);
	CHECK(mr != NULL);
	pid = fork_child();
	if (pid == 0) {
		/* The driver in a child answers NOT_INITIALIZED. */
		fake_cu.not_initialized = 1;
		_exit(child_registers());
	}
	wait_ok(pid, check_scope);

	check_scope = "an MR from before fork, in the parent";
	CHECK(mr && mr->addr == dev);
	CHECK_INT(mr ? gdr_deregister(mr) : -1, 0);
	fixture_remove(&fx);
	gdr_seam_install(NULL);
	return check_summary("fork");
}
