#pragma once
// Stage-wise proof within one run. A whole-program proof carries every value as a polynomial
// over the program's inputs, and those grow layer after layer. Cutting makes the values the
// spec computes definition atoms (solver::Context::cut): the same real values, so nothing is
// assumed, but later polynomials are built over the atoms of the previous stage and stay small.
// A rank value whose primitive part is one the spec cut gets the same atom (known_cut), so
// both sides go on from the same atoms; a rank value that is not (a partial sum, a value only
// a rank computes) stays as it is, over the atoms it was built from. Where the two sides then
// meet at an obligation in different forms, Context::equal_unfolding expands only the stages
// in between. Every form stays equal to the value it replaces, so a verdict reached with cuts
// is as exact as one reached without: where to cut is a matter of speed only.
#include <string>
#include <unordered_set>

#include "ir/graph.h"
#include "solver/context.h"

namespace onnx_tv::check {

// A spec value that is not cut growing past the limit given to StageCuts throws
// NotApplicable: the sides no longer meet at cuts, and a whole-program run does better.

class StageCuts {
 public:
  StageCuts(solver::Context& ctx, const ir::Graph& spec, size_t max_terms);

  // A spec tensor: its float elements of more than one term become cuts, except where every
  // consumer only adds it up. A plan distributes such sums (partial sums per rank, added
  // before or after a collective), so no rank holds the spec's addends; kept expanded, the
  // spec's sum has the plan's form.
  void on_spec_tensor(const std::string& name, ir::Tensor& t);

  // A rank tensor: every element the spec cut (up to a constant and monomial factor) takes
  // the spec's atom; any other element past the size limit becomes an atom of its own.
  void on_rank_tensor(const std::string& name, ir::Tensor& t);

 private:
  void check_size(const std::string& name, const ir::Tensor& t) const;

  solver::Context& ctx_;
  size_t max_terms_;
  std::unordered_set<std::string> summed_only_;
  // Outputs of ReduceSum and ReduceMean: cut with Context::cut_flattening. Under context
  // parallelism a rank sums a key gradient over its own queries, then over the heads of a
  // group, and only then over the ranks (ReduceScatter); the spec sums per-head gradients it
  // cut. The rank's total then matches the spec's sum with those cuts expanded.
  std::unordered_set<std::string> reductions_;
};

}  // namespace onnx_tv::check
