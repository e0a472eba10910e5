#include "check/locate.h"

#include "check/misused_collective.h"
#include "ir/comm_parse.h"
#include "ops/registry.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace onnx_tv::check {

namespace {

using ValueSet = std::unordered_set<solver::Value, solver::ValueHash>;

// A tensor of the linked program: (rank, name); rank -1 is the spec.
using TensorKey = std::pair<int64_t, std::string>;

struct Dataflow {
  std::vector<TensorKey> tensors;  // in execution order (node outputs only)
  std::map<TensorKey, size_t> index;
  std::vector<std::vector<size_t>> consumers;  // tensor -> produced tensors that read it
  std::vector<std::vector<size_t>> sources;    // tensor -> tensors it was computed from
  std::vector<bool> linear;                    // produced by an op linear in each input
  std::vector<std::pair<int64_t, size_t>> producer;  // (rank, node index)
  std::vector<bool> reduce_input;              // read by a summing collective
  std::vector<bool> moves;                     // produced by an op that only moves data

  size_t id(const TensorKey& k) {
    auto [it, fresh] = index.try_emplace(k, tensors.size());
    if (fresh) {
      tensors.push_back(k);
      consumers.emplace_back();
      sources.emplace_back();
      linear.push_back(false);
      producer.emplace_back(-2, 0);
      reduce_input.push_back(false);
      moves.push_back(false);
    }
    return it->second;
  }
  void edge(const TensorKey& from, const TensorKey& to) {
    size_t a = id(from), b = id(to);
    consumers[a].push_back(b);
    sources[b].push_back(a);
  }
};

using IsConstant = std::function<bool(int64_t rank, const std::string& name)>;

void add_node(Dataflow& df, int64_t rank, const ir::Node& node, size_t index,
              const IsConstant& is_constant) {
  // Collectives carry partial sums; an op carries them by its schema's linearity: jointly
  // linear ops always, Mul and Div only when their other operands are constants.
  const ops::OpSchema* schema = ops::schema_of(node);
  bool linear = ir::is_comm_op(node) ||
                (schema && schema->traits.linearity == ops::Linearity::Joint);
  if (schema && schema->traits.linearity == ops::Linearity::EachAlone) {
    for (size_t k = 0; k < node.inputs.size() && !linear; ++k) {
      if (!schema->is_linear_input(k)) continue;
      bool others_constant = true;
      for (size_t j = 0; j < node.inputs.size(); ++j)
        if (j != k && !node.inputs[j].empty() && !is_constant(rank, node.inputs[j]))
          others_constant = false;
      linear = others_constant;
    }
  }
  for (const auto& out : node.outputs) {
    if (out.empty()) continue;
    size_t o = df.id({rank, out});
    df.producer[o] = {rank, index};
    df.linear[o] = linear;
    df.moves[o] = schema && schema->traits.movement == ops::Movement::Copies;
    for (const auto& in : node.inputs)
      if (!in.empty()) df.edge({rank, in}, {rank, out});
  }
}

Dataflow build_dataflow(const ir::Graph& spec, const ir::Plan& plan,
                        const exec::LinkedPlan& linked, const IsConstant& is_constant) {
  Dataflow df;
  for (size_t i = 0; i < spec.nodes.size(); ++i) add_node(df, -1, spec.nodes[i], i, is_constant);
  for (const exec::Step& s : linked.steps) {
    if (s.kind == exec::Step::Kind::Node) {
      const auto& m = s.members[0];
      add_node(df, m.rank, plan.program_of(m.rank).nodes[m.node_index], m.node_index,
               is_constant);
      continue;
    }
    const bool sums = s.kind == exec::Step::Kind::Collective &&
                      (s.members[0].comm->kind == ir::CommKind::AllReduce ||
                       s.members[0].comm->kind == ir::CommKind::ReduceScatter) &&
                      s.members[0].comm->reduce == ir::ReduceOp::Sum;
    for (const auto& out : s.members) {
      if (out.comm->output.empty()) continue;
      size_t o = df.id({out.rank, out.comm->output});
      df.producer[o] = {out.rank, out.node_index};
      df.linear[o] = true;
      for (const auto& in : s.members) {
        if (in.comm->data_input.empty()) continue;
        df.edge({in.rank, in.comm->data_input}, {out.rank, out.comm->output});
        if (sums) df.reduce_input[df.id({in.rank, in.comm->data_input})] = true;
      }
    }
  }
  return df;
}

const ir::Tensor* tensor_of(const TensorKey& k, const exec::Env& spec_env, const std::vector<exec::Env>& envs) {
  const exec::Env& env = k.first < 0 ? spec_env : envs[k.first];
  auto it = env.values.find(k.second);
  return it == env.values.end() ? nullptr : &it->second;
}

// Constants are explained by definition: a wrong constant shows in the op that uses it.
bool all_in(const solver::Context& ctx, const ir::Tensor* t, const ValueSet& set) {
  if (!t) return true;
  for (const auto& v : t->data)
    if (v.is_finite() && !set.count(v) && !ctx.is_constant(v)) return false;
  return true;
}

ValueSet values_of(const exec::Env& env) {
  ValueSet s;
  for (const auto& [name, t] : env.values)
    for (const auto& v : t.data)
      if (v.is_finite()) s.insert(v);
  return s;
}

// The cone of `roots` (everything they were computed from), as a membership mask.
std::vector<bool> cone(const Dataflow& df, const std::vector<size_t>& roots) {
  std::vector<bool> in(df.tensors.size(), false);
  std::vector<size_t> stack(roots);
  while (!stack.empty()) {
    size_t t = stack.back();
    stack.pop_back();
    if (in[t]) continue;
    in[t] = true;
    for (size_t s : df.sources[t]) stack.push_back(s);
  }
  return in;
}

// The earliest tensor of one side in the cone of `roots` that is not explained.
// Exporters name a rank's ops after the model's ("/mb0/layers.1/attn/MatMul" for the spec's
// "/layers.1/attn/MatMul"). Where a rank op has such a namesake in the spec, its result must
// be made of the namesake's values, not just of some spec values: a backward op that reads the
// wrong (but valid) tensor then shows where it happens. Names only ever tighten a match.
class Namesakes {
 public:
  Namesakes(const ir::Graph& spec, const exec::Env& spec_env) : spec_env_(spec_env) {
    for (const auto& node : spec.nodes)
      if (!node.name.empty()) outputs_[node.name] = &node.outputs;
  }

