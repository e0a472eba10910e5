#pragma once
// The stages of shape reduction, private to src/reduce: inference (infer.cpp), constants along
// dimensions (tables.cpp), the reduced programs (rewrite.cpp).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "exec/linker.h"
#include "ir/plan.h"
#include "reduce/infer.h"
#include "reduce/mesh_axes.h"

namespace onnx_tv::reduce {

struct BoundRegion {
  const ir::Binding* binding;
  ir::Region region;  // full-size spec coordinates
};

// Ties the rank axes to the region of the spec axes they hold: an axis cut into equal pieces
// becomes (pieces, piece) with the count fixed; an uneven cut keeps the dimension full size.
// Where `binding` cuts the axis by placements (and no explicit slice), the count of its pieces
// is the product of the mesh axes' counts (in mesh order, the coarser split first), not fixed;
// a local slice then cuts within the piece. Along `micro_batch_dim`, the count of the local
// slice's pieces is the count of micro-batches (inf.micro_batches), not fixed.
void bind_region(Inference& inf, const DimShape& spec, const DimShape& rank,
                 const ir::Region& region, const std::string& why,
                 const ir::Binding* binding = nullptr,
                 std::optional<size_t> micro_batch_dim = std::nullopt);

// `plan` holds the ranks `fewer` kept; binding regions and the counts of collectives' groups
// are those of the full plan.
void run_inference(Inference& inf, const ir::Graph& spec, const ir::Plan& plan,
                   const exec::LinkedPlan& linked, const FewerRanks& fewer,
                   std::vector<BoundRegion>& bound);

// The mesh axes (of the full mesh) on which the members of a group of kept ranks differ, in
// mesh order.
std::vector<size_t> spanned_axes(const Inference& inf, const std::vector<int64_t>& group);

// The axis to keep (KeepRanks) where an output's degree in a shrunk count (of ranks along a
// mesh axis, or of micro-batches) may exceed 1, so that proofs at 2 and 3 would not prove every
// count
// (count_degree.cpp, docs/shape-reduction.md "Why 2 and 3"). `totals` names, per program, the
// outputs of the sums over micro-batches.
std::optional<KeepRanks> check_count_degrees(
    Inference& inf, const ir::Graph& spec, const ir::Plan& plan,
    const exec::LinkedPlan& linked, const std::vector<BoundRegion>& bound,
    const std::vector<std::vector<std::string>>& totals);

// The axis to keep (KeepRanks) when the count of ranks of one chosen to shrink is no longer one
// reducible variable: only a whole count maps to rank coordinates. The same for the count of
// micro-batches. Called once every rule that may fix or split a
// dimension has run.
std::optional<KeepRanks> check_shrunk_counts(Inference& inf);

// A constant that lies along a reducible dimension, and what the reduced instance makes of it.
struct ConstSite {
  int64_t rank = -1;        // -1: the spec
  std::string name;         // the initializer, or the Constant node's output
  const ir::ConstTensor* tensor = nullptr;
  enum class Action { Keep, Refill, SpecTable, RankTable } action = Action::Keep;
  std::string table;        // SpecTable: the representative of its content; RankTable: the spec table
  ir::Region region;  // RankTable: full-size region of the spec table it equals
};

// Classifies the constants of the spec and the ranks (values bound by bindings are inputs, not
// constants): uniform ones are refilled at the reduced shape; the others become symbolic
// tables, the spec's shared by content and each rank's bound to the region of a spec table it
// equals at full size. A rank constant that equals no region keeps its dimensions full size.
std::vector<ConstSite> classify_constants(Inference& inf, const ir::Graph& spec,
                                          const ir::Plan& plan,
                                          const std::vector<BoundRegion>& bound);

// The graph input a symbolic table `name` of `g` becomes: `name` itself, or a name of its own
// when `name` is a graph output too (a constant the program passes out), which then reads the
// table through an Identity and stays an output, bound as one.
std::string table_input(const ir::Graph& g, const std::string& name);

// The reduced form of one program (the spec for rank -1): declared shapes, shape operands,
// frozen sizes, constants; `bound_values` are its values that bindings name.
ir::Graph rewrite_program(Inference& inf, ProgramDims& p, const std::vector<ConstSite>& sites,
                          int64_t rank, const std::set<std::string>& bound_values);

}  // namespace onnx_tv::reduce
