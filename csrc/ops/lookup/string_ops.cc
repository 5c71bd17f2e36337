// HASHTABLE_LOOKUP and SKIP_GRAM (lookup family): the two older ops that read or write STRING
// tensors (layout: runtime/string_tensor.h). CPU only (TFLite's GPU delegate takes neither); one
// plain kernel each, which is also the reference kernel (eval_ref nullptr: not hot ops).
//
// Semantics (TFLite's hashtable_lookup.cc / skip_gram.cc, LiteRT 2.3):
//  * HASHTABLE_LOOKUP(lookup [n] INT32, keys [k] INT32, values [k, ...]) -> (output, hits [n]
//    UINT8). Each lookup value is found among the keys by C's bsearch over the keys as they are
//    (sorted keys expected; unsorted keys give what glibc's bisection gives, as in LiteRT) with
//    TFLite's comparator a - b in wrapping int32. Found: the value row (hit 1); not found: a zero
//    row / an empty string (hit 0). Non-string values: output [n] ++ values.shape[1:] of the
//    values' type. STRING values: output [n], the idx-th string of the values. k = 0 is an error
//    at invoke, as in LiteRT.
//  * SKIP_GRAM(input STRING, ngram_size, max_skip_size, include_all_ngrams) -> STRING [m]: the
//    first string of the input split into words at C-locale white space as TFLite splits it (a
//    word is cut at every white-space byte after the first byte, and kept when it is non-empty and
//    its first byte is not white space, so a leading space drops the first word, as in LiteRT);
//    then every n-gram of words whose consecutive words are at most max_skip_size words apart,
//    joined by one space, in TFLite's depth-first order; n == ngram_size, or 1..ngram_size when
//    include_all_ngrams. Fewer words than ngram_size: no output strings. Unlike TFLite, a search
//    passing 2^28 steps or an output passing the STRING layout's 2 GiB is an error at invoke
//    (TFLite would run for hours, or fail to write the output).
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "runtime/string_tensor.h"
#include "runtime/subgraph.h"

namespace tflite_gpu {
namespace {

// ---------------------------------------------------------------- HASHTABLE_LOOKUP
Status PrepareHashtableLookup(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 3, 2, 2));
  for (int i = 0; i < 3; ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is omitted");
  const Tensor& lookup = ctx.input(0);
  const Tensor& keys = ctx.input(1);
  const Tensor& values = ctx.input(2);
  TFG_RETURN_IF_ERROR(ctx.CheckType(lookup, DType::kInt32, "the lookup"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(keys, DType::kInt32, "the keys"));
  if (lookup.shape.size() != 1) return ctx.Error("the lookup must be 1-D, got shape " + DimsToString(lookup.shape));
  if (keys.shape.size() != 1) return ctx.Error("the keys must be 1-D, got shape " + DimsToString(keys.shape));
  if (values.shape.empty()) return ctx.Error("the values must have at least one dimension");
  if (keys.shape[0] != values.shape[0])
    return ctx.Error("there are " + std::to_string(keys.shape[0]) + " keys but " + std::to_string(values.shape[0]) +
                     " value rows");
  const bool str = values.type == DType::kString;
  if (!str && (DTypeSize(values.type) == 0 || DTypePackedBits(values.type) || values.type == DType::kResource))
    return ctx.Error(std::string("values of type ") + DTypeName(values.type) + " are not supported");
  Tensor& out = ctx.output(0);
  if (out.type != values.type)
    return ctx.Error(std::string("the output has type ") + DTypeName(out.type) + " but the values have type " +
                     DTypeName(values.type));
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.output(1), DType::kUInt8, "the hits output"));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(1, Dims{lookup.shape[0]}));
  Dims os{lookup.shape[0]};
  if (!str) os.insert(os.end(), values.shape.begin() + 1, values.shape.end());
  return ctx.SetOutputShape(0, os);
}

// glibc's bsearch bisection with TFLite's comparator (*a - *b on int).
int64_t BisectKeys(int32_t v, const int32_t* keys, size_t n) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const int32_t c = int32_t(uint32_t(v) - uint32_t(keys[mid]));
    if (c < 0)
      hi = mid;
    else if (c > 0)
      lo = mid + 1;
    else
      return int64_t(mid);
  }
  return -1;
}

Status EvalHashtableLookup(OpContext& ctx) {
  const Tensor& lookup = ctx.input(0);
  const Tensor& keys = ctx.input(1);
  const Tensor& values = ctx.input(2);
  Tensor& out = ctx.output(0);
  uint8_t* hits = ctx.output(1).as<uint8_t>();
  const int64_t rows = values.shape[0];
  if (rows == 0) return ctx.Error("the keys and values are empty (TFLite requires at least one row)");
  const int64_t n = lookup.shape[0];
  const int32_t* lk = lookup.as<int32_t>();
  const int32_t* ky = keys.as<int32_t>();
  if (values.type == DType::kString) {
    if (StringCount(values) != values.num_elements()) return ctx.Error("the values hold no strings");
    std::vector<std::string_view> got(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t idx = BisectKeys(lk[i], ky, size_t(rows));
      hits[i] = idx >= 0 ? 1 : 0;
      if (idx >= 0) got[size_t(i)] = StringAt(values, idx);
    }
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, Dims{int32_t(n)}));
    return WriteStrings(out, got);
  }
  const size_t row_bytes = size_t(values.num_elements() / rows) * DTypeSize(values.type);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t idx = BisectKeys(lk[i], ky, size_t(rows));
    uint8_t* dst = out.data + size_t(i) * row_bytes;
    if (idx >= 0) {
      if (row_bytes) std::memcpy(dst, values.data + size_t(idx) * row_bytes, row_bytes);
      hits[i] = 1;
    } else {
      if (row_bytes) std::memset(dst, 0, row_bytes);
      hits[i] = 0;
    }
  }
  return OkStatus();
}

