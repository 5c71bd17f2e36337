// Custom ops implemented by the host program (HostCustomOp in tflite_gpu/interpreter.h): the
// node's params hold the HostCustomOp; prepare/eval hand it a HostOpContext over the node.
#include "ops/op_registry.h"
#include "runtime/subgraph.h"
#include "tflite_gpu/interpreter.h"

namespace tflite_gpu {
namespace {

class NodeHostContext final : public HostOpContext {
 public:
  explicit NodeHostContext(OpContext& ctx) : ctx_(ctx) {}
  int num_inputs() const override { return ctx_.num_inputs(); }
  const Tensor* input(int i) const override {
    if (i < 0 || i >= ctx_.num_inputs() || !ctx_.has_input(i)) return nullptr;
    return &const_cast<OpContext&>(ctx_).input(i);
  }
  int num_outputs() const override { return ctx_.num_outputs(); }
  Tensor* output(int i) override { return (i < 0 || i >= ctx_.num_outputs()) ? nullptr : &ctx_.output(i); }
  Status SetOutputShape(int i, const Dims& shape) override {
    if (i < 0 || i >= ctx_.num_outputs())
      return ctx_.Error("output " + std::to_string(i) + " out of range (the node has " +
                        std::to_string(ctx_.num_outputs()) + " outputs)");
    return ctx_.SetOutputShape(i, shape);
  }

 private:
  OpContext& ctx_;
};

const HostCustomOp& Op(OpContext& ctx) { return *static_cast<const HostCustomOp*>(ctx.node().params.get()); }

Status Prepare(OpContext& ctx) {
  for (int i = 0; i < ctx.num_outputs(); ++i)
    if (DTypeSize(ctx.output(i).type) == 0)
      return ctx.Error(std::string("output ") + std::to_string(i) + " has type " + DTypeName(ctx.output(i).type) +
                       ", which a host custom op cannot produce");
  const HostCustomOp& op = Op(ctx);
  if (!op.prepare) {
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutputDynamic(i);
    return OkStatus();
  }
  NodeHostContext h(ctx);
  return op.prepare(h);
}

Status Eval(OpContext& ctx) {
  const HostCustomOp& op = Op(ctx);
  if (!op.eval) return ctx.Error("the host custom op has no eval function");
  NodeHostContext h(ctx);
  return op.eval(h);
}

}  // namespace

const OpImpl kHostCustomOpImpl = {nullptr, &Prepare, &Eval, nullptr, false};

}  // namespace tflite_gpu
