// The Vercel AI SDK's Anthropic provider (npm ai, @ai-sdk/anthropic)
// against /v1/messages (server/sdk_test.go runs it): generateText,
// streamText (the stream's text equals the final text), and a tool call
// with toolChoice required. Environment: BASE_URL, API_KEY, MODEL,
// SDK_DIR (scripts/sdk-install.sh), TOOL_SCHEMA.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(process.env.SDK_DIR + '/package.json');
const { generateText, streamText, tool, jsonSchema } = require('ai');
const { createAnthropic } = require('@ai-sdk/anthropic');
const anthropic = createAnthropic({ baseURL: process.env.BASE_URL + '/v1', apiKey: process.env.API_KEY });
const model = anthropic(process.env.MODEL);
const base = { model, prompt: 'Tell me a story.', maxOutputTokens: 12, topK: 40, maxRetries: 0 };

const made = await generateText(base);
assert.equal(typeof made.text, 'string');
assert.ok(['stop', 'length'].includes(made.finishReason), made.finishReason);
assert.ok(made.usage.inputTokens > 0 && made.usage.outputTokens > 0);
console.log('generateText ok');

const streamed = streamText(base);
let joined = '';
for await (const t of streamed.textStream) joined += t;
assert.equal(joined, await streamed.text);
assert.equal((await streamed.usage).inputTokens, made.usage.inputTokens);
console.log('streamText ok');

const called = await generateText({
  ...base, prompt: 'What is the weather in Paris?', maxOutputTokens: 160, toolChoice: 'required',
  tools: { get_weather: tool({ description: 'The weather in a city', inputSchema: jsonSchema(JSON.parse(process.env.TOOL_SCHEMA)) }) },
});
assert.equal(called.finishReason, 'tool-calls');
assert.equal(called.toolCalls[0].toolName, 'get_weather');
assert.equal(typeof called.toolCalls[0].input.city, 'string');
console.log('tools ok');
