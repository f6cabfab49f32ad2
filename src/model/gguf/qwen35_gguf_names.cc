// Name tables of §6.2-6.3.
#include "model/gguf/qwen35_gguf_names.h"

#include "core/check.h"

namespace anchorage::model::gguf {

using qwen35::TensorRole;

bool is_qwen35_family(std::string_view arch) {
  return arch == "qwen35" || arch == "qwen35moe" || arch == "qwen3next";
}

bool arch_tiles_value_heads(std::string_view arch) {
  return arch == "qwen35" || arch == "qwen35moe";
}

std::string arch_key(std::string_view arch, std::string_view suffix) {
  return std::string(arch) + "." + std::string(suffix);
}

std::string layer_tensor_name(int64_t layer, std::string_view base) {
  return "blk." + std::to_string(layer) + "." + std::string(base);
}

std::string tensor_name(TensorRole role, int64_t layer) {
  switch (role) {
    case TensorRole::kEmbed:
      return "token_embd.weight";
    case TensorRole::kLmHead:
      return "output.weight";
    case TensorRole::kFinalNorm:
      return "output_norm.weight";
    default:
      break;
  }
  const char* base = nullptr;
  switch (role) {
    case TensorRole::kInputNorm:
      base = "attn_norm.weight";
      break;
    case TensorRole::kPostNorm:
      base = "post_attention_norm.weight";
      break;
    case TensorRole::kGdnQkv:
      base = "attn_qkv.weight";
      break;
    case TensorRole::kGdnZ:
      base = "attn_gate.weight";
      break;
    case TensorRole::kGdnB:
      base = "ssm_beta.weight";
      break;
    case TensorRole::kGdnA:
      base = "ssm_alpha.weight";
      break;
    case TensorRole::kGdnConv:
      base = "ssm_conv1d.weight";
      break;
    case TensorRole::kGdnDtBias:
      base = "ssm_dt.bias";
      break;
    case TensorRole::kGdnSsmA:
      base = "ssm_a";
      break;
    case TensorRole::kGdnNorm:
      base = "ssm_norm.weight";
      break;
    case TensorRole::kGdnOut:
      base = "ssm_out.weight";
      break;
    case TensorRole::kAttnQ:
      base = "attn_q.weight";
      break;
    case TensorRole::kAttnK:
      base = "attn_k.weight";
      break;
    case TensorRole::kAttnV:
      base = "attn_v.weight";
      break;
    case TensorRole::kAttnQNorm:
      base = "attn_q_norm.weight";
      break;
    case TensorRole::kAttnKNorm:
      base = "attn_k_norm.weight";
      break;
    case TensorRole::kAttnO:
      base = "attn_output.weight";
      break;
    case TensorRole::kFfnGate:
      base = "ffn_gate.weight";
      break;
    case TensorRole::kFfnUp:
      base = "ffn_up.weight";
      break;
    case TensorRole::kFfnDown:
      base = "ffn_down.weight";
      break;
    case TensorRole::kMoeRouter:
      base = "ffn_gate_inp.weight";
      break;
    case TensorRole::kMoeGateExps:
      base = "ffn_gate_exps.weight";
      break;
    case TensorRole::kMoeUpExps:
      base = "ffn_up_exps.weight";
      break;
    case TensorRole::kMoeDownExps:
      base = "ffn_down_exps.weight";
      break;
    case TensorRole::kMoeSharedGate:
      base = "ffn_gate_shexp.weight";
      break;
    case TensorRole::kMoeSharedUp:
      base = "ffn_up_shexp.weight";
      break;
    case TensorRole::kMoeSharedDown:
      base = "ffn_down_shexp.weight";
      break;
    case TensorRole::kMoeSharedScale:
      base = "ffn_gate_inp_shexp.weight";
      break;
    default:
      ANCHORAGE_CHECK_MSG(false, "tensor role without a GGUF name");
  }
  return layer_tensor_name(layer, base);
}

std::vector<int64_t> gguf_shape(const qwen35::Qwen35Config& c, const qwen35::TensorSlot& s) {
  switch (s.role) {
    case TensorRole::kGdnConv:
      return {c.linear_conv_kernel_dim, c.conv_dim()};
    case TensorRole::kMoeGateExps:
    case TensorRole::kMoeUpExps:
      return {c.hidden_size, c.moe_intermediate_size, c.num_experts};
    case TensorRole::kMoeDownExps:
      return {c.moe_intermediate_size, c.hidden_size, c.num_experts};
    default:
      break;
  }
  if (s.cols == 1) return {s.rows};
  return {s.cols, s.rows};
}

}  // namespace anchorage::model::gguf
