#include "fold/depth_fold.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "common/errors.h"
#include "fold/graph_layers.h"
#include "fold/param_labels.h"
#include "ir/comm_parse.h"

namespace onnx_tv::fold {

namespace {

// Whether the collectives still pair as before with the nodes `out` (per program) left out:
// every pairing sequence (a group's collectives of one kind on each member, a key's members,
// the Sends from one rank to another with one tag and their Recvs) loses the same places on
// every member.
bool collectives_pair(const ir::Plan& plan, const std::vector<std::vector<char>>& out,
                      int64_t& collectives, std::string& why_not) {
  std::map<size_t, int64_t> members;  // group size -> collective nodes in groups of that size
  std::map<std::tuple<int, std::vector<int64_t>, int64_t>, std::vector<char>> ordered;
  std::map<std::tuple<int, std::vector<int64_t>, std::string>, std::set<char>> keyed;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<char>> sends, recvs;
  for (int64_t r = 0; r < plan.world_size; ++r) {
    const ir::Graph& g = plan.program_of(r);
    const auto& gone = out[plan.rank_program[size_t(r)]];
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!ir::is_comm_op(g.nodes[i])) continue;
      const ir::CommOp op = ir::parse_comm_op(plan, r, i);
      if (op.kind == ir::CommKind::Send) sends[{r, op.peer, op.tag}].push_back(gone[i]);
      else if (op.kind == ir::CommKind::Recv) recvs[{op.peer, r, op.tag}].push_back(gone[i]);
      else if (op.key.empty()) ordered[{int(op.kind), op.group, r}].push_back(gone[i]);
      else keyed[{int(op.kind), op.group, op.key}].insert(gone[i]);
      if (op.kind != ir::CommKind::Send && op.kind != ir::CommKind::Recv) ++members[op.group.size()];
    }
  }
  collectives = 0;
  for (const auto& [size, n] : members) collectives += size ? n / int64_t(size) : 0;
  for (const auto& [k, seq] : ordered)
    for (int64_t member : std::get<1>(k)) {
      auto it = ordered.find({std::get<0>(k), std::get<1>(k), member});
      if (it == ordered.end() || it->second != seq) {
        why_not = "a collective would pair otherwise: rank " + std::to_string(std::get<2>(k)) +
                  " and rank " + std::to_string(member) + " leave out different ones";
        return false;
      }
    }
  for (const auto& [k, flags] : keyed)
    if (flags.size() > 1) {
      why_not = "a keyed collective is left out on some of its members only";
      return false;
    }
  for (const auto& [k, seq] : recvs)
    if (!sends.count(k)) sends[k];  // a Recv with no Send: compared with none
  for (const auto& [k, seq] : sends)
    if (auto it = recvs.find(k); it == recvs.end() || it->second != seq) {
      why_not = "a Send from rank " + std::to_string(std::get<0>(k)) + " to rank " +
                std::to_string(std::get<1>(k)) + " would pair otherwise";
      return false;
    }
  return true;
}

constexpr int64_t kKeep = -1;

// Which layers of the run to leave out, and the kept layer standing for each (kKeep: kept).
// In each program's stretch of layers alike the first `keep` are kept and the rest left out,
// where every program holding a layer agrees on the layer standing for it; a stretch leaves
// out only a prefix of the rest, up to the first layer kept.
std::vector<int64_t> choose(const std::vector<GraphLayers>& programs, int64_t layers,
                            int64_t keep) {
  constexpr int64_t kUnset = -2;
  std::vector<int64_t> kept(size_t(layers), kUnset);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> program_stretches;
  for (const auto& gl : programs) {
    program_stretches.push_back(stretches(gl));
    std::vector<int64_t> want(size_t(layers), kKeep);
    for (const auto& [a, b] : program_stretches.back())
      for (int64_t j = a + keep; j <= b; ++j) want[size_t(j)] = a + keep - 1;
    for (int64_t j = 0; j < layers; ++j) {
      if (!gl.held[size_t(j)]) continue;
      int64_t& k = kept[size_t(j)];
      k = k == kUnset ? want[size_t(j)] : k == want[size_t(j)] ? k : kKeep;
    }
  }
  for (auto& k : kept)
    if (k == kUnset) k = kKeep;
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& ss : program_stretches)
      for (const auto& [a, b] : ss) {
        bool open = true;
        for (int64_t j = a + keep; j <= b; ++j) {
          open = open && kept[size_t(j)] == a + keep - 1;
          if (!open && kept[size_t(j)] != kKeep) {
            kept[size_t(j)] = kKeep;
            changed = true;
          }
        }
      }
  }
  return kept;
}

