/* SPDX-License-Identifier: MIT */
/* mgp_fork.h: processes this one makes (fork, posix_spawn, noted in the trace and the live
 * segment) and becomes (the exec family: the trace ends with a final snapshot first). A forked
 * child gets its own trace and segment (mgp_life_forked). The hooks here are in mgp_fork.c; they
 * must never change what the real calls return, and write only through the writer lock. */
#ifndef MGP_FORK_H
#define MGP_FORK_H

/* Registers the fork handlers. Call once, at start-up, after the tables exist. */
void mgp_fork_init(void);

#endif /* MGP_FORK_H */
