#include "reduce_test_util.h"

#include <algorithm>
#include <set>

#include "check/bindings.h"
#include "check/obligations.h"
#include "check/witness.h"

namespace onnx_tv::reduce::test {

ir::Attribute int_attr(int64_t i) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::Int;
  a.i = i;
  return a;
}

ir::Attribute ints_attr(std::vector<int64_t> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}

ir::Attribute tensor_attr(ir::ConstTensor t) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::Tensor;
  a.tensor = std::make_shared<ir::ConstTensor>(std::move(t));
  return a;
}

ir::ConstTensor int_tensor(std::vector<int64_t> v, bool scalar) {
  ir::ConstTensor c;
  c.dtype = ir::DType::Int64;
  if (!scalar) c.shape = {int64_t(v.size())};
  c.ints = std::move(v);
  return c;
}

ir::ConstTensor float_tensor(ir::Shape shape, std::vector<double> v) {
  ir::ConstTensor c;
  c.dtype = ir::DType::Float;
  c.shape = std::move(shape);
  c.reals = std::move(v);
  return c;
}

namespace {

std::vector<ir::Dim> static_dims(const ir::Shape& s) {
  std::vector<ir::Dim> out;
  for (auto x : s) out.push_back(ir::Dim{x, ""});
  return out;
}

const ir::ValueInfo* find_info(const std::vector<ir::ValueInfo>& v, const std::string& name) {
  for (const auto& vi : v)
    if (vi.name == name) return &vi;
  return nullptr;
}

}  // namespace

GraphBuilder::GraphBuilder(std::string file, int opset) : opset_(opset) {
  g_.file = std::move(file);
  g_.opsets[""] = opset;
  g_.ir_version = 8;
}

std::string GraphBuilder::input(const std::string& name, ir::Shape shape, ir::DType t) {
  g_.inputs.push_back(ir::ValueInfo{name, t, static_dims(shape)});
  return name;
}

void GraphBuilder::output(const std::string& name, ir::Shape shape, ir::DType t) {
  g_.outputs.push_back(ir::ValueInfo{name, t, static_dims(shape)});
}

std::string GraphBuilder::initializer(const std::string& name, ir::ConstTensor c) {
  g_.initializers[name] = std::move(c);
  return name;
}

std::string GraphBuilder::constant(const std::string& name, ir::ConstTensor c) {
  return op("Constant", {}, name, {{"value", tensor_attr(std::move(c))}});
}

std::string GraphBuilder::ints(const std::string& name, std::vector<int64_t> v, bool scalar) {
  return constant(name, int_tensor(std::move(v), scalar));
}

std::string GraphBuilder::op(const std::string& op_type, std::vector<std::string> inputs,
                             const std::string& output, Attrs attrs) {
  op_n(op_type, std::move(inputs), {output}, std::move(attrs));
  return output;
}

void GraphBuilder::op_n(const std::string& op_type, std::vector<std::string> inputs,
                        std::vector<std::string> outputs, Attrs attrs) {
  ir::Node n;
  n.name = "/" + outputs.at(0) + "/" + op_type;
  n.op_type = op_type;
  n.opset = opset_;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attributes = std::move(attrs);
  g_.nodes.push_back(std::move(n));
}

std::string GraphBuilder::comm(const std::string& op_type, const std::string& input,
                               const std::string& output, Attrs attrs) {
  g_.opsets["onnx_tv"] = 1;
  op(op_type, {input}, output, std::move(attrs));
  g_.nodes.back().domain = "onnx_tv";
  g_.nodes.back().opset = 1;
  return output;
}

std::string GraphBuilder::shape_entry(const std::string& x, int64_t k) {
  const std::string tag = x + ".shape" + std::to_string(k);
  const std::string shape = x + ".shape";
  if (std::none_of(g_.nodes.begin(), g_.nodes.end(),
                   [&](const ir::Node& n) { return n.outputs.at(0) == shape; }))
    op("Shape", {x}, shape);
  op("Gather", {shape, ints(tag + ".index", {k}, true)}, tag + ".scalar", {{"axis", int_attr(0)}});
  return op("Unsqueeze", {tag + ".scalar", ints(tag + ".axes", {0})}, tag);
}

size_t PlanBuilder::program(ir::Graph g) {
  plan_.programs.push_back(std::make_shared<const ir::Graph>(std::move(g)));
  return plan_.programs.size() - 1;
}

int64_t PlanBuilder::rank(size_t program) {
  plan_.rank_program.push_back(program);
  return plan_.world_size++;
}

void PlanBuilder::bind(int64_t rank, const std::string& value, const std::string& spec,
                       std::optional<std::vector<ir::SliceEntry>> slice) {
  ir::Binding b;
  b.rank = rank;
  b.value = value;
  b.spec = spec;
  b.slice = std::move(slice);
  b.origin = "rank " + std::to_string(rank) + " '" + value + "' -> '" + spec + "'";
  plan_.bindings.push_back(std::move(b));
}

ir::Plan identity_plan(const ir::Graph& spec) {
  PlanBuilder p;
  ir::Graph g = spec;
  g.file = "rank0.onnx";
  const int64_t r = p.rank(p.program(std::move(g)));
  for (const auto& vi : spec.inputs) p.bind(r, vi.name, vi.name);
  for (const auto& vi : spec.outputs) p.bind(r, vi.name, vi.name);
  return p.plan();
}

ir::SliceEntry span(int64_t start, int64_t end) { return std::make_pair(start, end); }

Outcome reduce_of(const ir::Graph& spec, const ir::Plan& plan) {
  const exec::LinkedPlan linked = exec::link_plan(plan);
  return reduce_plan(spec, all_ranks(plan), linked);
}

