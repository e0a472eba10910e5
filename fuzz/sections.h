#pragma once
// The check harness reads one check case (a spec, a plan.json and a few rank programs) from one
// fuzz input. The files are packed as sections, each starting with a mark line:
//
//   \n@@file spec.onnx\n<bytes of spec.onnx>\n@@file plan.json\n<bytes of plan.json>...
//
// A mark rather than lengths, so that mutations which insert or delete bytes inside a file
// keep the other files whole (a length prefix would be broken by nearly every mutation), and
// a dictionary entry of the mark lets the fuzzer add a file. tools/fuzz/libfuzzer_seeds.py
// packs the bundled models this way.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace onnx_tv::fuzz {

constexpr std::string_view kSectionMark = "\n@@file ";

struct Section {
  std::string name;        // a plain file name: letters, digits, '.', '_', '-'
  std::string_view bytes;  // into the input
};

// The sections of `data`, in order, at most `max_sections`. Bytes before the first mark are
// ignored, and so is a section whose name is empty, longer than 64 bytes, starts with '.' or
// holds another character than those above (no paths leave the scratch folder).
std::vector<Section> split_sections(std::string_view data, size_t max_sections);

}  // namespace onnx_tv::fuzz
