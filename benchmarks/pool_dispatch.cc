// Cost of one ParallelFor of the CPU thread pool (issue #14): an empty job at T threads, back to
// back (the workers spinning) and after the caller was busy or asleep for a while (workers
// blocked once the gap passes TFLITE_GPU_SPIN_US). Built from the source tree:
//
//   g++ -O2 -std=c++17 -pthread -Icsrc benchmarks/pool_dispatch.cc csrc/runtime/thread_pool.cc \
//       csrc/runtime/env.cc -o /tmp/pool_dispatch && /tmp/pool_dispatch 2
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "runtime/thread_pool.h"

using Clock = std::chrono::steady_clock;

static double Us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  tflite_gpu::ThreadPool pool(threads);
  volatile long sink = 0;
  auto fn = [&](int64_t b, int64_t e) { sink = sink + long(e - b); };
  std::printf("threads %d: empty ParallelFor(64 items), median / p90 in us\n", threads);
  for (double gap : {0.0, 5.0, 20.0, 100.0, 1000.0, -2000.0}) {
    std::vector<double> v;
    const int reps = (gap > 500 || gap < 0) ? 300 : 20000;
    for (int i = 0; i < reps; ++i) {
      if (gap > 0) {
        const auto t = Clock::now();
        while (Us(t, Clock::now()) < gap) {
        }
      } else if (gap < 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(int(-gap)));
      }
      const auto t0 = Clock::now();
      tflite_gpu::ParallelFor(&pool, 64, fn, 1);
      v.push_back(Us(t0, Clock::now()));
    }
    std::sort(v.begin(), v.end());
    std::printf("  %s %6.0f us: %6.2f / %6.2f\n", gap < 0 ? "after sleeping" : "after busy    ", gap < 0 ? -gap : gap,
                v[v.size() / 2], v[v.size() * 9 / 10]);
  }
  return 0;
}
