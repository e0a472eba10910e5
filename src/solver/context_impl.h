#pragma once
// Private to the solver: the hash-consed storage behind Context and the helpers its files
// share. Atoms, monomials and polynomials live in vectors and are named by their index; an
// intern table per kind maps content to index, so building a node that exists returns it.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "solver/context.h"
#include "solver/pair_cache.h"
#include "solver/table_allocator.h"

namespace onnx_tv::solver {

class RoutingSat;  // routing_sat.h

using MonoId = uint32_t;
using Factor = std::pair<AtomId, SmallRational>;  // atom^exponent, inline when small
using Term = std::pair<MonoId, SmallRational>;  // coefficient * monomial

inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
inline uint64_t hash_combine(uint64_t h, uint64_t v) { return mix64(h ^ (v + 0x632be59bd9b4e019ULL + (h << 6))); }
uint64_t hash_rational(const Rational& r);

enum : uint8_t {
  kHasSymbol = 1,    // a symbol occurs (so the value is not a constant)
  kHasFunction = 2,  // a function atom occurs (so exact evaluation may not apply)
  kIrregular = 4,    // monomial only: a factor that must be rewritten (inv(q)^-1, sqrt(p)^2)
  kHasExtreme = 8,   // a max, min or abs atom occurs (case analysis may split it)
  kSelectionFactor = 16,  // a selection's indicator is a factor (not inside an argument)
};

struct AtomNode {
  Fn fn;
  std::vector<PolyId> args;
  Rational exponent;  // Pow only
  std::string name;   // Symbol only
  uint64_t hash = 0;
  uint8_t flags = 0;
  // Ind of a selection: the slots of one row, order and tie rule share a family, and two of
  // them never hold the same element (0 for every other atom).
  uint32_t family = 0;
};

struct MonoNode {
  std::vector<Factor> factors;  // sorted by atom, nonzero exponents
  uint64_t hash = 0;
  uint8_t flags = 0;
};

struct PolyNode {
  std::vector<Term> terms;  // sorted by monomial, nonzero coefficients
  uint64_t hash = 0;
  uint8_t flags = 0;
};

// Open addressing over ids. The hash is kept beside the id so most probes never touch nodes.
class InternTable {
 public:
  template <class Eq>
  uint32_t find(uint64_t hash, Eq&& eq) const {
    if (slots_.empty()) return kNone;
    size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const auto& s = slots_[i];
      if (s.second == kNone) return kNone;
      if (s.first == hash && eq(s.second)) return s.second;
    }
  }
  void insert(uint64_t hash, uint32_t id);
  static constexpr uint32_t kNone = 0xffffffffu;

 private:
  std::vector<std::pair<uint64_t, uint32_t>, TableAllocator<std::pair<uint64_t, uint32_t>>> slots_;
  size_t count_ = 0;
};

// p = c * m * rest, where c is the leading coefficient, m the monomial content and rest has
// leading coefficient 1 and no monomial content.
struct Primitive {
  Rational c;
  MonoId m;
  PolyId rest;
};

struct Context::Impl {
  explicit Impl(Context& c);

  std::optional<std::pair<PolyId, PolyId>> last_negated;  // Context::neg's last (from, to)

  Context& ctx;
  std::vector<AtomNode> atoms;
  std::vector<MonoNode> monos;
  std::vector<PolyNode> polys;
  InternTable atom_table, mono_table, poly_table;
  std::unordered_map<std::string, AtomId> symbols;
  struct Position {
    std::string axis;
    int64_t k, full;
  };
  std::unordered_map<std::string, Position> positions;  // by symbol name
  PairCache mono_mul_cache;
  std::unordered_map<PolyId, Primitive> primitive_cache;
  std::unordered_map<PolyId, Value> recip_cache, exp_cache, log_cache;
  MonoId one_mono = 0;
  std::vector<Factor> mono_scratch;  // mono_mul's merge buffer
  AtomId e_atom = InternTable::kNone;  // exp(1), created on first use
  // Nesting of binomial rewrites. Several inverses in one monomial can send the rewrites of
  // reducible_inv around a cycle; past a fixed depth they stop and the monomial stays as is.
  int binomial_depth = 0;
  // Off while expand_definitions rebuilds values, so products expand fully there.
  bool defining = true;

