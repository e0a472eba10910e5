#pragma once
// An attribute written as text that two attributes share only when they are equal (every float
// in its exact hexadecimal form), for the texts that decide whether two pieces of a plan are
// the same (stage obligations, repeated layers).
#include <string>

#include "ir/graph.h"

namespace onnx_tv::ir {

// The exact value of a double ("%a").
std::string exact_text(double d);

// Appends " name=kind:value" to `out`. False for a graph attribute, which has no such text.
bool append_attribute(std::string& out, const std::string& name, const Attribute& a);

// A value's declared type and shape: "<dtype,d0,d1,...>", "?name" for a symbolic size.
std::string value_info_text(const ValueInfo& vi);

// Appends a constant's type, shape and every value.
void append_constant(std::string& out, const ConstTensor& c);

}  // namespace onnx_tv::ir
