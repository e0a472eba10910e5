#include "ir/graph.h"

namespace onnx_tv::ir {

std::string Node::describe(size_t index) const {
  std::string op = domain.empty() || domain == "ai.onnx" ? op_type : domain + "." + op_type;
  if (!name.empty()) return op + " node '" + name + "'";
  return op + " node #" + std::to_string(index) + " (unnamed)";
}

const Attribute* Node::attribute(const std::string& n) const {
  auto it = attributes.find(n);
  return it == attributes.end() ? nullptr : &it->second;
}

}  // namespace onnx_tv::ir
