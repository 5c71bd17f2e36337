// A small fixed-size thread pool owned by one interpreter. ParallelFor splits [0, n) into
// contiguous chunks, runs them on the workers and the calling thread, and returns when all
// are done. One interpreter's pool is never shared with another, so interpreters in different
// threads run independently.
//
// Waking: a worker that runs out of chunks spins for a short while (kSpinNs, pause instructions,
// checking a clock every few dozen) before it blocks on the condition variable, so the next op
// of the same invoke -- usually microseconds later -- starts without a futex wake-up; the caller
// likewise spins briefly before it blocks waiting for the last chunk. The caller signals the
// condition variable only when a worker is actually blocked. With one thread there are no
// workers and ParallelFor runs fn inline (no atomics, no locks).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tflite_gpu {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int num_threads() const { return num_threads_; }
  // fn(begin, end) over chunks of [0, n); at least `min_chunk` items per chunk.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t min_chunk = 1);

 private:
  void Worker(int id);
  int num_threads_;
  int64_t spin_ns_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_start_, cv_done_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0, job_chunk_ = 0;
  int64_t next_chunk_ = 0, num_chunks_ = 0;
  std::atomic<int64_t> done_chunks_{0};   // written under mu_, read by the spinning caller
  std::atomic<uint64_t> generation_{0};   // written under mu_, read by spinning workers
  int sleeping_workers_ = 0;              // under mu_
  bool caller_sleeping_ = false;          // under mu_
  bool stop_ = false;
};

// Runs fn over [0, n) on the pool, or inline when pool is null or has one thread.
inline void ParallelFor(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                        int64_t min_chunk = 1) {
  if (n <= 0) return;
  if (!pool || pool->num_threads() <= 1 || n <= min_chunk) { fn(0, n); return; }
  pool->ParallelFor(n, fn, min_chunk);
}

}  // namespace tflite_gpu
