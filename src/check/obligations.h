#pragma once
// The output side of bindings: what must be proven, whether every spec output is covered, and
// the comparison itself.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/bindings.h"

namespace onnx_tv::check {

// One thing to prove: a spec region equals a rank value (replica) or the sum of a partial set.
struct Obligation {
  std::string spec;
  ir::Region region;
  std::vector<const ir::Binding*> members;  // one for a replica
};

// Resolves output bindings against the computed spec shapes and groups partial sets. InputError
// when a spec output is not covered element for element, or a rank value has the wrong shape.
// Rank graph outputs that no binding names are returned in `unused`.
std::vector<Obligation> build_obligations(const ir::Graph& spec, const ir::Plan& plan,
                                          const BoundPlan& bound, const exec::Env& spec_env,
                                          const std::vector<exec::Env>& envs,
                                          std::vector<std::string>& unused);

// How two values whose canonical forms differ compare (they may still be equal where the sides
// built products differently: see definitions in solver/context.h).
enum class Comparison {
  Same,       // proven equal
  Refuted,    // a witness point separates them
  Undecided,  // neither: the forms differ, no point tried separates them
};
// `element` names the pair (the spec output and the element's row-major offset in its region).
using CompareValues = std::function<Comparison(solver::Value spec, solver::Value plan,
                                               const std::string& element)>;

// Where an obligation fails: its first refuted element, else its first undecided one.
struct Failure {
  size_t obligation = 0;
  int64_t offset = 0;           // row-major offset inside the region
  solver::Value spec_value;
  solver::Value plan_value;     // the replica's value, or the partial set's sum
  bool refuted = false;         // a witness separates the two values
  std::string why_undecided;    // what case analysis found, where it did not conclude
};

// Compares every obligation; returns one failure per failing obligation (empty when all hold)
// and counts the elements compared. Forms holding max, min or abs atoms are first split into
// cases (Context::equal_by_cases): relu(x) - relu(-x) is x only piecewise, which neither a
// witness nor expanding definitions shows; the rest go to `compare`. An undecided element does not end an obligation's scan:
// a later element may still be refuted, which is what a verdict needs. `by_cases` is set when
// case analysis decided some pair (counts are then judged differently: check/proof_form.h).
std::vector<Failure> failures(solver::Context& ctx, const std::vector<Obligation>& obs,
                              const exec::Env& spec_env, const std::vector<exec::Env>& envs,
                              const CompareValues& compare, int64_t& compared, bool& by_cases);

// The offset in the spec value of the element at `offset` (row-major) inside a region.
int64_t spec_offset(const ir::Shape& spec_shape, const ir::Region& r, int64_t offset);

// The value of an obligation's plan side at one region offset.
solver::Value plan_value(solver::Context& ctx, const Obligation& ob,
                         const std::vector<exec::Env>& envs, int64_t offset);

}  // namespace onnx_tv::check
