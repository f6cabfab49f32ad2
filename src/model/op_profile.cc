#include "model/op_profile.h"

namespace anchorage::model {

std::string_view op_kind_name(OpKind k) {
  static constexpr std::string_view kNames[] = {"embed",      "norm", "gemm", "conv",
                                                "gdn_gates",  "gdn",  "rope", "attention",
                                                "activation", "head"};
  return kNames[int(k)];
}

}  // namespace anchorage::model
