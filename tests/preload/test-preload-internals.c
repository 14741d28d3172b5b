/* SPDX-License-Identifier: MIT */
/*
 * The preload's own bookkeeping, compiled into this program
 * (GDR_PRELOAD_UNIT: no symbol versions) with the library's private calls
 * and libibverbs' definitions replaced by stubs:
 *   - a reason's cause: numbers and whole 0x tokens left out, so that
 *     another buffer is not another cause;
 *   - said once per cause, every time with GPUDIRECT_DEBUG, and past the
 *     table's 64 causes every time (never a row past it); two causes that
 *     differ only far in (at the last byte of the longest reason) are two;
 *     a refusal is said whatever its errno, only ENXIO ("not mine") is not;
 *   - the MRs it made: found, forgotten only when libibverbs let one go,
 *     and past its 4096 rows left to libibverbs;
 *   - ibv_rereg_mr (each combination of its flags) and ibv_reg_mr_ex's
 *     forms, decided without a device;
 *   - each registration entry hands the library the program's iova;
 *   - libcuda.so.1 loaded after a first registration is noticed (argv[1]:
 *     the fake libcuda.so.1 of tests/fakes/libcuda);
 *   - a registration entry entered again from inside libibverbs (its own
 *     ibv_reg_mr calling ibv_reg_mr_iova2 through its PLT) passes straight
 *     through: the library asked once, said once;
 *   - errno as the caller left it when the library registers.
 */
#include "../../lib/preload/preload.c"

#include <unistd.h>

static int passed, failed;

#define CHECK(c)                                                               \
	do {                                                                   \
		if (c) {                                                       \
			passed++;                                              \
		} else {                                                       \
			failed++;                                              \
			printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);    \
		}                                                              \
	} while (0)

#include "preload-stubs.h"

/* stderr into a file for a while: what was said, line by line. */
static FILE *said_to;
static int saved_err;

static void capture(void)
{
	fflush(stderr);
	said_to = tmpfile();
	saved_err = dup(2);
	dup2(fileno(said_to), 2);
}

static int lines_said(void)
{
	int n = 0, c;

	fflush(stderr);
	dup2(saved_err, 2);
	close(saved_err);
	rewind(said_to);
	while ((c = getc(said_to)) != EOF)
		n += c == '\n';
	fclose(said_to);
	return n;
}

static void causes(void)
{
	char key[96];

	cause_of("cannot register [0x7fab12, +4096) on GPU 3", key,
		 sizeof(key));
	CHECK(!strcmp(key, "cannot register [, +) on GPU "));
	cause_of("cannot register [0x7fcdef, +8192) on GPU 1", key,
		 sizeof(key));
	CHECK(!strcmp(key, "cannot register [, +) on GPU "));
	cause_of("x first, then 0x at the end: 0x", key, sizeof(key));
	CHECK(!strcmp(key, "x first, then  at the end: "));
	cause_of("exporter nv_dmabuf", key, sizeof(key));
	CHECK(!strcmp(key, "exporter nv_dmabuf"));
	cause_of("", key, sizeof(key));
	CHECK(!strcmp(key, ""));
	/* Cut at the key's size, terminated. */
	cause_of("abcdefgh", key, 4);
	CHECK(!strcmp(key, "abc"));
}

/* Distinct causes: "cause " and a letter word of @i. */
static void cause_word(unsigned int i, char *out)
{
	int k = 0;

	k += sprintf(out, "cause ");
	do {
		out[k++] = (char)('a' + i % 26);
		i /= 26;
	} while (i);
	out[k] = '\0';
}

static void once_per_cause(void)
{
	char why[32];
	unsigned int i;

	capture();
	say("ibv_reg_mr", "cannot register [0x7fab0000, +4096): no path");
	say("ibv_reg_mr", "cannot register [0x7fcd0000, +65536): no path");
	say("ibv_reg_mr_iova", "cannot register [0x7fcd0000, +1): no path");
	CHECK(lines_said() == 1);
	capture();
	say("ibv_reg_mr", "another cause at 0x10");
	CHECK(lines_said() == 1);
	debug = true;
	capture();
	say("ibv_reg_mr", "another cause at 0x10");
	say("ibv_reg_mr", "another cause at 0x20");
	CHECK(lines_said() == 2);
	debug = false;
	/* Fill the table (2 rows used), then past it. */
	capture();
	for (i = 0; i < SAID_MAX + 6; i++) {
		cause_word(i, why);
		say("ibv_reg_mr", why);
	}
	CHECK(lines_said() == SAID_MAX + 6);
	CHECK(num_said == SAID_MAX);
	capture();
	for (i = 0; i < SAID_MAX + 6; i++) {
		cause_word(i, why);
		say("ibv_reg_mr", why);
	}
	/* The 62 that found a row stay quiet; 8 had none. */
	CHECK(lines_said() == 8);
}

