// Storage of the hash-consed nodes: interning, leaves and read-only queries.
#include <algorithm>

#include "solver/context_impl.h"

namespace onnx_tv::solver {

uint64_t hash_rational(const Rational& r) {
  auto limbs = [](mpz_srcptr z, uint64_t h) {
    size_t n = mpz_size(z);
    const mp_limb_t* p = mpz_limbs_read(z);
    h = hash_combine(h, uint64_t(mpz_sgn(z)) + 7);
    for (size_t i = 0; i < n; ++i) h = hash_combine(h, uint64_t(p[i]));
    return h;
  };
  return limbs(r.get_den_mpz_t(), limbs(r.get_num_mpz_t(), 0x51ed27));
}

void InternTable::insert(uint64_t hash, uint32_t id) {
  if ((count_ + 1) * 2 > slots_.size()) {
    std::vector<std::pair<uint64_t, uint32_t>, TableAllocator<std::pair<uint64_t, uint32_t>>> old;
    old.swap(slots_);
    slots_.assign(std::max<size_t>(64, old.size() * 2), {0, kNone});
    count_ = 0;
    for (const auto& s : old)
      if (s.second != kNone) insert(s.first, s.second);
  }
  size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  while (slots_[i].second != kNone) i = (i + 1) & mask;
  slots_[i] = {hash, id};
  ++count_;
}

void sort_and_combine(std::vector<Term>& terms) {
  std::sort(terms.begin(), terms.end(),
            [](const Term& a, const Term& b) { return a.first < b.first; });
  size_t out = 0;
  for (size_t i = 0; i < terms.size();) {
    size_t j = i + 1;
    while (j < terms.size() && terms[j].first == terms[i].first) {
      terms[i].second += terms[j].second;
      ++j;
    }
    if (sgn(terms[i].second) != 0) {
      if (out != i) terms[out] = std::move(terms[i]);
      ++out;
    }
    i = j;
  }
  terms.resize(out);
}

Context::Impl::Impl(Context& c) : ctx(c) {}

AtomId Context::Impl::intern_atom(AtomNode n) {
  uint64_t h = hash_combine(0xa70a, uint64_t(n.fn));
  for (PolyId p : n.args) h = hash_combine(h, p);
  const bool valued = n.fn == Fn::Pow || n.fn == Fn::Ind;
  if (valued) h = hash_combine(h, hash_rational(n.exponent));
  if (n.fn == Fn::Symbol || n.fn == Fn::Ind) h = hash_combine(h, std::hash<std::string>()(n.name));
  uint32_t found = atom_table.find(h, [&](uint32_t id) {
    const AtomNode& o = atoms[id];
    return o.fn == n.fn && o.args == n.args && o.name == n.name &&
           (!valued || o.exponent == n.exponent);
  });
  if (found != InternTable::kNone) return found;
  n.hash = h;
  // A definition is its polynomial, so it adds no function of its own; an indicator is a
  // function of an input that evaluates exactly.
  n.flags = n.fn == Fn::Symbol || n.fn == Fn::Ind ? kHasSymbol : n.fn == Fn::Def ? 0 : kHasFunction;
  if (n.fn == Fn::Max || n.fn == Fn::Min || n.fn == Fn::Abs) n.flags |= kHasExtreme;
  for (PolyId p : n.args) n.flags |= polys[p].flags & (kHasSymbol | kHasFunction | kHasExtreme);
  AtomId id = AtomId(atoms.size());
  atoms.push_back(std::move(n));
  atom_table.insert(h, id);
  return id;
}

MonoId Context::Impl::intern_mono(std::span<const Factor> factors, std::vector<Factor>* owned) {
  uint64_t h = 0x30a0;
  for (const auto& [a, e] : factors) h = hash_combine(hash_combine(h, a), e.hash());
  uint32_t found = mono_table.find(h, [&](uint32_t id) {
    const auto& f = monos[id].factors;
    return std::equal(f.begin(), f.end(), factors.begin(), factors.end());
  });
  if (found != InternTable::kNone) return found;
  MonoNode n;
  n.hash = h;
  for (const auto& [a, e] : factors) {
    n.flags |= atoms[a].flags & (kHasSymbol | kHasFunction | kHasExtreme | kSelectionFactor);
    if (irregular_factor(a, e)) n.flags |= kIrregular;
  }
  // Keeping simplifiable factors out of canonical monomials keeps forms unique.
  if (!(n.flags & kIrregular) && reducible_inv(factors, nullptr) != InternTable::kNone) n.flags |= kIrregular;
  if (!(n.flags & kIrregular) && exclusive_indicators(factors)) n.flags |= kIrregular;
  if (owned) n.factors = std::move(*owned);
  else n.factors.assign(factors.begin(), factors.end());
  MonoId id = MonoId(monos.size());
  monos.push_back(std::move(n));
  mono_table.insert(h, id);
  return id;
}

PolyId Context::Impl::intern_poly(std::vector<Term> terms) {
  uint64_t h = 0x9017;
  for (const auto& [m, c] : terms) h = hash_combine(hash_combine(h, m), c.hash());
  uint32_t found = poly_table.find(h, [&](uint32_t id) { return polys[id].terms == terms; });
  if (found != InternTable::kNone) return found;
  PolyNode n;
  n.hash = h;
  for (const auto& t : terms)
    n.flags |= monos[t.first].flags & (kHasSymbol | kHasFunction | kHasExtreme | kSelectionFactor);
  n.terms = std::move(terms);
  PolyId id = PolyId(polys.size());
  polys.push_back(std::move(n));
  poly_table.insert(h, id);
  return id;
}

bool Context::Impl::irregular_factor(AtomId a, const SmallRational& e) const {
  const AtomNode& at = atoms[a];
  switch (at.fn) {
    case Fn::Inv: return e.sign() < 0;
    case Fn::Sqrt: return e >= 2 || e <= -2;
    case Fn::Pow: return ::abs(Rational(e.to_rational() * at.exponent)) >= 1;
    case Fn::Ind: return e != SmallRational(1);  // [n = v]^2 = [n = v]
    default: return false;
  }
}

AtomId Context::Impl::reducible_inv(std::span<const Factor> factors, bool* second) const {
  if (factors.size() < 2) return InternTable::kNone;
  auto exponent_of = [&](AtomId a) -> SmallRational {
    auto it = std::lower_bound(factors.begin(), factors.end(), a,
                               [](const Factor& f, AtomId x) { return f.first < x; });
    return it != factors.end() && it->first == a ? it->second : SmallRational(0);
  };
  // Every factor of m occurs in the monomial at least (sign +1) or at most -1 times (sign -1).
  auto contains = [&](MonoId m, int sign) {
    const auto& fm = monos[m].factors;
    if (fm.empty()) return sign > 0;  // the empty monomial divides everything
    for (const auto& [b, eb] : fm)
      if (sign > 0 ? exponent_of(b) < eb : exponent_of(b) > -eb) return false;
    return true;
  };
  for (const auto& [a, e] : factors) {
    if (atoms[a].fn != Fn::Inv || e.sign() <= 0) continue;
    // q = m1 + b*m2 with coprime monomials of nonnegative exponents (a primitive binomial).
    const auto& q = polys[atoms[a].args[0]].terms;
    if (q.size() != 2) continue;
    // Rule A: m2 * inv(q) -> (1 - m1 inv(q)) / b. Rule B, for monomials holding m2^-1:
    // m1 * inv(q) -> 1 - b m2 inv(q). Both shrink the exponents of m2's atoms toward 0, so
    // rewriting ends, and a monomial can hold m2 or m2^-1 with inv(q) but not both m1 and m2^-1.
    if (contains(q[1].first, 1)) {
      if (second) *second = true;
      return a;
    }
    if (contains(q[1].first, -1) && contains(q[0].first, 1)) {
      if (second) *second = false;
      return a;
    }
  }
  return InternTable::kNone;
}

void merge_factors(std::span<const Factor> fa, std::span<const Factor> fb, std::vector<Factor>& out) {
  out.clear();
  size_t i = 0, j = 0;
  while (i < fa.size() || j < fb.size()) {
    if (j == fb.size() || (i < fa.size() && fa[i].first < fb[j].first)) {
      out.push_back(fa[i++]);
    } else if (i == fa.size() || fb[j].first < fa[i].first) {
      out.push_back(fb[j++]);
    } else {
      SmallRational e = fa[i].second + fb[j].second;
      if (e.sign() != 0) out.emplace_back(fa[i].first, std::move(e));
      ++i, ++j;
    }
  }
}

MonoId Context::Impl::mono_mul(MonoId a, MonoId b) {
  if (a == one_mono) return b;
  if (b == one_mono) return a;
  if (a > b) std::swap(a, b);
  if (MonoId hit = mono_mul_cache.find(a, b); hit != PairCache::kNone) return hit;
  merge_factors(monos[a].factors, monos[b].factors, mono_scratch);
  MonoId r = intern_mono(mono_scratch, nullptr);
  mono_mul_cache.insert(a, b, r);
  return r;
}

MonoId Context::Impl::mono_pow(MonoId a, const SmallRational& q) {
  if (q.sign() == 0) return one_mono;
  if (q == 1) return a;
  std::vector<Factor> out = monos[a].factors;
  for (auto& f : out) f.second = f.second * q;
  return intern_mono(std::move(out));
}

MonoId Context::Impl::mono_of_atom(AtomId a, const SmallRational& e) {
  if (e.sign() == 0) return one_mono;
  const Factor f{a, e};
  return intern_mono(std::span<const Factor>(&f, 1), nullptr);
}

PolyId Context::Impl::poly_of_atom(AtomId a) {
  return intern_poly({Term{mono_of_atom(a, 1), 1}});
}

Value Context::Impl::value_of_atom(AtomId a, const SmallRational& e) {
  return make({Term{mono_of_atom(a, e), 1}});
}

Value Context::Impl::term_value(MonoId m, const SmallRational& c) {
  if (sgn(c) == 0) return ctx.zero();
  return make({Term{m, c}});
}

AtomId Context::Impl::exp_one() {
  if (e_atom == InternTable::kNone) {
    AtomNode n;
    n.fn = Fn::Exp;
    n.args = {ctx.one_};
    e_atom = intern_atom(std::move(n));
  }
  return e_atom;
}

bool Context::Impl::is_rational(PolyId p) const {
  const auto& t = polys[p].terms;
  return t.empty() || (t.size() == 1 && t[0].first == one_mono);
}

bool Context::Impl::single_atom(PolyId p, AtomId* a, SmallRational* coef) const {
  const auto& t = polys[p].terms;
  if (t.size() != 1) return false;
  const auto& f = monos[t[0].first].factors;
  if (f.size() != 1 || f[0].second != 1) return false;
  if (a) *a = f[0].first;
  if (coef) *coef = t[0].second;
  return true;
}

// ---- Context: construction, leaves, queries ----

Context::Context() : impl_(std::make_unique<Impl>(*this)) {
  impl_->one_mono = impl_->intern_mono({});
  zero_ = impl_->intern_poly({});
  one_ = impl_->intern_poly({Term{impl_->one_mono, 1}});
}

Context::~Context() = default;

Value Context::constant(const Rational& r) {
  if (sgn(r) == 0) return zero();
  Rational c = r;
  c.canonicalize();
  return Value{impl_->intern_poly({Term{impl_->one_mono, SmallRational(c)}}), 0};
}

Value Context::constant(long long i) { return constant(Rational(static_cast<long>(i))); }

Value Context::symbol(const std::string& name) {
  auto it = impl_->symbols.find(name);
  AtomId a;
  if (it != impl_->symbols.end()) {
    a = it->second;
  } else {
    AtomNode n;
    n.fn = Fn::Symbol;
    n.name = name;
    a = impl_->intern_atom(std::move(n));
    impl_->symbols.emplace(name, a);
  }
  return Value{impl_->poly_of_atom(a), 0};
}

bool Context::is_constant(Value v) const {
  return !v.is_finite() || (impl_->polys[v.poly].flags & kHasSymbol) == 0;
}

bool Context::has_function(Value v) const {
  return v.is_finite() && (impl_->polys[v.poly].flags & kHasFunction) != 0;
}

bool Context::has_extreme(Value v) const {
  return v.is_finite() && (impl_->polys[v.poly].flags & kHasExtreme) != 0;
}

std::optional<Rational> Context::as_rational(Value v) const {
  if (!v.is_finite() || !impl_->is_rational(v.poly)) return std::nullopt;
  const auto& t = impl_->polys[v.poly].terms;
  return t.empty() ? Rational(0) : t[0].second.to_rational();
}

size_t Context::term_count(Value v) const {
  return v.is_finite() ? impl_->polys[v.poly].terms.size() : 0;
}

size_t Context::poly_term_count(PolyId p) const { return impl_->polys[p].terms.size(); }

TermView Context::term(PolyId p, size_t i) const {
  const Term& t = impl_->polys[p].terms[i];
  return TermView{std::span<const Factor>(impl_->monos[t.first].factors), &t.second, t.first};
}

AtomView Context::atom(AtomId a) const {
  const AtomNode& n = impl_->atoms[a];
  const bool ind = n.fn == Fn::Ind;
  return AtomView{n.fn, std::span<const PolyId>(n.args),
                  n.fn == Fn::Pow || ind ? &n.exponent : nullptr,
                  n.fn == Fn::Symbol || ind ? &n.name : nullptr};
}

size_t Context::atom_count() const { return impl_->atoms.size(); }
size_t Context::poly_count() const { return impl_->polys.size(); }

}  // namespace onnx_tv::solver
