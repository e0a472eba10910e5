#pragma once
// The text of a stage obligation (check/stage_run.h): everything that decides the function a
// stage computes and the forms its inputs hold, and nothing else. Ranks are numbered in order
// of appearance, tensors by their place (the k-th output of the stage, or its k-th input from
// outside), and the atoms of the inputs' forms in order of appearance. Node names, tensor
// names, file names and rank numbers play no part, so the layers of a deep model give one
// text; ops, opsets, attributes, constants, shapes, declared shapes, collective kinds, groups
// and roots, and the inputs' forms do, so a layer that differs in any of them gives another.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "exec/executor.h"
#include "exec/linker.h"
#include "ir/plan.h"
#include "ir/graph.h"
#include "reduce/sum_site.h"
#include "solver/context.h"

namespace onnx_tv::check {

// An output of a stage: the tensor, and whether anything outside the stage reads it (a later
// stage, or the obligations at the end).
struct StageSlot {
  int64_t program = -1;  // -1: the spec; else the rank
  std::string name;
  bool leaves = false;
};

// The units of one stage, in the order they run, and their outputs in that order.
struct StageUnits {
  int64_t label = -1;  // check/stage_partition.h
  std::vector<size_t> spec_nodes;
  std::vector<size_t> steps;
  std::vector<StageSlot> slots;
};

// What the text reads besides the stage's units.
struct StageKeyInputs {
  const ir::Graph& spec;
  const ir::Plan& plan;
  const exec::LinkedPlan& linked;
  const exec::Env& spec_env;
  const std::vector<exec::Env>& envs;
  // Sum sites and micro-batch sums by (program, first output): the guards judge them, so
  // stages that differ in them are not one obligation.
  const std::map<std::pair<int64_t, std::string>, std::string>& marks;
  // Mesh axes proven with fewer ranks: the guards ask whether a group spans them, so each
  // rank's coordinates along them are part of the text.
  const std::vector<std::string>& guarded_axes;
  // The output bindings naming each value, by (rank, value) and by (-1, spec output): the
  // obligations a stage completes are part of what it proves.
  const std::map<std::pair<int64_t, std::string>, std::vector<const ir::Binding*>>& bound;
};

struct StageKey {
  std::string text;
  std::vector<solver::AtomId> atoms;  // the inputs' atoms, in the order the text numbers them
  // False where the text would not describe the stage up to renaming (an input holds an atom
  // other than a symbol, a node holds a subgraph): such a stage is run every time.
  bool reusable = true;
};

StageKey stage_key(const solver::Context& ctx, const StageKeyInputs& in, const StageUnits& units);

}  // namespace onnx_tv::check
