// The Anthropic SDK against /v1/messages (server/sdk_test.go runs it):
// create, stream (text deltas joined equal the final text), a tool round
// trip with tool_choice any, count_tokens, and a 400 surfaced as the SDK's
// BadRequestError. Environment: BASE_URL, API_KEY, MODEL, SDK_DIR (the
// installed packages, scripts/sdk-install.sh).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(process.env.SDK_DIR + '/package.json');
const sdk = require('@anthropic-ai/sdk');
const Anthropic = sdk.Anthropic ?? sdk.default;
const client = new Anthropic({ baseURL: process.env.BASE_URL, apiKey: process.env.API_KEY, maxRetries: 0 });
const model = process.env.MODEL;
const user = [{ role: 'user', content: 'Tell me a story.' }];

const created = await client.messages.create({ model, max_tokens: 12, messages: user, top_k: 40, seed: 7 });
assert.equal(created.type, 'message');
assert.equal(created.content[0].type, 'text');
assert.ok(['end_turn', 'max_tokens'].includes(created.stop_reason), created.stop_reason);
assert.ok(created.usage.input_tokens > 0 && created.usage.output_tokens > 0);
console.log('create ok');

const stream = client.messages.stream({ model, max_tokens: 12, messages: user, top_k: 40, seed: 7 });
let joined = '';
stream.on('text', (t) => { joined += t; });
const final = await stream.finalMessage();
assert.equal(joined, final.content[0].text);
assert.equal(final.content[0].text, created.content[0].text, 'the same seed gives the same text');
assert.equal(final.stop_reason, created.stop_reason);
assert.equal(final.usage.output_tokens, created.usage.output_tokens);
console.log('stream ok');

const tools = [{
  name: 'get_weather', description: 'The weather in a city',
  input_schema: JSON.parse(process.env.TOOL_SCHEMA),
}];
const question = [{ role: 'user', content: 'What is the weather in Paris?' }];
const call = await client.messages.create({ model, max_tokens: 160, messages: question, tools, tool_choice: { type: 'any' }, top_k: 40, seed: 1 });
assert.equal(call.stop_reason, 'tool_use');
const use = call.content.find((b) => b.type === 'tool_use');
assert.ok(use, JSON.stringify(call.content));
assert.equal(use.name, 'get_weather');
assert.equal(typeof use.input.city, 'string');
const streamedCall = await client.messages.stream({ model, max_tokens: 160, messages: question, tools, tool_choice: { type: 'any' }, top_k: 40, seed: 1 }).finalMessage();
assert.deepEqual(streamedCall.content.find((b) => b.type === 'tool_use').input, use.input);
const answer = await client.messages.create({
  model, max_tokens: 8, tools, top_k: 40,
  messages: [...question, { role: 'assistant', content: call.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '22 degrees' }] }],
});
assert.equal(answer.type, 'message');
console.log('tools ok');

const counted = await client.messages.countTokens({ model, messages: user });
assert.ok(counted.input_tokens > 0);
assert.equal(counted.input_tokens, created.usage.input_tokens);
console.log('count_tokens ok');

await assert.rejects(client.messages.create({ model, messages: user }), (err) => {
  assert.ok(err instanceof Anthropic.BadRequestError, String(err));
  assert.equal(err.status, 400);
  assert.equal(err.error.type, 'error');
  assert.equal(err.error.error.type, 'invalid_request_error');
  assert.match(err.message, /max_tokens/);
  return true;
});
console.log('error ok');
