#include "ir/well_formed.h"

#include <unordered_set>

#include "common/errors.h"

namespace onnx_tv::ir {

void check_well_formed(const Graph& g) {
  std::unordered_set<std::string> defined;
  for (const auto& vi : g.inputs) defined.insert(vi.name);
  for (const auto& [name, c] : g.initializers) defined.insert(name);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (const auto& in : n.inputs)
      if (!in.empty() && !defined.count(in))
        throw InputError(g.file + ": " + n.describe(i) + " reads '" + in +
                         "', which no graph input, initializer or earlier node defines");
    for (const auto& out : n.outputs)
      if (!out.empty() && !defined.insert(out).second)
        throw InputError(g.file + ": " + n.describe(i) + " defines '" + out +
                         "', which is already defined (ONNX values are defined once)");
  }
  for (const auto& vi : g.outputs)
    if (!defined.count(vi.name))
      throw InputError(g.file + ": graph output '" + vi.name +
                       "' is not defined by any node, input or initializer");
}

}  // namespace onnx_tv::ir
