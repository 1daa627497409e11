#!/bin/bash
# SPDX-License-Identifier: MIT
# gpu_session.sh: everything issue 11 runs on a lent GPU machine, in one command of under ten
# minutes, from a build made here (the machine has no libunwind/libdw headers and no network):
#
#   here:   tests/cupti/gpu_session.sh --prepare     # build-gpu/ (-Dcupti=enabled -Dcuda=enabled)
#                                                     # and .gpulibs/ (the shared libraries it needs)
#   device: tests/cupti/gpu_session.sh --run         # with carry [build-gpu, .gpulibs]; $OUT set
#           (MG_GPU_SKIP_COST=1 leaves out the cost runs: cupti_facts and the timed pairs;
#           MG_GPU_SKIP_TORCH=1 the first PyTorch runs, healthy and --leak-device)
#   device: tests/cupti/gpu_session.sh --verify      # shorter: the GPU tests, then where exact
#           mode's time goes on CUDA (exact with and without CUDA tracing, Python frames, depth 16)
#
# The run writes $OUT/session.log (every command and its output, timed), $OUT/results.tar.gz (the
# traces, mgreport --json of each, the kept test folders).
# Each step has its own timeout and a failing step does not stop the next. docs/GPU.md says what
# the last run showed.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
LIBS="libbz2.so.1.0 libcjson.so.1 libdw.so.1 libelf.so.1 liblzma.so.5 libncursesw.so.6 libtinfo.so.6
      libpng16.so.16 libunwind.so.8 libz.so.1"

prepare() {
	[ -d build-gpu ] || PATH=/usr/bin:/bin:/usr/local/cuda/bin \
		meson setup build-gpu -Dcupti=enabled -Dcuda=enabled || exit 1
	ninja -C build-gpu || exit 1
	rm -rf .gpulibs && mkdir .gpulibs || exit 1
	for l in $LIBS; do cp -L "/lib/x86_64-linux-gnu/$l" .gpulibs/ || exit 1; done
	cp -L /usr/local/cuda/lib64/libcupti.so.13 /usr/local/cuda/lib64/libcudart.so.13 .gpulibs/ || exit 1
	grep -qx '/.gpulibs/' .git/info/exclude 2>/dev/null || echo /.gpulibs/ >>.git/info/exclude
	du -sh build-gpu .gpulibs
}

step() { # step NAME TIMEOUT CMD...: runs CMD, logs it with its time and status
	local name=$1 limit=$2 t0=$SECONDS
	shift 2
	echo "=== $name: $*" >>"$LOG"
	if declare -F "$1" >/dev/null; then # a function of this file, run in a shell of its own
		timeout "$limit" bash -c "$(declare -f "$1"); \"\$@\"" _ "$@" >>"$LOG" 2>&1
	else
		timeout "$limit" "$@" >>"$LOG" 2>&1
	fi
	local rc=$?
	echo "=== $name: rc $rc in $((SECONDS - t0)) s" >>"$LOG"
	echo "$name rc $rc $((SECONDS - t0)) s"
}

# The build's paths are this machine's (/work/main); the device's copy is linked there. Carried
# libraries are used only for what the device lacks (its own libz, libstdc++ and CUDA stay first).
setup_device() {
	if [ "$ROOT" != /work/main ]; then
		mkdir -p /work && { [ -e /work/main ] || ln -s "$ROOT" /work/main; }
	fi
	mkdir -p /tmp/mglibs
	for l in $LIBS libcupti.so.13 libcudart.so.13; do
		if ! ldconfig -p | grep -q "^[[:space:]]*$l " && [ ! -e /usr/local/cuda/lib64/$l ]; then
			ln -sf "$ROOT/.gpulibs/$l" /tmp/mglibs/$l
		fi
	done
	export LD_LIBRARY_PATH=/tmp/mglibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	[ -x /usr/bin/python3 ] || ln -s "$(command -v python3)" /usr/bin/python3
}

report_json() { # report_json TRACE: TRACE's mgreport --json beside it (.json)
	build-gpu/mgreport/mgreport --json --top 40 "$1" >"${1%.mgt}.json"
}

