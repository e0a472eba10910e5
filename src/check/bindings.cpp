#include "check/bindings.h"

#include "check/integer_inputs.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "common/errors.h"
#include "common/memory_limit.h"
#include "ir/binding_side.h"
#include "ir/tensor_util.h"

namespace onnx_tv::check {

namespace {

const ir::ValueInfo* find_info(const std::vector<ir::ValueInfo>& infos, const std::string& n) {
  for (const auto& vi : infos)
    if (vi.name == n) return &vi;
  return nullptr;
}

// A graph's inputs and outputs by name, built once per graph: every binding looks its spec
// value and its rank value up, a 405B spec has over a thousand of each, a rank program tens,
// and the plan hundreds of thousands of bindings.
struct InfoIndex {
  std::unordered_map<std::string, const ir::ValueInfo*> inputs, outputs;
  explicit InfoIndex(const ir::Graph& g) {
    for (const auto& vi : g.inputs) inputs.try_emplace(vi.name, &vi);
    for (const auto& vi : g.outputs) outputs.try_emplace(vi.name, &vi);
  }
  const ir::ValueInfo* input(const std::string& n) const {
    auto it = inputs.find(n);
    return it == inputs.end() ? nullptr : it->second;
  }
  const ir::ValueInfo* output(const std::string& n) const {
    auto it = outputs.find(n);
    return it == outputs.end() ? nullptr : it->second;
  }
};

// The static shape of `name` in `g`: an initializer's, or that `vi` (its graph input's or
// output's information, null when it has none) declares with every size known.
std::optional<ir::Shape> shape_of(const ir::Graph& g, const std::string& name,
                                  const ir::ValueInfo* vi) {
  if (auto it = g.initializers.find(name); it != g.initializers.end()) return it->second.shape;
  if (!vi || !vi->shape) return std::nullopt;
  ir::Shape s;
  for (const auto& d : *vi->shape) {
    if (!d.size) return std::nullopt;
    s.push_back(*d.size);
  }
  return s;
}

// The index of each program a plan's bindings name, built when first needed.
class ProgramIndex {
 public:
  const InfoIndex& operator()(const ir::Graph& g) { return index_.try_emplace(&g, g).first->second; }

 private:
  std::unordered_map<const ir::Graph*, InfoIndex> index_;
};

// A program's node outputs, found once per program: a program file holds 10^5 nodes.
class ProgramProduced {
 public:
  const std::unordered_set<std::string>& operator()(const ir::Graph& g) {
    auto [it, added] = produced_.try_emplace(&g);
    if (added)
      for (const auto& node : g.nodes) it->second.insert(node.outputs.begin(), node.outputs.end());
    return it->second;
  }

