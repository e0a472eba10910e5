// printable(): names from input files are shown escaped, never trusted to be UTF-8, and every
// error message passes through it.
#include "common/printable.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace onnx_tv {
namespace {

TEST(Printable, ValidUtf8IsUnchanged) {
  for (const std::string s : {"", "w_q_shard", "/layers.3/attn/MatMul_1", "größe", "日本語",
                              "emoji \xf0\x9f\x98\x80", "two\nlines\tand a tab"}) {
    EXPECT_EQ(printable(s), s);
  }
}

TEST(Printable, InvalidBytesAreEscaped) {
  EXPECT_EQ(printable("\xff"), "\\xff");
  EXPECT_EQ(printable("a\xc3"), "a\\xc3");                // truncated sequence
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");          // overlong '/'
  EXPECT_EQ(printable("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");  // overlong, 3 bytes
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-16 surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(printable("\x80x"), "\\x80x");                 // a stray continuation byte
}

TEST(Printable, ControlCharactersAreEscaped) {
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("\x1b[2J"), "\\x1b[2J");  // a terminal escape
  EXPECT_EQ(printable("\r\x7f"), "\\x0d\\x7f");
  EXPECT_EQ(printable("\xc2\x9b"), "\\xc2\\x9b");  // C1 control U+009B
  EXPECT_EQ(printable("\xc2\xa0"), "\xc2\xa0");    // U+00A0 is printable
}

TEST(Printable, IsIdempotent) {
  const std::string s = "x\xff\x1b\xc0\xaf y";
  EXPECT_EQ(printable(printable(s)), printable(s));
}

TEST(Printable, ErrorMessagesAreEscaped) {
  InputError e("rank0.onnx: no value named '\xfe\xff'");
  EXPECT_EQ(e.message(), "rank0.onnx: no value named '\\xfe\\xff'");
  e.add_context("the program of rank \xff");
  EXPECT_STREQ(e.what(), "the program of rank \\xff: rank0.onnx: no value named '\\xfe\\xff'");
}

}  // namespace
}  // namespace onnx_tv
