#pragma once
// Options that take a value. A value that is itself an option is refused: with it,
// "--json --no-reduce" would write the report to a file named "--no-reduce" and check at
// full size without a word.
#include <optional>
#include <string>
#include <vector>

namespace onnx_tv::cli {

// The value of the option args[i], advancing i past it; nullopt (i unchanged) when there is
// none: no next argument, or one that starts with "--".
inline std::optional<std::string> option_value(const std::vector<std::string>& args, size_t& i) {
  if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) return std::nullopt;
  return args[++i];
}

// The usage error for option args[i] when option_value found no value: "--json needs a file
// name", and what stood in its place.
inline std::string missing_value(const std::vector<std::string>& args, size_t i,
                                 const std::string& what) {
  std::string msg = args[i] + " needs " + what;
  if (i + 1 < args.size()) msg += ", not the option '" + args[i + 1] + "'";
  return msg;
}

}  // namespace onnx_tv::cli