// Whether rank by rank every left-out layer's bindings are the kept one's, place by place.
bool same_bindings(const ir::Plan& plan, const GraphLayers& spec,
                   const std::vector<GraphLayers>& programs, const std::vector<int64_t>& kept,
                   std::string& why_not) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::string>> bound;  // (rank, layer)
  for (const ir::Binding& b : plan.bindings) {
    int64_t ls = -1, lr = -1;
    const std::string s = value_place(spec, b.spec, ls);
    const std::string r = value_place(programs[plan.rank_program[size_t(b.rank)]], b.value, lr);
    if (ls >= 0 && lr >= 0 && ls != lr) {
      why_not = b.origin + ": binds layer " + std::to_string(ls) + " of the spec's run to layer " +
                std::to_string(lr) + " of the rank's";
      return false;
    }
    const int64_t layer = std::max(ls, lr);
    if (layer >= 0) bound[{b.rank, layer}].push_back(s + "|" + r + "|" + ir::binding_region_key(b));
  }
  for (auto& [k, v] : bound) std::sort(v.begin(), v.end());
  for (const auto& [k, v] : bound) {
    const int64_t j = k.second, t = kept[size_t(j)];
    if (t < 0) continue;
    auto it = bound.find({k.first, t});
    if (it == bound.end() || it->second != v) {
      why_not = "rank " + std::to_string(k.first) + " binds layer " + std::to_string(j) +
                " of the run otherwise than layer " + std::to_string(t);
      return false;
    }
  }
  return true;
}

// Whether the guards mark every left-out layer's values as the kept one's, both ways.
bool same_marks(const FoldInputs& in, const GraphLayers& spec,
                const std::vector<GraphLayers>& programs, const std::vector<int64_t>& kept,
                std::string& why_not) {
  if (!in.marks) return true;
  const ir::Plan& plan = *in.plan;
  auto mark = [&](int64_t rank, const std::string& v) {
    auto it = in.marks->find({rank, v});
    return it == in.marks->end() ? std::string() : it->second;
  };
  for (const auto& [where, text] : *in.marks) {
    const int64_t rank = where.first;
    const GraphLayers& gl = rank < 0 ? spec : programs[plan.rank_program[size_t(rank)]];
    auto made = gl.t->made.find(where.second);
    if (made == gl.t->made.end()) continue;
    const auto [n, o] = made->second;
    const int64_t layer = gl.node_layer[n];
    if (layer < 0) continue;
    std::vector<int64_t> others;  // the layers whose value here must be marked alike
    if (kept[size_t(layer)] >= 0) others.push_back(kept[size_t(layer)]);
    for (int64_t j = 0; j < int64_t(kept.size()); ++j)
      if (kept[size_t(j)] == layer && gl.held[size_t(j)]) others.push_back(j);
    for (int64_t j : others)
      if (mark(rank, gl.t->g->nodes[node_at(gl, j, gl.node_place[n])].outputs[o]) != text) {
        why_not = "the guards mark layer " + std::to_string(layer) + " of the run otherwise "
                  "than layer " + std::to_string(j);
        return false;
      }
  }
  return true;
}

}  // namespace

