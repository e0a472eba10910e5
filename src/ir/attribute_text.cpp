#include "ir/attribute_text.h"

#include <cstdio>

#include "ir/tensor_util.h"

namespace onnx_tv::ir {

std::string exact_text(double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", d);
  return buf;
}

std::string value_info_text(const ValueInfo& vi) {
  std::string s = "<" + std::to_string(int(vi.dtype));
  if (vi.shape)
    for (const auto& d : *vi.shape) s += "," + (d.size ? std::to_string(*d.size) : "?" + d.symbol);
  return s + ">";
}

void append_constant(std::string& out, const ConstTensor& c) {
  out += std::to_string(int(c.dtype)) + shape_string(c.shape) + (c.exact ? "x" : "") + "[";
  for (double v : c.reals) out += exact_text(v) + ",";
  for (int64_t v : c.ints) out += std::to_string(v) + ",";
  out += "]";
}

bool append_attribute(std::string& out, const std::string& name, const Attribute& a) {
  out += " " + name + "=" + std::to_string(int(a.kind)) + ":";
  switch (a.kind) {
    case Attribute::Kind::Int: out += std::to_string(a.i); break;
    case Attribute::Kind::Float: out += exact_text(a.f); break;
    case Attribute::Kind::String: out += std::to_string(a.s.size()) + ":" + a.s; break;
    case Attribute::Kind::Ints:
      for (int64_t v : a.ints) out += std::to_string(v) + ",";
      break;
    case Attribute::Kind::Floats:
      for (double v : a.floats) out += exact_text(v) + ",";
      break;
    case Attribute::Kind::Strings:
      for (const auto& v : a.strings) out += std::to_string(v.size()) + ":" + v + ",";
      break;
    case Attribute::Kind::Tensor:
      if (a.tensor) append_constant(out, *a.tensor);
      break;
    case Attribute::Kind::Graph: return false;
  }
  return true;
}

}  // namespace onnx_tv::ir
