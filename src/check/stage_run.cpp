#include "check/stage_run.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <set>
#include <unordered_map>
#include <utility>

#include "check/counted_replicas.h"
#include "check/counted_sums.h"
#include "check/integer_inputs.h"
#include "check/obligations.h"
#include "check/stage_cuts.h"
#include "check/stage_key.h"
#include "check/stage_partition.h"
#include "check/witness.h"
#include "common/errors.h"
#include "common/limits.h"
#include "common/memory_limit.h"
#include "ir/tensor_util.h"

namespace onnx_tv::check {

namespace {

using Name = std::pair<int64_t, std::string>;  // (program, tensor); program -1 is the spec

// What a stage run once leaves for the stages with its text: its outputs over the atoms its
// inputs held and the symbols it made.
struct Record {
  std::vector<solver::AtomId> inputs;  // StageKey::atoms
  std::vector<solver::AtomId> made;
  std::vector<std::pair<size_t, ir::Tensor>> outputs;  // (slot, value) of the slots that leave
};

class StageRun {
 public:
  StageRun(CheckResult& res, const CheckOptions& options, const ir::Graph& spec,
           const ir::Plan& plan, const exec::LinkedPlan& linked, const BoundPlan& bound,
           const exec::RunLimits& limits, const StageGuards& guards, StageTexts* texts)
      : res_(res), options_(options), spec_(spec), plan_(plan), linked_(linked), bound_(bound),
        limits_(limits), guards_(guards), texts_(texts), cuts_(ctx_, spec, limits::kStagedMaxTerms),
        search_(ctx_, options.witness_seed) {}

  bool run(StageCounts& counts, std::string& why_not) {
    spec_env_ = spec_inputs(ctx_, spec_, bound_);
    note_ranges(res_.warnings, spec_, spec_env_.values);  // as the runs it stands for say
    envs_ = rank_inputs(ctx_, plan_, bound_, spec_env_);
    const StagePartition part = partition_stages(spec_, plan_, linked_, bound_);
    std::vector<StageUnits> stages(size_t(part.stages));
    for (size_t k = 0; k < stages.size(); ++k) stages[k].label = int64_t(k);
    for (size_t i = 0; i < spec_.nodes.size(); ++i)
      stages[size_t(part.spec_stage[i])].spec_nodes.push_back(i);
    for (size_t s = 0; s < linked_.steps.size(); ++s)
      stages[size_t(part.step_stage[s])].steps.push_back(s);
    std::erase_if(stages, [&](const StageUnits& u) {
      const bool empty = u.spec_nodes.empty() && u.steps.empty();
      if (empty && texts_ && texts_->wanted.count(u.label)) texts_->text[u.label] = "";
      return empty;
    });
    for (StageUnits& st : stages) order_steps(st.steps);
    find_slots(stages);
    mark_guarded();
    for (const auto& rb : bound_.bindings)
      if (!rb.is_input) {
        unresolved_[rb.binding->spec].push_back(rb.binding);
        bound_outputs_[{rb.binding->rank, rb.binding->value}].push_back(rb.binding);
        bound_outputs_[{-1, rb.binding->spec}].push_back(rb.binding);
      }
    for (const auto& o : spec_.outputs) spec_outputs_.insert(o.name);
    counts.stages = int64_t(stages.size());
    shapes_.assign(size_t(plan_.world_size) + 1, {});
    try {
      for (size_t k = 0; k < stages.size(); ++k) {
        if (options_.on_progress) options_.on_progress(Progress{"stages", int64_t(k), int64_t(stages.size())});
        check_memory(limits_.memory_bytes, "proving stage obligations");
        current_ = k;
        prove_stage(stages[k], counts);
        drop(k);
      }
      if (options_.on_progress)
        options_.on_progress(Progress{"stages", int64_t(stages.size()), int64_t(stages.size())});
      return conclude(why_not);
    } catch (const NotApplicable& e) {
      why_not = e.what();
      return false;
    }
  }

