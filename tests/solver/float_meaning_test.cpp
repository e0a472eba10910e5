#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "solver/rational.h"

namespace onnx_tv::solver {
namespace {

double from_f32(float f) { return double(f); }

// Decoders from raw bits, so tests can walk to neighbouring values of the small formats.
double decode_f16(uint16_t b) {
  int sign = b >> 15, e = (b >> 10) & 31, m = b & 1023;
  double v = e == 0 ? std::ldexp(double(m), -24) : std::ldexp(double(m | 1024), e - 25);
  return sign ? -v : v;
}
double decode_bf16(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
double decode_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void expect_meaning(double v, FloatFormat f, const char* expected) {
  Rational got = float_meaning(v, f);
  EXPECT_EQ(got, Rational(expected)) << "input " << v << " (format " << int(f) << "): got "
                                     << got.get_str() << ", expected " << expected;
}

TEST(FloatMeaning, CommonFloat32Constants) {
  expect_meaning(from_f32(0.33333334f), FloatFormat::Float32, "1/3");
  expect_meaning(from_f32(0.1f), FloatFormat::Float32, "1/10");
  expect_meaning(from_f32(1e-5f), FloatFormat::Float32, "1/100000");
  expect_meaning(from_f32(1e-6f), FloatFormat::Float32, "1/1000000");
  expect_meaning(from_f32(0.7f), FloatFormat::Float32, "7/10");
  expect_meaning(from_f32(-0.1f), FloatFormat::Float32, "-1/10");
  expect_meaning(from_f32(0.125f), FloatFormat::Float32, "1/8");
  expect_meaning(from_f32(0.044715f), FloatFormat::Float32, "404/9035");  // the simplest, not the decimal
  // sqrt(2/pi): 3470/4349 rounds to it too, but 4349^2 * 2^-24 > 1, so it means itself.
  EXPECT_EQ(float_meaning(from_f32(0.7978845608f), FloatFormat::Float32),
            Rational(double(0.7978845608f)));
}

// The examples of plan-format section 1: a meaning that does not depend on the type that
// wrote the number.
TEST(FloatMeaning, ContractExamplesAreUniqueAcrossTypes) {
  expect_meaning(std::ldexp(1.0, -12), FloatFormat::Float16, "1/4096");  // not 1/4095
  expect_meaning(from_f32(1.0f / 4095), FloatFormat::Float32, "1/4095");
  expect_meaning(std::ldexp(1.0, -9), FloatFormat::BFloat16, "1/512");  // not 1/511
  expect_meaning(0.0208740234375, FloatFormat::BFloat16, "1/48");       // bfloat16(1/48)
  expect_meaning(std::ldexp(1.0, -12), FloatFormat::Float32, "1/4096");
  expect_meaning(0.000244140625, FloatFormat::BFloat16, "1/4096");
  // float16(1/4096) and float32(1/4095) are different numbers; so are their meanings.
  EXPECT_NE(float_meaning(std::ldexp(1.0, -12), FloatFormat::Float16),
            float_meaning(from_f32(1.0f / 4095), FloatFormat::Float32));
}

TEST(FloatMeaning, SimpleValuesInAllFormats) {
  for (FloatFormat f : {FloatFormat::Float16, FloatFormat::BFloat16, FloatFormat::Float32,
                        FloatFormat::Float64}) {
    expect_meaning(0.5, f, "1/2");
    expect_meaning(-0.25, f, "-1/4");
    expect_meaning(0.0, f, "0");
    expect_meaning(-0.0, f, "0");
    expect_meaning(3.0, f, "3");
    expect_meaning(-7.0, f, "-7");
    expect_meaning(1.0, f, "1");
  }
  expect_meaning(0.1, FloatFormat::Float64, "1/10");
  expect_meaning(1.0 / 3.0, FloatFormat::Float64, "1/3");
  expect_meaning(0.0999755859375, FloatFormat::Float16, "1/10");   // half(0.1)
  expect_meaning(0.333251953125, FloatFormat::Float16, "1/3");     // half(1/3)
  expect_meaning(0.10009765625, FloatFormat::BFloat16, "1/10");    // bfloat16(0.1)
  expect_meaning(0.333984375, FloatFormat::BFloat16, "1/3");       // bfloat16(1/3)
}

TEST(FloatMeaning, IntegersAndHugeValuesMeanThemselves) {
  expect_meaning(65504.0, FloatFormat::Float16, "65504");  // largest half
  expect_meaning(2048.0, FloatFormat::Float16, "2048");
  expect_meaning(3.3895313892515355e38, FloatFormat::BFloat16,
                 "338953138925153547590470800371487866880");
  double fmax = double(std::numeric_limits<float>::max());
  Rational got = float_meaning(fmax, FloatFormat::Float32);
  EXPECT_EQ(got, Rational(fmax)) << "largest float32: got " << got.get_str();
  double dmax = std::numeric_limits<double>::max();
  EXPECT_EQ(float_meaning(dmax, FloatFormat::Float64), Rational(dmax));
  EXPECT_EQ(float_meaning(-dmax, FloatFormat::Float64), Rational(-dmax));
  EXPECT_EQ(float_meaning(1e20, FloatFormat::Float64), Rational(1e20));
}

TEST(FloatMeaning, SubnormalsStayInTheirInterval) {
  double tiny32 = decode_f32(1);  // 2^-149
  Rational r = float_meaning(tiny32, FloatFormat::Float32);
  EXPECT_GT(r, Rational(tiny32) / 2) << r.get_str();
  EXPECT_LT(r, Rational(tiny32) * 3 / 2) << r.get_str();
  EXPECT_EQ(r.get_num(), 1) << r.get_str();
  double tiny16 = decode_f16(1);  // 2^-24
  Rational h = float_meaning(tiny16, FloatFormat::Float16);
  EXPECT_GT(h, Rational(tiny16) / 2) << h.get_str();
  EXPECT_LT(h, Rational(tiny16) * 3 / 2) << h.get_str();
  double tiny64 = std::numeric_limits<double>::denorm_min();
  Rational d = float_meaning(tiny64, FloatFormat::Float64);
  EXPECT_GT(d, Rational(tiny64) / 2);
  EXPECT_LT(d, Rational(tiny64) * 3 / 2);
  // Subnormal grid: two neighbours must not share a meaning.
  EXPECT_NE(float_meaning(decode_f16(3), FloatFormat::Float16),
            float_meaning(decode_f16(4), FloatFormat::Float16));
}

TEST(FloatMeaning, RejectsValuesOutsideTheFormat) {
  EXPECT_THROW(float_meaning(0.1, FloatFormat::Float32), std::exception);
  EXPECT_THROW(float_meaning(INFINITY, FloatFormat::Float32), std::exception);
}

// The defining property, checked on the real neighbours of each value: the meaning lies in
// the rounding interval (midpoints included only for even significands); it is a p/q with
// q*q*w < 1 (w the interval's width) and no rational of smaller denominator lies there, or
// else it is the exact binary value and no p/q with q*q*w < 1 lies there.
bool in_interval(const Rational& c, const Rational& lo, const Rational& hi, bool even) {
  return even ? (c >= lo && c <= hi) : (c > lo && c < hi);
}

void check_property(double v, double below, double above, bool even, FloatFormat f,
                    long max_den = 2000) {
  Rational r = float_meaning(v, f);
  Rational lo = (Rational(v) + Rational(below)) / 2, hi = (Rational(v) + Rational(above)) / 2;
  const Rational w = hi - lo;
  ASSERT_TRUE(in_interval(r, lo, hi, even))
      << "input " << v << ": got " << r.get_str() << " outside [" << lo.get_str() << ", "
      << hi.get_str() << "]";
  const bool simple = Rational(r.get_den() * r.get_den()) * w < 1;
  if (!simple)
    ASSERT_EQ(r, Rational(v)) << "input " << v << ": " << r.get_str()
                              << " is not simple enough for its interval, yet not the value";
  // No denominator below the meaning's (when simple), or with d*d*w < 1 (when not), fits.
  for (long d = 1; d <= max_den; ++d) {
    if (simple ? d >= r.get_den().get_si() : Rational(d * d) * w >= 1) break;
    mpz_class n = mpz_class(lo * d);  // truncation; try the neighbours
    for (mpz_class k = n - 1; k <= n + 1; ++k) {
      Rational c(k, d);
      c.canonicalize();
      ASSERT_FALSE(in_interval(c, lo, hi, even))
          << "input " << v << ": got " << r.get_str() << " but " << c.get_str() << " fits";
    }
  }
}

TEST(FloatMeaning, RandomFloat32ValuesMeetTheDefinition) {
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    uint32_t bits = rng() & 0x7f7fffff;  // finite, positive
    if (bits == 0) continue;
    double v = decode_f32(bits);
    bool even = (bits & 1) == 0;
    check_property(v, decode_f32(bits - 1), decode_f32(bits + 1), even, FloatFormat::Float32);
    EXPECT_EQ(float_meaning(-v, FloatFormat::Float32), -float_meaning(v, FloatFormat::Float32));
  }
}

TEST(FloatMeaning, AllFloat16AndBFloat16ValuesMeetTheDefinition) {
  Rational previous = -1;
  for (uint16_t b = 1; b < 0x7c00; ++b) {
    double v = decode_f16(b);
    check_property(v, decode_f16(b - 1), decode_f16(b + 1), (b & 1) == 0, FloatFormat::Float16, 200);
    Rational r = float_meaning(v, FloatFormat::Float16);
    ASSERT_GT(r, previous) << "meanings must grow strictly with the value, at " << v;
    previous = r;
  }
  for (uint16_t b = 1; b < 0x7f80; b += 3) {
    double v = decode_bf16(b);
    check_property(v, decode_bf16(b - 1), decode_bf16(b + 1), (b & 1) == 0, FloatFormat::BFloat16, 200);
  }
}

TEST(FloatMeaning, HelpersPrintAndConvert) {
  EXPECT_EQ(to_string(Rational(1, 3)), "1/3");
  EXPECT_EQ(to_string(Rational(-4)), "-4");
  EXPECT_EQ(as_int64(Rational(-4)), -4);
  EXPECT_EQ(as_int64(Rational(1, 2)), std::nullopt);
  EXPECT_EQ(as_int64(Rational(mpz_class("100000000000000000000"))), std::nullopt);
  EXPECT_EQ(as_int64(Rational(mpz_class("9223372036854775807"))), 9223372036854775807LL);
}

}  // namespace
}  // namespace onnx_tv::solver
