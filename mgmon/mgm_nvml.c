/* SPDX-License-Identifier: MIT */
/* mgm_nvml.c: the few NVML calls mgmon needs, resolved with dlsym from libnvidia-ml.so.1 so the
 * binary runs on machines without a GPU driver. Must never abort or report a wrong figure: on any
 * NVML error the process is reported as "not seen". */
#include "mgm_nvml.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_ret; /* NVML_SUCCESS = 0, NVML_ERROR_INSUFFICIENT_SIZE = 7 */
typedef void *nvml_device;

/* nvmlProcessInfo_v2_t (also what the _v3 call fills) and the older v1 layout. */
struct proc_v2 {
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
};
struct proc_v1 {
	unsigned int pid;
	unsigned long long used;
};

struct mgm_nvml {
	void *lib;
	nvml_ret (*shutdown)(void);
	nvml_ret (*count)(unsigned int *);
	nvml_ret (*handle)(unsigned int, nvml_device *);
	nvml_ret (*procs_v2)(nvml_device, unsigned int *, struct proc_v2 *); /* _v3 or _v2 */
	nvml_ret (*procs_v1)(nvml_device, unsigned int *, struct proc_v1 *);
};

struct mgm_nvml *mgm_nvml_open(void)
{
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return NULL;
	struct mgm_nvml *n = calloc(1, sizeof *n);
	if (!n) {
		dlclose(lib);
		return NULL;
	}
	n->lib = lib;
	nvml_ret (*init)(void) = (nvml_ret(*)(void))dlsym(lib, "nvmlInit_v2");
	n->shutdown = (nvml_ret(*)(void))dlsym(lib, "nvmlShutdown");
	*(void **)&n->count = dlsym(lib, "nvmlDeviceGetCount_v2");
	*(void **)&n->handle = dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&n->procs_v2 = dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!n->procs_v2)
		*(void **)&n->procs_v2 = dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v2");
	if (!n->procs_v2)
		*(void **)&n->procs_v1 = dlsym(lib, "nvmlDeviceGetComputeRunningProcesses");
	if (!init || !n->count || !n->handle || (!n->procs_v2 && !n->procs_v1) || init() != 0) {
		dlclose(lib);
		free(n);
		return NULL;
	}
	return n;
}

uint64_t mgm_nvml_process_bytes(struct mgm_nvml *n, int pid, int *found)
{
	uint64_t total = 0;
	unsigned int ndev = 0;
	*found = 0;
	if (!n || n->count(&ndev) != 0)
		return 0;
	for (unsigned int d = 0; d < ndev && d < 64; d++) {
		nvml_device dev;
		if (n->handle(d, &dev) != 0)
			continue;
		if (n->procs_v2) {
			struct proc_v2 p[256];
			unsigned int cnt = 256;
			if (n->procs_v2(dev, &cnt, p) != 0)
				continue;
			for (unsigned int i = 0; i < cnt && i < 256; i++)
				if ((int)p[i].pid == pid) {
					*found = 1;
					/* NVML_VALUE_NOT_AVAILABLE is all ones: no figure, but seen */
					if (p[i].used != ~0ull)
						total += p[i].used;
				}
		} else {
			struct proc_v1 p[256];
			unsigned int cnt = 256;
			if (n->procs_v1(dev, &cnt, p) != 0)
				continue;
			for (unsigned int i = 0; i < cnt && i < 256; i++)
				if ((int)p[i].pid == pid) {
					*found = 1;
					if (p[i].used != ~0ull)
						total += p[i].used;
				}
		}
	}
	return total;
}

void mgm_nvml_close(struct mgm_nvml *n)
{
	if (!n)
		return;
	if (n->shutdown)
		n->shutdown();
	dlclose(n->lib);
	free(n);
}