 private:
  // Every output of every stage, in the order its units make them, and whether it leaves.
  void find_slots(std::vector<StageUnits>& stages) {
    std::map<Name, size_t> stage_of;
    for (size_t k = 0; k < stages.size(); ++k) {
      for (size_t i : stages[k].spec_nodes)
        for (const auto& o : spec_.nodes[i].outputs)
          if (!o.empty()) stage_of[{-1, o}] = k;
      for (size_t s : stages[k].steps)
        for (const auto& m : linked_.steps[s].members)
          for (const auto& o : outputs_of(s, m))
            if (!o.empty()) stage_of[{m.rank, o}] = k;
    }
    std::set<Name> leaves;
    for (const auto& o : spec_.outputs) leaves.insert({-1, o.name});
    for (const auto& rb : bound_.bindings)
      if (!rb.is_input) leaves.insert({rb.binding->rank, rb.binding->value});
    std::map<Name, size_t> last;  // the last stage reading a value
    auto read = [&](size_t k, const Name& n) {
      if (auto it = stage_of.find(n); it != stage_of.end() && it->second != k) {
        leaves.insert(n);
        last[n] = std::max(last[n], k);
      }
    };
    for (size_t k = 0; k < stages.size(); ++k) {
      for (size_t i : stages[k].spec_nodes)
        for (const auto& in : spec_.nodes[i].inputs) read(k, {-1, in});
      for (size_t s : stages[k].steps) {
        const exec::Step& step = linked_.steps[s];
        for (const auto& m : step.members) {
          if (step.kind == exec::Step::Kind::Node)
            for (const auto& in : plan_.program_of(m.rank).nodes[m.node_index].inputs)
              read(k, {m.rank, in});
          else
            read(k, {m.rank, m.comm->data_input});
        }
      }
    }
    // A value read for the last time is done with after that stage, unless the obligations at
    // the end read it: dropping it frees its memory, and its atoms no longer keep the next
    // stages open.
    std::set<Name> finals;
    for (const auto& o : spec_.outputs) finals.insert({-1, o.name});
    for (const auto& rb : bound_.bindings)
      if (!rb.is_input) finals.insert({rb.binding->rank, rb.binding->value});
    drop_after_.assign(stages.size(), {});
    for (const auto& [n, k] : last)
      if (!finals.count(n)) drop_after_[k].push_back(n);
    last_read_ = std::move(last);
    for (auto& st : stages) {
      for (size_t i : st.spec_nodes)
        for (const auto& o : spec_.nodes[i].outputs)
          if (!o.empty()) st.slots.push_back({-1, o, leaves.count({-1, o}) > 0});
      for (size_t s : st.steps)
        for (const auto& m : linked_.steps[s].members)
          for (const auto& o : outputs_of(s, m))
            if (!o.empty()) st.slots.push_back({m.rank, o, leaves.count({m.rank, o}) > 0});
    }
  }

  // The steps of a stage in a dataflow order of their own: among the steps ready to run, the
  // one of the lowest rank, then the lowest node. The linker interleaves ranks as its pairing
  // of collectives goes, differently from layer to layer; this order is the same for layers
  // that are the same on ranks numbered alike, so their texts are too.
  void order_steps(std::vector<size_t>& steps) const {
    std::map<Name, size_t> made;  // (rank, tensor) -> position in `steps`
    std::vector<std::vector<size_t>> after(steps.size());
    std::vector<size_t> waiting(steps.size(), 0);
    for (size_t k = 0; k < steps.size(); ++k) {
      const exec::Step& step = linked_.steps[steps[k]];
      std::set<size_t> deps;
      for (const auto& m : step.members) {
        std::vector<std::string> ins;
        if (step.kind == exec::Step::Kind::Node) ins = plan_.program_of(m.rank).nodes[m.node_index].inputs;
        else ins = {m.comm->data_input};
        for (const auto& in : ins)
          if (auto it = made.find({m.rank, in}); it != made.end()) deps.insert(it->second);
      }
      for (size_t d : deps) after[d].push_back(k);
      waiting[k] = deps.size();
      for (const auto& m : step.members)
        for (const auto& o : outputs_of(steps[k], m))
          if (!o.empty()) made[{m.rank, o}] = k;
    }
    auto key = [&](size_t k) {
      const exec::Step& step = linked_.steps[steps[k]];
      int64_t rank = step.members[0].rank;
      size_t node = step.members[0].node_index;
      for (const auto& m : step.members) {
        rank = std::min(rank, m.rank);
        node = std::min(node, m.node_index);
      }
      return std::make_tuple(rank, node, k);
    };
    std::set<std::tuple<int64_t, size_t, size_t>> ready;
    for (size_t k = 0; k < steps.size(); ++k)
      if (!waiting[k]) ready.insert(key(k));
    std::vector<size_t> out;
    while (!ready.empty()) {
      const size_t k = std::get<2>(*ready.begin());
      ready.erase(ready.begin());
      out.push_back(steps[k]);
      for (size_t c : after[k])
        if (--waiting[c] == 0) ready.insert(key(c));
    }
    ONNX_TV_ASSERT(out.size() == steps.size(), "a stage's steps hold a cycle");
    steps = std::move(out);
  }

