#include "text/tool_call_id.h"

namespace anchorage::text {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): one multiply-xorshift finaliser is enough to spread a
// counter over 64 bits; ids need to be distinct, not secret.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void append_hex(std::uint64_t v, int n_digits, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = n_digits - 1; i >= 0; --i) out->push_back(kHex[(v >> (4 * i)) & 0xf]);
}

}  // namespace

std::string make_tool_call_id(std::uint64_t seed, std::size_t index) {
  const std::uint64_t a = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(index)));
  const std::uint64_t b = splitmix64(a);
  std::string id = "call_";
  append_hex(a, 16, &id);
  append_hex(b, 8, &id);
  return id;
}

}  // namespace anchorage::text