std::vector<int64_t> declared_shape(const ir::Graph& g, const std::string& name) {
  const ir::ValueInfo* vi = find_info(g.inputs, name);
  if (!vi) vi = find_info(g.outputs, name);
  if (!vi || !vi->shape) {
    ADD_FAILURE() << g.file << ": no declared shape for '" << name << "'";
    return {};
  }
  std::vector<int64_t> out;
  for (const auto& d : *vi->shape) out.push_back(d.size.value_or(-1));
  return out;
}

bool is_input(const ir::Graph& g, const std::string& name) {
  return find_info(g.inputs, name) != nullptr;
}

const ir::Node* producer(const ir::Graph& g, const std::string& output) {
  for (const auto& n : g.nodes)
    if (std::find(n.outputs.begin(), n.outputs.end(), output) != n.outputs.end()) return &n;
  ADD_FAILURE() << g.file << ": no node produces '" << output << "'";
  return nullptr;
}

std::string operand_name(const ir::Graph& g, const std::string& output, size_t slot) {
  const ir::Node* n = producer(g, output);
  if (!n || slot >= n->inputs.size()) return "";
  return n->inputs[slot];
}

std::optional<std::vector<int64_t>> operand_ints(const ir::Graph& g, const std::string& output,
                                                 size_t slot) {
  const std::string name = operand_name(g, output, slot);
  if (name.empty()) return std::nullopt;
  const ir::ConstTensor* c = nullptr;
  if (auto it = g.initializers.find(name); it != g.initializers.end()) c = &it->second;
  for (const auto& n : g.nodes)
    if (n.op_type == "Constant" && n.outputs.at(0) == name) c = n.attribute("value")->tensor.get();
  if (!c) return std::nullopt;
  if (!c->ints.empty()) return c->ints;
  std::vector<int64_t> out;
  for (double x : c->reals) out.push_back(int64_t(x));
  return out;
}

bool is_rewritten(const std::string& name) { return name.rfind("onnx_tv.reduced.", 0) == 0; }

const reduce::ReducedDim* dim_row(const Reduced& r, const std::string& value, int64_t axis) {
  for (const auto& d : r.dims)
    if (d.value == value && d.axis == axis) return &d;
  ADD_FAILURE() << "no reduction row for '" << value << "' axis " << axis;
  return nullptr;
}

Fs full_and_reduced(const reduce::ReducedDim* row) {
  Fs out;
  if (row)
    for (const auto& f : row->factors) out.push_back({f.full, f.reduced});
  return out;
}

const ir::Binding* binding_of(const ir::Plan& p, int64_t rank, const std::string& value) {
  for (const auto& b : p.bindings)
    if (b.rank == rank && b.value == value) return &b;
  ADD_FAILURE() << "no binding of rank " << rank << " value '" << value << "'";
  return nullptr;
}

std::vector<Span> spans(const ir::Binding& b) {
  std::vector<Span> out;
  if (!b.slice) return out;
  for (const auto& e : *b.slice) out.push_back(e ? *e : Span{-1, -1});
  return out;
}

std::unique_ptr<GraphRun> run_alone(const ir::Graph& g) {
  auto r = std::make_unique<GraphRun>();
  for (const auto& vi : g.inputs) {
    if (g.initializers.count(vi.name)) continue;
    ir::Shape shape;
    for (const auto& d : *vi.shape) shape.push_back(*d.size);
    std::vector<solver::Value> data;
    for (int64_t i = 0; i < ir::element_count(shape); ++i) data.push_back(r->sym(vi.name, i));
    r->env.values[vi.name] = ir::make_tensor(vi.dtype, shape, std::move(data));
  }
  for (const auto& [name, c] : g.initializers) r->env.values[name] = ir::to_tensor(r->ctx, c);
  exec::run_graph(r->ctx, g, r->env, exec::RunLimits{});
  exec::check_declared_shapes(g, r->env);
  return r;
}

std::vector<std::string> differing_outputs(const ir::Graph& spec, const ir::Plan& plan) {
  const exec::LinkedPlan linked = exec::link_plan(plan);
  const check::BoundPlan bound = check::resolve_bindings(spec, plan);
  solver::Context ctx;
  exec::Env spec_env = check::spec_inputs(ctx, spec, bound);
  exec::run_graph(ctx, spec, spec_env, exec::RunLimits{});
  exec::check_declared_shapes(spec, spec_env);
  std::vector<exec::Env> envs = check::rank_inputs(ctx, plan, bound, spec_env);
  exec::run_plan(ctx, plan, linked, envs, exec::RunLimits{});
  for (int64_t r = 0; r < plan.world_size; ++r)
    exec::check_declared_shapes(plan.program_of(r), envs[size_t(r)]);
  std::vector<std::string> unused;
  auto obs = check::build_obligations(spec, plan, bound, spec_env, envs, unused);
  // As the checker decides: a witness refutes, otherwise equal once products are expanded.
  check::WitnessSearch search(ctx, 1);
  auto compare = [&](solver::Value a, solver::Value b, const std::string&) {
    if (search.find(a, b, 8, false)) return check::Comparison::Refuted;
    auto x = ctx.expand_definitions(a, 2'000'000);
    auto y = x ? ctx.expand_definitions(b, 2'000'000) : std::nullopt;
    return x && y && *x == *y ? check::Comparison::Same : check::Comparison::Undecided;
  };
  int64_t compared = 0;
  bool by_cases = false;
  std::set<std::string> names;
  for (const auto& f : check::failures(ctx, obs, spec_env, envs, compare, compared, by_cases))
    names.insert(obs[f.obligation].spec);
  return {names.begin(), names.end()};
}

}  // namespace onnx_tv::reduce::test