  void drop(size_t k) {
    if (drop_after_[k].empty()) return;
    const std::set<Name> done(drop_after_[k].begin(), drop_after_[k].end());
    for (const Name& n : done) env_of(n.first).values.erase(n.second);
    std::erase_if(open_, [&](const Name& n) { return done.count(n) > 0; });
  }

  std::vector<std::string> outputs_of(size_t s, const exec::Step::Member& m) const {
    if (linked_.steps[s].kind == exec::Step::Kind::Node)
      return plan_.program_of(m.rank).nodes[m.node_index].outputs;
    return {m.comm->output};
  }

  // Sum sites and micro-batch sums: the guards judge them, so they are part of a stage's text.
  void mark_guarded() {
    if (guards_.sum_sites)
      for (size_t k = 0; k < guards_.sum_sites->size(); ++k) {
        const reduce::SumSite& s = (*guards_.sum_sites)[k];
        sites_[{s.rank, s.output}].push_back(k);
      }
    marks_ = guard_marks(plan_, guards_);
  }

  exec::Env& env_of(int64_t program) { return program < 0 ? spec_env_ : envs_[size_t(program)]; }

  void prove_stage(const StageUnits& st, StageCounts& counts) {
    const StageKeyInputs in{spec_, plan_, linked_, spec_env_, envs_, marks_, guards_.rank_axes, bound_outputs_};
    StageKey key = stage_key(ctx_, in, st);
    if (key.reusable) {
      if (auto it = known_.find(key.text); it != known_.end()) {
        if (texts_ && texts_->wanted.count(st.label)) texts_->text[st.label] = key.text;
        reuse(st, key, it->second);
        decide_obligations(true);
        ++counts.reused;
        return;
      }
    }
    ++counts.distinct;
    // The side values take known atoms in: a cut may meet one a stage before made, which a
    // symbol stands for now.
    auto spec_hook = [&](const std::string& name, ir::Tensor& t) {
      cuts_.on_spec_tensor(name, t);
      rename(t);
    };
    auto rank_hook = [&](const std::string& name, ir::Tensor& t) {
      cuts_.on_rank_tensor(name, t);
      rename(t);
    };
    for (size_t i : st.spec_nodes) exec::run_node_at(ctx_, spec_, spec_env_, i, limits_, spec_hook);
    for (size_t s : st.steps) exec::run_step(ctx_, plan_, linked_.steps[s], envs_, limits_, rank_hook);
    settled_.clear();
    for (const StageSlot& s : st.slots)  // before the obligations: a proven one settles its own
      if (s.leaves && env_of(s.program).values.count(s.name)) open_.push_back({s.program, s.name});
    form_ = ProofForm();
    decide_obligations(false);
    guard(st);
    const size_t before = made_.size();
    for (const StageSlot& s : st.slots) {
      exec::Env& env = env_of(s.program);
      auto it = env.values.find(s.name);
      if (it == env.values.end()) continue;
      shapes_[s.program + 1][s.name] = it->second.shape;  // for the declared shapes, at the end
      if (!s.leaves) env.values.erase(it);  // read inside the stage only: done with
    }
    if (!close_stage()) return;
    if (!key.reusable) return;
    Record rec;
    rec.inputs = std::move(key.atoms);
    rec.made.assign(made_.begin() + std::ptrdiff_t(before), made_.end());
    std::set<solver::AtomId> allowed(rec.inputs.begin(), rec.inputs.end());
    allowed.insert(rec.made.begin(), rec.made.end());
    for (size_t k = 0; k < st.slots.size(); ++k) {
      if (!st.slots[k].leaves) continue;
      const exec::Env& env = env_of(st.slots[k].program);
      auto it = env.values.find(st.slots[k].name);
      if (it == env.values.end() || !only_atoms(it->second, allowed)) return;  // not reusable
      rec.outputs.emplace_back(k, it->second);
    }
    if (texts_ && texts_->wanted.count(st.label)) texts_->text[st.label] = key.text;
    known_.emplace(std::move(key.text), std::move(rec));
  }

