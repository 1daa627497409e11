/* SPDX-License-Identifier: MIT */
/* mgc_input.h: how the readers open what they are given to read (traces, CSV series). A path must
 * name a regular file: anything else (a FIFO, a device, a socket) is refused at once, since opening
 * a FIFO waits for a writer that may never come and a device may never end. "-" is standard input,
 * read as a stream (a pipe, a FIFO or a redirected file), unless it is a terminal. Never blocks in
 * open, never aborts. */
#ifndef MGC_INPUT_H
#define MGC_INPUT_H

#include <stdio.h>

/* Opens path ("-": standard input) for reading into *out (fclose it; for "-" that closes only a
 * duplicate of descriptor 0). 0, or -errno with a one-line reason that names the path in err:
 * -ENOENT/-EACCES (cannot open), -EINVAL (not a regular file, or a terminal on stdin). */
int mgc_input_open(const char *path, FILE **out, char *err, size_t errlen);

#endif /* MGC_INPUT_H */
