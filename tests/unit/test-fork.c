/* SPDX-License-Identifier: MIT */
/*
 * fork(): a child forked while another thread is in the middle of the
 * first probe must not deadlock in its own gdr_register (the probe lock is
 * held across fork and released in both processes); and an MR registered
 * before fork stays usable in the parent.
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

int main(void)
{
	struct timespec ms50 = { 0, 50 * 1000 * 1000 };
	struct fixture fx;
	struct ibv_mr *mr;
	pthread_t t;
	void *res;
	pid_t pid;
	int status;

	fakes_reset();
	fake_cu.init_delay_ms = 300; /* a slow first probe */
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	dev = fake_alloc_device(0, 1 << 20);

	check_scope = "fork during the first probe";
	pthread_create(&t, NULL, first_call, NULL);
	nanosleep(&ms50, NULL); /* the thread is inside cuInit now */
	pid = fork();
	if (pid == 0) {
		char buf[4096];

		alarm(10); /* a deadlock ends in SIGALRM, not a hang */
		mr = gdr_register(&fake_pd, buf, sizeof(buf));
		_exit(mr && mr->addr == buf && !gdr_deregister(mr) ? 0 : 1);
	}
	CHECK(pid > 0);
	CHECK_INT(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	if (WIFSIGNALED(status))
		printf("child killed by signal %d (deadlock?)\n",
		       WTERMSIG(status));
	CHECK_INT(WEXITSTATUS(status), 0);
	pthread_join(t, &res);
	CHECK(res != NULL);

	check_scope = "an MR from before fork, in the parent";
	mr = gdr_register(&fake_pd, dev, 4096);
	CHECK(mr != NULL);
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, &status, 0);
	CHECK(mr && mr->addr == dev);
	CHECK_INT(mr ? gdr_deregister(mr) : -1, 0);
	fixture_remove(&fx);
	gdr_seam_install(NULL);
	return check_summary("fork");
}
