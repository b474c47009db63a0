import type { FieldRow } from './field-support-types.ts';

/**
 * The rows of the field-support table for the client formats of contract §13 (Gemini, Converse,
 * Cohere v2): what each family does with their fields, walked like the others
 * (test/field-support-walk.test.ts). Same format and same upstream API: passed through.
 */

const geminiUser = [{ role: 'user', parts: [{ text: 'hi' }] }];
const converseUser = [{ role: 'user', content: [{ text: 'hi' }] }];
const cohereUser = [{ role: 'user', content: 'hi' }];

export const FORMAT_FIELD_SUPPORT: readonly FieldRow[] = [
  {
    field: 'Gemini `systemInstruction`',
    cells: {
      openai: 'a system message',
      anthropic: '`system`',
      gemini: 'passed through',
      'bedrock-cohere': 'Bedrock: `system`; Cohere: a system message',
    },
    probes: [
      {
        format: 'gemini',
        body: { systemInstruction: { parts: [{ text: 'be brief' }] }, contents: geminiUser },
        expect: {
          openai: { sent: 'messages.0.content', equals: 'be brief' },
          anthropic: { sent: 'system', equals: 'be brief' },
          gemini: { sent: 'systemInstruction.parts.0.text', equals: 'be brief' },
          bedrock: { sent: 'system.0.text', equals: 'be brief' },
          cohere: { sent: 'messages.0.role', equals: 'system' },
        },
      },
    ],
  },
  {
    field: 'Gemini `generationConfig` (`maxOutputTokens`, `stopSequences`, `temperature`, `topP`)',
    cells: {
      openai: '`max_tokens`, `stop`, `temperature`, `top_p`',
      anthropic: '`max_tokens`, `stop_sequences`, `temperature`, `top_p`',
      gemini: 'passed through',
      'bedrock-cohere': 'Bedrock: `inferenceConfig`; Cohere: `max_tokens`, `stop_sequences`, `temperature`, `p`',
    },
    probes: [
      {
        format: 'gemini',
        body: { generationConfig: { maxOutputTokens: 50, stopSequences: ['END'], topP: 0.5 }, contents: geminiUser },
        expect: {
          openai: { sent: 'stop', equals: ['END'] },
          anthropic: { sent: 'stop_sequences', equals: ['END'] },
          gemini: { sent: 'generationConfig.maxOutputTokens', equals: 50 },
          bedrock: { sent: 'inferenceConfig.stopSequences', equals: ['END'] },
          cohere: { sent: 'p', equals: 0.5 },
        },
      },
    ],
  },
  {
    field: 'Gemini `safetySettings`, `cachedContent`, built-in tools (`googleSearch`, `codeExecution`…)',
    cells: {
      openai: 'native-only: 400 naming the field',
      anthropic: 'native-only: 400 naming the field',
      gemini: 'passed through',
      'bedrock-cohere': 'native-only: 400 naming the field',
    },
    probes: [
      {
        format: 'gemini',
        body: { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }], contents: geminiUser },
        expect: {
          openai: { refused: 'safetySettings' },
          anthropic: { refused: 'safetySettings' },
          gemini: { sent: 'safetySettings.0.threshold', equals: 'BLOCK_NONE' },
          bedrock: { refused: 'safetySettings' },
          cohere: { refused: 'safetySettings' },
        },
      },
      {
        format: 'gemini',
        body: { tools: [{ googleSearch: {} }], contents: geminiUser },
        expect: { openai: { refused: 'tools.0.googleSearch' }, gemini: { sent: 'tools.0.googleSearch' } },
      },
    ],
  },
  {
    field: 'Converse `guardrailConfig`, `promptVariables`, `cachePoint` blocks',
    cells: {
      openai: 'native-only: 400 naming the field',
      anthropic: 'native-only: 400 naming the field',
      gemini: 'native-only: 400 naming the field',
      'bedrock-cohere': 'Bedrock: passed through; Cohere: native-only, 400',
    },
    probes: [
      {
        format: 'converse',
        body: { guardrailConfig: { guardrailIdentifier: 'g', guardrailVersion: '1' }, messages: converseUser },
        expect: {
          openai: { refused: 'guardrailConfig' },
          anthropic: { refused: 'guardrailConfig' },
          gemini: { refused: 'guardrailConfig' },
          bedrock: { sent: 'guardrailConfig.guardrailIdentifier', equals: 'g' },
          cohere: { refused: 'guardrailConfig' },
        },
      },
      {
        format: 'converse',
        body: { messages: [{ role: 'user', content: [{ text: 'hi' }, { cachePoint: { type: 'default' } }] }] },
        expect: { anthropic: { refused: 'messages.0.content.1.cachePoint' }, bedrock: { sent: 'messages.0.content.1.cachePoint' } },
      },
    ],
  },
  {
    field: 'Converse `inferenceConfig` (`maxTokens`, `stopSequences`)',
    cells: {
      openai: '`max_tokens`, `stop`',
      anthropic: '`max_tokens`, `stop_sequences`',
      gemini: '`generationConfig.maxOutputTokens`, `stopSequences`',
      'bedrock-cohere': 'Bedrock: passed through; Cohere: `max_tokens`, `stop_sequences`',
    },
    probes: [
      {
        format: 'converse',
        body: { inferenceConfig: { maxTokens: 50, stopSequences: ['END'] }, messages: converseUser },
        expect: {
          openai: { sent: 'stop', equals: ['END'] },
          anthropic: { sent: 'stop_sequences', equals: ['END'] },
          gemini: { sent: 'generationConfig.stopSequences', equals: ['END'] },
          bedrock: { sent: 'inferenceConfig.maxTokens', equals: 50 },
          cohere: { sent: 'max_tokens', equals: 50 },
        },
      },
    ],
  },
  {
    field: 'Top-k: Messages `top_k`, Gemini `generationConfig.topK`, Cohere `k`, Converse `additionalModelRequestFields.top_k`',
    cells: {
      openai:
        '`top_k` to providers with the top-k quirk (together, fireworks, openrouter, vllm, ollama-openai, hf-tgi); 400 naming the field elsewhere (OpenAI, Azure, … have no top-k)',
      anthropic: '`top_k`',
      gemini: '`generationConfig.topK`',
      'bedrock-cohere':
        'Bedrock: `additionalModelRequestFields.top_k` for Anthropic models (Converse: passed through), 400 naming the field for others; Cohere: `k`',
    },
    probes: [
      {
        format: 'messages',
        body: { max_tokens: 50, top_k: 5, messages: [{ role: 'user', content: 'hi' }] },
        expect: {
          openai: { refused: 'top_k' },
          'openai-translated': { refused: 'top_k' },
          anthropic: { sent: 'top_k', equals: 5 },
          gemini: { sent: 'generationConfig.topK', equals: 5 },
          bedrock: { refused: 'top_k' },
          cohere: { sent: 'k', equals: 5 },
        },
      },
      {
        format: 'gemini',
        body: { generationConfig: { topK: 5 }, contents: geminiUser },
        expect: {
          openai: { refused: 'generationConfig.topK' },
          anthropic: { sent: 'top_k', equals: 5 },
          gemini: { sent: 'generationConfig.topK', equals: 5 },
          bedrock: { refused: 'generationConfig.topK' },
          cohere: { sent: 'k', equals: 5 },
        },
      },
      {
        format: 'cohere',
        body: { k: 5, messages: cohereUser },
        expect: {
          openai: { refused: 'k' },
          anthropic: { sent: 'top_k', equals: 5 },
          gemini: { sent: 'generationConfig.topK', equals: 5 },
          bedrock: { refused: 'k' },
          cohere: { sent: 'k', equals: 5 },
        },
      },
      {
        format: 'converse',
        body: { additionalModelRequestFields: { top_k: 5 }, messages: converseUser },
        expect: {
          openai: { refused: 'additionalModelRequestFields.top_k' },
          anthropic: { sent: 'top_k', equals: 5 },
          gemini: { sent: 'generationConfig.topK', equals: 5 },
          bedrock: { sent: 'additionalModelRequestFields.top_k', equals: 5 },
          cohere: { sent: 'k', equals: 5 },
        },
      },
    ],
  },
  {
    field: 'Cohere `documents`, `citation_options`, `safety_mode`, `logprobs`, `priority`',
    cells: {
      openai: 'native-only: 400 naming the field',
      anthropic: 'native-only: 400 naming the field',
      gemini: 'native-only: 400 naming the field',
      'bedrock-cohere': 'Bedrock: native-only, 400; Cohere: passed through',
    },
    probes: [
      {
        format: 'cohere',
        body: { documents: ['a fact'], messages: cohereUser },
        expect: {
          openai: { refused: 'documents' },
          anthropic: { refused: 'documents' },
          gemini: { refused: 'documents' },
          bedrock: { refused: 'documents' },
          cohere: { sent: 'documents', equals: ['a fact'] },
        },
      },
    ],
  },
  {
    field: 'Cohere `p`, `response_format: {type: "json_object", json_schema}`',
    cells: {
      openai: '`top_p`; `response_format: json_schema`',
      anthropic: '`top_p`; structured output',
      gemini: '`topP`; `responseJsonSchema`',
      'bedrock-cohere': 'Bedrock: `topP`, a forced tool; Cohere: passed through',
    },
    probes: [
      {
        format: 'cohere',
        body: { p: 0.5, response_format: { type: 'json_object', json_schema: { type: 'object' } }, messages: cohereUser },
        expect: {
          openai: { sent: 'top_p', equals: 0.5 },
          anthropic: { sent: 'top_p', equals: 0.5 },
          gemini: { sent: 'generationConfig.topP', equals: 0.5 },
          bedrock: { sent: 'inferenceConfig.topP', equals: 0.5 },
          cohere: { sent: 'response_format.json_schema', equals: { type: 'object' } },
        },
      },
    ],
  },
];
