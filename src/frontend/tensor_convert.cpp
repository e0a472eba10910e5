// TensorProto -> ir::ConstTensor. Float values are kept as the exact double of the stored
// float (every float16, bfloat16 and float32 is a double exactly), so the meaning rule of
// plan-format section 1 can be applied later without any rounding having happened here.
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "common/errors.h"
#include "frontend/onnx_convert.h"
#include "frontend/regular_file.h"

namespace onnx_tv::frontend::detail {

namespace {

[[noreturn]] void fail(const TensorSource& src, const std::string& msg) {
  throw InputError(src.file + ": " + src.what + ": " + msg);
}

// Little-endian unsigned integer of `n` bytes at p, independent of the host's byte order.
uint64_t read_le(const char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t(uint8_t(p[i])) << (8 * i);
  return v;
}

size_t element_size(ir::DType t) {
  switch (t) {
    case ir::DType::UInt8: case ir::DType::Int8: case ir::DType::Bool: return 1;
    case ir::DType::UInt16: case ir::DType::Int16:
    case ir::DType::Float16: case ir::DType::BFloat16: return 2;
    case ir::DType::Int32: case ir::DType::UInt32: case ir::DType::Float: return 4;
    case ir::DType::Int64: case ir::DType::UInt64: case ir::DType::Double: return 8;
    default: return 0;
  }
}

// The stored bytes of an external tensor (ONNX external data: location, offset, length),
// resolved relative to the model's folder. `expected` is the byte size the tensor's shape and
// type give; a range of another length is an error before anything is read.
std::string read_external(const onnx::TensorProto& t, const TensorSource& src, uint64_t expected) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoll(kv.value());
      else if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      fail(src, "external data entry '" + kv.key() + "' is not an integer: '" + kv.value() + "'");
    }
  }
  if (location.empty()) fail(src, "external data without a 'location'");
  if (offset < 0) fail(src, "external data offset " + std::to_string(offset) + " is negative");
  const std::filesystem::path path = std::filesystem::path(src.base_dir) / location;
  std::optional<RegularFile> file;
  try {
    file.emplace(path.string(), "an external data file");
  } catch (const InputError& e) {
    fail(src, "external data: " + e.message());
  }
  const uint64_t size = file->size();
  if (length < 0) length = uint64_t(offset) <= size ? int64_t(size - uint64_t(offset)) : 0;
  if (uint64_t(offset) > size || uint64_t(length) > size - uint64_t(offset)) {
    fail(src, "external data range [" + std::to_string(offset) + ", " + std::to_string(offset) +
                  " + " + std::to_string(length) + ") lies outside '" + path.string() + "' (" +
                  std::to_string(size) + " bytes)");
  }
  if (uint64_t(length) != expected) {
    fail(src, "external data holds " + std::to_string(length) + " bytes, expected " +
                  std::to_string(expected) + " for its shape and element type");
  }
  try {
    return file->read_range(uint64_t(offset), uint64_t(length));
  } catch (const InputError& e) {
    fail(src, "external data: " + e.message());
  }
}

// A constant made dense from a sparse tensor holds at most this many elements (2 GiB of
// doubles): its size is not backed by data in the file, so it is bounded here.
constexpr int64_t kMaxSparseElements = int64_t(1) << 28;

// The tensor's dimensions into `shape`, and their element count; InputError on a negative
// dimension or a count past kMaxElements.
int64_t checked_shape(const google::protobuf::RepeatedField<int64_t>& dims,
                      const TensorSource& src, ir::Shape& shape) {
  for (int64_t d : dims) {
    if (d < 0) fail(src, "negative dimension " + std::to_string(d));
    shape.push_back(d);
  }
  const std::optional<int64_t> n = bounded_element_count(shape);
  if (!n) {
    fail(src, "shape " + ir::shape_string(shape) + " holds more than 2^48 elements (" +
                  std::to_string(kMaxElements) + "), more than any tensor onnx-tv reads");
  }
  return *n;
}

