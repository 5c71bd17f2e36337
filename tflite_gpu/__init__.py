"""tflite_gpu: run TensorFlow Lite models on CPU kernels and, through a GPU delegate, on OpenCL devices."""
from . import _core
from ._paths import get_cmake_dir, get_include, get_library_dir
from .delegate import (CompatibilityList, ExperimentalFlags, GpuDelegate, GpuDelegateOptions,
                       InferencePreference, InferencePriority, WaitType, list_devices)
from .interpreter import (CustomOp, Delegate, Interpreter, InterpreterError, InterpreterWithCustomOps, OpResolverType,
                          SignatureRunner, load_delegate)
from .opencl_share import expose_unregistered_vendors, pyopencl_queue

__version__ = "0.1.0"


def supported_ops():
    """Every op of the engine's single op table: name, builtin code, max version, family, kernels."""
    return _core.supported_ops()


__all__ = ["CompatibilityList", "ExperimentalFlags", "GpuDelegate", "GpuDelegateOptions",
           "InferencePreference", "InferencePriority", "WaitType", "list_devices",
           "get_cmake_dir", "get_include", "get_library_dir", "Interpreter", "OpResolverType", "SignatureRunner",
           "InterpreterWithCustomOps", "CustomOp", "Delegate", "InterpreterError", "load_delegate", "supported_ops", "__version__",
           "pyopencl_queue", "expose_unregistered_vendors"]
