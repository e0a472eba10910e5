#include "cli/options.h"

#include <gtest/gtest.h>

namespace onnx_tv::cli {
namespace {

TEST(OptionValue, TakesTheNextArgument) {
  const std::vector<std::string> args = {"--json", "report.json", "--no-reduce"};
  size_t i = 0;
  EXPECT_EQ(option_value(args, i), "report.json");
  EXPECT_EQ(i, 1u);
}

// A file may be called "-", or start with one dash; only "--" marks an option.
TEST(OptionValue, OneDashIsAValue) {
  const std::vector<std::string> args = {"--out", "-"};
  size_t i = 0;
  EXPECT_EQ(option_value(args, i), "-");
}

TEST(OptionValue, RefusesAnOptionOrNothing) {
  const std::vector<std::string> args = {"--json", "--no-reduce", "--seed"};
  size_t i = 0;
  EXPECT_EQ(option_value(args, i), std::nullopt);
  EXPECT_EQ(i, 0u);
  EXPECT_EQ(missing_value(args, i, "a file name"),
            "--json needs a file name, not the option '--no-reduce'");
  i = 2;
  EXPECT_EQ(option_value(args, i), std::nullopt);
  EXPECT_EQ(missing_value(args, i, "a number"), "--seed needs a number");
}

}  // namespace
}  // namespace onnx_tv::cli
