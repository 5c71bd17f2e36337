#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
#include <immintrin.h>
#define TFG_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define TFG_CPU_RELAX() asm volatile("yield" ::: "memory")
#else
#define TFG_CPU_RELAX() std::atomic_signal_fence(std::memory_order_seq_cst)
#endif

namespace tflite_gpu {
namespace {

// How long an idle worker (or the waiting caller) spins before blocking. Between two ops of one
// invoke the gap is a few microseconds; between invokes from Python some tens. Overridable with
// TFLITE_GPU_SPIN_US (0: block at once, as a plain condition-variable pool).
int64_t SpinNs() {
  const char* s = std::getenv("TFLITE_GPU_SPIN_US");
  if (s && *s) {
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end && *end == '\0' && v >= 0) return int64_t(std::min<long>(v, 100000)) * 1000;
  }
  return 200 * 1000;
}

// Waits for pred() without blocking: pause instructions for the first kPauseNs, then
// sched_yield until budget_ns have passed. The yields matter on a loaded machine: a thread that
// only pauses holds its core against every other runnable thread (the interpreter's own caller
// included) for the whole budget, while a yielding one hands the core over and is back as soon
// as nothing else wants it. True when pred() held.
template <class Pred>
bool SpinFor(int64_t budget_ns, Pred pred) {
  if (pred()) return true;
  if (budget_ns <= 0) return false;
  constexpr int64_t kPauseNs = 4000;
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 16; ++i) {
      TFG_CPU_RELAX();
      if (pred()) return true;
    }
    const int64_t dt =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    if (dt >= budget_ns) return false;
    if (dt >= kPauseNs) {
      std::this_thread::yield();
      if (pred()) return true;
    }
  }
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)), spin_ns_(SpinNs()) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { Worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
  }
  cv_start_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t min_chunk) {
  int64_t chunks = std::min<int64_t>(int64_t(num_threads_) * 4, (n + min_chunk - 1) / std::max<int64_t>(1, min_chunk));
  chunks = std::max<int64_t>(1, chunks);
  if (chunks == 1) { fn(0, n); return; }
  std::unique_lock<std::mutex> l(mu_);
  job_ = &fn;
  job_n_ = n;
  job_chunk_ = (n + chunks - 1) / chunks;
  num_chunks_ = (n + job_chunk_ - 1) / job_chunk_;
  next_chunk_ = 0;
  done_chunks_.store(0, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  const bool wake = sleeping_workers_ > 0;
  l.unlock();
  if (wake) cv_start_.notify_all();
  // The caller works too. It waits for the chunks, not for the workers: a worker that has not
  // woken up yet (its core busy) finds no chunk left and never delays the caller.
  int64_t mine = 0;
  for (;;) {
    l.lock();
    int64_t c = next_chunk_ < num_chunks_ ? next_chunk_++ : -1;
    l.unlock();
    if (c < 0) break;
    fn(c * job_chunk_, std::min(n, (c + 1) * job_chunk_));
    ++mine;
  }
  l.lock();
  const int64_t total = num_chunks_;
  done_chunks_.fetch_add(mine, std::memory_order_acq_rel);
  if (done_chunks_.load(std::memory_order_relaxed) != total) {
    l.unlock();
    // Workers are finishing their last chunks: usually a few microseconds.
    SpinFor(spin_ns_, [&] { return done_chunks_.load(std::memory_order_acquire) == total; });
    l.lock();
    caller_sleeping_ = true;
    cv_done_.wait(l, [&] { return done_chunks_.load(std::memory_order_relaxed) == total; });
    caller_sleeping_ = false;
  }
  job_ = nullptr;
}

void ThreadPool::Worker(int) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    if (generation_.load(std::memory_order_relaxed) == seen && !stop_) {
      l.unlock();
      SpinFor(spin_ns_, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      l.lock();
      ++sleeping_workers_;
      cv_start_.wait(l, [&] { return stop_ || generation_.load(std::memory_order_relaxed) != seen; });
      --sleeping_workers_;
    }
    if (stop_) return;
    seen = generation_.load(std::memory_order_relaxed);
    for (;;) {
      int64_t c = next_chunk_ < num_chunks_ ? next_chunk_++ : -1;
      if (c < 0) break;
      const auto* fn = job_;
      int64_t b = c * job_chunk_, e = std::min(job_n_, (c + 1) * job_chunk_);
      l.unlock();
      (*fn)(b, e);
      l.lock();
      if (done_chunks_.fetch_add(1, std::memory_order_acq_rel) + 1 == num_chunks_ && caller_sleeping_)
        cv_done_.notify_all();
    }
  }
}

}  // namespace tflite_gpu