torch_runs() { # the PyTorch sample on CUDA under the probe: healthy, then a device leak
	local py=python3 mgp=build-gpu/libmgprobe/mgprobe
	step torch-native 120 $py samples/torch_vision_train.py --device cuda --steps 300 --print-every 100
	step torch-healthy 150 $mgp run -o "$R/torch-healthy.mgt" -- \
		$py samples/torch_vision_train.py --device cuda --steps 600 --print-every 100
	step torch-leak 180 $mgp run -o "$R/torch-leak.mgt" -- \
		$py samples/torch_vision_train.py --device cuda --steps 1000 --leak-device --print-every 100
	for s in healthy leak; do
		step "report-torch-$s" 120 report_json "$R/torch-$s.mgt"
		step "report-torch-$s-text" 120 build-gpu/mgreport/mgreport --top 15 "$R/torch-$s.mgt"
	done
}

# Issues 15 and 16 on CUDA: the host leak named at its Python line, the sampled mode's step time
# beside native's in the same run, and forked DataLoader workers after CUDA started (their traces
# hold host memory only; the Dataset's leak is found in a worker's trace).
torch_more() {
	local py=python3 mgp=build-gpu/libmgprobe/mgprobe rep=build-gpu/mgreport/mgreport
	local t=samples/torch_vision_train.py
	step torch-hostleak 150 $mgp run -o "$R/torch-hostleak.mgt" -- \
		$py $t --device cuda --steps 300 --leak --print-every 100
	step report-torch-hostleak-text 120 $rep --top 5 "$R/torch-hostleak.mgt"
	step report-torch-hostleak 120 report_json "$R/torch-hostleak.mgt"
	for round in 1 2; do
		step "torch-native-$round" 120 $py $t --device cuda --steps 300 --print-every 100
		step "torch-sampled-$round" 120 $mgp run --sample 512K -o "$R/torch-sampled.mgt" -- \
			$py $t --device cuda --steps 300 --print-every 100
		step "torch-exact-$round" 150 $mgp run -o "$R/torch-exact.mgt" -- \
			$py $t --device cuda --steps 300 --print-every 100
	done
	step report-torch-sampled-text 120 $rep --top 5 "$R/torch-sampled.mgt"
	step torch-workers 240 $mgp run -o "$R/torch-workers.mgt" -- \
		$py $t --device cuda --steps 200 --workers 2 --leak-getitem --print-every 100
	for m in "$R"/torch-workers*; do
		[ -e "$m" ] && step "report-$(basename "$m")-text" 120 $rep --top 5 "$m"
	done
	ls -la "$R" >>"$LOG"
}

# The suites gpu and cupti and the tests engine-device and engine-devmodel, run as meson would run
# them but without meson (the device's meson is another version, which refuses this build folder).
gpu_tests() {
	local b=build-gpu py=/usr/bin/python3
	local probe="$b/libmgprobe/mgprobe $b/mgreport/mgreport $b/libmgprobe/libmgprobe.so"
	export MG_TEST_KEEP=1 TMPDIR="$R/tests"
	step test-cupti-handlers 60 $b/tests/cupti/test-cupti-handlers
	step test-gpu-alloc 300 $py tests/cupti/test_gpu.py $probe $b/tests/cupti/gpu-alloc
	step test-gpu-train 300 $py tests/cupti/test_gpu_train.py $probe $b/engine/mgtrain
	step test-engine-device 120 $py tests/engine/engine_test.py $b/engine/mgtrain device cuda
	step test-engine-devmodel 60 $b/tests/engine/test-devmodel
	unset MG_TEST_KEEP TMPDIR
}

