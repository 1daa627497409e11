/* SPDX-License-Identifier: MIT */
/* mgp_spin.h: the probe's spin lock, for critical sections of a few dozen instructions that run
 * inside allocator hooks and CUPTI callbacks (a live-table shard, the CUDA tables), where a mutex
 * could sleep in the kernel. Portable: the CPU's pause hint where it has one, nothing elsewhere.
 * A holder must never call anything that can take the same lock (no hooked function). */
#ifndef MGP_SPIN_H
#define MGP_SPIN_H

#include <sched.h>

/* Tells the CPU that this thread spins: x86's pause, aarch64's yield, nothing elsewhere. */
static inline void mgp_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Spins with the pause hint for a while, then yields the CPU between tries, so a holder that was
 * preempted gets to run. *l is 0 (free) or 1 (held); zero-initialised storage is a free lock. */
static inline void mgp_spin_lock(int *l)
{
	unsigned spins = 0;
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
			if (++spins < 64)
				mgp_cpu_relax();
			else
				sched_yield();
		}
	}
}

static inline void mgp_spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

#endif /* MGP_SPIN_H */
