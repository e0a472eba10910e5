#include "fold/param_labels.h"

#include <algorithm>

#include "common/errors.h"
#include "ir/producers.h"

namespace onnx_tv::fold {

std::vector<int64_t> label_units(const std::vector<LabelUnit>& units, int64_t params) {
  const size_t n = units.size();
  // ahead: the latest parameter read upstream (itself included); behind: the latest read
  // downstream. A forward value has a later parameter still to come downstream; a backward
  // value has seen every parameter upstream and only earlier ones downstream.
  std::vector<int64_t> ahead(n, -1), behind(n, -1);
  std::vector<std::vector<size_t>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    ahead[i] = units[i].param;
    for (size_t p : units[i].producers) {
      ONNX_TV_ASSERT(p < i, "stage labels: a producer after its consumer");
      ahead[i] = std::max(ahead[i], ahead[p]);
      consumers[p].push_back(i);
    }
  }
  for (size_t i = n; i-- > 0;) {
    behind[i] = units[i].param;
    for (size_t c : consumers[i]) behind[i] = std::max(behind[i], behind[c]);
  }
  std::vector<int64_t> label(n, 0);
  std::vector<int64_t> alone(n, -1);  // the parameter a unit computes from alone
  for (size_t i = 0; i < n; ++i) {
    const int64_t f = ahead[i], b = behind[i];
    if (f < 0 || b < 0) label[i] = 0;  // takes its inputs' stage below
    else if (f < b) label[i] = forward_label(f);
    else if (f == b) label[i] = 1 + params;
    else label[i] = backward_label(b, params);
    if (!units[i].several_params) {
      int64_t p = units[i].param;
      bool one = true;
      for (size_t q : units[i].producers) {
        if (label[q] == 0) continue;  // a constant
        one = one && alone[q] >= 0 && (p < 0 || alone[q] == p);
        p = alone[q];
      }
      if (one && p >= 0) alone[i] = p;
    }
    if (label[i] == 1 + params && alone[i] >= 0) label[i] = backward_label(alone[i], params);
    for (size_t p : units[i].producers) label[i] = std::max(label[i], label[p]);
  }
  return label;
}

void add_param(LabelUnit& unit, int64_t param) {
  if (unit.param >= 0 && unit.param != param) unit.several_params = true;
  unit.param = std::max(unit.param, param);
}

int64_t forward_label(int64_t param) { return 1 + param; }

int64_t backward_label(int64_t param, int64_t params) { return 2 + params + (params - 1 - param); }

int64_t label_param(int64_t label, int64_t params) {
  if (label >= 1 && label <= params) return label - 1;
  if (label >= 2 + params && label <= 1 + 2 * params) return params - 1 - (label - 2 - params);
  return -1;
}

bool label_is_forward(int64_t label, int64_t params) { return label >= 1 && label <= params; }

std::vector<int64_t> label_graph(const ir::Graph& g,
                                 const std::unordered_map<std::string, int64_t>& param_of,
                                 int64_t params) {
  std::vector<LabelUnit> units(g.nodes.size());
  const ir::InputProducers prod = ir::input_producers(g);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (size_t k = 0; k < g.nodes[i].inputs.size(); ++k) {
      if (prod[i][k] != ir::kNoProducer) {
        units[i].producers.push_back(prod[i][k]);
      } else if (auto it = param_of.find(g.nodes[i].inputs[k]); it != param_of.end()) {
        add_param(units[i], it->second);
      }
    }
  return label_units(units, params);
}

}  // namespace onnx_tv::fold
