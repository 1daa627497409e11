// SPDX-License-Identifier: MIT
// prog_unwind.cpp: stacks for the check of the probe's own unwinder against libunwind
// (test_unwind.py): deep recursion, C++ exceptions thrown through frames that allocate, a frame
// realigned for a 64-byte local, alloca, a signal handler that allocates on the thread's stack
// and on an alternate stack, a coroutine (swapcontext) on its own stack, threads, one callee
// called in turn by two callers with the same frame (the same return address at the same stack
// pointer, under different callers: what the unwinder's kept last stack must never mistake for
// the last stack), and two callees called in turn from one call site. Built twice, with frame
// pointers and with -fomit-frame-pointer -O2. Prints "done N" (N: a checksum
// of the main thread's work, the same on every run, so plain and probed runs compare).
#include <alloca.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <stdexcept>
#include <string>
#include <vector>

static __thread volatile long sink; // per thread: the printed sum is main's

__attribute__((noinline)) static void *deep(int n)
{
	if (n == 0)
		return malloc(64 + (size_t)(sink & 7));
	void *p = deep(n - 1);
	sink = sink + n; // no tail call
	return p;
}

static void deep_stacks(void)
{
	for (int d = 0; d < 120; d++)
		free(deep(d));
}

__attribute__((noinline)) static void thrower(int n)
{
	std::vector<int> v((size_t)n + 1, n);
	if (n == 0)
		throw std::runtime_error(std::string(100, 'x'));
	thrower(n - 1);
	sink = sink + v[0];
}

static void exceptions(void)
{
	for (int i = 0; i < 40; i++) {
		try {
			thrower(i % 20);
		} catch (const std::exception &e) {
			std::string s(e.what());
			sink = sink + (long)s.size();
		}
	}
}

__attribute__((noinline)) static void fill(char *buf, int n)
{
	memset(buf, n, 256);
	sink = sink + buf[n & 255];
}

__attribute__((noinline)) static void aligned_frame(int n)
{
	alignas(64) char buf[256];
	fill(buf, n);
	char *p = (char *)malloc((size_t)(unsigned char)buf[n & 255] + 10);
	p[0] = 1;
	sink = sink + p[0];
	free(p);
}

__attribute__((noinline)) static void alloca_frame(int n)
{
	char *a = (char *)alloca((size_t)n + 16);
	memset(a, 1, (size_t)n + 16);
	void *p = malloc((size_t)n + (size_t)a[n]);
	sink = sink + (long)(p != NULL);
	free(p);
}

static void on_usr1(int sig)
{
	void *p = malloc(100);
	sink = sink + sig;
	free(p);
}

static void signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < 10; i++)
		raise(SIGUSR1);
	stack_t ss;
	memset(&ss, 0, sizeof ss);
	ss.ss_size = 256 << 10;
	ss.ss_sp = malloc(ss.ss_size);
	sigaltstack(&ss, NULL);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < 10; i++)
		raise(SIGUSR1);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	free(ss.ss_sp);
}

static ucontext_t main_uc, co_uc;

static void co_body(void)
{
	for (int i = 0; i < 5; i++)
		free(deep(3));
}

// 5 allocations on a stack that is not the thread's (a coroutine's, in .bss).
static void coroutine(void)
{
	static char stack[256 << 10];
	getcontext(&co_uc);
	co_uc.uc_stack.ss_sp = stack;
	co_uc.uc_stack.ss_size = sizeof stack;
	co_uc.uc_link = &main_uc;
	makecontext(&co_uc, co_body, 0);
	swapcontext(&main_uc, &co_uc);
}

// 700 allocations of 4099 bytes under same_caller_a and 300 under same_caller_b, in turn: each
// stack the same as the last up to same_callee's caller.
__attribute__((noinline)) static void same_callee(int k)
{
	free(malloc(4099));
	sink = sink + k; // no tail call
}

__attribute__((noinline)) static void same_caller_a(void)
{
	same_callee(1);
	sink = sink + 3;
}

__attribute__((noinline)) static void same_caller_b(void)
{
	same_callee(1);
	sink = sink + 5;
}

static void same_place(void)
{
	for (int i = 0; i < 700; i++) {
		same_caller_a();
		if (i < 300)
			same_caller_b();
	}
}

// 400 allocations of 4101 bytes under diff_callee_big and 600 under diff_callee_small, called in
// turn through one pointer from one call site: the frames from that call site out are the same, at
// the same place, as the last stack's, and so are how many frames lie below them; only the
// callee's own return address differs (the thread's last stack must not be taken as the same).
__attribute__((noinline)) static void diff_callee_small(void)
{
	free(malloc(4101));
	sink = sink + 1;
}

__attribute__((noinline)) static void diff_callee_big(void)
{
	volatile char pad[512];
	pad[0] = (char)sink;
	pad[511] = pad[0];
	free(malloc(4101));
	sink = sink + pad[511];
}

static void (*volatile diff_pick)(void);

__attribute__((noinline)) static void diff_place(void)
{
	for (int i = 0; i < 1000; i++) {
		diff_pick = i % 5 < 2 ? diff_callee_big : diff_callee_small;
		diff_pick();
		sink = sink + 7;
	}
}

static void everything(void)
{
	deep_stacks();
	exceptions();
	for (int i = 0; i < 20; i++) {
		aligned_frame(i);
		alloca_frame(i * 8);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	everything();
	return NULL;
}

int main(void)
{
	everything();
	same_place();
	diff_place();
	signals();
	coroutine();
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("done %ld\n", (long)sink);
	return 0;
}
