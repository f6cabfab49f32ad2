// Isa: the instruction sets the kernels are built for, the one this CPU supports, and the one
// in use. Every kernel family dispatches on active_isa(). Tests and benchmarks force a lower
// one with set_active_isa() (or the environment variable ANCHORAGE_ISA=scalar|avx2|avx512,
// read once at start). Call set_active_isa() only while no kernel runs.
#pragma once

#include <string_view>

namespace anchorage::core {

enum class Isa { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

std::string_view isa_name(Isa isa);
bool parse_isa(std::string_view s, Isa* out);

// The best ISA this CPU runs (AVX-512 needs F, BW, DQ and VL; AVX2 needs FMA too).
Isa detected_isa();
// True if this CPU has AVX-512 VNNI (vpdpbusd) and VBMI (vpermt2b): the integer-dot GEMM uses
// them under kAvx512, to the same bits as AVX2's vpmaddubsw path (kernels/quant_dot.h).
bool cpu_has_avx512_vnni();
// The ISA kernels use now: detected_isa() unless lowered by ANCHORAGE_ISA or set_active_isa().
Isa active_isa();
// Lowers (or restores) the active ISA; an ISA the CPU cannot run is clamped to detected_isa().
void set_active_isa(Isa isa);

}  // namespace anchorage::core
