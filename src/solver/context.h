#pragma once
// The symbolic engine's facade. Every tensor element is a Value: a canonical polynomial with
// exact rational coefficients over atoms, or one of the IEEE infinities that float constants
// may hold. Atoms are input symbols and interned applications of functions that are not
// polynomial (exp, log, sqrt, 1/p, erf, sin, cos, max, min, abs, p^q). Everything is
// hash-consed in a Context, so two Values are equal as real functions whenever their canonical
// forms are equal, and that is an id compare.
//
// Canonical forms (each rewrite is an identity over the reals, so equal forms are a proof):
//  - a polynomial is a sorted sum of (monomial, nonzero rational) terms; a monomial is a sorted
//    product of atom^exponent with nonzero exponents; exponents are integers, except on exp
//    atoms where they may be rational (exp(t)^q = exp(q t)).
//  - 1/p: a monomial m is inverted by negating exponents; otherwise p = c * m * p' where c is
//    a rational, m the monomial content (per-atom minimum exponent over the terms) and p' has
//    leading coefficient 1; then 1/p = (1/c) * m^-1 * inv(p'). So a/b + c/b == (a+c)/b,
//    Div(1,s) == Reciprocal(s), and constant factors move freely through divisions.
//  - exp(p): the constant term and the terms that are a rational times a single max/min atom
//    are split off as exp(term)^q factors, so exp(x - M) == exp(x) * exp(M)^-1 and the max
//    of a stable softmax cancels between numerator and denominator.
//  - log(c * m * p'): exp(t)^q factors of the monomial come out as q*t; c > 0 comes out as
//    log(c) (an atom of a constant); the rest stays log(...).
//  - sigmoid(x) = 1/(1 + exp(-x)); tanh(x) = 1 - 2/(1 + exp(2x)); relu(x) = max(x, 0).
//  - max/min: nested max (min) atoms are flattened, duplicates removed, -inf (+inf) dropped;
//    when every argument is a rational the result is that rational.
//  - sqrt(p): p^(1/2) stays an atom; pow(p, n) for integer n expands (negative n inverts);
//    pow(p, n + 1/2) is sqrt(p) times p^n; other rational exponents are pow atoms.
// Functions of rational constants stay exact atoms (exp(1/3) is exp applied to 1/3), except
// where the result is rational (exp(0) = 1, sqrt(4) = 2, log(1) = 0, max of rationals).
//
// Infinities (plan-format section 1): x + (-inf) = -inf, exp(-inf) = 0, exp(+inf) = +inf,
// max(x, -inf) = x, c * inf for a rational c != 0 is a signed infinity. Results undefined over
// the reals (inf - inf, 0 * inf, inf times a symbolic value, division by zero, log of a
// non-positive rational, a NaN) raise MathError; the evaluator adds the node to its message.
//
// Definitions: in a product of two non-constant factors, a factor of more than kDefineAbove
// terms, p = c * m * p' (content taken out), becomes c * m * def(p'), an atom that stands for
// p' exactly. Sums stay expanded (so partial sums across ranks add up to the spec's sum), but
// products never multiply term counts through the layers: without this, a norm squares a
// residual stream of hundreds of terms and a few layers exceed any memory. Both
// sides of a check that compute the same product get the same atoms, so equal structure still
// compares by id; where they computed it differently (distributed a product over a sum),
// expand_definitions() recovers the plain canonical forms, within a budget, for the final
// comparison. def(p) is p: evaluators use p's value, so witnesses are unaffected.
//
// A Context is not thread-safe; parallel work uses one Context per task.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "common/limits.h"
#include "solver/rational.h"
#include "solver/small_rational.h"

