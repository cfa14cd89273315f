/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vt: the guest suite's tiny test framework.  A guest test program runs
 * cases with VT_RUN(); each case prints exactly one line:
 *
 *   ok - <program>/<case>
 *   not ok - <program>/<case>: <file>:<line>: <what failed>
 *   skip - <program>/<case>: <why>
 *
 * and the VM harness counts those lines.  A check that fails ends the
 * case (longjmp), so later checks never run on a broken state.
 */
#ifndef VT_H
#define VT_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vt {
	const char *prog;
	const char *name;
	jmp_buf fail_jmp;
	int skipped;
	int passed, failed, skips;
};

static inline void __attribute__((format(printf, 4, 5)))
vt_fail(struct vt *t, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("not ok - %s/%s: %s:%d: ", t->prog, t->name, file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	longjmp(t->fail_jmp, 1);
}

static inline void __attribute__((format(printf, 2, 3)))
vt_skip(struct vt *t, const char *fmt, ...)
{
	va_list ap;

	printf("skip - %s/%s: ", t->prog, t->name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	t->skipped = 1;
	longjmp(t->fail_jmp, 2);
}

/* Fail the case unless cond holds; then print the format that follows. */
#define VT_CHECK(t, cond, ...) do {					\
	if (!(cond))							\
		vt_fail((t), __FILE__, __LINE__,			\
			"check '" #cond "' failed: " __VA_ARGS__);	\
} while (0)

/* Fail the case unless cond holds, with a message of the caller's own:
 * VT_CHECKF(t, cond, fmt, ...). */
#define VT_CHECKF(t, cond, ...) do {					\
	if (!(cond))							\
		vt_fail((t), __FILE__, __LINE__, __VA_ARGS__);		\
} while (0)

/* Fail unless expr (a syscall-like call) returned >= 0; returns it. */
#define VT_OK(t, expr) ({						\
	long __r = (long)(expr);					\
	if (__r < 0)							\
		vt_fail((t), __FILE__, __LINE__, "%s: %s", #expr,	\
			strerror(errno));				\
	__r; })

/* Fail unless expr returned -1 with errno == err. */
#define VT_ERRNO(t, expr, err) do {					\
	errno = 0;							\
	long __r = (long)(expr);					\
	if (__r != -1 || errno != (err))				\
		vt_fail((t), __FILE__, __LINE__,			\
			"%s: want -1/%s, got %ld/%s", #expr,		\
			strerror(err), __r, strerror(errno));		\
} while (0)

/* Run one case: fn(t, arg). */
#define VT_RUN(t, fn, arg) do {						\
	(t)->name = #fn;						\
	(t)->skipped = 0;						\
	int __j = setjmp((t)->fail_jmp);				\
	if (__j == 0) {							\
		fn((t), (arg));						\
		printf("ok - %s/%s\n", (t)->prog, (t)->name);		\
		fflush(stdout);						\
		(t)->passed++;						\
	} else if (__j == 1) {						\
		(t)->failed++;						\
	} else {							\
		(t)->skips++;						\
	}								\
} while (0)

/*
 * VT_RUN(t, fn, arg), then close every fd above stderr: a failed check
 * may leave fds open, and the next case must start from the state /init
 * gave.  Needs close_range() (<unistd.h> with _GNU_SOURCE).
 */
#define VT_RUN_CLOSE_ARG(t, fn, arg) do {				\
	VT_RUN(t, fn, arg);						\
	close_range(3, ~0U, 0);						\
} while (0)

#define VT_RUN_CLOSE(t, fn) VT_RUN_CLOSE_ARG(t, fn, NULL)

/* Exit status of a test program: nonzero when any case failed. */
static inline int vt_done(struct vt *t)
{
	fflush(stdout);
	return t->failed ? 1 : 0;
}

#endif /* VT_H */
