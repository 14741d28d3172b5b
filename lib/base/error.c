/* SPDX-License-Identifier: MIT */
/* The thread's last error, debug lines, and errno/CUDA code names. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base.h"

static __thread char last_error[GDR_MSG_LEN];
int gdr_debug_on;

GDR_PUBLIC const char *gdr_last_error(void)
{
	return last_error;
}

void gdr_clear_error(void)
{
	last_error[0] = '\0';
}

void gdr_vfmt(char *buf, size_t n, const char *fmt, va_list ap)
{
	int r;

	if (!n)
		return;
	r = vsnprintf(buf, n, fmt, ap);
	if (r < 0) {
		buf[0] = '\0';
	} else if ((size_t)r >= n && n > 4) {
		/* Cut: say so ("..." at the end, on a character's start),
		 * never a silent end that reads as the whole. */
		size_t at = n - 4;

		while (at && ((unsigned char)buf[at] & 0xc0) == 0x80)
			at--;
		memcpy(buf + at, "...", 4);
	}
}

void gdr_fmt(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gdr_vfmt(buf, n, fmt, ap);
	va_end(ap);
}

void gdr_copy(char *buf, size_t n, const char *src)
{
	size_t k;

	if (!n)
		return;
	k = strnlen(src, n - 1);
	memmove(buf, src, k);
	buf[k] = '\0';
}

void gdr_append(char *buf, size_t n, const char *fmt, ...)
{
	size_t used = strnlen(buf, n);
	va_list ap;

	if (used + 1 >= n)
		return;
	va_start(ap, fmt);
	gdr_vfmt(buf + used, n - used, fmt, ap);
	va_end(ap);
}

void *gdr_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gdr_vfmt(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	gdr_debug("error: %s", last_error);
	errno = gdr_errno_public(err);
	return NULL;
}

void gdr_debug_line(const char *fmt, ...)
{
	char line[GDR_MSG_LEN + 64];
	va_list ap;

	va_start(ap, fmt);
	gdr_vfmt(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write, so that lines of concurrent threads do not interleave. */
	fprintf(stderr, "gpudirect: %s\n", line);
}

int gdr_cu_errno(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS: return 0;
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_INVALID_CONTEXT:
	case CUDA_ERROR_INVALID_DEVICE: return EINVAL;
	case CUDA_ERROR_OUT_OF_MEMORY: return ENOMEM;
	case CUDA_ERROR_NOT_SUPPORTED: return EOPNOTSUPP;
	case CUDA_ERROR_NO_DEVICE: return ENODEV;
	case CUDA_ERROR_NOT_PERMITTED: return EPERM;
	default: return EIO;
	}
}

/* Every other errno by its C library name; a number without one as
 * "errno 1234". */
static const char *other_errno_name(int err)
{
	static __thread char buf[24];
	const char *name = NULL;

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
	name = strerrorname_np(err);
#endif
	if (name)
		return name;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

const char *gdr_errno_name(int err)
{
	switch (err) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EIO: return "EIO";
	case EBADF: return "EBADF";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case EMFILE: return "EMFILE";
	case ENOSYS: return "ENOSYS";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case GDR_ENOTSUPP: return "ENOTSUPP(524)";
	case GDR_ENOTREG: return "not a regular file";
	default: break;
	}
	return other_errno_name(err);
}

bool gdr_err_is_unsupported(int err)
{
	return err == EOPNOTSUPP || err == EPROTONOSUPPORT ||
	       err == GDR_ENOTSUPP;
}

int gdr_errno_public(int err)
{
	return err == GDR_ENOTSUPP ? EOPNOTSUPP : err;
}

const char *gdr_errno_words(int err, char *buf, size_t n)
{
	if (err == GDR_ENOTSUPP)
		gdr_fmt(buf, n,
			"524 (the kernel's internal ENOTSUPP, "
			"reported as EOPNOTSUPP)");
	else
		gdr_fmt(buf, n, "%s (%s)", gdr_errno_name(err), strerror(err));
	return buf;
}

/* EBUSY: something still holds the MR, memory windows bound to it
 * (ibv_dereg_mr(3)) or another verbs call on the same MR at this moment
 * (the kernel locks the object for a destroy and gives up rather than
 * wait). Anything else is the device's or the driver's trouble. */
const char *gdr_dereg_remedy(int err)
{
	return err == EBUSY ? "something still holds it: destroy the memory "
			      "windows bound to it, let another thread's "
			      "call on it finish, then call again"
			    : "see the kernel log for the device's state "
			      "(closing its context releases every MR on it)";
}

const char gdr_msg_pd_null[] =
	"pd is NULL; pass a protection domain from ibv_alloc_pd()";
