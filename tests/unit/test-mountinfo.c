/* SPDX-License-Identifier: MIT */
/* The mount table's parser (base/mountinfo.c): proc(5)'s fields, the
 * kernel's octal escapes, and lines that are not its form, refused whole. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fakes.h"

static int parse(const char *line, struct gdr_mount *m)
{
	return gdr_parse_mountinfo_line(line, strlen(line), m);
}

int main(void)
{
	struct gdr_mount *m = malloc(sizeof(*m));
	char v[32], *big;
	size_t i;

	check_scope = "mountinfo";
	CHECK(m != NULL);
	CHECK_INT(parse("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 "
			"/dev/root rw,errors=continue",
			m),
		  0);
	CHECK(m->id == 36 && m->parent == 35);
	CHECK_INT((int)m->major, 98);
	CHECK_INT((int)m->minor, 0);
	CHECK_STR(m->root, "/mnt1");
	CHECK_STR(m->point, "/mnt2");
	CHECK_STR(m->options, "rw,noatime");
	CHECK_STR(m->fstype, "ext3");
	CHECK_STR(m->source, "/dev/root");
	CHECK_STR(m->super, "rw,errors=continue");
	/* No optional field; several. */
	CHECK_INT(parse("1 0 0:5 / / rw - tmpfs t rw", m), 0);
	CHECK_INT(parse("1 0 0:5 / / rw shared:1 master:2 propagate_from:3 - "
			"tmpfs t rw",
			m),
		  0);
	/* Escapes: space, tab, newline, backslash. */
	CHECK_INT(parse("7 1 0:52 / /mnt/a\\040b\\011c\\012d\\134e rw - nfs4 "
			"srv:/x\\040y rw,addr=10.0.0.1",
			m),
		  0);
	CHECK_STR(m->point, "/mnt/a b\tc\nd\\e");
	CHECK_STR(m->source, "srv:/x y");
	/* The largest escape, \377, is one byte; \400 and above are not. */
	CHECK_INT(parse("7 1 0:52 / /a\\377 rw - ext4 s rw", m), 0);
	CHECK_STR(m->point, "/a\377");
	CHECK_INT(parse("7 1 0:52 / /a\\400 rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1 0:52 / /a\\477 rw - ext4 s rw", m), EINVAL);
	/* Refused: a bad or short escape, an escaped NUL, no separator, a
	 * missing field, two spaces, a trailing field, a relative path,
	 * numbers out of range or not numbers. */
	CHECK_INT(parse("7 1 0:52 / /a\\999 rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1 0:52 / /a\\04 rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1 0:52 / /a\\000b rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1 0:52 / /a rw shared:1 ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1 0:52 / /a rw - ext4 s", m), EINVAL);
	CHECK_INT(parse("7 1 0:52 /  /a rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1 0:52 / /a rw - ext4 s rw extra", m), EINVAL);
	CHECK_INT(parse("7 1 0:52 / a rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1 0:52 a /a rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1 4096:0 / /a rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1 0:1048576 / /a rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("x 1 0:5 / /a rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("-7 1 0:5 / /a rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1 05 / /a rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("", m), EINVAL);
	/* The kernel's largest major (12 bits) and minor (20 bits): taken,
	 * as a node with many mounts has anonymous minors past 255. */
	CHECK_INT(parse("7 1 4095:1048575 / /a rw - ext4 s rw", m), 0);
	CHECK(m->major == 4095 && m->minor == 1048575);
	CHECK_INT(parse("7 1 0:256 / /a rw - ext4 s rw", m), 0);
	CHECK(m->major == 0 && m->minor == 256);
	/* Two spaces where no other check would notice the empty field (an
	 * optional field), and numbers with something after their digits. */
	CHECK_INT(parse("7 1 0:52 / /a rw  - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7x 1 0:52 / /a rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1x 0:52 / /a rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1 0x:52 / /a rw - ext4 s rw", m), EINVAL);
	CHECK_INT(parse("7 1 0:52x / /a rw - ext4 s rw", m), EINVAL);
	/* A field fits its buffer with its terminator: the file system type
	 * (64 bytes) takes 63 characters, not 64. */
	{
		char line[256], type[65];

		memset(type, 'e', 64);
		type[63] = '\0';
		snprintf(line, sizeof(line), "7 1 0:52 / /a rw - %s s rw",
			 type);
		CHECK_INT(parse(line, m), 0);
		CHECK_STR(m->fstype, type);
		type[63] = 'e';
		type[64] = '\0';
		snprintf(line, sizeof(line), "7 1 0:52 / /a rw - %s s rw",
			 type);
		CHECK_INT(parse(line, m), EINVAL);
	}
	CHECK_INT(parse("7 1 0:5 / /a rw a b c d e f g h i j k l m n o p q - "
			"ext4 s rw",
			m),
		  EINVAL); /* more optional fields than any kernel writes */
	/* A line longer than a path may be: refused, nothing overrun. */
	big = malloc(3 * PATH_MAX);
	CHECK(big != NULL);
	if (big) {
		strcpy(big, "7 1 0:5 / /");
		for (i = strlen(big); i < 2 * PATH_MAX; i++)
			big[i] = 'a';
		strcpy(big + i, " rw - ext4 s rw");
		CHECK_INT(parse(big, m), EINVAL);
		free(big);
	}
	/* Options. */
	CHECK_INT(gdr_mount_option("rw,proto=rdma,addr=10.0.0.1", "proto", v,
				   sizeof(v)),
		  0);
	CHECK_STR(v, "rdma");
	CHECK_INT(gdr_mount_option("rw,proto=rdma,addr=10.0.0.1", "addr", v,
				   sizeof(v)),
		  0);
	CHECK_STR(v, "10.0.0.1");
	CHECK_INT(gdr_mount_option("ro,x", "ro", v, sizeof(v)), 0);
	CHECK_STR(v, "");
	CHECK_INT(gdr_mount_option("rw,proton=1", "proto", v, sizeof(v)),
		  ENOENT);
	CHECK_INT(gdr_mount_option("rw,rox", "ro", v, sizeof(v)), ENOENT);
	CHECK_INT(gdr_mount_option("a=0123456789", "a", v, 4), ENOBUFS);
	/* A value fits with its terminator: "rdma" in 5 bytes, not in 4. */
	CHECK_INT(gdr_mount_option("rw,proto=rdma", "proto", v, 5), 0);
	CHECK_STR(v, "rdma");
	CHECK_INT(gdr_mount_option("rw,proto=rdma", "proto", v, 4), ENOBUFS);
	/* Paths under a mount point, name by name. */
	CHECK(gdr_path_under("/mnt/a/b", "/mnt/a"));
	CHECK(gdr_path_under("/mnt/a", "/mnt/a"));
	CHECK(!gdr_path_under("/mnt/ab", "/mnt/a"));
	CHECK(gdr_path_under("/anything", "/"));
	free(m);
	return check_summary("mountinfo");
}
