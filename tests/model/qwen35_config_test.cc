// Qwen35Config: HF config.json parsing (docs/model.md §1.1-§1.2), validation errors
// that name the field, presets and their derived sizes (§1.3-§1.5, §7.15).
#include <gtest/gtest.h>

#include <string>

#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"

namespace anchorage::model::qwen35 {
namespace {

using core::StatusCode;

// The shape of the real Qwen/Qwen3.5-9B config.json (§1.1): the language model under
// text_config, RoPE under rope_parameters, tie_word_embeddings at the top level.
const char* kQwen35NineB = R"({
  "architectures": ["Qwen3_5ForConditionalGeneration"],
  "model_type": "qwen3_5",
  "image_token_id": 248056,
  "tie_word_embeddings": false,
  "eos_token_id": 248046,
  "text_config": {
    "model_type": "qwen3_5_text",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention",
                    "linear_attention", "linear_attention", "linear_attention", "full_attention",
                    "linear_attention", "linear_attention", "linear_attention", "full_attention",
                    "linear_attention", "linear_attention", "linear_attention", "full_attention",
                    "linear_attention", "linear_attention", "linear_attention", "full_attention",
                    "linear_attention", "linear_attention", "linear_attention", "full_attention",
                    "linear_attention", "linear_attention", "linear_attention", "full_attention",
                    "linear_attention", "linear_attention", "linear_attention", "full_attention"],
    "full_attention_interval": 4,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
    "num_attention_heads": 16,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000000,
                        "partial_rotary_factor": 0.25, "mrope_section": [11, 11, 10],
                        "mrope_interleaved": true},
    "rms_norm_eps": 1e-06,
    "intermediate_size": 12288,
    "hidden_act": "silu",
    "attention_bias": false,
    "attn_output_gate": true,
    "mamba_ssm_dtype": "float32",
    "vocab_size": 248320,
    "max_position_embeddings": 262144,
    "mtp_num_hidden_layers": 1,
    "eos_token_id": 248044
  },
  "vision_config": {"depth": 27}
})";

// Qwen3-Next-80B-A3B style: every field at the top level, flat rope keys, no layer_types,
// no partial_rotary_factor (default 0.25), MoE FFN.
std::string qwen3_next_config(int num_experts) {
  return std::string(R"({
  "architectures": ["Qwen3NextForCausalLM"],
  "model_type": "qwen3_next",
  "hidden_size": 2048,
  "num_hidden_layers": 48,
  "full_attention_interval": 4,
  "linear_num_key_heads": 16,
  "linear_num_value_heads": 32,
  "linear_key_head_dim": 128,
  "linear_value_head_dim": 128,
  "linear_conv_kernel_dim": 4,
  "num_attention_heads": 16,
  "num_key_value_heads": 2,
  "head_dim": 256,
  "rope_theta": 5000000,
  "rms_norm_eps": 1e-06,
  "intermediate_size": 5120,
  "num_experts": )") +
         std::to_string(num_experts) + R"(,
  "num_experts_per_tok": 10,
  "moe_intermediate_size": 512,
  "shared_expert_intermediate_size": 512,
  "norm_topk_prob": true,
  "decoder_sparse_step": 1,
  "mlp_only_layers": [],
  "hidden_act": "silu",
  "tie_word_embeddings": false,
  "vocab_size": 151936,
  "bos_token_id": 151643,
  "eos_token_id": 151645
})";
}