  // The stage is the recorded one renamed: its outputs are the recorded outputs renamed, with
  // symbols of its own for those the recorded stage made.
  void reuse(const StageUnits& st, const StageKey& key, const Record& rec) {
    solver::Context::AtomImages to;
    for (size_t i = 0; i < rec.inputs.size(); ++i) to[rec.inputs[i]] = {{{key.atoms[i], 1}}};
    for (solver::AtomId a : rec.made) to[a] = {{{atom_of(ctx_.fresh_symbol("stage")), 1}}};
    for (const auto& [slot, t] : rec.outputs) {
      ir::Tensor out = t;
      for (auto& v : out.data) v = ctx_.rename_atoms(v, to);
      env_of(st.slots[slot].program).values[st.slots[slot].name] = std::move(out);
    }
  }

  // f(atom, exponent) for every factor of every term of t's elements (not inside functions).
  template <typename F>
  void for_each_factor(const ir::Tensor& t, F&& f) const {
    for (const auto& v : t.data)
      if (v.is_finite())
        for (size_t i = 0; i < ctx_.poly_term_count(v.poly); ++i)
          for (const auto& [a, e] : ctx_.term(v.poly, i).factors) f(a, e);
  }

  solver::AtomId atom_of(solver::Value symbol) const {
    return ctx_.term(symbol.poly, 0).factors[0].first;
  }

  bool only_atoms(const ir::Tensor& t, const std::set<solver::AtomId>& allowed) const {
    bool only = true;
    for_each_factor(t, [&](solver::AtomId a, const solver::SmallRational&) { only &= allowed.count(a) > 0; });
    return only;
  }

  void rename(ir::Tensor& t) {
    if (general_.empty()) return;
    for (auto& v : t.data) v = ctx_.rename_atoms(v, general_);
  }

  // The atoms the open values hold, spec's and ranks' apart (symbols and indicators of spec
  // inputs are variables already); false where one holds a routing.
  bool open_atoms(std::set<solver::AtomId>& spec_atoms, std::set<solver::AtomId>& rank_atoms) {
    spec_atoms.clear();
    rank_atoms.clear();
    bool routing = false;
    for (const Name& n : open_) {
      const exec::Env& env = env_of(n.first);
      auto it = env.values.find(n.second);
      if (it == env.values.end()) continue;
      for_each_factor(it->second, [&](solver::AtomId a, const solver::SmallRational&) {
        const solver::AtomView av = ctx_.atom(a);
        if (av.fn == solver::Fn::Ind) routing |= ctx_.selection(*av.name) || ctx_.counter(*av.name);
        else if (av.fn != solver::Fn::Symbol) (n.first < 0 ? spec_atoms : rank_atoms).insert(a);
      });
    }
    return !routing;
  }

  // The atoms of `atoms` that the spec's outputs with more than one element hold: the
  // gradients of weights, which a rank sums over its own tokens until a later all-reduce.
  std::set<solver::AtomId> output_atoms(const std::set<solver::AtomId>& atoms) const {
    std::set<solver::AtomId> out;
    for (const Name& n : open_) {
      if (n.first >= 0 || !spec_outputs_.count(n.second)) continue;
      const ir::Tensor& t = spec_env_.values.at(n.second);
      if (t.data.size() < 2) continue;
      for_each_factor(t, [&](solver::AtomId a, const solver::SmallRational&) {
        if (atoms.count(a)) out.insert(a);
      });
    }
    return out;
  }

  // Whether polynomial p holds an atom the ranks hold and the spec does not.
  bool holds_any(solver::PolyId p, const std::set<solver::AtomId>& rank_atoms,
                 const std::set<solver::AtomId>& spec_atoms) const {
    for (size_t i = 0; i < ctx_.poly_term_count(p); ++i)
      for (const auto& f : ctx_.term(p, i).factors)
        if (rank_atoms.count(f.first) && !spec_atoms.count(f.first)) return true;
    return false;
  }

