#pragma once
// Links the rank programs of a plan into one dataflow program: collectives are paired across
// their group (by key, else k-th to k-th per type and group, as NCCL pairs calls), Send and
// Recv by (sender, receiver, tag) k-th to k-th, and every step is put in a dataflow order
// across ranks. Node order inside a rank is not a schedule for point-to-point ops, so only a
// real dependency cycle is an error.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/plan.h"
#include "ir/comm.h"

namespace onnx_tv::exec {

// One step of the joint schedule: a plain node of one rank, a collective instance (one node
// on each member), or a Send paired with its Recv.
struct Step {
  enum class Kind { Node, Collective, P2P };
  Kind kind = Kind::Node;
  struct Member {
    int64_t rank;
    size_t node_index;
    // For collectives and P2P (Send first, then Recv); null for a node. Shared, not held: a
    // linked plan has a step per rank node (millions at 405B), and most are not comm ops.
    std::shared_ptr<const ir::CommOp> comm;
  };
  std::vector<Member> members;
};

struct LinkedPlan {
  std::vector<Step> steps;  // in a dataflow order across all ranks
  int64_t collectives = 0;
  int64_t p2p = 0;
};

// InputError naming the op, rank and group for unmatched or misordered collectives, unmatched
// Send/Recv, and dependency cycles across ranks; ResourceLimit past `memory_bytes` of resident
// memory (0: no limit).
LinkedPlan link_plan(const ir::Plan& plan, size_t memory_bytes = 0);

}  // namespace onnx_tv::exec
