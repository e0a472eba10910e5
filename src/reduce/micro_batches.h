#pragma once
// Fewer micro-batches. A pipeline or gradient-accumulation program repeats one body per
// micro-batch: body k reads piece k of its micro-batched inputs (bindings whose local_slice
// cuts one dimension into n equal pieces), and the bodies' results meet only in sums (the
// accumulation of gradients and losses). When every body is the same kernel (node for node
// the same ops, attributes and constants, reading the same shared values and its own pieces)
// and the sums are plain sums of one value per body, the count of micro-batches is one more
// count of pieces, like the ranks of a mesh axis (mesh_axes.h): the program with 2 or 3 bodies
// is the same kernel over 2 or 3 pieces, and it shrinks like them (to 2 and to 3).
// docs/shape-reduction.md ("Fewer micro-batches") gives the argument and its assumptions.
//
// The bodies are found from the dataflow, not from names: every value is coloured with the
// micro-batches it depends on (through the linked plan, so a pipeline stage's received
// activations take the colour of what was sent). Nothing here is a guess that is trusted: each
// body is checked against body 0, and the collectives and Send/Recv of the cut plan must pair
// exactly as in the full one.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "exec/linker.h"
#include "ir/plan.h"

namespace onnx_tv::reduce {

// The key of `keep` (choose again) under which micro-batches keep their full count.
inline const std::string kMicroBatches = "(micro-batches)";

// A sum of one value per body: the last node of its chain, the value each body adds, and the
// values no body computes that the chain starts from (a gradient buffer), added once.
struct Total {
  size_t node = 0;
  std::vector<std::string> leaves;
  std::vector<std::string> shared;
  std::string declared_from;  // a partial sum whose declared shape the total takes, or ""
  bool operator==(const Total&) const = default;
};

// One program's bodies, as found on every rank that runs it.
struct ProgramBodies {
  std::vector<std::vector<size_t>> bodies;  // node indices of body k, in file order
  std::vector<size_t> partial_sums;         // the other Add/Sum nodes of the chains
  std::vector<Total> totals;
  std::map<std::string, int64_t> piece_of;  // bound value -> its micro-batch
  bool operator==(const ProgramBodies&) const = default;
};

struct MicroBatches {
  int64_t count = 0;   // bodies per program (0: none found)
  std::string why_not;  // when none: why, for the report ("" when no binding cuts micro-batches)
  std::vector<std::optional<ProgramBodies>> programs;  // per program of the plan; nullopt: none
  // (rank, value) -> the dimension its binding cuts into micro-batches.
  std::map<std::pair<int64_t, std::string>, size_t> piece_dims;
};

// The bodies of every program of `plan` (linked as `linked`), checked as above.
MicroBatches find_micro_batches(const ir::Plan& plan, const exec::LinkedPlan& linked);

// `plan` with `keep` bodies in every program: the other bodies, their bound values and their
// bindings dropped, each total now the Sum of the values of the bodies kept (first, in body
// order) and of the shared values its chain started from. Its collectives
// and Send/Recv are checked to pair as in `linked`; when they do not, nullopt.
struct MicroBatchCut {
  ir::Plan plan;
  exec::LinkedPlan linked;
  std::map<std::pair<int64_t, std::string>, size_t> piece_dims;  // of the bindings kept
  std::vector<std::vector<std::string>> totals;  // per program: outputs of the total Sums
};
std::optional<MicroBatchCut> cut_micro_batches(const ir::Plan& plan,
                                               const exec::LinkedPlan& linked,
                                               const MicroBatches& mb, int64_t keep);

}  // namespace onnx_tv::reduce