namespace onnx_tv::solver {

using PolyId = uint32_t;
using AtomId = uint32_t;

struct Value {
  PolyId poly = 0;  // the canonical polynomial, when finite
  int8_t inf = 0;   // 0: finite, +1: +inf, -1: -inf
  bool operator==(const Value&) const = default;
  bool is_finite() const { return inf == 0; }
};

struct ValueHash {
  size_t operator()(const Value& v) const { return (size_t(v.poly) << 2) ^ size_t(v.inf + 1); }
};

// An operation whose result is undefined over the reals throws MathError (common/errors.h).

// Def is a definition: def(p) stands for the polynomial p itself (see "Definitions" above).
// Ind is an indicator [n = v] of an integer input n (indicators.cpp): 0 or 1.
enum class Fn : uint8_t { Symbol, Exp, Log, Sqrt, Inv, Erf, Sin, Cos, Max, Min, Abs, Pow, Def, Ind };

// A read-only view of one atom, for printers and evaluators.
struct AtomView {
  Fn fn;
  std::span<const PolyId> args;  // Max/Min: the (finite) arguments; Pow: {base}; others: {arg}
  const Rational* exponent;      // Pow: the rational exponent; Ind: the value v; else nullptr
  const std::string* name;       // Symbol: its name; Ind: the integer input n
};

// A read-only view of one term of a canonical polynomial.
struct TermView {
  std::span<const std::pair<AtomId, SmallRational>> factors;  // atom^exponent, sorted by atom
  const SmallRational* coefficient;
  uint32_t monomial = 0;  // equal for equal monomials within one Context
};

// Slot `slot` of the top `k` of a row (TopK, ArgMax): the index of the element that has exactly
// `slot` elements ahead of it, an element being ahead of another when its value is larger
// (`largest`) or smaller, and among equal values when its index is lower (higher with
// `ties_last`, ArgMax's select_last_index). Each selection is an integer input of its own over
// [0, row size) (selections.cpp), whose indicators [s = e] are "slot `slot` holds element e".
struct Selection {
  std::vector<Value> row;
  int64_t k = 1;
  bool largest = true;
  bool ties_last = false;
  int64_t slot = 0;
  // Empty for the sorted order. A TopK with sorted=0 leaves the order of its k results to the
  // runtime: its slots are those of the sorted top k in an order of their own, named by
  // `order` (Context::fresh_order, one per node evaluation), so nothing about it is shared
  // with another node. Evaluators take the sorted order, one the runtime may give.
  std::string order;
};

// The element in a selection's slot, from comparisons of the row's elements at a point:
// sign(a, b) is the sign of x_a - x_b, nullopt when it cannot be told (intervals that overlap).
// nullopt when the slot's element cannot be told for certain.
std::optional<int64_t> selected_element(
    const Selection& s, const std::function<std::optional<int>(int64_t, int64_t)>& sign);

// A value that depends on one integer input alone, as its values over the input's range:
// values[u - lo] at input = u. A constant has an empty input and one value.
struct IntegerFunction {
  std::string input;
  int64_t lo = 0;
  std::vector<Rational> values;
};

// Totals over the coefficients sent to CaDiCaL (solver/boolean_residue.h), one SAT problem
// each, solved incrementally.
struct ResidueStats {
  int64_t coefficients = 0;   // coefficient polynomials given to CaDiCaL
  int64_t proven = 0;         // of those, shown to vanish on every allowed routing
  int64_t routings = 0;       // routings terms were rewritten under (functions of routed values)
  int64_t max_variables = 0;  // the largest problem, in variables
  int64_t max_clauses = 0;    // and in clauses
  int64_t solver_calls = 0;   // solve() calls, over every problem
  double seconds = 0;         // spent in building and solving them
  void add(const ResidueStats& o);
};

class Context {
 public:
  Context();
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Leaves.
  Value constant(const Rational& r);
  Value constant(long long i);
  Value zero() const { return Value{zero_, 0}; }
  Value one() const { return Value{one_, 0}; }
  static Value pos_inf() { return Value{0, 1}; }
  static Value neg_inf() { return Value{0, -1}; }
  // The input symbol of this name; the same name always gives the same symbol.
  Value symbol(const std::string& name);