static void made_table(void)
{
	static struct ibv_mr mrs[MADE_MAX + 1];
	unsigned int i;

	CHECK(!made_has(&mrs[0], false));
	made_add(&mrs[0]);
	made_add(&mrs[1]);
	CHECK(made_has(&mrs[0], false));
	CHECK(made_has(&mrs[1], false));
	CHECK(made_has(&mrs[0], true)); /* found and forgotten */
	CHECK(!made_has(&mrs[0], false));
	CHECK(made_has(&mrs[1], true));
	CHECK(num_made == 0);
	for (i = 0; i <= MADE_MAX; i++)
		made_add(&mrs[i]);
	CHECK(num_made == MADE_MAX);
	CHECK(made_has(&mrs[MADE_MAX - 1], false));
	CHECK(!made_has(&mrs[MADE_MAX], false)); /* no row: libibverbs' */
	for (i = 0; i < MADE_MAX; i++)
		CHECK(made_has(&mrs[i], true) || (printf("row %u\n", i), 0));
	CHECK(num_made == 0);
}

/* Two causes alike up to @at (of a reason @len long) are two; said again,
 * neither. */
static void long_causes(void)
{
	static const char *tail[] = { "EOPNOTSUPP (Operation not supported)",
				      "EINVAL (Invalid argument)" };
	static char a[1024], b[1024];
	const char *common =
		"cannot register [0x7f0000000000, +8192) (cuda-device on GPU 0) "
		"with mlx5_0: dmabuf failed: ibv_reg_dmabuf_mr(offset 0, 8192 "
		"bytes) on mlx5_0 failed with ";
	unsigned int i;

	num_said = 0;
	capture();
	for (i = 0; i < 4; i++)
		say("ibv_reg_mr",
		    (snprintf(a, sizeof(a), "%s%s", common, tail[i % 2]), a));
	CHECK(lines_said() == 2);
	/* As long as a reason gets (through_library's buffer), apart only
	 * in its last byte. */
	memset(a, 'r', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	memcpy(b, a, sizeof(b));
	b[sizeof(b) - 2] = 's';
	capture();
	say("ibv_reg_mr", a);
	say("ibv_reg_mr", b);
	say("ibv_reg_mr", a);
	say("ibv_reg_mr", b);
	CHECK(lines_said() == 2);
	num_said = 0;
}

/* Which loaded objects are the CUDA driver, by file name alone. */
static int cuda_named(const char *name)
{
	struct dl_phdr_info info = { .dlpi_name = name };

	return is_cuda(&info, sizeof(info), NULL);
}

static void loader(void)
{
	CHECK(cuda_named("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
	CHECK(cuda_named("libcuda.so.580.95.05"));
	CHECK(cuda_named("/opt/x/libcuda.so"));
	CHECK(!cuda_named("/usr/local/cuda/lib64/libcudart.so.13"));
	CHECK(!cuda_named("/usr/lib/libcudnn.so.9"));
	CHECK(!cuda_named("/lib/libc.so.6"));
	CHECK(!cuda_named("")); /* the program itself */
	CHECK(!cuda_named(NULL));
	CHECK(!cuda_named("/usr/lib/libcuda.so.1/libm.so.6"));
	/* Not loaded here: the loader's count remembered as it is now. */
	unsigned long long adds = 0;

	CHECK(!cuda_now());
	dl_iterate_phdr(first_object, &adds);
	CHECK(adds != 0 && absent_at == adds);
	CHECK(!cuda_seen);
}

/* libibverbs' own definitions, each at its version. */
static void found(void)
{
	static const struct {
		void *const *got;
		const char *name, *version;
	} want[] = {
		{ (void *const *)&real.reg_mr, "ibv_reg_mr", "IBVERBS_1.1" },
		{ (void *const *)&real.reg_mr_iova, "ibv_reg_mr_iova",
		  "IBVERBS_1.7" },
		{ (void *const *)&real.reg_mr_iova2, "ibv_reg_mr_iova2",
		  "IBVERBS_1.8" },
		{ (void *const *)&real.rereg_mr, "ibv_rereg_mr",
		  "IBVERBS_1.1" },
		{ (void *const *)&real.dereg_mr, "ibv_dereg_mr",
		  "IBVERBS_1.1" },
		{ (void *const *)&real.reg_mr_ex, "ibv_reg_mr_ex",
		  "IBVERBS_1.15" },
		{ (void *const *)&real.reg_mr_1_0, "ibv_reg_mr",
		  "IBVERBS_1.0" },
		{ (void *const *)&real.rereg_mr_1_0, "ibv_rereg_mr",
		  "IBVERBS_1.0" },
		{ (void *const *)&real.dereg_mr_1_0, "ibv_dereg_mr",
		  "IBVERBS_1.0" },
	};
	unsigned int i;

	/* As a verbs program has it: loaded, in the global scope. */
	CHECK(dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL) != NULL);
	reals();
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		void *sym = dlvsym(RTLD_DEFAULT, want[i].name, want[i].version);

		if (*want[i].got != sym)
			printf("     %s@%s: %p, libibverbs has %p\n",
			       want[i].name, want[i].version, *want[i].got,
			       sym);
		CHECK(*want[i].got == sym);
	}
	/* Every rdma-core since 29 has these; the 1.0 ABI's objects are
	 * libibverbs' compat wrappers, not the 1.1 calls. */
	CHECK(real.reg_mr && real.reg_mr_iova && real.reg_mr_iova2 &&
	      real.rereg_mr && real.dereg_mr && real.dereg_mr_1_0);
	CHECK(real.reg_mr_1_0 && real.reg_mr_1_0 != (void *)real.reg_mr);
}

/*
 * A process that registers before it loads libcuda.so.1: host memory
 * passed on without asking the library; once libcuda.so.1 is there (loaded
 * after the preload's first look), the library is asked.
 */
static void late_cuda(const char *fake_cuda)
{
	struct ibv_pd pd = { 0 };
	char buf[64];

	real.reg_mr = stub_reg_mr;
	lib_err = ENXIO;
	lib_calls = real_calls = 0;
	CHECK(!cuda_seen);
	CHECK(gdr_preload_reg_mr(&pd, buf, sizeof(buf), 7) == &stub_mr);
	CHECK(lib_calls == 0 && real_calls == 1);
	CHECK(!cuda_seen);
	CHECK(fake_cuda && dlopen(fake_cuda, RTLD_NOW) != NULL);
	CHECK(gdr_preload_reg_mr(&pd, buf, sizeof(buf), 7) == &stub_mr);
	CHECK(lib_calls == 1 && real_calls == 2);
	CHECK(cuda_seen);
	/* From then on, every registration asks. */
	CHECK(gdr_preload_reg_mr(&pd, buf, sizeof(buf), 7) == &stub_mr);
	CHECK(lib_calls == 2);
}

/* Every errno but ENXIO is a refusal, said once per cause. */
static void refusals_said(void)
{
	static const int errs[] = { EINVAL, EFAULT, EOPNOTSUPP, ENOMEM,	 EPERM,
				    EACCES, EBUSY,  ENODEV,	ENOTSUP, EIO };
	static const char *whys[] = { "a", "b", "c", "d", "e",
				      "f", "g", "h", "i", "j" };
	struct ibv_pd pd = { 0 };
	char buf[64];
	unsigned int i, round;

	cuda_seen = 1;
	for (round = 0; round < 2; round++) {
		capture();
		for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
			lib_err = errs[i];
			lib_why = whys[i];
			CHECK(!through_library("ibv_reg_mr", &pd, buf, 64, 0,
					       7));
		}
		CHECK(lines_said() ==
		      (round ? 0 : (int)(sizeof(errs) / sizeof(errs[0]))));
	}
	lib_why = "a test's reason";
	lib_err = ENXIO;
	capture();
	CHECK(!through_library("ibv_reg_mr", &pd, buf, 64, 0, 7));
	CHECK(lines_said() == 0);
	num_said = 0;
}

