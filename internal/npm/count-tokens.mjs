// Counts the tokens of the token estimator's corpus with gpt-tokenizer's
// o200k_base and cl100k_base encodings (vocabularies embedded in the npm
// package; nothing is downloaded). Usage: node count-tokens.mjs <corpus dir>
// Prints JSON: one sample per chunk of lines of at least 1,500 bytes.
import fs from "node:fs";
import path from "node:path";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { countTokens as cl100k } from "gpt-tokenizer/encoding/cl100k_base";

const dir = process.argv[2];
const samples = [];
for (const name of fs.readdirSync(dir).sort()) {
  const lines = fs.readFileSync(path.join(dir, name), "utf8").split("\n");
  let cur = [];
  const flush = () => {
    if (cur.length === 0) return;
    const text = cur.join("\n");
    samples.push({ file: name, text, o200k: o200k(text), cl100k: cl100k(text) });
    cur = [];
  };
  for (const l of lines) {
    cur.push(l);
    if (Buffer.byteLength(cur.join("\n")) >= 1500) flush();
  }
  flush();
}
process.stdout.write(JSON.stringify(samples, null, 1) + "\n");
