// Structured outputs as agent SDKs send them (issue 32): zod v4 schemas
// through the Vercel AI SDK's generateObject (@ai-sdk/openai-compatible
// with supportsStructuredOutputs) and LangChain's withStructuredOutput
// (@langchain/openai, method "jsonSchema") against /v1/chat/completions
// (cmd/realizar-host's TestStructuredSDKs runs it against serve on
// stories260K). Each returned object must parse with its zod schema;
// prints "<client> <shape> ok" per pair. Environment: BASE_URL, API_KEY,
// MODEL, SDK_DIR (scripts/sdk-install.sh).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(process.env.SDK_DIR + '/package.json');
const { z } = require('zod');
const { generateObject } = require('ai');
const { createOpenAICompatible } = require('@ai-sdk/openai-compatible');
const { ChatOpenAI } = require('@langchain/openai');

const maxTokens = 256;
// The zod v4 validators the issue lists: each becomes format and pattern,
// pattern and maxLength, propertyNames (of any string, or of a pattern
// and a length), or non-integer bounds.
const shapes = {
  email: z.object({ email: z.email() }),
  uuid: z.object({ id: z.uuid() }),
  date: z.object({ day: z.iso.date() }),
  datetime: z.object({ at: z.iso.datetime() }),
  'regex-max': z.object({ code: z.string().regex(/^[A-Z]{2}[0-9]+$/).max(6) }),
  record: z.object({ scores: z.record(z.string(), z.number()) }),
  'record-keys': z.object({ tags: z.record(z.string().regex(/^[a-z]+$/).max(8), z.boolean()) }),
  fraction: z.object({ p: z.number().min(0).max(1) }),
};

const provider = createOpenAICompatible({
  name: 'realizar', baseURL: process.env.BASE_URL + '/v1', apiKey: process.env.API_KEY,
  supportsStructuredOutputs: true,
});
const chat = new ChatOpenAI({
  model: process.env.MODEL, apiKey: process.env.API_KEY, maxTokens, maxRetries: 0,
  configuration: { baseURL: process.env.BASE_URL + '/v1' },
});

let failed = 0;
for (const [name, schema] of Object.entries(shapes)) {
  const prompt = `Once upon a time, a ${name}:`;
  try {
    const made = await generateObject({
      model: provider(process.env.MODEL), schema, schemaName: name, prompt,
      maxOutputTokens: maxTokens, maxRetries: 0, seed: 1,
    });
    assert.deepEqual(schema.parse(made.object), made.object);
    console.log(`generateObject ${name} ok ${JSON.stringify(made.object)}`);
  } catch (e) {
    failed++;
    console.log(`generateObject ${name} FAILED: ${e.message} ${e.responseBody ?? e.text ?? ''}`);
  }
  try {
    const got = await chat.withStructuredOutput(schema, { method: 'jsonSchema', name }).invoke(prompt);
    assert.deepEqual(schema.parse(got), got);
    console.log(`withStructuredOutput ${name} ok ${JSON.stringify(got)}`);
  } catch (e) {
    failed++;
    console.log(`withStructuredOutput ${name} FAILED: ${e.message}`);
  }
}
process.exit(failed ? 1 : 0);
