#pragma once
// Names in ONNX files (nodes, values, attributes, metadata) are arbitrary bytes: protobuf's
// proto2 strings are never checked to be UTF-8. Messages and reports quote them, and JSON
// writers reject invalid UTF-8, terminals obey control characters; so any text that came from
// an input file passes through printable() before it is shown.
#include <string>
#include <string_view>

namespace onnx_tv {

// `text` with every byte that is not part of valid UTF-8, and every control character except
// newline and tab, written as \xNN (two lowercase hex digits per byte). Valid UTF-8 without
// such characters is returned unchanged, so printable(printable(s)) == printable(s).
std::string printable(std::string_view text);

}  // namespace onnx_tv
