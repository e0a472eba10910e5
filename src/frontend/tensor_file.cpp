// TensorProto files through the same conversion as initializers, so a test's inputs mean
// exactly what the same values would mean inside a model.
#include "frontend/tensor_file.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "frontend/onnx_convert.h"
#include "frontend/regular_file.h"

namespace onnx_tv::frontend {

namespace {

// Round-to-nearest-even float32 -> bfloat16 bits (NaN kept quiet).
uint16_t to_bfloat16_bits(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return uint16_t((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

// Round-to-nearest-even double -> float16 bits, rounded once from the double (never through
// float, which would round twice); written out because not every compiler has _Float16.
uint16_t to_half_bits(double d) {
  const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  if (std::isnan(d)) return sign | 0x7e00;
  const double a = std::fabs(d);
  if (a == 0) return sign;
  int e = 0;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  const int k = e - 1;
  if (k > 15) return sign | 0x7c00;  // past the largest binade: infinity
  // Count a in units of the half's last mantissa bit (2^-24 below the normal range) and round
  // to the nearest even count; scaling by a power of two is exact.
  const int ulp = std::max(k, -14) - 10;
  const auto q = uint32_t(std::nearbyint(std::ldexp(a, -ulp)));
  // Subnormals are the count itself (1024 is the smallest normal's encoding); a normal count
  // is in [1024, 2048], and 2048 carries into the exponent, up to infinity past 65504.
  const uint32_t bits = k < -14 ? q : (uint32_t(k + 15) << 10) + (q - 1024);
  return uint16_t(sign | bits);
}

}  // namespace

NamedTensor load_tensor_file(const std::string& path) {
  detail::RegularFile file(path, "a TensorProto file");
  const std::string bytes =
      file.read_all(detail::kMaxModelBytes, "protobuf reads at most 2 GiB in one message");
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes)) throw InputError(path + ": not a serialized TensorProto");
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
