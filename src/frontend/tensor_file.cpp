// TensorProto files through the same conversion as initializers, so a test's inputs mean
// exactly what the same values would mean inside a model.
#include "frontend/tensor_file.h"

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "frontend/onnx_convert.h"

namespace onnx_tv::frontend {

namespace {

// Round-to-nearest-even float32 -> bfloat16 bits (NaN kept quiet).
uint16_t to_bfloat16_bits(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return uint16_t((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

uint16_t to_half_bits(double d) {
  return std::bit_cast<uint16_t>(static_cast<_Float16>(d));
}

}  // namespace

NamedTensor load_tensor_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot be opened");
  std::ostringstream buf;
  buf << in.rdbuf();
  onnx::TensorProto t;
  if (!t.ParseFromString(buf.str())) throw InputError(path + ": not a serialized TensorProto");
  // A SequenceProto or OptionalProto parses as a TensorProto with fields it does not know, or
  // with no element type; neither is a tensor.
  if (!t.unknown_fields().empty() || t.data_type() == 0) {
    throw Unsupported(path + ": holds no tensor (a sequence, map or optional value?); only "
                      "tensors are modeled");
  }
  if (t.data_type() == onnx::TensorProto::STRING) {
    throw Unsupported(path + ": string tensors are not modeled");
  }
  const detail::TensorSource src{path, std::filesystem::path(path).parent_path().string(),
                                 "tensor '" + t.name() + "'"};
  return {t.name(), detail::convert_tensor(t, src)};
}

void save_tensor_file(const std::string& path, const std::string& name, const ir::ConstTensor& c) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(int(c.dtype));
  for (int64_t d : c.shape) t.add_dims(d);
  switch (c.dtype) {
    case ir::DType::Float:
      for (double v : c.reals) t.add_float_data(float(v));
      break;
    case ir::DType::Double:
      for (double v : c.reals) t.add_double_data(v);
      break;
    case ir::DType::Float16:
      for (double v : c.reals) t.add_int32_data(to_half_bits(v));
      break;
    case ir::DType::BFloat16:
      for (double v : c.reals) t.add_int32_data(to_bfloat16_bits(float(v)));
      break;
    case ir::DType::Int64:
      for (int64_t v : c.ints) t.add_int64_data(v);
      break;
    case ir::DType::UInt32: case ir::DType::UInt64:
      for (int64_t v : c.ints) t.add_uint64_data(uint64_t(v));
      break;
    case ir::DType::Int8: case ir::DType::Int16: case ir::DType::Int32:
    case ir::DType::UInt8: case ir::DType::UInt16: case ir::DType::Bool:
      for (int64_t v : c.ints) t.add_int32_data(int32_t(v));
      break;
    default:
      throw Unsupported(path + ": cannot write a tensor of type " + ir::dtype_name(c.dtype));
  }
  std::ofstream out(path, std::ios::binary);
  if (!out || !t.SerializeToOstream(&out)) throw InputError(path + ": cannot be written");
}

}  // namespace onnx_tv::frontend
