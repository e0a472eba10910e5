#include "check/witness.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <unordered_set>

#include "common/limits.h"
#include "solver/evaluator.h"
#include "solver/interval_evaluator.h"

namespace onnx_tv::check {

namespace {

// Precisions of the interval evaluators that confirm a witness, tried in turn: deep values
// lose bits at every layer, so a difference that 128 bits cannot separate may need more.
constexpr mpfr_prec_t kIntervalPrecisions[] = {128, 512, 2048};
constexpr int kIntervalLevels = 3;
// A relative difference long double sees above this is a candidate for confirmation. Its own
// rounding error on deep values is far below it; 1e-15 still sees an error term a millionth
// of a millionth of the values it is added to.
constexpr long double kCandidate = 1e-15L;
// A full search (more tries than a comparison's quick one) ends with this many points checked
// by intervals alone, for a difference below long double's resolution.
constexpr int kQuickTries = limits::kWitnessQuickTries, kPreciseTries = limits::kWitnessPreciseTries;
// Hinted tries (an integer input set to a value where the forms differ) are numbered from here
// (past every random try), at most kHints per comparison and kMaxHints per search.
constexpr int kHintBase = 256;
constexpr size_t kHints = 16, kMaxHints = 1024;
// The precise check uses the interval evaluators of this level: shared by every failure
// checked at the same try, a deep program's subterms are evaluated once, not once per failure
// (86 failing outputs of one wrong constant took minutes).
constexpr int kPreciseLevel = 1;
constexpr mpfr_prec_t kPrecisePrecision = kIntervalPrecisions[kPreciseLevel];

void collect(const solver::Context& ctx, solver::PolyId p, std::set<std::string>& out,
             std::unordered_set<solver::PolyId>& seen_polys,
             std::unordered_set<solver::AtomId>& seen_atoms) {
  if (!seen_polys.insert(p).second) return;
  for (size_t i = 0; i < ctx.poly_term_count(p); ++i)
    for (const auto& [atom, exp] : ctx.term(p, i).factors) {
      if (!seen_atoms.insert(atom).second) continue;
      solver::AtomView a = ctx.atom(atom);
      if (a.fn == solver::Fn::Ind) {
        if (const solver::Selection* s = ctx.selection(*a.name)) {  // a function of its row
          for (const solver::Value& v : s->row)
            if (v.is_finite()) collect(ctx, v.poly, out, seen_polys, seen_atoms);
          continue;
        }
        if (const solver::Value* def = ctx.counter(*a.name)) {  // a function of its definition
          collect(ctx, def->poly, out, seen_polys, seen_atoms);
          continue;
        }
      }
      if (a.fn == solver::Fn::Symbol && ctx.position_value(*a.name)) continue;  // not an input
      if (a.fn == solver::Fn::Symbol || a.fn == solver::Fn::Ind) {
        out.insert(*a.name);
        continue;
      }
      for (solver::PolyId arg : a.args) collect(ctx, arg, out, seen_polys, seen_atoms);
    }
}

using SymbolValue = std::function<solver::Rational(const std::string&)>;

// A value's number at a witness: exact where it is rational, else the midpoint of a tight
// interval (long double alone can be wrong in every digit after a cancellation).
std::string number_text(const solver::Context& ctx, solver::Evaluator& ev, const SymbolValue& at,
                        solver::Value v, int digits) {
  if (!v.is_finite()) return v.inf > 0 ? "inf" : "-inf";
  if (auto q = ev.exact(v)) {
    std::string s = solver::to_string(*q);
    if (q->get_den() != 1) {
      std::ostringstream os;
      os.precision(12);
      os << " (~" << q->get_d() << ")";
      s += os.str();
    }
    return s;
  }
  solver::IntervalEvaluator iv(ctx, at, kPrecisePrecision);
  if (solver::MaybeInterval x = iv.eval(v)) return x->midpoint_text(digits);
  std::ostringstream os;
  os.precision(15);
  os << ev.approx(v);
  return os.str();
}

// Whether a and b are surely different at a point: both defined there, and exact values that
// differ or intervals that are disjoint. long double only filters: where it sees no clear
// difference there is no witness, and where it sees one, intervals must confirm it, since
// rounding error (a cancellation of large exp terms) can pass for a difference. `intervals`
// gives the interval evaluator of each level (kIntervalPrecisions) at the point.
bool differs(solver::Evaluator& ev, const std::function<solver::IntervalEvaluator&(int)>& intervals,
             solver::Value a, solver::Value b) {
  if (a == b) return false;
  const bool finite = a.is_finite() && b.is_finite();
  long double gap = 0;  // the difference long double sees
  if (finite) {
    if (auto qa = ev.exact(a), qb = ev.exact(b); qa && qb) return *qa != *qb;
    long double x = ev.approx(a), y = ev.approx(b);
    if (std::isnan(x) || std::isnan(y)) return false;
    const long double scale = std::max({1.0L, std::fabs(x), std::fabs(y)});
    gap = std::fabs(x - y);
    if (gap <= kCandidate * scale) return false;
  } else if (!a.is_finite() && !b.is_finite()) {
    return true;  // infinities of opposite signs
  }
  for (int level = 0; level < kIntervalLevels; ++level) {
    solver::IntervalEvaluator& e = intervals(level);
    if (!finite) {  // against an infinity: the finite side must be defined
      if ((a.is_finite() ? e.eval(a) : e.eval(b))) return true;
      continue;
    }
    solver::MaybeInterval x = e.eval(a), y = e.eval(b);
    if (x && y && disjoint(*x, *y)) return true;
    // Both tight enough to see the gap long double saw, and still overlapping: that gap was
    // rounding error, and more precision would only confirm it.
    if (x && y && x->width() < gap / 4 && y->width() < gap / 4) return false;
  }
  return false;
}

bool differs(const solver::Context& ctx, solver::Value a, solver::Value b,
             const std::map<std::string, solver::Rational>& point) {
  SymbolValue at = [&](const std::string& s) { return point.at(s); };
  solver::Evaluator ev(ctx, at);
  std::unique_ptr<solver::IntervalEvaluator> levels[kIntervalLevels];
  return differs(ev, [&](int level) -> solver::IntervalEvaluator& {
    if (!levels[level])
      levels[level] = std::make_unique<solver::IntervalEvaluator>(
          ctx, at, kIntervalPrecisions[level], ev);
    return *levels[level];
  }, a, b);
}

// Sets as many inputs to 0 as it can while the two sides still differ, in halving chunks, so
// the reported witness is small enough to read.
void shrink(const solver::Context& ctx, solver::Value a, solver::Value b,
            const std::vector<std::string>& names, std::map<std::string, solver::Rational>& point) {
  const size_t budget = 256;  // evaluations: keeps shrinking cheap on huge polynomials
  size_t spent = 0;
  for (size_t chunk = std::max<size_t>(1, names.size() / 2);; chunk /= 2) {
    for (size_t start = 0; start < names.size() && spent < budget; start += chunk) {
      const size_t end = std::min(names.size(), start + chunk);
      // Copied only where the chunk holds a nonzero input: points have thousands of inputs.
      bool changed = false;
      for (size_t i = start; i < end && !changed; ++i) changed = point[names[i]] != 0;
      if (!changed) continue;
      std::map<std::string, solver::Rational> trial = point;
      for (size_t i = start; i < end; ++i) trial[names[i]] = 0;
      ++spent;
      if (differs(ctx, a, b, trial)) point = std::move(trial);
    }
    if (chunk == 1 || spent >= budget) break;
  }
}

// splitmix64: a well-mixed stream from any 64-bit state, cheap enough to seed per symbol.
uint64_t next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// FNV-1a: a name hash fixed across platforms and runs (std::hash is neither).
uint64_t name_hash(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001B3ull;
  return h;
}

// Evaluators kept across comparisons hold a memo entry per polynomial reached; past this many
// in all they are dropped and rebuilt, which bounds memory on the largest programs.
constexpr size_t kMaxMemo = limits::kWitnessMemo;

}  // namespace

std::vector<std::string> symbols_of(const solver::Context& ctx, solver::Value v) {
  std::set<std::string> out;
  std::unordered_set<solver::PolyId> polys;
  std::unordered_set<solver::AtomId> atoms;
  if (v.is_finite()) collect(ctx, v.poly, out, polys, atoms);
  return {out.begin(), out.end()};
}

WitnessSearch::WitnessSearch(const solver::Context& ctx, uint64_t seed) : ctx_(ctx), seed_(seed) {}
WitnessSearch::~WitnessSearch() = default;

solver::Rational WitnessSearch::value(int t, const std::string& name) const {
  if (auto h = hints_.find(t); h != hints_.end())
    return h->second.first == name ? h->second.second : value(0, name);
  solver::Rational q = raw_value(t, name);
  q.canonicalize();  // mpq_class(n, d) keeps n/d as given: -4/16 would be printed so
  return q;
}

solver::Rational WitnessSearch::raw_value(int t, const std::string& name) const {
  uint64_t state = seed_ ^ name_hash(name) ^ (uint64_t(t) + 1) * 0xD1B54A32D192ED03ull;
  // An integer input takes a value in its range (a token id below the vocabulary size).
  if (const auto range = ctx_.integer_range(name))
    return solver::Rational(long(range->first + int64_t(next(state) % uint64_t(range->second - range->first))));
  const long span = t < 16 ? 3 : t < 40 ? 9 : 97;
  if (t % 4 == 1)
    return next(state) % 8 == 0 ? solver::Rational(long(next(state) % 9) - 4, 16)
                                : solver::Rational(0);
  if (t % 4 == 3) {
    const long k = long(next(state) % 4) + 1;
    return solver::Rational(next(state) % 2 ? k : -k, 16);
  }
  const long v = long(next(state) % uint64_t(2 * span + 1)) - span;
  return t < 40 ? solver::Rational(v) : solver::Rational(v, long(next(state) % 7) + 2);
}

std::function<solver::Rational(const std::string&)> WitnessSearch::point(int t) const {
  return [this, t](const std::string& s) { return value(t, s); };
}

solver::IntervalEvaluator& WitnessSearch::intervals(int t, int level) {
  if (size_t(t) >= intervals_.size()) intervals_.resize(size_t(t) + 1);
  auto& levels = intervals_[size_t(t)];
  if (levels.empty()) levels.resize(kIntervalLevels);
  auto& iv = levels[size_t(level)];
  if (!iv)
    iv = std::make_unique<solver::IntervalEvaluator>(ctx_, point(t), kIntervalPrecisions[level],
                                                     evaluator(t));
  return *iv;
}

solver::Evaluator& WitnessSearch::evaluator(int t) {
  if (size_t(t) >= evaluators_.size()) evaluators_.resize(size_t(t) + 1);
  auto& ev = evaluators_[size_t(t)];
  if (!ev)
    ev = std::make_unique<solver::Evaluator>(ctx_, point(t));
  return *ev;
}

std::optional<int> WitnessSearch::first_difference(solver::Value a, solver::Value b, int tries) {
  size_t held = 0;
  for (const auto& ev : evaluators_) held += ev ? ev->memo_size() : 0;
  for (const auto& levels : intervals_)
    for (const auto& iv : levels) held += iv ? iv->memo_size() : 0;
  if (held > kMaxMemo) {
    intervals_.clear();  // they use the evaluators' exact memo
    evaluators_.clear();
  }
  for (int t = 0; t < tries; ++t)
    if (differs(evaluator(t), [&](int level) -> solver::IntervalEvaluator& {
          return intervals(t, level);
        }, a, b))
      return t;
  ONNX_TV_ASSERT(tries < kHintBase, "a witness search of " + std::to_string(tries) + " tries");
  if (const std::optional<int> t = hinted_difference(a, b)) return t;
  if (tries <= kQuickTries || !a.is_finite() || !b.is_finite()) return std::nullopt;
  for (int t = 0; t < std::min(tries, kPreciseTries); ++t) {
    solver::IntervalEvaluator& precise = intervals(t, kPreciseLevel);
    solver::MaybeInterval x = precise.eval(a), y = precise.eval(b);
    if (x && y && disjoint(*x, *y)) return t;
  }
  return std::nullopt;
}

int WitnessSearch::hint_try(const std::string& input, const solver::Rational& v) {
  auto [it, fresh] = hint_tries_.try_emplace({input, v}, kHintBase + int(hint_tries_.size()));
  if (fresh) hints_[it->second] = {input, v};
  return it->second;
}

std::optional<int> WitnessSearch::hinted_difference(solver::Value a, solver::Value b) {
  if (!a.is_finite() || !b.is_finite() || hint_tries_.size() >= kMaxHints) return std::nullopt;
  // The indicators in the terms where the two forms differ (terms are sorted by monomial).
  std::set<std::pair<std::string, solver::Rational>> at;
  auto note = [&](const solver::TermView& t) {
    for (const auto& [atom, e] : t.factors) {
      const solver::AtomView av = ctx_.atom(atom);
      if (av.fn == solver::Fn::Ind && at.size() < kHints && !ctx_.selection(*av.name) &&
          !ctx_.counter(*av.name))
        at.emplace(*av.name, *av.exponent);
    }
  };
  const size_t na = ctx_.poly_term_count(a.poly), nb = ctx_.poly_term_count(b.poly);
  for (size_t i = 0, j = 0; (i < na || j < nb) && at.size() < kHints;) {
    const std::optional<solver::TermView> x = i < na ? std::optional(ctx_.term(a.poly, i)) : std::nullopt;
    const std::optional<solver::TermView> y = j < nb ? std::optional(ctx_.term(b.poly, j)) : std::nullopt;
    if (x && (!y || x->monomial < y->monomial)) {
      note(*x), ++i;
    } else if (y && (!x || y->monomial < x->monomial)) {
      note(*y), ++j;
    } else {
      if (*x->coefficient != *y->coefficient) note(*x);
      ++i, ++j;
    }
  }
  for (const auto& [input, v] : at) {
    const int t = hint_try(input, v);
    if (differs(evaluator(t), [&](int level) -> solver::IntervalEvaluator& {
          return intervals(t, level);
        }, a, b))
      return t;
  }
  return std::nullopt;
}

bool WitnessSearch::refutes(solver::Value a, solver::Value b, int tries) {
  return first_difference(a, b, tries).has_value();
}

std::optional<Witness> WitnessSearch::find(solver::Value a, solver::Value b, int tries,
                                           bool shrink_it) {
  if (const std::optional<int> found = first_difference(a, b, tries)) {
    const int t = *found;
    std::vector<std::string> names = symbols_of(ctx_, a);
    for (const auto& s : symbols_of(ctx_, b)) names.push_back(s);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::map<std::string, solver::Rational> point;
    for (const auto& n : names) point[n] = value(t, n);
    if (shrink_it) shrink(ctx_, a, b, names, point);
    SymbolValue at = [&](const std::string& s) { return point.at(s); };
    solver::Evaluator final_ev(ctx_, at);
    Witness w;
    for (const auto& n : names)
      if (point[n] != 0) w.values.push_back({n, solver::to_string(point[n]), ""});
    // Digits enough to show the difference (a tiny one needs more than 15).
    for (int digits : {15, 30, 60, 120}) {
      w.a_number = number_text(ctx_, final_ev, at, a, digits);
      w.b_number = number_text(ctx_, final_ev, at, b, digits);
      if (w.a_number != w.b_number) break;
    }
    return w;
  }
  return std::nullopt;
}

std::optional<Witness> find_witness(const solver::Context& ctx, solver::Value a, solver::Value b,
                                    uint64_t seed, int tries, bool shrink_it) {
  return WitnessSearch(ctx, seed).find(a, b, tries, shrink_it);
}

}  // namespace onnx_tv::check
