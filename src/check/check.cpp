#include "check/check.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <variant>

#include "check/bindings.h"
#include "check/counted_replicas.h"
#include "check/counted_sums.h"
#include "check/failure_report.h"
#include "check/folded_run.h"
#include "check/full_size.h"
#include "check/instance.h"
#include "check/integer_inputs.h"
#include "check/obligations.h"
#include "check/prove_grid.h"
#include "check/stage_cuts.h"
#include "check/stage_run.h"
#include "check/witness.h"
#include "common/errors.h"
#include "common/limits.h"
#include "common/memory_limit.h"
#include "exec/executor.h"
#include "exec/linker.h"
#include "frontend/model_loader.h"
#include "frontend/plan.h"
#include "ir/tensor_util.h"
#include "ir/well_formed.h"
#include "reduce/micro_batches.h"
#include "reduce/reduce.h"
#include "solver/boolean_residue.h"

namespace onnx_tv::check {

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Equivalent: return "EQUIVALENT";
    case Verdict::NotEquivalent: return "NOT EQUIVALENT";
    case Verdict::InputError: return "INPUT ERROR";
    case Verdict::Unknown: return "UNKNOWN";
  }
  return "?";
}

void report(const CheckOptions& o, const std::string& phase, int64_t done, int64_t total) {
  if (o.on_progress) o.on_progress(Progress{phase, done, total});
}

exec::RunLimits run_limits(const CheckOptions& o) {
  exec::RunLimits l;
  l.memory_bytes = memory_limit_bytes(o);
  l.node_elements = o.max_elements;
  l.trace = o.trace;
  return l;
}

