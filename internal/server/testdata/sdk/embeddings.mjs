// The OpenAI SDK against /v1/embeddings (server/sdk_test.go runs it):
// embeddings.create with the SDK's default (it asks for base64 and decodes
// it) and with encoding_format float, one input and several, each vector
// equal to the server's Embedder's (EXPECTED: a JSON array of the vectors
// of TEXTS, as float32 values); dimensions other than the model's is the
// SDK's BadRequestError. Environment: BASE_URL, API_KEY, MODEL, SDK_DIR,
// TEXTS (a JSON array of strings), EXPECTED.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(process.env.SDK_DIR + '/package.json');
const sdk = require('openai');
const OpenAI = sdk.OpenAI ?? sdk.default;
const client = new OpenAI({ baseURL: process.env.BASE_URL + '/v1', apiKey: process.env.API_KEY, maxRetries: 0 });
const model = process.env.MODEL;
const texts = JSON.parse(process.env.TEXTS);
const expected = JSON.parse(process.env.EXPECTED).map((v) => v.map(Math.fround));

// Equal as float32s: base64 decodes to float32s, JSON's numbers are the
// float32s' shortest decimal forms.
const same = (got, want, what) => {
  assert.equal(got.length, want.length, what + ': length');
  for (let i = 0; i < want.length; i++) {
    assert.equal(Math.fround(got[i]), want[i], `${what}: value ${i}`);
  }
};

const one = await client.embeddings.create({ model, input: texts[0] });
assert.equal(one.object, 'list');
assert.equal(one.model, model);
assert.equal(one.data.length, 1);
assert.equal(one.data[0].object, 'embedding');
assert.equal(one.data[0].index, 0);
same(one.data[0].embedding, expected[0], 'base64 (the default)');
assert.ok(one.usage.prompt_tokens > 0);
assert.equal(one.usage.total_tokens, one.usage.prompt_tokens);
console.log('create ok');

const floats = await client.embeddings.create({ model, input: texts, encoding_format: 'float' });
assert.equal(floats.data.length, texts.length);
floats.data.forEach((d, i) => {
  assert.equal(d.index, i);
  same(d.embedding, expected[i], `float, input ${i}`);
});
assert.ok(floats.usage.prompt_tokens > one.usage.prompt_tokens);
console.log('batch ok');

const dims = await client.embeddings.create({ model, input: texts[1], dimensions: expected[0].length });
same(dims.data[0].embedding, expected[1], 'dimensions equal to the model\'s');
await assert.rejects(
  client.embeddings.create({ model, input: texts[0], dimensions: 3 }),
  (err) => err instanceof sdk.BadRequestError && err.status === 400 && err.param === 'dimensions',
);
console.log('error ok');
