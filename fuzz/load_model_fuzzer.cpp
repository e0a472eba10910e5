// Harness (a): the ONNX model loader on arbitrary bytes. Every model onnx-tv reads (spec and
// rank programs, eval's models) goes through parse_model, and whatever a file holds must end in
// a graph, an InputError or an Unsupported: protobuf, attributes, tensors (raw, typed, sparse,
// external), shapes and local functions.
#include <string>

#include "frontend/model_loader.h"
#include "harness.h"
#include "scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // External data is looked up next to the model's name: in an empty folder of our own, so
  // that a location names nothing unless the fuzzer writes a path to a real file.
  static const onnx_tv::fuzz::ScratchDir dir;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  onnx_tv::fuzz::expect_clean([&] {
    onnx_tv::frontend::parse_model(bytes, (dir.path() / "model.onnx").string());
  });
  return 0;
}
