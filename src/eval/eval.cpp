#include "eval/eval.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <set>

#include "exec/executor.h"
#include "common/errors.h"
#include "frontend/model_loader.h"
#include "ir/well_formed.h"
#include "frontend/tensor_file.h"
#include "ops/registry.h"
#include "solver/evaluator.h"

namespace onnx_tv::eval {

namespace {

}  // namespace

ir::ConstTensor as_bfloat16_if_bits(const ir::ConstTensor& t, ir::DType expected) {
  if (expected != ir::DType::BFloat16 || t.dtype != ir::DType::UInt16) return t;
  ir::ConstTensor out{ir::DType::BFloat16, t.shape, {}, {}};
  for (int64_t bits : t.ints) out.reals.push_back(std::bit_cast<float>(uint32_t(bits) << 16));
  return out;
}

namespace {

// Binds each given tensor to a graph input (see InputTensor) and checks what the graph
// declares about it.
std::map<std::string, ir::ConstTensor> bind_inputs(const ir::Graph& g,
                                                   const std::vector<InputTensor>& ins) {
  std::vector<const ir::ValueInfo*> free_inputs;
  std::map<std::string, const ir::ValueInfo*> by_name;
  for (const auto& vi : g.inputs) {
    by_name[vi.name] = &vi;
    if (!g.initializers.count(vi.name)) free_inputs.push_back(&vi);
  }
  std::map<std::string, ir::ConstTensor> bound;
  size_t next = 0;
  for (const auto& in : ins) {
    const ir::ValueInfo* vi = nullptr;
    if (auto it = by_name.find(in.name); it != by_name.end()) {
      vi = it->second;
    } else {
      while (next < free_inputs.size() && bound.count(free_inputs[next]->name)) ++next;
      if (next == free_inputs.size()) {
        throw InputError(g.file + ": " + std::to_string(ins.size()) +
                         " input tensors given, but the model has only " +
                         std::to_string(free_inputs.size()) + " inputs without initializer");
      }
      vi = free_inputs[next];
    }
    auto [it, fresh] = bound.emplace(vi->name, as_bfloat16_if_bits(in.tensor, vi->dtype));
    if (!fresh) throw InputError(g.file + ": graph input '" + vi->name + "' is given twice");
    if (vi->dtype != ir::DType::Undefined && vi->dtype != it->second.dtype) {
      throw InputError(g.file + ": graph input '" + vi->name + "' is " +
                       ir::dtype_name(vi->dtype) + ", but the tensor given is " +
                       ir::dtype_name(it->second.dtype));
    }
  }
  for (const ir::ValueInfo* vi : free_inputs) {
    if (!bound.count(vi->name))
      throw InputError(g.file + ": no value given for graph input '" + vi->name + "'");
  }
  return bound;
}

}  // namespace

std::string first_unsupported_op(const ir::Graph& g) {
  for (const ir::Node& n : g.nodes) {
    if (!ops::find_op(n.domain, n.op_type, n.opset)) {
      return "op '" + n.op_type + "' (domain '" + (n.domain.empty() ? "ai.onnx" : n.domain) +
             "', opset " + std::to_string(n.opset) + ")";
    }
  }
  return "";
}

std::vector<NumericTensor> evaluate(const ir::Graph& g, const std::vector<InputTensor>& inputs) {
  solver::Context ctx;
  exec::Env env;
  auto bound = bind_inputs(g, inputs);
  try {
    for (const auto& [name, c] : g.initializers) env.values[name] = ir::to_tensor(ctx, c);
    for (const auto& [name, c] : bound) env.values[name] = ir::to_tensor(ctx, c);
  } catch (Error& e) {
    e.add_context(g.file + ": inputs");
    throw;
  }
  exec::run_graph(ctx, g, env, exec::RunLimits{});

  // Constant inputs leave no symbol in any value; meeting one would be a bug.
  solver::Evaluator ev(ctx, [](const std::string& s) -> solver::Rational {
    throw InternalError("symbol '" + s + "' in a concrete evaluation");
  });
  std::vector<NumericTensor> out;
  for (const auto& vi : g.outputs) {
    auto it = env.values.find(vi.name);
    if (it == env.values.end())
      throw InputError(g.file + ": graph output '" + vi.name + "' is produced by no node");
    const ir::Tensor& t = it->second;
    NumericTensor n{vi.name, t.dtype, t.shape, {}, {}};
    n.values.reserve(t.data.size());
    for (solver::Value v : t.data) {
      if (auto r = ev.exact(v)) {
        n.values.push_back(static_cast<long double>(r->get_d()));
        // get_d truncates; refine with the remainder so long double keeps its extra bits.
        solver::Rational rest = *r - solver::Rational(r->get_d());
        n.values.back() += static_cast<long double>(rest.get_d());
        n.exact.push_back(true);
      } else {
        n.values.push_back(ev.approx(v));
        n.exact.push_back(false);
      }
    }
    out.push_back(std::move(n));
  }
  return out;
}

ir::ConstTensor to_const(const NumericTensor& t) {
  ir::ConstTensor c;
  c.dtype = t.dtype;
  c.shape = t.shape;
  for (long double v : t.values) {
    if (ir::is_float(t.dtype)) c.reals.push_back(double(v));
    else c.ints.push_back(int64_t(std::llround(v)));
  }
  return c;
}

ir::Graph load_eval_model(const std::string& path) {
  frontend::LoadOptions opts;
  opts.min_ir_version = 3;
  ir::Graph g = frontend::load_model(path, opts);
  ir::check_well_formed(g);
  return g;
}

std::vector<InputTensor> load_tensor_dir(const std::string& dir, const std::string& prefix) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw InputError(dir + ": no such folder");
  std::vector<InputTensor> out;
  for (int i = 0;; ++i) {
    auto path = std::filesystem::path(dir) / (prefix + std::to_string(i) + ".pb");
    if (!std::filesystem::exists(path, ec)) break;
    frontend::NamedTensor t = frontend::load_tensor_file(path.string());
    out.push_back({std::move(t.name), std::move(t.tensor)});
  }
  return out;
}

}  // namespace onnx_tv::eval
