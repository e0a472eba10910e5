#pragma once
// The dataflow edges of one graph as indices: for each node input, the node producing it. Found
// by name once per file, so passes over the thousands of ranks that run one file follow
// indices instead of hashing names rank after rank.
#include <cstddef>
#include <vector>

#include "ir/graph.h"

namespace onnx_tv::ir {

// A graph input, an initializer, or an omitted optional input.
inline constexpr size_t kNoProducer = size_t(-1);

// node index -> input position -> producing node index (or kNoProducer), aligned with
// Node::inputs.
using InputProducers = std::vector<std::vector<size_t>>;

InputProducers input_producers(const Graph& g);

}  // namespace onnx_tv::ir
