#!/usr/bin/env bash
# Builds, then copies the package (with its freshly built libraries) to $1 under the build lock,
# so tests can run against a stable copy while others keep rebuilding the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:?destination folder}
if ! out=$(./scripts/dev_build.sh 2>&1); then echo "$out" | grep -E 'error|FAILED' >&2; echo 'snapshot: build failed' >&2; exit 1; fi
exec 9>/tmp/tflite_gpu_dev_build.lock
flock 9
rm -rf "$dest/tflite_gpu"
mkdir -p "$dest"
cp -rL tflite_gpu "$dest/"
