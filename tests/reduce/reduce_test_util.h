#pragma once
// Helpers for the shape-reduction tests: graphs and plans built in memory in a few lines,
// reduction of a plan, lookups in the reduced instance, and the prover run on it.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "exec/executor.h"
#include "exec/linker.h"
#include "ir/plan.h"
#include "ir/graph.h"
#include "reduce/reduce.h"
#include "solver/context.h"

namespace onnx_tv::reduce::test {

using Attrs = std::map<std::string, ir::Attribute>;
using Span = std::pair<int64_t, int64_t>;

ir::Attribute int_attr(int64_t i);
ir::Attribute ints_attr(std::vector<int64_t> v);
ir::Attribute tensor_attr(ir::ConstTensor t);

ir::ConstTensor int_tensor(std::vector<int64_t> v, bool scalar = false);
ir::ConstTensor float_tensor(ir::Shape shape, std::vector<double> v);

// One program, built node by node in file order. Every node gets the graph's opset.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string file, int opset = 17);

  std::string input(const std::string& name, ir::Shape shape, ir::DType t = ir::DType::Float);
  void output(const std::string& name, ir::Shape shape, ir::DType t = ir::DType::Float);
  std::string initializer(const std::string& name, ir::ConstTensor c);
  // A Constant node holding `c`, as torch exports small constants.
  std::string constant(const std::string& name, ir::ConstTensor c);
  // A Constant node holding int64 values; a scalar when `scalar`.
  std::string ints(const std::string& name, std::vector<int64_t> v, bool scalar = false);

  // One node with one output; returns the output's name.
  std::string op(const std::string& op_type, std::vector<std::string> inputs,
                 const std::string& output, Attrs attrs = {});
  void op_n(const std::string& op_type, std::vector<std::string> inputs,
            std::vector<std::string> outputs, Attrs attrs = {});

  // A collective of the onnx_tv domain (plan-format section 5).
  std::string comm(const std::string& op_type, const std::string& input, const std::string& output,
                   Attrs attrs);

  // torch's `x.shape[k]` as a 1-D tensor: Unsqueeze(Gather(Shape(x), k), [0]).
  std::string shape_entry(const std::string& x, int64_t k);

  const ir::Graph& graph() const { return g_; }

 private:
  ir::Graph g_;
  int opset_;
};

// A plan built in memory: program files, the rank that runs each, bindings with slices.
class PlanBuilder {
 public:
  size_t program(ir::Graph g);
  int64_t rank(size_t program);
  // Binds rank value `value` to spec value `spec` (the whole tensor when no slice is given).
  void bind(int64_t rank, const std::string& value, const std::string& spec,
            std::optional<std::vector<ir::SliceEntry>> slice = std::nullopt);
  const ir::Plan& plan() const { return plan_; }

 private:
  ir::Plan plan_;
};

// One rank running the spec itself, every input and output bound whole.
ir::Plan identity_plan(const ir::Graph& spec);

ir::SliceEntry span(int64_t start, int64_t end);
inline const ir::SliceEntry whole = std::nullopt;  // the whole dimension

// Links the plan and reduces it.
Outcome reduce_of(const ir::Graph& spec, const ir::Plan& plan);

// The declared static shape of a graph input or output (empty with a test failure when absent).
std::vector<int64_t> declared_shape(const ir::Graph& g, const std::string& name);
bool is_input(const ir::Graph& g, const std::string& name);
// The node producing `output` (a test failure when none does).
const ir::Node* producer(const ir::Graph& g, const std::string& output);
// The integers of input `slot` of the node producing `output`, read from the initializer or
// Constant node that defines it; nullopt when it is neither.
std::optional<std::vector<int64_t>> operand_ints(const ir::Graph& g, const std::string& output,
                                                 size_t slot);
std::string operand_name(const ir::Graph& g, const std::string& output, size_t slot);
bool is_rewritten(const std::string& name);  // an operand that reduction wrote

// The factors of one dimension of a spec input in the report (a test failure when absent).
const reduce::ReducedDim* dim_row(const Reduced& r, const std::string& value, int64_t axis);
// A row's factors as (full, reduced) pairs, major first (empty for a missing row).
using Fs = std::vector<std::pair<int64_t, int64_t>>;
Fs full_and_reduced(const reduce::ReducedDim* row);
// The binding of rank value `value` (a test failure when absent).
const ir::Binding* binding_of(const ir::Plan& p, int64_t rank, const std::string& value);
// A binding's slice as [start, end) pairs; {-1, -1} for an entry left whole.
std::vector<Span> spans(const ir::Binding& b);

// One program run alone over symbolic inputs: input `x` holds symbols x[0], x[1], ... in
// row-major order; initializers are their constants.
struct GraphRun {
  solver::Context ctx;
  exec::Env env;
  const ir::Tensor& at(const std::string& name) const { return env.values.at(name); }
  solver::Value sym(const std::string& input, int64_t flat) {
    return ctx.symbol(input + "[" + std::to_string(flat) + "]");
  }
};
std::unique_ptr<GraphRun> run_alone(const ir::Graph& g);

// The spec outputs on which the plan's result differs from the spec's, as the prover decides
// on exactly these programs (empty: equivalent).
std::vector<std::string> differing_outputs(const ir::Graph& spec, const ir::Plan& plan);

}  // namespace onnx_tv::reduce::test