  // The spec tensor standing where `rank_node`'s output `k` stands, or "" when none.
  std::string counterpart(const ir::Node& rank_node, size_t k) const {
    const std::string& n = rank_node.name;
    for (size_t pos = n.find('/'); pos != std::string::npos; pos = n.find('/', pos + 1)) {
      std::string suffix = n.substr(pos);
      if (std::count(suffix.begin(), suffix.end(), '/') < 2) break;
      auto it = outputs_.find(suffix);
      if (it != outputs_.end() && k < it->second->size()) return (*it->second)[k];
    }
    return "";
  }

  const ValueSet& values(const std::string& spec_tensor) {
    auto [it, fresh] = cache_.try_emplace(spec_tensor);
    if (fresh) {
      auto t = spec_env_.values.find(spec_tensor);
      if (t != spec_env_.values.end())
        for (const auto& v : t->second.data)
          if (v.is_finite()) it->second.insert(v);
    }
    return it->second;
  }

 private:
  const exec::Env& spec_env_;
  std::map<std::string, const std::vector<std::string>*> outputs_;
  std::map<std::string, ValueSet> cache_;
};

// Sums a rank tensor over each group of ranks that reduce together in the plan; true when some
// such sum is made of spec values. That is the signature of a missing reduction: the tensor is
// a complete set of addends that no collective adds up.
class PartialProbe {
 public:
  PartialProbe(solver::Context& ctx, const exec::LinkedPlan& linked, const ValueSet& spec_values,
               const exec::Env& spec_env, const std::vector<exec::Env>& envs)
      : ctx_(ctx), spec_values_(spec_values), spec_env_(spec_env), envs_(envs) {
    std::set<std::vector<int64_t>> seen;
    for (const exec::Step& s : linked.steps) {
      if (s.kind != exec::Step::Kind::Collective) continue;
      std::vector<int64_t> g;
      for (const auto& m : s.members) g.push_back(m.rank);
      if (seen.insert(g).second) groups_.push_back(g);
    }
  }

  bool sums_to_spec(const TensorKey& k) {
    if (k.first < 0) return false;
    const ir::Tensor* mine = tensor_of(k, spec_env_, envs_);
    if (!mine || mine->data.empty()) return false;
    for (const auto& g : groups_) {
      if (std::find(g.begin(), g.end(), k.first) == g.end()) continue;
      std::vector<const ir::Tensor*> parts;
      for (int64_t r : g) {
        const ir::Tensor* t = tensor_of({r, k.second}, spec_env_, envs_);
        if (!t || t->shape != mine->shape) break;
        parts.push_back(t);
      }
      if (parts.size() != g.size()) continue;
      bool all = true;
      std::vector<solver::Value> xs(parts.size());
      for (size_t e = 0; all && e < mine->data.size(); ++e) {
        for (size_t i = 0; i < parts.size(); ++i) xs[i] = parts[i]->data[e];
        solver::Value v = ctx_.known_cut(ctx_.sum(xs));  // a staged run's spec values are cuts
        all = !v.is_finite() || spec_values_.count(v) || ctx_.is_constant(v);
      }
      if (all) return true;
    }
    return false;
  }

