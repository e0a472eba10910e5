// Strict JSON reading: plan-format section 4 makes unknown keys errors so that typos never
// pass silently, and every message says where in which file the bad item is.
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
  if (v.is_number_integer()) return v.get<int64_t>();
  // 2.0 is written by some JSON emitters for an integer; accept exact integers only.
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d == double(int64_t(d))) return int64_t(d);
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
