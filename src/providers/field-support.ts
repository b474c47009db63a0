import { FORMAT_FIELD_SUPPORT } from './field-support-formats.ts';
import type { FieldRow } from './field-support-types.ts';

/**
 * What each upstream family honours, maps or refuses of a client's request fields (contract §2,
 * issue 26), as data: docs/client-compatibility.md's table is generated from this list (`bun run docs:fields`,
 * field-support-doc.ts), and test/field-support-walk.test.ts sends every probe to every target named
 * and checks the outcome given here — so the table, the code and the behaviour cannot drift apart.
 */

const user = [{ role: 'user', content: 'hi' }];
const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };

export const FIELD_SUPPORT: readonly FieldRow[] = [
  {
    field: 'Chat `n` > 1',
    cells: {
      openai: 'passed through (several choices); native-only when translated',
      anthropic: '400 `n`',
      gemini: '400 `n`',
      'bedrock-cohere': '400 `n`',
    },
    probes: [
      {
        format: 'chat',
        body: { n: 2, messages: user },
        expect: {
          openai: { sent: 'n', equals: 2 },
          'openai-translated': { refused: 'n' },
          anthropic: { refused: 'n' },
          gemini: { refused: 'n' },
          bedrock: { refused: 'n' },
          cohere: { refused: 'n' },
        },
      },
    ],
  },
  {
    field: 'Chat `logprobs: true`, `top_logprobs` > 0',
    cells: {
      openai: 'passed through; native-only when translated',
      anthropic: '400 `logprobs` / `top_logprobs`',
      gemini: '400',
      'bedrock-cohere': '400',
    },
    probes: [
      {
        format: 'chat',
        body: { logprobs: true, top_logprobs: 2, messages: user },
        expect: {
          openai: { sent: 'logprobs', equals: true },
          'openai-translated': { refused: 'logprobs' },
          anthropic: { refused: 'logprobs' },
          gemini: { refused: 'logprobs' },
          bedrock: { refused: 'logprobs' },
          cohere: { refused: 'logprobs' },
        },
      },
      { format: 'chat', body: { top_logprobs: 2, messages: user }, expect: { anthropic: { refused: 'top_logprobs' } } },
    ],
  },
  {
    field: 'Responses `top_logprobs` > 0, `include: ["message.output_text.logprobs"]`',
    cells: {
      openai: 'sent natively (OpenAI, Azure)',
      anthropic: '400 `top_logprobs` / `include.N`',
      gemini: '400',
      'bedrock-cohere': '400',
    },
    probes: [
      {
        format: 'responses',
        body: { top_logprobs: 2, input: 'hi' },
        expect: {
          openai: { sent: 'top_logprobs', equals: 2 },
          anthropic: { refused: 'top_logprobs' },
          gemini: { refused: 'top_logprobs' },
          bedrock: { refused: 'top_logprobs' },
          cohere: { refused: 'top_logprobs' },
        },
      },
      {
        format: 'responses',
        body: { include: ['message.output_text.logprobs'], input: 'hi' },
        expect: { anthropic: { refused: 'include.0' } },
      },
    ],
  },
  {
    field: 'Chat `reasoning_effort`, Responses `reasoning.effort`',
    cells: {
      openai: 'as sent (watsonx takes no reasoning setting: 400 naming the field)',
      anthropic:
        '`thinking: {type: "enabled", budget_tokens}` by the table below, within the client\'s limit (next row); without one, `max_tokens` raised to the budget + the default (within the catalog\'s `maxOutputTokens`)',
      gemini: "`thinkingConfig.thinkingBudget` by the same table, within the client's limit (next row), `includeThoughts`",
      'bedrock-cohere': '400 naming the field',
    },
    probes: [
      {
        format: 'chat',
        body: { reasoning_effort: 'medium', messages: user },
        expect: {
          openai: { sent: 'reasoning_effort', equals: 'medium' },
          'openai-translated': { sent: 'reasoning_effort', equals: 'medium' },
          anthropic: { sent: 'thinking.budget_tokens', equals: 8192 },
          gemini: { sent: 'generationConfig.thinkingConfig.thinkingBudget', equals: 8192 },
          bedrock: { refused: 'reasoning_effort' },
          cohere: { refused: 'reasoning_effort' },
        },
      },
      {
        format: 'responses',
        body: { reasoning: { effort: 'high' }, input: 'hi' },
        expect: {
          openai: { sent: 'reasoning.effort', equals: 'high' },
          anthropic: { sent: 'thinking.budget_tokens', equals: 24576 },
          gemini: { sent: 'generationConfig.thinkingConfig.includeThoughts', equals: true },
          bedrock: { refused: 'reasoning.effort' },
          cohere: { refused: 'reasoning.effort' },
        },
      },
    ],
  },
  {
    field:
      "The client's limit with reasoning: Chat `max_completion_tokens` / `max_tokens`, Responses `max_output_tokens`, Messages `max_tokens`",
    cells: {
      openai:
        "as sent; translated to an OpenAI / Azure reasoning model (o-series, gpt-5, or the catalog's `reasoning` capability) as `max_completion_tokens` (they refuse `max_tokens`), unless the connection sets `maxTokensField`",
      anthropic:
        '`max_tokens` = the limit, which bounds thinking and answer together; an effort whose budget is not below it is lowered to the largest budget of the table that is; a limit of 1024 or less (no room for the 1024-token minimum): 400 naming the effort field',
      gemini:
        '`maxOutputTokens` = the limit (Gemini counts thinking inside it); the budget lowered below it by the table, then to the limit − 1',
      'bedrock-cohere': '400 naming the reasoning field (above)',
    },
    probes: [
      {
        format: 'chat',
        body: { reasoning_effort: 'high', max_completion_tokens: 2000, messages: user },
        expect: {
          openai: { sent: 'max_completion_tokens', equals: 2000 },
          'openai-translated': { sent: 'max_completion_tokens', equals: 2000 },
          anthropic: { sent: 'max_tokens', equals: 2000 },
          gemini: { sent: 'generationConfig.maxOutputTokens', equals: 2000 },
          bedrock: { refused: 'reasoning_effort' },
          cohere: { refused: 'reasoning_effort' },
        },
      },
      {
        format: 'chat',
        body: { reasoning_effort: 'high', max_completion_tokens: 2000, messages: user },
        expect: {
          anthropic: { sent: 'thinking.budget_tokens', equals: 1024 },
          gemini: { sent: 'generationConfig.thinkingConfig.thinkingBudget', equals: 1024 },
        },
      },
      {
        format: 'chat',
        body: { reasoning_effort: 'low', max_tokens: 1000, messages: user },
        expect: {
          anthropic: { refused: 'reasoning_effort' },
          gemini: { sent: 'generationConfig.thinkingConfig.thinkingBudget', equals: 999 },
        },
      },
      {
        format: 'responses',
        body: { reasoning: { effort: 'high' }, max_output_tokens: 10000, input: 'hi' },
        expect: {
          openai: { sent: 'max_output_tokens', equals: 10000 },
          anthropic: { sent: 'thinking.budget_tokens', equals: 8192 },
          gemini: { sent: 'generationConfig.thinkingConfig.thinkingBudget', equals: 8192 },
        },
      },
      {
        format: 'messages',
        body: { max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: user },
        expect: {
          openai: { sent: 'max_completion_tokens', equals: 3000 },
          anthropic: { sent: 'max_tokens', equals: 3000 },
          gemini: { sent: 'generationConfig.maxOutputTokens', equals: 3000 },
        },
      },
      {
        format: 'messages',
        body: { max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: user },
        expect: { openai: { absent: 'max_tokens' } },
      },
    ],
  },
  {
    field: 'Messages `thinking: {type: "enabled", budget_tokens}`',
    cells: {
      openai: '`reasoning_effort` by the table below',
      anthropic: 'passed through',
      gemini: '`thinkingBudget` = the budget',
      'bedrock-cohere': '400 `thinking.budget_tokens`',
    },
    probes: [
      {
        format: 'messages',
        body: { max_tokens: 20000, thinking: { type: 'enabled', budget_tokens: 10000 }, messages: user },
        expect: {
          openai: { sent: 'reasoning_effort', equals: 'medium' },
          anthropic: { sent: 'thinking.budget_tokens', equals: 10000 },
          gemini: { sent: 'generationConfig.thinkingConfig.thinkingBudget', equals: 10000 },
          bedrock: { refused: 'thinking.budget_tokens' },
          cohere: { refused: 'thinking.budget_tokens' },
        },
      },
    ],
  },
  {
    field: 'Messages `output_config.effort`',
    cells: {
      openai: '`reasoning_effort` (`xhigh`, `max` → `high`)',
      anthropic: 'passed through',
      gemini: "budget by the table, within the client's `max_tokens`",
      'bedrock-cohere': '400 `output_config.effort`',
    },
    probes: [
      {
        format: 'messages',
        body: { max_tokens: 1000, output_config: { effort: 'max' }, messages: user },
        expect: {
          openai: { sent: 'reasoning_effort', equals: 'high' },
          anthropic: { sent: 'output_config.effort', equals: 'max' },
          // Within the client's limit (max_tokens 1000): below the table's smallest budget, the limit − 1.
          gemini: { sent: 'generationConfig.thinkingConfig.thinkingBudget', equals: 999 },
          bedrock: { refused: 'output_config.effort' },
          cohere: { refused: 'output_config.effort' },
        },
      },
    ],
  },
  {
    field: 'Messages `thinking: {type: "disabled" \\| "adaptive"}` (adaptive without `effort`)',
    cells: {
      openai: "nothing sent: the model's default",
      anthropic: 'passed through',
      gemini: 'nothing sent',
      'bedrock-cohere': 'nothing sent',
    },
    probes: [
      {
        format: 'messages',
        body: { max_tokens: 100, thinking: { type: 'disabled' }, messages: user },
        expect: {
          openai: { absent: 'reasoning_effort' },
          anthropic: { sent: 'thinking.type', equals: 'disabled' },
          gemini: { absent: 'generationConfig.thinkingConfig' },
          bedrock: { absent: 'additionalModelRequestFields' },
          cohere: { absent: 'thinking' },
        },
      },
      {
        format: 'messages',
        body: { max_tokens: 100, thinking: { type: 'adaptive' }, messages: user },
        expect: {
          openai: { absent: 'reasoning_effort' },
          anthropic: { sent: 'thinking.type', equals: 'adaptive' },
          gemini: { absent: 'generationConfig.thinkingConfig' },
        },
      },
    ],
  },
  {
    field: 'Messages `output_config.format` (structured output)',
    cells: {
      openai: '`response_format: json_schema` with `strict: true`; schema made strict (below)',
      anthropic: 'passed through',
      gemini: '`responseJsonSchema`',
      'bedrock-cohere': 'Bedrock: a forced tool; Cohere: `response_format`',
    },
    probes: [
      {
        format: 'messages',
        body: { max_tokens: 100, output_config: { format: { type: 'json_schema', schema } }, messages: user },
        expect: {
          openai: { sent: 'response_format.json_schema.strict', equals: true },
          anthropic: { sent: 'output_config.format.type', equals: 'json_schema' },
          gemini: { sent: 'generationConfig.responseJsonSchema' },
          bedrock: { sent: 'toolConfig.toolChoice.tool' },
          cohere: { sent: 'response_format' },
        },
      },
    ],
  },
  {
    field: 'Tool `strict` (Chat `tools[].function.strict`; Responses, Messages `tools[].strict`)',
    cells: {
      openai: 'passed through; translated: `strict` on the function, its schema made strict (below)',
      anthropic: '`strict` on the tool (strict tool use)',
      gemini:
        '`strict: true`: 400 `tools.N.function.strict` / `tools.N.strict` (no strict mode for function declarations); `false`: nothing to send',
      'bedrock-cohere':
        'Bedrock: as Gemini (Converse tools have no strict mode); Cohere: `strict_tools: true` (its switch covers every tool of the request)',
    },
    probes: [
      {
        format: 'chat',
        body: { tools: [{ type: 'function', function: { name: 'f', parameters: schema, strict: true } }], messages: user },
        expect: {
          openai: { sent: 'tools.0.function.strict', equals: true },
          'openai-translated': { sent: 'tools.0.function.strict', equals: true },
          anthropic: { sent: 'tools.0.strict', equals: true },
          gemini: { refused: 'tools.0.function.strict' },
          bedrock: { refused: 'tools.0.function.strict' },
          cohere: { sent: 'strict_tools', equals: true },
        },
      },
      {
        format: 'responses',
        body: { tools: [{ type: 'function', name: 'f', parameters: schema, strict: true }], input: 'hi' },
        expect: {
          openai: { sent: 'tools.0.strict', equals: true },
          anthropic: { sent: 'tools.0.strict', equals: true },
          gemini: { refused: 'tools.0.strict' },
          bedrock: { refused: 'tools.0.strict' },
        },
      },
      {
        format: 'messages',
        body: { max_tokens: 100, tools: [{ name: 'f', input_schema: schema, strict: true }], messages: user },
        expect: {
          openai: { sent: 'tools.0.function.strict', equals: true },
          anthropic: { sent: 'tools.0.strict', equals: true },
          gemini: { refused: 'tools.0.strict' },
          cohere: { sent: 'strict_tools', equals: true },
        },
      },
      {
        format: 'chat',
        body: { tools: [{ type: 'function', function: { name: 'f', parameters: schema, strict: false } }], messages: user },
        expect: {
          anthropic: { sent: 'tools.0.strict', equals: false },
          gemini: { sent: 'tools.0.functionDeclarations.0.name', equals: 'f' },
          bedrock: { sent: 'toolConfig.tools.0.toolSpec.name', equals: 'f' },
        },
      },
    ],
  },
  {
    field: 'Responses `background: true`',
    cells: {
      openai: 'run by the gateway (the upstream gets no `background`); polled, cancelled and resumed at the gateway',
      anthropic: 'same',
      gemini: 'same',
      'bedrock-cohere': 'same',
    },
    probes: [
      {
        format: 'responses',
        body: { background: true, input: 'hi' },
        expect: {
          openai: { absent: 'background' },
          anthropic: { absent: 'background' },
          gemini: { absent: 'background' },
          bedrock: { absent: 'background' },
          cohere: { absent: 'background' },
        },
      },
      {
        format: 'responses',
        body: { background: true, store: false, input: 'hi' },
        expect: { openai: { refused: 'background' }, anthropic: { refused: 'background' } },
      },
    ],
  },
  {
    field: 'Responses `conversation` (with `previous_response_id`: 400)',
    cells: {
      openai: "the conversation's items prepended by the gateway (the upstream gets no `conversation`)",
      anthropic: 'same',
      gemini: 'same',
      'bedrock-cohere': 'same',
    },
    probes: [
      {
        format: 'responses',
        body: { conversation: '$conversation', input: 'hi' },
        expect: {
          openai: { absent: 'conversation' },
          anthropic: { absent: 'conversation' },
          gemini: { absent: 'conversation' },
          bedrock: { absent: 'conversation' },
          cohere: { absent: 'conversation' },
        },
      },
      {
        format: 'responses',
        body: { conversation: '$conversation', previous_response_id: 'resp_x', input: 'hi' },
        expect: { openai: { refused: 'conversation' }, anthropic: { refused: 'conversation' } },
      },
    ],
  },
  ...FORMAT_FIELD_SUPPORT,
];
