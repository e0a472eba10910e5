#pragma once
// A tensor of symbolic elements: static shape, element type, row-major values.
#include <cstdint>
#include <string>
#include <vector>

#include "solver/context.h"

namespace onnx_tv::ir {

// Element types, with ONNX's TensorProto numbering so the frontend maps them directly.
enum class DType : int {
  Undefined = 0, Float = 1, UInt8 = 2, Int8 = 3, UInt16 = 4, Int16 = 5, Int32 = 6, Int64 = 7,
  String = 8, Bool = 9, Float16 = 10, Double = 11, UInt32 = 12, UInt64 = 13, BFloat16 = 16,
};

bool is_float(DType t);
bool is_integer(DType t);  // signed or unsigned integers, not Bool
std::string dtype_name(DType t);

using Shape = std::vector<int64_t>;

int64_t element_count(const Shape& s);
// The element count, or InputError naming `what` when it does not fit int64 (a declared 2^62
// would wrap past every limit).
int64_t checked_element_count(const Shape& s, const std::string& what);
std::string shape_string(const Shape& s);  // "[2, 3]"
// Row-major strides of s.
std::vector<int64_t> strides(const Shape& s);

struct Tensor {
  DType dtype = DType::Undefined;
  Shape shape;
  std::vector<solver::Value> data;  // element_count(shape) values, row-major

  int64_t rank() const { return int64_t(shape.size()); }
  int64_t size() const { return int64_t(data.size()); }
};

Tensor make_tensor(DType dtype, Shape shape, std::vector<solver::Value> data);

}  // namespace onnx_tv::ir