/* Each entry hands the library the iova the program asked for, and the MR
 * the program gets is at the program's address. */
static void iovas(void)
{
	struct ibv_pd pd = { 0 };
	struct ibv_mr *mr;
	char buf[64];
	struct mr_init_attr a = { .length = 32,
				  .access = 5,
				  .comp_mask = MR_MASK_ADDR | MR_MASK_IOVA,
				  .iova = 0x7700007,
				  .addr = buf + 7 };

	cuda_seen = 1;
	lib_err = 0;
	lib_calls = real_calls = 0;
	mr = gdr_preload_reg_mr_iova(&pd, buf + 3, 32, 0x7700003, 7);
	CHECK(mr && mr->addr == buf + 3 && mr->length == 32);
	CHECK(lib_iova == 0x7700003 && lib_access == 7);
	mr = gdr_preload_reg_mr_iova2(&pd, buf + 5, 32, 0x7700005, 3);
	CHECK(mr && mr->addr == buf + 5);
	CHECK(lib_iova == 0x7700005 && lib_access == 3);
	mr = gdr_preload_reg_mr(&pd, buf + 1, 32, 1);
	CHECK(mr && mr->addr == buf + 1);
	CHECK(lib_iova == (uintptr_t)(buf + 1) && lib_access == 1);
	mr = gdr_preload_reg_mr_ex(&pd, &a);
	CHECK(mr && mr->addr == buf + 7);
	CHECK(lib_iova == 0x7700007 && lib_access == 5);
	CHECK(lib_calls == 4 && real_calls == 0);
	num_made = 0;
}