  // Where a stage can end: every atom the rank values leaving it hold, the spec values leaving
  // it hold too. Then both sides go on from the same atoms, and each becomes a symbol, the
  // same on both sides. Where a rank holds an atom of its own (a partial sum, a log-sum-exp
  // the spec wrote another way), the two sides meet only later, through that atom's
  // definition: the stage stays open, and the next one goes on with its atoms as they are (so
  // it is not reused: its inputs hold more than symbols). A routing (a selection's or a
  // count's indicator) keeps its meaning only as what it is, so a stage it leaves stays open.
  bool close_stage() {
    std::set<solver::AtomId> spec_atoms, rank_atoms;
    // Unfolded values replace the spec's only where the stage then closes: a stage left open
    // keeps its forms as built, so open stages in a row (a wrong plan) never unfold further.
    std::map<std::string, ir::Tensor> saved;
    auto restore = [&] {
      for (auto& [name, t] : saved) spec_env_.values[name] = std::move(t);
      return false;
    };
    for (int round = 0;; ++round) {
      if (!open_atoms(spec_atoms, rank_atoms)) return restore();
      // A rank value that sums what the spec cut (a weight's gradient over the rank's tokens,
      // before the data-parallel all-reduce) holds the atoms of the cut's body: the spec's
      // value is then passed on unfolded, its terms over the same atoms (an exact rewrite).
      std::set<solver::AtomId> unfold;
      for (solver::AtomId d : output_atoms(spec_atoms))
        if (ctx_.atom(d).fn == solver::Fn::Def && holds_any(ctx_.atom(d).args[0], rank_atoms, spec_atoms))
          unfold.insert(d);
      if (unfold.empty() || round == limits::kStageUnfoldRounds) break;
      for (const Name& n : open_) {
        if (n.first >= 0 || !spec_outputs_.count(n.second)) continue;
        ir::Tensor& t = spec_env_.values.at(n.second);
        saved.try_emplace(n.second, t);
        for (auto& v : t.data) {
          std::optional<solver::Value> x = ctx_.unfold(v, unfold, limits::kStagedBudget);
          if (!x) return restore();
          v = *x;
        }
      }
    }
    for (solver::AtomId a : rank_atoms)
      if (!spec_atoms.count(a)) return restore();
    // A cut the spec passes on, c * m * def(p), becomes s: def(p) is s / (c m), so the value
    // is one symbol whatever constant and factors it gathered layer after layer, and the next
    // stage's inputs read alike at every depth. The constant goes into the image only where
    // the definition's powers are integers (powers of a rational stay rational). Other atoms
    // become symbols of their own.
    std::set<solver::AtomId> fractional;
    for (const Name& n : open_) {
      const exec::Env& env = env_of(n.first);
      auto it = env.values.find(n.second);
      if (it == env.values.end()) continue;
      for_each_factor(it->second, [&](solver::AtomId a, const solver::SmallRational& e) {
        if (e.to_rational().get_den() != 1) fractional.insert(a);
      });
    }
    for (const Name& n : open_) {
      if (n.first >= 0) continue;
      for (const auto& v : spec_env_.values.at(n.second).data)
        if (v.is_finite() && ctx_.poly_term_count(v.poly) == 1)
          name_cut(ctx_.term(v.poly, 0), fractional);
    }
    for (solver::AtomId a : spec_atoms)
      if (!general_.count(a)) general_[a] = {{{symbol_made(), 1}}};
    for (const Name& n : open_) {
      exec::Env& env = env_of(n.first);
      if (auto it = env.values.find(n.second); it != env.values.end()) rename(it->second);
    }
    open_.clear();
    // Values settled here (their obligations proven, no later stage reads them) take symbols
    // for their atoms too, the same ones where they share them: a stage reusing this one gets
    // them renamed, values of its own.
    for (const Name& n : settled_) {
      exec::Env& env = env_of(n.first);
      auto it = env.values.find(n.second);
      if (it == env.values.end()) continue;
      for_each_factor(it->second, [&](solver::AtomId a, const solver::SmallRational&) {
        const solver::Fn fn = ctx_.atom(a).fn;
        if (fn != solver::Fn::Symbol && fn != solver::Fn::Ind && !general_.count(a))
          general_[a] = {{{symbol_made(), 1}}};
      });
      rename(it->second);
    }
    return true;
  }

  solver::AtomId symbol_made() {
    const solver::AtomId s = atom_of(ctx_.fresh_symbol("stage"));
    made_.push_back(s);
    return s;
  }

