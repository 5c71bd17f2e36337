"""A whole inference pipeline on the GPU with bound buffers (zero copy):

  frame (uint8 HWC, on the device) --pyopencl kernel--> normalised float32 BHWC input buffer
      --interpreter.invoke() (input and output bound to OpenCL buffers)--> class scores buffer
      --pyopencl kernel--> top-1 class index (4 bytes: the only thing read back to the host)

The delegate shares pyopencl's command queue (device=queue), so the preprocessing kernel, the
model's kernels and the postprocessing kernel run in order on one queue without host waits in
between. The interpreter's own transfer counter shows it did no host<->device copy.

    python examples/gpu_pipeline.py [MODEL.tflite]

Without a model it builds a small MobileNet v1 (tflite_gpu.testing.zoo). The model must take one
float32 image [1, H, W, 3] and give one float32 score vector [1, N].
"""
import sys

import numpy as np
import pyopencl as cl

import tflite_gpu

PROGRAM = r"""
// A synthetic camera frame, made on the device (in an application it would come from a camera
// or GL interop already on the GPU).
__kernel void make_frame(__global uchar* frame, int h, int w, int seed) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= h) return;
  for (int c = 0; c < 3; ++c) {
    uint v = (uint)(x * 7 + y * 13 + c * 31 + seed * 17);
    v = (v * 2654435761u) >> 24;
    frame[(y * w + x) * 3 + c] = (uchar)v;
  }
}

// Preprocessing: uint8 HWC -> float32 BHWC in [-1, 1] (MobileNet's input range).
__kernel void normalise(__global const uchar* frame, __global float* input, int n) {
  int i = get_global_id(0);
  if (i < n) input[i] = (float)frame[i] / 127.5f - 1.0f;
}

// Postprocessing: index of the largest score (one work item; N is small).
__kernel void argmax(__global const float* scores, int n, __global int* best) {
  int b = 0;
  for (int i = 1; i < n; ++i)
    if (scores[i] > scores[b]) b = i;
  best[0] = b;
}
"""


def main(argv):
    if len(argv) > 1:
        with open(argv[1], "rb") as f:
            model = f.read()
    else:
        from tflite_gpu.testing import zoo
        model = zoo.mobilenet_v1(input_size=64, alpha=0.25, num_classes=10, seed=0)

    # pyopencl queue on the delegate's default device (also where pyopencl alone would not see the GPU,
    # e.g. NVIDIA's driver without an ICD file)
    queue = tflite_gpu.pyopencl_queue()
    ctx = queue.context
    delegate = tflite_gpu.GpuDelegate(device=queue)  # the delegate runs on pyopencl's queue
    interp = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[delegate])
    interp.allocate_tensors()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    _, h, w, c = inp["shape"]
    n_scores = int(np.prod(out["shape"]))
    assert c == 3 and inp["dtype"] == np.float32 and out["dtype"] == np.float32, (inp, out)

    mf = cl.mem_flags
    frame = cl.Buffer(ctx, mf.READ_WRITE, size=h * w * 3)
    input_buf = cl.Buffer(ctx, mf.READ_WRITE, size=h * w * 3 * 4)
    scores_buf = cl.Buffer(ctx, mf.READ_WRITE, size=n_scores * 4)
    best_buf = cl.Buffer(ctx, mf.READ_WRITE, size=4)
    prg = cl.Program(ctx, PROGRAM).build()

    # Bind after modify_graph_with_delegate (done by experimental_delegates), as Metal's call.
    delegate.bind_buffer_to_tensor(inp["index"], input_buf)
    delegate.bind_buffer_to_tensor(out["index"], scores_buf)
    interp.set_allow_buffer_handle_output(True)  # leave the scores in scores_buf

    before = delegate.transfer_stats()
    prg.make_frame(queue, (w, h), None, frame, np.int32(h), np.int32(w), np.int32(1))
    prg.normalise(queue, (h * w * 3,), None, frame, input_buf, np.int32(h * w * 3))
    interp.invoke()
    prg.argmax(queue, (1,), None, scores_buf, np.int32(n_scores), best_buf)
    best = np.empty(1, np.int32)
    cl.enqueue_copy(queue, best, best_buf)  # the final result: 4 bytes
    queue.finish()
    after = delegate.transfer_stats()
    print(f"top-1 class: {int(best[0])}")
    print(f"transfers by the interpreter: {after['host_to_device'] - before['host_to_device']} host->device, "
          f"{after['device_to_host'] - before['device_to_host']} device->host")

    # Check against the ordinary host-copy run (reads the frame back only for this check).
    host_frame = np.empty(h * w * 3, np.uint8)
    cl.enqueue_copy(queue, host_frame, frame)
    scores = np.empty(n_scores, np.float32)
    cl.enqueue_copy(queue, scores, scores_buf)
    queue.finish()
    x = (host_frame.astype(np.float32) / np.float32(127.5) - np.float32(1.0)).reshape(inp["shape"])
    ref = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[tflite_gpu.GpuDelegate(device=queue)])
    ref.allocate_tensors()
    ref.set_tensor(inp["index"], x)
    ref.invoke()
    want = ref.get_tensor(out["index"]).reshape(-1)
    err = float(np.max(np.abs(want - scores)))
    if int(np.argmax(want)) != int(best[0]) or err > 1e-5:
        print(f"MISMATCH with the host-copy run: top-1 {int(np.argmax(want))} vs {int(best[0])}, max |diff| {err}")
        return 1
    print(f"matches the host-copy run (max |diff| {err:.2e})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
