/* SPDX-License-Identifier: MIT */
/* mgc_escape.h: text that comes from outside (a traced program's command line, process and thread
 * names, labels, notices, symbol names and paths) made safe to show, in one place for every
 * output: in text, a terminal must never take any of it as a command; in JSON, it must be valid
 * UTF-8. Never aborts, whatever the bytes. */
#ifndef MGC_ESCAPE_H
#define MGC_ESCAPE_H

#include <stddef.h>

/* The longest an escaped copy of n bytes can be (each byte may become "\xHH"), with its NUL. */
#define MGC_ESCAPED_MAX(n) (4 * (size_t)(n) + 1)

/* Copies n bytes of s into out (cap bytes, always NUL-terminated; cap 0 writes nothing) with every
 * byte a terminal could act on written as text "\xHH": the C0 controls (newline and tab too:
 * inside a field they would forge lines), DEL, the C1 controls U+0080..U+009F (both bytes:
 * "\xc2\x9b") and every byte that is not part of valid UTF-8. Valid UTF-8 text, backslashes
 * included, is copied as it is. A copy that does not fit is cut before a whole character or
 * escape. Returns out.
 *   mgc_escape(buf, sizeof buf, "\x1b]0;x\x07", 7)  ->  "\x1b]0;x\x07" as 16 printable bytes */
char *mgc_escape(char *out, size_t cap, const char *s, size_t n);

/* mgc_escape of a NUL-terminated string into buf, for a printf argument; NULL when s is NULL. */
const char *mgc_esc(char *buf, size_t cap, const char *s);

/* mgc_escape of a NUL-terminated string into a new allocation; NULL when out of memory. */
char *mgc_escape_dup(const char *s);

/* Returns a copy of a printed JSON document (cJSON's output: valid JSON whose strings may hold
 * any bytes) that is valid UTF-8 and shows no terminal control: every byte that is not part of
 * valid UTF-8 becomes U+FFFD, and every C1 control U+0080..U+009F the escape "\u0080".."\u009f"
 * (both can only occur inside strings, so the document keeps its meaning). C0 controls are
 * cJSON's to escape. NULL when out of memory. */
char *mgc_json_clean(const char *json);

#endif /* MGC_ESCAPE_H */
