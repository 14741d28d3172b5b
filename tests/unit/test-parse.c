/* SPDX-License-Identifier: MIT */
/* Parsers of outside input (kernel releases, the NVIDIA version file,
 * numbers) and the file reader under them; the errno tables. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "fakes.h"
#include "walk.h"

/* A read(2) that fails is an error, never the end of the file. */
static void read_errors(void)
{
	char buf[64], big[8192];
	struct fixture fx;
	size_t got;
	long i;

	check_scope = "read errors";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.sys, "module/x/version", "1.2.3\n");
	for (i = 0; i < (long)sizeof(big) - 1; i++)
		big[i] = 'a' + i % 26;
	big[sizeof(big) - 1] = '\0';
	fixture_write(fx.sys, "big", big);
	fakes_install(&fx, NULL, NULL, NULL);
	CHECK_INT(gdr_read_file(fx.sys, "/module/x/version", buf, sizeof(buf)),
		  0);
	CHECK_STR(buf, "1.2.3");
	CHECK_INT(gdr_read_file(fx.sys, "/module/y/version", buf, sizeof(buf)),
		  ENOENT);
	/* Each call of a read fails in turn: open, first read, a later read
	 * (the fake hands out a page per read, as sysfs does). */
	for (i = 1; i <= 5; i++) {
		fault_calls = 0;
		fault_where = NULL;
		fault_at = i;
		memset(big, 'z', sizeof(big));
		CHECK_INT(gdr_read_bin(fx.sys, "/big", big, sizeof(big) - 1,
				       &got),
			  fault_where ? EIO : 0);
		fault_at = 0;
		if (!fault_where)
			CHECK_INT(got, sizeof(big) - 1);
		else
			CHECK_STR(fault_where, i == 1 ? "open" : "read");
		CHECK(i > 3 || fault_where);
	}
	fault_calls = 0;
	fault_at = 2; /* the read after the open */
	strcpy(buf, "stale");
	CHECK_INT(gdr_read_file(fx.sys, "/module/x/version", buf, sizeof(buf)),
		  EIO);
	CHECK_STR(fault_where, "read");
	CHECK_STR(buf, "");
	fault_at = 0;
	fixture_remove(&fx);
	gdr_seam_install(NULL);
}

/* A namespace of two files, "a" and "a/b" (as a crafted snapshot may
 * hold both), for gdr_walk. */
static int file_table(void *ctx, const char *name, enum gdr_walk_kind *kind,
		      char *target, size_t n)
{
	(void)ctx;
	(void)target;
	(void)n;
	if (!strcmp(name, "a") || !strcmp(name, "a/b")) {
		*kind = GDR_WALK_FILE;
		return 0;
	}
	errno = ENOENT;
	return -1;
}

static void kernel(const char *s, int ok, int maj, int min, int patch,
		   int ge_5_12)
{
	struct gdr_kver v;
	int r = gdr_parse_kernel_release(s, &v);

	check_scope = s;
	CHECK_INT(r, ok ? 0 : EINVAL);
	if (!ok)
		return;
	CHECK_INT(v.major, maj);
	CHECK_INT(v.minor, min);
	CHECK_INT(v.patch, patch);
	CHECK_INT(gdr_kver_cmp(&v, 5, 12) >= 0, ge_5_12);
}

static void nvidia(const char *text, enum gdr_nv_flavour want, const char *ver)
{
	char got[64];

	check_scope = text ? text : "(null)";
	CHECK_INT(gdr_parse_nvidia_version(text, got, sizeof(got)), want);
	CHECK_STR(got, ver);
}

/* Every CUresult the library maps, and every errno it names. */
static void iommu(const char *cmdline, const char *want)
{
	char got[160];

	gdr_parse_iommu_cmdline(cmdline, got, sizeof(got));
	CHECK_STR(got, want);
}