/*
 * libibverbs entering the preload again from inside its own call (through
 * its PLT): passed straight through, so one registration asks the library
 * once and is said once (host memory in a CUDA process, GPUDIRECT_DEBUG).
 */
static void nested(void)
{
	struct ibv_pd pd = { 0 };
	struct mr_init_attr a = { .length = 64,
				  .access = 7,
				  .comp_mask = MR_MASK_ADDR };
	char buf[64];

	cuda_seen = 1;
	lib_err = ENXIO;
	debug = true;
	a.addr = buf;
	/* rdma-core 33 and later: ibv_reg_mr and ibv_reg_mr_iova call
	 * ibv_reg_mr_iova2. */
	real.reg_mr = stub_reg_mr_nests;
	real.reg_mr_iova = stub_iova_nests;
	real.reg_mr_iova2 = stub_iova2;
	lib_calls = real_calls = 0;
	capture();
	CHECK(gdr_preload_reg_mr(&pd, buf, 64, 7) == &stub_mr);
	CHECK(lines_said() == 1);
	CHECK(lib_calls == 1 && real_calls == 2 && !inside);
	CHECK(real_addr == buf && real_len == 64 && real_access == 7);
	capture();
	CHECK(gdr_preload_reg_mr_iova(&pd, buf + 1, 63, 0x9000, 5) == &stub_mr);
	CHECK(lines_said() == 1);
	CHECK(lib_calls == 2 && real_calls == 4 && !inside);
	CHECK(iova2_iova == 0x9000);
	CHECK(real_addr == buf + 1 && real_len == 63 && real_access == 5);
	/* ibv_reg_mr entered again from inside (a libibverbs whose
	 * ibv_reg_mr_ex of an address is its ibv_reg_mr): its arguments
	 * passed on as they came. */
	real.reg_mr = stub_reg_mr;
	real.reg_mr_ex = stub_reg_mr_ex_nests;
	a.addr = buf + 2;
	a.length = 62;
	a.access = 3;
	capture();
	CHECK(gdr_preload_reg_mr_ex(&pd, &a) == &stub_mr);
	CHECK(lines_said() == 1);
	CHECK(lib_calls == 3 && real_calls == 6 && !inside);
	CHECK(real_addr == buf + 2 && real_len == 62 && real_access == 3);
	a.addr = buf;
	a.length = 64;
	a.access = 7;
	lib_calls = real_calls = 0;
	/* rdma-core 29-32: ibv_reg_mr_iova2 calls ibv_reg_mr_iova; and
	 * ibv_reg_mr_ex without a libibverbs one goes there too. */
	real.reg_mr_iova2 = stub_iova2_nests;
	real.reg_mr_iova = stub_iova;
	real.reg_mr_ex = NULL;
	capture();
	CHECK(gdr_preload_reg_mr_iova2(&pd, buf + 4, 60, 0x9004, 7) ==
	      &stub_mr);
	CHECK(iova2_iova == 0x9004 && real_addr == buf + 4 && real_len == 60);
	CHECK(gdr_preload_reg_mr_ex(&pd, &a) == &stub_mr);
	CHECK(iova2_iova == (uintptr_t)buf);
	CHECK(lines_said() == 2);
	CHECK(lib_calls == 2 && real_calls == 4 && !inside);
	CHECK(real_addr == buf && real_len == 64 && real_access == 7);
	/* Device memory: the library's MR, libibverbs not asked. */
	lib_err = 0;
	capture();
	CHECK(gdr_preload_reg_mr_iova2(&pd, buf, 64, 0x9000, 7) != &stub_mr);
	CHECK(lines_said() == 1);
	CHECK(lib_calls == 3 && real_calls == 4 && !inside);
	debug = false;
	num_made = 0;
}

