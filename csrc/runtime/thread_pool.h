// A small fixed-size thread pool owned by one interpreter. ParallelFor splits [0, n) into
// contiguous chunks, runs them on the workers and the calling thread, and returns when all
// are done. One interpreter's pool is never shared with another, so interpreters in different
// threads run independently.
//
// Placement: thread t (the caller is thread 0) owns the t-th contiguous share of [0, n), cut into
// a few chunks it takes front to back; a thread with nothing left takes chunks from the back of
// another's share. So when consecutive ops split a tensor the same way (ADD then PRELU, say),
// each thread reads the part that is already in its own core's cache, and a thread that starts
// late (its core busy) only loses the chunks the others took from it. The previous pool handed
// 4 chunks a thread out first-come: a thread's part of a tensor changed from op to op, and on a
// quiet 2-core VM memory-bound ops ran slower at 2 threads than at 1 (face_mesh_like's 12 ADDs
// 86 -> 147 us, 12 PRELUs 119 -> 160 us), while the dispatch itself (an empty ParallelFor with the
// worker spinning) cost 0.3-0.4 us there, as it does now.
//
// Claims are lock-free (one compare-and-swap on the share's word, tagged with the job's
// generation so that a stale claim of a finished job fails); the mutex and condition variables
// are touched only when a thread blocks or must be woken.
//
// Waking: a worker that runs out of chunks spins (pause instructions, then sched_yield so that a
// loaded machine's other threads get the core) before it blocks, so the next op -- usually
// microseconds later -- starts without a futex wake-up (2.5-7 us on the VM). The spin lasts
// TFLITE_GPU_SPIN_US (default 200 us; 0: block at once) after the last job, and for as long as an
// invoke is in progress (InvokeScope): ops within one invoke never find the workers asleep, however
// long a serial stretch between them. The caller likewise spins briefly before it blocks waiting
// for the last chunk. With one thread there are no workers and ParallelFor runs fn inline (no
// atomics, no locks).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace tflite_gpu {