static void errno_tables(void)
{
	static const struct {
		CUresult r;
		int err;
	} cu[] = {
		{ CUDA_SUCCESS, 0 },
		{ CUDA_ERROR_INVALID_VALUE, EINVAL },
		{ CUDA_ERROR_INVALID_CONTEXT, EINVAL },
		{ CUDA_ERROR_INVALID_DEVICE, EINVAL },
		{ CUDA_ERROR_OUT_OF_MEMORY, ENOMEM },
		{ CUDA_ERROR_NOT_SUPPORTED, EOPNOTSUPP },
		{ CUDA_ERROR_NO_DEVICE, ENODEV },
		{ CUDA_ERROR_NOT_PERMITTED, EPERM },
		{ CUDA_ERROR_NOT_INITIALIZED, EIO },
		{ CUDA_ERROR_UNKNOWN, EIO },
		{ (CUresult)12345, EIO },
	};
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ 0, "0" },
		{ EPERM, "EPERM" },
		{ ENOENT, "ENOENT" },
		{ EIO, "EIO" },
		{ EBADF, "EBADF" },
		{ ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" },
		{ EFAULT, "EFAULT" },
		{ EBUSY, "EBUSY" },
		{ ENODEV, "ENODEV" },
		{ EINVAL, "EINVAL" },
		{ EMFILE, "EMFILE" },
		{ ENOSYS, "ENOSYS" },
		{ EPROTONOSUPPORT, "EPROTONOSUPPORT" },
		{ EOPNOTSUPP, "EOPNOTSUPP" },
		{ EAGAIN, "EAGAIN" },
		{ ENOTDIR, "ENOTDIR" },
		{ ELOOP, "ELOOP" },
		{ GDR_ENOTSUPP, "ENOTSUPP(524)" },
		{ GDR_ENOTREG, "not a regular file" },
		{ 9999, "errno 9999" },
	};
	char buf[128];
	size_t i;

	check_scope = "errno tables";
	for (i = 0; i < sizeof(cu) / sizeof(cu[0]); i++)
		CHECK_INT(gdr_cu_errno(cu[i].r), cu[i].err);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK_STR(gdr_errno_name(names[i].err), names[i].name);
	/* What a caller sees: 524 only as EOPNOTSUPP. */
	CHECK_INT(gdr_errno_public(GDR_ENOTSUPP), EOPNOTSUPP);
	CHECK_INT(gdr_errno_public(EOPNOTSUPP), EOPNOTSUPP);
	CHECK_INT(gdr_errno_public(EINVAL), EINVAL);
	CHECK_INT(gdr_errno_public(0), 0);
	/* What moves on to the next path. */
	CHECK(gdr_err_is_unsupported(EOPNOTSUPP));
	CHECK(gdr_err_is_unsupported(EPROTONOSUPPORT));
	CHECK(gdr_err_is_unsupported(GDR_ENOTSUPP));
	CHECK(!gdr_err_is_unsupported(EINVAL));
	CHECK(!gdr_err_is_unsupported(ENOMEM));
	CHECK(!gdr_err_is_unsupported(EPERM));
	CHECK(!gdr_err_is_unsupported(0));
	CHECK_STR(gdr_errno_words(GDR_ENOTSUPP, buf, sizeof(buf)),
		  "524 (the kernel's internal ENOTSUPP, reported as "
		  "EOPNOTSUPP)");
	CHECK_STR(gdr_errno_words(ENOMEM, buf, sizeof(buf)),
		  "ENOMEM (Cannot allocate memory)");
}