static void calls(void)
{
	struct ibv_pd pd = { 0 };
	struct mr_init_attr a;
	char buf[64];
	struct ibv_mr *mr;

	reals();
	real.rereg_mr = stub_rereg;
	real.dereg_mr = stub_dereg;
	real.reg_mr_ex = stub_reg_mr_ex;
	real.reg_mr_iova2 = stub_iova2;
	cuda_seen = 1; /* as in a process with libcuda.so.1 loaded */

	/* Registered by the library: errno as the caller left it. */
	lib_err = 0;
	errno = 1234;
	mr = through_library("ibv_reg_mr", &pd, buf, 64, 0x5000, 7);
	CHECK(mr && mr->addr == buf && mr->length == 64);
	CHECK(errno == 1234);
	CHECK(lib_iova == 0x5000 && lib_access == 7);
	CHECK(made_has(mr, false));

	/* A new translation refused before libibverbs; access passed on. */
	real_calls = 0;
	errno = 0;
	capture();
	CHECK(gdr_preload_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				   buf, 32, 7) == IBV_REREG_MR_ERR_INPUT);
	CHECK(errno == EINVAL);
	CHECK(lines_said() == 1);
	CHECK(real_calls == 0);
	CHECK(gdr_preload_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				   0, 1) == 0);
	CHECK(real_calls == 1);
	/* A translation rereg of an MR it did not make: libibverbs'. */
	CHECK(gdr_preload_rereg_mr(&stub_mr, IBV_REREG_MR_CHANGE_TRANSLATION,
				   NULL, buf, 32, 7) == 0);
	CHECK(real_calls == 2);
	/* Translation with access, PD or both: refused the same, said once
	 * for the three; PD, access or both without it: libibverbs' answer,
	 * as it is. */
	num_said = 0;
	capture();
	for (int f = 1; f <= IBV_REREG_MR_FLAGS_SUPPORTED; f++) {
		bool t = f & IBV_REREG_MR_CHANGE_TRANSLATION;

		real_calls = 0;
		real_err = IBV_REREG_MR_ERR_CMD;
		errno = 0;
		CHECK(gdr_preload_rereg_mr(mr, f, &pd, t ? buf : NULL,
					   t ? 32 : 0,
					   f & IBV_REREG_MR_CHANGE_ACCESS) ==
			      (t ? IBV_REREG_MR_ERR_INPUT
				 : IBV_REREG_MR_ERR_CMD) ||
		      (printf("     flags 0x%x\n", f), 0));
		CHECK(real_calls == (t ? 0 : 1));
		CHECK(errno == (t ? EINVAL : 0));
	}
	real_err = 0;
	CHECK(lines_said() == 1);
	/* GPUDIRECT_PRELOAD=0: nothing is the preload's. */
	off = true;
	real_calls = 0;
	CHECK(gdr_preload_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				   buf, 32, 0) == 0);
	CHECK(real_calls == 1);
	off = false;
	real_calls = 2;

	/* Forgotten only once libibverbs let it go. */
	real_err = EBUSY;
	CHECK(gdr_preload_dereg_mr(mr) == EBUSY);
	CHECK(made_has(mr, false));
	real_err = 0;
	CHECK(gdr_preload_dereg_mr(mr) == 0);
	CHECK(!made_has(mr, false));

	/* A reason the library gives is said; the caller asks libibverbs;
	 * nothing is remembered as made. */
	lib_err = EINVAL;
	capture();
	CHECK(!through_library("ibv_reg_mr", &pd, buf, 64, 0, 7));
	CHECK(lines_said() == 1);
	CHECK(num_made == 0);
	/* Not device memory: nothing said, nothing made. */
	lib_err = ENXIO;
	capture();
	CHECK(!through_library("ibv_reg_mr", &pd, buf, 64, 0, 7));
	CHECK(lines_said() == 0);
	CHECK(num_made == 0);
	/* Arguments no registration takes: the library is not asked. */
	lib_calls = 0;
	CHECK(!through_library("ibv_reg_mr", NULL, buf, 64, 0, 7));
	CHECK(!through_library("ibv_reg_mr", &pd, NULL, 64, 0, 7));
	CHECK(!through_library("ibv_reg_mr", &pd, buf, 0, 0, 7));
	off = true;
	CHECK(!through_library("ibv_reg_mr", &pd, buf, 64, 0, 7));
	off = false;
	CHECK(lib_calls == 0);

	/* ibv_reg_mr_ex: the address form is the library's, iova or not. */
	lib_err = 0;
	lib_calls = real_calls = 0;
	memset(&a, 0, sizeof(a));
	a.comp_mask = MR_MASK_ADDR;
	a.addr = buf;
	a.length = 64;
	a.access = 3;
	a.iova = 0xdead; /* not set: not read */
	mr = gdr_preload_reg_mr_ex(&pd, &a);
	CHECK(mr && lib_calls == 1 && real_calls == 0);
	CHECK(lib_iova == (uintptr_t)buf && lib_access == 3);
	a.comp_mask = MR_MASK_ADDR | MR_MASK_IOVA;
	mr = gdr_preload_reg_mr_ex(&pd, &a);
	CHECK(mr && lib_calls == 2 && lib_iova == 0xdead);
	/* Anything more (an fd, a DMA handle, a buffer, a bit this file
	 * does not know), or no address: libibverbs', the same argument. */
	lib_calls = 0;
	for (uint64_t bit = 1ULL << 2; bit; bit <<= 1) {
		a.comp_mask = MR_MASK_ADDR | bit;
		real_attr = NULL;
		CHECK(gdr_preload_reg_mr_ex(&pd, &a) == &stub_mr);
		CHECK(real_attr == &a);
	}
	a.comp_mask = MR_MASK_IOVA;
	CHECK(gdr_preload_reg_mr_ex(&pd, &a) == &stub_mr);
	CHECK(lib_calls == 0);
	/* libibverbs' own failure and errno come back as they were. */
	real_err = 1;
	a.comp_mask = 1ULL << 2;
	CHECK(gdr_preload_reg_mr_ex(&pd, &a) == NULL && errno == EFAULT);
	real_err = 0;
	/* A libibverbs without IBVERBS_1.15: the address form is
	 * ibv_reg_mr_iova2's, the rest has no meaning. */
	real.reg_mr_ex = NULL;
	real_calls = 0;
	CHECK(gdr_preload_reg_mr_ex(&pd, &a) == NULL && errno == EOPNOTSUPP);
	a.comp_mask = MR_MASK_ADDR;
	CHECK(gdr_preload_reg_mr_ex(&pd, &a) != NULL); /* the library's */
	CHECK(real_calls == 0);
	lib_err = ENXIO; /* host memory */
	a.comp_mask = MR_MASK_ADDR | MR_MASK_IOVA;
	CHECK(gdr_preload_reg_mr_ex(&pd, &a) == &stub_mr);
	CHECK(real_calls == 1 && iova2_iova == 0xdead);
	a.comp_mask = MR_MASK_ADDR;
	CHECK(gdr_preload_reg_mr_ex(&pd, &a) == &stub_mr);
	CHECK(real_calls == 2 && iova2_iova == (uintptr_t)buf);
	CHECK(gdr_preload_reg_mr_ex(&pd, NULL) == NULL && errno == EOPNOTSUPP);
}

int main(int argc, char **argv)
{
	loader();
	found();
	late_cuda(argc > 1 ? argv[1] : NULL);
	causes();
	once_per_cause();
	long_causes();
	refusals_said();
	made_table();
	iovas();
	nested();
	calls();
	printf("preload internals: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
