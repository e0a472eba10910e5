#include "common/errors.h"

#include "common/printable.h"

namespace onnx_tv {

Error::Error(const std::string& what) : std::runtime_error(""), message_(printable(what)) {}

void Error::add_context(const std::string& context) {
  message_ = printable(context) + ": " + message_;
}

void Error::add_hint(const std::string& hint) { message_ += "; hint: " + printable(hint); }

void assertion_failed(const char* cond, const char* file, int line, const std::string& context) {
  throw InternalError(std::string("internal error: assertion `") + cond + "` failed at " + file +
                      ":" + std::to_string(line) + (context.empty() ? "" : " (" + context + ")"));
}

}  // namespace onnx_tv
