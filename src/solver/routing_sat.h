#pragma once
// Routings as a SAT problem for CaDiCaL (used by boolean_residue.cpp). A variable x(n, v) for
// every value v of every integer input n added (lo included, which canonical forms write as 1
// minus the others), with axioms that hold at every point of the domain:
//  - exactly one x(n, v) per input (an input takes one value in its range);
//  - no element in two slots of one selection: slots of one row, order and tie rule hold
//    distinct elements, so x(s, e) and x(s', e) exclude each other.
//  - a count (Context::count) equals its definition, through an adder in unary.
//  - the slots of an unsorted TopK (Selection::order) hold the same set as the sorted top k.
//  - the slots of a sorted row of routed keys (Context::permutation) are a permutation.
// A routing is a value for each input added; a fact is one [n = v].
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "solver/context.h"

namespace CaDiCaL {
class Solver;
}

namespace onnx_tv::solver {

struct Fact {
  std::string input;
  int64_t value = 0;
  bool operator<(const Fact& o) const {
    return input != o.input ? input < o.input : value < o.value;
  }
  bool operator==(const Fact&) const = default;
};

using Routing = std::map<std::string, int64_t>;

class RoutingSat {
 public:
  explicit RoutingSat(Context& ctx);
  ~RoutingSat();
  // Adds an input with its axioms (and those binding it to the selections added before).
  void add(const std::string& input);
  bool has(const std::string& input) const { return inputs_.count(input) > 0; }
  // Adds the clause "one of these facts fails" (rules out a routing or a conjunction).
  void exclude(std::span<const Fact> facts);
  // Adds the clause "one of these conjunctions holds" (each conjunction a list of facts).
  void require_one_of(const std::vector<std::vector<Fact>>& conjunctions);
  // Whether some allowed routing makes every fact in `assumed` hold; its values, when it does.
  bool satisfiable(std::span<const Fact> assumed, Routing* model = nullptr);
  // The value of `input` in some allowed routing where none of the facts `not_these` holds;
  // nullopt where there is none.
  std::optional<int64_t> value_except(const std::string& input, std::span<const Fact> not_these);
  // Whether `f` holds in every allowed routing where every fact in `assumed` holds.
  bool entails(std::span<const Fact> assumed, const Fact& f);

  int64_t variables() const { return next_ - 1; }
  int64_t clauses() const { return clauses_; }
  int64_t calls() const { return calls_; }

 private:
  struct Input {
    int64_t lo, hi;
    int base;  // the variable of value lo; value v is base + (v - lo)
  };
  int var(const Fact& f) const;
  int fresh() { return next_++; }
  void clause(const std::vector<int>& lits);
  void exactly_one(const std::vector<int>& xs);
  void at_most_one(const std::vector<int>& xs);
  void permutation(const std::vector<std::pair<std::string, int64_t>>& slots);
  void define_count(const std::string& input, Value definition);
  void same_set(const Selection& s);
  int solve(std::span<const int> assumptions);

  Context& ctx_;
  std::unique_ptr<CaDiCaL::Solver> solver_;
  std::map<std::string, Input> inputs_;
  std::map<std::string, std::vector<std::string>> rows_;  // selections by row: their inputs
  std::set<std::string> permuted_;  // the unsorted rows whose set axiom is added
  std::set<const void*> permutations_;  // the rows of routed keys whose axioms are added
  int next_ = 1;
  int64_t clauses_ = 0, calls_ = 0;
};

}  // namespace onnx_tv::solver
