/* SPDX-License-Identifier: MIT */
/* placeholder until the module lands */
int mgc_classify_placeholder_(void);
int mgc_classify_placeholder_(void) { return 0; }
