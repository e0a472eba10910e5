// The meaning of each communication op (plan-format section 5) on symbolic tensors.
#include "exec/executor.h"
#include "common/errors.h"
#include "ir/tensor_util.h"

namespace onnx_tv::exec {

namespace {

int64_t norm_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    throw InputError(std::string(what) + " " + std::to_string(axis) +
                     " is out of range for a tensor of rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

void require_same_shapes(const std::vector<const ir::Tensor*>& ins, const char* op) {
  for (const ir::Tensor* t : ins)
    if (t->shape != ins[0]->shape)
      throw InputError(std::string(op) + ": members contribute tensors of different shapes " +
                       ir::shape_string(ins[0]->shape) + " and " + ir::shape_string(t->shape));
}

ir::Tensor reduce(solver::Context& ctx, const std::vector<const ir::Tensor*>& ins,
                  ir::ReduceOp op) {
  ir::Tensor out = *ins[0];
  std::vector<solver::Value> xs(ins.size());
  for (int64_t e = 0; e < out.size(); ++e) {
    for (size_t k = 0; k < ins.size(); ++k) xs[k] = ins[k]->data[e];
    out.data[e] = op == ir::ReduceOp::Sum ? ctx.sum(xs)
                  : op == ir::ReduceOp::Max ? ctx.max(xs)
                                            : ctx.min(xs);
  }
  return out;
}

std::vector<ir::Tensor> all_to_all(const std::vector<const ir::Tensor*>& ins,
                                   const ir::CommOp& op) {
  const int64_t n = int64_t(ins.size());
  std::vector<std::vector<ir::Tensor>> chunks;  // chunks[j][i]: member j's chunk for member i
  for (const ir::Tensor* t : ins) {
    ir::Tensor flat = *t;
    int64_t split = 0;
    if (op.flatten) {
      flat.shape = {t->size()};
    } else {
      split = norm_axis(op.split_axis, t->rank(), "AllToAll split_axis");
    }
    if (flat.shape[split] % n)
      throw InputError("AllToAll: dimension " + std::to_string(split) + " of size " +
                       std::to_string(flat.shape[split]) + " does not split into " +
                       std::to_string(n) + " equal chunks");
    chunks.push_back(ir::split_equal(flat, split, n));
  }
  std::vector<ir::Tensor> outs;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<const ir::Tensor*> parts;
    for (int64_t j = 0; j < n; ++j) parts.push_back(&chunks[j][i]);
    if (op.flatten) {
      ir::Tensor t = ir::concat(parts, 0);
      t.shape = ins[i]->shape;
      outs.push_back(std::move(t));
    } else {
      outs.push_back(ir::concat(parts, norm_axis(op.concat_axis, ins[i]->rank(),
                                                 "AllToAll concat_axis")));
    }
  }
  return outs;
}

}  // namespace

std::vector<ir::Tensor> run_comm(solver::Context& ctx, const Step& step,
                                 const std::vector<const ir::Tensor*>& ins) {
  // Step members are in group order (the linker puts them so).
  const ir::CommOp& op = step.members[0].comm;
  const int64_t n = int64_t(ins.size());
  if (step.kind == Step::Kind::P2P) {
    // Send's token carries no value; Recv gets the sent tensor.
    return {ir::make_tensor(ir::DType::Bool, {}, {ctx.zero()}), *ins[0]};
  }
  std::vector<ir::Tensor> outs;
  switch (op.kind) {
    case ir::CommKind::AllReduce: {
      require_same_shapes(ins, "AllReduce");
      ir::Tensor y = reduce(ctx, ins, op.reduce);
      outs.assign(n, y);
      break;
    }
    case ir::CommKind::AllGather: {
      const int64_t axis = norm_axis(op.axis, ins[0]->rank(), "AllGather axis");
      for (const ir::Tensor* t : ins) {
        ir::Shape a = t->shape, b = ins[0]->shape;
        a[axis] = b[axis] = 0;
        if (t->rank() != ins[0]->rank() || a != b)
          throw InputError("AllGather: members contribute tensors of shapes " +
                           ir::shape_string(ins[0]->shape) + " and " +
                           ir::shape_string(t->shape) + ", which do not concatenate along axis " +
                           std::to_string(axis));
      }
      outs.assign(n, ir::concat(ins, axis));
      break;
    }
    case ir::CommKind::ReduceScatter: {
      require_same_shapes(ins, "ReduceScatter");
      const int64_t axis = norm_axis(op.axis, ins[0]->rank(), "ReduceScatter axis");
      if (ins[0]->shape[axis] % n)
        throw InputError("ReduceScatter: dimension " + std::to_string(axis) + " of size " +
                         std::to_string(ins[0]->shape[axis]) + " does not split over " +
                         std::to_string(n) + " members");
      outs = ir::split_equal(reduce(ctx, ins, op.reduce), axis, n);
      break;
    }
    case ir::CommKind::AllToAll:
      outs = all_to_all(ins, op);
      break;
    case ir::CommKind::Broadcast:
      outs.assign(n, *ins[op.root]);
      break;
    default:
      ONNX_TV_ASSERT(false, "point-to-point op in a collective step");
  }
  return outs;  // in group order, as the step's members are
}

}  // namespace onnx_tv::exec
