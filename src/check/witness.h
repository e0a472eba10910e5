#pragma once
// Witnesses: input values on which two canonical forms give different numbers. Random points
// may refute (a witness is a witness), never prove. A point is a witness only when both sides
// are defined there and differ beyond doubt: exact rationals, or disjoint intervals
// (solver/interval.h); long double evaluation only picks the points worth confirming.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check/result.h"
#include "solver/context.h"
#include "solver/evaluator.h"
#include "solver/interval_evaluator.h"

namespace onnx_tv::check {

// The names of the symbols `v` depends on, sorted.
std::vector<std::string> symbols_of(const solver::Context& ctx, solver::Value v);

struct Witness {
  std::vector<WitnessEntry> values;  // the symbols either side depends on
  std::string a_number, b_number;    // both sides evaluated there
};

// The random points of one run, shared by every comparison in it. A symbol's value at try t is
// a function of (seed, t, name) alone, so one evaluator per try serves every pair of values:
// the values of a staged or deep program share most of their subterms (cut atoms, layer
// activations), and each is evaluated once per try instead of once per comparison. The points
// do not depend on which values were compared before, so a witness is reproducible alone.
class WitnessSearch {
 public:
  WitnessSearch(const solver::Context& ctx, uint64_t seed);
  ~WitnessSearch();

  // A point among the first `tries` where a and b differ clearly, or nullopt. Every other try
  // is dense integers: small first (readable witnesses), then wider ranges and fractions. Dense
  // integer points on deep programs drive exp() and products beyond what floating point can
  // tell apart, so the rest are small: sparse (most inputs 0, the rest within 1/4), or dense
  // within 1/4 for a difference that only shows where many inputs are nonzero at once. A
  // search of more than 24 tries (the full search of an undecided failure) ends with a few
  // points checked by intervals alone, for a difference below long double's resolution. With
  // `shrink`, as many inputs as possible are then set to 0 while the two still differ, so the
  // witness is readable.
  std::optional<Witness> find(solver::Value a, solver::Value b, int tries, bool shrink);
  // Whether find would give a witness, without building it: the symbols of a deep value are
  // every input of the layers below it, and listing them for each of many failing elements
  // costs more than the search.
  bool refutes(solver::Value a, solver::Value b, int tries);

  // The value symbol `name` takes at try t.
  solver::Rational value(int t, const std::string& name) const;

 private:
  solver::Rational raw_value(int t, const std::string& name) const;
  solver::Evaluator& evaluator(int t);
  solver::IntervalEvaluator& intervals(int t, int level);  // the same point in intervals
  std::function<solver::Rational(const std::string&)> point(int t) const;
  std::optional<int> first_difference(solver::Value a, solver::Value b, int tries);
  // Points that set one integer input to a value whose indicator occurs in a term where a and
  // b differ (the random ids rarely hit the one that differs); try indices from kHintBase.
  std::optional<int> hinted_difference(solver::Value a, solver::Value b);
  int hint_try(const std::string& input, const solver::Rational& v);

  const solver::Context& ctx_;
  uint64_t seed_;
  std::vector<std::unique_ptr<solver::Evaluator>> evaluators_;  // by try, made on first use
  // By try and precision (witness.cpp), made on first use: they confirm what evaluators_ find.
  std::vector<std::vector<std::unique_ptr<solver::IntervalEvaluator>>> intervals_;
  // Hinted tries: (input, value) -> try index, and back. A hinted point is try 0 with that
  // input set to that value; fixed once made, so the evaluators' memos stay valid.
  std::map<std::pair<std::string, solver::Rational>, int> hint_tries_;
  std::map<int, std::pair<std::string, solver::Rational>> hints_;
};

// One search with a fresh set of evaluators (see WitnessSearch::find).
std::optional<Witness> find_witness(const solver::Context& ctx, solver::Value a, solver::Value b,
                                    uint64_t seed, int tries = 64, bool shrink = true);

}  // namespace onnx_tv::check