  // Positions (positions.cpp): the values of a Range along a dimension the reduced instance
  // shrinks, as symbols, so that nothing is proven from the few values the instance keeps.
  // position(axis, k, full) is the position of reduced value k along the class `axis`, which
  // stands for position `full` of the full program: positions of one class compare by k,
  // which orders them as at full size, and evaluators (a witness) give it `full`.
  // order_of_positions is the sign of a - b where a - b is c + alpha (p - q) for two positions
  // of one class, decided by their order alone where every integer gap allows it; nullopt
  // for anything else.
  Value position(const std::string& axis, int64_t k, int64_t full);
  std::optional<int64_t> position_value(const std::string& symbol) const;
  std::optional<int> order_of_positions(Value a, Value b);
  bool has_position(Value v) const;  // a position occurs in v, in function arguments too

  // Integer inputs (indicators.cpp). integer_input(n, lo, hi) is the input n known to lie in
  // [lo, hi), written with its indicators: lo + sum_{v > lo} (v - lo) [n = v]. indicator(n, v)
  // is [n = v] (0 outside the range; [n = lo] is 1 minus the others). as_integer_function
  // reads a value that depends on one integer input alone (nullopt for anything else, or a
  // range of more than max_points values); from_integer_function builds the value that is
  // values[k] where the input is lo + k.
  Value integer_input(const std::string& name, int64_t lo, int64_t hi);
  Value indicator(const std::string& name, int64_t v);
  std::optional<std::pair<int64_t, int64_t>> integer_range(const std::string& name) const;
  std::optional<IntegerFunction> as_integer_function(Value v, int64_t max_points = 1 << 20);
  Value from_integer_function(const std::string& input, int64_t lo, std::span<const Value> values);
 private:
  std::optional<IntegerFunction> as_count_function(Value v, int64_t max_points);  // via count()
  size_t rows_of(Value v) const;  // counters.cpp

 public:
  // The selection s as a value (selections.cpp): its integer input, named by the row's
  // canonical forms, k, the order and the slot, so two TopK nodes on one canonical row share
  // their atoms; a row of rationals gives the constant index. Infinite elements are
  // Unsupported. selection(name) is what an integer input stands for, nullptr for an input of
  // the programs: evaluators compute a selection's value from its row at each point.
  Value select(const Selection& s);
  const Selection* selection(const std::string& name) const;
  // The slots of the sorted row of routed keys a count is a slot of (ranked_selection.cpp),
  // in slot order: each a count's name, or "" and the constant it is. nullptr for another
  // input. Its slots hold distinct elements, and all of them hold every element of the row.
  const std::vector<std::pair<std::string, int64_t>>* permutation(const std::string& input) const;
  // A name for the order of one unsorted TopK's results, new at each call.
  std::string fresh_order();
  // A count (counters.cpp): v, a polynomial with integer coefficients over indicators of
  // several inputs (a CumSum of routing masks: a token's place in an expert's buffer), as an
  // integer input of its own, named by v's canonical form, over the values v takes on the
  // routings the axioms allow (routing_sat.h). nullopt where v is not such a polynomial or may
  // take more than max_values values. counter(name) is the definition of a count, nullptr for
  // another input: evaluators compute a count's value from it.
  std::optional<Value> count(Value v, int64_t max_values = limits::kCountValues);
  const Value* counter(const std::string& name) const;
  // A count made so far whose definition spans several rows (selections of different rows, or
  // integer inputs at different positions): its values depend on how many there are, as a
  // token's place in a buffer depends on the number of tokens. nullptr when there is none.
  const Value* count_over_rows() const;

  // Arithmetic.
  Value add(Value a, Value b);
  Value sub(Value a, Value b);
  Value mul(Value a, Value b);
  Value div(Value a, Value b);
  Value neg(Value a);
  Value recip(Value a);
  Value sum(std::span<const Value> xs);                           // n-ary, one merge
  Value dot(std::span<const Value> a, std::span<const Value> b);  // sum of a[i]*b[i]
  // exponent must be a rational constant; a symbolic exponent is Unsupported (UNKNOWN).
  Value pow(Value base, Value exponent);

