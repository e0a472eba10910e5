#pragma once
// The layers a deep model repeats, found in one graph (the spec or a rank program) without
// names. Each parameter's stages (fold/param_labels.h) are written as a text in which every
// input is a place relative to that parameter: the k-th node of the stages of the parameter d
// places away, or that parameter itself. A value outside every parameter's stages is written
// as what it is: a constant by its contents (two layers' constant nodes with one value read
// alike), anything else by its name, which names one value for every layer that reads it. A
// run of layers is then a stretch of parameters whose texts repeat with one period.
//
// The texts only find candidates: they leave out where a layer's values go, bindings and
// collectives across programs, which whatever removes layers checks for itself.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace onnx_tv::fold {

// A graph's parameters: value name -> index in the numbering of every parameter of the check.
struct GraphParams {
  std::unordered_map<std::string, int64_t> of;
  int64_t count = 0;
};

struct ParamTexts {
  std::vector<std::string> text;  // per parameter: "" when the graph does not read it
  // Per parameter: the offsets d of the parameters its stages read from (their stages' nodes,
  // or the parameter itself).
  std::vector<std::vector<int64_t>> offsets;
};

// `labels`: fold::label_graph(g, params.of, params.count).
ParamTexts param_texts(const ir::Graph& g, const std::vector<int64_t>& labels,
                       const GraphParams& params);

// Parameters first .. first + period * layers - 1, in `layers` groups of `period` whose texts
// are the same, group after group.
struct LayerRun {
  int64_t first = 0, period = 0, layers = 0;
  // The layer of a parameter, -1 outside the run.
  int64_t layer_of(int64_t param) const {
    if (param < first || param >= first + period * layers) return -1;
    return (param - first) / period;
  }
};

// The run covering the most parameters, of at least `min_layers` layers (the shortest period
// among runs covering as many); nullopt when there is none.
std::optional<LayerRun> find_layer_run(const std::vector<std::string>& texts, int64_t min_layers);

// How many layers away the furthest parameter a layer of `run` reads from lies, over the
// layers inside it (0: each reads its own; 1: also the layers beside it). Reads that leave the
// run count as the distance to its end and beyond.
int64_t run_reach(const LayerRun& run, const ParamTexts& texts);

}  // namespace onnx_tv::fold