cost_runs() { # CUPTI's own cost on the real driver, then the probe's, per cudaMalloc + cudaFree
	local f=build-gpu/bench/cupti_facts mgp=build-gpu/libmgprobe/mgprobe
	step cupti-facts 120 $f
	for round in 1 2 3; do
		step "pairs-native-$round" 60 $f --pairs 20000
		step "pairs-probe-nocuda-$round" 60 $mgp run -o "$R/p1.mgt" --no-cuda -- $f --pairs 20000
		step "pairs-probe-callbacks-$round" 60 env MGPROBE_CUDA_ACTIVITY=0 \
			$mgp run -o "$R/p2.mgt" -- $f --pairs 20000
		step "pairs-probe-full-$round" 60 $mgp run -o "$R/p3.mgt" -- $f --pairs 20000
	done
	step cupti-bench 120 build-gpu/bench/cupti_bench 200000
}

# Where exact mode's time goes on CUDA: the PyTorch sample natively, exact, exact without CUDA
# tracing, exact without Python frames, sampled; each run's step time is its `done:` line.
cost_split() {
	local py=python3 mgp=build-gpu/libmgprobe/mgprobe t="samples/torch_vision_train.py --device cuda --steps 200 --print-every 200"
	for round in 1 2; do
		step "split-native-$round" 90 $py $t
		step "split-exact-$round" 120 $mgp run -o "$R/s.mgt" -- $py $t
	done
	step split-exact-nocuda 120 $mgp run --no-cuda -o "$R/s.mgt" -- $py $t
	step split-exact-nopython 120 $mgp run --no-python -o "$R/s.mgt" -- $py $t
	step split-exact-depth16 120 $mgp run --depth 16 -o "$R/s.mgt" -- $py $t
	step split-sampled 90 $mgp run --sample 512K -o "$R/s.mgt" -- $py $t
	rm -f "$R"/s.mgt "$R"/s.*.mgt
}

# A second, short session: the GPU tests, then cost_split.
verify() {
	: "${OUT:?OUT must name the folder for the results}"
	LOG=$OUT/session.log R=/tmp/mg-gpu-results
	mkdir -p "$R/tests"
	setup_device
	step nvidia-smi-before 30 nvidia-smi -L
	gpu_tests
	pack
	cost_split
	pack
}

run() {
	: "${OUT:?OUT must name the folder for the results}"
	LOG=$OUT/session.log R=/tmp/mg-gpu-results
	mkdir -p "$R/tests"
	setup_device
	step uname 10 uname -a
	step nvidia-smi-before 30 nvidia-smi
	step tools 10 bash -c 'command -v python3 nvcc meson ninja; python3 -c "import torch; print(torch.__version__, torch.cuda.is_available())"; ls /tmp/mglibs'
	step mgtrain-cuda-20 120 build-gpu/engine/mgtrain --device cuda --steps 20
	gpu_tests
	pack
	[ -n "${MG_GPU_SKIP_COST:-}" ] || cost_runs # a rerun that needs only the rest
	for m in "$R"/tests/*/*.mgt; do
		[ -e "$m" ] && step "report-$(basename "$m")" 120 report_json "$m"
	done
	pack
	[ -n "${MG_GPU_SKIP_TORCH:-}" ] || torch_runs
	pack
	torch_more
	step nvidia-smi-after 30 nvidia-smi
	pack
	ls -la "$OUT" >>"$LOG"
}

# $OUT/results.tar.gz: everything but the PyTorch traces, which come back gzipped on their own
# (split in 15 MiB parts: the tool returns 8 files of at most 16 MiB). Called after each phase, so
# a run cut short still returns what it made.
pack() {
	rm -f "$R"/p?.mgt
	tar -czf "$OUT/results.tar.gz" -C /tmp --exclude='torch-*.mgt' mg-gpu-results
	for t in "$R"/torch-healthy.mgt "$R"/torch-leak.mgt; do
		[ -e "$t" ] || continue
		rm -f "$OUT/$(basename "$t")".gz*
		gzip -c "$t" | split -b 15M -d - "$OUT/$(basename "$t").gz."
	done
}

case "${1:-}" in
--prepare) prepare ;;
--run) run ;;
--verify) verify ;;
*) echo "usage: $0 --prepare | --run | --verify   (see the head of this file)" >&2; exit 2 ;;
esac
