// Rng: a small deterministic generator (xoshiro256** seeded through splitmix64). Random weights
// and seeded sampling use it, so the same seed gives the same bits on every machine: no
// std::*_distribution (their algorithms differ between standard libraries).
#pragma once

#include <cmath>
#include <cstdint>

namespace anchorage::core {

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      w = z ^ (z >> 31);
    }
  }

  uint64_t next_u64() {
    uint64_t r = rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }

  // Uniform in [0, 1), 53 random bits.
  double uniform() { return double(next_u64() >> 11) * 0x1.0p-53; }

  // Standard normal by Box-Muller (cos branch only, so one call = two uniforms).
  double normal() {
    double u1 = uniform();
    double u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace anchorage::core