std::optional<Folded> fold_depth(const FoldInputs& in, std::string& why_not) {
  const ir::Graph& spec = *in.spec;
  const ir::Plan& plan = *in.plan;
  const int64_t count = in.spec_params.count;

  const std::optional<LayerRun> found = find_graph_run(
      spec, node_stages(spec, label_graph(spec, in.spec_params.of, count), count), in.spec_params, 4);
  if (!found) {
    why_not = "the spec repeats no layer four times";
    return std::nullopt;
  }
  const GraphTexts spec_texts = graph_texts(spec, in.spec_params, *found);
  // Each program's parameters: its inputs bound to spec parameters, the same on every rank.
  std::vector<GraphParams> program_params(plan.programs.size());
  for (auto& p : program_params) p.count = count;
  for (const ir::Binding& b : plan.bindings) {
    auto it = in.spec_params.of.find(b.spec);
    if (it == in.spec_params.of.end()) continue;
    auto& of = program_params[plan.rank_program[size_t(b.rank)]].of;
    if (auto [slot, fresh] = of.try_emplace(b.value, it->second); !fresh && slot->second != it->second) {
      why_not = plan.program_of(b.rank).file + ": input '" + b.value +
                "' stands for different spec parameters";
      return std::nullopt;
    }
  }
  std::vector<GraphTexts> program_texts;
  for (size_t p = 0; p < plan.programs.size(); ++p)
    program_texts.push_back(graph_texts(*plan.programs[p], std::move(program_params[p]), *found));

  // The run's layers may start at any of its period's parameters: the start that leaves out
  // the most, where a program's layers begin (a pipeline stage's first).
  LayerRun run;
  std::vector<int64_t> kept;
  std::vector<GraphLayers> programs;
  int64_t most = 0;
  for (int64_t shift = 0; shift < found->period; ++shift) {
    const LayerRun r{found->first + shift, found->period, found->layers - (shift ? 1 : 0)};
    std::vector<GraphLayers> cut;
    for (const auto& t : program_texts) cut.push_back(cut_into_layers(t, r));
    std::vector<int64_t> k = choose(cut, r.layers, std::max<int64_t>(2, in.keep));
    const int64_t left_out = int64_t(std::count_if(k.begin(), k.end(), [](int64_t v) { return v >= 0; }));
    if (left_out > most) {
      most = left_out;
      run = r;
      kept = std::move(k);
      programs = std::move(cut);
    }
  }
  if (!most) {
    why_not = "no program holds more layers alike in a row than it would keep";
    return std::nullopt;
  }
  const GraphLayers spec_layers = cut_into_layers(spec_texts, run);
  for (const GraphLayers* gl : [&] {
         std::vector<const GraphLayers*> all{&spec_layers};
         for (const auto& p : programs) all.push_back(&p);
         return all;
       }())
    if (run_reach(run, gl->t->texts) > 1) {
      why_not = gl->t->g->file + ": a layer reads from two layers away";
      return std::nullopt;
    }
  const std::vector<Cut> spec_cuts = cuts_of(spec_layers, kept);
  for (const Cut& c : spec_cuts)
    ONNX_TV_ASSERT(c.kept == c.first - 1 && c.kept >= 1 && kept[size_t(c.kept)] == kKeep &&
                       kept[size_t(c.kept - 1)] == kKeep,
                   "depth fold: a stretch left out does not follow the two layers kept for it");
  // The spec's layers left out are its layer kept for them, as the programs' are (the run was
  // found on texts placed by a rougher run).
  for (const Cut& c : spec_cuts) {
    const auto& text = spec_layers.layer_text;
    bool same = text[size_t(c.kept - 1)] == text[size_t(c.kept)];
    for (int64_t j = c.first; same && j <= c.last; ++j)
      same = text[size_t(j)] == text[size_t(c.kept)] ||
             (j == c.last && reads_next_alike(spec_layers.layer_masked[size_t(c.kept)],
                                              spec_layers.layer_masked[size_t(j)]));
    if (!same) {
      why_not = spec.file + ": a layer to leave out differs from the layer kept for it";
      return std::nullopt;
    }
  }
  if (!same_bindings(plan, spec_layers, programs, kept, why_not) ||
      !same_marks(in, spec_layers, programs, kept, why_not))
    return std::nullopt;

  Folded f;
  f.layers = run.layers;
  std::unordered_set<std::string> spec_gone;
  auto spec_left = leave_out(spec_layers, spec_cuts, spec_gone, why_not);
  if (!spec_left) return std::nullopt;
  f.spec = std::move(*spec_left);
  f.plan = plan;
  std::vector<std::unordered_set<std::string>> gone(plan.programs.size());
  std::vector<std::vector<char>> out(plan.programs.size());
  for (size_t p = 0; p < programs.size(); ++p) {
    const GraphLayers& gl = programs[p];
    const std::vector<Cut> cuts = cuts_of(gl, kept);
    out[p].assign(gl.node_layer.size(), 0);
    for (size_t i = 0; i < out[p].size(); ++i)
      out[p][i] = gl.node_layer[i] >= 0 && cut_holding(cuts, gl.node_layer[i]);
    if (cuts.empty()) continue;
    auto left = leave_out(gl, cuts, gone[p], why_not);
    if (!left) return std::nullopt;
    f.plan.programs[p] = std::make_shared<const ir::Graph>(std::move(*left));
  }
  if (!collectives_pair(plan, out, f.collectives, why_not)) return std::nullopt;

  std::vector<ir::Binding> bindings;
  for (const ir::Binding& b : plan.bindings) {
    const bool spec_side = spec_gone.count(b.spec) > 0;
    const bool rank_side = gone[plan.rank_program[size_t(b.rank)]].count(b.value) > 0;
    if (spec_side != rank_side) {
      why_not = b.origin + ": binds a value of a layer left out on one side only";
      return std::nullopt;
    }
    if (!spec_side) bindings.push_back(b);
  }
  f.plan.bindings = std::move(bindings);

  std::vector<std::string> name_of(static_cast<size_t>(count));
  for (const auto& [n, p] : in.spec_params.of) name_of[size_t(p)] = n;
  for (const Cut& c : spec_cuts) {
    Folded::Pair pair;
    for (int64_t k = 0; k < run.period; ++k) {
      pair.before.push_back(name_of[size_t(run.first + (c.kept - 1) * run.period + k)]);
      pair.after.push_back(name_of[size_t(run.first + c.kept * run.period + k)]);
    }
    f.pairs.push_back(std::move(pair));
    f.removed += c.last - c.first + 1;
  }
  return f;
}

}  // namespace onnx_tv::fold