 private:
  std::unordered_map<const ir::Graph*, std::unordered_set<std::string>> produced_;
};

// A spec input without static sizes, saying which dimensions are symbolic and what to do:
// exporters write dynamic axes as symbolic dimensions (dim_param), and nothing in a plan gives
// a spec input's sizes (the spec's inputs are where every size comes from).
[[noreturn]] void throw_no_static_shape(const ir::Graph& spec, const std::string& name,
                                        const std::string& message) {
  const ir::ValueInfo* vi = find_info(spec.inputs, name);
  if (!vi || !vi->shape) {
    InputError e(message + ": it declares no shape");
    e.add_hint("export the spec with the shapes of its inputs");
    throw e;
  }
  std::string dims;
  size_t count = 0;
  for (size_t d = 0; d < vi->shape->size(); ++d) {
    const ir::Dim& dim = (*vi->shape)[d];
    if (dim.size) continue;
    dims += (count++ ? ", " : "") + std::to_string(d) +
            (dim.symbol.empty() ? " (no size)" : " ('" + dim.symbol + "')");
  }
  InputError e(message + ": dimension" + (count > 1 ? "s " : " ") + dims +
               (count > 1 ? " are" : " is") + " symbolic, and onnx-tv cannot resolve a spec "
               "input's symbolic size");
  e.add_hint("export the spec with static shapes (no dynamic axes), or give the size as the "
             "dimension's dim_value in the model");
  throw e;
}

// `vi`: the graph input information of `name`, null when it is not a graph input.
ir::DType declared_dtype(const ir::Graph& g, const std::string& name,
                         const ir::ValueInfo* vi) {
  if (vi) return vi->dtype;
  if (auto it = g.initializers.find(name); it != g.initializers.end()) return it->second.dtype;
  return ir::DType::Float;
}

std::string region_text(const ir::Region& r) {
  std::string s = "[";
  for (size_t d = 0; d < r.start.size(); ++d)
    s += (d ? ", " : "") + std::to_string(r.start[d]) + ":" + std::to_string(r.end[d]);
  return s + "]";
}

ir::Tensor symbols(solver::Context& ctx, ir::DType dtype, const ir::Shape& shape,
                   const std::string& prefix) {
  std::vector<solver::Value> data(ir::element_count(shape));
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = ctx.symbol(prefix + ir::index_string(ir::unravel(int64_t(i), shape)));
  return ir::make_tensor(dtype, shape, std::move(data));
}

// A rank input holds the spec's values, so it must be of the same kind: a bool or integer rank
// input bound to a float spec input would let Where and Gather read reals as 0/1 or as rows.
void check_kinds(const ir::Graph& spec, const InfoIndex& spec_index, const ir::Graph& g,
                 const InfoIndex& index, const ir::Binding& b) {
  auto kind = [](ir::DType t) {
    return t == ir::DType::Bool ? "bool" : ir::is_integer(t) ? "integer" : "float";
  };
  const ir::DType s = declared_dtype(spec, b.spec, spec_index.input(b.spec)),
                  r = declared_dtype(g, b.value, index.input(b.value));
  if (std::string(kind(s)) != kind(r))
    throw InputError(b.origin + ": rank input '" + b.value + "' of " + g.file + " is " +
                     ir::dtype_name(r) + " and spec input '" + b.spec + "' is " +
                     ir::dtype_name(s) + "; a rank input holds the spec's values, so both must "
                     "be " + kind(s) + " (plan-format section 3)");
}

// A spec input's symbols, or, for an integer input with a range, each element by its
// indicators over the range (integer_inputs.h).
ir::Tensor inputs_of(solver::Context& ctx, ir::DType dtype, const ir::Shape& shape,
                     const std::string& name, const std::map<std::string, IntegerRange>& ranges) {
  auto r = ranges.find(name);
  if (r == ranges.end()) return symbols(ctx, dtype, shape, name);
  std::vector<solver::Value> data(size_t(ir::element_count(shape)));
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = ctx.integer_input(name + ir::index_string(ir::unravel(int64_t(i), shape)),
                                r->second.lo, r->second.hi);
  return ir::make_tensor(dtype, shape, std::move(data));
}

// Checks the rank value's declared shape against the region's and returns the region's.
ir::Shape rank_value_shape(const ir::Graph& g, const InfoIndex& index, const ResolvedBinding& rb) {
  ir::Shape want = region_shape(rb.region);
  const std::string& v = rb.binding->value;
  const ir::ValueInfo* vi = index.input(v);
  if (vi && vi->shape) {
    bool bad = vi->shape->size() != want.size();
    for (size_t d = 0; !bad && d < want.size(); ++d)
      bad = (*vi->shape)[d].size && *(*vi->shape)[d].size != want[d];
    if (bad)
      throw InputError(g.file + ": input '" + v + "' does not have the shape " +
                       ir::shape_string(want) + " of its region " + region_text(rb.region) +
                       " of spec '" + rb.binding->spec + "' (" + rb.binding->origin + ")");
  }
  if (auto it = g.initializers.find(v); it != g.initializers.end() && it->second.shape != want)
    throw InputError(g.file + ": initializer '" + v + "' has shape " +
                     ir::shape_string(it->second.shape) + ", not the shape " +
                     ir::shape_string(want) + " of its region of spec '" + rb.binding->spec +
                     "' (" + rb.binding->origin + ")");
  return want;
}

}  // namespace

ir::Shape region_shape(const ir::Region& r) {
  ir::Shape s(r.start.size());
  for (size_t d = 0; d < s.size(); ++d) s[d] = r.end[d] - r.start[d];
  return s;
}

std::optional<ir::Shape> static_shape(const ir::Graph& g, const std::string& name) {
  const ir::ValueInfo* vi = find_info(g.inputs, name);
  return shape_of(g, name, vi ? vi : find_info(g.outputs, name));
}

BoundPlan resolve_bindings(const ir::Graph& spec, const ir::Plan& plan,
                           size_t memory_bytes) {
  // Said on its own: otherwise the first rank input met is "not bound", which reads as one
  // binding missing, not as bindings never written or written where onnx-tv does not look.
  if (plan.bindings.empty()) {
    std::error_code ec;  // a folder that cannot be read was an error in load_plan already
    const bool manifest =
        std::filesystem::exists(std::filesystem::path(plan.dir) / "plan.json", ec);
    throw InputError(
        plan.dir + ": no bindings found (" +
        (manifest ? "plan.json has none" : "there is no plan.json") +
        ", and no rank program has metadata \"onnx_tv.bindings\"); bindings relate each rank's "
        "inputs and outputs to the spec's values (plan-format section 3): write them in " +
        (std::filesystem::path(plan.dir) / "plan.json").string() +
        " under \"bindings\", or in each rank model's metadata_props under the key "
        "\"onnx_tv.bindings\"");
  }
  BoundPlan out;
  const InfoIndex spec_index(spec);
  ProgramIndex program_index;
  ProgramProduced program_produced;
  for (const auto& b : plan.bindings) {
    check_memory(memory_bytes, "resolving the bindings");
    if (b.rank < 0 || b.rank >= plan.world_size)
      throw InputError(b.origin + ": rank " + std::to_string(b.rank) + " is outside the world of " +
                       std::to_string(plan.world_size) + " ranks");
    const ir::Graph& g = plan.program_of(b.rank);
    const InfoIndex& index = program_index(g);
    const std::unordered_set<std::string>& produced = program_produced(g);
    const bool rank_in = (index.input(b.value) || g.initializers.count(b.value)) &&
                         !produced.count(b.value);
    const bool rank_out = index.output(b.value) != nullptr;
    if (!rank_in && !rank_out)
      throw InputError(b.origin + ": '" + b.value + "' is not a graph input, output or "
                       "initializer of " + g.file);
    const ir::ValueInfo* spec_info = spec_index.input(b.spec);
    const bool spec_in = spec_info || spec.initializers.count(b.spec);
    const bool spec_out = spec_index.output(b.spec) != nullptr;
    if (!spec_in && !spec_out)
      throw InputError(b.origin + ": '" + b.spec + "' is not a graph input, output or "
                       "initializer of the spec " + spec.file);
    ir::BindingNames side;
    side.rank_input = index.input(b.value) && !produced.count(b.value);
    side.rank_initializer = rank_in && !side.rank_input;
    side.rank_output = rank_out;
    side.spec_in = spec_in;
    side.spec_out = spec_out;
    const bool is_input = ir::is_input_side(side);
    if (is_input && !spec_in)
      throw InputError(b.origin + ": rank input '" + b.value + "' of " + g.file +
                       " is bound to spec '" + b.spec + "', which is not a spec graph input or "
                       "initializer (an input binding is an assumption about spec inputs)");
    ResolvedBinding rb{&b, {}, is_input};
    if (is_input) {
      auto shape = shape_of(spec, b.spec, spec_info ? spec_info : spec_index.output(b.spec));
      if (!shape)
        throw_no_static_shape(spec, b.spec, b.origin + ": spec input '" + b.spec +
                                                "' has no static shape in " + spec.file);
        // resolve_region's errors name the binding's origin already.
      rb.region = ir::resolve_region(b, plan.mesh, *shape);
      (void)rank_value_shape(g, index, rb);  // up front: no later phase meets another shape
      check_kinds(spec, spec_index, g, index, b);
      if (spec.initializers.count(b.spec)) out.symbolic_spec_values.insert(b.spec);
    }
    out.bindings.push_back(std::move(rb));
  }
  return out;
}

exec::Env spec_inputs(solver::Context& ctx, const ir::Graph& spec, const BoundPlan& bound) {
  exec::Env env;
  const auto ranges = integer_input_ranges(spec);
  for (const auto& vi : spec.inputs) {
    if (spec.initializers.count(vi.name)) continue;
    auto shape = shape_of(spec, vi.name, &vi);
    if (!shape)
      throw_no_static_shape(spec, vi.name, spec.file + ": graph input '" + vi.name +
                                               "' has no static shape; onnx-tv needs the sizes "
                                               "of the spec's inputs");
    env.values[vi.name] = inputs_of(ctx, vi.dtype, *shape, vi.name, ranges);
  }
  for (const auto& [name, c] : spec.initializers) {
    if (bound.symbolic_spec_values.count(name)) {
      env.values[name] = inputs_of(ctx, c.dtype, c.shape, name, ranges);
    } else {
      try {
        env.values[name] = ir::to_tensor(ctx, c);
      } catch (Error& e) {
        e.add_context(spec.file + ": initializer '" + name + "'");
        throw;
      }
    }
  }
  return env;
}

std::vector<exec::Env> rank_inputs(solver::Context& ctx, const ir::Plan& plan,
                             const BoundPlan& bound, const exec::Env& spec_env) {
  std::vector<exec::Env> envs(plan.world_size);
  // Partial input sets: all addends but the last are free; the last closes the sum.
  std::map<std::tuple<std::string, std::vector<int64_t>, std::vector<int64_t>, std::string>,
           std::vector<const ResolvedBinding*>>
      partial_sets;
  ProgramIndex program_index;
  for (const auto& rb : bound.bindings) {
    if (!rb.is_input) continue;
    const auto& b = *rb.binding;
    const ir::Graph& g = plan.program_of(b.rank);
    const InfoIndex& index = program_index(g);
    ir::Shape shape = rank_value_shape(g, index, rb);
    if (envs[b.rank].values.count(b.value))
      throw InputError(b.origin + ": input '" + b.value + "' of rank " + std::to_string(b.rank) +
                       " is bound twice; an input has one definition");
    if (rb.region.partial) {
      partial_sets[{b.spec, rb.region.start, rb.region.end, rb.region.set_key}].push_back(&rb);
      continue;
    }
    ir::Tensor t = ir::slice(spec_env.values.at(b.spec), rb.region.start, rb.region.end);
    t.dtype = declared_dtype(g, b.value, index.input(b.value));
    envs[b.rank].values[b.value] = std::move(t);
  }
  for (auto& [key, members] : partial_sets) {
    std::sort(members.begin(), members.end(), [](auto* a, auto* b) {
      return std::tie(a->binding->rank, a->binding->value) <
             std::tie(b->binding->rank, b->binding->value);
    });
    const auto& r0 = members[0]->region;
    ir::Tensor rest = ir::slice(spec_env.values.at(std::get<0>(key)), r0.start, r0.end);
    for (size_t k = 0; k < members.size(); ++k) {
      const auto& b = *members[k]->binding;
      const ir::Graph& g = plan.program_of(b.rank);
      ir::Tensor t;
      if (k + 1 < members.size()) {
        t = symbols(ctx, declared_dtype(g, b.value, program_index(g).input(b.value)), rest.shape,
                    b.spec + "{addend of rank " + std::to_string(b.rank) + " " + b.value + "}");
        for (int64_t e = 0; e < rest.size(); ++e) rest.data[e] = ctx.sub(rest.data[e], t.data[e]);
      } else {
        t = rest;
        t.dtype = declared_dtype(g, b.value, program_index(g).input(b.value));
      }
      envs[b.rank].values[b.value] = std::move(t);
    }
  }
  for (int64_t r = 0; r < plan.world_size; ++r) {
    const ir::Graph& g = plan.program_of(r);
    for (const auto& [name, c] : g.initializers) {
      if (envs[r].values.count(name)) continue;
      try {
        envs[r].values[name] = ir::to_tensor(ctx, c);
      } catch (Error& e) {
        e.add_context(g.file + ": initializer '" + name + "'");
        throw;
      }
    }
    for (const auto& vi : g.inputs)
      if (!envs[r].values.count(vi.name))
        throw InputError(g.file + ": graph input '" + vi.name + "' of rank " + std::to_string(r) +
                         " is not bound to any spec value; every rank input must be bound or be "
                         "an initializer");
  }
  return envs;
}

}  // namespace onnx_tv::check
