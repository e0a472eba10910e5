#include "ir/producers.h"

#include <string>
#include <unordered_map>

namespace onnx_tv::ir {

InputProducers input_producers(const Graph& g) {
  std::unordered_map<std::string, size_t> producer;
  producer.reserve(g.nodes.size() * 2);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& out : g.nodes[i].outputs)
      if (!out.empty()) producer[out] = i;
  InputProducers table(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    table[i].reserve(g.nodes[i].inputs.size());
    for (const auto& in : g.nodes[i].inputs) {
      auto p = in.empty() ? producer.end() : producer.find(in);
      table[i].push_back(p == producer.end() ? kNoProducer : p->second);
    }
  }
  return table;
}

}  // namespace onnx_tv::ir
