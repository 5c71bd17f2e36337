// State one interpreter shares between its subgraphs: the subgraph list (control-flow ops call
// other subgraphs), TFLite's resource variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE)
// keyed by (container, shared_name), which CALL_ONCE init subgraphs have run, and TFLite's
// hashtables (HASHTABLE / HASHTABLE_IMPORT / HASHTABLE_FIND / HASHTABLE_SIZE) keyed by table_id.
//
// Lifetimes follow LiteRT 2.3 (measured with its Python interpreter): resource variables and the
// CALL_ONCE "done" marks live as long as the interpreter; they persist across invokes and across
// signature runners, and reset_all_variables() leaves them alone (it resets the is_variable
// tensors, e.g. LSTM state, only).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tflite_gpu/types.h"

namespace tflite_gpu {

class Subgraph;

struct ResourceVariable {
  bool initialized = false;
  DType type = DType::kFloat32;
  Dims shape;
  std::vector<uint8_t> data;
};

// A loop-carried value of WHILE (a body output fed back as the next iteration's input) may not
// exceed this many bytes: a body that grows shapes without bound stops with a clear error
// instead of eating memory. Override with the environment variable
// TFLITE_GPU_MAX_LOOP_TENSOR_BYTES (read when the interpreter is built).
constexpr size_t kDefaultMaxLoopTensorBytes = size_t(1) << 30;  // 1 GiB

// WHILE runs until its cond says stop, as in TFLite: a model can loop forever (models are
// programs). A host that runs untrusted models (the fuzzer does) can bound each WHILE node's
// iterations per invoke with TFLITE_GPU_MAX_WHILE_ITERATIONS (read when the interpreter is built;
// unset or 0: no bound); past it the invoke fails with an error naming the node.

// TFLite's hashtable resource (HASHTABLE and friends), defined in ops/lookup/hashtable.cc.
struct HashtableResource;

struct SharedState {
  std::vector<std::unique_ptr<Subgraph>>* subgraphs = nullptr;
  std::map<std::pair<std::string, std::string>, int32_t> resource_ids;  // (container, shared_name)
  std::map<int32_t, ResourceVariable> variables;                        // resource id -> value
  std::set<int> initialized_subgraphs;                                  // CALL_ONCE
  // Hashtables by table_id (HASHTABLE's option): like the variables they live as long as the
  // interpreter, across invokes, subgraphs and signature runners.
  std::map<int32_t, std::shared_ptr<HashtableResource>> hashtables;
  size_t max_loop_tensor_bytes = kDefaultMaxLoopTensorBytes;
  uint64_t max_while_iterations = 0;  // 0: unbounded
  // The model's flatbuffer bytes (owned by the FlatBufferModel, which outlives the interpreter)
  // and their SHA-256 (hex), computed on first use by the GPU delegate's serialization key.
  const uint8_t* model_data = nullptr;
  size_t model_size = 0;
  std::string model_sha256;

  Subgraph* subgraph(int i) const {
    return (subgraphs && i >= 0 && size_t(i) < subgraphs->size()) ? (*subgraphs)[size_t(i)].get() : nullptr;
  }
};

}  // namespace tflite_gpu
