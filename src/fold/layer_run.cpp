#include "fold/layer_run.h"

#include <algorithm>

#include "fold/param_labels.h"
#include "ir/attribute_text.h"
#include "ir/producers.h"

namespace onnx_tv::fold {

namespace {

class TextWriter {
 public:
  TextWriter(const ir::Graph& g, const std::vector<int64_t>& labels, const GraphParams& params)
      : g_(g), labels_(labels), params_(params), prod_(ir::input_producers(g)),
        place_(g.nodes.size(), 0), constant_id_(g.nodes.size(), kNone) {
    for (const auto& vi : g.outputs) outputs_.emplace(vi.name, &vi);
    std::unordered_map<int64_t, size_t> next;
    for (size_t i = 0; i < g.nodes.size(); ++i) place_[i] = next[labels[i]]++;
  }

  ParamTexts write() {
    ParamTexts out;
    out.text.resize(size_t(params_.count));
    out.offsets.resize(size_t(params_.count));
    std::vector<std::vector<size_t>> forward(size_t(params_.count)), backward(forward.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const int64_t p = label_param(labels_[i], params_.count);
      if (p < 0) continue;
      (label_is_forward(labels_[i], params_.count) ? forward : backward)[size_t(p)].push_back(i);
    }
    for (int64_t p = 0; p < params_.count; ++p) {
      const auto& f = forward[size_t(p)];
      const auto& b = backward[size_t(p)];
      if (f.empty() && b.empty()) continue;
      offsets_.clear();
      std::string& t = out.text[size_t(p)];
      t = "F";
      for (size_t i : f) node(t, i, p);
      t += "B";
      for (size_t i : b) node(t, i, p);
      std::sort(offsets_.begin(), offsets_.end());
      offsets_.erase(std::unique(offsets_.begin(), offsets_.end()), offsets_.end());
      out.offsets[size_t(p)] = offsets_;
    }
    return out;
  }

 private:
  static constexpr size_t kNone = size_t(-1);

  // A node's op, inputs, attributes and outputs (declared type and shape, graph outputs
  // marked); `p` the parameter its inputs are placed from, -1 for a constant's node.
  void node(std::string& t, size_t i, int64_t p) {
    const ir::Node& n = g_.nodes[i];
    t += n.domain + "::" + n.op_type + "@" + std::to_string(n.opset) + "(";
    for (size_t k = 0; k < n.inputs.size(); ++k) t += input(i, k, p) + ",";
    t += ")";
    for (const auto& [name, a] : n.attributes)
      if (!ir::append_attribute(t, name, a)) t += "#" + std::to_string(i);  // like no other
    t += "->";
    for (const auto& o : n.outputs) t += declared(o) + ",";
    t += "\n";
  }

  std::string input(size_t i, size_t k, int64_t p) {
    const std::string& name = g_.nodes[i].inputs[k];
    if (name.empty()) return "-";
    const size_t m = prod_[i][k];
    if (m != ir::kNoProducer) {
      const size_t o = size_t(std::find(g_.nodes[m].outputs.begin(), g_.nodes[m].outputs.end(),
                                        name) - g_.nodes[m].outputs.begin());
      const int64_t q = label_param(labels_[m], params_.count);
      if (q >= 0 && p >= 0) {
        offsets_.push_back(q - p);
        return "S" + std::to_string(q - p) +
               (label_is_forward(labels_[m], params_.count) ? "F" : "B") +
               std::to_string(place_[m]) + "." + std::to_string(o);
      }
      if (labels_[m] == 0) return "C" + std::to_string(constant(m)) + "." + std::to_string(o);
      return "V" + name;
    }
    if (auto it = params_.of.find(name); it != params_.of.end()) {
      if (p < 0) return "V" + name;
      offsets_.push_back(it->second - p);
      return "P" + std::to_string(it->second - p);
    }
    if (auto it = g_.initializers.find(name); it != g_.initializers.end()) {
      std::string c = "I";
      ir::append_constant(c, it->second);
      return "C" + std::to_string(intern(c));
    }
    return "V" + name;
  }

  // A node before every parameter (a constant, or computed from constants only) by what it
  // computes: two with one text hold one value.
  size_t constant(size_t m) {
    if (constant_id_[m] != kNone) return constant_id_[m];
    std::string t;
    node(t, m, -1);
    return constant_id_[m] = intern(t);
  }

  size_t intern(const std::string& t) { return interned_.try_emplace(t, interned_.size()).first->second; }

  std::string declared(const std::string& name) const {
    if (name.empty()) return "-";
    const ir::ValueInfo* vi = nullptr;
    if (auto it = g_.value_info.find(name); it != g_.value_info.end()) vi = &it->second;
    std::string s;
    if (auto it = outputs_.find(name); it != outputs_.end()) {
      vi = it->second;
      s = "!";  // a graph output
    }
    if (!vi) return s + "?";
    s += "<" + std::to_string(int(vi->dtype));
    if (vi->shape)
      for (const auto& d : *vi->shape) s += "," + (d.size ? std::to_string(*d.size) : "?" + d.symbol);
    return s + ">";
  }

  const ir::Graph& g_;
  const std::vector<int64_t>& labels_;
  const GraphParams& params_;
  const ir::InputProducers prod_;
  std::vector<size_t> place_;        // per node: its place among the nodes of its label
  std::vector<size_t> constant_id_;  // per node before every parameter: its text's id
  std::unordered_map<std::string, size_t> interned_;
  std::unordered_map<std::string, const ir::ValueInfo*> outputs_;
  std::vector<int64_t> offsets_;
};

}  // namespace

ParamTexts param_texts(const ir::Graph& g, const std::vector<int64_t>& labels,
                       const GraphParams& params) {
  return TextWriter(g, labels, params).write();
}

std::optional<LayerRun> find_layer_run(const std::vector<std::string>& texts, int64_t min_layers) {
  const int64_t m = int64_t(texts.size());
  std::vector<int64_t> id(static_cast<size_t>(m));
  std::unordered_map<std::string, int64_t> ids;
  for (int64_t i = 0; i < m; ++i)
    id[size_t(i)] = texts[size_t(i)].empty() ? -1 - i : ids.try_emplace(texts[size_t(i)], int64_t(ids.size())).first->second;
  std::optional<LayerRun> best;
  min_layers = std::max<int64_t>(min_layers, 2);
  for (int64_t period = 1; period * min_layers <= m; ++period) {
    for (int64_t s = 0; s + period < m;) {
      int64_t e = s;
      while (e + period < m && id[size_t(e)] == id[size_t(e + period)] && id[size_t(e)] >= 0) ++e;
      if (e == s) {
        ++s;
        continue;
      }
      const int64_t layers = (e - s + period) / period;
      if (layers >= min_layers && (!best || layers * period > best->layers * best->period))
        best = LayerRun{s, period, layers};
      s = e;
    }
  }
  return best;
}

int64_t run_reach(const LayerRun& run, const ParamTexts& texts) {
  int64_t reach = 0;
  for (int64_t p = run.first; p < run.first + run.period * run.layers; ++p) {
    const int64_t l = run.layer_of(p);
    for (int64_t d : texts.offsets[size_t(p)]) {
      const int64_t q = p + d;
      int64_t lq = run.layer_of(q);
      if (lq < 0) lq = q < run.first ? -1 : run.layers;  // outside: beyond the run's end
      reach = std::max(reach, std::abs(lq - l));
    }
  }
  return reach;
}

}  // namespace onnx_tv::fold
