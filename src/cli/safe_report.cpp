#include "cli/safe_report.h"

#include <nlohmann/json.hpp>

#include "check/report_json.h"
#include "common/printable.h"

namespace onnx_tv::cli {

std::string internal_error_json(const std::string& message, const std::string& spec_path,
                                const std::string& shards_dir) {
  // The same keys as every other report, from the same writer; only the verdict differs.
  check::CheckResult empty;
  empty.message = printable(message);
  nlohmann::json j =
      nlohmann::json::parse(check::to_json(empty, printable(spec_path), printable(shards_dir)));
  j["verdict"] = "INTERNAL ERROR";
  j["exit_code"] = 4;
  return j.dump(2) + "\n";
}

}  // namespace onnx_tv::cli
