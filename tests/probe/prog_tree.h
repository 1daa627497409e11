/* SPDX-License-Identifier: MIT */
/* prog_tree.h: distinct stacks in numbers, for the test programs that need many: node(d) is a
 * binary tree of calls d deep whose 2^d paths are distinct stacks (two call sites per level), each
 * ending in leaf(), which the including program defines. No allocation of its own. */
#ifndef PROG_TREE_H
#define PROG_TREE_H

#define NOINLINE __attribute__((noinline))

NOINLINE static void leaf(void);

NOINLINE static void node(int d)
{
	if (d == 0) {
		leaf();
		return;
	}
	node(d - 1);
	__asm__ volatile("" ::: "memory"); /* two distinct return addresses, no tail call */
	node(d - 1);
	__asm__ volatile("" ::: "memory");
}

#endif /* PROG_TREE_H */
