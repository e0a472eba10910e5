#pragma once
// Parameter stages: every unit of a dataflow labelled by the parameters around it. A value
// computed after reading parameter p, and before any value downstream of it reads a later one,
// is in the forward stage of p; one computed once every parameter is read, upstream of the last
// read of p, in the backward stage of p. Used to cut a check into stage obligations
// (check/stage_partition.h) and to find the layers a deep model repeats (fold/layer_run.h).
// Labels only say where work is cut or what to compare; no proof depends on them being right.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace onnx_tv::fold {

// One unit in a dataflow order: its producers (earlier units) and the largest index of a
// parameter it reads directly (-1: none), and whether it reads more than one.
struct LabelUnit {
  std::vector<size_t> producers;
  int64_t param = -1;
  bool several_params = false;
};

// Labels from 0 to 2 * params + 1, in an order the dataflow respects (every unit's label is at
// least its producers'): 0 before any parameter, 1 + p the forward of p, 1 + params the head
// (where the last parameter is read both ways), then the backward stages, the latest
// parameter's first. A unit that computes from one parameter alone (and constants) and would
// be in the head, as it reads the parameter both ways (a weight transposed for the backward),
// is in that parameter's backward stage: each layer's then stays with its layer, where the
// layers repeat, instead of all of them in one head.
std::vector<int64_t> label_units(const std::vector<LabelUnit>& units, int64_t params);

// The parameter whose forward or backward stage `label` is; -1 for the stage before every
// parameter and the head.
int64_t label_param(int64_t label, int64_t params);
bool label_is_forward(int64_t label, int64_t params);
int64_t forward_label(int64_t param);
int64_t backward_label(int64_t param, int64_t params);

void add_param(LabelUnit& unit, int64_t param);

// The labels of one graph's nodes; `param_of` gives its parameters by value name (graph inputs
// and initializers that stand for parameters), `params` how many the numbering holds.
std::vector<int64_t> label_graph(const ir::Graph& g,
                                 const std::unordered_map<std::string, int64_t>& param_of,
                                 int64_t params);

}  // namespace onnx_tv::fold
