#include "common/errors.h"

namespace onnx_tv {

void Error::add_context(const std::string& context) {
  message_ = context + ": " + message_;
}

void assertion_failed(const char* cond, const char* file, int line, const std::string& context) {
  throw InternalError(std::string("internal error: assertion `") + cond + "` failed at " + file +
                      ":" + std::to_string(line) + (context.empty() ? "" : " (" + context + ")"));
}

}  // namespace onnx_tv
