#!/usr/bin/env bash
# ASan + UBSan build and run (issue 12).
#
#   scripts/sanitize.sh                 # bounded run: misuse (threads, views, re-entrancy), index,
#                                       # option, cache-tamper and fuzz tests (CI runs this)
#   scripts/sanitize.sh --full          # the whole test suite under the sanitizers (hours on 2 cores)
#   scripts/sanitize.sh -- tests/x.py   # any pytest arguments after --
#
# Works from a clean clone: builds the package with
# -DTFLITE_GPU_SANITIZE=${TFLITE_GPU_SANITIZE:-address,undefined} (-O1 -g) in its own build folder
# (build/sanitize) and installs it, with its runtime and test dependencies, into a virtual
# environment: ${SANITIZE_VENV:-$TMPDIR/tflite_gpu_sanitize_venv} (created if missing; CI passes
# its own, already populated one). The build uses pip's build isolation unless the environment
# already has scikit-build-core, pybind11 and cmake; ccache is used when installed (not needed).
# pytest then runs with the sanitizer runtimes preloaded (Python itself is not instrumented, so
# the ASan runtime must come first): the very libasan/libubsan the built module links against
# (ldd), else the compiler's (-print-file-name). ASAN_OPTIONS has detect_leaks=0: CPython keeps
# interned objects and module state alive until exit by design, which LeakSanitizer would report
# on every run; leaks of ours are covered by the RSS tests instead. Any report aborts the process
# (halt_on_error), and misuse_util.run_child also fails a child whose stderr has one.
# Env: SANITIZE_FUZZ_MUTANTS (default 1500, as the normal CI run): mutants for the long-lived fuzz test in the bounded run.
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

t0=$(date +%s)
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
fi
iso=()
if python -c "import scikit_build_core, pybind11" 2>/dev/null && command -v cmake >/dev/null; then
  iso=(--no-build-isolation)
fi
echo "sanitize: building ($san) in $build into $venv${CMAKE_CXX_COMPILER_LAUNCHER:+ (ccache)}"
# The package with its runtime and test dependencies (already satisfied ones are not fetched).
# pip always rebuilds and reinstalls a local directory, replacing a normal build of the package.
set +e
pip install -q "${iso[@]}" "$repo[test]" -Cbuild-dir="$build" \
  -Ccmake.define.TFLITE_GPU_SANITIZE="$san" -Ccmake.define.TFLITE_GPU_BUILD_EXAMPLES=OFF 2>&1 | grep -v WARNING
st=${PIPESTATUS[0]}
set -e
if [ "$st" != 0 ]; then
  echo "sanitize: the sanitized build/install failed (pip exit code $st)" >&2
  exit 1
fi
site=$(python -c "import sysconfig; print(sysconfig.get_paths()['platlib'])")
core=$(ls "$site"/tflite_gpu/_core*.so 2>/dev/null | head -1 || true)
if [ -z "$core" ]; then
  echo "sanitize: the build did not install tflite_gpu/_core into $site" >&2
  exit 1
fi
case "$san" in *address*)
  if ! grep -qa __asan_init "$core"; then  # never test a normal build by mistake
    echo "sanitize: $core is not instrumented (no __asan_init): the sanitized build was not installed" >&2
    exit 1
  fi ;;
esac
t1=$(date +%s)

# The sanitizer runtimes the module was linked with, else the compiler's.
cxx=$(cmake -LA -N "$build" 2>/dev/null | sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' || true)
cxx=${cxx:-c++}
runtime() {  # runtime NAME -> absolute path of libNAME.so*, or nothing
  local p
  p=$(ldd "$core" 2>/dev/null | awk -v n="lib$1.so" 'index($1, n) == 1 && $3 ~ /^\// {print $3; exit}')
  if [ -z "$p" ]; then
    p=$("$cxx" -print-file-name="lib$1.so" 2>/dev/null || true)
    case "$p" in /*) ;; *) p="" ;; esac
  fi
  [ -n "$p" ] && [ -e "$p" ] && echo "$p"
  return 0
}
preload=""
case "$san" in *address*)
  a=$(runtime asan)
  if [ -z "$a" ]; then
    echo "sanitize: cannot find the ASan runtime (libasan.so) of $cxx; install the compiler's libasan package" >&2
    exit 1
  fi
  preload=$a ;;
esac
case "$san" in *undefined*) u=$(runtime ubsan); [ -n "$u" ] && preload="$preload $u" ;; esac
export LD_PRELOAD="${preload# }"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:abort_on_error=1:allocator_may_return_null=1:detect_odr_violation=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TFLITE_GPU_FUZZ_CI_MUTANTS=${SANITIZE_FUZZ_MUTANTS:-1500}
echo "sanitize: LD_PRELOAD=$LD_PRELOAD"
echo "sanitize: ASAN_OPTIONS=$ASAN_OPTIONS"

# Run from outside the source tree so `import tflite_gpu` is the sanitized install.
log=$(mktemp "${TMPDIR:-/tmp}/tflite_gpu_sanitize.XXXXXX.log")
cd "${TMPDIR:-/tmp}"
python -c "import tflite_gpu, sys; assert 'site-packages' in tflite_gpu.__file__, tflite_gpu.__file__; print('sanitize: testing', tflite_gpu.__file__)"
if [ ${#args[@]} -gt 0 ]; then
  set -- "${args[@]}"
elif [ "$full" = 1 ]; then
  set -- "$repo/tests"
else
  set -- "$repo/tests/test_misuse.py" "$repo/tests/test_reentrancy.py" "$repo/tests/test_index_checks.py" \
         "$repo/tests/test_options_errors.py" "$repo/tests/test_program_cache.py" "$repo/tests/test_model_fuzz.py" \
         "$repo/tests/test_interpreter.py"
fi
set +e
python -m pytest -q -p no:cacheprovider "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
reports=$(grep -c -E "ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer" "$log" || true)
t2=$(date +%s)
echo "sanitize: build $((t1 - t0)) s, tests $((t2 - t1)) s; pytest exit code $rc, sanitizer reports in the log: $reports ($log)"
[ "$rc" = 0 ] && [ "$reports" = 0 ]