// A non-owning reference to a callable of signature R(A...): what ParallelFor and the conv
// family's task splitters run. Built from a lambda (or std::function) at the call: no copy, no
// allocation (a std::function holding a large capture allocates). It must not outlive the callable.
template <class Sig>
class FnRef;
template <class R, class... A>
class FnRef<R(A...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same<std::decay_t<F>, FnRef>::value>>
  FnRef(F&& f)  // NOLINT: implicit on purpose, so call sites pass lambdas
      : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o, A... a) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(a...); }) {}
  R operator()(A... a) const { return call_(obj_, a...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};
// fn(begin, end): what ParallelFor runs.
using RangeFn = FnRef<void(int64_t, int64_t)>;

// The one rule for when an op is worth splitting. Work is counted in units: one output element of a
// cheap streaming float op (ADD, PRELU; a copy: one per 4 bytes written) is one unit. ParallelFor
// gives each chunk at least min_chunk items, so an op of fewer than 2 * kMinParallelWork units
// runs on the calling thread alone: there a split saves less than it costs (the dispatch, ~0.5 us,
// the imbalance, and the cross-core traffic of the other thread reading its share). MinChunkFor
// is min_chunk for items of a given cost; every non-GEMM kernel derives its split from it.
constexpr int64_t kMinParallelWork = 32768;
// kMinParallelWork, or TFLITE_GPU_MIN_PARALLEL_WORK where set (for measuring; read once).
int64_t MinParallelWork();
inline int64_t MinChunkFor(int64_t work_per_item) {
  const int64_t m = MinParallelWork();
  return work_per_item >= m ? 1 : m / (work_per_item < 1 ? 1 : work_per_item);
}

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int num_threads() const { return num_threads_; }
  // fn(begin, end) over chunks of [0, n), each of at least `min_chunk` items (so n < 2 * min_chunk
  // runs inline). A call made while the pool is running another job (from inside fn, or from a
  // second thread) runs inline too.
  void ParallelFor(int64_t n, RangeFn fn, int64_t min_chunk = 1);

  // While one is alive, and the pool has run a job since the outermost one began, the idle
  // workers keep spinning (yielding) instead of blocking after TFLITE_GPU_SPIN_US: the interpreter
  // holds one for the duration of an invoke. (An invoke that runs no CPU job -- a model wholly on
  // the GPU delegate -- leaves the workers to block as usual.)
  class InvokeScope {
   public:
    explicit InvokeScope(ThreadPool* p) : p_(p && p->num_threads_ > 1 ? p : nullptr) {
      if (p_ && p_->invokes_.fetch_add(1) == 0) p_->invoke_first_gen_.store(p_->generation_.load());
    }
    ~InvokeScope() {
      if (p_) p_->invokes_.fetch_sub(1);
    }
    InvokeScope(const InvokeScope&) = delete;
    InvokeScope& operator=(const InvokeScope&) = delete;

   private:
    ThreadPool* p_;
  };

  // Within an invoke, before a step that runs no CPU job for a while (a GPU delegate partition):
  // the idle workers stop spinning through it (they spin TFLITE_GPU_SPIN_US, then block) and are
  // kept spinning again from the next job on.
  void Rest() { invoke_first_gen_.store(generation_.load()); }

  // Index of the calling thread in the pool that runs it (0: the thread that called ParallelFor,
  // 1..num_threads-1: the workers; 0 outside any pool): a per-thread scratch slot for fn.
  static int CurrentThreadIndex();

  // Counters for tests and measurements (relaxed; exact only when the pool is idle).
  struct Stats {
    int64_t jobs = 0;        // ParallelFor calls that used the workers
    int64_t wakes = 0;       // of those, calls that had to wake a blocked worker
    int64_t stolen = 0;      // chunks a thread ran from another thread's share
  };
  Stats stats() const;

 private:
  // One thread's share of the current job: generation (high 32 bits) | front | back (16 bits
  // each, chunk indices). Its own cache line: the owner claims from it on every chunk.
  struct alignas(64) Share {
    std::atomic<uint64_t> word{0};
  };
  static uint64_t Pack(uint32_t gen, uint32_t front, uint32_t back) {
    return (uint64_t(gen) << 32) | (uint64_t(front) << 16) | back;
  }
  int64_t ClaimFront(int slot, uint32_t gen);
  int64_t ClaimBack(int slot, uint32_t gen);
  // Runs chunks of job `gen` from `slot`'s share, then from the others'; returns chunks run.
  // *total: the job's chunk count.
  int64_t RunJob(int slot, uint32_t gen, int64_t* total);
  void Worker(int slot);

  const int num_threads_;
  const int64_t spin_ns_;
  std::unique_ptr<Share[]> shares_;
  std::vector<std::thread> workers_;

  // The current job (seq_cst atomics: see ParallelFor for the publication order).
  std::atomic<void*> job_obj_{nullptr};
  std::atomic<void (*)(void*, int64_t, int64_t)> job_call_{nullptr};
  std::atomic<int64_t> job_n_{0};
  std::atomic<int64_t> job_chunks_{0};
  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<int64_t> done_chunks_{0};
  alignas(64) std::atomic<bool> busy_{false};  // a ParallelFor is running
  std::atomic<int> invokes_{0};                 // live InvokeScopes
  std::atomic<uint32_t> invoke_first_gen_{0};   // generation_ when the outermost one began
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> n_jobs_{0}, n_wakes_{0}, n_stolen_{0};
  std::mutex mu_;
  std::condition_variable cv_start_, cv_done_;
};

// Runs fn over [0, n) on the pool, or inline when pool is null or has one thread.
inline void ParallelFor(ThreadPool* pool, int64_t n, RangeFn fn, int64_t min_chunk = 1) {
  if (n <= 0) return;
  if (min_chunk < 1) min_chunk = 1;
  if (!pool || pool->num_threads() <= 1 || n < 2 * min_chunk) {
    fn(0, n);
    return;
  }
  pool->ParallelFor(n, fn, min_chunk);
}

}  // namespace tflite_gpu
