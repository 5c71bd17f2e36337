#!/usr/bin/env bash
# Run on the lent NVIDIA machine (the device tool), from the repository root, with the wheels the
# machine lacks carried in .whl/ (ai-edge-litert, pyopencl and their small deps):
#   bash scripts/device_check.sh "<pytest args>" "<gpu_compare.py args>"
# Installs the carried wheels, builds this tree with 16 cores, lists the OpenCL devices, runs the
# given GPU tests on the NVIDIA device (the default device when a GPU is present), then the given
# benchmark. Logs go to $OUT (the tool brings them back).
set -uo pipefail
OUT=${OUT:-/tmp/device_out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
t0=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=16 python3 -m pip install -q --no-build-isolation --no-deps \
  --no-cache-dir --target /tmp/pkg . > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
export PYTHONPATH=/tmp/pkg:/tmp/site PATH=/tmp/pkg/bin:$PATH
# python3 -P: import the installed package, not the source tree.
python3 -P -c "import tflite_gpu; print(tflite_gpu.__file__); [print(d) for d in tflite_gpu.list_devices()]"
if [ -n "${1:-}" ]; then
  # shellcheck disable=SC2086
  python3 -P -m pytest -q -p no:cacheprovider $1 2>&1 \
    | tee "$OUT/tests.log" | tail -60
fi
if [ -n "${2:-}" ]; then
  # shellcheck disable=SC2086
  python3 -P benchmarks/gpu_compare.py $2 2>&1 | tee "$OUT/bench.txt"
fi