TEST(Qwen35Config, ParsesNestedQwen35Config) {
  auto c = parse_hf_config(kQwen35NineB);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  EXPECT_EQ(c->model_type, "qwen3_5_text");
  EXPECT_EQ(c->hidden_size, 4096);
  EXPECT_EQ(c->num_hidden_layers, 32);
  EXPECT_EQ(c->linear_num_key_heads, 16);
  EXPECT_EQ(c->linear_num_value_heads, 32);
  EXPECT_EQ(c->r(), 2);
  EXPECT_EQ(c->key_dim(), 2048);
  EXPECT_EQ(c->value_dim(), 4096);
  EXPECT_EQ(c->conv_dim(), 8192);
  EXPECT_EQ(c->num_attention_heads, 16);
  EXPECT_EQ(c->num_key_value_heads, 4);
  EXPECT_EQ(c->head_dim, 256);
  EXPECT_EQ(c->rotary_dim(), 64);
  EXPECT_DOUBLE_EQ(c->rope_theta, 1e7);
  EXPECT_DOUBLE_EQ(c->rms_norm_eps, 1e-6);
  EXPECT_EQ(c->intermediate_size, 12288);
  EXPECT_EQ(c->vocab_size, 248320);
  EXPECT_FALSE(c->tie_word_embeddings);
  EXPECT_FALSE(c->value_heads_tiled);
  EXPECT_EQ(c->n_full_layers(), 8);
  EXPECT_EQ(c->n_linear_layers(), 24);
  EXPECT_EQ(c->mtp_num_hidden_layers, 1);
  // Both eos ids are kept (§1.2: stop on both).
  EXPECT_EQ(c->eos_token_ids, (std::vector<int64_t>{248044, 248046}));
  // §1.5: 4B/9B KV 32 KiB (fp16) / 64 KiB (fp32) a token; S 48 MiB.
  EXPECT_EQ(c->kv_bytes_per_token(core::DType::kBF16), 32 * 1024);
  EXPECT_EQ(c->kv_bytes_per_token(core::DType::kF32), 64 * 1024);
  EXPECT_EQ(c->gdn_state_bytes(), 48ll * 1024 * 1024);
}

TEST(Qwen35Config, TopLevelTieWordEmbeddingsWinsForQwen35) {
  std::string j = kQwen35NineB;
  j.replace(j.find("\"tie_word_embeddings\": false"), 28, "\"tie_word_embeddings\": true");
  auto c = parse_hf_config(j);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  EXPECT_TRUE(c->tie_word_embeddings);
}

TEST(Qwen35Config, LayerTypesAreAuthoritative) {
  std::string j = kQwen35NineB;
  // Make layer 0 full attention; the interval rule would say linear.
  j.replace(j.find("\"linear_attention\""), 18, "\"full_attention\"");
  auto c = parse_hf_config(j);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  EXPECT_TRUE(c->is_full_attention(0));
  EXPECT_EQ(c->n_full_layers(), 9);
}

TEST(Qwen35Config, RopeParametersBeforeFlatKeys) {
  std::string j = kQwen35NineB;
  j.replace(j.find("\"rms_norm_eps\""), 0, "\"rope_theta\": 5, \"partial_rotary_factor\": 0.5, ");
  auto c = parse_hf_config(j);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  EXPECT_DOUBLE_EQ(c->rope_theta, 1e7);
  EXPECT_DOUBLE_EQ(c->partial_rotary_factor, 0.25);
  // Without them in rope_parameters the flat keys are used.
  j.replace(j.find("\"rope_theta\": 10000000,"), 23, "");
  j.replace(j.find("\"partial_rotary_factor\": 0.25,"), 30, "");
  c = parse_hf_config(j);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  EXPECT_DOUBLE_EQ(c->rope_theta, 5);
  EXPECT_DOUBLE_EQ(c->partial_rotary_factor, 0.5);
  EXPECT_EQ(c->rotary_dim(), 128);
}

