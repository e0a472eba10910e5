#pragma once
// Every limit and tuning constant of the prover in one table, as CaDiCaL's options.hpp keeps
// its options: name, value and what it bounds. docs/limits.md explains each, and a test checks
// that it lists every entry with its value. The defaults of the limits a user sets
// (--max-elements, --max-memory) are here too; the input format's own limits (world size,
// nesting of plan.json, file sizes) are in docs/plan-format.md.
#include <cstddef>
#include <cstdint>

// X(name, type, value, what it bounds)
#define ONNX_TV_LIMITS(X)                                                                      \
  X(kMaxElements, int64_t, 20'000'000,                                                         \
    "tensor elements of an instance, and of one node's outputs (--max-elements' default)")     \
  X(kFullSizeInputShare, int64_t, 10,                                                          \
    "a check at full size needs its spec inputs to hold at most max-elements / this")         \
  X(kMemoryPercent, size_t, 85, "--max-memory's default, in percent of physical memory")      \
  X(kMemoryCheckEvery, unsigned, 16,                                                           \
    "calls (nodes, bindings) between two looks at the clock for a look at resident memory")   \
  X(kMemoryLookMicros, int64_t, 1000,                                                          \
    "microseconds at least between two looks at resident memory against --max-memory")        \
  X(kConcreteMax, int64_t, 64,                                                                 \
    "elements of an integer tensor shape reduction keeps exactly (shape arithmetic)")         \
  X(kDefineAbove, size_t, 32, "terms of a product above which it is kept as a definition")   \
  X(kExpansionBudget, size_t, 200'000,                                                         \
    "terms a whole-program run expands definitions to before a pair is left undecided")       \
  X(kStagedMaxTerms, size_t, 32'768,                                                            \
    "terms of a value past which the stage-wise run gives way to whole-program runs")         \
  X(kStagedBudget, size_t, 20'000,                                                             \
    "terms a stage-wise run unfolds a pair to before leaving it undecided")                   \
  X(kProductBudget, size_t, 4'000'000,                                                         \
    "products of terms one contraction's sum confirmation examines before keeping its axis whole")  \
  X(kProofFormBudget, size_t, 20'000,                                                          \
    "terms of an addend unfolded as the comparisons were, before its sum is taken to count")  \
  X(kGuardExpansion, size_t, 2'048,                                                            \
    "terms within which the guard on sums over ranks compares addends expanded")              \
  X(kGuardExpansionTotal, size_t, 1'000'000,                                                   \
    "terms one guard call's expansions build in all before it stops expanding")               \
  X(kCaseSplitAtoms, size_t, 10, "max and min atoms split into cases at once")                 \
  X(kCaseSplitCases, size_t, 1'024, "combinations of case choices tried")                      \
  X(kCaseSplitTerms, size_t, 20'000, "terms of a form rebuilt in one case before giving up")   \
  X(kCaseSplitDifference, size_t, 4'096, "terms of a difference past which no case split")     \
  X(kExclusiveCases, size_t, 64,                                                               \
    "cases of a routed argument a function is applied to one by one")                        \
  X(kRoutingCalls, int64_t, 4'096, "routings one coefficient or split term enumerates")        \
  X(kCountValues, int64_t, 4'096, "values a count's polynomial may take")                       \
  X(kRankedRow, int64_t, 64, "elements of a row of routed integer keys sorted by their ranks")   \
  X(kRankedJointValues, int64_t, 4'096,                                                          \
    "joint values of two keys' inputs enumerated to write which is ahead")                     \
  X(kRestoredRange, int64_t, 64, "values of a count whose eliminated lowest is restored")       \
  X(kOutsideFactors, size_t, 6,                                                                \
    "monomial factors kept outside a definition (more go inside it)")                          \
  X(kRoutedCutAbove, size_t, 1'024,                                                            \
    "terms of a routed value (every term a selection's indicator) past which a stage cut takes it") \
  X(kWitnessFirstTries, int, 4, "random points a comparison tries before meeting the forms")  \
  X(kWitnessQuickTries, int, 24, "random points a comparison tries for a witness")             \
  X(kWitnessPreciseTries, int, 4, "points a full search checks by intervals alone")            \
  X(kWitnessMemo, size_t, 8'000'000,                                                           \
    "memo entries of the witness evaluators before they are dropped and rebuilt")

namespace onnx_tv::limits {

#define ONNX_TV_LIMIT_DECLARE(name, type, value, what) inline constexpr type name = value;
// Stage obligations (check/stage_run.h): how many times a stage's end may unfold the spec's
// cuts whose bodies the ranks' values hold, to let the stage end with both sides over the
// same atoms.
inline constexpr int kStageUnfoldRounds = 3;
ONNX_TV_LIMITS(ONNX_TV_LIMIT_DECLARE)
#undef ONNX_TV_LIMIT_DECLARE

struct Entry {
  const char* name;
  long long value;
  const char* what;
};

#define ONNX_TV_LIMIT_ENTRY(name, type, value, what) Entry{#name, (long long)(value), what},
inline constexpr Entry kAll[] = {ONNX_TV_LIMITS(ONNX_TV_LIMIT_ENTRY)};
#undef ONNX_TV_LIMIT_ENTRY

}  // namespace onnx_tv::limits