 private:
  solver::Context& ctx_;
  const ValueSet& spec_values_;
  const exec::Env& spec_env_;
  const std::vector<exec::Env>& envs_;
  std::vector<std::vector<int64_t>> groups_;
};

std::optional<size_t> first_unexplained(const solver::Context& ctx, const Dataflow& df, const std::vector<size_t>& roots,
                                        bool spec_side, const ValueSet& other,
                                        const exec::Env& spec_env, const std::vector<exec::Env>& envs,
                                        const std::set<size_t>& addends,
                                        PartialProbe* probe, Namesakes* names,
                                        const ir::Plan* plan) {
  const size_t n = df.tensors.size();
  std::vector<bool> in_cone = cone(df, roots);
  std::vector<bool> side(n), matched(n), recovers(n, false), partial_ok(n, false);
  for (size_t t = 0; t < n; ++t) {
    side[t] = (df.tensors[t].first < 0) == spec_side;
    if (!side[t]) continue;
    const ir::Tensor* tensor = tensor_of(df.tensors[t], spec_env, envs);
    std::string twin;
    if (names && plan && df.producer[t].first >= 0) {
      const ir::Node& node = plan->program_of(df.producer[t].first).nodes[df.producer[t].second];
      for (size_t k = 0; k < node.outputs.size() && twin.empty(); ++k)
        if (node.outputs[k] == df.tensors[t].second) twin = names->counterpart(node, k);
    }
    matched[t] = all_in(ctx, tensor, twin.empty() ? other : names->values(twin));
  }
  // Tensors are numbered in execution order, so a reverse sweep sees consumers first.
  for (size_t t = n; t-- > 0;) {
    if (!side[t]) continue;
    for (size_t c : df.consumers[t]) {
      if (!side[c]) continue;
      recovers[t] = recovers[t] || matched[c] || recovers[c];
      partial_ok[t] = partial_ok[t] || (df.linear[c] && partial_ok[c]);
    }
    if (!spec_side && (df.reduce_input[t] || addends.count(t))) partial_ok[t] = true;
  }
  for (size_t t = 0; t < n; ++t) {
    if (!side[t] || !in_cone[t] || df.producer[t].first == -2) continue;
    if (matched[t] || recovers[t] || partial_ok[t]) continue;
    if (!probe || !probe->sums_to_spec(df.tensors[t])) return t;
    // A complete set of addends that nothing reduces: follow the linear ops that keep it one
    // (adding up the q, k and v input gradients, say) to the last, where the reduction belongs.
    for (;;) {
      std::optional<size_t> next;
      for (size_t c : df.consumers[t])
        if (side[c] && in_cone[c] && df.linear[c] && (!next || c < *next) &&
            probe->sums_to_spec(df.tensors[c]))
          next = c;
      if (!next) return t;
      t = *next;
    }
  }
  // Everything on the path is explained: name the op that made the failing value, looking
  // through ops that only move data (an Identity to the graph output, say) along their first
  // input.
  for (size_t r : roots) {
    if (df.producer[r].first == -2) continue;
    size_t t = r;
    while (!df.sources[t].empty() && df.moves[t] && df.producer[df.sources[t][0]].first != -2 &&
           side[df.sources[t][0]])
      t = df.sources[t][0];
    return t;
  }
  return std::nullopt;
}

// A value divided by its first term's coefficient: equal for values that differ by a rational
// factor only.
solver::Value primitive(solver::Context& ctx, solver::Value v, solver::Rational* factor) {
  *factor = ctx.term(v.poly, 0).coefficient->to_rational();
  return ctx.mul(v, ctx.constant(solver::Rational(1) / *factor));
}

// Where a scale error comes in. When every symbolic element of the failing rank value is a spec
// value times one rational k != 1 (a wrong divisor, a factor missing or doubled), the earliest
// rank tensor on its path whose symbolic elements are all spec values times that same k is
// where the wrong factor entered: a later op only carries it. Empty when the failing value is
// not such a multiple. k is read off the first symbolic element against the spec output's
// elements; every other element is then checked by membership, one product each.
std::optional<size_t> first_scaled(solver::Context& ctx, const Dataflow& df,
                                   const std::vector<size_t>& roots, const std::string& spec_output,
                                   const ValueSet& spec_values, const exec::Env& spec_env,
                                   const std::vector<exec::Env>& envs) {
  if (roots.size() != 1) return std::nullopt;
  const ir::Tensor* root = tensor_of(df.tensors[roots[0]], spec_env, envs);
  const ir::Tensor* wanted = tensor_of({-1, spec_output}, spec_env, envs);
  if (!root || !wanted) return std::nullopt;
  std::optional<solver::Rational> k;
  for (const auto& v : root->data) {
    if (!v.is_finite() || ctx.is_constant(v)) continue;
    solver::Rational cv;
    const solver::Value pv = primitive(ctx, v, &cv);
    for (const auto& s : wanted->data) {
      if (!s.is_finite() || ctx.is_constant(s)) continue;
      solver::Rational cs;
      if (primitive(ctx, s, &cs) == pv) {
        k = cv / cs;
        break;
      }
    }
    break;
  }
  if (!k || *k == solver::Rational(1)) return std::nullopt;
  const solver::Value unscale = ctx.constant(solver::Rational(1) / *k);
  // Scaled: every symbolic element is a spec value times k, and not all are spec values
  // themselves (a tensor the spec also computes carries no error, whatever k maps it to).
  auto scaled = [&](size_t t) {
    const ir::Tensor* tensor = tensor_of(df.tensors[t], spec_env, envs);
    if (!tensor) return false;
    bool any = false, all_spec = true;
    for (const auto& v : tensor->data) {
      if (!v.is_finite() || ctx.is_constant(v)) continue;
      if (!spec_values.count(ctx.mul(v, unscale))) return false;
      any = true;
      all_spec = all_spec && spec_values.count(v);
    }
    return any && !all_spec;
  };
  if (!scaled(roots[0])) return std::nullopt;
  const std::vector<bool> in_cone = cone(df, roots);
  for (size_t t = 0; t < df.tensors.size(); ++t)
    if (in_cone[t] && df.tensors[t].first >= 0 && df.producer[t].first != -2 && scaled(t))
      return t;
  return std::nullopt;
}

NodeRef node_ref(const Dataflow& df, size_t t, const ir::Graph& spec, const ir::Plan& plan) {
  const auto [rank, index] = df.producer[t];
  const ir::Graph& g = rank < 0 ? spec : plan.program_of(rank);
  const ir::Node& node = g.nodes[index];
  NodeRef ref;
  ref.file = g.file;
  ref.rank = rank;
  ref.node = node.name.empty() ? node.describe(index) : node.name;
  ref.op_type = node.op_type;
  ref.output = df.tensors[t].second;
  return ref;
}

}  // namespace