  // c * m * def(p) with one definition: def(p) -> s * (c m)^-1, the atoms of m made symbols. A
  // substitution that divides by m holds where m is not 0; forms are rational functions, so
  // equal forms are equal values except where some denominator vanishes, a set of no volume
  // when m's factors are symbols, exponentials, or negative powers (not 0 where defined). A
  // factor that is 0 on a set of volume (relu(x), an indicator) could hide a difference
  // there, so such a cut keeps its atoms, each a symbol of its own.
  void name_cut(const solver::TermView& term, const std::set<solver::AtomId>& fractional) {
    size_t defs = 0;
    solver::AtomId d = 0;
    for (const auto& [a, e] : term.factors) {
      const solver::Fn fn = ctx_.atom(a).fn;
      if (fn == solver::Fn::Def) {
        ++defs;
        d = a;
        if (!(e == 1)) return;
      } else if (fn != solver::Fn::Symbol && fn != solver::Fn::Exp && e.sign() > 0) {
        return;
      }
    }
    if (defs != 1 || general_.count(d)) return;
    std::vector<std::pair<solver::AtomId, solver::SmallRational>> image{{symbol_made(), 1}};
    for (const auto& [a, e] : term.factors) {
      if (a == d) continue;
      if (ctx_.atom(a).fn == solver::Fn::Symbol) {
        image.emplace_back(a, -e);
        continue;
      }
      if (!general_.count(a)) general_[a] = {{{symbol_made(), 1}}};
      for (const auto& [b, f] : general_.at(a).factors) image.emplace_back(b, -(e * f));
    }
    solver::SmallRational c = 1;
    if (!fractional.count(d)) c = term.coefficient->reciprocal();
    general_[d] = {std::move(image), c};
  }

  // The guards of the instance's shortcuts, on the forms this stage built (the form its
  // obligations are proven in: every atom a free variable, nothing unfolded).
  void guard(const StageUnits& st) {
    if (!guards_.count_guard) return;
    const ProofForm& built = form_;
    exec::LinkedPlan mine;
    for (size_t s : st.steps) mine.steps.push_back(linked_.steps[s]);
    if (auto where = counted_replica_sum(ctx_, plan_, mine, envs_, guards_.rank_axes, built))
      throw NotApplicable("a sum over ranks counts them: " + *where);
    if (guards_.totals) {  // the stage's own sums
      std::vector<std::pair<int64_t, size_t>> nodes;
      for (size_t s : st.steps)
        if (linked_.steps[s].kind == exec::Step::Kind::Node)
          for (const auto& m : linked_.steps[s].members) nodes.emplace_back(m.rank, m.node_index);
      std::sort(nodes.begin(), nodes.end());
      if (auto where = counted_micro_batch_sum(ctx_, plan_, envs_, *guards_.totals, guards_.bodies,
                                               built, &nodes))
        throw NotApplicable("a sum over micro-batches counts them: " + *where);
    }
    if (guards_.sum_sites) {
      std::vector<reduce::SumSite> sites;
      for (const StageSlot& s : st.slots)
        if (auto it = sites_.find({s.program, s.name}); it != sites_.end())
          for (size_t k : it->second) sites.push_back((*guards_.sum_sites)[k]);
      if (!sites.empty())
        if (auto counted = confirm_sums(ctx_, sites, spec_, spec_env_, plan_, envs_, built, &sum_producers_))
          throw NotApplicable("a sum along a shrunk axis counts it: " + counted->where);
    }
  }

