#include "sections.h"

namespace onnx_tv::fuzz {

namespace {

bool plain_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::vector<Section> split_sections(std::string_view data, size_t max_sections) {
  std::vector<Section> out;
  size_t mark = data.find(kSectionMark);
  while (mark != std::string_view::npos && out.size() < max_sections) {
    const size_t name_start = mark + kSectionMark.size();
    const size_t name_end = data.find('\n', name_start);
    if (name_end == std::string_view::npos) break;
    // The bytes start after the name's newline; the next mark may start right there.
    const size_t start = name_end + 1;
    const size_t next = data.find(kSectionMark, start);
    const size_t end = next == std::string_view::npos ? data.size() : next;
    const std::string_view name = data.substr(name_start, name_end - name_start);
    if (plain_name(name)) out.push_back({std::string(name), data.substr(start, end - start)});
    mark = next;
  }
  return out;
}

}  // namespace onnx_tv::fuzz
