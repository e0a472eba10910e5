// The meaning of each communication op (plan-format section 5) on symbolic tensors.
#include "exec/executor.h"
#include "exec/comm_shapes.h"
#include "common/errors.h"
#include "ir/tensor_util.h"

namespace onnx_tv::exec {

namespace {

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

// Shapes were checked by comm_output_shapes.
std::vector<ir::Tensor> all_to_all(const std::vector<const ir::Tensor*>& ins,
                                   const ir::CommOp& op) {
  const int64_t n = int64_t(ins.size());
  auto norm = [](int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; };
  std::vector<std::vector<ir::Tensor>> chunks;  // chunks[j][i]: member j's chunk for member i
  for (const ir::Tensor* t : ins) {
    ir::Tensor flat = *t;
    if (op.flatten) flat.shape = {t->size()};
    chunks.push_back(ir::split_equal(flat, op.flatten ? 0 : norm(op.split_axis, t->rank()), n));
  }
  std::vector<ir::Tensor> outs;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<const ir::Tensor*> parts;
    for (int64_t j = 0; j < n; ++j) parts.push_back(&chunks[j][i]);
    ir::Tensor t = ir::concat(parts, op.flatten ? 0 : norm(op.concat_axis, ins[i]->rank()));
    if (op.flatten) t.shape = ins[i]->shape;
    outs.push_back(std::move(t));
  }
  return outs;
}

}  // namespace

std::vector<ir::Tensor> run_comm(solver::Context& ctx, const Step& step,
                                 const std::vector<const ir::Tensor*>& ins) {
  // Step members are in group order (the linker puts them so).
  const ir::CommOp& op = *step.members[0].comm;
  const int64_t n = int64_t(ins.size());
  if (step.kind == Step::Kind::P2P) {
    // Send's token carries no value; Recv gets the sent tensor.
    return {ir::make_tensor(ir::DType::Bool, {}, {ctx.zero()}), *ins[0]};
  }
  std::vector<ir::Shape> shapes;
  for (const ir::Tensor* t : ins) {
    if (t->dtype != ins[0]->dtype)
      throw InputError(ir::comm_kind_name(op.kind) + ": members contribute tensors of types " +
                       ir::dtype_name(ins[0]->dtype) + " and " + ir::dtype_name(t->dtype));
    shapes.push_back(t->shape);
  }
  const std::vector<ir::Shape> out_shapes = comm_output_shapes(op, shapes);
  std::vector<ir::Tensor> outs;
  switch (op.kind) {
    case ir::CommKind::AllReduce:
      outs.assign(n, reduce(ctx, ins, op.reduce));
      break;
    case ir::CommKind::AllGather:
      outs.assign(n, ir::concat(ins, op.axis < 0 ? op.axis + ins[0]->rank() : op.axis));
      break;
    case ir::CommKind::ReduceScatter: {
      const int64_t axis = op.axis < 0 ? op.axis + ins[0]->rank() : op.axis;
      outs = ir::split_equal(reduce(ctx, ins, op.reduce), axis, n);
      break;
    }
    case ir::CommKind::AllToAll:
      outs = all_to_all(ins, op);
      break;
    case ir::CommKind::Broadcast:
      outs.assign(n, *ins[size_t(op.root)]);
      break;
    default:
      ONNX_TV_ASSERT(false, "point-to-point op in a collective step");
  }
  for (size_t k = 0; k < outs.size(); ++k)
    ONNX_TV_ASSERT(outs[k].shape == out_shapes[k],
                   ir::comm_kind_name(op.kind) + " gave " + ir::shape_string(outs[k].shape) +
                       " where its shapes say " + ir::shape_string(out_shapes[k]));
  return outs;  // in group order, as the step's members are
}

}  // namespace onnx_tv::exec
