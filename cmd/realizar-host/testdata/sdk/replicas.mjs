// The OpenAI SDK across two replicas sharing PostgreSQL (cmd/realizar-host
// respstore_test.go runs it): a response created through A is continued
// with previous_response_id and retrieved through B, another tenant's
// retrieve is the SDK's NotFoundError on both, and a delete through B is
// a NotFoundError through A. Environment: BASE_A, BASE_B, API_KEY,
// OTHER_KEY, MODEL, SDK_DIR (scripts/sdk-install.sh).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(process.env.SDK_DIR + '/package.json');
const sdk = require('openai');
const OpenAI = sdk.OpenAI ?? sdk.default;
const client = (base, key) => new OpenAI({ baseURL: base + '/v1', apiKey: key, maxRetries: 0 });
const a = client(process.env.BASE_A, process.env.API_KEY);
const b = client(process.env.BASE_B, process.env.API_KEY);
const others = [client(process.env.BASE_A, process.env.OTHER_KEY), client(process.env.BASE_B, process.env.OTHER_KEY)];
const base = { model: process.env.MODEL, max_output_tokens: 4, temperature: 0 };

const first = await a.responses.create({ ...base, input: 'Once upon a time' });
assert.equal(first.store, true);
const second = await b.responses.create({ ...base, input: 'And then', previous_response_id: first.id });
assert.equal(second.previous_response_id, first.id);
const alone = await b.responses.create({ ...base, input: 'And then', store: false });
assert.ok(second.usage.input_tokens > alone.usage.input_tokens, 'the conversation went on through B');
const read = await b.responses.retrieve(first.id);
assert.equal(read.id, first.id);
assert.equal(read.output_text, first.output_text);
console.log('continued and retrieved through B');

for (const other of others) {
  await assert.rejects(other.responses.retrieve(first.id), (e) => e instanceof sdk.NotFoundError);
  await assert.rejects(other.responses.create({ ...base, input: 'x', previous_response_id: first.id }),
    (e) => e instanceof sdk.NotFoundError);
}
console.log('another tenant: not found on both');

await b.responses.delete(first.id);
await assert.rejects(a.responses.retrieve(first.id), (e) => e instanceof sdk.NotFoundError);
console.log('deleted through B, gone through A');
