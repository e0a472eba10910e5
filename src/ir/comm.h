#pragma once
// A communication op of one rank, resolved to concrete ranks (plan-format section 5).
// The frontend reads these from the onnx_tv and com.microsoft domains; the linker pairs them.
#include <cstdint>
#include <string>
#include <vector>

namespace onnx_tv::ir {

enum class CommKind { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, Send, Recv };
enum class ReduceOp { Sum, Max, Min };

struct CommOp {
  CommKind kind = CommKind::AllReduce;
  size_t node_index = 0;       // index of the node in its rank's graph
  std::vector<int64_t> group;  // member ranks in group order (collectives)
  ReduceOp reduce = ReduceOp::Sum;
  int64_t axis = 0;            // AllGather, ReduceScatter (may be negative: from the end)
  int64_t split_axis = 0;      // AllToAll
  int64_t concat_axis = 0;     // AllToAll
  bool flatten = false;        // com.microsoft AllToAll: splits the flattened buffer
  int64_t root = 0;            // Broadcast: index in group order
  int64_t peer = -1;           // Send / Recv
  int64_t tag = 0;             // Send / Recv
  std::string key;             // optional pairing key ("" when absent)
  std::string data_input;      // the tensor sent or reduced ("" for Recv)
  std::string output;          // the tensor produced ("" when a Send's token is omitted)
};

std::string comm_kind_name(CommKind k);

}  // namespace onnx_tv::ir
