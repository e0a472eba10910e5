// Finding micro-batched programs (micro_batches.h): families of bindings, then colours through
// the linked plan; the bodies of each program are checked by bodies_of.
#include <algorithm>
#include <unordered_set>

#include "ir/producers.h"
#include "reduce/micro_batch_detail.h"

namespace onnx_tv::reduce {

using namespace micro;

namespace {

// Families of rank r's bindings: the same binding but for a local_slice that cuts one
// dimension into n >= 4 equal consecutive pieces. value -> piece; n in `count`.
std::map<std::string, Piece> families_of(const ir::Plan& plan, int64_t r, int64_t& count,
                                         std::string& why_not) {
  struct Entry {
    int64_t start, end;
    std::string value;
  };
  std::map<std::string, std::vector<Entry>> groups;
  std::map<std::string, size_t> dim_of;
  for (const auto& b : plan.bindings) {
    if (b.rank != r || !b.local_slice) continue;
    for (size_t d = 0; d < b.local_slice->size(); ++d) {
      const auto& e = (*b.local_slice)[d];
      if (!e) continue;
      const std::string key = ir::binding_key(b, d);
      groups[key].push_back({e->first, e->second, b.value});
      dim_of[key] = d;
    }
  }
  std::map<std::string, Piece> out;
  int64_t family = 0;
  for (auto& [key, entries] : groups) {
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.start < b.start; });
    const int64_t n = int64_t(entries.size()), s = entries[0].end - entries[0].start;
    bool even = n >= 4 && s > 0;
    for (int64_t k = 0; k < n && even; ++k)
      even = entries[size_t(k)].start == k * s && entries[size_t(k)].end == (k + 1) * s;
    if (!even) continue;
    if (count && count != n) {
      why_not = "bindings cut micro-batches into " + std::to_string(count) + " and into " +
                std::to_string(n) + " pieces";
      return {};
    }
    count = n;
    for (int64_t k = 0; k < n; ++k) {
      const std::string& v = entries[size_t(k)].value;
      if (out.count(v)) {
        why_not = "rank " + std::to_string(r) + "'s value '" + v + "' is bound to two micro-batches";
        return {};
      }
      out[v] = Piece{family, k, dim_of[key]};
    }
    ++family;
  }
  return out;
}


}  // namespace

MicroBatches find_micro_batches(const ir::Plan& plan, const exec::LinkedPlan& linked) {
  MicroBatches mb;
  const size_t ranks = size_t(plan.world_size);
  std::vector<Coloured> cs(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    cs[r].g = &plan.program_of(int64_t(r));
    cs[r].label = "rank " + std::to_string(r) + " (" + cs[r].g->file + ")";
    cs[r].pieces = families_of(plan, int64_t(r), mb.count, mb.why_not);
    if (!mb.why_not.empty()) {
      mb.count = 0;
      return mb;
    }
  }
  if (mb.count == 0) return mb;
  for (const auto& b : plan.bindings) ++cs[size_t(b.rank)].bindings[b.value];
  std::unordered_map<const ir::Graph*, std::unordered_set<std::string>> outputs_of;
  for (size_t r = 0; r < ranks; ++r) {
    cs[r].node_colour.resize(cs[r].g->nodes.size());
    auto [produced, fresh] = outputs_of.try_emplace(cs[r].g);  // per file, not per rank
    if (fresh)
      for (const auto& node : cs[r].g->nodes)
        produced->second.insert(node.outputs.begin(), node.outputs.end());
    for (const auto& [v, p] : cs[r].pieces) {
      // A bound piece is cut with its body, and so is every binding naming it: it may have
      // no other.
      if (cs[r].bindings[v] != 1) {
        mb.why_not = cs[r].label + ": '" + v + "' is bound to micro-batch " + std::to_string(p.k) +
                     " and to something else";
        mb.count = 0;
        mb.piece_dims.clear();
        return mb;
      }
      // Only inputs are coloured by their binding; a bound output takes the colour of what
      // computes it, and must turn out to be its micro-batch's.
      if (!produced->second.count(v)) cs[r].colour[v] = one_colour(p.k);
      mb.piece_dims[{int64_t(r), v}] = p.dim;
    }
  }
  // Colours flow along the linked steps, and inside a rank along its file's producer table
  // (ir/producers.h): a value's colour is its producer's, a bound input's its piece's.
  std::unordered_map<const ir::Graph*, ir::InputProducers> tables;
  std::vector<const ir::InputProducers*> producers(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    auto [it, fresh] = tables.try_emplace(cs[r].g);
    if (fresh) it->second = ir::input_producers(*cs[r].g);
    producers[r] = &it->second;
  }
  auto inputs_colour = [&](size_t r, size_t i) {
    Colour c;
    const ir::Node& node = cs[r].g->nodes[i];
    const std::vector<size_t>& from = (*producers[r])[i];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      if (node.inputs[k].empty()) continue;
      if (from[k] == ir::kNoProducer) add_to(c, colour_of(cs[r], node.inputs[k]));
      else if (const Colour& pc = cs[r].node_colour[from[k]]; popcount(pc)) add_to(c, pc);
    }
    return c;
  };
  for (const exec::Step& step : linked.steps) {
    Colour c;
    if (step.kind == exec::Step::Kind::P2P) {
      const auto& send = step.members[0];
      c = inputs_colour(size_t(send.rank), send.node_index);
    } else {
      for (const auto& m : step.members) add_to(c, inputs_colour(size_t(m.rank), m.node_index));
    }
    for (const auto& m : step.members) cs[size_t(m.rank)].node_colour[m.node_index] = c;
  }
  mb.programs.assign(plan.programs.size(), std::nullopt);
  auto none = [](std::string why) {
    MicroBatches out;
    out.why_not = std::move(why);
    return out;
  };
  // Ranks running one file mostly colour it alike (every data-parallel replica does): what
  // bodies_of reads is then the same, and so is what it finds.
  std::vector<int64_t> checked(plan.programs.size(), -1);  // program -> a rank checked on it
  auto alike = [&](const Coloured& a, const Coloured& b) {
    return a.g == b.g && a.node_colour == b.node_colour && a.pieces == b.pieces &&
           a.bindings == b.bindings;
  };
  for (size_t r = 0; r < ranks; ++r) {
    const size_t p = plan.rank_program[r];
    if (checked[p] >= 0 && alike(cs[size_t(checked[p])], cs[r])) continue;
    for (size_t i = 0; i < cs[r].g->nodes.size(); ++i)  // by name, as bodies_of reads them
      if (popcount(cs[r].node_colour[i]))
        for (const auto& o : cs[r].g->nodes[i].outputs)
          if (!o.empty()) cs[r].colour[o] = cs[r].node_colour[i];
    auto got = bodies_of(cs[r], mb.count);
    if (auto* no = std::get_if<NoBodies>(&got)) return none(no->why);
    ProgramBodies& b = std::get<ProgramBodies>(got);
    auto& slot = mb.programs[p];
    if (!slot) slot = std::move(b);
    else if (!(*slot == b))
      return none(cs[r].label + ": its micro-batches differ from another rank's running the same file");
    if (checked[p] < 0) checked[p] = int64_t(r);
  }
  return mb;
}


}  // namespace onnx_tv::reduce
