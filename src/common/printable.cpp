#include "common/printable.h"

#include <cstdint>

namespace onnx_tv {

namespace {

// The length of the valid UTF-8 sequence starting at s[i] (1 to 4), or 0 when the bytes there
// are not one: a stray continuation byte, a truncated sequence, an overlong form, a UTF-16
// surrogate, or a code point past U+10FFFF.
size_t utf8_length(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return uint8_t(s[k]); };
  const uint8_t b = at(i);
  if (b < 0x80) return 1;
  size_t n = 0;
  uint8_t lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (b >= 0xc2 && b <= 0xdf) {
    n = 2;
  } else if (b >= 0xe0 && b <= 0xef) {
    n = 3;
    if (b == 0xe0) lo = 0xa0;  // overlong
    if (b == 0xed) hi = 0x9f;  // surrogates
  } else if (b >= 0xf0 && b <= 0xf4) {
    n = 4;
    if (b == 0xf0) lo = 0x90;  // overlong
    if (b == 0xf4) hi = 0x8f;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xbf) return 0;
  }
  return n;
}

void escape(std::string& out, uint8_t b) {
  static const char* hex = "0123456789abcdef";
  out += "\\x";
  out += hex[b >> 4];
  out += hex[b & 15];
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_length(text, i);
    const uint8_t b = uint8_t(text[i]);
    const bool c0 = n == 1 && (b < 0x20 || b == 0x7f) && b != '\n' && b != '\t';
    const bool c1 = n == 2 && b == 0xc2 && uint8_t(text[i + 1]) < 0xa0;  // U+0080..U+009F
    if (n == 0 || c0 || c1) {
      const size_t bytes = c1 ? 2 : 1;
      for (size_t k = 0; k < bytes; ++k) escape(out, uint8_t(text[i + k]));
      i += bytes;
      continue;
    }
    out.append(text, i, n);
    i += n;
  }
  return out;
}

}  // namespace onnx_tv
