/* SPDX-License-Identifier: MIT */
/* mgm_nvml.h: GPU memory of one process through NVML, loaded with dlopen(libnvidia-ml.so.1) at
 * run time so mgmon neither links nor needs the driver. Absent driver or any NVML error: the
 * figure is simply unavailable; nothing here may abort. */
#ifndef MGM_NVML_H
#define MGM_NVML_H

#include <stdint.h>

struct mgm_nvml;

/* NULL when there is no usable NVML (no driver, no GPU); never an error. */
struct mgm_nvml *mgm_nvml_open(void);

/* Bytes of GPU memory used by pid summed over all GPUs: 0 and *found = 1 when the process is
 * seen, *found = 0 when no GPU lists it. */
uint64_t mgm_nvml_process_bytes(struct mgm_nvml *n, int pid, int *found);

void mgm_nvml_close(struct mgm_nvml *n);

#endif /* MGM_NVML_H */