  // Interning. Inputs must already be canonical (sorted, nonzero).
  AtomId intern_atom(AtomNode n);
  MonoId intern_mono(std::vector<Factor> factors) { return intern_mono(factors, &factors); }
  // The same from a view: a monomial that exists costs no allocation. `owned`, when given,
  // holds the factors and is moved into the store instead of copied.
  MonoId intern_mono(std::span<const Factor> factors, std::vector<Factor>* owned);
  PolyId intern_poly(std::vector<Term> terms);

  MonoId mono_mul(MonoId a, MonoId b);
  MonoId mono_pow(MonoId a, const SmallRational& q);  // every exponent times q
  MonoId mono_of_atom(AtomId a, const SmallRational& e);
  PolyId poly_of_atom(AtomId a);  // 1 * a^1
  Value value_of_atom(AtomId a, const SmallRational& e);
  Value term_value(MonoId m, const SmallRational& c);
  AtomId exp_one();

  // Turns sorted, zero-free terms into a Value, rewriting irregular monomials.
  Value make(std::vector<Term> terms);
  Value expand_irregular(const Term& t);
  // A factor whose power simplifies on its own: inv(q)^-k, sqrt(p)^2, pow(p, 1/3)^3.
  bool irregular_factor(AtomId a, const SmallRational& e) const;
  // The Inv atom of a monomial that reduces against the rest of it: with q = m1 + b*m2,
  // m2 * inv(q) = (1 - m1 * inv(q)) / b, so no canonical monomial holds both m2 and inv(q)
  // (this makes sigmoid(x) + sigmoid(-x) == 1 and tanh odd). kNone when there is none.
  // *second tells which rule applies (see store.cpp).
  AtomId reducible_inv(std::span<const Factor> factors, bool* second) const;
  // Whether two indicators of one input occur among the factors ([n = 1][n = 2] = 0).
  bool exclusive_indicators(std::span<const Factor> factors) const;
  // Whether two indicator atoms never hold at once: one input at two values, or two slots of
  // one selection family at one element.
  bool exclusive(AtomId a, AtomId b) const;
  // The rewrite of a monomial holding indicators: 0 where two of one input meet, each
  // indicator to the power 1; nullopt when no indicator needs it (indicators.cpp).
  std::optional<Value> expand_indicators(const Term& t);
  // Integer inputs by name: the range [lo, hi) their indicators cover (indicators.cpp).
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> integer_inputs;
  // The integer inputs that are selections of TopK or ArgMax (selections.cpp), by name.
  std::unordered_map<std::string, Selection> selections;
  // A selection's family (AtomNode::family), by input name, and the families by key.
  std::unordered_map<std::string, uint32_t> family_of_input;
  std::unordered_map<std::string, uint32_t> families;
  // A value a routing decides among exclusive cases (exclusive_cases.cpp): rest + sum_i
  // when_i * cases_i, where the when_i are products of selection indicators no two of which
  // hold at once. nullopt when `a` holds no selection indicator or is not of that form.
  struct Cases {
    Value rest;
    std::vector<std::pair<Value, Value>> cases;  // (when_i, q_i)
  };
  std::optional<Cases> exclusive_cases(Value a);  // memoized find_cases
  std::optional<Cases> find_cases(Value a);
  std::unordered_map<PolyId, std::optional<Cases>> cases_memo;
  // f(a) = f(rest) + sum_i when_i (f(rest + q_i) - f(rest)) for such an `a`.
  Value by_cases(const Cases& c, const std::function<Value(Value)>& f);
  int64_t orders = 0;  // fresh_order's count
  // A sorted selection over integer keys a routing decides, as a count: the element whose
  // rank is the slot (ranked_selection.cpp). nullopt for a row of other values.
  std::optional<Value> ranked_selection(const Selection& s);
  // A polynomial with integer coefficients over indicators, each to the power 1: a count's
  // definition or a routed key (counters.cpp).
  bool integer_over_indicators(uint32_t poly) const;
  std::optional<Value> ahead(const Selection& s, int64_t q_prime, int64_t q);
  // v without the terms whose routing facts no allowed routing makes true, and without the
  // facts of a term the others entail, where a term holds a count's fact and another
  // (routing_prune.cpp). routing_core: the facts kept, nullopt for an impossible conjunction.
  Value prune_routings(Value v);
  std::optional<std::vector<AtomId>> routing_core(const std::vector<AtomId>& facts);
  std::map<std::vector<AtomId>, std::optional<std::vector<AtomId>>> routing_cores;
  // Every input the counts and cores asked of, with its axioms: one solver, which keeps what
  // it learns (counters.cpp, routing_prune.cpp).
  std::shared_ptr<RoutingSat> routing_sat;
  // Rows of routed keys (ranked_selection.cpp), by family: every slot's count (or constant,
  // with an empty name), and the family of each such count.
  std::unordered_map<std::string, std::vector<std::pair<std::string, int64_t>>> permutations;
  std::unordered_map<std::string, std::string> permutation_of_input;
  std::optional<std::vector<Value>> ranked_elements(const Selection& s);
  std::optional<std::vector<Value>> inverse_elements(const Selection& s);
  // The integer inputs that are counts (counters.cpp), by name: their definitions.
  std::unordered_map<std::string, Value> counters;
  std::optional<Value> count_over_rows;  // the first such count's definition