// Decodes one element of raw bytes into the tensor's reals or ints.
void push_raw(ir::ConstTensor& c, uint64_t bits, const TensorSource& src) {
  switch (c.dtype) {
    case ir::DType::Float: c.reals.push_back(std::bit_cast<float>(uint32_t(bits))); break;
    case ir::DType::Double: c.reals.push_back(std::bit_cast<double>(bits)); break;
    case ir::DType::Float16: c.reals.push_back(half_to_double(uint16_t(bits))); break;
    case ir::DType::BFloat16: c.reals.push_back(bfloat16_to_double(uint16_t(bits))); break;
    case ir::DType::Int8: c.ints.push_back(int8_t(uint8_t(bits))); break;
    case ir::DType::Int16: c.ints.push_back(int16_t(uint16_t(bits))); break;
    case ir::DType::Int32: c.ints.push_back(int32_t(uint32_t(bits))); break;
    case ir::DType::Int64: c.ints.push_back(int64_t(bits)); break;
    case ir::DType::UInt8: case ir::DType::UInt16: case ir::DType::UInt32:
      c.ints.push_back(int64_t(bits));
      break;
    case ir::DType::UInt64:
      if (bits > uint64_t(std::numeric_limits<int64_t>::max())) {
        fail(src, "uint64 value " + std::to_string(bits) + " is beyond the supported range");
      }
      c.ints.push_back(int64_t(bits));
      break;
    case ir::DType::Bool: c.ints.push_back(bits != 0 ? 1 : 0); break;
    default: fail(src, "unsupported element type " + ir::dtype_name(c.dtype));
  }
}

// Values stored in the typed fields. ONNX puts int8..uint16, bool, float16 and bfloat16 in
// int32_data (the 16-bit floats as their bit patterns), uint32/uint64 in uint64_data.
void read_typed(const onnx::TensorProto& t, ir::ConstTensor& c, const TensorSource& src) {
  switch (c.dtype) {
    case ir::DType::Float:
      for (float f : t.float_data()) c.reals.push_back(f);
      break;
    case ir::DType::Double:
      for (double d : t.double_data()) c.reals.push_back(d);
      break;
    case ir::DType::Float16: case ir::DType::BFloat16:
      for (int32_t v : t.int32_data()) push_raw(c, uint64_t(uint32_t(v)) & 0xffff, src);
      break;
    case ir::DType::Int8: case ir::DType::Int16: case ir::DType::Int32:
    case ir::DType::UInt8: case ir::DType::UInt16:
      for (int32_t v : t.int32_data()) c.ints.push_back(v);
      break;
    case ir::DType::Bool:
      for (int32_t v : t.int32_data()) c.ints.push_back(v != 0 ? 1 : 0);
      break;
    case ir::DType::Int64:
      for (int64_t v : t.int64_data()) c.ints.push_back(v);
      break;
    case ir::DType::UInt32: case ir::DType::UInt64:
      for (uint64_t v : t.uint64_data()) push_raw(c, v, src);
      break;
    default: fail(src, "unsupported element type " + ir::dtype_name(c.dtype));
  }
}

}  // namespace

std::optional<int64_t> bounded_element_count(const std::vector<int64_t>& dims) {
  for (int64_t d : dims) {
    if (d == 0) return 0;
  }
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d > kMaxElements || n > kMaxElements / d) return std::nullopt;
    n *= d;
  }
  return n;
}

double half_to_double(uint16_t bits) {
  const int sign = bits >> 15, exp = (bits >> 10) & 0x1f, mant = bits & 0x3ff;
  double v;
  if (exp == 0) v = std::ldexp(double(mant), -24);                        // zero, subnormal
  else if (exp == 31) v = mant ? std::numeric_limits<double>::quiet_NaN()
                               : std::numeric_limits<double>::infinity();
  else v = std::ldexp(double(mant | 0x400), exp - 25);                    // 1.mant * 2^(e-15)
  return sign ? -v : v;
}

