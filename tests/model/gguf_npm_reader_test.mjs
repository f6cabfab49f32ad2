// Independent-reader check (docs/gguf.md): files written by `anchorage gguf-random` are parsed
// by Hugging Face's @huggingface/gguf (pinned, installed by scripts/deps.sh),
// which must list exactly the metadata keys, types and values and the tensor names, shapes,
// types and offsets that `anchorage inspect --json` reads. Exits non-zero on any difference,
// and fails (never skips) when the package is missing.
//
// usage: node gguf_npm_reader_test.mjs <anchorage binary> <tokenizer dir> <node_modules dir> <scratch dir>
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [binary, tokenizerDir, modulesDir, scratch] = process.argv.slice(2);
let gguf;
try {
  const require = createRequire(path.join(path.resolve(modulesDir), "noop.js"));
  ({ gguf } = require("@huggingface/gguf"));
} catch (e) {
  console.error(`@huggingface/gguf is not installed in ${modulesDir}: run scripts/deps.sh (${e.message})`);
  process.exit(1);
}

let failures = 0;
function fail(file, what) {
  failures++;
  if (failures <= 40) console.error(`FAIL ${path.basename(file)}: ${what}`);
}

// Our JSON value (64-bit ints as strings, f32 widened to double) vs theirs.
function same(ours, theirs, type) {
  if (Array.isArray(ours)) {
    if (!Array.isArray(theirs) || ours.length !== theirs.length) return false;
    for (let i = 0; i < ours.length; i++) if (!same(ours[i], theirs[i], type)) return false;
    return true;
  }
  if (typeof theirs === "bigint") return String(theirs) === String(ours);
  if (typeof ours === "string" && typeof theirs === "number") return ours === String(theirs);
  if (type === 6 && typeof theirs === "number") return Math.fround(ours) === Math.fround(theirs);
  return ours === theirs;
}

async function check(file) {
  const ours = JSON.parse(execFileSync(binary, ["inspect", "--json", file], { maxBuffer: 1 << 30 }));
  const theirs = await gguf(file, { allowLocalFile: true, typedMetadata: true });
  const tm = theirs.typedMetadata;
  // The npm reader adds the header fields to its metadata.
  const header = new Set(["version", "tensor_count", "kv_count"]);
  if (Number(tm.version.value) !== ours.version) fail(file, "version");
  if (Number(tm.tensor_count.value) !== ours.tensors.length) fail(file, "tensor count");
  if (Number(tm.kv_count.value) !== ours.metadata.length) fail(file, "metadata count");
  const theirKeys = Object.keys(tm).filter((k) => !header.has(k));
  const ourKeys = ours.metadata.map((m) => m.key);
  if (JSON.stringify([...theirKeys].sort()) !== JSON.stringify([...ourKeys].sort())) {
    fail(file, `keys differ: ours ${ourKeys.length}, theirs ${theirKeys.length}`);
  }
  for (const m of ours.metadata) {
    const t = tm[m.key];
    if (!t) continue;
    if (t.type !== m.type) fail(file, `${m.key}: type ${t.type} vs ours ${m.type}`);
    if (m.type === 9 && t.subType !== m.elem) fail(file, `${m.key}: element type ${t.subType} vs ours ${m.elem}`);
    if (!same(m.value, t.value, m.type === 9 ? m.elem : m.type)) fail(file, `${m.key}: values differ`);
  }
  if (theirs.tensorInfos.length !== ours.tensors.length) fail(file, "tensor info count");
  for (let i = 0; i < ours.tensors.length; i++) {
    const o = ours.tensors[i];
    const t = theirs.tensorInfos[i];
    if (!t) break;
    const shape = t.shape.map(Number);
    if (t.name !== o.name) fail(file, `tensor ${i}: name ${t.name} vs ${o.name}`);
    if (JSON.stringify(shape) !== JSON.stringify(o.shape)) fail(file, `${o.name}: shape`);
    if (t.dtype !== o.type) fail(file, `${o.name}: type ${t.dtype} vs ${o.type}`);
    if (BigInt(t.offset) !== BigInt(o.offset)) fail(file, `${o.name}: offset`);
  }
  if (BigInt(theirs.tensorDataOffset) !== BigInt(ours.data_offset)) fail(file, "data offset");
  console.log(`ok ${path.basename(file)}: ${ourKeys.length} keys, ${ours.tensors.length} tensors`);
}

mkdirSync(scratch, { recursive: true });
const cases = [
  ["tiny-f32-tok", ["--preset", "tiny", "--type", "f32", "--tokenizer-dir", tokenizerDir]],
  ["tiny-f16", ["--preset", "tiny", "--type", "f16"]],
  ["tiny-bf16", ["--preset", "tiny", "--type", "bf16"]],
  ["tiny-q8_0", ["--preset", "tiny", "--type", "q8_0"]],
  ["tiny-q4_k", ["--preset", "tiny", "--type", "q4_k"]],
  ["tiny-q6_k", ["--preset", "tiny", "--type", "q6_k", "--fuse-qkv"]],
  // Types per tensor in turn (rows the 256-element K-quants do not divide fall back to Q8_0).
  ["tiny-mix", ["--preset", "tiny", "--mix", "q5_k,q4_0,iq4_xs,q5_1,q3_k,q2_k,iq4_nl,q4_1,q5_0"]],
  ["tiny-next-legacy", ["--preset", "tiny", "--type", "q8_0", "--arch", "qwen3next", "--legacy-ssm-in"]],
  ["tiny-moe", ["--preset", "tiny-moe", "--type", "q8_0"]],
];
try {
  for (const [name, args] of cases) {
    const file = path.join(scratch, `${name}.gguf`);
    execFileSync(binary, ["gguf-random", ...args, "--out", file], { stdio: ["ignore", "ignore", "inherit"] });
    await check(file);
    rmSync(file);
  }
} catch (e) {
  console.error(`FAIL: ${e.message}`);
  process.exit(1);
}
if (failures > 0) {
  console.error(`${failures} difference(s)`);
  process.exit(1);
}
console.log("the npm reader lists the same metadata and tensors");
