#include "ir/tensor_util.h"

#include "common/errors.h"

namespace onnx_tv::ir {

namespace {

// Calls f(flat offset in t, multi-index) for every element of the box [start, end) of t.
template <class F>
void for_box(const Shape& shape, const std::vector<int64_t>& start,
             const std::vector<int64_t>& end, F&& f) {
  const size_t r = shape.size();
  for (size_t d = 0; d < r; ++d)
    if (end[d] <= start[d]) return;
  const auto st = strides(shape);
  std::vector<int64_t> idx(start);
  while (true) {
    int64_t off = 0;
    for (size_t d = 0; d < r; ++d) off += idx[d] * st[d];
    f(off, idx);
    size_t d = r;
    while (d > 0) {
      --d;
      if (++idx[d] < end[d]) break;
      idx[d] = start[d];
      if (d == 0) return;
    }
    if (r == 0) return;
  }
}

}  // namespace

Tensor slice(const Tensor& t, const std::vector<int64_t>& start, const std::vector<int64_t>& end) {
  ONNX_TV_ASSERT(start.size() == t.shape.size() && end.size() == t.shape.size(),
                 "slice rank differs from tensor rank");
  Shape out_shape(t.shape.size());
  for (size_t d = 0; d < t.shape.size(); ++d) {
    ONNX_TV_ASSERT(0 <= start[d] && start[d] <= end[d] && end[d] <= t.shape[d],
                   "slice out of range of " + shape_string(t.shape));
    out_shape[d] = end[d] - start[d];
  }
  std::vector<solver::Value> data;
  data.reserve(element_count(out_shape));
  for_box(t.shape, start, end, [&](int64_t off, const std::vector<int64_t>&) {
    data.push_back(t.data[off]);
  });
  return make_tensor(t.dtype, out_shape, std::move(data));
}

void paste(Tensor& whole, const Tensor& part, const std::vector<int64_t>& start) {
  std::vector<int64_t> end(start.size());
  for (size_t d = 0; d < start.size(); ++d) end[d] = start[d] + part.shape[d];
  size_t i = 0;
  for_box(whole.shape, start, end, [&](int64_t off, const std::vector<int64_t>&) {
    whole.data[off] = part.data[i++];
  });
}

Tensor concat(const std::vector<const Tensor*>& parts, int64_t axis) {
  ONNX_TV_ASSERT(!parts.empty(), "concat of nothing");
  Shape shape = parts[0]->shape;
  ONNX_TV_ASSERT(axis >= 0 && axis < int64_t(shape.size()), "concat axis out of range");
  shape[axis] = 0;
  for (const Tensor* p : parts) shape[axis] += p->shape[axis];
  Tensor out = make_tensor(parts[0]->dtype, shape,
                           std::vector<solver::Value>(element_count(shape)));
  std::vector<int64_t> start(shape.size(), 0);
  for (const Tensor* p : parts) {
    paste(out, *p, start);
    start[axis] += p->shape[axis];
  }
  return out;
}

std::vector<Tensor> split_equal(const Tensor& t, int64_t axis, int64_t n) {
  ONNX_TV_ASSERT(n > 0 && t.shape[axis] % n == 0, "split_equal of an indivisible dimension");
  const int64_t chunk = t.shape[axis] / n;
  std::vector<Tensor> out;
  std::vector<int64_t> start(t.shape.size(), 0), end(t.shape);
  for (int64_t i = 0; i < n; ++i) {
    start[axis] = i * chunk;
    end[axis] = (i + 1) * chunk;
    out.push_back(slice(t, start, end));
  }
  return out;
}

std::vector<int64_t> unravel(int64_t offset, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? offset % shape[d] : 0;
    offset = shape[d] ? offset / shape[d] : 0;
  }
  return idx;
}

std::string index_string(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? "," : "") + std::to_string(index[i]);
  return s + "]";
}

}  // namespace onnx_tv::ir
