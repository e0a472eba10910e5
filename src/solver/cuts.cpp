// Stage cuts: definitions made on purpose at stage boundaries, and the comparison that
// expands them only as far as two forms need (see the notes on cut() in context.h).
#include <algorithm>
#include <cmath>
#include <set>

#include "solver/context_impl.h"
#include "common/limits.h"

namespace onnx_tv::solver {

// Small monomial content stays outside the definition, so sides that scale a value by
// different monomials still meet at one atom; a larger one goes inside, or factors such as a
// norm's 1/sqrt(...) would pile up in one monomial through the layers.
constexpr size_t kOutsideFactors = limits::kOutsideFactors;

// A single term is never cut: it is as small as a value gets, and cutting it would make
// cut(cut(v)) != cut(v) where the content of v's cut form is large (def(m * def(p)) where
// the first cut gave m * def(p)). A side that passes a cut value on (a Recv, a Reshape) and
// has it cut again would then hold another atom than the side that used it directly.
//
// A value every term of which holds a selection's indicator (a routing mask, the gates, a
// buffer slot a routing fills, a routed expert's output) is not cut either: the routing must
// stay visible, so that a function of a routed slot is taken case by case
// (exclusive_cases.cpp) and a mask times the gates it covers reduces to the gates. Such values
// have one term per routing case and never hold a residual stream (which adds unrouted terms),
// so they stay small. Past kRoutedCutAbove terms one is cut all the same: a sum over the
// experts of routed terms (a sequence-wise auxiliary loss, sum_e f_e P_e with f_e counting
// the tokens routed to e: one term per token, top-k slot and expert) is no slot a function is
// applied to, and kept whole it fills every value it reaches.
bool Context::Impl::cut_form(Value v, SmallRational* c, MonoId* m, PolyId* body) {
  if (!v.is_finite() || polys[v.poly].terms.size() < 2) return false;
  if ((polys[v.poly].flags & kSelectionFactor) &&
      polys[v.poly].terms.size() <= limits::kRoutedCutAbove) {
    bool routed = true;
    for (const Term& t : polys[v.poly].terms) routed = routed && (monos[t.first].flags & kSelectionFactor);
    if (routed) return false;
  }
  const Primitive& pr = primitive(v.poly);
  if (monos[pr.m].factors.size() <= kOutsideFactors) {
    if (pr.rest == ctx.one_) return false;  // c * m: nothing to cut
    *c = SmallRational(pr.c);
    *m = pr.m;
    *body = pr.rest;
    return true;
  }
  *c = polys[v.poly].terms[0].second;
  *m = one_mono;
  *body = scale(v, c->reciprocal()).poly;
  return true;
}

Value Context::cut(Value v) {
  SmallRational c;
  MonoId m;
  PolyId body;
  // A routed value is cut case by case, as known_cut meets it.
  if (auto cases = impl_->exclusive_cases(v))
    return impl_->by_cases(*cases, [&](Value x) { return cut(x); });
  if (!impl_->cut_form(v, &c, &m, &body)) return v;
  const AtomId d = impl_->definition_atom(body);
  impl_->cut_atoms.emplace(body, d);
  return impl_->term_value(impl_->mono_mul(m, impl_->mono_of_atom(d, 1)), c);
}

Value Context::known_cut(Value v) {
  SmallRational c;
  MonoId m;
  PolyId body;
  if (impl_->cut_atoms.empty()) return v;
  // A value a routing decides among cases (a buffer slot, an expert's output on it) meets the
  // spec's cuts case by case: in the case where the slot holds token t, it is what the spec
  // computes from t.
  if (auto cases = impl_->exclusive_cases(v))
    return impl_->by_cases(*cases, [&](Value x) { return known_cut(x); });
  if (!impl_->cut_form(v, &c, &m, &body)) return v;
  auto it = impl_->cut_atoms.find(body);
  if (it == impl_->cut_atoms.end()) return v;
  if (auto f = impl_->flattened.find(body); f != impl_->flattened.end())
    impl_->unfolded_by_cuts.insert(f->second.begin(), f->second.end());
  return impl_->term_value(impl_->mono_mul(m, impl_->mono_of_atom(it->second, 1)), c);
}

Value Context::cut_flattening(Value v, size_t max_terms) {
  const Value out = cut(v);
  if (out == v || impl_->exclusive_cases(v)) return out;  // a routed value: cut case by case
  std::vector<Value> parts;
  std::vector<AtomId> replaced;  // the definitions whose bodies the flat form holds
  bool flattened = false;
  for (size_t i = 0, n = poly_term_count(v.poly); i < n; ++i) {
    TermView tv = term(v.poly, i);
    const std::vector<Factor> factors(tv.factors.begin(), tv.factors.end());
    const auto linear_def = [&](const Factor& f) {
      return atom(f.first).fn == Fn::Def && f.second.to_rational() == 1;
    };
    const bool one_def = std::count_if(factors.begin(), factors.end(), linear_def) == 1;
    Value t = constant(tv.coefficient->to_rational());
    for (const Factor& f : factors) {
      const bool open = one_def && linear_def(f);
      if (open) replaced.push_back(f.first);
      t = mul(t, open ? Value{atom(f.first).args[0], 0} : impl_->value_of_atom(f.first, f.second));
    }
    flattened = flattened || one_def;
    parts.push_back(t);
    if (term_count(t) > max_terms) return out;
  }
  if (!flattened) return out;
  const Value flat = sum(parts);
  SmallRational c, fc;
  MonoId m, fm;
  PolyId body, flat_body;
  if (term_count(flat) > max_terms || !impl_->cut_form(v, &c, &m, &body) ||
      !impl_->cut_form(flat, &fc, &fm, &flat_body) || m != fm ||
      c.to_rational() != fc.to_rational())
    return out;
  // Exact: flat == v, and with the same constant and monomial outside, their bodies are equal.
  // A side that meets the atom through the flat body has been proven equal with the replaced
  // definitions unfolded, and counts must be judged so (check/proof_form.h).
  if (impl_->cut_atoms.emplace(flat_body, impl_->cut_atoms.at(body)).second)
    impl_->flattened.emplace(flat_body, std::move(replaced));
  return out;
}

// Definition atoms that occur as factors of the terms in which a and b differ (a monomial
// only one side has, or the same monomial with another coefficient): the ones to expand.
std::set<AtomId> Context::Impl::differing_definitions(PolyId a, PolyId b) const {
  std::set<AtomId> out;
  auto note = [&](MonoId m) {
    for (const Factor& f : monos[m].factors)
      if (atoms[f.first].fn == Fn::Def) out.insert(f.first);
  };
  const auto& ta = polys[a].terms;
  const auto& tb = polys[b].terms;
  std::set<std::pair<MonoId, uint64_t>> in_b;
  for (const Term& t : tb) in_b.emplace(t.first, t.second.hash());
  std::set<std::pair<MonoId, uint64_t>> in_a;
  for (const Term& t : ta) {
    in_a.emplace(t.first, t.second.hash());
    if (!in_b.count({t.first, t.second.hash()})) note(t.first);
  }
  for (const Term& t : tb)
    if (!in_a.count({t.first, t.second.hash()})) note(t.first);
  return out;
}

bool Context::Impl::has_factor(PolyId p, AtomId d) const {
  for (const Term& t : polys[p].terms)
    for (const Factor& f : monos[t.first].factors)
      if (f.first == d) return true;
  return false;
}

std::optional<Value> Context::Impl::substitute(Value v, AtomId d, size_t max_terms) {
  struct Restore {
    bool& flag;
    bool saved;
    ~Restore() { flag = saved; }
  } restore{defining, defining};
  defining = false;  // products made while expanding expand fully
  const Value body{atoms[d].args[0], 0};
  std::vector<Value> terms;
  const size_t n = ctx.poly_term_count(v.poly);
  for (size_t i = 0; i < n; ++i) {
    TermView tv = ctx.term(v.poly, i);
    const Rational coef = tv.coefficient->to_rational();
    const std::vector<Factor> factors(tv.factors.begin(), tv.factors.end());
    Value t = ctx.constant(coef);
    for (const auto& [x, e] : factors) {
      // Give up before building a power or a product certain to be far past the budget
      // (the number of terms multiplies): a body of a few thousand terms squared would
      // take all memory before any check after the fact.
      const Rational ex = e.to_rational();
      // Only where d occurs to positive powers is this a ring homomorphism: forms equal
      // before are equal after, whatever else is unfolded and in which order.
      if (x == d && sgn(ex) < 0) return std::nullopt;
      if (x == d && ex > 1 && ex.get_den() == 1 &&
          std::pow(double(ctx.term_count(body)), ex.get_d()) > 16.0 * double(max_terms))
        return std::nullopt;
      Value f = x == d ? ctx.pow(body, ctx.constant(ex)) : value_of_atom(x, e);
      if (double(ctx.term_count(t)) * double(ctx.term_count(f)) > 16.0 * double(max_terms))
        return std::nullopt;
      t = ctx.mul(t, f);
      if (ctx.term_count(t) > max_terms) return std::nullopt;
    }
    terms.push_back(t);
  }
  Value out = ctx.sum(terms);
  if (ctx.term_count(out) > max_terms) return std::nullopt;
  return out;
}

bool Context::equal_unfolding(Value a, Value b, size_t max_terms, int max_steps,
                              std::set<AtomId>* unfolded) {
  for (int step = 0; step <= max_steps; ++step) {
    if (a == b) return true;
    if (!a.is_finite() || !b.is_finite()) return false;
    // Both sides may hold the newest differing definition: expanding it in both keeps each
    // side its own value, and removes it from the comparison.
    const std::set<AtomId> differing = impl_->differing_definitions(a.poly, b.poly);
    if (differing.empty()) return false;
    const AtomId newest = *differing.rbegin();
    if (unfolded) unfolded->insert(newest);
    for (Value* side : {&a, &b}) {
      if (!impl_->has_factor(side->poly, newest)) continue;
      auto next = impl_->substitute(*side, newest, max_terms);
      if (!next) return false;
      *side = *next;
    }
  }
  return false;
}

const std::set<AtomId>& Context::unfolded_by_cuts() const { return impl_->unfolded_by_cuts; }

std::optional<Value> Context::unfold(Value v, const std::set<AtomId>& defs, size_t max_terms) {
  while (v.is_finite()) {
    // The newest first, as equal_unfolding expands them: a body may hold older ones.
    std::optional<AtomId> next;
    for (size_t i = 0, n = poly_term_count(v.poly); i < n; ++i)
      for (const Factor& f : term(v.poly, i).factors)
        if (defs.count(f.first) && (!next || f.first > *next)) next = f.first;
    if (!next) break;
    auto out = impl_->substitute(v, *next, max_terms);
    if (!out) return std::nullopt;
    v = *out;
  }
  return v;
}

}  // namespace onnx_tv::solver
