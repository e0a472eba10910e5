// Strict JSON reading: plan-format section 4 makes unknown keys errors so that typos never
// pass silently, and every message says where in which file the bad item is.
#include <cstdint>

#include "common/errors.h"
#include "frontend/plan_detail.h"

namespace onnx_tv::frontend::detail {

namespace {

std::string shown(const Json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

}  // namespace

void json_fail(const std::string& where, const std::string& msg) {
  throw InputError(where + ": " + msg);
}

Json parse_json(const std::string& text, const std::string& where) {
  // Brackets inside strings do not nest; a string ends at an unescaped quote.
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        json_fail(where, "lists and objects nest more than " + std::to_string(kMaxJsonDepth) +
                             " levels deep (at byte " + std::to_string(i) + ")");
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error, or out_of_range for a number past 1e308
    json_fail(where, std::string("not valid JSON (") + e.what() + ")");
  }
}

void check_keys(const Json& obj, const std::string& where,
                std::initializer_list<const char*> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || it.key() == a;
    if (ok) continue;
    std::string list;
    for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
    json_fail(where, "unknown key '" + it.key() + "' (expected one of: " + list + ")");
  }
}

int64_t json_int(const Json& v, const std::string& where) {
  // Integers past 2^63 - 1 are held unsigned; they would wrap to negative numbers.
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) {
    json_fail(where, "the integer " + shown(v) + " is too large (at most 2^63 - 1)");
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  // 2.0 is written by some JSON emitters for an integer; accept exact integers only, and only
  // in the range where the conversion is defined.
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d >= -0x1p63 && d < 0x1p63 && d == double(int64_t(d))) return int64_t(d);
  }
  json_fail(where, "expected an integer, found " + shown(v));
}

std::string json_string(const Json& v, const std::string& where) {
  if (!v.is_string()) json_fail(where, "expected a string, found " + shown(v));
  return v.get<std::string>();
}

const Json& json_object(const Json& v, const std::string& where) {
  if (!v.is_object()) json_fail(where, "expected an object, found " + shown(v));
  return v;
}

const Json& json_array(const Json& v, const std::string& where) {
  if (!v.is_array()) json_fail(where, "expected a list, found " + shown(v));
  return v;
}

}  // namespace onnx_tv::frontend::detail
