/* TFLITE_GPU_API marks the library's public API. The library is built with hidden visibility by
 * default (-fvisibility=hidden): only what carries this mark is exported from libtflite_gpu.so;
 * the engine's internals (subgraphs, the model reader, op kernels, the OpenCL layer) are not.
 * Includable from C and C++. */
#ifndef TFLITE_GPU_EXPORT_H_
#define TFLITE_GPU_EXPORT_H_

#if defined(_WIN32)
#if defined(TFLITE_GPU_BUILDING_LIBRARY)
#define TFLITE_GPU_API __declspec(dllexport)
#else
#define TFLITE_GPU_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define TFLITE_GPU_API __attribute__((visibility("default")))
#else
#define TFLITE_GPU_API
#endif

#endif /* TFLITE_GPU_EXPORT_H_ */
