#pragma once
// The full plan's bindings resolved. They are resolved as the plan is read, so a binding's
// error is the plan's whatever ranks the instances keep; then, once the instances are known
// to keep fewer ranks or micro-batches (each resolves its own), they are let go: a binding
// per rank, over a million at 405B. An instance that keeps every rank and micro-batch
// resolves them again, once.
#include <mutex>
#include <optional>

#include "check/bindings.h"

namespace onnx_tv::check {

class FullBound {
 public:
  // Resolves now: InputError for the plan's bindings as resolve_bindings.
  FullBound(const ir::Graph& spec, const ir::Plan& plan, size_t memory_bytes);

  // Before any instance runs: what was resolved is let go.
  void let_go() { bound_.reset(); }

  // The resolved bindings, resolved again if let go (once, whichever thread asks first).
  const BoundPlan& get() const;

 private:
  const ir::Graph& spec_;
  const ir::Plan& plan_;
  size_t memory_bytes_;
  mutable std::mutex lock_;
  mutable std::optional<BoundPlan> bound_;
};

}  // namespace onnx_tv::check
