/* SPDX-License-Identifier: MIT */
/* gpu_alloc.c: the GPU suite's CUDA program: known CUDA allocations from named functions
 * (cudaMalloc/cudaFree loop, cudaMallocAsync/FreeAsync, cudaMallocHost, cudaMallocManaged, one VMM
 * reserve/create/map/unmap/release sequence, then a fork whose child only touches host memory) for
 * test_gpu.py to find under the probe. It loads
 * CUDA with dlopen so it builds and starts anywhere, and exits 77 (skipped) when there is no GPU. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#define SKIP 77
#define NOINLINE __attribute__((noinline))

static struct {
	CUresult (*cuInit)(unsigned);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuMemGetAllocationGranularity)(size_t *, const CUmemAllocationProp *,
						  CUmemAllocationGranularity_flags);
	CUresult (*cuMemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
	CUresult (*cuMemAddressFree)(CUdeviceptr, size_t);
	CUresult (*cuMemCreate)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
				unsigned long long);
	CUresult (*cuMemRelease)(CUmemGenericAllocationHandle);
	CUresult (*cuMemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
	CUresult (*cuMemUnmap)(CUdeviceptr, size_t);
	int (*cudaMalloc)(void **, size_t);
	int (*cudaFree)(void *);
	int (*cudaMallocAsync)(void **, size_t, void *);
	int (*cudaFreeAsync)(void *, void *);
	int (*cudaStreamSynchronize)(void *);
	int (*cudaMallocHost)(void **, size_t);
	int (*cudaMallocManaged)(void **, size_t, unsigned);
	int (*cudaDeviceSynchronize)(void);
} F;

static int failed;

static void ok(const char *what, int r)
{
	if (r != 0) {
		fprintf(stderr, "gpu_alloc: %s failed (%d)\n", what, r);
		failed = 1;
	}
}

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);
	if (!p) {
		fprintf(stderr, "gpu_alloc: %s missing\n", name);
		exit(SKIP);
	}
	return p;
}

/* 10 x 1 MiB, 7 freed: 3 MiB live. */
static NOINLINE void do_malloc_loop(void)
{
	void *p[10];
	for (int i = 0; i < 10; i++)
		ok("cudaMalloc", F.cudaMalloc(&p[i], 1u << 20));
	for (int i = 0; i < 7; i++)
		ok("cudaFree", F.cudaFree(p[i]));
}

/* 4 x 256 KiB, all freed. */
static NOINLINE void do_async(void)
{
	void *p[4];
	for (int i = 0; i < 4; i++)
		ok("cudaMallocAsync", F.cudaMallocAsync(&p[i], 256u << 10, NULL));
	for (int i = 0; i < 4; i++)
		ok("cudaFreeAsync", F.cudaFreeAsync(p[i], NULL));
	ok("cudaStreamSynchronize", F.cudaStreamSynchronize(NULL));
}

/* 1 MiB pinned, kept. */
static NOINLINE void do_host(void)
{
	void *p;
	ok("cudaMallocHost", F.cudaMallocHost(&p, 1u << 20));
}

/* 2 MiB managed, kept. */
static NOINLINE void do_managed(void)
{
	void *p;
	ok("cudaMallocManaged", F.cudaMallocManaged(&p, 2u << 20, 1 /* cudaMemAttachGlobal */));
}

/* Reserve 4 granules, create + map 2 handles, unmap + release one: 1 granule live. */
static NOINLINE void do_vmm(size_t *granule)
{
	CUmemAllocationProp prop = {0};
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	size_t g = 0;
	ok("cuMemGetAllocationGranularity",
	   F.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	*granule = g;
	CUdeviceptr va = 0;
	ok("cuMemAddressReserve", F.cuMemAddressReserve(&va, 4 * g, 0, 0, 0));
	CUmemGenericAllocationHandle h[2];
	for (int i = 0; i < 2; i++) {
		ok("cuMemCreate", F.cuMemCreate(&h[i], g, &prop, 0));
		ok("cuMemMap", F.cuMemMap(va + i * g, g, 0, h[i], 0));
	}
	ok("cuMemUnmap", F.cuMemUnmap(va + g, g));
	ok("cuMemRelease", F.cuMemRelease(h[1]));
}

/* A child forked after CUDA started, as DataLoader workers are: host memory only, then _exit. */
static NOINLINE void do_fork(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char *volatile p = malloc(4096);
		p[0] = 1;
		free(p);
		_exit(0);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("gpu_alloc: the forked child failed\n");
		failed = 1;
	}
}

int main(void)
{
	void *cu = dlopen("libcuda.so.1", RTLD_NOW);
	if (!cu) {
		printf("gpu_alloc: no CUDA driver (libcuda.so.1): skipped\n");
		return SKIP;
	}
#define D(name) *(void **)&F.name = sym(cu, #name)
	D(cuInit);
	D(cuDeviceGetCount);
	int n = 0;
	if (F.cuInit(0) != CUDA_SUCCESS || F.cuDeviceGetCount(&n) != CUDA_SUCCESS || n < 1) {
		printf("gpu_alloc: cuInit failed or no device: skipped\n");
		return SKIP;
	}
	D(cuMemGetAllocationGranularity);
	D(cuMemAddressReserve);
	D(cuMemAddressFree);
	D(cuMemCreate);
	D(cuMemRelease);
	D(cuMemMap);
	D(cuMemUnmap);
#undef D
	void *rt = dlopen("libcudart.so.13", RTLD_NOW);
	if (!rt)
		rt = dlopen("libcudart.so", RTLD_NOW);
	if (!rt) {
		printf("gpu_alloc: no CUDA runtime (libcudart.so.13): skipped\n");
		return SKIP;
	}
#define R(name) *(void **)&F.name = sym(rt, #name)
	R(cudaMalloc);
	R(cudaFree);
	R(cudaMallocAsync);
	R(cudaFreeAsync);
	R(cudaStreamSynchronize);
	R(cudaMallocHost);
	R(cudaMallocManaged);
	R(cudaDeviceSynchronize);
#undef R
	size_t granule = 0;
	do_malloc_loop();
	do_async();
	do_host();
	do_managed();
	do_vmm(&granule);
	ok("cudaDeviceSynchronize", F.cudaDeviceSynchronize());
	do_fork();
	printf("granule %zu\n", granule);
	return failed;
}
