// Integration test with the official `openai` npm SDK (pinned in scripts/deps.sh):
// starts `anchorage serve --preset tiny` on 127.0.0.1 and a free port, and drives it as a
// client would. Every response must parse in the SDK: models, a whole and a streamed chat
// (usage in the stream), a chat with tools and a tool-call history, a completion with
// logprobs, an abort mid-stream (the server must cancel the generation), errors the SDK
// raises as typed exceptions naming the field, and SIGTERM during a stream (the stream
// finishes, the process exits 0).
//
// usage: node openai_sdk_test.mjs <anchorage binary> <tokenizer dir> <node_modules dir>
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

const [binary, tokenizerDir, nodeModules] = process.argv.slice(2);
if (!binary || !tokenizerDir || !nodeModules) {
  console.error('usage: node openai_sdk_test.mjs <anchorage> <tokenizer dir> <node_modules>');
  process.exit(2);
}

let OpenAI;
try {
  ({ default: OpenAI } = await import(
    pathToFileURL(path.join(nodeModules, 'openai', 'index.mjs')).href));
} catch (e) {
  console.error(`the openai SDK is missing under ${nodeModules}: run scripts/deps.sh (${e})`);
  process.exit(1);
}

const MODEL = 'anchorage-tiny';
let server;       // the child process
let serverExit;   // resolves with its exit code
let baseURL;
let client;

