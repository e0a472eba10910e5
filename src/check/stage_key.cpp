#include "check/stage_key.h"

#include <string_view>
#include <unordered_map>

#include "ir/attribute_text.h"

namespace onnx_tv::check {

namespace {

// A value of one program (-1: the spec) by name; the names are the graphs' and the stage's
// own, which outlive the writer. Hashed: a stage's text looks one up per input it writes.
using ValueRef = std::pair<int64_t, std::string_view>;
struct ValueRefHash {
  size_t operator()(const ValueRef& v) const {
    return std::hash<std::string_view>()(v.second) * 31 + size_t(v.first);
  }
};

class KeyWriter {
 public:
  KeyWriter(const solver::Context& ctx, const StageKeyInputs& in, const StageUnits& units)
      : ctx_(ctx), in_(in), units_(units) {
    for (size_t k = 0; k < units.slots.size(); ++k)
      local_.emplace(ValueRef(units.slots[k].program, units.slots[k].name), k);
  }

  StageKey write() {
    size_t slot = 0;
    for (size_t i : units_.spec_nodes) {
      const ir::Node& n = in_.spec.nodes[i];
      out_ += "S";
      node(-1, in_.spec, n);
      outputs(-1, in_.spec, n.outputs, slot);
    }
    for (size_t s : units_.steps) {
      const exec::Step& step = in_.linked.steps[s];
      if (step.kind == exec::Step::Kind::Node) {
        const auto& m = step.members[0];
        const ir::Graph& g = in_.plan.program_of(m.rank);
        out_ += "N" + rank(m.rank);
        node(m.rank, g, g.nodes[m.node_index]);
        outputs(m.rank, g, g.nodes[m.node_index].outputs, slot);
        continue;
      }
      const ir::CommOp& op = *step.members[0].comm;
      out_ += (step.kind == exec::Step::Kind::P2P ? "P" : "C") + ir::comm_kind_name(op.kind) +
              " r" + std::to_string(int(op.reduce)) + " a" + std::to_string(op.axis) + " s" +
              std::to_string(op.split_axis) + " c" + std::to_string(op.concat_axis) + " f" +
              std::to_string(op.flatten) + " o" + std::to_string(op.root) + " {";
      for (const auto& m : step.members) {
        out_ += rank(m.rank) + ":" + ref(m.rank, m.comm->data_input) + ">";
        const ir::Graph& g = in_.plan.program_of(m.rank);
        outputs(m.rank, g, {m.comm->output}, slot);
      }
      out_ += "}\n";
    }
    // The inputs from outside the stage, with the forms they hold.
    out_ += "|";
    for (size_t k = 0; k < external_.size() && key_.reusable; ++k) {
      const auto& [program, name] = external_[k];
      const exec::Env& env = program < 0 ? in_.spec_env : in_.envs[size_t(program)];
      auto it = env.values.find(name);
      if (it == env.values.end()) {  // read before it is made: the run reports it
        key_.reusable = false;
        break;
      }
      tensor(it->second);
    }
    key_.text = std::move(out_);
    return std::move(key_);
  }

 private:
  std::string rank(int64_t r) {
    auto [it, fresh] = ranks_.try_emplace(r, ranks_.size());
    std::string s = std::to_string(it->second);
    if (fresh && in_.plan.mesh)
      for (const auto& axis : in_.guarded_axes)
        if (int64_t a = in_.plan.mesh->axis_index(axis); a >= 0)
          s += "@" + std::to_string(in_.plan.mesh->coords(r)[size_t(a)]);
    return s;
  }

  std::string ref(int64_t program, const std::string& name) {
    if (name.empty()) return "-";
    if (auto it = local_.find(ValueRef(program, name)); it != local_.end() && it->second < made_)
      return "L" + std::to_string(it->second);
    auto [it, fresh] = external_index_.try_emplace(ValueRef(program, name), external_.size());
    if (fresh) external_.emplace_back(program, std::string(name));
    return "E" + std::to_string(it->second);
  }

  void node(int64_t program, const ir::Graph& g, const ir::Node& n) {
    (void)g;
    out_ += n.domain + "::" + n.op_type + "@" + std::to_string(n.opset) + "(";
    for (const auto& i : n.inputs) out_ += ref(program, i) + ",";
    out_ += ")";
    for (const auto& [name, a] : n.attributes)
      if (!ir::append_attribute(out_, name, a)) key_.reusable = false;
  }

