#include "fold/graph_layers.h"

#include <algorithm>
#include <iterator>
#include <set>

#include "common/errors.h"
#include "fold/param_labels.h"
#include "ir/producers.h"

namespace onnx_tv::fold {

namespace {

size_t part_index(char part) { return part == 'F' ? 0 : 1; }

}  // namespace

GraphTexts graph_texts(const ir::Graph& g, GraphParams params, const LayerRun& run) {
  GraphTexts t;
  t.g = &g;
  t.params = std::move(params);
  t.stages = node_stages(g, label_graph(g, t.params.of, t.params.count), t.params.count);
  t.texts = param_texts(g, t.stages, t.params, &run);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (size_t o = 0; o < g.nodes[i].outputs.size(); ++o)
      if (!g.nodes[i].outputs[o].empty()) t.made[g.nodes[i].outputs[o]] = {i, o};
  return t;
}

GraphLayers cut_into_layers(const GraphTexts& t, const LayerRun& run) {
  GraphLayers gl;
  gl.t = &t;
  gl.run = run;
  const ir::Graph& g = *t.g;
  gl.parts.resize(size_t(t.params.count) * 2);
  gl.node_layer.assign(g.nodes.size(), -1);
  gl.node_place.resize(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int64_t p = t.stages[i].param;
    const int64_t layer = p < 0 ? -1 : run.layer_of(p);
    if (layer < 0) continue;
    auto& list = gl.parts[size_t(p) * 2 + part_index(t.stages[i].part)];
    gl.node_layer[i] = layer;
    gl.node_place[i] = {p - run.first - layer * run.period, t.stages[i].part, list.size()};
    list.push_back(i);
  }
  gl.layer_text.resize(size_t(run.layers));
  gl.layer_masked.resize(size_t(run.layers));
  gl.held.assign(size_t(run.layers), 0);
  for (int64_t j = 0; j < run.layers; ++j)
    for (int64_t k = 0; k < run.period; ++k) {
      const std::string& text = t.texts.text[size_t(run.first + j * run.period + k)];
      gl.layer_text[size_t(j)] += text + "\x1f";
      gl.layer_masked[size_t(j)] += t.texts.masked[size_t(run.first + j * run.period + k)] + "\x1f";
      if (!text.empty()) gl.held[size_t(j)] = 1;
    }
  return gl;
}

size_t node_at(const GraphLayers& gl, int64_t layer, const Place& place) {
  const LayerRun& run = gl.run;
  const auto& list =
      gl.parts[size_t(run.first + layer * run.period + place.param) * 2 + part_index(place.part)];
  ONNX_TV_ASSERT(place.index < list.size(), "depth fold: layers with one text differ in nodes");
  return list[place.index];
}

std::string value_place(const GraphLayers& gl, const std::string& name, int64_t& layer) {
  const LayerRun& run = gl.run;
  layer = -1;
  if (auto it = gl.t->params.of.find(name); it != gl.t->params.of.end()) {
    layer = run.layer_of(it->second);
    if (layer < 0) return "";
    return "P" + std::to_string(it->second - run.first - layer * run.period);
  }
  if (auto it = gl.t->made.find(name); it != gl.t->made.end()) {
    const size_t n = it->second.first;
    layer = gl.node_layer[n];
    if (layer < 0) return "";
    const Place& p = gl.node_place[n];
    return "O" + std::to_string(p.param) + p.part + std::to_string(p.index) + "." +
           std::to_string(it->second.second);
  }
  return "";
}

std::vector<std::pair<int64_t, int64_t>> stretches(const GraphLayers& gl) {
  std::vector<std::pair<int64_t, int64_t>> out;
  const int64_t n = int64_t(gl.layer_text.size());
  for (int64_t j = 0; j < n;) {
    if (!gl.held[size_t(j)]) {
      ++j;
      continue;
    }
    int64_t e = j;
    while (e + 1 < n && gl.held[size_t(e + 1)] && gl.layer_text[size_t(e + 1)] == gl.layer_text[size_t(j)]) ++e;
    if (e + 1 < n && gl.held[size_t(e + 1)] &&
        reads_next_alike(gl.layer_masked[size_t(j)], gl.layer_masked[size_t(e + 1)]))
      ++e;
    out.emplace_back(j, e);
    j = e + 1;
  }
  return out;
}

std::vector<Cut> cuts_of(const GraphLayers& gl, const std::vector<int64_t>& kept) {
  std::vector<Cut> cuts;
  for (int64_t j = 0; j < int64_t(kept.size()); ++j) {
    if (kept[size_t(j)] < 0 || !gl.held[size_t(j)]) continue;
    if (!cuts.empty() && cuts.back().last == j - 1 && cuts.back().kept == kept[size_t(j)]) {
      cuts.back().last = j;
    } else {
      cuts.push_back({j, j, kept[size_t(j)]});
    }
  }
  return cuts;
}

const Cut* cut_holding(const std::vector<Cut>& cuts, int64_t layer) {
  for (const Cut& c : cuts)
    if (layer >= c.first && layer <= c.last) return &c;
  return nullptr;
}

std::optional<ir::Graph> leave_out(const GraphLayers& gl, const std::vector<Cut>& cuts,
                                   std::unordered_set<std::string>& gone, std::string& why_not) {
  const ir::Graph& g = *gl.t->g;
  const LayerRun& run = gl.run;
  std::vector<char> out(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (gl.node_layer[i] >= 0 && cut_holding(cuts, gl.node_layer[i])) out[i] = 1;
  const ir::InputProducers prod = ir::input_producers(g);
  // The layers reading each value (-1: outside every layer).
  std::unordered_map<std::string, std::set<int64_t>> readers;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& in : g.nodes[i].inputs) readers[in].insert(gl.node_layer[i]);
  ir::Graph f = g;
  f.nodes.clear();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (out[i]) {
      for (const auto& o : g.nodes[i].outputs)
        if (!o.empty()) gone.insert(o);
      continue;
    }
    ir::Node n = g.nodes[i];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const size_t m = prod[i][k];
      if (m == ir::kNoProducer || !out[m]) continue;
      const Cut& c = *cut_holding(cuts, gl.node_layer[m]);
      const size_t o = gl.t->made.at(n.inputs[k]).second;
      if (gl.node_layer[i] == c.kept && gl.node_layer[m] == c.first) {
        // The kept layer reads, from the layer after the stretch, what the stretch's last read.
        const size_t last = node_at(gl, c.last, gl.node_place[i]);
        const std::string& v = g.nodes[last].inputs[k];
        if (auto it = gl.t->made.find(v); it != gl.t->made.end() && out[it->second.first]) {
          why_not = g.file + ": a layer left out reads another left out from two layers away";
          return std::nullopt;
        }
        n.inputs[k] = v;
      } else if (gl.node_layer[m] == c.last) {
        // What comes after the stretch reads the kept layer's value instead of its last's,
        // in the place of the layer after the kept one, its only other reader: another
        // (each layer's value read outside the layers) would read one value where the
        // plan's two read two.
        const std::string& v = g.nodes[node_at(gl, c.kept, gl.node_place[m])].outputs[o];
        for (int64_t l : readers[v])
          if (l != c.kept && l != c.first) {
            why_not = g.file + ": '" + v + "' of a layer kept is read outside the layer after it";
            return std::nullopt;
          }
        n.inputs[k] = v;
      } else {
        why_not = g.file + ": " + n.describe(i) + " reads '" + n.inputs[k] +
                  "' of a layer it does not follow";
        return std::nullopt;
      }
    }
    f.nodes.push_back(std::move(n));
  }
  for (const auto& [name, p] : gl.t->params.of)
    if (const int64_t l = run.layer_of(p); l >= 0 && cut_holding(cuts, l)) gone.insert(name);
  auto kept_info = [&](const ir::ValueInfo& vi) { return !gone.count(vi.name); };
  std::vector<ir::ValueInfo> inputs, outputs;
  std::copy_if(f.inputs.begin(), f.inputs.end(), std::back_inserter(inputs), kept_info);
  std::copy_if(f.outputs.begin(), f.outputs.end(), std::back_inserter(outputs), kept_info);
  f.inputs = std::move(inputs);
  f.outputs = std::move(outputs);
  for (const auto& name : gone) {
    f.initializers.erase(name);
    f.value_info.erase(name);
  }
  return f;
}

}  // namespace onnx_tv::fold
