#!/usr/bin/env bash
# Developer build: compiles the core and _core into build/dev and places them in tflite_gpu/,
# so `PYTHONPATH=. pytest` runs against the working tree. A lock serialises concurrent builds.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 9>/tmp/tflite_gpu_dev_build.lock
flock 9
if [ ! -f build/dev/build.ninja ]; then
  cmake -S . -B build/dev -G Ninja -DTFLITE_GPU_DEV_INPLACE=ON \
    -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" ${TFG_CMAKE_ARGS:-} >/dev/null
fi
cmake --build build/dev "$@"