  // Each output: its place, whether it leaves the stage, its declared shape, and the guards'
  // marks on it.
  void outputs(int64_t program, const ir::Graph& g, const std::vector<std::string>& names,
               size_t& slot) {
    out_ += "->";
    for (const auto& o : names) {
      if (o.empty()) {
        out_ += "-,";
        continue;
      }
      const StageSlot& s = units_.slots[slot];
      out_ += "L" + std::to_string(slot) + (s.leaves ? "!" : "") + declared(g, o);
      if (auto it = in_.marks.find({program, o}); it != in_.marks.end()) out_ += "#" + it->second;
      if (auto it = in_.bound.find({program, o}); it != in_.bound.end())
        for (const ir::Binding* b : it->second) binding(program, *b);
      out_ += ",";
      made_ = ++slot;
    }
    out_ += "\n";
  }

  // A binding of this output: the other side (made here, from outside, or not yet made) and
  // what the binding says of the region, with the rank's coordinates along the mesh axes its
  // placements shard or sum over.
  void binding(int64_t program, const ir::Binding& b) {
    out_ += "{B" + (program < 0 ? rank(b.rank) + ":" + other(b.rank, b.value) : other(-1, b.spec)) +
            ir::binding_region_key(b);
    if (in_.plan.mesh)
      for (size_t a = 0; a < b.placements.size() && a < in_.plan.mesh->axes.size(); ++a)
        if (b.placements[a].kind != ir::Placement::Kind::Replicate)
          out_ += "@" + std::to_string(in_.plan.mesh->coords(b.rank)[a]);
    out_ += "}";
  }

  std::string other(int64_t program, const std::string& name) {
    if (auto it = local_.find(ValueRef(program, name)); it != local_.end() && it->second < made_)
      return "L" + std::to_string(it->second);
    if (local_.count(ValueRef(program, name))) return "N";  // made later in this stage
    const exec::Env& env = program < 0 ? in_.spec_env : in_.envs[size_t(program)];
    if (env.values.count(name)) return ref(program, name);
    return "X";  // made by a later stage
  }

  static std::string declared(const ir::Graph& g, const std::string& name) {
    const ir::ValueInfo* vi = nullptr;
    if (auto it = g.value_info.find(name); it != g.value_info.end()) vi = &it->second;
    for (const auto& o : g.outputs)
      if (o.name == name) vi = &o;
    return vi ? ir::value_info_text(*vi) : "";
  }

  void tensor(const ir::Tensor& t) {
    out_ += std::to_string(int(t.dtype)) + ir::shape_string(t.shape) + "[";
    for (const solver::Value& v : t.data) {
      if (!v.is_finite()) {
        out_ += v.inf > 0 ? "+inf;" : "-inf;";
        continue;
      }
      const size_t n = ctx_.poly_term_count(v.poly);
      for (size_t i = 0; i < n; ++i) {
        const solver::TermView term = ctx_.term(v.poly, i);
        out_ += term.coefficient->to_rational().get_str();
        for (const auto& [a, e] : term.factors) {
          if (ctx_.atom(a).fn != solver::Fn::Symbol) {  // renaming keeps symbols only
            key_.reusable = false;
            return;
          }
          auto [it, fresh] = atom_index_.try_emplace(a, key_.atoms.size());
          if (fresh) key_.atoms.push_back(a);
          out_ += "*" + std::to_string(it->second) + "^" + e.to_rational().get_str();
        }
        out_ += " ";
      }
      out_ += ";";
    }
    out_ += "]";
  }

  const solver::Context& ctx_;
  const StageKeyInputs& in_;
  const StageUnits& units_;
  std::string out_;
  StageKey key_;
  size_t made_ = 0;  // outputs made so far: a read of a later one is from outside
  std::unordered_map<ValueRef, size_t, ValueRefHash> local_;
  std::unordered_map<ValueRef, size_t, ValueRefHash> external_index_;
  std::vector<std::pair<int64_t, std::string>> external_;
  std::unordered_map<int64_t, size_t> ranks_;
  std::unordered_map<solver::AtomId, size_t> atom_index_;
};

}  // namespace

StageKey stage_key(const solver::Context& ctx, const StageKeyInputs& in, const StageUnits& units) {
  return KeyWriter(ctx, in, units).write();
}

}  // namespace onnx_tv::check
