// docs/limits.md lists every entry of the limits table (common/limits.h) with its value.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "common/limits.h"

namespace onnx_tv {
namespace {

TEST(Limits, DocsListEveryLimitWithItsValue) {
  std::ifstream in(std::string(ONNX_TV_SOURCE_DIR) + "/docs/limits.md");
  ASSERT_TRUE(in) << "docs/limits.md";
  std::stringstream text;
  text << in.rdbuf();
  std::string line;
  for (const limits::Entry& e : limits::kAll) {
    const std::string row = "| `" + std::string(e.name) + "` | " + std::to_string(e.value) + " |";
    EXPECT_NE(text.str().find(row), std::string::npos) << "docs/limits.md lacks the row " << row;
  }
}

}  // namespace
}  // namespace onnx_tv