// §1.2, §4.3: Qwen3-Next's MoE fields; every layer is MoE (step 1, no mlp_only_layers).
TEST(Qwen35Config, ParsesQwen3NextMoe) {
  auto c = parse_hf_config(qwen3_next_config(512));
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  EXPECT_EQ(c->num_experts, 512);
  EXPECT_EQ(c->num_experts_per_tok, 10);
  EXPECT_EQ(c->moe_intermediate_size, 512);
  EXPECT_EQ(c->shared_expert_intermediate_size, 512);
  EXPECT_TRUE(c->norm_topk_prob);
  for (int64_t l = 0; l < 48; ++l) EXPECT_TRUE(c->is_moe_layer(l)) << l;
  // Qwen3-Next-80B-A3B: ~80B parameters without the MTP block.
  EXPECT_GT(c->n_parameters(), 78'000'000'000);
  EXPECT_LT(c->n_parameters(), 81'000'000'000);
}

// §1.2: a layer is dense when listed in mlp_only_layers or off the decoder_sparse_step grid.
TEST(Qwen35Config, MoeLayerSchedule) {
  std::string j = qwen3_next_config(8);
  j.replace(j.find("\"decoder_sparse_step\": 1"), 24, "\"decoder_sparse_step\": 2");
  j.replace(j.find("\"mlp_only_layers\": []"), 21, "\"mlp_only_layers\": [5]");
  j.replace(j.find("\"num_experts_per_tok\": 10"), 25, "\"num_experts_per_tok\": 2");
  auto c = parse_hf_config(j);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  for (int64_t l = 0; l < 48; ++l) EXPECT_EQ(c->is_moe_layer(l), l % 2 == 1 && l != 5) << l;
  // Too many experts per token, or a MoE model without an expert width, are refused.
  c->num_experts_per_tok = 9;
  EXPECT_NE(c->validate().message().find("num_experts_per_tok"), std::string::npos);
  c->num_experts_per_tok = 2;
  c->moe_intermediate_size = 0;
  EXPECT_NE(c->validate().message().find("moe_intermediate_size"), std::string::npos);
  // A MoE-only model needs no intermediate_size.
  auto moe = qwen35_preset("tiny-moe");
  ASSERT_TRUE(moe.has_value()) << moe.error().to_string();
  EXPECT_EQ(moe->intermediate_size, 0);
  EXPECT_TRUE(moe->is_moe_layer(0));
}

TEST(Qwen35Config, ParsesFlatQwen3NextFields) {
  auto c = parse_hf_config(qwen3_next_config(0));
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  EXPECT_EQ(c->model_type, "qwen3_next");
  EXPECT_EQ(c->hidden_size, 2048);
  EXPECT_EQ(c->num_hidden_layers, 48);
  EXPECT_DOUBLE_EQ(c->rope_theta, 5e6);
  EXPECT_DOUBLE_EQ(c->partial_rotary_factor, 0.25);  // absent: HF's default
  EXPECT_EQ(c->rotary_dim(), 64);
  EXPECT_EQ(c->num_experts_per_tok, 10);
  EXPECT_EQ(c->moe_intermediate_size, 512);
  EXPECT_EQ(c->shared_expert_intermediate_size, 512);
  EXPECT_TRUE(c->norm_topk_prob);
  EXPECT_EQ(c->eos_token_ids, (std::vector<int64_t>{151645}));
  // §1.2 interval rule: layers 3, 7, 11, ... are full attention, nothing else.
  for (int64_t l = 0; l < 48; ++l) EXPECT_EQ(c->is_full_attention(l), (l + 1) % 4 == 0) << l;
  EXPECT_EQ(c->n_full_layers(), 12);
  EXPECT_EQ(c->kv_bytes_per_token(core::DType::kBF16), 24 * 1024);  // §1.5: 24 KiB
  EXPECT_EQ(c->gdn_state_bytes(), 72ll * 1024 * 1024);              // §1.5: 72 MiB
}

// Each bad config must be refused with a message naming the field.
struct BadConfig {
  const char* what;
  std::string from;
  std::string to;
  StatusCode code;
  const char* field;
};

TEST(Qwen35Config, ErrorsNameTheField) {
  const std::vector<BadConfig> cases = {
      {"value heads not a multiple of key heads", "\"linear_num_value_heads\": 32",
       "\"linear_num_value_heads\": 24", StatusCode::kInvalidArgument, "linear_num_value_heads"},
      {"missing head_dim", "\"head_dim\": 256,", "", StatusCode::kInvalidArgument, "head_dim"},
      {"string where an integer belongs", "\"hidden_size\": 4096", "\"hidden_size\": \"4096\"",
       StatusCode::kInvalidArgument, "hidden_size"},
      {"zero heads", "\"num_key_value_heads\": 4", "\"num_key_value_heads\": 0",
       StatusCode::kInvalidArgument, "num_key_value_heads"},
      {"query heads not a multiple of kv heads", "\"num_attention_heads\": 16",
       "\"num_attention_heads\": 10", StatusCode::kInvalidArgument, "num_attention_heads"},
      {"non-string layer kind", "\"full_attention\"],", "\"full_attention\", 3],",
       StatusCode::kInvalidArgument, "layer_types"},
      {"unknown layer kind", "\"layer_types\": [\"linear_attention\"",
       "\"layer_types\": [\"sliding_attention\"", StatusCode::kInvalidArgument, "layer_types"},
      {"layer count disagrees", "\"num_hidden_layers\": 32", "\"num_hidden_layers\": 31",
       StatusCode::kInvalidArgument, "layer_types"},
      {"rope scaling", "\"rope_type\": \"default\"", "\"rope_type\": \"yarn\"",
       StatusCode::kUnsupported, "rope_type"},
      {"missing rope_theta", "\"rope_theta\": 10000000,", "", StatusCode::kInvalidArgument,
       "rope_theta"},
      {"missing vocab_size", "\"vocab_size\": 248320,", "", StatusCode::kInvalidArgument,
       "vocab_size"},
      {"other activation", "\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"",
       StatusCode::kUnsupported, "hidden_act"},
      {"odd rotary dim", "\"partial_rotary_factor\": 0.25", "\"partial_rotary_factor\": 0.001",
       StatusCode::kInvalidArgument, "partial_rotary_factor"},
      {"no dense FFN width", "\"intermediate_size\": 12288,", "", StatusCode::kInvalidArgument,
       "intermediate_size"},
  };
  for (const BadConfig& b : cases) {
    std::string j = kQwen35NineB;
    const size_t at = j.find(b.from);
    ASSERT_NE(at, std::string::npos) << b.what;
    j.replace(at, b.from.size(), b.to);
    auto c = parse_hf_config(j);
    ASSERT_FALSE(c.has_value()) << b.what;
    EXPECT_EQ(c.error().code(), b.code) << b.what << ": " << c.error().to_string();
    EXPECT_NE(c.error().message().find(b.field), std::string::npos)
        << b.what << ": " << c.error().to_string();
  }
}

TEST(Qwen35Config, RejectsNonJson) {
  for (const char* text : {"", "{", "[1, 2]", "\"text\"", "{\"text_config\": 5}"}) {
    auto c = parse_hf_config(text);
    EXPECT_FALSE(c.has_value()) << text;
  }
}

TEST(Qwen35Preset, TinyKeepsTheFeaturesTestsNeed) {
  auto c = qwen35_preset("tiny");
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  EXPECT_GT(c->r(), 1);                                       // GVA head mapping
  EXPECT_GT(c->num_attention_heads, c->num_key_value_heads);  // GQA
  EXPECT_LT(c->rotary_dim(), c->head_dim);                    // partial RoPE
  EXPECT_EQ(c->n_full_layers() * 3, c->n_linear_layers());    // 3:1
  EXPECT_TRUE(c->is_full_attention(3));
  EXPECT_TRUE(c->is_full_attention(7));
  EXPECT_TRUE(c->tie_word_embeddings);
}

TEST(Qwen35Preset, SmallIsExactlyAsSpecified) {
  auto c = qwen35_preset("small");
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  EXPECT_EQ(c->hidden_size, 512);
  EXPECT_EQ(c->num_hidden_layers, 12);
  for (int64_t l = 0; l < 12; ++l) EXPECT_EQ(c->is_full_attention(l), l == 3 || l == 7 || l == 11);
  EXPECT_EQ(c->intermediate_size, 1536);
  EXPECT_EQ(c->num_attention_heads, 4);
  EXPECT_EQ(c->num_key_value_heads, 2);
  EXPECT_EQ(c->head_dim, 128);
  EXPECT_EQ(c->rotary_dim(), 32);
  EXPECT_DOUBLE_EQ(c->rope_theta, 1e7);
  EXPECT_EQ(c->linear_num_key_heads, 4);
  EXPECT_EQ(c->linear_num_value_heads, 8);
  EXPECT_EQ(c->linear_key_head_dim, 128);
  EXPECT_EQ(c->linear_value_head_dim, 128);
  EXPECT_EQ(c->linear_conv_kernel_dim, 4);
  EXPECT_EQ(c->vocab_size, 151936);
  EXPECT_TRUE(c->tie_word_embeddings);
  EXPECT_DOUBLE_EQ(c->rms_norm_eps, 1e-6);
  EXPECT_EQ(c->conv_dim(), 2048);
  // Counted by hand: embedding 151,936 x 512 = 77,791,232; final norm 512; a GDN layer
  // 2,113,680 + FFN 2,359,296 + norms 1,024 (x9); an attention layer 1,048,832 + FFN + norms
  // (x3).
  EXPECT_EQ(c->n_parameters(), 128'285'200);
}

TEST(Qwen35Preset, PublishedSizesMatchTheSpec) {
  auto small8 = qwen35_preset("qwen3.5-0.8b");
  ASSERT_TRUE(small8.has_value());
  EXPECT_EQ(small8->conv_dim(), 6144);                                   // §1.5 table
  EXPECT_EQ(small8->kv_bytes_per_token(core::DType::kBF16), 12 * 1024);  // 12 KiB
  EXPECT_EQ(small8->kv_bytes_per_token(core::DType::kF32), 24 * 1024);   // 24 KiB
  EXPECT_EQ(small8->gdn_state_bytes(), 18ll * 1024 * 1024);              // 18 MiB

  auto big = qwen35_preset("qwen3.5-27b");
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(big->n_linear_layers(), 48);
  EXPECT_EQ(big->n_full_layers(), 16);
  EXPECT_EQ(big->conv_dim(), 10240);
  EXPECT_EQ(big->kv_bytes_per_token(core::DType::kBF16), 64 * 1024);  // 32,768 values a token
  EXPECT_EQ(big->kv_bytes_per_token(core::DType::kF32), 128 * 1024);
  EXPECT_EQ(big->conv_tail_bytes(), 48ll * 3 * 10240 * 4);

  // §7.15: the section bytes the model reports (no weights are needed for the layout).
  for (core::DType kv : {core::DType::kF32, core::DType::kBF16}) {
    Qwen35Model m(*big, empty_weights(*big), Qwen35Options{core::DType::kBF16, kv});
    const core::StateLayout layout = m.state_layout(4096);
    ASSERT_NE(layout.find_section("gdn.S"), nullptr);
    EXPECT_EQ(layout.find_section("gdn.S")->bytes(), 150'994'944);
    EXPECT_EQ(layout.find_section("gdn.conv")->bytes(), 48ll * 3 * 10240 * 4);
    EXPECT_EQ(layout.bytes_per_token(), big->kv_bytes_per_token(kv));
    EXPECT_EQ(layout.find_view("K")->bytes_per_token() * 2, big->kv_bytes_per_token(kv));
  }
}

TEST(Qwen35Preset, UnknownNameIsNotFound) {
  auto c = qwen35_preset("huge");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace anchorage::model::qwen35
