// Stress test of runtime/thread_pool (built by tests/test_thread_pool.py from the source tree,
// also under ThreadSanitizer where the compiler has it). Every ParallelFor's ranges must cover
// [0, n) exactly once; a lost wake-up shows as the watchdog's abort (exit code 3), never a hang.
//
//   thread_pool_stress <seconds budget> <iterations per case>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/thread_pool.h"

using tflite_gpu::ParallelFor;
using tflite_gpu::ThreadPool;

namespace {

std::atomic<int> g_failures{0};
std::atomic<long> g_progress{0};

void Fail(const std::string& what) {
  if (g_failures.fetch_add(1) < 20) std::fprintf(stderr, "FAIL: %s\n", what.c_str());
}

// One ParallelFor of n items: each item must be visited once, by a range inside [0, n), and no
// range may be smaller than min_chunk unless it is the whole job.
void CheckOne(ThreadPool* pool, int64_t n, int64_t min_chunk, std::vector<std::atomic<int>>& seen,
              const std::string& where) {
  for (int64_t i = 0; i < n; ++i) seen[size_t(i)].store(0, std::memory_order_relaxed);
  std::atomic<int> bad{0};
  ParallelFor(
      pool, n,
      [&](int64_t b, int64_t e) {
        if (b < 0 || e > n || b >= e) bad.fetch_add(1);
        if (e - b < min_chunk && !(b == 0 && e == n)) bad.fetch_add(1);
        for (int64_t i = std::max<int64_t>(b, 0); i < std::min(e, n); ++i)
          seen[size_t(i)].fetch_add(1, std::memory_order_relaxed);
      },
      min_chunk);
  if (bad.load()) Fail(where + ": bad range, n=" + std::to_string(n) + " min_chunk=" + std::to_string(min_chunk));
  for (int64_t i = 0; i < n; ++i)
    if (seen[size_t(i)].load(std::memory_order_relaxed) != 1) {
      Fail(where + ": item " + std::to_string(i) + " of " + std::to_string(n) + " visited " +
           std::to_string(seen[size_t(i)].load()) + " times (min_chunk " + std::to_string(min_chunk) + ")");
      break;
    }
  g_progress.fetch_add(1, std::memory_order_relaxed);
}

// Many calls of odd sizes on one pool, with pauses now and then long enough for the workers to
// block (so that the wake-up path runs as often as the spinning one).
void Hammer(ThreadPool* pool, int iters, unsigned seed, const std::string& where, bool with_sleeps) {
  std::mt19937 rng(seed);
  std::vector<std::atomic<int>> seen(5000);
  for (int it = 0; it < iters; ++it) {
    const int64_t n = 1 + int64_t(rng() % 4999);
    const int64_t min_chunk = 1 + int64_t(rng() % 64);
    if (with_sleeps && rng() % 16 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 400));
    CheckOne(pool, n, min_chunk, seen, where);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int budget_s = argc > 1 ? std::atoi(argv[1]) : 60;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 2000;
  // Watchdog: no progress for budget_s seconds is a hang (a lost wake-up); abort with a message.
  std::thread([budget_s] {
    long last = -1;
    for (;;) {
      std::this_thread::sleep_for(std::chrono::seconds(budget_s));
      const long now = g_progress.load();
      if (now == last) {
        std::fprintf(stderr, "FAIL: no ParallelFor finished in %d s (after %ld): hang\n", budget_s, now);
        std::fflush(stderr);
        std::_Exit(3);
      }
      last = now;
    }
  }).detach();

  for (const char* spin : {"0", "3", "200"}) {
    setenv("TFLITE_GPU_SPIN_US", spin, 1);
    const std::string sp = std::string(" spin_us=") + spin;
    // 1) One pool per thread size, driven from one thread.
    for (int t : {2, 3, 4}) {
      ThreadPool pool(t);
      Hammer(&pool, iters, unsigned(t), "single pool threads=" + std::to_string(t) + sp, true);
    }
    // 2) Several pools (as several interpreters) driven from their own threads at once.
    {
      std::vector<std::thread> ths;
      for (int k = 0; k < 3; ++k)
        ths.emplace_back([&, k] {
          ThreadPool pool(2 + k % 2);
          ThreadPool::InvokeScope scope(k == 0 ? &pool : nullptr);  // one of them "inside an invoke"
          Hammer(&pool, iters / 2, 100u + unsigned(k), "pool " + std::to_string(k) + " of 3" + sp, k != 1);
        });
      for (auto& th : ths) th.join();
    }
    // 3) One pool shared by two threads at once (one of the calls runs inline), and a
    //    ParallelFor nested inside another's fn (runs inline).
    {
      ThreadPool pool(3);
      std::vector<std::thread> ths;
      for (int k = 0; k < 2; ++k)
        ths.emplace_back([&, k] { Hammer(&pool, iters / 2, 200u + unsigned(k), "shared pool" + sp, k == 0); });
      for (auto& th : ths) th.join();
      std::vector<std::atomic<int>> outer(300);
      for (auto& v : outer) v.store(0);
      ParallelFor(&pool, 300, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          std::atomic<int> inner{0};
          ParallelFor(&pool, 7, [&](int64_t ib, int64_t ie) { inner.fetch_add(int(ie - ib)); }, 1);
          if (inner.load() != 7) Fail("nested ParallelFor covered " + std::to_string(inner.load()) + " of 7");
          outer[size_t(i)].fetch_add(1);
        }
      });
      for (auto& v : outer)
        if (v.load() != 1) {
          Fail("outer ParallelFor around nested calls did not cover each item once");
          break;
        }
    }
    // 4) Pools created and destroyed while their workers spin or sleep.
    for (int k = 0; k < 50; ++k) {
      ThreadPool pool(2 + k % 3);
      std::vector<std::atomic<int>> seen(64);
      CheckOne(&pool, 64, 1, seen, "short-lived pool" + sp);
      if (k % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  }
  // 5) Blocked workers are woken: with TFLITE_GPU_SPIN_US=0 the workers block after every job;
  //    jobs whose chunks sleep (no CPU needed, so a loaded machine does not matter) must see the
  //    worker take part, and the caller, blocked on the last chunk, must be woken by it.
  {
    setenv("TFLITE_GPU_SPIN_US", "0", 1);
    ThreadPool pool(2);
    const auto caller = std::this_thread::get_id();
    int joined = 0;
    for (int j = 0; j < 10; ++j) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::atomic<int> others{0};
      ParallelFor(&pool, 8, [&](int64_t, int64_t) {
        if (std::this_thread::get_id() != caller) others.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      });
      joined += others.load() > 0;
      g_progress.fetch_add(1);
    }
    if (joined < 3) Fail("a blocked worker took part in only " + std::to_string(joined) + " of 10 jobs (lost wake-up?)");
  }
  const ThreadPool::Stats st = [] {
    ThreadPool pool(2);
    std::vector<std::atomic<int>> seen(4096);
    for (int i = 0; i < 100; ++i) CheckOne(&pool, 4096, 1, seen, "stats pool");
    return pool.stats();
  }();
  if (st.jobs != 100) Fail("stats: jobs " + std::to_string(st.jobs) + ", want 100");
  std::printf("thread_pool_stress: %ld ParallelFor calls checked, %d failures\n", g_progress.load(),
              g_failures.load());
  return g_failures.load() ? 1 : 0;
}
