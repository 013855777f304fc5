// The OpenAI SDK against /v1/responses (server/sdk_test.go runs it):
// responses.create, responses.stream (text deltas joined equal the final
// text), a function-call round trip via previous_response_id, structured
// output with text.format json_schema that parses and has the schema's
// shape, GET and DELETE of a stored response, and a stored response's
// input items (responses.inputItems.list, paged with after and limit). Environment: BASE_URL,
// API_KEY, MODEL, SDK_DIR (scripts/sdk-install.sh), TOOL_SCHEMA.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(process.env.SDK_DIR + '/package.json');
const sdk = require('openai');
const OpenAI = sdk.OpenAI ?? sdk.default;
const client = new OpenAI({ baseURL: process.env.BASE_URL + '/v1', apiKey: process.env.API_KEY, maxRetries: 0 });
const model = process.env.MODEL;
// The text of a response's message items (responses.create adds it as
// output_text; a stream's finalResponse does not).
const textOf = (r) => r.output.filter((o) => o.type === 'message')
  .flatMap((o) => o.content).filter((c) => c.type === 'output_text').map((c) => c.text).join('');
const base = { model, max_output_tokens: 12, top_k: 40, seed: 7 };

const created = await client.responses.create({ ...base, input: 'Tell me a story.', instructions: 'Be brief.' });
assert.equal(created.object, 'response');
assert.ok(['completed', 'incomplete'].includes(created.status), created.status);
assert.equal(created.output[0].type, 'message');
assert.equal(typeof created.output_text, 'string');
assert.ok(created.usage.input_tokens > 0 && created.usage.output_tokens > 0);
console.log('create ok');

const stream = client.responses.stream({ ...base, input: 'Tell me a story.', instructions: 'Be brief.' });
let joined = '';
stream.on('response.output_text.delta', (e) => { joined += e.delta; });
// The SDK takes response.completed's response as the final one; a turn
// cut by max_output_tokens ends with response.incomplete instead.
let last;
stream.on('response.completed', (e) => { last = e.response; });
stream.on('response.incomplete', (e) => { last = e.response; });
const final = await stream.finalResponse();
assert.equal(joined, textOf(final));
assert.equal(textOf(final), created.output_text, 'the same seed gives the same text');
assert.equal(textOf(created), created.output_text);
assert.equal(last.status, created.status);
assert.equal(last.usage.output_tokens, created.usage.output_tokens);
assert.equal(textOf(last), created.output_text);
console.log('stream ok');

const got = await client.responses.retrieve(created.id);
assert.equal(got.id, created.id);
assert.equal(got.output[0].content[0].text, created.output_text);
await client.responses.delete(created.id);
await assert.rejects(client.responses.retrieve(created.id), (err) => err instanceof OpenAI.NotFoundError);
console.log('store ok');

const tools = [{ type: 'function', name: 'get_weather', description: 'The weather in a city',
  parameters: JSON.parse(process.env.TOOL_SCHEMA), strict: true }];
const call = await client.responses.create({ ...base, max_output_tokens: 160, seed: 1, input: 'What is the weather in Paris?',
  tools, tool_choice: 'required', parallel_tool_calls: false });
const fc = call.output.find((o) => o.type === 'function_call');
assert.ok(fc, JSON.stringify(call.output));
assert.equal(fc.name, 'get_weather');
assert.equal(typeof JSON.parse(fc.arguments).city, 'string');
const streamedCall = await client.responses.stream({ ...base, max_output_tokens: 160, seed: 1, input: 'What is the weather in Paris?',
  tools, tool_choice: 'required', parallel_tool_calls: false }).finalResponse();
assert.equal(streamedCall.output.find((o) => o.type === 'function_call').arguments, fc.arguments);
const answer = await client.responses.create({ ...base, previous_response_id: call.id, tools,
  input: [{ type: 'function_call_output', call_id: fc.call_id, output: '22 degrees' }] });
assert.equal(answer.previous_response_id, call.id);
assert.ok(answer.usage.input_tokens > call.usage.input_tokens, 'the previous turn is part of the prompt');
console.log('function call ok');

// The answer's input items: the call's conversation (its input and its
// output) then the tool's output, newest first by default; a page of one
// at a time (after: the last id) walks the same items.
const newest = await client.responses.inputItems.list(answer.id);
const items = newest.data;
assert.equal(items[0].type, 'function_call_output');
assert.equal(items[0].call_id, fc.call_id);
assert.equal(items[0].output, '22 degrees');
assert.ok(items.some((it) => it.type === 'function_call' && it.call_id === fc.call_id && it.name === 'get_weather'));
const first = items[items.length - 1];
assert.equal(first.type, 'message');
assert.equal(first.role, 'user');
assert.equal(first.content[0].type, 'input_text');
assert.equal(first.content[0].text, 'What is the weather in Paris?');
const walked = [];
for await (const it of client.responses.inputItems.list(answer.id, { order: 'asc', limit: 1 })) {
  walked.push(it);
}
assert.deepEqual(walked, [...items].reverse());
await assert.rejects(client.responses.inputItems.list(answer.id, { limit: 101 }), (err) => err instanceof OpenAI.BadRequestError);
await client.responses.delete(call.id);
await assert.rejects(client.responses.inputItems.list(call.id), (err) => err instanceof OpenAI.NotFoundError);
console.log('input items ok');

const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 8 }, age: { type: 'integer', minimum: 0, maximum: 99 } },
  required: ['name', 'age'], additionalProperties: false };
const structured = await client.responses.create({ ...base, max_output_tokens: 60, input: 'Describe a person as JSON.',
  text: { format: { type: 'json_schema', name: 'person', schema, strict: true } } });
assert.equal(structured.status, 'completed', JSON.stringify(structured));
const person = JSON.parse(structured.output_text);
assert.deepEqual(Object.keys(person).sort(), ['age', 'name']);
assert.equal(typeof person.name, 'string');
assert.ok(person.name.length <= 8);
assert.ok(Number.isInteger(person.age) && person.age >= 0 && person.age <= 99);
console.log('json_schema ok');

await assert.rejects(client.responses.create({ ...base, input: [] }), (err) => {
  assert.ok(err instanceof OpenAI.BadRequestError, String(err));
  assert.equal(err.param, 'input');
  return true;
});
console.log('error ok');
