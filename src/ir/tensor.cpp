#include "ir/tensor.h"

#include "common/errors.h"

namespace onnx_tv::ir {

bool is_float(DType t) {
  return t == DType::Float || t == DType::Double || t == DType::Float16 || t == DType::BFloat16;
}

bool is_integer(DType t) {
  switch (t) {
    case DType::UInt8: case DType::Int8: case DType::UInt16: case DType::Int16:
    case DType::Int32: case DType::Int64: case DType::UInt32: case DType::UInt64:
      return true;
    default:
      return false;
  }
}

std::string dtype_name(DType t) {
  switch (t) {
    case DType::Float: return "float";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::UInt16: return "uint16";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    case DType::Double: return "double";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::BFloat16: return "bfloat16";
    default: return "undefined(" + std::to_string(int(t)) + ")";
  }
}

int64_t element_count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

int64_t checked_element_count(const Shape& s, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw InputError(what + " has the negative size " + std::to_string(d) + " in shape " + shape_string(s));
    if (__builtin_mul_overflow(n, d, &n))
      throw InputError(what + " has shape " + shape_string(s) +
                       ", whose element count does not fit a 64-bit integer");
  }
  return n;
}

std::string shape_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::vector<int64_t> strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

Tensor make_tensor(DType dtype, Shape shape, std::vector<solver::Value> data) {
  ONNX_TV_ASSERT(int64_t(data.size()) == element_count(shape),
                 "tensor of shape " + shape_string(shape) + " given " +
                     std::to_string(data.size()) + " values");
  return Tensor{dtype, std::move(shape), std::move(data)};
}

}  // namespace onnx_tv::ir
