#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>

#include "runtime/env.h"

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

// Measured against the previous pool (first-come chunks under a mutex, per-op split constants),
// whole invokes interleaved in alternating rounds on the 2-core VM, 2 threads, median ms over the
// rounds whose 1-thread times were undisturbed by other load: mobilenet_v2 5.39 -> 4.91 (per-round
// ratio median 0.83, 4 rounds), face_mesh_like 1.054 -> 0.959 (ratios scatter 0.75-1.5, 9 rounds),
// hand_landmark_like 3.35 -> 3.34 (5 rounds); 1 thread unchanged (0.97-0.99).
//
// Chunks per thread's share: the granularity at which a thread that is done takes work from one
// that is late (preempted on a loaded machine). Four: a late thread costs at most a quarter of
// its share; each chunk is one compare-and-swap.
constexpr int64_t kChunksPerThread = 4;
constexpr int64_t kMaxChunks = 0xffff;  // 16-bit chunk indices in a share word

// Waits for pred() without blocking: pause instructions for the first kPauseNs, then
// sched_yield until budget_ns have passed (or, when forever() holds, as long as it holds). The
// yields matter on a loaded machine: a thread that only pauses holds its core against every other
// runnable thread (the interpreter's own caller included) for the whole budget, while a yielding
// one hands the core over and is back as soon as nothing else wants it. True when pred() held.
template <class Pred, class Forever>
bool SpinFor(int64_t budget_ns, Pred pred, Forever forever) {
  if (pred()) return true;
  if (budget_ns <= 0) return false;
  constexpr int64_t kPauseNs = 4000;
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 16; ++i) {
      TFG_CPU_RELAX();
      if (pred()) return true;
    }
    const int64_t dt =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    if (dt >= budget_ns) {
      if (!forever()) return false;
      t0 = std::chrono::steady_clock::now() - std::chrono::nanoseconds(kPauseNs);  // keep yielding
    }
    if (dt >= kPauseNs) {
      std::this_thread::yield();
      if (pred()) return true;
    }
  }
}

thread_local int tls_thread_index = 0;

uint32_t Front(uint64_t w) { return uint32_t(w >> 16) & 0xffffu; }
uint32_t Back(uint64_t w) { return uint32_t(w) & 0xffffu; }
uint32_t Gen(uint64_t w) { return uint32_t(w >> 32); }

}  // namespace

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(std::max(1, num_threads)),
      spin_ns_(env::SpinUs() * 1000),
      shares_(new Share[size_t(std::max(1, num_threads))]) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { Worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_.store(true);
    generation_.fetch_add(1);
  }
  cv_start_.notify_all();
  for (auto& t : workers_) t.join();
}

int64_t MinParallelWork() {
  static const int64_t v = env::MinParallelWork(kMinParallelWork);
  return v;
}

int ThreadPool::CurrentThreadIndex() { return tls_thread_index; }

ThreadPool::Stats ThreadPool::stats() const {
  Stats s;
  s.jobs = n_jobs_.load(std::memory_order_relaxed);
  s.wakes = n_wakes_.load(std::memory_order_relaxed);
  s.stolen = n_stolen_.load(std::memory_order_relaxed);
  return s;
}

int64_t ThreadPool::ClaimFront(int slot, uint32_t gen) {
  std::atomic<uint64_t>& w = shares_[size_t(slot)].word;
  uint64_t s = w.load();
  for (;;) {
    if (Gen(s) != gen || Front(s) >= Back(s)) return -1;
    if (w.compare_exchange_weak(s, s + (uint64_t(1) << 16))) return Front(s);
  }
}

int64_t ThreadPool::ClaimBack(int slot, uint32_t gen) {
  std::atomic<uint64_t>& w = shares_[size_t(slot)].word;
  uint64_t s = w.load();
  for (;;) {
    if (Gen(s) != gen || Front(s) >= Back(s)) return -1;
    if (w.compare_exchange_weak(s, s - 1)) return Back(s) - 1;
  }
}

int64_t ThreadPool::RunJob(int slot, uint32_t gen, int64_t* total) {
  // Read before any claim: a claim tagged `gen` succeeds only while the shares still carry `gen`,
  // and ParallelFor retags the shares before it writes the next job's fields, so what was read
  // here belongs to `gen` whenever a claim succeeds (all seq_cst).
  void* obj = job_obj_.load();
  auto call = job_call_.load();
  const int64_t n = job_n_.load();
  const int64_t chunks = job_chunks_.load();
  *total = chunks;
  int64_t ran = 0, stolen = 0;
  auto run = [&](int64_t c) {
    // Balanced bounds: chunk c is [c*n/chunks, (c+1)*n/chunks), so the t-th share is exactly
    // the t-th of num_threads_ equal parts whatever the chunk count.
    call(obj, int64_t(__int128(c) * n / chunks), int64_t(__int128(c + 1) * n / chunks));
    ++ran;
  };
  for (int64_t c; (c = ClaimFront(slot, gen)) >= 0;) run(c);
  for (int k = 1; k < num_threads_; ++k) {
    const int victim = (slot + k) % num_threads_;
    for (int64_t c; (c = ClaimBack(victim, gen)) >= 0; ++stolen) run(c);
  }
  if (stolen) n_stolen_.fetch_add(stolen, std::memory_order_relaxed);
  return ran;
}

