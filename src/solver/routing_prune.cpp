// Products of routing facts that no allowed routing makes true, or that hold a fact the others
// imply. A gather by a count of routing data (a buffer slot's source, a sorted pair's slot,
// the inverse of a permutation) multiplies the facts of the index by those the gathered
// elements already hold: the expert output on buffer row r, read back at the slot of sorted
// pair j, is sum_r [slot_j = r] sum_i [source_r = i] out(i), and only i = j is possible. The
// canonical form cannot see it (the two counts are different inputs), so every impossible
// product would stay and multiply through every later gather. Here each term's conjunction of
// facts is asked of CaDiCaL under the routing axioms and the counts' definitions
// (routing_sat.h): a conjunction no allowed routing satisfies is 0 at every point of the
// domain, so its term is dropped; a fact the others entail is 1 wherever they hold, so it is
// dropped from the product. Both are identities on the domain, as every rule of the form is.
// The facts of the most recently made counts are dropped first, so what is left reads the
// routing in the earliest terms it can (a sorted place rather than its inverse).
#include <algorithm>

#include "solver/context_impl.h"
#include "solver/routing_sat.h"

namespace onnx_tv::solver {

std::optional<std::vector<AtomId>> Context::Impl::routing_core(const std::vector<AtomId>& facts) {
  if (auto it = routing_cores.find(facts); it != routing_cores.end()) return it->second;
  if (!routing_sat) routing_sat = std::make_shared<RoutingSat>(ctx);
  RoutingSat& sat = *routing_sat;
  std::vector<Fact> fs;
  for (AtomId a : facts) {
    fs.push_back({atoms[a].name, atoms[a].exponent.get_num().get_si()});
    sat.add(atoms[a].name);
  }
  std::optional<std::vector<AtomId>> core;
  if (sat.satisfiable(fs)) {
    // Counts made later first (a larger polynomial id in the name), inputs of the programs
    // and selections never: they are what the other facts are defined over.
    std::vector<size_t> order;
    for (size_t i = 0; i < facts.size(); ++i)
      if (counters.count(atoms[facts[i]].name)) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      return counters.at(atoms[facts[x]].name).poly > counters.at(atoms[facts[y]].name).poly;
    });
    std::vector<bool> kept(facts.size(), true);
    for (size_t i : order) {
      std::vector<Fact> others;
      for (size_t j = 0; j < facts.size(); ++j)
        if (j != i && kept[j]) others.push_back(fs[j]);
      if (sat.entails(others, fs[i])) kept[i] = false;
    }
    core.emplace();
    for (size_t i = 0; i < facts.size(); ++i)
      if (kept[i]) core->push_back(facts[i]);
  }
  routing_cores.emplace(facts, core);
  return core;
}

Value Context::Impl::prune_routings(Value v) {
  if (!v.is_finite() || !(polys[v.poly].flags & kSelectionFactor)) return v;
  const std::vector<Term> terms = polys[v.poly].terms;  // a copy: building grows the store
  // Each term's monomial as pruned (its own where nothing is dropped, none where it is 0);
  // the value is rebuilt only where some term changed.
  std::vector<std::optional<MonoId>> pruned;
  bool changed = false;
  for (const Term& t : terms) {
    pruned.emplace_back(t.first);
    const std::vector<Factor> factors = monos[t.first].factors;
    std::vector<AtomId> facts;
    bool count = false;
    for (const auto& [a, e] : factors)
      if (atoms[a].fn == Fn::Ind) {
        facts.push_back(a);
        count = count || counters.count(atoms[a].name);
      }
    if (facts.size() < 2 || !count) continue;
    const std::optional<std::vector<AtomId>> core = routing_core(facts);
    if (core && core->size() == facts.size()) continue;
    changed = true;
    if (!core) {
      pruned.back().reset();
      continue;
    }
    std::vector<Factor> left;
    for (const Factor& f : factors)
      if (atoms[f.first].fn != Fn::Ind || std::count(core->begin(), core->end(), f.first)) left.push_back(f);
    pruned.back() = intern_mono(left);
  }
  if (!changed) return v;
  std::vector<Value> parts;
  for (size_t i = 0; i < terms.size(); ++i)
    if (pruned[i]) parts.push_back(term_value(*pruned[i], terms[i].second));
  return ctx.sum(parts);
}

}  // namespace onnx_tv::solver
