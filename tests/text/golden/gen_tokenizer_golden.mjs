// Encodes every case of cases.jsonl with two reference tokenizers that no one here wrote,
// @huggingface/tokenizers and @lenml/tokenizers (versions pinned in package.json), from the
// same tokenizer.json, and writes the golden file: one JSON object a line,
//   {"name", "text", "ids", "decoded"?, "decoded_skip"?}
// "decoded" is there when decode(ids) differs from text (NFC changed it), "decoded_skip" when
// decoding with skip_special_tokens drops something. The two references must agree on every
// case, or this script fails. Usage (gen_tokenizer_golden.sh runs it):
//   node gen_tokenizer_golden.mjs <tokenizer.json> <tokenizer_config.json> <cases.jsonl> <out.jsonl>
import fs from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import { TokenizerLoader } from '@lenml/tokenizers';

const [tokenizerPath, configPath, casesPath, outPath] = process.argv.slice(2);
const tokenizerJSON = JSON.parse(fs.readFileSync(tokenizerPath, 'utf8'));
const tokenizerConfig = JSON.parse(fs.readFileSync(configPath, 'utf8'));
const hf = new Tokenizer(tokenizerJSON, tokenizerConfig);
const lenml = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const lines = [];
let failures = 0;
for (const line of fs.readFileSync(casesPath, 'utf8').split('\n')) {
  if (!line) continue;
  const { name, text } = JSON.parse(line);
  const ids = Array.from(hf.encode(text).ids);
  const idsLenml = Array.from(lenml.encode(text));
  if (!same(ids, idsLenml)) {
    console.error(`references disagree on the ids of ${name}`);
    failures++;
    continue;
  }
  // decode() of the references refuses an empty list; its text is "".
  const decode = (t, skip) => (ids.length === 0 ? '' : t.decode(ids, { skip_special_tokens: skip }));
  const decoded = decode(hf, false);
  const decodedSkip = decode(hf, true);
  if (decoded !== decode(lenml, false) || decodedSkip !== decode(lenml, true)) {
    console.error(`references disagree on the decoding of ${name}`);
    failures++;
    continue;
  }
  const row = { name, text, ids };
  if (decoded !== text) row.decoded = decoded;
  if (decodedSkip !== decoded) row.decoded_skip = decodedSkip;
  lines.push(JSON.stringify(row));
}
if (failures > 0) {
  console.error(`gen_tokenizer_golden: ${failures} cases failed`);
  process.exit(1);
}
fs.writeFileSync(outPath, lines.join('\n') + '\n');
console.error(`gen_tokenizer_golden: ${lines.length} cases -> ${outPath}`);
