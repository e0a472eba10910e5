#pragma once
// Fewer ranks along a mesh axis. When every rank along an axis runs the same program file with
// rank-generic collectives (group_axes, peer_axis) and the same bindings, placements deciding
// which piece each holds, the ranks along it are one SIMD kernel applied to the pieces of the
// dimensions the axis shards: the number of ranks is then one more dimension of the linked
// program, and it shrinks like any other (to 2 and to 3: see count_grid).
// docs/shape-reduction.md ("Fewer ranks") gives the argument and its assumptions.
//
// The choice is made on the plan alone, before anything is linked (a plan of thousands of
// ranks is never expanded): dimension inference then runs on the ranks kept, with every count
// at its full size, and refuses the choice (KeepRanks) where it finds an axis's count read as
// a position or split.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/plan.h"
#include "reduce/kept_whole.h"

namespace onnx_tv::reduce {

struct FewerRanks {
  ir::Plan plan;                      // the ranks kept (all of them when none shrinks)
  std::optional<ir::Mesh> full_mesh;  // the full plan's mesh
  std::vector<int64_t> original;            // rank of `plan` -> rank of the full plan
  std::vector<std::string> axes;            // the mesh axes that shrink
  std::vector<int64_t> counts;              // the ranks each keeps (2 or 3), as `axes`
  std::vector<std::string> notes;           // "mesh axis 'dp': 512 ranks -> 2 and 3", per axis
  std::vector<std::string> kept;            // why an axis of more than 3 ranks keeps them all
  // Fewer micro-batches (micro_batches.h): the bodies each micro-batched program repeats (0:
  // none shrink), the bodies this instance keeps, and once cut, the bindings of the pieces
  // kept ((rank, value) -> the dimension cut into micro-batches).
  int64_t micro_batches = 0;
  int64_t micro_batch_count = 0;
  std::map<std::pair<int64_t, std::string>, size_t> micro_batch_pieces;
  // Per program of `plan`: the outputs of its sums over micro-batches (with fewer micro-batches).
  std::vector<std::vector<std::string>> micro_batch_totals;
};

// `kept`: the axes (or every rank) earlier tries found must keep all their ranks, and why.
// An axis of more than three ranks shrinks when its ranks run one program file, have the same
// bindings (up to the piece placements give each), a binding shards a dimension along it, no
// program names ranks explicitly or uses com.microsoft collectives (whole world), and no
// Broadcast or Send/Recv goes along it. Each keeps 2 ranks.
FewerRanks choose_fewer_ranks(const ir::Plan& full,
                              const KeptWhole& kept);

// The same choice of axes with `counts[axis]` ranks kept on each (default 2): the plan is cut
// again, the axes are not chosen again.
FewerRanks with_counts(const ir::Plan& full, const FewerRanks& chosen,
                       const std::map<std::string, int64_t>& counts);

// Every combination of 2 and 3 ranks on the axes `fewer` shrinks (2^k instances for k axes,
// and the micro-batches as one more under the key kMicroBatches):
// an instance proves only the counts it has, and a sum over ranks of terms every rank adds
// grows with the count (n times a bias added on each rank); checked at two counts per axis, a
// plan whose outputs are affine in each count is proven for every count (docs/shape-reduction.md).
std::vector<std::map<std::string, int64_t>> count_grid(const FewerRanks& fewer);

// The identity choice: every rank kept.
FewerRanks all_ranks(const ir::Plan& full);

// What reduction returns when inference finds that an axis chosen to shrink (or the count of
// micro-batches) cannot.
struct KeepRanks {
  std::string axis, why;
  bool micro_batches = false;  // the count of micro-batches, not a mesh axis
};

// Before anything is linked: an axis of `fewer` whose count shape reduction would refuse (an
// output of degree above 1 in it: count_degree.cpp), seen on one rank of each program file
// alone. Every degree found this way is at most the one the whole instance gives (what another
// rank sends counts 0, what needs dimensions counts nothing), so the axis refused here would be
// refused there too, after linking, cutting and inferring the instance for nothing.
std::optional<KeepRanks> refused_before_linking(const FewerRanks& fewer);

}  // namespace onnx_tv::reduce
