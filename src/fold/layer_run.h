#pragma once
// The layers a deep model repeats, found in one graph (the spec or a rank program) without
// names. Each parameter's stages (fold/param_labels.h) are written as a text in which every
// input within its layer or the layers beside it is a place relative to that parameter: the
// k-th node of a stage of the parameter d places away, or that parameter itself. Any other
// value is written as what it is: a constant by its contents (two layers' constant nodes with
// one value read alike), a parameter or a stage's node by its index, anything else by its
// name; each names one value for every layer that reads it. A run of layers is then a
// stretch of parameters whose texts repeat with one period.
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

struct ParamTexts {
  std::vector<std::string> text;  // per parameter: "" when the graph does not read it
  // With a run: the text without the places of what it reads from the next layer ("SN"),
  // which differ where the next layer is another, each input marked (reads_next_alike).
  std::vector<std::string> masked;
  // Per parameter: the offsets d of the parameters its stages read from (their stages' nodes,
  // or the parameter itself).
  std::vector<std::vector<int64_t>> offsets;
};

// Which parameter's stage a node is in: part 'F' its forward stage, 'B' its backward stage;
// param -1 outside every parameter's, with part 'C' for a constant (before every parameter,
// computed from constants alone, no communication on the way) and 0 otherwise.
struct NodeStage {
  int64_t param = -1;
  char part = 0;
};

// `labels`: fold::label_graph(g, params.of, params.count).
std::vector<NodeStage> node_stages(const ir::Graph& g, const std::vector<int64_t>& labels,
                                   int64_t params);

// With `run`, a parameter or a stage's node is placed relative to the parameter reading it
// where that one is in the run and their layers are one or beside each other, and named by its
// own index elsewhere (a table every layer reads is one value); without, places are left out,
// which is enough to find a run's period.
ParamTexts param_texts(const ir::Graph& g, const std::vector<NodeStage>& stages,
                       const GraphParams& params, const LayerRun* run);

// The run covering the most parameters, of at least `min_layers` layers (the shortest period
// among runs covering as many); nullopt when there is none.
std::optional<LayerRun> find_layer_run(const std::vector<std::string>& texts, int64_t min_layers);

// Whether the last layer of a stretch (masked text `last`) is the kept layer (masked text
// `kept`) but where the kept one reads the next layer: there the last may read the next
// layer anywhere, or a value outside every layer (what a pipeline stage's last layer
// receives instead). Whoever leaves the last out must have the kept layer read, in each such
// place, what the last one read.
bool reads_next_alike(const std::string& kept, const std::string& last);

// The run of a graph: found roughly on texts without places, then on texts placed by that.
std::optional<LayerRun> find_graph_run(const ir::Graph& g, const std::vector<NodeStage>& stages,
                                       const GraphParams& params, int64_t min_layers);

// How many layers away the furthest parameter a layer of `run` reads from lies, over the
// layers inside it (0: each reads its own; 1: also the layers beside it). Reads that leave the
// run count as the distance to its end and beyond.
int64_t run_reach(const LayerRun& run, const ParamTexts& texts);

}  // namespace onnx_tv::fold