  // The obligations whose two sides are all computed by now, proven at the end of the stage
  // that completes them, before its atoms become symbols: the stage's cuts may still be
  // unfolded to meet them (Context::equal_unfolding, as a staged run does). A proven pair is
  // then given one form on both sides (the rank value, or the last addend of a partial set,
  // takes the spec's form, minus the other addends): the same value, proven so, and the
  // obligation at the end compares equal forms. A stage with this text elsewhere gives its
  // outputs those forms renamed, which are equal values there too.
  // A stage reused completes the obligations of the stage it copies (its text holds their
  // bindings), compared as its renamed forms, which that stage gave one form on both sides;
  // their guards judged that stage's forms as built, the same up to renaming.
  void decide_obligations(bool reused) {
    for (auto it = unresolved_.begin(); it != unresolved_.end();) {
      auto whole = spec_env_.values.find(it->first);
      if (whole == spec_env_.values.end()) {
        ++it;
        continue;
      }
      std::map<std::tuple<std::vector<int64_t>, std::vector<int64_t>, std::string>, size_t> sets;
      for (const ir::Binding* b : it->second) {
        const ir::Region region = ir::resolve_region(*b, plan_.mesh, whole->second.shape);
        if (!region.partial) {
          waiting_.push_back({b->spec, region, {b}});
          continue;
        }
        auto [at, fresh] = sets.try_emplace({region.start, region.end, region.set_key}, waiting_.size());
        if (fresh) waiting_.push_back({b->spec, region, {}});
        waiting_[at->second].members.push_back(b);
      }
      it = unresolved_.erase(it);
    }
    std::vector<Obligation> later;
    for (Obligation& ob : waiting_) {
      bool ready = true;
      for (const ir::Binding* b : ob.members) {
        auto v = envs_[size_t(b->rank)].values.find(b->value);
        // A value of the wrong shape is the report's to name (build_obligations, at the end).
        ready &= v != envs_[size_t(b->rank)].values.end() &&
                 v->second.shape == region_shape(ob.region);
      }
      if (!ready) {
        later.push_back(std::move(ob));
        continue;
      }
      prove_obligation(ob, reused);
      settle(ob);
    }
    waiting_ = std::move(later);
  }

  void prove_obligation(const Obligation& ob, bool reused) {
    const ir::Tensor& whole = spec_env_.values.at(ob.spec);
    const int64_t n = ir::element_count(region_shape(ob.region));
    for (int64_t i = 0; i < n; ++i) {
      const solver::Value want = whole.data[size_t(spec_offset(whole.shape, ob.region, i))];
      const solver::Value got = plan_value(ctx_, ob, envs_, i);
      if (want == got) continue;
      // A point that tells the forms apart is no refutation here (symbols may stand for values
      // their atoms never take), but meeting forms that differ would unfold to the budget: the
      // runs this one leaves the plan to refute it.
      if (search_.refutes(want, got, limits::kWitnessFirstTries) ||
          !ctx_.equal_unfolding(want, got, limits::kStagedBudget, 256, &form_.unfolded))
        throw NotApplicable("'" + ob.spec + "' does not meet in stage form");
    }
    if (guards_.count_guard && ob.members.size() > 1 && !reused)
      if (auto where = counted_partial_sum(ctx_, plan_, {ob}, envs_, guards_.rank_axes, form_))
        throw NotApplicable("a partial set counts its ranks: " + *where);
    const ir::Binding* last = ob.members.back();
    ir::Tensor& mine = envs_[size_t(last->rank)].values.at(last->value);
    for (int64_t i = 0; i < n; ++i) {
      solver::Value v = whole.data[size_t(spec_offset(whole.shape, ob.region, i))];
      for (size_t k = 0; k + 1 < ob.members.size(); ++k)
        v = ctx_.sub(v, envs_[size_t(ob.members[k]->rank)].values.at(ob.members[k]->value).data[size_t(i)]);
      mine.data[size_t(i)] = v;
    }
  }

  // A proven obligation's values that no later stage reads have done their part: only the
  // report at the end reads them, so their atoms keep no stage open.
  void settle(const Obligation& ob) {
    std::set<Name> done;
    auto unread = [&](const Name& n) {
      auto it = last_read_.find(n);
      return it == last_read_.end() || it->second <= current_;
    };
    if (unread({-1, ob.spec})) done.insert({-1, ob.spec});
    for (const ir::Binding* b : ob.members)
      if (unread({b->rank, b->value})) done.insert({b->rank, b->value});
    std::erase_if(open_, [&](const Name& n) { return done.count(n) > 0; });
    settled_.insert(settled_.end(), done.begin(), done.end());
  }

