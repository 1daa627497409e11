/* SPDX-License-Identifier: MIT */
/* prog_interpose.c: calls every interposed function, edge cases included, one named function per
 * case, and prints what it observed (results, errno, alignment, contents; never an address). The
 * driver runs it with and without the probe: the output must be byte for byte the same, and the
 * trace must hold exactly the blocks and mappings each function kept. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *keep[64]; /* not static: the stores, and so the allocations, must stay */
static int nkeep;
static long page;

static void kept(void *p)
{
	if (p)
		keep[nkeep++] = p;
}

/* The same pointer, hidden from the compiler's use-after-realloc analysis: after a failed realloc
 * the old block is still the caller's. */
static char *same(char *p)
{
	__asm__("" : "+r"(p));
	return p;
}

static const char *res(const void *p)
{
	return p ? "ptr" : "NULL";
}

static int aligned(const void *p, size_t a)
{
	return ((uintptr_t)p % a) == 0;
}

/* A size the compiler cannot see through, so it keeps every call as written. */
static volatile size_t huge_v = SIZE_MAX;

NOINLINE static void do_malloc(void)
{
	errno = 0;
	char *p = malloc(123);
	memset(p, 7, 123);
	printf("malloc(123): %s errno=%d\n", res(p), errno);
	kept(p);
	errno = 0;
	void *z = malloc(0);
	printf("malloc(0): %s errno=%d\n", res(z), errno);
	kept(z);
	errno = 0;
	void *h = malloc(huge_v);
	printf("malloc(SIZE_MAX): %s errno=%d\n", res(h), errno);
	free(NULL);
	printf("free(NULL): ok\n");
}

NOINLINE static void do_calloc(void)
{
	errno = 0;
	unsigned char *p = calloc(3, 40);
	int zero = 1;
	for (int i = 0; i < 120; i++)
		zero &= p[i] == 0;
	printf("calloc(3, 40): %s zeroed=%d errno=%d\n", res(p), zero, errno);
	kept(p);
	errno = 0;
	void *o = calloc(huge_v / 2, 4);
	printf("calloc overflow: %s errno=%d\n", res(o), errno);
	errno = 0;
	void *o2 = calloc(4, huge_v / 2);
	printf("calloc overflow (swapped): %s errno=%d\n", res(o2), errno);
}

NOINLINE static void do_realloc(void)
{
	errno = 0;
	char *p = realloc(NULL, 77); /* like malloc */
	printf("realloc(NULL, 77): %s errno=%d\n", res(p), errno);
	memset(p, 'a', 77);
	errno = 0;
	char *old = same(p);
	char *q = realloc(p, huge_v); /* fails: p is untouched and still owned */
	printf("realloc(p, SIZE_MAX): %s errno=%d first=%c last=%c\n", res(q), errno, old[0], old[76]);
	errno = 0;
	char *r = realloc(old, 5000); /* grows: contents kept */
	printf("realloc(p, 5000): %s errno=%d first=%c last=%c\n", res(r), errno, r[0], r[76]);
	kept(r);
}

NOINLINE static void do_realloc_zero(void)
{
	void *p = malloc(50);
	errno = 0;
	void *q = realloc(p, 0); /* glibc: frees p, returns NULL */
	printf("realloc(p, 0): %s errno=%d\n", res(q), errno);
	kept(q);
}

NOINLINE static void do_reallocarray(void)
{
	errno = 0;
	char *p = reallocarray(NULL, 10, 8);
	printf("reallocarray(NULL, 10, 8): %s errno=%d\n", res(p), errno);
	memset(p, 'r', 80);
	errno = 0;
	char *old = same(p);
	char *q = reallocarray(p, huge_v, 2);
	printf("reallocarray overflow: %s errno=%d intact=%c\n", res(q), errno, old[79]);
	errno = 0;
	char *r = reallocarray(old, 20, 8);
	printf("reallocarray(p, 20, 8): %s errno=%d kept=%c\n", res(r), errno, r[79]);
	kept(r);
}

NOINLINE static void do_posix_memalign(void)
{
	void *p = (void *)1;
	errno = 1234;
	int r = posix_memalign(&p, 3, 16);
	printf("posix_memalign(3, 16): ret=%d errno=%d out_unchanged=%d\n", r, errno, p == (void *)1);
	errno = 1234;
	r = posix_memalign(&p, sizeof(void *) / 2, 16);
	printf("posix_memalign(%zu, 16): ret=%d errno=%d\n", sizeof(void *) / 2, r, errno);
	errno = 1234;
	r = posix_memalign(&p, 64, 100);
	printf("posix_memalign(64, 100): ret=%d errno=%d aligned=%d\n", r, errno, aligned(p, 64));
	kept(p);
	void *h = (void *)1;
	errno = 1234;
	r = posix_memalign(&h, 64, huge_v - 100);
	printf("posix_memalign(64, huge): ret=%d errno=%d out_unchanged=%d\n", r, errno,
	       h == (void *)1);
}

NOINLINE static void do_aligned_alloc(void)
{
	errno = 0;
	void *p = aligned_alloc(64, 256);
	printf("aligned_alloc(64, 256): %s errno=%d aligned=%d\n", res(p), errno, aligned(p, 64));
	kept(p);
	errno = 0;
	void *odd = aligned_alloc(3, 16); /* not a power of two: glibc-version dependent */
	printf("aligned_alloc(3, 16): %s errno=%d\n", res(odd), errno);
	free(odd);
	errno = 0;
	void *h = aligned_alloc(64, huge_v - 100);
	printf("aligned_alloc(64, huge): %s errno=%d\n", res(h), errno);
}

