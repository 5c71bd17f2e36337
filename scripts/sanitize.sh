#!/usr/bin/env bash
# ASan + UBSan build and run (issue 12).
#
#   scripts/sanitize.sh                 # bounded run: misuse, index, option, cache and fuzz tests
#   scripts/sanitize.sh --full          # the whole test suite under the sanitizers (hours on 2 cores)
#   scripts/sanitize.sh -- tests/x.py   # any pytest arguments after --
#
# Builds the package with -DTFLITE_GPU_SANITIZE=${TFLITE_GPU_SANITIZE:-address,undefined} (-O1 -g)
# in its own build folder (build/sanitize) and virtual environment (${SANITIZE_VENV:-
# $TMPDIR/tflite_gpu_sanitize_venv}), then runs pytest with the ASan runtime preloaded (Python
# itself is not instrumented, so libasan must come first). ASAN_OPTIONS has detect_leaks=0:
# CPython keeps interned objects and module state alive until exit by design, which LeakSanitizer
# would report on every run; leaks of ours are covered by the RSS tests instead. Any report aborts
# the process (halt_on_error), and misuse_util.run_child also fails a child whose stderr has one.
# Env: SANITIZE_FUZZ_MUTANTS (default 400) mutants for the long-lived fuzz test in the bounded run.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
san=${TFLITE_GPU_SANITIZE:-address,undefined}
venv=${SANITIZE_VENV:-${TMPDIR:-/tmp}/tflite_gpu_sanitize_venv}
build=${SANITIZE_BUILD_DIR:-$repo/build/sanitize}
full=0
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --full) full=1 ;;
    --) shift; args=("$@"); break ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

[ -d "$venv" ] || python3 -m venv --system-site-packages "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-$(command -v ccache || true)}
echo "sanitize: building ($san) in $build"
pip install -q --no-build-isolation --no-deps "$repo" -Cbuild-dir="$build" \
  -Ccmake.define.TFLITE_GPU_SANITIZE="$san" -Ccmake.define.TFLITE_GPU_BUILD_EXAMPLES=OFF 2>&1 | grep -v WARNING || true

cxx=$(cmake -LA -N "$build" 2>/dev/null | sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p')
cxx=${cxx:-c++}
preload=""
case "$san" in *address*) preload=$("$cxx" -print-file-name=libasan.so) ;; esac
case "$san" in *undefined*) u=$("$cxx" -print-file-name=libubsan.so); [ -f "$u" ] && preload="$preload $u" ;; esac
export LD_PRELOAD="${preload# }"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:abort_on_error=1:allocator_may_return_null=1:detect_odr_violation=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TFLITE_GPU_FUZZ_CI_MUTANTS=${SANITIZE_FUZZ_MUTANTS:-400}
echo "sanitize: LD_PRELOAD=$LD_PRELOAD"
echo "sanitize: ASAN_OPTIONS=$ASAN_OPTIONS"

# Run from outside the source tree so `import tflite_gpu` is the sanitized install.
cd "${TMPDIR:-/tmp}"
python -c "import tflite_gpu, sys; assert 'site-packages' in tflite_gpu.__file__, tflite_gpu.__file__; print('sanitize: testing', tflite_gpu.__file__)"
if [ ${#args[@]} -gt 0 ]; then
  set -- "${args[@]}"
elif [ "$full" = 1 ]; then
  set -- "$repo/tests"
else
  set -- "$repo/tests/test_misuse.py" "$repo/tests/test_index_checks.py" "$repo/tests/test_options_errors.py" \
         "$repo/tests/test_program_cache.py" "$repo/tests/test_model_fuzz.py" "$repo/tests/test_interpreter.py"
fi
set +e
python -m pytest -q -p no:cacheprovider "$@" 2>&1 | tee "${TMPDIR:-/tmp}/tflite_gpu_sanitize.log"
rc=${PIPESTATUS[0]}
set -e
reports=$(grep -c -E "ERROR: AddressSanitizer|runtime error:" "${TMPDIR:-/tmp}/tflite_gpu_sanitize.log" || true)
echo "sanitize: pytest exit code $rc, sanitizer reports in the log: $reports"
[ "$rc" = 0 ] && [ "$reports" = 0 ]