// Starts the server and resolves with its base URL once it logs the address it serves on.
function startServer() {
  return new Promise((resolve, reject) => {
    server = spawn(binary, ['serve', '--preset', 'tiny', '--port', '0', '--ctx', '4096',
                            '--threads', '2', '--queue', '4', '--seed', '5'], {
      env: { ...process.env, ANCHORAGE_TOKENIZER_DIR: tokenizerDir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    serverExit = new Promise((r) => server.on('exit', (code, signal) => r({ code, signal })));
    let log = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${log}`)), 60000);
    server.stderr.on('data', (d) => {
      log += d.toString();
      const m = log.match(/on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    server.on('exit', (code) => reject(new Error(`server exited (${code}):\n${log}`)));
  });
}

async function metrics() {
  const r = await fetch(`${baseURL}/metrics`);
  return r.text();
}

function metric(text, name) {
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return line === undefined ? -1 : Number(line.slice(name.length + 1));
}

async function waitIdle() {
  for (;;) {
    const h = await (await fetch(`${baseURL}/health`)).json();
    if (!h.engine_busy && h.queue_depth === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

before(async () => {
  baseURL = await startServer();
  client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'not-needed', maxRetries: 0 });
});

after(async () => {
  if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
});

test('models', async () => {
  const page = await client.models.list();
  assert.deepEqual(page.data.map((m) => m.id), [MODEL]);
  const m = await client.models.retrieve(MODEL);
  assert.equal(m.id, MODEL);
});

test('whole chat with logprobs', async () => {
  const r = await client.chat.completions.create({
    model: MODEL,
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello!' }],
    max_tokens: 6, temperature: 0, logprobs: true, top_logprobs: 2,
  });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  assert.equal(r.usage.prompt_tokens_details.cached_tokens, 0);
  assert.equal(r.usage.anchorage.cache.source, 'cold');
  const lp = r.choices[0].logprobs.content;
  assert.ok(lp.length >= 1);
  for (const t of lp) {
    assert.equal(typeof t.token, 'string');
    assert.ok(t.logprob <= 0);
    assert.ok(Array.isArray(t.bytes));
    assert.equal(t.top_logprobs.length, 2);
    // f32 values printed with the fewest digits that read back to the same f32 (at most 9
    // significant digits, not a double's 17).
    const digits = String(Math.abs(t.logprob)).replace(/e.*$/, '').replace('.', '')
      .replace(/^0+/, '');
    assert.ok(digits.length <= 9, `${t.logprob} has ${digits.length} digits`);
  }
});

test('streamed chat with usage', async () => {
  const stream = await client.chat.completions.create({
    model: MODEL, messages: [{ role: 'user', content: 'Tell me a story.' }],
    max_tokens: 8, temperature: 0, stream: true, stream_options: { include_usage: true },
  });
  let content = '';
  let finish = null;
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    ++chunks;
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      content += c.delta.content ?? '';
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  assert.ok(chunks >= 3);
  assert.ok(['stop', 'length'].includes(finish));
  assert.ok(usage && usage.completion_tokens >= 1 && usage.completion_tokens <= 8);
  // The same request whole gives the same text (greedy).
  const whole = await client.chat.completions.create({
    model: MODEL, messages: [{ role: 'user', content: 'Tell me a story.' }],
    max_tokens: 8, temperature: 0,
  });
  assert.equal(whole.choices[0].message.content ?? '', content);
});

test('chat with tools and a tool-call history', async () => {
  const tools = [{
    type: 'function',
    function: {
      name: 'bash', description: 'Run a command',
      parameters: { type: 'object', properties: { command: { type: 'string' } },
                    required: ['command'] },
    },
  }];
  const messages = [
    { role: 'system', content: 'You can run commands.' },
    { role: 'user', content: 'list the files' },
    { role: 'assistant', content: '', reasoning_content: 'Use ls.',
      tool_calls: [{ id: 'call_1', type: 'function',
                     function: { name: 'bash', arguments: '{"command":"ls"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'README.md\nhello.py' },
  ];
  const r = await client.chat.completions.create({
    model: MODEL, messages, tools, tool_choice: 'auto', max_tokens: 6, temperature: 0,
  });
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.ok(r.usage.prompt_tokens > 30);
  // Streamed, as opencode sends it, with the session header.
  const stream = await client.chat.completions.create(
    { model: MODEL, messages, tools, tool_choice: 'auto', max_tokens: 4, stream: true,
      stream_options: { include_usage: true } },
    { headers: { 'x-session-id': 'ses_sdk' } });
  let usage = null;
  for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
  assert.equal(usage.anchorage.session, 'header');
});

test('completion with logprobs', async () => {
  const r = await client.completions.create({
    model: MODEL, prompt: 'The capital of France is', max_tokens: 4, temperature: 0, logprobs: 2,
  });
  assert.equal(r.object, 'text_completion');
  assert.equal(r.choices[0].logprobs.tokens.length, r.usage.completion_tokens);
  const ids = await client.completions.create({
    model: MODEL, prompt: [1, 2, 3, 4], max_tokens: 2, temperature: 0,
  });
  assert.equal(ids.usage.prompt_tokens, 4);
});

test('abort mid-stream cancels the generation', async () => {
  await waitIdle();
  const before = metric(await metrics(), 'anchorage_generations_total{end="cancelled"}');
  const stream = await client.chat.completions.create({
    model: MODEL, messages: [{ role: 'user', content: 'Never stop.' }], max_tokens: 3000,
    temperature: 0, stream: true,
  });
  // The SDK's abort: the iteration ends quietly and the connection closes.
  let chunks = 0;
  for await (const chunk of stream) {
    if (++chunks === 3) stream.controller.abort();
  }
  assert.ok(chunks >= 3 && chunks < 3000);
  await waitIdle();
  const text = await metrics();
  assert.equal(metric(text, 'anchorage_generations_total{end="cancelled"}'), before + 1);
});

test('errors are typed and name the field', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }],
                                     n: 2 }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'n');
  await assert.rejects(
    client.chat.completions.create({ model: MODEL, messages: [{ role: 'wizard', content: 'x' }] }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'messages[0].role');
  await assert.rejects(
    client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }],
                                     max_tokens: -3 }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'max_tokens');
  await assert.rejects(
    client.completions.create({ model: MODEL, prompt: Array(5000).fill(7) }),
    (e) => e instanceof OpenAI.BadRequestError && e.code === 'context_length_exceeded');
  await assert.rejects(client.models.retrieve('gpt-nothing'),
                       (e) => e instanceof OpenAI.NotFoundError);
});

// Last: it stops the server.
test('SIGTERM finishes the running stream and exits 0', async () => {
  const stream = await client.chat.completions.create({
    model: MODEL, messages: [{ role: 'user', content: 'A long answer please.' }],
    max_tokens: 200, temperature: 0, stream: true,
  });
  let chunks = 0;
  let finish = null;
  for await (const chunk of stream) {
    if (++chunks === 2) server.kill('SIGTERM');
    for (const c of chunk.choices) if (c.finish_reason) finish = c.finish_reason;
  }
  assert.ok(['stop', 'length'].includes(finish), 'the stream ran to its finish chunk');
  const { code, signal } = await serverExit;
  assert.equal(signal, null);
  assert.equal(code, 0);
});
