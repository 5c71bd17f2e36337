/* STRING tensors through the C API from C11 (tests/test_cpp_example.py builds and runs it), in
 * TFLite's string buffer layout: int32 count n, n + 1 int32 offsets from the buffer start (the last
 * one is the buffer size), then the string bytes.
 *   c_api_strings MODEL  (MODEL: one STRING input [2, 2] -> ... -> one STRING output)
 * Sets the input, checks bad buffers are refused, re-allocates (the strings stay), invokes and
 * prints the output strings as "out: s0|s1|..." for the test to compare with LiteRT's. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tflite_gpu/c_api.h"

#define CHECK(cond)                                              \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "FAILED line %d: %s\n", __LINE__, #cond); \
      return 1;                                                  \
    }                                                            \
  } while (0)

static void put32(unsigned char* p, int32_t v) { memcpy(p, &v, 4); }
static int32_t get32(const unsigned char* p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* Serializes n strings into buf (room for cap bytes); returns the size, 0 when it does not fit. */
static size_t pack(const char* const* s, int32_t n, unsigned char* buf, size_t cap) {
  size_t off = 4 * ((size_t)n + 2);
  int32_t i;
  if (off > cap) return 0;
  put32(buf, n);
  for (i = 0; i < n; ++i) {
    size_t len = strlen(s[i]);
    put32(buf + 4 * (i + 1), (int32_t)off);
    if (off + len > cap) return 0;
    memcpy(buf + off, s[i], len);
    off += len;
  }
  put32(buf + 4 * (n + 1), (int32_t)off);
  return off;
}

int main(int argc, char** argv) {
  static const char* const words[4] = {"alpha", "", "gr\xc3\xbc\xc3\x9f", "z"};
  unsigned char buf[256], bad[256], out[256];
  size_t size, osize;
  int32_t n, i;
  CHECK(argc == 2);
  TfLiteModel* model = TfLiteModelCreateFromFile(argv[1]);
  CHECK(model != NULL);
  TfLiteInterpreter* it = TfLiteInterpreterCreate(model, NULL);
  TfLiteModelDelete(model);
  CHECK(it != NULL);
  TfLiteTensor* in = TfLiteInterpreterGetInputTensor(it, 0);
  CHECK(TfLiteTensorType(in) == kTfLiteString);
  /* before allocation: no buffer yet */
  CHECK(TfLiteTensorByteSize(in) == 0);
  CHECK(TfLiteTensorCopyFromBuffer(in, buf, pack(words, 4, buf, sizeof buf)) == kTfLiteError);
  CHECK(TfLiteInterpreterAllocateTensors(it) == kTfLiteOk);
  /* allocated: four empty strings, header only */
  CHECK(TfLiteTensorByteSize(in) == 4 * (4 + 2));
  CHECK(get32((const unsigned char*)TfLiteTensorData(in)) == 4);

  size = pack(words, 4, buf, sizeof buf);
  CHECK(size == 24 + 5 + 0 + 6 + 1);
  /* bad buffers are refused and leave the tensor as it was */
  memcpy(bad, buf, size);
  put32(bad, 3); /* count differs from the 4 elements */
  CHECK(TfLiteTensorCopyFromBuffer(in, bad, size) == kTfLiteError);
  memcpy(bad, buf, size);
  put32(bad + 8, 60); /* offset 1 past the end */
  CHECK(TfLiteTensorCopyFromBuffer(in, bad, size) == kTfLiteError);
  memcpy(bad, buf, size);
  put32(bad + 12, 25); /* offset 2 before offset 1 */
  CHECK(TfLiteTensorCopyFromBuffer(in, bad, size) == kTfLiteError);
  CHECK(TfLiteTensorCopyFromBuffer(in, buf, size - 1) == kTfLiteError); /* last offset != size */
  CHECK(TfLiteTensorCopyFromBuffer(in, buf, 10) == kTfLiteError);       /* shorter than the offsets */
  CHECK(TfLiteTensorByteSize(in) == 24);

  CHECK(TfLiteTensorCopyFromBuffer(in, buf, size) == kTfLiteOk);
  CHECK(TfLiteTensorByteSize(in) == size);
  CHECK(memcmp(TfLiteTensorData(in), buf, size) == 0);
  /* allocating again keeps the strings (as TFLite) */
  CHECK(TfLiteInterpreterAllocateTensors(it) == kTfLiteOk);
  CHECK(TfLiteTensorByteSize(in) == size);
  CHECK(memcmp(TfLiteTensorData(in), buf, size) == 0);

  CHECK(TfLiteInterpreterInvoke(it) == kTfLiteOk);
  const TfLiteTensor* o = TfLiteInterpreterGetOutputTensor(it, 0);
  CHECK(TfLiteTensorType(o) == kTfLiteString);
  osize = TfLiteTensorByteSize(o);
  CHECK(osize >= 8 && osize <= sizeof out);
  CHECK(TfLiteTensorCopyToBuffer(o, out, osize - 1) == kTfLiteError);
  CHECK(TfLiteTensorCopyToBuffer(o, out, osize) == kTfLiteOk);
  n = get32(out);
  CHECK(n >= 0 && (size_t)get32(out + 4 * (n + 1)) == osize);
  printf("out: ");
  for (i = 0; i < n; ++i) {
    int32_t a = get32(out + 4 * (i + 1)), b = get32(out + 4 * (i + 2));
    CHECK(a <= b && (size_t)b <= osize);
    printf("%s%.*s", i ? "|" : "", (int)(b - a), (const char*)out + a);
  }
  printf("\nall ok\n");
  TfLiteInterpreterDelete(it);
  return 0;
}