  // The obligations at the end: every pair the same form, and the guards on sums over ranks
  // of outputs bound as partial sets.
  bool conclude(std::string& why_not) {
    // Declared shapes hold for every value a stage computed (one reused has the declarations
    // and the shapes of the stage it copies: both are in its text).
    auto declared = [&](int64_t program, const ir::Graph& g) {
      ir::check_declared_shapes(g, [&](const std::string& name) -> std::optional<ir::Shape> {
        const auto& known = shapes_[program + 1];
        if (auto it = known.find(name); it != known.end()) return it->second;
        const exec::Env& env = env_of(program);
        if (auto it = env.values.find(name); it != env.values.end()) return it->second.shape;
        return std::nullopt;
      });
    };
    declared(-1, spec_);
    for (int64_t r = 0; r < plan_.world_size; ++r) declared(r, plan_.program_of(r));
    auto obs = build_obligations(spec_, plan_, bound_, spec_env_, envs_, res_.warnings);
    // Every obligation was proven by the stage that completed it.
    if (!unresolved_.empty() || !waiting_.empty()) {
      why_not = "an obligation no stage completed";
      return false;
    }
    for (const Obligation& ob : obs)
      res_.stats.elements_compared += ir::element_count(region_shape(ob.region));
    if (ctx_.count_over_rows() && guards_.smaller) {
      why_not = "a count over rows";
      return false;
    }
    res_.verdict = Verdict::Equivalent;
    res_.stats.max_terms = 0;
    auto scan = [&](const exec::Env& env) {
      for (const auto& [name, t] : env.values)
        for (const auto& v : t.data)
          res_.stats.max_terms = std::max(res_.stats.max_terms, int64_t(ctx_.term_count(v)));
    };
    scan(spec_env_);
    for (const auto& env : envs_) scan(env);
    res_.stats.atoms = int64_t(ctx_.atom_count());
    res_.stats.polynomials = int64_t(ctx_.poly_count());
    res_.stats.staged = true;
    return true;
  }

  CheckResult& res_;
  const CheckOptions& options_;
  const ir::Graph& spec_;
  const ir::Plan& plan_;
  const exec::LinkedPlan& linked_;
  const BoundPlan& bound_;
  const exec::RunLimits& limits_;
  const StageGuards& guards_;
  StageTexts* texts_;
  solver::Context ctx_;
  StageCuts cuts_;
  WitnessSearch search_;
  exec::Env spec_env_;
  std::vector<exec::Env> envs_;
  std::map<Name, std::string> marks_;
  std::map<Name, std::vector<size_t>> sites_;  // sum sites by their output
  std::map<Name, std::vector<const ir::Binding*>> bound_outputs_;  // stage_key.h
  SumProducers sum_producers_;
  solver::Context::AtomImages general_;  // atom -> the symbols standing for it
  std::vector<solver::AtomId> made_;
  std::vector<Name> open_;
  std::vector<Name> settled_;  // values the current stage's proven obligations settled
  std::vector<std::map<std::string, ir::Shape>> shapes_;  // computed shapes by program + 1
  std::vector<std::vector<Name>> drop_after_;  // by stage
  std::map<Name, size_t> last_read_;            // the last stage reading a value
  size_t current_ = 0;                          // the stage being proven
  std::set<std::string> spec_outputs_;  // values that left stages not yet closed
  ProofForm form_;  // what the current stage's comparisons unfolded
  std::map<std::string, std::vector<const ir::Binding*>> unresolved_;  // by spec output
  std::vector<Obligation> waiting_;
  std::unordered_map<std::string, Record> known_;
};

}  // namespace

bool prove_by_stages(CheckResult& res, const CheckOptions& options, const ir::Graph& spec,
                     const ir::Plan& plan, const exec::LinkedPlan& linked,
                     const BoundPlan& bound, const exec::RunLimits& limits,
                     const StageGuards& guards, StageCounts& counts, std::string& why_not,
                     StageTexts* texts) {
  return StageRun(res, options, spec, plan, linked, bound, limits, guards, texts).run(counts, why_not);
}

std::map<std::pair<int64_t, std::string>, std::string> guard_marks(const ir::Plan& plan,
                                                                   const StageGuards& guards) {
  std::map<std::pair<int64_t, std::string>, std::string> marks;
  if (guards.sum_sites)
    for (const reduce::SumSite& s : *guards.sum_sites)
      marks[{s.rank, s.output}] += "s" + std::to_string(s.input) + "." + std::to_string(s.axis) +
                                   "." + std::to_string(s.full) + "." + std::to_string(s.other) +
                                   "." + std::to_string(s.other_axis);
  if (guards.totals)
    for (int64_t r = 0; r < plan.world_size; ++r) {
      const size_t p = plan.rank_program[size_t(r)];
      if (p < guards.totals->size())
        for (const auto& o : (*guards.totals)[p]) marks[{r, o}] += "t";
    }
  return marks;
}

}  // namespace onnx_tv::check
