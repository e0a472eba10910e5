// Harness (c): the whole check on tiny cases. One input packs a spec, a plan.json and up to
// four programs (sections.h); they are written to a scratch folder and checked as the CLI
// checks them, report included: any verdict is a proper answer, a crash, an InternalError or
// any other exception is not. Limits keep each input to milliseconds: an instance of more than
// kMaxElements tensor elements is UNKNOWN, as the CLI's --max-elements makes it.
#include <sstream>

#include "check/check.h"
#include "check/printable_result.h"
#include "check/report_json.h"
#include "check/report_text.h"
#include "common/printable.h"
#include "harness.h"
#include "scratch_dir.h"
#include "sections.h"

namespace onnx_tv::fuzz {
namespace {

constexpr size_t kMaxFiles = 6;  // spec.onnx, plan.json and four programs
constexpr int64_t kMaxElements = 20'000;
constexpr size_t kMaxMemory = size_t(1) << 30;

void check_case(const ScratchDir& dir) {
  check::CheckOptions options;
  options.max_elements = kMaxElements;
  options.max_memory = kMaxMemory;
  const std::string spec = (dir.path() / "spec.onnx").string();
  const std::string shards = (dir.path() / "shards").string();
  check::CheckResult result = check::run(spec, shards, options);  // an InternalError propagates: a bug
  // What the CLI does with the result must not fail either (check/printable_result.h).
  check::make_printable(result);
  std::ostringstream text;
  check::print_report(text, result);
  text << check::summary_line(result) << check::to_json(result, printable(spec), printable(shards));
}

}  // namespace
}  // namespace onnx_tv::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onnx_tv::fuzz;
  static const ScratchDir dir;
  dir.clear();
  dir.write("shards/.keep", "");  // the shards folder exists even when the input names no file
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  for (const Section& s : split_sections(input, kMaxFiles)) {
    dir.write(s.name == "spec.onnx" ? s.name : "shards/" + s.name, s.bytes);
  }
  expect_clean([&] { check_case(dir); });
  return 0;
}