// ---------------------------------------------------------------- SKIP_GRAM
struct SkipGramParams {
  int32_t ngram_size = 0, max_skip_size = 0;
  bool include_all = false;
};

Status ParseSkipGram(const OptionsView& o, Node& n) {
  auto p = std::make_shared<SkipGramParams>();
  if (o.table.valid()) {
    p->ngram_size = o.Get<int32_t>(0, 0);
    p->max_skip_size = o.Get<int32_t>(1, 0);
    p->include_all = o.GetBool(2, false);
  }
  n.params = p;
  return OkStatus();
}

Status PrepareSkipGram(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("the input is omitted");
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.input(0), DType::kString, "the input"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.output(0), DType::kString, "the output"));
  const SkipGramParams& p = ctx.node().P<SkipGramParams>();
  if (p.ngram_size < 0) return ctx.Error("ngram_size is negative (" + std::to_string(p.ngram_size) + ")");
  ctx.SetOutputDynamic(0);
  return OkStatus();
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

Status EvalSkipGram(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  const SkipGramParams& p = ctx.node().P<SkipGramParams>();
  if (StringCount(in) < 1) return ctx.Error("the input holds no string");
  const std::string_view s = StringAt(in, 0);
  std::vector<std::string_view> words;
  size_t prev = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    if (!IsSpace(s[i])) continue;
    if (i > prev && !IsSpace(s[prev])) words.push_back(s.substr(prev, i - prev));
    prev = i + 1;
  }
  if (s.size() > prev) words.push_back(s.substr(prev));

  // The grams go straight into one byte buffer; the output's STRING layout allows 2 GiB. The
  // search visits partial n-grams that may never complete (exponential in the word count for a
  // large ngram_size and max_skip_size, as in TFLite): bounded at 2^28 steps (a second or so) so
  // a hostile model and sentence give an error, not an endless invoke. Each step emits at most
  // one gram, so the bound only refuses outputs of over 2^27 grams or searches mostly of dead ends.
  std::string blob;
  std::vector<size_t> ends;
  uint64_t layout = 8, steps = 0;
  constexpr uint64_t kMaxLayout = uint64_t(std::numeric_limits<int32_t>::max());
  constexpr uint64_t kMaxSteps = uint64_t(1) << 28;
  const int n = p.ngram_size;
  const int num_words = int(words.size());
  if (num_words >= n) {
    std::vector<int> stack(size_t(std::max(n, 1)), 0);
    auto step_in = [&](int d) {
      if (d < n && stack[size_t(d)] + 1 < num_words) {
        if (d == 0) return true;
        if (stack[size_t(d)] - stack[size_t(d) - 1] <= p.max_skip_size) return true;
      }
      return false;
    };
    auto include = [&](int size) { return size > 0 && (p.include_all ? size <= n : size == n); };
    int d = 1;
    while (d >= 0) {
      if (++steps > kMaxSteps)
        return ctx.Error("the n-gram search of " + std::to_string(num_words) + " words (ngram_size " +
                         std::to_string(n) + ", max_skip_size " + std::to_string(p.max_skip_size) +
                         ") passed 2^28 steps");
      if (step_in(d)) {
        ++stack[size_t(d)];
        ++d;
        if (d < n) stack[size_t(d)] = stack[size_t(d) - 1];
      } else {
        if (include(d)) {
          uint64_t len = uint64_t(d - 1);
          for (int i = 0; i < d; ++i) len += words[size_t(stack[size_t(i)])].size();
          layout += 4 + len;
          if (layout > kMaxLayout)
            return ctx.Error("the n-grams would need more than 2 GiB (the STRING layout's int32 offsets)");
          for (int i = 0; i < d; ++i) {
            if (i) blob.push_back(' ');
            blob.append(words[size_t(stack[size_t(i)])]);
          }
          ends.push_back(blob.size());
        }
        --d;
      }
    }
  }
  std::vector<std::string_view> views(ends.size());
  for (size_t i = 0, a = 0; i < ends.size(); a = ends[i], ++i) views[i] = std::string_view(blob).substr(a, ends[i] - a);
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, Dims{int32_t(views.size())}));
  return WriteStrings(ctx.output(0), views);
}

}  // namespace

const OpImpl kOp_HASHTABLE_LOOKUP = {nullptr, PrepareHashtableLookup, EvalHashtableLookup, nullptr, false};
const OpImpl kOp_SKIP_GRAM = {ParseSkipGram, PrepareSkipGram, EvalSkipGram, nullptr, false};

}  // namespace tflite_gpu