void ThreadPool::ParallelFor(int64_t n, RangeFn fn, int64_t min_chunk) {
  min_chunk = std::max<int64_t>(1, min_chunk);
  int64_t chunks = std::min<int64_t>({int64_t(num_threads_) * kChunksPerThread, n / min_chunk, kMaxChunks});
  if (chunks > num_threads_) chunks -= chunks % num_threads_;  // equal shares where n allows
  // One job at a time: a nested call (from inside fn) or one from a second thread runs inline.
  if (chunks < 2 || busy_.exchange(true, std::memory_order_acquire)) {
    fn(0, n);
    return;
  }
  // Publish. 1) retag every share with the new generation (its chunk range): a worker still
  // holding the previous generation can no longer claim; 2) the job's fields; 3) the generation
  // the workers wait on. Thread t's share is chunks [t*chunks/T, (t+1)*chunks/T).
  const uint32_t gen = generation_.load() + 1;
  for (int t = 0; t < num_threads_; ++t)
    shares_[size_t(t)].word.store(
        Pack(gen, uint32_t(t * chunks / num_threads_), uint32_t((t + 1) * chunks / num_threads_)));
  job_obj_.store(&fn);
  job_call_.store([](void* o, int64_t b, int64_t e) { (*static_cast<RangeFn*>(o))(b, e); });
  job_n_.store(n);
  job_chunks_.store(chunks);
  done_chunks_.store(0);
  generation_.store(gen);
  n_jobs_.fetch_add(1, std::memory_order_relaxed);
  // A worker counts itself sleeping (seq_cst) before it rechecks the generation under mu_; we
  // stored the generation (seq_cst) before reading the count: one of us sees the other.
  if (sleeping_workers_.load() > 0) {
    n_wakes_.fetch_add(1, std::memory_order_relaxed);
    { std::lock_guard<std::mutex> l(mu_); }
    cv_start_.notify_all();
  }
  // The caller works too (share 0, then the others' leftovers). It waits for the chunks, not for
  // the workers: a worker that has not woken up yet loses its chunks to the caller.
  int64_t total = 0;
  const int64_t mine = RunJob(0, gen, &total);
  if (done_chunks_.fetch_add(mine) + mine != chunks) {
    // Workers are finishing their last chunks: usually a few microseconds.
    SpinFor(spin_ns_, [&] { return done_chunks_.load(std::memory_order_acquire) == chunks; }, [] { return false; });
    if (done_chunks_.load() != chunks) {
      std::unique_lock<std::mutex> l(mu_);
      caller_sleeping_.store(true);
      cv_done_.wait(l, [&] { return done_chunks_.load() == chunks; });
      caller_sleeping_.store(false);
    }
  }
  busy_.store(false, std::memory_order_release);
}

void ThreadPool::Worker(int slot) {
  tls_thread_index = slot;
  uint32_t seen = 0;
  for (;;) {
    if (generation_.load(std::memory_order_acquire) == seen) {
      // stop_ is part of both waits: the destructor's generation bump can be read as `seen` by a
      // worker between its stop_ check and its load of the generation (it then runs an empty "job"
      // and waits for a generation that never comes -- a hang in ~ThreadPool's join, seen in the
      // stress test under load).
      const bool got = SpinFor(
          spin_ns_, [&] { return stop_.load() || generation_.load(std::memory_order_acquire) != seen; },
          [&] {
            return invokes_.load(std::memory_order_relaxed) > 0 &&
                   invoke_first_gen_.load(std::memory_order_relaxed) != seen;
          });
      if (!got) {
        std::unique_lock<std::mutex> l(mu_);
        sleeping_workers_.fetch_add(1);
        cv_start_.wait(l, [&] { return stop_.load() || generation_.load() != seen; });
        sleeping_workers_.fetch_sub(1);
      }
    }
    if (stop_.load()) return;
    seen = generation_.load();
    int64_t total = 0;
    const int64_t ran = RunJob(slot, seen, &total);
    if (ran == 0) continue;
    // Dekker with the caller: it sets caller_sleeping_ before it rechecks done_chunks_ under mu_.
    if (done_chunks_.fetch_add(ran) + ran == total && caller_sleeping_.load()) {
      { std::lock_guard<std::mutex> l(mu_); }
      cv_done_.notify_all();
    }
  }
}

}  // namespace tflite_gpu
