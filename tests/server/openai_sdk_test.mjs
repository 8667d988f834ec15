// The official OpenAI SDK (npm `openai`, found through NODE_PATH) against a running
// `llmwb serve` (started by run_openai_sdk_test.sh): models.list, completions and chat (whole
// and streamed), n > 1, logprobs, stop, and errors as the SDK's APIError with their statuses.
// Usage: node openai_sdk_test.mjs BASE_URL API_KEY MODEL GREEDY_TEXT
// GREEDY_TEXT: `llmwb generate --prompt "The model" --max-tokens 12 --temperature 0` output.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let sdk;
try {
  sdk = require('openai');
} catch (e) {
  console.error(`FAIL: the npm package 'openai' was not found (NODE_PATH=${process.env.NODE_PATH ?? ''}); ` +
                'run scripts/fetch-test-assets.sh');
  process.exit(1);
}
const OpenAI = sdk.OpenAI ?? sdk.default ?? sdk;
const [baseURL, apiKey, model, greedyText] = process.argv.slice(2);
if (!baseURL || !apiKey || !model || greedyText === undefined) {
  console.error('usage: node openai_sdk_test.mjs BASE_URL API_KEY MODEL GREEDY_TEXT');
  process.exit(2);
}
// Node's fetch (undici) instantiates WebAssembly, which cannot reserve its memory under a
// virtual-memory limit (`ulimit -v`, as the test runs use): there the SDK gets a fetch over
// node:http instead (LLMWB_SDK_FETCH=node-http, set by the wrapper). The SDK's own request,
// streaming and error code runs either way.
async function nodeHttpFetch(url, init = {}) {
  const http = await import('node:http');
  const { Readable } = await import('node:stream');
  const headers = Object.fromEntries(new Headers(init.headers ?? {}).entries());
  return new Promise((resolve, reject) => {
    const req = http.request(String(url), { method: init.method ?? 'GET', headers }, (res) => {
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers)) h.set(k, Array.isArray(v) ? v.join(', ') : v);
      const body = [204, 304].includes(res.statusCode) ? null : Readable.toWeb(res);
      resolve(new Response(body, { status: res.statusCode, headers: h }));
    });
    req.on('error', reject);
    init.signal?.addEventListener('abort', () => req.destroy(new Error('aborted')));
    if (init.body) req.write(typeof init.body === 'string' ? init.body : Buffer.from(init.body));
    req.end();
  });
}
const useNodeHttp = process.env.LLMWB_SDK_FETCH === 'node-http';
if (useNodeHttp) {
  // Loading undici (for Headers / Response) also starts its WebAssembly HTTP parser, which
  // fails under the limit with an unhandled rejection; the parser is never used here.
  process.on('unhandledRejection', (e) => {
    if (e instanceof RangeError && /Wasm memory/.test(e.message)) return;
    console.error(`FAIL: unhandled rejection: ${e?.stack ?? e}`);
    process.exit(1);
  });
}
console.log(`transport: ${useNodeHttp ? 'node:http' : 'fetch'}`);
const extra = useNodeHttp ? { fetch: nodeHttpFetch } : {};
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 30000, ...extra });

let failures = 0, passed = 0;
async function test(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`OK   ${name}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e?.stack ?? e}`);
  }
}

async function expectStatus(promise, status, param) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof OpenAI.APIError, `expected an APIError, got ${e}`);
    assert.equal(e.status, status);
    if (param !== undefined) assert.equal(e.param, param);
    return e;
  }
  assert.fail(`expected status ${status}, the request succeeded`);
}

const greedy = { model, prompt: 'The model', max_tokens: 12, temperature: 0 };
const chatMessages = [{ role: 'user', content: 'Hello' }];

await test('models.list', async () => {
  const page = await client.models.list();
  const ids = page.data.map((m) => m.id);
  assert.deepEqual(ids, [model]);
  assert.equal(page.data[0].object, 'model');
  assert.equal(page.data[0].owned_by, 'llmwb');
  assert.ok(page.data[0].max_model_len > 0);
  assert.ok(typeof page.data[0].root === 'string');
});