int main(void)
{
	long l;

	kernel("5.12.0-rc1+", 1, 5, 12, 0, 1);
	kernel("6.18.44-fc-v973-gpu", 1, 6, 18, 44, 1);
	kernel("4.18.0-513.el8.x86_64", 1, 4, 18, 0, 0);
	kernel("6.1.0-57-amd64", 1, 6, 1, 0, 1);
	kernel("5.11.22", 1, 5, 11, 22, 0);
	/* Six digits a number at most: a seventh is not a version. */
	kernel("999999.1", 1, 999999, 1, 0, 1);
	kernel("1234567.1", 0, 0, 0, 0, 0);
	kernel("6.1.1234567", 1, 6, 1, 0, 1);
	kernel("5.4.0-182-generic", 1, 5, 4, 0, 0);
	kernel("6.8-rc1", 1, 6, 8, 0, 1);
	kernel("10.0.0", 1, 10, 0, 0, 1);
	kernel("5.12", 1, 5, 12, 0, 1);
	kernel("", 0, 0, 0, 0, 0);
	kernel("abc", 0, 0, 0, 0, 0);
	kernel("5", 0, 0, 0, 0, 0);
	kernel("5.", 0, 0, 0, 0, 0);
	kernel(".12", 0, 0, 0, 0, 0);
	kernel("99999999.1", 0, 0, 0, 0, 0);

	nvidia(NV_OPEN, GDR_NV_OPEN, "580.159.04");
	nvidia(NV_PROPRIETARY, GDR_NV_PROPRIETARY, "535.104.05");
	nvidia("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  "
	       "570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)  "
	       "Thu Jan 23 2025",
	       GDR_NV_OPEN, "570.86.15");
	nvidia("", GDR_NV_UNPARSED, ""); /* there, but empty or NULs */
	nvidia(NULL, GDR_NV_ABSENT, "");
	nvidia("garbage\n", GDR_NV_UNPARSED, "");
	nvidia("NVRM version: no number here\n", GDR_NV_UNPARSED, "");
	/* The number must be on the NVRM line, not the GCC one. */
	nvidia("NVRM version: NVIDIA UNIX Kernel Module\nGCC version: 12.3.0\n",
	       GDR_NV_UNPARSED, "");
	/* A short buffer gets as much of the version as fits, terminated;
	 * no buffer at all still tells the flavour. */
	{
		char small[5];

		check_scope = "nvidia version, short buffer";
		memset(small, 'x', sizeof(small));
		CHECK_INT(gdr_parse_nvidia_version(NV_OPEN, small,
						   sizeof(small)),
			  GDR_NV_OPEN);
		CHECK_STR(small, "580.");
		CHECK_INT(gdr_parse_nvidia_version(NV_PROPRIETARY, NULL, 0),
			  GDR_NV_PROPRIETARY);
		CHECK_INT(gdr_parse_nvidia_version(NV_OPEN, NULL, 0),
			  GDR_NV_OPEN);
	}

	check_scope = "iommu_cmdline";
	iommu("BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro intel_iommu=on iommu=pt "
	      "quiet\n",
	      "intel_iommu=on iommu=pt");
	iommu("amd_iommu=off iommu.passthrough=1 iommu.strict=0",
	      "amd_iommu=off iommu.passthrough=1 iommu.strict=0");
	iommu("ro quiet splash", "");
	iommu("", "");
	iommu(NULL, "");
	/* Near misses are not IOMMU words. */
	iommu("noiommu=1 xiommu=pt iommu intel_iommu amd_iommu_dump=1", "");
	/* Tabs and newlines separate words too. */
	iommu("a\tiommu=pt\nb", "iommu=pt");
	/* A word that does not fit is left out whole, never cut. */
	{
		char out[12];

		gdr_parse_iommu_cmdline("iommu=pt intel_iommu=on", out,
					sizeof(out));
		CHECK_STR(out, "iommu=pt");
		gdr_parse_iommu_cmdline("intel_iommu=on", out, 1);
		CHECK_STR(out, "");
	}

	check_scope = "nvfs_stats";
	{
		char ver[16];
		int pd;

		gdr_parse_nvfs_stats("GDS Version: 1.13.1.3\nNVFS statistics"
				     "(ver: 4.0)\nNVFS Driver(version: "
				     "2.22.3)\nMellanox PeerDirect Supported: "
				     "False\n",
				     ver, sizeof(ver), &pd);
		CHECK_STR(ver, "2.22.3");
		CHECK_INT(pd, 0);
		gdr_parse_nvfs_stats("NVFS Driver(version: 2.7.49)\n"
				     "Mellanox PeerDirect Supported: True\n",
				     ver, sizeof(ver), &pd);
		CHECK_STR(ver, "2.7.49");
		CHECK_INT(pd, 1);
		/* Unterminated, too long, or absent: no version. */
		gdr_parse_nvfs_stats("NVFS Driver(version: 2.7.49", ver,
				     sizeof(ver), &pd);
		CHECK_STR(ver, "");
		CHECK_INT(pd, -1);
		gdr_parse_nvfs_stats("NVFS Driver(version: 1234567890123456)",
				     ver, sizeof(ver), &pd);
		CHECK_STR(ver, "");
		gdr_parse_nvfs_stats(NULL, ver, sizeof(ver), &pd);
		CHECK_STR(ver, "");
	}

	check_scope = "cufile";
	{
		struct gdr_cufile c;

		CHECK_INT(gdr_parse_cufile(
				  "{ // \"allow_compat_mode\": false\n"
				  "  \"properties\": { /* \"x\": 1 */\n"
				  "    \"allow_compat_mode\" : true,\n"
				  "    \"rdma_dev_addr_list\": [\"10.0.0.1\", "
				  "\"fd00::2\" ] } }",
				  &c),
			  0);
		CHECK_INT(c.allow_compat_mode, 1); /* the comment's is not it */
		CHECK_INT(c.has_addr_list, 1);
		CHECK_INT(c.num_addrs, 2);
		CHECK_STR(c.addrs[0], "10.0.0.1");
		CHECK_STR(c.addrs[1], "fd00::2");
		/* The same file saved with CR LF line ends (edited on
		 * Windows): CR is white space, a // comment ends at the LF
		 * and a block comment spans the lines. */
		CHECK_INT(
			gdr_parse_cufile(
				"{ // \"allow_compat_mode\": false\r\n"
				"  \"properties\": { /* \"x\": 1\r\n */\r\n"
				"    \"allow_compat_mode\" : true,\r\n"
				"    \"rdma_dev_addr_list\": [\"10.0.0.1\",\r\n"
				"\"fd00::2\" ] } }\r\n",
				&c),
			0);
		CHECK_INT(c.allow_compat_mode, 1);
		CHECK_INT(c.num_addrs, 2);
		CHECK_STR(c.addrs[1], "fd00::2");
		/* "//" inside a string is not a comment. */
		CHECK_INT(gdr_parse_cufile("{\"dir\": \"//x\", \"properties\": "
					   "{\"allow_compat_mode\": false}}",
					   &c),
			  0);
		CHECK_INT(c.allow_compat_mode, 0);
		CHECK_INT(c.has_addr_list, 0);
		CHECK_INT(gdr_parse_cufile("{}", &c), 0);
		CHECK_INT(c.allow_compat_mode, -1);
		/* Keys sorted (jq -S): a file system's list comes first and
		 * is not the global one. */
		CHECK_INT(
			gdr_parse_cufile(
				"{\"fs\": {\"lustre\": {\"rdma_dev_addr_list\": "
				"[\"10.9.9.9\"]}}, \"properties\": "
				"{\"allow_compat_mode\": true, "
				"\"rdma_dev_addr_list\": [\"10.0.0.1\"]}}",
				&c),
			0);
		CHECK_INT(c.num_addrs, 1);
		CHECK_STR(c.addrs[0], "10.0.0.1");
		/* Outside "properties": not cuFile's global settings. */
		CHECK_INT(gdr_parse_cufile(
				  "{\"allow_compat_mode\": true, "
				  "\"rdma_dev_addr_list\": [\"1.2.3.4\"]}",
				  &c),
			  0);
		CHECK_INT(c.allow_compat_mode, -1);
		CHECK_INT(c.has_addr_list, 0);
		/* A key given twice: the last, as Python and jq read it. */
		CHECK_INT(gdr_parse_cufile("{\"properties\": "
					   "{\"allow_compat_mode\": true, "
					   "\"allow_compat_mode\": false}}",
					   &c),
			  0);
		CHECK_INT(c.allow_compat_mode, 0);
		/* Types respected: a string or number is not a boolean,
		 * entries that are not strings are not addresses. */
		CHECK_INT(gdr_parse_cufile("{\"properties\": "
					   "{\"allow_compat_mode\": \"true\", "
					   "\"rdma_dev_addr_list\": [1, \"\", "
					   "\"10.0.0.2\", null]}}",
					   &c),
			  0);
		CHECK_INT(c.allow_compat_mode, -2);
		CHECK_INT(c.num_addrs, 1);
		CHECK_INT(c.not_addrs, 3);
		CHECK_INT(c.dropped, 0);
		/* Not JSON: said so, with the line. */
		CHECK_INT(gdr_parse_cufile("{ /* open", &c), EINVAL);
		CHECK_HAS(c.why, "comment is not closed");
		CHECK_INT(gdr_parse_cufile("{ \"a\": \"open", &c), EINVAL);
		CHECK_INT(gdr_parse_cufile("{\"properties\":\n"
					   "{\"rdma_dev_addr_list\": 5}}",
					   &c),
			  EINVAL);
		CHECK_HAS(c.why, "is not an array");
		CHECK_INT(gdr_parse_cufile("{\"properties\": {\"rdma_dev_addr_"
					   "list\": [\"a\"",
					   &c),
			  EINVAL);
		CHECK_INT(gdr_parse_cufile("allow_compat_mode = true", &c),
			  EINVAL);
		CHECK_INT(gdr_parse_cufile("{\"properties\": {}}\n\n} junk",
					   &c),
			  EINVAL);
		CHECK_HAS(c.why, "line 3: text after the value");
		CHECK_INT(gdr_parse_cufile("{\"properties\": {\"x\": 0x10}}",
					   &c),
			  EINVAL);
		CHECK_INT(gdr_parse_cufile("{\"properties\": {\"x\": +1}}", &c),
			  EINVAL);
		CHECK_INT(gdr_parse_cufile("{\"properties\": {\"x\": NaN}}",
					   &c),
			  EINVAL);
		CHECK_INT(gdr_parse_cufile("[1, 2]", &c), EINVAL);
		CHECK_HAS(c.why, "not a JSON object");
		CHECK_INT(gdr_parse_cufile(NULL, &c), EINVAL);
	}

	check_scope = "a walk through a file is ENOTDIR (walk.c)";
	{
		enum gdr_walk_kind kind;
		char out[64];

		errno = 0;
		CHECK_INT(gdr_walk(file_table, NULL, "/a/b", 0, out,
				   sizeof(out), &kind, NULL, NULL),
			  -1);
		CHECK_INT(errno, ENOTDIR);
		CHECK_INT(gdr_walk(file_table, NULL, "/a", 0, out, sizeof(out),
				   &kind, NULL, NULL),
			  0);
		CHECK_STR(out, "a");
		CHECK_INT(kind, GDR_WALK_FILE);
	}

	check_scope = "a message cut to its buffer says so";
	{
		char buf[16];

		gdr_fmt(buf, sizeof(buf), "%s", "0123456789abcdef");
		CHECK_STR(buf, "0123456789ab...");
		gdr_fmt(buf, sizeof(buf), "%s", "0123456789abcde");
		CHECK_STR(buf, "0123456789abcde"); /* it fits: whole */
		/* never in the middle of a UTF-8 character */
		gdr_fmt(buf, sizeof(buf), "%s",
			"0123456789a\xc3\xa9\xc3\xa9\xc3\xa9");
		CHECK_STR(buf, "0123456789a...");
		buf[0] = '\0';
		gdr_append(buf, sizeof(buf), "%s", "0123456789");
		gdr_append(buf, sizeof(buf), "%s", "0123456789");
		CHECK_STR(buf, "012345678901...");
	}

	check_scope = "parse_long";
	CHECK(gdr_parse_long("42\n", &l) == 0 && l == 42);
	CHECK(gdr_parse_long("  7 ", &l) == 0 && l == 7);
	CHECK(gdr_parse_long("0x10", &l) == 0 && l == 16);
	CHECK(gdr_parse_long("", &l) == EINVAL);
	CHECK(gdr_parse_long("12abc", &l) == EINVAL);
	CHECK(gdr_parse_long("99999999999999999999999", &l) == EINVAL);
	CHECK(gdr_parse_long(NULL, &l) == EINVAL);

	check_scope = "path names";
	{
		enum gdr_path p;

		CHECK(gdr_path_parse("dmabuf", &p) == 0 &&
		      p == GDR_PATH_DMABUF);
		CHECK(gdr_path_parse("peermem", &p) == 0 &&
		      p == GDR_PATH_PEERMEM);
		CHECK(gdr_path_parse("host", &p) == 0 && p == GDR_PATH_HOST);
		CHECK(gdr_path_parse("auto", &p) == 0 && p == GDR_PATH_NONE);
		CHECK(gdr_path_parse("none", &p) == -1);
		CHECK(gdr_path_parse("DMABUF", &p) == -1);
		CHECK(gdr_path_parse(NULL, &p) == -1);
		CHECK_STR(gdr_path_str(GDR_PATH_DMABUF), "dmabuf");
		CHECK_STR(gdr_path_str((enum gdr_path)99), "invalid");
		CHECK_STR(gdr_mem_type_str(GDR_MEM_CUDA_POOL), "cuda-pool");
	}
	read_errors();
	errno_tables();
	return check_summary("parse");
}