  const Primitive& primitive(PolyId p);
  AtomId first_inv(PolyId p) const;                // the lowest Inv atom occurring in p
  Value times_cancelling(PolyId p, AtomId inv);  // p * q where inv = inv(q), q * inv(q) = 1
  bool is_rational(PolyId p) const;
  bool single_atom(PolyId p, AtomId* a, SmallRational* coef) const;  // p = coef * a^1
  int sign_of_constant(Value v) const;                             // 0 when unknown
  Value scale(Value v, const SmallRational& c);
  Value rational_pow(const Rational& base, const Rational& q);
  Value pow_int(Value base, const mpz_class& n);
  Value odd_function(Fn fn, Value a, bool odd);  // erf, sin (odd) and cos (even)
  Value extreme(std::span<const Value> xs, bool is_max);
  // c * m * def(p') for p = c * m * p'; p itself when it has one term.
  Value define(Value p);
  AtomId definition_atom(PolyId rest);  // def(rest)
  // v = c * m * body, the form cut() keeps (see cuts.cpp); false when there is nothing to
  // cut (a constant times a small monomial).
  bool cut_form(Value v, SmallRational* c, MonoId* m, PolyId* body);
  // For equal_unfolding (cuts.cpp).
  std::set<AtomId> differing_definitions(PolyId a, PolyId b) const;
  bool has_factor(PolyId p, AtomId d) const;
  // v with the definition atom d, where it is a factor of a term, replaced by its body;
  // nullopt past max_terms. Products built here expand fully (no new definitions).
  std::optional<Value> substitute(Value v, AtomId d, size_t max_terms);
  // Whether a factor with `terms` terms is kept as a definition in a product with a factor
  // that is not a constant.
  bool defines(size_t terms) const { return defining && terms > define_above; }
  size_t define_above = Context::kDefineAbove;
  // expand_definitions' results, kept across calls, and what exceeded `expand_budget`.
  std::unordered_map<PolyId, Value> expanded_polys;
  std::unordered_map<AtomId, Value> expanded_atoms;
  std::unordered_set<PolyId> expand_too_big;
  size_t expand_budget = 0;
  // Primitive parts made definitions by cut(), to the atom that stands for each.
  std::unordered_map<PolyId, AtomId> cut_atoms;
  // Bodies cut_flattening filed under an atom, with the definitions the flattening replaced by
  // their bodies; known_cut adds those to unfolded_by_cuts where it meets such a body.
  std::unordered_map<PolyId, std::vector<AtomId>> flattened;
  std::set<AtomId> unfolded_by_cuts;
  ResidueStats residue_stats;
};

// The factors of the product of two monomials (sorted by atom, zero exponents dropped).
void merge_factors(std::span<const Factor> fa, std::span<const Factor> fb, std::vector<Factor>& out);

// Sorts terms by monomial and sums duplicates, dropping zeros.
void sort_and_combine(std::vector<Term>& terms);

}  // namespace onnx_tv::solver
