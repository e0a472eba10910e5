#pragma once
// A training plan as data (plan-format sections 2 to 4): the rank programs, the mesh, and every
// binding, with rank selectors expanded so that each Binding holds on exactly one rank. The
// frontend reads a shards folder into it; every later stage reads it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace onnx_tv::ir {

struct Mesh {
  std::vector<std::string> axes;
  std::vector<int64_t> shape;
  std::vector<int64_t> coords(int64_t rank) const;  // row-major
  int64_t rank_of(const std::vector<int64_t>& coords) const;
  int64_t axis_index(const std::string& name) const;  // -1 when absent
};

// One entry of a slice: [start, end) or the whole dimension.
using SliceEntry = std::optional<std::pair<int64_t, int64_t>>;

struct Placement {
  enum class Kind { Shard, Replicate, Partial };
  Kind kind = Kind::Replicate;
  int64_t dim = 0;  // Shard only
};

struct Binding {
  int64_t rank = 0;
  std::string value;  // the rank's graph input, output or initializer
  std::string spec;   // the spec's graph input, output or initializer
  std::optional<std::vector<SliceEntry>> slice;        // absent: the whole tensor
  std::vector<Placement> placements;                   // empty unless given
  std::optional<std::vector<SliceEntry>> local_slice;  // absent unless given
  bool partial = false;
  std::string group;   // partial set label ("" is the default set)
  std::string origin;  // where it was written, for messages: "shards/plan.json bindings[3]"
};

// A binding's region in spec coordinates, once the spec value's shape is known.
struct Region {
  std::vector<int64_t> start, end;  // per spec dimension
  bool partial = false;
  std::string set_key;  // identifies the partial set: group label plus placement coordinates
};

// What a binding says apart from its rank, as text: bindings with equal keys bind alike. With
// `open_dim`, the value and that entry of the local slice are left out (and the dimension
// named), so the pieces of one family of local slices share a key.
std::string binding_key(const Binding& b, std::optional<size_t> open_dim = std::nullopt);

// binding_key without the two names: what the binding says of its region.
std::string binding_region_key(const Binding& b);

// Resolves slice / placements / local_slice against the spec value's shape. InputError (naming
// the binding's origin) when out of range, when a Shard does not divide evenly, or when the
// placements do not match the mesh.
Region resolve_region(const Binding& b, const std::optional<Mesh>& mesh,
                      const std::vector<int64_t>& spec_shape);

struct Plan {
  std::string dir;
  int64_t world_size = 0;
  std::optional<Mesh> mesh;
  std::vector<std::shared_ptr<const Graph>> programs;  // each distinct file, loaded once
  std::vector<size_t> rank_program;                        // rank -> index into programs
  std::vector<Binding> bindings;

  const Graph& program_of(int64_t rank) const { return *programs[rank_program[rank]]; }
};

// "Shard(0)", "Replicate()", "Partial()", "Partial(sum)".
std::string placement_name(const Placement& p);

}  // namespace onnx_tv::ir
