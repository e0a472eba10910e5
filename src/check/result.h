#pragma once
// What a check concludes, as data: the CLI prints it and writes it as JSON; library users read
// it directly. Nothing here depends on ONNX or the solver.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/limits.h"
#include "reduce/reduced_dim.h"

namespace onnx_tv::check {

// Exit codes of plan-format section 6.
enum class Verdict { Equivalent = 0, NotEquivalent = 1, InputError = 2, Unknown = 3 };

std::string verdict_name(Verdict v);

// An operator named as the exporter named it, with where it lives.
struct NodeRef {
  std::string file;   // "spec.onnx" or "rank3.onnx"
  int64_t rank = -1;  // -1 for the spec
  std::string node;   // the node's name, or its description when unnamed
  std::string op_type;
  std::string output;  // the tensor it produced that diverges
  bool operator==(const NodeRef&) const = default;
};

struct WitnessEntry {
  std::string symbol;  // "x[0,3]" (a spec input element) or a free addend of a partial set
  std::string value;   // an exact rational, "-2" or "1/3"
  // With shape reduction, the spec input element `symbol` stands for at full size ("x[0,9]");
  // "" when not known (a free addend) or not reduced.
  std::string full_symbol;
  bool operator==(const WitnessEntry&) const = default;
};

struct Mismatch {
  std::string spec_output;             // the spec value whose region differs
  std::vector<int64_t> region_start;   // the binding's region in spec coordinates
  std::vector<int64_t> region_end;
  std::vector<int64_t> element;        // first differing element, spec coordinates
  // With shape reduction, region, element and witness are the reduced instance's; this is the
  // element of the full-size spec output that `element` stands for (reduce::full_position),
  // when known.
  std::optional<std::vector<int64_t>> full_element;
  std::string binding;                 // where the failing binding was written
  bool partial = false;                // a partial-sum set (the plan value is the sum)
  std::vector<int64_t> ranks;          // the ranks whose values were compared
  std::string rank_value;              // the rank tensor(s) compared
  std::vector<WitnessEntry> witness;   // values of the inputs the element depends on
  std::string spec_number, plan_number;  // both sides evaluated at the witness
  std::string spec_expr, plan_expr;    // canonical forms (abbreviated)
  std::optional<NodeRef> spec_node;    // first diverging operator on the spec side
  std::optional<NodeRef> rank_node;    // first diverging operator on the plan side
  bool operator==(const Mismatch&) const = default;
};

struct CheckStats {
  int64_t ranks = 0;
  int64_t spec_nodes = 0;
  int64_t rank_nodes = 0;
  int64_t collectives = 0;
  int64_t bindings = 0;
  int64_t elements_compared = 0;
  int64_t max_terms = 0;      // largest polynomial, in terms
  int64_t atoms = 0;          // distinct atoms interned
  int64_t polynomials = 0;    // distinct polynomials interned
  bool staged = false;        // decided with stage cuts (check/stage_cuts.h)
  // Stage obligations (check/stage_run.h), summed over the instances proven: stages holding
  // work, those proven, and those not run because an earlier one was the same obligation.
  int64_t stages = 0;
  int64_t stages_proven = 0;
  int64_t stages_reused = 0;
  // Layers of a run the spec repeats, and those left out of the stage-wise proof as the same
  // obligations as a layer kept (docs/design.md section 4d), summed over instances.
  int64_t layers = 0;
  int64_t layers_left_out = 0;
  // Coefficients over routing indicators that only the routing axioms make vanish, proven by
  // CaDiCaL (solver/boolean_residue.h): how many, the largest SAT problem, solver calls, time.
  int64_t sat_coefficients = 0;
  int64_t sat_routings = 0;  // terms rewritten under a routing (functions of routed values)
  int64_t sat_max_variables = 0;
  int64_t sat_max_clauses = 0;
  int64_t sat_calls = 0;
  double sat_seconds = 0;
  double seconds = 0;
  // Processes that proved the check together (CheckOptions::spread), and the instances each
  // proved over every choice of ranks; one process: {instances proven}.
  int64_t processes = 1;
  std::vector<int64_t> process_instances;
  bool operator==(const CheckStats&) const = default;
};

using reduce::ReducedDim;
using reduce::ReducedFactor;

// What shape reduction did: the instance actually proven, or why the check ran at full size.
struct Reduction {
  bool requested = true;
  bool applied = false;
  std::string not_applied;  // the reason, when requested but not applied
  std::vector<ReducedDim> dims;
  std::vector<ReducedDim> other_dims;  // reduce::Reduced::other_dims: not reported, used to
                                       // name positions at full size
  std::vector<std::string> kept_full;  // reasons factors kept their full size
  int64_t full_elements = 0, reduced_elements = 0;
  // Mesh axes proven with fewer ranks ("mesh axis 'dp': 512 ranks -> 2"), and the rank of the
  // full plan each proven rank stands for (empty when every rank was kept). Ranks in reports
  // are always the full plan's.
  std::vector<std::string> fewer_ranks;
  std::vector<std::string> fewer_rank_axes;  // the mesh axes named there
  std::vector<int64_t> rank_origin;
  // Micro-batched programs proven with fewer bodies ("32 per program -> 2 and 3"), or "".
  std::string fewer_micro_batches;
  bool operator==(const Reduction&) const = default;
};

struct CheckResult {
  Verdict verdict = Verdict::Unknown;
  std::string message;                 // for input errors and UNKNOWN: what and where
  std::optional<Mismatch> mismatch;    // for NOT EQUIVALENT: the first failing output, in detail
  std::vector<std::string> failing_outputs;  // every spec output some binding is refuted on
  std::vector<std::string> warnings;   // e.g. rank outputs no binding names
  CheckStats stats;
  Reduction reduction;
  bool operator==(const CheckResult&) const = default;
};

// Progress of a long check, reported to the caller (the CLI draws it; the library never prints).
struct Progress {
  // "load", "reduce", "spec", "plan", "compare", "instances"; with fewer ranks, a phase of
  // one instance of several is prefixed "instance 2/4: ".
  std::string phase;
  int64_t done = 0;
  int64_t total = 0;
};

struct CheckOptions {
  std::function<void(const Progress&)> on_progress;  // may be empty
  // Gives the memory freed so far back to the system, where the allocator would keep it: an
  // instance proven again alone after running out of memory beside others is then measured
  // against --max-memory alone (check/instance_pool.h). May be empty.
  std::function<void()> release_memory;
  uint64_t witness_seed = 1;
  bool reduce = true;  // prove a small instance of the same plan (docs/shape-reduction.md)
  bool stages = true;  // try a stage-wise proof first (docs/design.md, "Stage cuts")
  // Before it, prove each distinct stage obligation once (docs/design.md, "Stage obligations").
  bool reuse = true;
  // With it, leave out the inside of each run of layers alike (docs/design.md section 4d).
  bool fold = true;
  // Elements (over every tensor of the spec and the ranks) above which a check at full size is
  // not attempted: UNKNOWN instead of exhausting memory.
  int64_t max_elements = limits::kMaxElements;
  // Resident memory in bytes past which a proof stops with UNKNOWN; 0 means 85% of the
  // machine's physical memory.
  size_t max_memory = 0;
  // With fewer ranks, retry keeping every rank where a sum over ranks counts them
  // (check/counted_replicas.h). Off only in tests that show the counts 2 and 3 alone.
  bool count_guard = true;
  // Threads proving independent instances (the counts of fewer ranks and micro-batches) at
  // once; each holds its own symbolic store, so memory grows with it (an instance stopped by
  // the memory limit beside others is proven again alone: check/instance_pool.h). 0: the
  // cores this process may use, shared among the processes of one machine.
  int jobs = 0;
  // Called after every node a proof runs (file, node, seconds, largest polynomial): where time
  // and terms go. May be empty.
  std::function<void(const std::string&, const std::string&, double, size_t)> trace;
  // Several processes proving one check together (`mpirun -n N onnx-tv check`, src/dist):
  // process p proves the instances k of each grid with k % processes == p, on `jobs` threads,
  // and `exchange` gives every process every process's outcomes (check/outcome_wire.h), in
  // process order, so that each decides as one process proving every instance would. Every
  // process must call run() with the same arguments.
  struct Spread {
    int process = 0;
    int processes = 1;
    std::function<std::vector<std::string>(const std::string& mine)> exchange;
    int processes_here = 1;  // of them, on this machine: they share its cores
  };
  Spread spread;
};

}  // namespace onnx_tv::check
