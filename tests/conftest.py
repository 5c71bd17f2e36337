import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

# pyopencl (the tests' independent view of OpenCL, and the queues shared with the delegate for
# buffer binding) reads its vendor list once, at its first platform query: register drivers that have
# no ICD file (NVIDIA's on CUDA-only hosts) before any test touches pyopencl, as users are told to.
import tflite_gpu  # noqa: E402

tflite_gpu.expose_unregistered_vendors()