NOINLINE static void do_memalign(void)
{
	errno = 0;
	void *p = memalign(128, 200);
	printf("memalign(128, 200): %s errno=%d aligned=%d\n", res(p), errno, aligned(p, 128));
	kept(p);
	errno = 0;
	void *h = memalign(128, huge_v - 1000);
	printf("memalign(128, huge): %s errno=%d\n", res(h), errno);
}

NOINLINE static void do_valloc(void)
{
	errno = 0;
	void *p = valloc(300);
	printf("valloc(300): %s errno=%d page_aligned=%d\n", res(p), errno, aligned(p, (size_t)page));
	kept(p);
}

NOINLINE static void do_pvalloc(void)
{
	errno = 0;
	void *p = pvalloc(300);
	printf("pvalloc(300): %s errno=%d page_aligned=%d usable>=page=%d\n", res(p), errno,
	       aligned(p, (size_t)page), malloc_usable_size(p) >= (size_t)page);
	kept(p);
}

static void *anon(size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* 16 pages; the middle 4 unmapped (the range splits): 12 pages stay live in one mapping. */
NOINLINE static void do_mmap_split(void)
{
	errno = 0;
	char *p = mmap(NULL, 16 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("mmap(16 pages): %s errno=%d\n", p == MAP_FAILED ? "MAP_FAILED" : "ptr", errno);
	p[0] = p[16 * page - 1] = 1;
	errno = 0;
	int r = munmap(p + 4 * page, 4 * page);
	printf("munmap(middle 4 pages): ret=%d errno=%d ends=%d%d\n", r, errno, p[0],
	       p[16 * page - 1]);
}

/* 8 pages unmapped in three calls (middle, then each end): nothing left. */
NOINLINE static void do_mmap_pieces(void)
{
	char *p = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int a = munmap(p + 3 * page, 2 * page);
	int b = munmap(p, 3 * page);
	int c = munmap(p + 5 * page, 3 * page);
	printf("munmap 8 pages in 3 pieces: %d %d %d\n", a, b, c);
}

/* 5000 bytes: the kernel maps two pages. */
NOINLINE static void do_mmap_odd(void)
{
	char *p = mmap(NULL, 5000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("mmap(5000): %s\n", p == MAP_FAILED ? "MAP_FAILED" : "ptr");
	p[4999] = 1;
}

/* 4 pages grown to 8 with MREMAP_MAYMOVE: 8 pages live, born at the mremap. */
NOINLINE static void do_mremap(void)
{
	char *p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p[0] = 42;
	errno = 0;
	char *q = mremap(p, 4 * page, 8 * page, MREMAP_MAYMOVE);
	printf("mremap(4 -> 8 pages): %s errno=%d kept=%d\n", q == MAP_FAILED ? "MAP_FAILED" : "ptr",
	       errno, q[0]);
	q[8 * page - 1] = 1;
}

/* 8 pages, then 2 new anonymous pages MAP_FIXED over the middle: the old mapping loses 2 pages
 * (not a free), the new one is its own allocation. */
NOINLINE static void do_mmap_fixed(void)
{
	char *p = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *q = mmap(p + 3 * page, 2 * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	printf("mmap MAP_FIXED inside a mapping: %s\n", q == p + 3 * page ? "in place" : "moved");
}

/* Address space reserved with PROT_NONE (the CUDA driver reserves 100+ GiB so) is not memory: 64
 * pages reserved, then 3 of them committed with MAP_FIXED read-write: 3 pages counted. */
NOINLINE static void do_mmap_reserve(void)
{
	char *p = mmap(NULL, 64 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *q = mmap(p + 8 * page, 3 * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	printf("mmap PROT_NONE reserve, MAP_FIXED commit: %s\n", q == p + 8 * page ? "in place" : "moved");
}

NOINLINE static void do_mmap_errors(void)
{
	errno = 0;
	void *p = mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("mmap(len 0): %s errno=%d\n", p == MAP_FAILED ? "MAP_FAILED" : "ptr", errno);
	errno = 0;
	int r = munmap((char *)keep[0] + 1, 10); /* not page aligned */
	printf("munmap(unaligned): ret=%d errno=%d\n", r, errno);
	errno = 0;
	void *q = mremap(NULL, page, 2 * page, 0);
	printf("mremap(NULL): %s errno=%d\n", q == MAP_FAILED ? "MAP_FAILED" : "ptr", errno);
	errno = 0;
	void *s = anon(0);
	printf("anon(0): %s errno=%d\n", s == MAP_FAILED ? "MAP_FAILED" : "ptr", errno);
}

/* File mappings and shared anonymous mappings are not allocations: never counted. */
NOINLINE static void do_file_mmap(const char *self)
{
	int fd = open(self, O_RDONLY | O_CLOEXEC);
	char *p = mmap(NULL, 3 * page, PROT_READ, MAP_PRIVATE, fd, 0);
	printf("file mmap: %s elf=%d\n", p == MAP_FAILED ? "MAP_FAILED" : "ptr",
	       p != MAP_FAILED && memcmp(p, "\177ELF", 4) == 0);
	close(fd);
	char *s = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s[0] = 1;
	printf("shared anonymous mmap: %s\n", s == MAP_FAILED ? "MAP_FAILED" : "ptr");
}

int main(int argc, char **argv)
{
	(void)argc;
	page = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	do_malloc();
	do_calloc();
	do_realloc();
	do_realloc_zero();
	do_reallocarray();
	do_posix_memalign();
	do_aligned_alloc();
	do_memalign();
	do_valloc();
	do_pvalloc();
	do_mmap_split();
	do_mmap_pieces();
	do_mmap_odd();
	do_mremap();
	do_mmap_fixed();
	do_mmap_reserve();
	do_mmap_errors();
	do_file_mmap(argv[0]);
	printf("kept %d blocks\n", nkeep);
	return 0;
}
