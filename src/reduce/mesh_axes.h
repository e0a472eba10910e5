#pragma once
// Fewer ranks along a mesh axis. When every rank along an axis runs the same program file with
// rank-generic collectives (group_axes, peer_axis) and the same bindings, placements deciding
// which piece each holds, the ranks along it are one SIMD kernel applied to the pieces of the
// dimensions the axis shards: the number of ranks is then one more dimension of the linked
// program, and it shrinks like any other (to 2, so pieces still meet in every collective).
// docs/shape-reduction.md ("Fewer ranks") gives the argument and its assumptions. Private to
// src/reduce.
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/plan.h"
#include "reduce/infer.h"

namespace onnx_tv::reduce {

// Fixes the count of every mesh axis whose ranks are not interchangeable in that sense, with
// the reason: programs or bindings that differ along it, collectives that name ranks
// explicitly or span the whole world, no binding that shards a dimension along it (its ranks
// would be replicas, and a sum over them would count them), a count that another dimension
// splits. Collectives that read positions along an axis (Broadcast, Send/Recv) fix it during
// inference.
// `keep_ranks`, when not empty, fixes every axis with that reason.
void fix_mesh_axes(Inference& inf, const frontend::Plan& plan, const std::string& keep_ranks);

// The ranks the reduced instance keeps: those whose coordinate on every axis is below that
// axis's reduced count, renumbered row-major on the reduced mesh.
struct KeptRanks {
  std::optional<frontend::Mesh> mesh;  // the reduced mesh (as the plan's when nothing shrinks)
  std::vector<int64_t> original;        // new rank -> rank of the full plan
  std::vector<int64_t> renamed;         // rank of the full plan -> new rank, or -1
  std::vector<std::string> notes;       // "mesh axis 'dp': 512 ranks -> 2", per shrunk axis
  std::vector<std::string> axes;        // the names of the shrunk axes
};
KeptRanks kept_ranks(Inference& inf, const frontend::Plan& plan);

}  // namespace onnx_tv::reduce