  // Functions.
  Value exp(Value a);
  Value log(Value a);
  Value sqrt(Value a);
  Value tanh(Value a);
  Value erf(Value a);
  Value sigmoid(Value a);
  Value sin(Value a);
  Value cos(Value a);
  Value abs(Value a);
  Value relu(Value a);
  Value max(std::span<const Value> xs);
  Value min(std::span<const Value> xs);

  // The value with every def(p) replaced by p, recursively (functions re-applied to expanded
  // arguments), or nullopt when some polynomial on the way exceeds `max_terms`.
  std::optional<Value> expand_definitions(Value v, size_t max_terms);
  // expand_definitions, with every term that holds an indicator, at every depth (inside the
  // arguments of functions too), passed through `filter.keep` first: it returns the factors to
  // keep (the term without the indicators it knows to be 1) or nullopt for a term it knows to
  // be 0. Before that, where a polynomial holds a term m and terms m [n = v] (m written with
  // n's lowest value eliminated: m [n = lo] = m - sum_v m [n = v]) and `filter.excludes_lowest`
  // knows n != lo where m's indicators hold, m becomes sum_{v > lo} m [n = v], so each term
  // can be decided. What the filter knows must hold wherever the caller uses the result
  // (boolean_residue.cpp knows it under one routing, and multiplies by its indicators).
  using Factors = std::vector<std::pair<AtomId, SmallRational>>;
  struct TermFilter {
    std::function<std::optional<Factors>(std::span<const std::pair<AtomId, SmallRational>>)> keep;
    std::function<bool(const std::string& input, std::span<const std::pair<AtomId, SmallRational>>)>
        excludes_lowest;
  };
  // `memo`, when given, keeps what was rewritten for later calls with the same filter.
  struct RewriteMemo {
    std::unordered_map<PolyId, Value> polys;
    std::unordered_map<AtomId, Value> atoms;
    std::unordered_set<PolyId> too_big;
  };
  std::optional<Value> rewrite_terms(Value v, const TermFilter& filter, size_t max_terms,
                                     RewriteMemo* memo = nullptr);
  // The product of the factors of a canonical monomial, or of some of them.
  Value product_of(std::span<const std::pair<AtomId, SmallRational>> factors);
  static constexpr size_t kDefineAbove = limits::kDefineAbove;

  // Stage obligations (check/stage_run.h). fresh_symbol: a symbol no name given so far names
  // (`label#k`, the first k free), a variable of its own. rename_atoms: v with each atom of its
  // monomials that `to` maps replaced by the monomial it maps to; arguments of functions are
  // left as they are. Both are the caller's to justify: it is a substitution of variables.
  // An atom's image: coefficient times a monomial; a coefficient other than 1 only for atoms
  // whose exponents are integers wherever they occur (its powers stay rational).
  struct AtomImage {
    std::vector<std::pair<AtomId, SmallRational>> factors;
    SmallRational coefficient = 1;
  };
  using AtomImages = std::unordered_map<AtomId, AtomImage>;
  Value fresh_symbol(const std::string& label);
  Value rename_atoms(Value v, const AtomImages& to);

