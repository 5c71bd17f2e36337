#include "runtime/thread_pool.h"

#include <algorithm>

namespace tflite_gpu {

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { Worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
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
  done_chunks_ = 0;
  ++generation_;
  l.unlock();
  cv_start_.notify_all();
  // The caller works too. It waits for the chunks, not for the workers: a worker that has not
  // woken up yet (its core busy) finds no chunk left and never delays the caller.
  for (;;) {
    l.lock();
    int64_t c = next_chunk_ < num_chunks_ ? next_chunk_++ : -1;
    l.unlock();
    if (c < 0) break;
    fn(c * job_chunk_, std::min(n, (c + 1) * job_chunk_));
    l.lock();
    ++done_chunks_;
    l.unlock();
  }
  l.lock();
  cv_done_.wait(l, [this] { return done_chunks_ == num_chunks_; });
  job_ = nullptr;
}

void ThreadPool::Worker(int) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_start_.wait(l, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    for (;;) {
      int64_t c = next_chunk_ < num_chunks_ ? next_chunk_++ : -1;
      if (c < 0) break;
      const auto* fn = job_;
      int64_t b = c * job_chunk_, e = std::min(job_n_, (c + 1) * job_chunk_);
      l.unlock();
      (*fn)(b, e);
      l.lock();
      if (++done_chunks_ == num_chunks_) cv_done_.notify_all();
    }
  }
}

}  // namespace tflite_gpu
