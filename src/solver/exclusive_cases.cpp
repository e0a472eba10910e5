// Functions of a value a routing decides among exclusive cases. An expert-parallel plan runs an
// expert on a buffer slot that holds a token only where the routing put it there: the slot is
// `[s_0 = e] x + [s_1 = e] x` (padded dispatch), or `sum_i [s = i] x_i` (a slot of an argsort
// permutation), and the expert applies silu, exp or max to it. At every point at most one of
// those indicator products is 1 (one input at two values, or two slots of one selection at one
// element, indicators.cpp), so
//
//   f(rest + sum_i when_i q_i) = f(rest) + sum_i when_i (f(rest + q_i) - f(rest))
//
// holds at every point of the inputs' domain: where when_j = 1 both sides are f(rest + q_j),
// where none holds both are f(rest). The function is then applied to the values the routing
// can give, which are the ones the spec applies it to (the token itself): the two sides meet
// term by term, where otherwise only CaDiCaL's rewriting under each routing could relate them.
// Only selection indicators make cases (a token id's, under an embedding, would multiply every
// later function by the vocabulary), and only up to kExclusiveCases of them.
#include <algorithm>
#include <map>

#include "solver/context_impl.h"

namespace onnx_tv::solver {

std::optional<Context::Impl::Cases> Context::Impl::exclusive_cases(Value a) {
  if (!a.is_finite() || !(polys[a.poly].flags & kSelectionFactor)) return std::nullopt;
  // Remembered either way: a function, a cut and a known cut of one value all ask.
  if (auto it = cases_memo.find(a.poly); it != cases_memo.end()) return it->second;
  std::optional<Cases> c = find_cases(a);
  cases_memo.emplace(a.poly, c);
  return c;
}

std::optional<Context::Impl::Cases> Context::Impl::find_cases(Value a) {
  const std::vector<Term> terms = polys[a.poly].terms;  // a copy: building may grow the store
  // Each term as (its selection indicators, the rest of its monomial).
  std::vector<Term> rest;
  std::map<std::vector<Factor>, std::vector<Term>> groups;
  bool separable = true;  // no term holds two selection indicators
  for (const Term& t : terms) {
    std::vector<Factor> when, other;
    for (const Factor& f : monos[t.first].factors)
      (atoms[f.first].fn == Fn::Ind && atoms[f.first].family != 0 ? when : other).push_back(f);
    if (when.empty()) {
      rest.push_back(t);
      continue;
    }
    separable = separable && when.size() == 1;
    groups[std::move(when)].emplace_back(intern_mono(std::move(other)), t.second);
    // (a separable value's groups may exceed its cases: the shift below removes some)
    if (groups.size() > 4 * limits::kExclusiveCases) return std::nullopt;
  }
  if (groups.empty()) return std::nullopt;
  sort_and_combine(rest);
  Value base{intern_poly(std::move(rest)), 0};
  // The cases as (indicators that must all hold, the value added where they do).
  std::vector<std::pair<std::vector<AtomId>, Value>> cases;
  if (separable) {
    // a = base + sum_n p_n(n) over selection inputs n. Each p_n is shifted by its most
    // frequent value (over n's whole range) into the base, so the slots left are those where
    // p_n differs from it: a mask of two slots at the lowest element whose [s = lo] was
    // eliminated, 2x - sum_v [s_0 = v] x - sum_v [s_1 = v] x, becomes [s_0 = lo] x +
    // [s_1 = lo] x.
    std::map<std::string, std::map<int64_t, Value>> tables;
    for (auto& [when, ts] : groups) {
      // Copied first: make() may grow the store and move its atoms.
      const std::string input = atoms[when[0].first].name;
      const int64_t value = atoms[when[0].first].exponent.get_num().get_si();
      sort_and_combine(ts);
      const Value q = make(std::move(ts));
      tables[input][value] = q;
    }
    for (const auto& [input, values] : tables) {
      const auto [lo, hi] = integer_inputs.at(input);
      if (hi - lo > int64_t(limits::kExclusiveCases)) return std::nullopt;
      std::map<PolyId, int64_t> count;
      for (int64_t v = lo; v < hi; ++v) {
        auto it = values.find(v);
        ++count[it == values.end() ? ctx.zero().poly : it->second.poly];
      }
      const PolyId mode = std::max_element(count.begin(), count.end(), [](auto& x, auto& y) {
                            return x.second < y.second || (x.second == y.second && x.first > y.first);
                          })->first;
      const Value shift{mode, 0};
      base = ctx.add(base, shift);
      for (int64_t v = lo; v < hi; ++v) {
        auto it = values.find(v);
        const Value c = it == values.end() ? ctx.zero() : it->second;
        if (c.poly == mode) continue;
        AtomId ind;  // a selection's [s = v] is one atom at every v, lo included
        SmallRational one;
        ONNX_TV_ASSERT(single_atom(ctx.indicator(input, v).poly, &ind, &one),
                       "a selection's indicator is an atom");
        cases.push_back({{ind}, ctx.sub(c, shift)});
      }
    }
  } else {
    for (auto& [when, ts] : groups) {
      std::vector<AtomId> inds;
      for (const Factor& f : when) inds.push_back(f.first);
      sort_and_combine(ts);
      cases.push_back({std::move(inds), make(std::move(ts))});
    }
  }
  if (cases.empty() || cases.size() > limits::kExclusiveCases) return std::nullopt;
  // Every two cases must exclude each other: some indicator of one and some of the other
  // never hold at once.
  for (size_t i = 0; i < cases.size(); ++i)
    for (size_t j = i + 1; j < cases.size(); ++j) {
      bool excluded = false;
      for (AtomId x : cases[i].first)
        for (AtomId y : cases[j].first) excluded = excluded || exclusive(x, y);
      if (!excluded) return std::nullopt;
    }
  Cases c;
  c.rest = base;
  for (auto& [inds, q] : cases) {
    Value when = ctx.one();
    for (AtomId ind : inds) when = ctx.mul(when, value_of_atom(ind, SmallRational(1)));
    c.cases.emplace_back(when, q);
  }
  return c;
}

Value Context::Impl::by_cases(const Cases& c, const std::function<Value(Value)>& f) {
  const Value base = f(c.rest);
  std::vector<Value> parts{base};
  for (const auto& [when, q] : c.cases)
    parts.push_back(ctx.mul(when, ctx.sub(f(ctx.add(c.rest, q)), base)));
  return ctx.sum(parts);
}

}  // namespace onnx_tv::solver
