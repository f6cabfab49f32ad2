#include "core/isa.h"

#include <atomic>
#include <cstdlib>

namespace anchorage::core {

namespace {

Isa detect() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("fma")) {
    return Isa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
  return Isa::kScalar;
}

Isa clamp(Isa want) {
  return int(want) > int(detected_isa()) ? detected_isa() : want;
}

std::atomic<int>& active() {
  static std::atomic<int> isa = [] {
    Isa best = detected_isa();
    const char* env = std::getenv("ANCHORAGE_ISA");
    Isa want;
    if (env && parse_isa(env, &want)) best = clamp(want);
    return int(best);
  }();
  return isa;
}

}  // namespace

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "?";
}

bool parse_isa(std::string_view s, Isa* out) {
  if (s == "scalar")
    *out = Isa::kScalar;
  else if (s == "avx2")
    *out = Isa::kAvx2;
  else if (s == "avx512")
    *out = Isa::kAvx512;
  else
    return false;
  return true;
}

Isa detected_isa() {
  static const Isa isa = detect();
  return isa;
}

bool cpu_has_avx512_vnni() {
  static const bool has = [] {
    __builtin_cpu_init();
    return detected_isa() == Isa::kAvx512 && __builtin_cpu_supports("avx512vnni") &&
           __builtin_cpu_supports("avx512vbmi");
  }();
  return has;
}

Isa active_isa() {
  return Isa(active().load(std::memory_order_relaxed));
}

void set_active_isa(Isa isa) {
  active().store(int(clamp(isa)), std::memory_order_relaxed);
}

}  // namespace anchorage::core
