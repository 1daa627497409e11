/* SPDX-License-Identifier: MIT */
/* mgp_state.c: the storage of mgp_state.h's recording state and recursion guard; the functions are
 * inline there. Must hold nothing else. */
#include "mgp_state.h"

int mgp_state_value = MGP_OFF;
__thread unsigned mgp_guard_depth __attribute__((tls_model("initial-exec")));