Location locate(solver::Context& ctx, const ir::Graph& spec, const exec::Env& spec_env, const ir::Plan& plan,
                const exec::LinkedPlan& linked, const std::vector<exec::Env>& envs,
                const std::vector<Obligation>& obligations, size_t failing) {
  auto is_constant = [&](int64_t rank, const std::string& name) {
    const ir::Tensor* t = tensor_of({rank, name}, spec_env, envs);
    if (!t) return false;
    for (const auto& v : t->data)
      if (!ctx.is_constant(v)) return false;
    return true;
  };
  Dataflow df = build_dataflow(spec, plan, linked, is_constant);
  const Obligation& ob = obligations[failing];
  ValueSet spec_values = values_of(spec_env), rank_values;
  for (const exec::Env& env : envs) {
    ValueSet s = values_of(env);
    rank_values.insert(s.begin(), s.end());
  }
  std::vector<size_t> rank_roots;
  std::set<size_t> addends;  // partial-sum addends of any output binding
  for (const auto& o : obligations)
    if (o.region.partial)
      for (const auto* b : o.members) addends.insert(df.id({b->rank, b->value}));
  for (const auto* b : ob.members) rank_roots.push_back(df.id({b->rank, b->value}));
  Location loc;
  std::vector<size_t> spec_roots = {df.id({-1, ob.spec})};
  if (auto t = first_unexplained(ctx, df, spec_roots, true, rank_values, spec_env, envs, {},
                                 nullptr, nullptr, nullptr))
    loc.spec_node = node_ref(df, *t, spec, plan);
  std::vector<bool> on_path = cone(df, rank_roots);
  auto misused = find_misused_collective(
      ctx, plan, linked, envs, spec_values, [&](int64_t rank, const std::string& tensor) {
        auto it = df.index.find({rank, tensor});
        return it != df.index.end() && on_path[it->second];
      });
  if (misused) {
    auto it = df.index.find({misused->rank, misused->output});
    loc.rank_node = node_ref(df, it->second, spec, plan);
    return loc;
  }
  if (auto t = first_scaled(ctx, df, rank_roots, ob.spec, spec_values, spec_env, envs)) {
    loc.rank_node = node_ref(df, *t, spec, plan);
    return loc;
  }
  PartialProbe probe(ctx, linked, spec_values, spec_env, envs);
  Namesakes names(spec, spec_env);
  if (auto t = first_unexplained(ctx, df, rank_roots, false, spec_values, spec_env, envs, addends,
                                 &probe, &names, &plan))
    loc.rank_node = node_ref(df, *t, spec, plan);
  return loc;
}

}  // namespace onnx_tv::check