double bfloat16_to_double(uint16_t bits) {
  const int sign = bits >> 15, exp = (bits >> 7) & 0xff, mant = bits & 0x7f;
  double v;
  if (exp == 0) v = std::ldexp(double(mant), -133);                       // zero, subnormal
  else if (exp == 255) v = mant ? std::numeric_limits<double>::quiet_NaN()
                                : std::numeric_limits<double>::infinity();
  else v = std::ldexp(double(mant | 0x80), exp - 134);                    // 1.mant * 2^(e-127)
  return sign ? -v : v;
}

ir::ConstTensor convert_tensor(const onnx::TensorProto& t, const TensorSource& src) {
  ir::ConstTensor c;
  c.dtype = ir::DType(t.data_type());
  if (c.dtype == ir::DType::String) {
    fail(src, "string tensors are not supported (only numeric and bool tensors are)");
  }
  if (element_size(c.dtype) == 0) {
    fail(src, "unsupported element type " + std::to_string(t.data_type()) +
                  " (expected a float, integer or bool type)");
  }
  const int64_t n = checked_shape(t.dims(), src, c.shape);

  const bool external = t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL;
  if (external || t.has_raw_data()) {
    const size_t es = element_size(c.dtype);
    const std::string bytes = external ? read_external(t, src, uint64_t(n) * es) : t.raw_data();
    if (bytes.size() != size_t(n) * es) {
      fail(src, "holds " + std::to_string(bytes.size()) + " bytes of data, expected " +
                    std::to_string(n) + " elements of " + std::to_string(es) + " bytes for shape " +
                    ir::shape_string(c.shape));
    }
    for (int64_t i = 0; i < n; ++i) push_raw(c, read_le(bytes.data() + i * es, es), src);
  } else {
    read_typed(t, c, src);
  }
  const size_t got = ir::is_float(c.dtype) ? c.reals.size() : c.ints.size();
  if (got != size_t(n)) {
    fail(src, "holds " + std::to_string(got) + " values, expected " + std::to_string(n) +
                  " for shape " + ir::shape_string(c.shape));
  }
  return c;
}

ir::ConstTensor convert_sparse_tensor(const onnx::SparseTensorProto& t,
                                      const TensorSource& src) {
  ir::ConstTensor values = convert_tensor(t.values(), src);
  ir::ConstTensor indices = convert_tensor(t.indices(), src);
  ir::ConstTensor c;
  c.dtype = values.dtype;
  const int64_t n = checked_shape(t.dims(), src, c.shape);
  if (n > kMaxSparseElements) {
    throw Unsupported(src.file + ": " + src.what + ": a sparse tensor of shape " +
                      ir::shape_string(c.shape) + " is made dense, and " + std::to_string(n) +
                      " elements is more than onnx-tv holds in one constant (" +
                      std::to_string(kMaxSparseElements) + ")");
  }
  const bool is_real = ir::is_float(c.dtype);
  if (is_real) c.reals.assign(size_t(n), 0.0);
  else c.ints.assign(size_t(n), 0);
  const int64_t nnz = int64_t(is_real ? values.reals.size() : values.ints.size());
  const int64_t rank = int64_t(c.shape.size());
  // Indices are either linear ([nnz]) or coordinates ([nnz, rank]).
  const bool linear = indices.shape.size() == 1;
  if (int64_t(indices.ints.size()) != nnz * (linear ? 1 : rank)) {
    fail(src, "sparse tensor has " + std::to_string(nnz) + " values but indices of shape " +
                  ir::shape_string(indices.shape));
  }
  const auto st = ir::strides(c.shape);
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t pos = 0;
    bool in_range = true;
    if (linear) {
      pos = indices.ints[size_t(k)];
    } else {
      for (int64_t j = 0; j < rank; ++j) {
        const int64_t x = indices.ints[size_t(k * rank + j)];
        in_range = in_range && x >= 0 && x < c.shape[size_t(j)];
        pos += x * st[size_t(j)];
      }
    }
    if (!in_range || pos < 0 || pos >= n) fail(src, "sparse index out of range for shape " +
                                           ir::shape_string(c.shape));
    if (is_real) c.reals[size_t(pos)] = values.reals[size_t(k)];
    else c.ints[size_t(pos)] = values.ints[size_t(k)];
  }
  return c;
}

}  // namespace onnx_tv::frontend::detail
