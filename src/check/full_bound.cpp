#include "check/full_bound.h"

namespace onnx_tv::check {

FullBound::FullBound(const ir::Graph& spec, const ir::Plan& plan, size_t memory_bytes)
    : spec_(spec), plan_(plan), memory_bytes_(memory_bytes),
      bound_(resolve_bindings(spec, plan, memory_bytes)) {}

const BoundPlan& FullBound::get() const {
  std::lock_guard<std::mutex> hold(lock_);
  if (!bound_) bound_ = resolve_bindings(spec_, plan_, memory_bytes_);
  return *bound_;
}

}  // namespace onnx_tv::check