  // Stage cuts (check's stage-wise proofs). cut(v) is v with its primitive part made a
  // definition whatever its size, c * m * def(p'): the same real value, but every later use
  // sees one atom, so polynomials stop growing at the cut. known_cut(v) is that form only when
  // an earlier cut made the atom (another side computed the same value), else v unchanged.
  Value cut(Value v);
  Value known_cut(Value v);
  // cut(v) for a sum whose terms are constants times definitions (a reduction over cut
  // values). The same atom is also what known_cut gives for the sum with those definitions
  // expanded one level, where that has the same constant and monomial outside its body: a
  // side that adds the same terms in other groups (partial sums per rank, summed after a
  // collective) then meets the atom. The expanded form is not built past `max_terms`.
  Value cut_flattening(Value v, size_t max_terms);
  // The definitions known_cut has so far treated as unfolded: those a flattening replaced by
  // their bodies, where known_cut met a value through the flat body (a proof by unfolding).
  const std::set<AtomId>& unfolded_by_cuts() const;
  // Whether a and b are equal, found by expanding definitions one at a time, newest first,
  // among those that occur in the terms where the two forms differ (on both sides where both
  // hold it), until the forms meet (true) or nothing is left to expand, a polynomial exceeds
  // `max_terms` or `max_steps` expansions were made (false, which decides nothing). Where
  // stages were cut differently on the two sides, this expands only the stages in between,
  // not the whole program.
  // The definitions it expanded are added to `unfolded`: the two forms are then equal as
  // polynomials over the other atoms, which is what a count of addends must be judged in.
  bool equal_unfolding(Value a, Value b, size_t max_terms, int max_steps = 256,
                       std::set<AtomId>* unfolded = nullptr);
  // v with every definition in `defs` that is a factor of a term replaced by its body, until
  // none is left (bodies may hold others); nullopt past max_terms. Replacing an atom by what
  // it stands for is a ring homomorphism, so forms equal before stay equal after.
  std::optional<Value> unfold(Value v, const std::set<AtomId>& defs, size_t max_terms);
  // Whether a and b are equal, found by case analysis (case_split.cpp): each max, min and abs
  // atom among the factors of a - b takes one argument per case (max(p, q) = p where p >= q),
  // the cases cover every point, and a - b must rebuild to zero in each, or the case be empty
  // by its own conditions. At most 10 atoms and 1024 cases; false decides nothing, and
  // `why_not` then says why the analysis did not conclude (empty without extreme atoms).
  bool equal_by_cases(Value a, Value b, std::string* why_not = nullptr);
  // Products examined without storing them (product_terms.cpp), for judging whether a
  // contraction counts its positions. mul_factors gives the pair mul(a, b) multiplies term by
  // term (a factor of more than kDefineAbove terms kept as its definition); regular_product
  // whether that multiplication rewrites no monomial, so the product's monomials are among the
  // pairwise products of the factors' monomials (nullopt where that takes more than `budget`
  // products of terms, which it spends). products_share_a_term is share_a_term of the products
  // a[k] * b[k], nullopt past `budget`.
  std::pair<Value, Value> mul_factors(Value a, Value b);
  std::optional<bool> regular_product(Value a, Value b, size_t& budget) const;
  std::optional<bool> products_share_a_term(std::span<const Value> a, std::span<const Value> b,
                                            size_t& budget);
  // What every BooleanResidue on this Context sent to CaDiCaL (kernels and comparisons alike).
  ResidueStats& residue_stats();
  // Changes the threshold above which product factors become definitions (kDefineAbove).
  void set_define_above(size_t terms);

  // Queries.
  bool is_constant(Value v) const;  // no symbol occurs in it (infinities are constant)
  std::optional<Rational> as_rational(Value v) const;  // finite and a plain rational
  // Whether a function atom occurs in v (through definitions too): without one, v is a
  // polynomial in its symbols and evaluates exactly.
  bool has_function(Value v) const;
  // Whether a max, min or abs atom occurs in v (through definitions and arguments too).
  bool has_extreme(Value v) const;
  // Sign of a - b when both are constants: exact for rationals; for constants with atoms
  // (exp(1/3)), by numeric evaluation when the margin is clear. nullopt when a or b is
  // symbolic or the sign cannot be decided.
  std::optional<int> compare(Value a, Value b) const;
  size_t term_count(Value v) const;  // 0 for infinities
  std::string to_string(Value v) const;

  // Introspection for evaluators and printers.
  size_t poly_term_count(PolyId p) const;
  TermView term(PolyId p, size_t i) const;
  AtomView atom(AtomId a) const;
  size_t atom_count() const;
  size_t poly_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  PolyId zero_ = 0, one_ = 0;
  friend struct Impl;
};

}  // namespace onnx_tv::solver