await test('completions.create greedy equals llmwb generate', async () => {
  const r = await client.completions.create(greedy);
  assert.equal(r.object, 'text_completion');
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].text, greedyText);
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
});

await test('completions stream with usage', async () => {
  const stream = await client.completions.create({ ...greedy, stream: true,
                                                   stream_options: { include_usage: true } });
  let text = '', usage = null, finish = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text += c.text;
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  assert.equal(text, greedyText);
  assert.ok(finish);
  assert.ok(usage && usage.completion_tokens > 0);
});

await test('chat.completions.create', async () => {
  const r = await client.chat.completions.create({ model, messages: chatMessages, max_tokens: 16,
                                                   temperature: 0 });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.equal(typeof r.choices[0].message.content, 'string');
  assert.ok(r.usage.prompt_tokens > 0);
  // Streamed, the same text.
  const stream = await client.chat.completions.create({ model, messages: chatMessages,
                                                        max_tokens: 16, temperature: 0,
                                                        stream: true });
  let text = '', role = null;
  for await (const chunk of stream) {
    const d = chunk.choices[0]?.delta;
    if (d?.role) role = d.role;
    if (d?.content) text += d.content;
  }
  assert.equal(role, 'assistant');
  assert.equal(text, r.choices[0].message.content);
});

await test('n > 1', async () => {
  const r = await client.completions.create({ model, prompt: 'The model', max_tokens: 8, n: 3,
                                              seed: 5 });
  assert.deepEqual(r.choices.map((c) => c.index), [0, 1, 2]);
  const c = await client.chat.completions.create({ model, messages: chatMessages, max_tokens: 8,
                                                   n: 2, temperature: 0 });
  assert.equal(c.choices.length, 2);
  assert.equal(c.choices[0].message.content, c.choices[1].message.content);
});

await test('logprobs', async () => {
  const r = await client.completions.create({ ...greedy, logprobs: 2 });
  const lp = r.choices[0].logprobs;
  assert.equal(lp.tokens.length, r.usage.completion_tokens);
  assert.equal(lp.token_logprobs.length, lp.tokens.length);
  assert.equal(Object.keys(lp.top_logprobs[0]).length, 2);
  const c = await client.chat.completions.create({ model, messages: chatMessages, max_tokens: 4,
                                                   logprobs: true, top_logprobs: 2,
                                                   temperature: 0 });
  const content = c.choices[0].logprobs.content;
  assert.ok(content.length >= 1);
  assert.equal(content[0].top_logprobs.length, 2);
  assert.ok(content[0].logprob <= 0);
});

await test('stop', async () => {
  const words = greedyText.trim().split(' ');
  assert.ok(words.length >= 2, `greedy text too short: ${greedyText}`);
  const stop = ' ' + words[1];
  const r = await client.completions.create({ ...greedy, stop: [stop] });
  assert.equal(r.choices[0].text, greedyText.slice(0, greedyText.indexOf(stop)));
  assert.equal(r.choices[0].finish_reason, 'stop');
});

await test('errors with their status codes', async () => {
  await expectStatus(client.completions.create({ ...greedy, top_p: 2 }), 400, 'top_p');
  await expectStatus(client.chat.completions.create({ model, messages: chatMessages,
                                                      response_format: { type: 'json_object' } }),
                     400, 'response_format');
  const nf = await expectStatus(client.completions.create({ ...greedy, model: 'no-such-model' }),
                                404, 'model');
  assert.ok(nf instanceof OpenAI.NotFoundError);
  const bad = new OpenAI({ baseURL, apiKey: 'wrong-key', maxRetries: 0, ...extra });
  const au = await expectStatus(bad.models.list(), 401);
  assert.ok(au instanceof OpenAI.AuthenticationError);
  await expectStatus(client.completions.create({ ...greedy, max_tokens: 10000000 }), 400,
                     'max_tokens');
});

console.log(`${passed} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
