#include "fold/layer_run.h"

#include <algorithm>
#include <map>
#include <set>

#include "fold/param_labels.h"
#include "ir/attribute_text.h"
#include "ir/comm_parse.h"
#include "ir/producers.h"

namespace onnx_tv::fold {

namespace {

// Marks each input in a masked text, so two can be compared input by input.
constexpr char kInputMark = '\x1e';

// The parts of one parameter's computation, in the order of its text.
constexpr char kParts[] = {'F', 'B'};

class TextWriter {
 public:
  TextWriter(const ir::Graph& g, const std::vector<NodeStage>& stages, const GraphParams& params,
             const LayerRun* run)
      : g_(g), stages_(stages), params_(params), run_(run), prod_(ir::input_producers(g)),
        place_(g.nodes.size(), 0), constant_id_(g.nodes.size(), kNone) {
    for (const auto& vi : g.outputs) outputs_.emplace(vi.name, &vi);
    for (const auto& vi : g.inputs) inputs_.emplace(vi.name, &vi);
    std::map<std::pair<int64_t, char>, size_t> next;
    for (size_t i = 0; i < g.nodes.size(); ++i) place_[i] = next[{stages[i].param, stages[i].part}]++;
    if (!run_) return;
    // The layers reading each node's outputs and each parameter.
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (stages[i].param < 0) continue;
      const int64_t l = layer(stages[i].param);
      for (size_t k = 0; k < g.nodes[i].inputs.size(); ++k) {
        if (prod_[i][k] != ir::kNoProducer) readers_[int64_t(prod_[i][k])].insert(l);
        else if (auto it = params.of.find(g.nodes[i].inputs[k]); it != params.of.end())
          readers_[-1 - it->second].insert(l);
      }
    }
  }

  ParamTexts write() {
    ParamTexts out;
    out.text.resize(size_t(params_.count));
    out.masked.resize(size_t(params_.count));
    out.offsets.resize(size_t(params_.count));
    std::vector<std::vector<size_t>> nodes(size_t(params_.count) * 2);
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (stages_[i].param >= 0) nodes[size_t(stages_[i].param) * 2 + part_index(stages_[i].part)].push_back(i);
    for (int64_t p = 0; p < params_.count; ++p) {
      size_t total = 0;
      for (size_t k = 0; k < 2; ++k) total += nodes[size_t(p) * 2 + k].size();
      if (!total) continue;
      for (bool masking : {true, false}) {  // the text last, so offsets are its
        if (masking && !run_) continue;
        masking_ = masking;
        offsets_.clear();
        std::string& t = (masking ? out.masked : out.text)[size_t(p)];
        for (size_t k = 0; k < 2; ++k) {
          t += kParts[k];
          for (size_t i : nodes[size_t(p) * 2 + k]) node(t, i, p);
        }
      }
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
    for (size_t k = 0; k < n.inputs.size(); ++k)
      t += (masking_ ? std::string(1, kInputMark) : std::string()) + input(i, k, p) + ",";
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
      const int64_t q = stages_[m].param;
      if (q >= 0 && p >= 0) {
        const std::string at = place_of(p, q, int64_t(m));
        if (at.empty()) return std::string("SN") + stages_[m].part;  // masked: the next layer
        return "S" + at + stages_[m].part + std::to_string(place_[m]) + "." + std::to_string(o);
      }
      if (stages_[m].part == 'C') return "C" + std::to_string(constant(m)) + "." + std::to_string(o);
      return "V" + name;
    }
    if (auto it = params_.of.find(name); it != params_.of.end()) {
      if (p < 0) return "V" + name;
      return "P" + place_of(p, it->second, -1 - it->second) + input_type(name);
    }
    if (auto it = g_.initializers.find(name); it != g_.initializers.end()) {
      std::string c = "I";
      ir::append_constant(c, it->second);
      return "C" + std::to_string(intern(c));
    }
    return "V" + name;
  }

  // Layers numbered on past the run's ends, so its first and last layers read the layers
  // beside them as the others do.
  int64_t layer(int64_t param) const {
    const int64_t d = param - run_->first;
    return d >= 0 ? d / run_->period : -((-d + run_->period - 1) / run_->period);
  }

