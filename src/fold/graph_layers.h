#pragma once
// One graph (the spec or a rank program) cut into the layers of the spec's run, and the
// same graph with some of them left out (fold/depth_fold.h). Private to src/fold.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fold/layer_run.h"
#include "ir/graph.h"

namespace onnx_tv::fold {

// What a graph's parameters and texts are, whatever the run: found once per graph.
struct GraphTexts {
  const ir::Graph* g = nullptr;
  GraphParams params;
  std::vector<NodeStage> stages;  // per node
  ParamTexts texts;
  std::unordered_map<std::string, std::pair<size_t, size_t>> made;  // value -> node, output
};

// `run`: the spec's, by which inputs are placed relative to the layer reading them.
GraphTexts graph_texts(const ir::Graph& g, GraphParams params, const LayerRun& run);

// A left-out stretch of layers [first, last] and the kept layer standing for each of them.
struct Cut {
  int64_t first = 0, last = 0, kept = 0;
};

// Where a node sits in its layer: its parameter's place in the layer, the part of that
// parameter's computation (NodeStage::part), and its place among that part's nodes.
struct Place {
  int64_t param = 0;
  char part = 0;
  size_t index = 0;
};

// The graph cut into the layers of `run`.
struct GraphLayers {
  const GraphTexts* t = nullptr;
  LayerRun run;
  std::vector<std::vector<size_t>> parts;  // per parameter and part: its nodes, in order
  std::vector<int64_t> node_layer;         // per node: its layer, -1 outside the run
  std::vector<Place> node_place;
  std::vector<std::string> layer_text;    // per layer
  std::vector<std::string> layer_masked;  // per layer, ParamTexts::masked
  std::vector<char> held;                 // per layer: the graph reads one of its parameters
};

GraphLayers cut_into_layers(const GraphTexts& t, const LayerRun& run);

// The node of layer `layer` at `place`.
size_t node_at(const GraphLayers& gl, int64_t layer, const Place& place);

// Where a value sits in its layer (`layer` set to it): "P<k>" a parameter, "O<place>.<output>"
// a node's output; "" outside the run.
std::string value_place(const GraphLayers& gl, const std::string& name, int64_t& layer);

// Stretches of consecutive layers the graph holds with one text: [first, last]. The last may
// differ from the others in where it reads the next layer's values (and only there).
std::vector<std::pair<int64_t, int64_t>> stretches(const GraphLayers& gl);

// The graph's cuts: its layers left out (kept[j] >= 0, the layer standing for j) in
// stretches, each after the layer standing for it.
std::vector<Cut> cuts_of(const GraphLayers& gl, const std::vector<int64_t>& kept);
const Cut* cut_holding(const std::vector<Cut>& cuts, int64_t layer);

// The graph without the layers of `cuts`; `gone` gets the names of the values left out.
std::optional<ir::Graph> leave_out(const GraphLayers& gl, const std::vector<Cut>& cuts,
                                   std::unordered_set<std::string>& gone, std::string& why_not);

}  // namespace onnx_tv::fold
