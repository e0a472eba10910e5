#include "ir/comm.h"

namespace onnx_tv::ir {

std::string comm_kind_name(CommKind k) {
  switch (k) {
    case CommKind::AllReduce: return "AllReduce";
    case CommKind::AllGather: return "AllGather";
    case CommKind::ReduceScatter: return "ReduceScatter";
    case CommKind::AllToAll: return "AllToAll";
    case CommKind::Broadcast: return "Broadcast";
    case CommKind::Send: return "Send";
    case CommKind::Recv: return "Recv";
  }
  return "?";
}

}  // namespace onnx_tv::ir
