#pragma once
// Dimension inference over the spec and the linked plan: the symbolic dimensions of every
// tensor, the exact values of small integer tensors (shape arithmetic), and the constants that
// lie along dimensions. Private to src/reduce.
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/linker.h"
#include "ir/plan.h"
#include "ir/graph.h"
#include "reduce/dims.h"
#include "reduce/sum_site.h"
#include "solver/context.h"

namespace onnx_tv::reduce {


struct DimValue {
  DimShape dims;
  ir::DType dtype = ir::DType::Undefined;
  // Small integer tensors (and what is computed only from them) are known exactly: shapes,
  // axes, slice bounds. Their axes are fixed.
  std::optional<ir::Tensor> concrete;
  bool size_derived = false;  // its values come from the sizes of tensors (Shape, Size)
  // Whether it depends on a symbolic input (a graph input or a bound initializer). Data that
  // does not, summed over a dimension, counts that dimension's size (sizes_as_data.cpp).
  bool symbolic = false;
  // The variables of the Range axes whose positions it carries as values, and those of them
  // it carries after arithmetic (an offset, a scale) rather than only moved: positions that
  // only moved compare by their order, which the instance keeps (docs/shape-reduction.md).
  Axis positions;
  Axis offset_positions;
  // Routing data: symbolic, but made only of indices, comparisons and masks (TopK's indices,
  // a OneHot of them, their sums) and constants, so its values are integers that count.
  bool mask = false;
  // The variables of the axes along which routing data was summed into it: its values count
  // elements along them (a token's place in an expert's buffer).
  Axis counts;
  // Variables along which it is the same at every position, and along which some part of it
  // is (a sum along those counts elements): uniform_parts.cpp.
  Axis uniform;
  Axis parts;
};

using ValueDims = std::unordered_map<std::string, DimValue>;

// One program as inference sees it: the graph and the values of one rank (or the spec).
struct ProgramDims {
  const ir::Graph* graph = nullptr;
  std::string label;  // "spec.onnx" or "rank3 (rank3.onnx)"
  ValueDims values;
};

// Raw positions compared with raw positions (sizes_as_data.cpp): judged once every dimension
// is tied, bindings included, whether they are positions of one axis.
struct PositionCompare {
  std::string where;
  std::vector<Axis> operands;  // each operand's positions
  Axis all;
};

struct Inference {
  solver::Context ctx;  // exact values of concrete tensors
  std::vector<PositionCompare> position_compares;
  // Sums along reducible axes of data found to hold no uniform part: confirmed by the check.
  std::vector<SumSite> sum_sites;
  // Sites an earlier instance found counting (counted_sum_key -> why): their axes keep their
  // full size.
  const std::map<std::string, std::string>* counted_sums = nullptr;
  size_t memory_bytes = 0;  // --max-memory, checked at every node (0: none)
  DimStore dims;
  ProgramDims spec;
  std::vector<ProgramDims> ranks;
  // Fewer ranks (mesh_axes.h): the full plan's mesh, each rank's rank in the full plan, and
  // per mesh axis the count of its ranks at full size (empty for one rank), reducible only
  // for the axes that shrink.
  std::optional<ir::Mesh> full_mesh;
  std::vector<int64_t> original;
  std::vector<Axis> mesh_counts;
  std::vector<bool> shrinks;
  std::vector<int64_t> targets;  // the ranks a shrunk axis keeps
  // Fewer micro-batches (micro_batches.h): their count at full size, reducible to the bodies
  // kept, and the bindings that cut it ((rank, value) -> dimension); empty when none shrink.
  Axis micro_batches;
  int64_t micro_batch_target = 0;
  std::map<std::pair<int64_t, std::string>, size_t> micro_batch_pieces;
};

// Adds to `to` the variables of `from` it lacks, both as their representative leaves: a set of
// variables that is only ever fixed as a whole (positions, counts) stays as small as the
// dimensions it names, where the members of a collective each bring their own variable of one
// dimension (a list of raw variables grew with the ranks a value passed through).
void add_vars(DimStore& dims, Axis& to, const Axis& from);

// A node's output dims from its inputs' (rules.cpp). Throws NotApplicable for an op without a
// rule or a case the rules cannot follow.
std::vector<DimValue> infer_node(Inference& inf, ProgramDims& prog, size_t node_index);

// After a node's rule: what its outputs carry (symbolic, positions) and the dimensions that
// must keep their full size because a size would be read as data (sizes_as_data.cpp).
void follow_sizes_as_data(Inference& inf, ProgramDims& prog, size_t node_index,
                          std::vector<DimValue>& outs);

// After a node's rule: where its outputs are uniform or hold a uniform part, and the
// dimensions that keep their full size because a sum along them counts such a part
// (uniform_parts.cpp).
void follow_uniform_parts(Inference& inf, ProgramDims& prog, size_t node_index,
                          std::vector<DimValue>& outs);

// The variables of `dims` along which a constant's values do not change.
Axis uniform_axes_of_constant(Inference& inf, const ir::ConstTensor& c, const DimShape& dims);

// The axes (of `x`, input 0) a reduction-like node (Reduce*, Softmax, LogSoftmax, Hardmax,
// CumSum) sums or normalises along, normalised to be non-negative; every axis where they are
// not known (sizes_as_data.cpp). `in` are the node's inputs.
std::vector<int64_t> reduced_axes(Inference& inf, const ir::Node& n, const DimValue& x,
                                  const std::vector<const DimValue*>& in);

// Whether input `slot` of `node` is a shape operand (axes, sizes, bounds) rather than data.
bool is_shape_slot(const ir::Node& node, size_t slot);

// Loads a graph input, initializer or Constant value's dims.
DimValue const_dims(Inference& inf, const ir::ConstTensor& c, const std::string& origin);

// "rank3.onnx: MatMul node '/x/MatMul'" for messages.
std::string where(const ProgramDims& prog, size_t node_index);

// NotApplicable naming the node.
[[noreturn]] void cannot(const ProgramDims& prog, size_t node_index, const std::string& why);

// The elements of a concrete value as integers; nullopt when one is not an integer.
std::optional<std::vector<int64_t>> integer_values(Inference& inf, const DimValue& v);

}  // namespace onnx_tv::reduce
