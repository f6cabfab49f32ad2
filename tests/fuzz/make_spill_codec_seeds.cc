// Writes the spill codec fuzzer's seeds (tests/corpus/spill_codec/): for each kind, element
// size 2 and 4 and both zstd part layouts, a small frame of f32-like numbers with several
// segments and a tail (mode "even": 0x00 then the frame), and the same numbers as raw data for
// the round-trip mode (0x01, kind, elem_bytes - 1, option bits, data).
// Usage: make_spill_codec_seeds DIR (built by tests/fuzz/CMakeLists.txt; run by hand).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cache/spill_codec.h"

using anchorage::cache::SpillCodecKind;

namespace {

void write(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];
  std::vector<uint8_t> data(9003, 0);
  uint32_t x = 12345;
  for (size_t i = 2000; i + 4 <= data.size(); i += 4) {
    x = x * 1664525u + 1013904223u;
    const float v = 0.5f + float(x >> 22) / 1024.0f;
    std::memcpy(&data[i], &v, 4);
  }
  int k = 0;
  for (SpillCodecKind kind :
       {SpillCodecKind::kNone, SpillCodecKind::kZstd, SpillCodecKind::kBlosc}) {
    for (size_t e : {size_t(2), size_t(4)}) {
      for (bool planes : {true, false}) {
        anchorage::cache::SpillCodecOptions o;
        o.segment_bytes = 4096;
        o.frame_per_plane = planes;
        std::vector<uint8_t> frame;
        if (!anchorage::cache::spill_encode(kind, data.data(), data.size(), e, frame, o).is_ok())
          return 1;
        frame.insert(frame.begin(), 0x00);
        write(dir + "/frame-" + std::to_string(k), frame);
        std::vector<uint8_t> raw = {0x01, uint8_t(kind), uint8_t(e - 1),
                                    uint8_t(planes ? 0 : 0x10)};
        raw.insert(raw.end(), data.begin(), data.end());
        write(dir + "/data-" + std::to_string(k), raw);
        ++k;
      }
    }
  }
  return 0;
}