namespace {

using exec::Env;
// Per program, the outputs of the sums over the micro-batches kept (reduce/micro_batches.h),
// and how many bodies each adds.
struct Totals {
  std::vector<std::vector<std::string>> outputs;
  size_t bodies = 0;
  const std::vector<reduce::SumSite>* sum_sites = nullptr;  // of the reduced instance
};

// Largest polynomial an expansion of definitions may build before giving up (UNKNOWN).
constexpr size_t kExpansionBudget = limits::kExpansionBudget;
// A staged run gives up (and the whole-program runs take over) when a value grows past
// kStagedMaxTerms, a sign that the sides stopped meeting at cuts, or when an obligation is
// not met by unfolding within kStagedBudget terms.
constexpr size_t kStagedMaxTerms = limits::kStagedMaxTerms;
constexpr size_t kStagedBudget = limits::kStagedBudget;

// Whether a and b are the same polynomial once every definition is expanded (false past the
// budget).
struct ValuePairLess {
  bool operator()(const std::pair<solver::Value, solver::Value>& x,
                  const std::pair<solver::Value, solver::Value>& y) const {
    auto key = [](const std::pair<solver::Value, solver::Value>& p) {
      return std::make_tuple(p.first.poly, p.first.inf, p.second.poly, p.second.inf);
    };
    return key(x) < key(y);
  }
};

bool expand_equal(solver::Context& ctx, solver::Value a, solver::Value b) {
  auto x = ctx.expand_definitions(a, kExpansionBudget);
  if (!x) return false;
  auto y = ctx.expand_definitions(b, kExpansionBudget);
  return y && *x == *y;
}

void fill_stats(CheckResult& res, const solver::Context& ctx, const exec::Env& spec_env,
                const std::vector<exec::Env>& envs) {
  int64_t most = 0;
  auto scan = [&](const exec::Env& env) {
    for (const auto& [name, t] : env.values)
      for (const auto& v : t.data) most = std::max<int64_t>(most, ctx.term_count(v));
  };
  scan(spec_env);
  for (const auto& e : envs) scan(e);
  res.stats.max_terms = most;
  res.stats.atoms = int64_t(ctx.atom_count());
  res.stats.polynomials = int64_t(ctx.poly_count());
}

int64_t input_elements(const ir::Graph& g) {
  int64_t n = 0;
  for (const auto& vi : g.inputs)
    if (auto s = static_shape(g, vi.name)) n += ir::element_count(*s);
  for (const auto& [name, c] : g.initializers) n += ir::element_count(c.shape);
  return n;
}

void copy_reduction(Reduction& out, const reduce::Reduced& r) {
  out.applied = true;
  out.full_elements = r.full_elements;
  out.reduced_elements = r.reduced_elements;
  out.kept_full = r.kept_full;
  out.dims = r.dims;
  out.other_dims = r.other_dims;
}

// What reduce_or_refuse decided.
enum class Instance { Ready, Refused, Again };

// Replaces the spec and the plan (the ranks `fewer` kept) by their reduced instance when one
// can be built soundly. Refused: the result is set to UNKNOWN, as the program left to prove
// is out of reach. Again: an axis chosen to shrink cannot (its reason is added to `kept`),
// or the plan with fewer ranks cannot be reduced at all; choose again.
Instance reduce_or_refuse(CheckResult& res, const CheckOptions& options, ir::Graph& spec,
                          const reduce::FewerRanks& fewer, ir::Plan& plan,
                          exec::LinkedPlan& linked, bool& relink, BoundPlan& bound,
                          reduce::KeptWhole& kept, std::vector<reduce::SumSite>& sum_sites) {
  res.reduction.requested = options.reduce;
  if (options.reduce && kept.shape_reduction) {
    res.reduction.not_applied = *kept.shape_reduction;
  } else if (options.reduce) {
    report(options, "reduce", 0, 1);
    reduce::Outcome o =
        reduce::reduce_plan(spec, fewer, linked, kept, run_limits(options).memory_bytes);
    report(options, "reduce", 1, 1);
    if (o.keep_ranks) {
      if (o.keep_ranks->micro_batches) kept.micro_batches = o.keep_ranks->why;
      else kept.mesh_axes[o.keep_ranks->axis] = o.keep_ranks->why;
      return Instance::Again;
    }
    if (!o.reduced && (!fewer.axes.empty() || fewer.micro_batch_count)) {
      // the kept ranks or bodies alone do not cover the spec
      const std::string why = "shape reduction does not apply: " + o.why;
      if (!fewer.axes.empty()) kept.every_rank = why;
      if (fewer.micro_batch_count) kept.micro_batches = why;
      return Instance::Again;
    }
    if (o.reduced) {
      copy_reduction(res.reduction, *o.reduced);
      res.reduction.fewer_ranks = fewer.notes;
      if (fewer.micro_batch_count)
        res.reduction.fewer_micro_batches =
            std::to_string(fewer.micro_batches) + " per program -> 2 and 3";
      res.reduction.fewer_rank_axes = fewer.axes;
      if (!fewer.axes.empty()) res.reduction.rank_origin = fewer.original;
      res.reduction.kept_full.insert(res.reduction.kept_full.begin(), fewer.kept.begin(),
                                     fewer.kept.end());
      if (o.reduced->reduced_elements > options.max_elements) {
        // The first reasons only (a real plan has thousands, one per rank and micro-batch);
        // the report's reduction section and --json list them all.
        std::string why;
        const size_t shown = std::min<size_t>(res.reduction.kept_full.size(), 10);
        for (size_t k = 0; k < shown; ++k) why += "\n  " + res.reduction.kept_full[k];
        if (shown < res.reduction.kept_full.size())
          why += "\n  ... (" + std::to_string(res.reduction.kept_full.size()) +
                 " reasons in all; --json lists them)";
        res.verdict = Verdict::Unknown;
        res.message = "the reduced instance still holds " +
                      std::to_string(o.reduced->reduced_elements) +
                      " tensor elements, beyond the limit of " + std::to_string(options.max_elements) +
                      " (--max-elements)" +
                      (why.empty() ? "" : "; these dimensions keep their full size:" + why);
        return Instance::Refused;
      }
      sum_sites = std::move(o.reduced->sum_sites);
      spec = std::move(o.reduced->spec);
      plan = std::move(o.reduced->plan);
      linked = exec::LinkedPlan();  // linked when needed: a folded proof links less (prove_all)
      relink = true;
      bound = resolve_bindings(spec, plan, run_limits(options).memory_bytes);
      return Instance::Ready;
    }
    res.reduction.not_applied = o.why;
  }
  int64_t n = input_elements(spec);
  if (n > options.max_elements / limits::kFullSizeInputShare) {
    res.verdict = Verdict::Unknown;
    res.message = "the spec's inputs hold " + std::to_string(n) +
                  " elements, too many to check at full size" +
                  (options.reduce ? ", and shape reduction does not apply: " + res.reduction.not_applied
                                  : " (shape reduction is off)");
    return Instance::Refused;
  }
  return Instance::Ready;
}


// Why a run's verdict cannot stand for the full size, and what the next try keeps whole.
// A value counting routing over several rows was read as an integer on an instance with fewer
// tokens, ranks or micro-batches: the whole check runs at full size.
struct CountedRouting {
  std::string what;
};

// A value that differs, or a comparison left undecided, as a function of positions along a
// dimension the instance shrinks (solver/positions.cpp): the instance keeps too few positions
// to tell, and the check runs at full size, where positions are numbers.
struct PositionsUndecided {
  std::string what;
};

using Retry = std::variant<CountedReplicas, CountedSum, CountedRouting, PositionsUndecided>;

// Whether the instance is smaller than the plan: fewer tokens, ranks or micro-batches.
bool smaller_instance(const CheckResult& res) {
  return res.reduction.applied && (res.reduction.reduced_elements < res.reduction.full_elements ||
                                   !res.reduction.fewer_ranks.empty() ||
                                   !res.reduction.fewer_micro_batches.empty());
}

// Called in a handler of `e`: on an instance smaller than the plan, the retry at full size;
// at full size the UNKNOWN it is.
PositionsUndecided positions_retry(const CheckResult& res, const UndecidedPositions& e) {
  if (!smaller_instance(res)) throw;
  return PositionsUndecided{e.message()};
}

// One exact run: both sides symbolically, obligations compared, a failure explained. A staged
// run (check/stage_cuts.h) compares each obligation as a whole-program run does, with
// unfolding first; its UNKNOWN is left to the whole-program runs (see run()).
std::optional<Retry> prove_plan(CheckResult& res, const CheckOptions& options,
                                const ir::Graph& spec, const ir::Plan& plan,
                                const exec::LinkedPlan& linked, const BoundPlan& bound,
                                const Totals& totals, size_t define_above, bool staged) {
  solver::Context ctx;
  ctx.set_define_above(define_above);
  exec::Env spec_env = spec_inputs(ctx, spec, bound);
  note_ranges(res.warnings, spec, spec_env.values);  // symbolic, not plain constants
  StageCuts cuts(ctx, spec, kStagedMaxTerms);
  exec::TensorHook spec_hook, rank_hook;
  if (staged) {
    spec_hook = [&](const std::string& name, ir::Tensor& t) { cuts.on_spec_tensor(name, t); };
    rank_hook = [&](const std::string& name, ir::Tensor& t) { cuts.on_rank_tensor(name, t); };
  }
  const std::string tag = staged ? " (stage-wise)" : "";
  const exec::RunLimits limits = run_limits(options);
  std::vector<exec::Env> envs;
  try {
    exec::run_graph(
        ctx, spec, spec_env, limits,
        [&](int64_t d, int64_t t) { report(options, "spec" + tag, d, t); }, spec_hook);
    exec::check_declared_shapes(spec, spec_env);
    envs = rank_inputs(ctx, plan, bound, spec_env);
    exec::run_plan(
        ctx, plan, linked, envs, limits,
        [&](int64_t d, int64_t t) { report(options, "plan" + tag, d, t); }, rank_hook);
  } catch (const UndecidedPositions& e) {
    return positions_retry(res, e);
  }
  for (int64_t r = 0; r < plan.world_size; ++r)
    exec::check_declared_shapes(plan.program_of(r), envs[r]);
  auto obs = build_obligations(spec, plan, bound, spec_env, envs, res.warnings);
  report(options, "compare", 0, 1);
  // Different canonical forms: a witness refutes real differences; otherwise the forms may
  // differ only in how products were kept unexpanded. A whole-program run expands them; a
  // staged run unfolds only the stages between where the two sides last met, as cut forms
  // expanded whole blow up (powers of cut atoms) where a whole-program form does not. Either
  // leaves a pair it cannot meet within its budget undecided: the run can then no longer
  // conclude EQUIVALENT, and the pair is explained only if no other is refuted. Once one is
  // undecided, meeting the rest is wasted work, so the rest are only tried for a witness.
  WitnessSearch search(ctx, options.witness_seed);
  solver::BooleanResidue residue(ctx, kExpansionBudget);
  std::map<std::pair<solver::Value, solver::Value>, std::string, ValuePairLess> routing_notes;
  bool undecided = false;
  // What the comparisons unfolded: the guards below judge counts in the same form.
  ProofForm form;
  auto compare_values = [&](solver::Value a, solver::Value b) {
    check_memory(limits.memory_bytes, "comparing the outputs");
    // Definitions evaluate to their bodies, so a witness refutes cut forms as it refutes
    // expanded ones. A few points first: meeting a real difference runs to the budget, and a
    // wrong plan nearly always differs at the first. The forms are met before the rest: each
    // point of a pair that is equal evaluates every definition the pair reaches, most of a
    // deep plan's comparing time. Equal pairs are never refuted, so the order changes only
    // the time.
    if (search.refutes(a, b, limits::kWitnessFirstTries)) return Comparison::Refuted;
    if (!undecided && (staged ? ctx.equal_unfolding(a, b, kStagedBudget, 256, &form.unfolded)
                              : expand_equal(ctx, a, b))) {
      form.expanded |= !staged && a != b;
      return Comparison::Same;
    }
    if (search.refutes(a, b, limits::kWitnessQuickTries)) return Comparison::Refuted;
    if (!undecided) {
      // Forms that agree only where the routing axioms hold (solver/boolean_residue.h).
      std::string residue_why;
      if (residue.equal(a, b, &residue_why)) {
        form.expanded = true;
        return Comparison::Same;
      }
      if (!residue_why.empty()) routing_notes[{a, b}] = residue_why;
      undecided = true;
    }
    return Comparison::Undecided;
  };
  // With a trace (ONNX_TV_TRACE), every comparison of different forms too: its seconds and
  // outcome, where a check spends its time after running the programs.
  auto compare = [&](solver::Value a, solver::Value b, const std::string& element) {
    if (!options.trace) return compare_values(a, b);
    const auto t0 = std::chrono::steady_clock::now();
    const Comparison c = compare_values(a, b);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    options.trace("compare" + tag,
                  element + (c == Comparison::Same      ? ": same"
                             : c == Comparison::Refuted ? ": refuted"
                                                        : ": undecided"),
                  s, std::max(ctx.term_count(a), ctx.term_count(b)));
    return c;
  };
  auto failed =
      failures(ctx, obs, spec_env, envs, compare, res.stats.elements_compared, form.cases);
  // A count over several rows (a token's place among the tokens routed to an expert) has the
  // values the instance's rows give it: with fewer tokens a buffer never fills. Read as an
  // integer (an index, a comparison, a cast, a division), it stands for nothing at full size.
  // Reduction keeps the counted axes it can see whole (reduce/sizes_as_data.cpp); this catches
  // the rest, whatever path the count took.
  if (const solver::Value* c = ctx.count_over_rows(); c && smaller_instance(res))
    return CountedRouting{ctx.to_string(*c)};
  // An undecided pair the routing axioms did not settle says why (the routing CaDiCaL found).
  for (Failure& f : failed)
    if (auto it = routing_notes.find({f.spec_value, f.plan_value}); !f.refuted && it != routing_notes.end())
      f.why_undecided += (f.why_undecided.empty() ? "" : "; ") + std::string("routing: ") + it->second;
  report(options, "compare", 1, 1);
  // Values the stage-wise run met at a cut through a flattened sum were proven equal with the
  // flattened definitions unfolded (Context::unfolded_by_cuts).
  form.unfolded.insert(ctx.unfolded_by_cuts().begin(), ctx.unfolded_by_cuts().end());
  // A refutation stands for the full size only where no sum counted either. It proves nothing
  // a count could undo, so its judgement only spares false alarms, and stays cheap: addends are
  // judged as built (unfolding what the refuted pair reaches finds counts that keep real plans'
  // axes whole, out of reach). A count inside max, min or abs atoms (max(x+1, 1) +
  // min(x+1, 1) - x is 2) shows only in cases: where the refuted pair holds such atoms, addends
  // that hold them count.
  for (const Failure& f : failed) {
    if (!f.refuted || !f.spec_value.is_finite() || !f.plan_value.is_finite()) continue;
    form = ProofForm();
    form.cases = ctx.has_extreme(f.spec_value) || ctx.has_extreme(f.plan_value);
    break;  // the first refuted pair's: the verdict's
  }
  // Sums over ranks and micro-batches that count them: the instance with fewer of them then
  // stands for nothing, either way (judged after comparing, in the form it proved equal in).
  if (auto where = options.count_guard ? counted_replica_sum(ctx, plan, linked, envs,
                                                                    res.reduction.fewer_rank_axes, form)
                                        : std::nullopt)
    return CountedReplicas{*where};
  if (auto where = options.count_guard ? counted_micro_batch_sum(
                                              ctx, plan, envs, totals.outputs, totals.bodies, form)
                                        : std::nullopt)
    return CountedReplicas{*where, true};
  if (auto where = options.count_guard ? counted_partial_sum(ctx, plan, obs, envs,
                                                                    res.reduction.fewer_rank_axes, form)
                                        : std::nullopt)
    return CountedReplicas{*where};
  fill_stats(res, ctx, spec_env, envs);
  res.stats.staged = staged;
  const solver::ResidueStats& sat = ctx.residue_stats();  // kernels' queries too
  res.stats.sat_coefficients = sat.proven;
  res.stats.sat_routings = sat.routings;
  res.stats.sat_max_variables = sat.max_variables;
  res.stats.sat_max_clauses = sat.max_clauses;
  res.stats.sat_calls = sat.solver_calls;
  res.stats.sat_seconds = sat.seconds;
  // The instance's verdict, either way, stands for the full size only where no sum along a
  // shrunk axis counted its elements: a count of the instance's size can make a correct plan
  // differ (the spec's softmax(x - x) against the constant 1/n) as well as a wrong one agree.
  if (failed.empty())
    res.verdict = Verdict::Equivalent;
  else
    report_failures(res, ctx, search, spec, spec_env, plan, linked, envs, obs, failed);
  if (res.verdict == Verdict::Unknown && res.mismatch && smaller_instance(res))
    for (const Failure& f : failed)
      if (!f.refuted && (ctx.has_position(f.spec_value) || ctx.has_position(f.plan_value)))
        return PositionsUndecided{"spec output '" + res.mismatch->spec_output + "' element " +
                                  ir::index_string(res.mismatch->element) +
                                  " differs as a function of positions"};
  if (!totals.sum_sites) return std::nullopt;
  auto counted = confirm_sums(ctx, *totals.sum_sites, spec, spec_env, plan, envs, form);
  if (!counted) return std::nullopt;
  counted->refuted = refutation_summary(res);  // "" for an EQUIVALENT
  return *counted;
}

// Where products are kept as definitions decides whether equal values get equal canonical
// forms without expansion; when a run is left with forms it could neither match nor refute,
// another threshold often matches them. Every run is exact, so trying several is sound.
constexpr size_t kDefineThresholds[] = {solver::Context::kDefineAbove, 64, 16};

// The staged run, then the whole-program runs, on the instance reduce_or_refuse left; the first
// run that finds its verdict cannot stand says why.
// `linked` links `plan` unless `relink`: then it is linked here, once a folded proof (which
// links a smaller plan) has not concluded.
std::optional<Retry> prove_all(CheckResult& res, const CheckOptions& options,
                               const ir::Graph& spec, const ir::Plan& plan,
                               exec::LinkedPlan& linked, bool relink, const BoundPlan& bound,
                               const Totals& totals) {
  auto link = [&] {
    if (relink) linked = exec::link_plan(plan, run_limits(options).memory_bytes);
    relink = false;
    res.stats.collectives = linked.collectives;
  };
  res.stats.ranks = plan.world_size;
  res.stats.spec_nodes = int64_t(spec.nodes.size());
  res.stats.bindings = int64_t(plan.bindings.size());
  for (int64_t r = 0; r < plan.world_size; ++r)
    res.stats.rank_nodes += int64_t(plan.program_of(r).nodes.size());

  // Each distinct stage once (check/stage_run.h): concludes EQUIVALENT or leaves the plan to
  // the runs below.
  if (options.stages && options.reuse) {
    CheckResult attempt = res;
    StageGuards guards;
    guards.count_guard = options.count_guard;
    guards.rank_axes = res.reduction.fewer_rank_axes;
    guards.totals = &totals.outputs;
    guards.bodies = totals.bodies;
    guards.sum_sites = totals.sum_sites;
    guards.smaller = smaller_instance(res);
    std::string why_not;
    try {
      if (options.fold &&
          prove_folded(attempt, options, spec, plan, bound, run_limits(options), guards, why_not)) {
        res = std::move(attempt);
        return std::nullopt;
      }
      if (options.fold && options.trace) options.trace("depth fold", "not used: " + why_not, 0, 0);
      link();
      attempt = res;
      StageCounts counts;
      if (prove_by_stages(attempt, options, spec, plan, linked, bound, run_limits(options), guards,
                          counts, why_not)) {
        attempt.stats.stages = counts.stages;
        attempt.stats.stages_proven = counts.distinct;
        attempt.stats.stages_reused = counts.reused;
        res = std::move(attempt);
        return std::nullopt;
      }
    } catch (const UndecidedPositions& e) {
      return positions_retry(res, e);
    }
    if (options.trace) options.trace("stage obligations", "not concluded: " + why_not, 0, 0);
  }
  link();
  if (options.stages) {  // scales with depth; an UNKNOWN is left to the whole-program runs
    CheckResult attempt = res;
    std::optional<Retry> retry;
    try {
      retry = prove_plan(attempt, options, spec, plan, linked, bound, totals,
                         kDefineThresholds[0], true);
    } catch (const NotApplicable&) {  // the staged run grew past its limit (stage_cuts.h)
      attempt.verdict = Verdict::Unknown;
    }
    if (retry) return retry;
    if (attempt.verdict == Verdict::Equivalent || attempt.verdict == Verdict::NotEquivalent) {
      res = std::move(attempt);
      return std::nullopt;
    }
  }
  for (size_t k = 0; k < std::size(kDefineThresholds); ++k) {
    CheckResult attempt = res;
    if (auto retry = prove_plan(attempt, options, spec, plan, linked, bound, totals,
                                kDefineThresholds[k], false))
      return retry;
    const bool inconclusive = attempt.verdict == Verdict::Unknown && attempt.mismatch;
    if (!inconclusive || k + 1 == std::size(kDefineThresholds)) {
      res = std::move(attempt);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<reduce::MicroBatchCut> cut_to_count(const ir::Plan& plan,
                                                  const exec::LinkedPlan& linked,
                                                  const reduce::MicroBatches& mb, int64_t chosen,
                                                  int64_t count) {
  if (mb.count != chosen) return std::nullopt;
  return reduce::cut_micro_batches(plan, linked, mb, count);
}

// Reduces and proves the instance holding the ranks `fewer` kept; `res` gets its result.
Tried try_instance(CheckResult& res, const CheckOptions& options, const ir::Graph& full_spec,
                   const reduce::FewerRanks& fewer, const Known& known,
                   const FullBound& full_bound, reduce::KeptWhole& kept) {
  const bool all = fewer.axes.empty();
  ir::Graph spec = full_spec;
  ir::Plan plan = fewer.plan;
  BoundPlan bound = all && !fewer.micro_batch_count ? full_bound.get() : BoundPlan{};
  Totals totals;
  std::optional<reduce::FewerRanks> cut;  // with fewer micro-batches: the bodies kept
  std::optional<exec::LinkedPlan> own;    // the plan linked here, when not the one known
  if (fewer.micro_batch_count) {
    // Found on this instance's ranks: each instance proves only what it checked. Instances
    // with the same ranks share one plan of every micro-batch, linked once, its bodies found
    // once, and cut to each of their counts the same way (check/made_cuts.h).
    auto make = [&](const std::vector<int64_t>& counts) {
      // The known plan is read, not copied: the cut links its own.
      // Progress between the steps: an instance abandoned meanwhile (prove_grid.cpp) stops
      // at the next.
      std::optional<exec::LinkedPlan> whole_own;
      if (!known.linked) {
        report(options, "link", 0, 1);
        whole_own = exec::link_plan(plan, run_limits(options).memory_bytes);
      }
      const exec::LinkedPlan& whole = known.linked ? *known.linked : *whole_own;
      report(options, "micro-batches", 0, int64_t(counts.size()) + 1);
      const reduce::MicroBatches mb = known.micro_batches ? *known.micro_batches
                                                          : reduce::find_micro_batches(plan, whole);
      MadeCuts::Made made;
      made.why_not = mb.why_not;
      for (size_t k = 0; k < counts.size(); ++k) {
        report(options, "micro-batches", int64_t(k) + 1, int64_t(counts.size()) + 1);
        made.cuts[counts[k]] = cut_to_count(plan, whole, mb, fewer.micro_batches, counts[k]);
      }
      return made;
    };
    std::string why_not;
    std::optional<MadeCuts::Cut> made;
    if (known.cuts)
      made = known.cuts->take(MadeCuts::ranks_of(fewer), fewer.micro_batch_count, make, why_not);
    if (!made) {
      MadeCuts::Made mine = make({fewer.micro_batch_count});
      made = std::move(mine.cuts[fewer.micro_batch_count]);
      why_not = mine.why_not;
    }
    std::optional<reduce::MicroBatchCut> c = std::move(*made);
    if (!c) {
      kept.micro_batches =
          why_not.empty() ? "the bodies kept do not pair as in the full plan" : why_not;
      return Tried::Again;
    }
    cut = fewer;
    cut->plan = plan = std::move(c->plan);
    cut->micro_batch_pieces = std::move(c->piece_dims);
    cut->micro_batch_totals = c->totals;
    own = std::move(c->linked);
    totals = Totals{std::move(c->totals), size_t(fewer.micro_batch_count)};
  }
  // The cut's plan, else the known one (copied only now: reduction rewrites it), else linked.
  exec::LinkedPlan linked = own            ? std::move(*own)
                            : known.linked ? *known.linked
                                           : exec::link_plan(plan, run_limits(options).memory_bytes);
  own.reset();
  std::vector<reduce::SumSite> sum_sites;
  bool relink = false;
  const Instance got = reduce_or_refuse(res, options, spec, cut ? *cut : fewer, plan, linked,
                                        relink, bound, kept, sum_sites);
  if (got == Instance::Again) return Tried::Again;
  if (got == Instance::Refused) return Tried::Done;
  totals.sum_sites = &sum_sites;
  const std::optional<Retry> retry =
      prove_all(res, options, spec, plan, linked, relink, bound, totals);
  if (!retry) return Tried::Done;
  if (const auto* routing = std::get_if<CountedRouting>(&*retry)) {
    const std::string why = "a count of routing over several tokens or positions (" +
                            routing->what.substr(0, 160) +
                            (routing->what.size() > 160 ? " ...)" : ")") +
                            " is read as an integer, which depends on how many there are";
    kept.shape_reduction = kept.every_rank = kept.micro_batches = why;
    res.warnings.push_back("shape reduction not used: " + why);
    return Tried::Again;
  }
  if (const auto* positions = std::get_if<PositionsUndecided>(&*retry)) {
    const std::string why = positions->what.substr(0, 300) +
                            " on a reduced instance, whose few positions along a shrunk dimension "
                            "cannot tell (docs/shape-reduction.md, \"Positions\")";
    kept.shape_reduction = kept.every_rank = kept.micro_batches = why;
    res.warnings.push_back("shape reduction not used: " + why);
    return Tried::Again;
  }
  if (const auto* counted = std::get_if<CountedSum>(&*retry)) {
    const CountedSum& c = *counted;
    // The axis keeps its full size in the next instance; should that one count at the same
    // site (it cannot: a kept axis is not a site), the whole check is at full size.
    std::string why = c.where + " sums, along this axis, addends that hold a common term "
                                "(terms cancelled where inference could not see it; seen on a "
                                "reduced instance), which counts its size";
    if (!c.refuted.empty())
      why += "; that instance differed (" + c.refuted + "), which the count may explain";
    if (kept.counted_sums.count(c.key)) {
      kept.shape_reduction = kept.every_rank = kept.micro_batches = why;
      res.warnings.push_back("shape reduction not used: " + why);
    } else {
      kept.counted_sums[c.key] = why;
    }
    return Tried::Again;
  }
  {
    const CountedReplicas& c = std::get<CountedReplicas>(*retry);
    if (c.micro_batches) {
      kept.micro_batches = c.where + " adds a term that every micro-batch adds, which counts them";
      res.warnings.push_back("fewer micro-batches not used: " + *kept.micro_batches);
      return Tried::Again;
    }
    ONNX_TV_ASSERT(!all, "counted ranks with every rank kept: " + c.where);
    kept.every_rank = c.where + " sums a term that every member adds, which counts the ranks";
    res.warnings.push_back("fewer ranks not used: " + *kept.every_rank);
    return Tried::Again;
  }
}

namespace {

// Micro-batched programs are proven with 2 and 3 bodies (reduce/micro_batches.h) unless an
// earlier try found they cannot be. `linked` links first.plan; what is found is kept for the
// instances whose plan that is.
std::optional<reduce::MicroBatches> choose_micro_batches(
    reduce::FewerRanks& first, const exec::LinkedPlan& linked,
    const reduce::KeptWhole& kept) {
  if (kept.micro_batches) {
    first.kept.push_back("micro-batches keep their full count: " + *kept.micro_batches);
    return std::nullopt;
  }
  reduce::MicroBatches mb = reduce::find_micro_batches(first.plan, linked);
  if (!mb.why_not.empty()) first.kept.push_back("micro-batches keep their full count: " + mb.why_not);
  first.micro_batches = mb.count;
  first.micro_batch_count = mb.count ? 2 : 0;
  return mb;
}

void run_pipeline(CheckResult& res, const std::string& spec_path, const std::string& shards_dir,
                  const CheckOptions& options) {
  report(options, "load", 0, 1);
  // --max-memory holds from the first file read: a plan too large to load ends UNKNOWN
  // naming the file, as one too large to prove names the node.
  const size_t memory = run_limits(options).memory_bytes;
  frontend::LoadOptions load;
  load.memory_bytes = memory;
  const ir::Graph full_spec = frontend::load_model(spec_path, load);
  const ir::Plan full_plan = frontend::load_plan(shards_dir, memory);
  ir::check_well_formed(full_spec);
  for (const auto& g : full_plan.programs) ir::check_well_formed(*g);
  FullBound full_bound(full_spec, full_plan, memory);
  report(options, "load", 1, 1);
  // Mesh axes whose ranks are interchangeable are proven with 2 and with 3 ranks, every
  // combination over the axes (reduce/mesh_axes.h); a plan of thousands of ranks is then never
  // linked whole. Where that choice cannot stand (inference reads a count as a position, a
  // sum counts its ranks: check/counted_replicas.h), the axis keeps its ranks and the check
  // starts again. Each round keeps something more whole (reduce/kept_whole.h), of which there
  // is finitely much: the loop ends.
  reduce::KeptWhole kept;
  std::vector<int64_t> proven;  // instances each process proved, over every choice of ranks
  std::optional<exec::LinkedPlan> full_linked;
  for (;;) {
    const size_t before = kept.measure();
    reduce::FewerRanks first = options.reduce ? reduce::choose_fewer_ranks(full_plan, kept)
                                              : reduce::all_ranks(full_plan);
    if (options.reduce)
      if (auto refused = reduce::refused_before_linking(first)) {
        kept.mesh_axes[refused->axis] = refused->why;
        continue;
      }
    std::optional<exec::LinkedPlan> first_linked;  // first.plan linked, when it has fewer ranks
    if (first.axes.empty() && !full_linked) full_linked = exec::link_plan(full_plan, memory);
    if (!first.axes.empty()) first_linked = exec::link_plan(first.plan, memory);
    std::optional<reduce::MicroBatches> micro;
    if (options.reduce)
      micro = choose_micro_batches(first, first_linked ? *first_linked : *full_linked, kept);
    // Every instance of this grid resolves the bindings of the ranks and bodies it keeps.
    if (!first.axes.empty() || first.micro_batch_count) full_bound.let_go();
    // The instances with the first one's ranks need its plan only cut to their micro-batches:
    // cut now, the plan of every micro-batch is let go before the grid runs.
    MadeCuts cuts(first, options.spread);
    if (first_linked && micro && micro->count) {
      cuts.put(MadeCuts::ranks_of(first),
               {cut_first(first, *first_linked, *micro, options.spread), micro->why_not});
      first_linked.reset();
    }
    const exec::LinkedPlan* linked = first_linked ? &*first_linked
                                     : first.axes.empty() ? &*full_linked
                                                          : nullptr;
    const FullPlan full{full_spec, full_plan, full_bound,
                        Known{linked, micro ? &*micro : nullptr, &cuts}};
    if (auto decided = prove_grid(res, options, full, first, kept, res.warnings, proven)) {
      res = std::move(*decided);
      res.stats.processes = int64_t(proven.size());
      res.stats.process_instances = std::move(proven);
      return;
    }
    ONNX_TV_ASSERT(kept.measure() > before, "a try asked to choose again and kept nothing more");
  }
}

}  // namespace

CheckResult run(const std::string& spec_path, const std::string& shards_dir,
                const CheckOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CheckResult res;
  try {
    run_pipeline(res, spec_path, shards_dir, options);
    if (res.mismatch) name_at_full_size(*res.mismatch, res.reduction);
  } catch (const InternalError& e) {
    throw;  // a bug in onnx-tv: the caller reports it as such
  } catch (const Unsupported& e) {
    res.verdict = Verdict::Unknown;
    res.message = e.message();
  } catch (const InputError& e) {
    res.verdict = Verdict::InputError;
    res.message = e.message();
  } catch (const Error& e) {
    res.verdict = Verdict::InputError;
    res.message = e.message();
  }
  res.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return res;
}

size_t memory_limit_bytes(const CheckOptions& o) {
  return o.max_memory ? o.max_memory : physical_bytes() / 100 * limits::kMemoryPercent;
}

}  // namespace onnx_tv::check
