#include "exec/comm_shapes.h"

#include <string>

#include "common/errors.h"
#include "ops/kernel_util.h"

namespace onnx_tv::exec {

namespace {

std::string name_of(const ir::CommOp& op) { return ir::comm_kind_name(op.kind); }

int64_t norm_axis(const ir::CommOp& op, int64_t axis, int64_t rank, const char* what) {
  return ops::detail::normalize_axis(axis, rank, name_of(op) + ": " + what);
}

void require_same_shapes(const ir::CommOp& op, const std::vector<ir::Shape>& ins) {
  for (const ir::Shape& s : ins)
    if (s != ins[0])
      throw InputError(name_of(op) + ": members contribute tensors of different shapes " +
                       ir::shape_string(ins[0]) + " and " + ir::shape_string(s));
}

// Shapes that agree everywhere except along `axis`, whose sizes are summed.
ir::Shape concatenated(const ir::CommOp& op, const std::vector<ir::Shape>& parts, int64_t axis,
                       const char* what) {
  ir::Shape out = parts[0];
  out[size_t(axis)] = 0;
  for (const ir::Shape& s : parts) {
    ir::Shape a = s, b = parts[0];
    if (a.size() == b.size()) a[size_t(axis)] = b[size_t(axis)] = 0;
    if (a != b)
      throw InputError(name_of(op) + ": members contribute " + what + " of shapes " +
                       ir::shape_string(parts[0]) + " and " + ir::shape_string(s) +
                       ", which do not concatenate along axis " + std::to_string(axis));
    out[size_t(axis)] += s[size_t(axis)];  // each at most 2^48 and few members: no overflow
  }
  return out;
}

void require_divisible(const ir::CommOp& op, int64_t size, int64_t n, const std::string& what) {
  if (size % n != 0)
    throw InputError(name_of(op) + ": " + what + " of size " + std::to_string(size) +
                     " does not split into " + std::to_string(n) + " equal chunks");
}

}  // namespace

std::vector<ir::Shape> comm_output_shapes(const ir::CommOp& op, const std::vector<ir::Shape>& ins) {
  ONNX_TV_ASSERT(!ins.empty(), "a collective without members");
  const int64_t n = int64_t(ins.size());
  const int64_t rank = int64_t(ins[0].size());
  switch (op.kind) {
    case ir::CommKind::AllReduce:
      require_same_shapes(op, ins);
      return ins;
    case ir::CommKind::AllGather: {
      const int64_t axis = norm_axis(op, op.axis, rank, "axis");
      return std::vector<ir::Shape>(ins.size(), concatenated(op, ins, axis, "tensors"));
    }
    case ir::CommKind::ReduceScatter: {
      require_same_shapes(op, ins);
      const int64_t axis = norm_axis(op, op.axis, rank, "axis");
      require_divisible(op, ins[0][size_t(axis)], n, "dimension " + std::to_string(axis));
      ir::Shape out = ins[0];
      out[size_t(axis)] /= n;
      return std::vector<ir::Shape>(ins.size(), out);
    }
    case ir::CommKind::AllToAll: {
      if (op.flatten) {  // member i receives chunk i of every flattened buffer, in its own shape
        for (const ir::Shape& s : ins) {
          require_divisible(op, ir::element_count(s), n, "a flattened buffer");
          if (ir::element_count(s) != ir::element_count(ins[0]))
            throw InputError(name_of(op) + ": members contribute buffers of " +
                             std::to_string(ir::element_count(ins[0])) + " and " +
                             std::to_string(ir::element_count(s)) + " elements");
        }
        return ins;
      }
      std::vector<ir::Shape> chunks;  // member j's chunk shape, the same for every receiver
      for (const ir::Shape& s : ins) {
        if (int64_t(s.size()) != rank)
          throw InputError(name_of(op) + ": members contribute tensors of ranks " +
                           std::to_string(rank) + " and " + std::to_string(s.size()));
        const int64_t split = norm_axis(op, op.split_axis, rank, "split_axis");
        require_divisible(op, s[size_t(split)], n, "dimension " + std::to_string(split));
        ir::Shape c = s;
        c[size_t(split)] /= n;
        chunks.push_back(c);
      }
      const int64_t concat = norm_axis(op, op.concat_axis, rank, "concat_axis");
      return std::vector<ir::Shape>(ins.size(), concatenated(op, chunks, concat, "chunks"));
    }
    case ir::CommKind::Broadcast:
      if (op.root < 0 || op.root >= n)
        throw InputError(name_of(op) + ": root " + std::to_string(op.root) +
                         " is not an index of a group of " + std::to_string(n));
      return std::vector<ir::Shape>(ins.size(), ins[size_t(op.root)]);
    default:
      ONNX_TV_ASSERT(false, "point-to-point op " + name_of(op) + " given collective shapes");
  }
  return {};
}

}  // namespace onnx_tv::exec