  // Parameter q (or a node of its stages, `value`: the node, or -1 - q for q itself) as read
  // from parameter p's stages: d places away where p is in the run, q's layer is p's or one
  // beside it, and at most two layers read it; else q itself, as every layer reading it reads
  // one value (a table all layers share). Without a run, the place is left out.
  std::string place_of(int64_t p, int64_t q, int64_t value) {
    if (!run_) return "?";
    auto shared = [&] {
      auto it = readers_.find(value);
      return it != readers_.end() && it->second.size() > 2;
    };
    if (run_->layer_of(p) < 0 || std::abs(layer(p) - layer(q)) > 1 || shared())
      return "#" + std::to_string(q);
    if (masking_ && layer(q) == layer(p) + 1) return "";
    offsets_.push_back(q - p);
    return std::to_string(q - p);
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
    if (auto it = outputs_.find(name); it != outputs_.end())
      return "!" + ir::value_info_text(*it->second);  // a graph output
    if (auto it = g_.value_info.find(name); it != g_.value_info.end())
      return ir::value_info_text(it->second);
    return "?";
  }

  // A graph input's or initializer's type and shape: what a layer's parameters must agree in.
  std::string input_type(const std::string& name) const {
    if (auto it = g_.initializers.find(name); it != g_.initializers.end())
      return "<" + std::to_string(int(it->second.dtype)) + ir::shape_string(it->second.shape) + ">";
    auto it = inputs_.find(name);
    return it == inputs_.end() ? "<?>" : ir::value_info_text(*it->second);
  }

  static size_t part_index(char part) { return part == 'F' ? 0 : 1; }

  const ir::Graph& g_;
  const std::vector<NodeStage>& stages_;
  const GraphParams& params_;
  const LayerRun* run_;
  bool masking_ = false;  // writing ParamTexts::masked
  const ir::InputProducers prod_;
  std::vector<size_t> place_;        // per node: its place among the nodes of its label
  std::vector<size_t> constant_id_;  // per node before every parameter: its text's id
  std::unordered_map<std::string, size_t> interned_;
  std::unordered_map<std::string, const ir::ValueInfo*> outputs_, inputs_;
  std::vector<int64_t> offsets_;
  std::unordered_map<int64_t, std::set<int64_t>> readers_;  // value (as place_of's) -> layers
};

}  // namespace

std::vector<NodeStage> node_stages(const ir::Graph& g, const std::vector<int64_t>& labels,
                                   int64_t params) {
  std::vector<NodeStage> out(labels.size());
  const ir::InputProducers prod = ir::input_producers(g);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (const int64_t p = label_param(labels[i], params); p >= 0) {
      out[i] = {p, label_is_forward(labels[i], params) ? 'F' : 'B'};
      continue;
    }
    // Before every parameter: a constant, computed from constants alone; not what a rank
    // receives, which two Recvs written alike receive differently.
    if (labels[i] != 0 || ir::is_comm_op(g.nodes[i])) continue;
    bool constant = true;
    for (size_t m : prod[i])
      if (m != ir::kNoProducer && out[m].part != 'C') constant = false;
    if (constant) out[i].part = 'C';
  }
  return out;
}

ParamTexts param_texts(const ir::Graph& g, const std::vector<NodeStage>& stages,
                       const GraphParams& params, const LayerRun* run) {
  return TextWriter(g, stages, params, run).write();
}

bool reads_next_alike(const std::string& kept, const std::string& last) {
  size_t a = 0, b = 0;
  auto segment = [](const std::string& s, size_t& at) {  // from `at` to the next input
    const size_t end = s.find(kInputMark, at + 1);
    std::string seg = s.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end;
    return seg;
  };
  while (a != std::string::npos && b != std::string::npos) {
    const std::string x = segment(kept, a), y = segment(last, b);
    if (x == y) continue;
    // An input read from the next layer by the kept one may be anything after it for the last.
    const size_t cx = x.find(','), cy = y.find(',');
    if (cx == std::string::npos || cy == std::string::npos || x.substr(cx) != y.substr(cy) ||
        x.compare(0, 3, std::string(1, kInputMark) + "SN") != 0 ||
        (y.compare(0, 3, std::string(1, kInputMark) + "SN") != 0 &&
         y.compare(0, 2, std::string(1, kInputMark) + "V") != 0))
      return false;
  }
  return a == b;
}

std::optional<LayerRun> find_graph_run(const ir::Graph& g, const std::vector<NodeStage>& stages,
                                       const GraphParams& params, int64_t min_layers) {
  const std::optional<LayerRun> rough = find_layer_run(param_texts(g, stages, params, nullptr).text, min_layers);
  if (!rough) return std::nullopt;
  return find_layer_run(param_texts(g, stages, params, &*rough).text, min_layers);
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
