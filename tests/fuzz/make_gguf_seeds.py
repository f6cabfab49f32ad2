# Writes the GGUF parser fuzzer's seed files (tests/corpus/gguf/, each well under 64 KiB):
# a small qwen35 file with tensors of every supported type, a v2 qwen3next file, MoE metadata
# with a 64-byte alignment, and one key of every value type. usage: python3 make_gguf_seeds.py DIR
import struct, sys
out = sys.argv[1]
def s(x): b = x.encode(); return struct.pack('<Q', len(b)) + b
def kv(key, t, payload): return s(key) + struct.pack('<I', t) + payload
U32, I32, F32, BOOL, STR, ARR, U64, I64, F64, U8, I8, U16, I16 = 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 1, 2, 3
def u32(k, v): return kv(k, U32, struct.pack('<I', v))
def f32(k, v): return kv(k, F32, struct.pack('<f', v))
def st(k, v): return kv(k, STR, s(v))
def arr(k, et, items): return kv(k, ARR, struct.pack('<IQ', et, len(items)) + b''.join(items))
def tensor(name, ne, typ, off): return s(name) + struct.pack('<I', len(ne)) + b''.join(struct.pack('<Q', d) for d in ne) + struct.pack('<IQ', typ, off)
def gguf(kvs, tensors, datas, version=3, align=32):
    h = b'GGUF' + struct.pack('<IQQ', version, len(tensors), len(kvs)) + b''.join(kvs)
    off = 0; infos = b''; data = b''
    for (name, ne, typ), d in zip(tensors, datas):
        infos += tensor(name, ne, typ, off)
        d = d + b'\0' * ((-len(d)) % align)
        data += d; off += len(d)
    h += infos
    h += b'\0' * ((-len(h)) % align)
    return h + data
def model_kvs(arch, H=8, L=4):
    a = arch + '.'
    return [st('general.architecture', arch), u32('general.alignment', 32), u32(a+'block_count', L),
            u32(a+'context_length', 128), u32(a+'embedding_length', H), u32(a+'feed_forward_length', 16),
            u32(a+'attention.head_count', 2), u32(a+'attention.head_count_kv', 1),
            u32(a+'attention.key_length', 8), u32(a+'attention.value_length', 8),
            f32(a+'attention.layer_norm_rms_epsilon', 1e-6), u32(a+'rope.dimension_count', 2),
            f32(a+'rope.freq_base', 1e7), arr(a+'rope.dimension_sections', I32, [struct.pack('<i', x) for x in (11, 11, 10, 0)]),
            u32(a+'full_attention_interval', 4), u32(a+'ssm.conv_kernel', 4), u32(a+'ssm.state_size', 4),
            u32(a+'ssm.group_count', 1), u32(a+'ssm.time_step_rank', 2), u32(a+'ssm.inner_size', 8),
            st('tokenizer.ggml.model', 'gpt2'), st('tokenizer.ggml.pre', 'qwen2'),
            arr('tokenizer.ggml.tokens', STR, [s(x) for x in ('a', 'b', 'ab', '<|im_end|>', '[PAD4]')]),
            arr('tokenizer.ggml.token_type', I32, [struct.pack('<i', x) for x in (1, 1, 1, 3, 5)]),
            arr('tokenizer.ggml.merges', STR, [s('a b')]), u32('tokenizer.ggml.eos_token_id', 3),
            st('tokenizer.chat_template', '<|im_start|><|im_end|><tool_call></tool_call><tool_response></think>')]
f = lambda n: struct.pack('<%df' % n, *([0.5] * n))
ts = [('token_embd.weight', [8, 5], 0), ('output_norm.weight', [8], 0), ('blk.0.ssm_a', [2], 0),
      ('blk.0.ssm_conv1d.weight', [4, 16], 0), ('blk.0.attn_qkv.weight', [32, 2], 8), ('blk.3.attn_q.weight', [8, 32], 30),
      ('blk.0.ssm_out.weight', [256, 1], 12), ('blk.0.ssm_norm.weight', [256, 1], 14), ('blk.0.x', [2, 1, 1, 1], 1)]
ds = [f(40), f(8), struct.pack('<2f', -0.1, -0.2), f(64), b'\x01' * 68, b'\x02' * 16 * 2 if False else b'\x02' * (8 * 32 * 2), b'\x03' * 144, b'\x04' * 210, b'\0' * 4]
open(out + '/qwen35_small.gguf', 'wb').write(gguf(model_kvs('qwen35'), ts, ds))
open(out + '/qwen3next_v2.gguf', 'wb').write(gguf(model_kvs('qwen3next'), ts[:4], ds[:4], version=2))
moe = model_kvs('qwen35moe') + [u32('qwen35moe.expert_count', 4), u32('qwen35moe.expert_used_count', 2),
        u32('qwen35moe.expert_feed_forward_length', 8), u32('qwen35moe.expert_shared_feed_forward_length', 8),
        arr('qwen35moe.attention.recurrent_layers', BOOL, [b'\1', b'\1', b'\1', b'\0'])]
open(out + '/qwen35moe_meta.gguf', 'wb').write(gguf(moe, [('blk.0.ffn_gate_exps.weight', [8, 8, 4], 0)], [f(256)], align=64))
every = [kv('u8', U8, b'\xfa'), kv('i8', I8, b'\xf9'), kv('u16', U16, b'\xe8\xfd'), kv('i16', I16, b'\x00\x83'),
         u32('u32', 4000000000), kv('i32', I32, struct.pack('<i', -5)), f32('f32', 1.5), kv('bool', BOOL, b'\1'),
         st('str', 'héllo'), kv('u64', U64, struct.pack('<Q', 1 << 63)), kv('i64', I64, struct.pack('<q', -1)),
         kv('f64', F64, struct.pack('<d', 3.25)),
         kv('nested', ARR, struct.pack('<IQ', ARR, 2) + struct.pack('<IQ', U8, 2) + b'\1\2' + struct.pack('<IQ', STR, 1) + s('x')),
         arr('empty', F64, [])]
open(out + '/every_type.gguf', 'wb').write(gguf(every, [], []))
