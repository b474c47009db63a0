import { expect, test } from 'bun:test';
import { bodyTexts } from './guardrail-texts.ts';

test('Gemini, Converse and Cohere bodies: guardrails read the contents, not bytes, media types, signatures or settings', () => {
  const gemini = {
    systemInstruction: { parts: [{ text: 'sys' }] },
    contents: [
      {
        role: 'user',
        parts: [
          { text: 'hello' },
          { inlineData: { mimeType: 'image/png', data: 'QUJD' } },
          { fileData: { mimeType: 'image/png', fileUri: 'https://x/y.png' } },
        ],
      },
      { role: 'model', parts: [{ functionCall: { name: 'f', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' }] },
    ],
    generationConfig: { responseMimeType: 'application/json', stopSequences: ['END'] },
    safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
  };
  expect(bodyTexts(gemini).texts.map((t) => t.text)).toEqual(['sys', 'hello', 'Paris']);
  const converse = {
    system: [{ text: 'sys' }],
    messages: [
      { role: 'user', content: [{ text: 'hi' }, { image: { format: 'png', source: { bytes: 'QUJD' } } }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'f', input: { q: 'x' } } }] },
    ],
    inferenceConfig: { stopSequences: ['END'] },
  };
  expect(bodyTexts(converse).texts.map((t) => t.text)).toEqual(['sys', 'hi', 'x']);
  const cohere = { model: 'm', messages: [{ role: 'user', content: 'hey' }], safety_mode: 'STRICT', citation_options: { mode: 'FAST' } };
  expect(bodyTexts(cohere).texts.map((t) => t.text)).toEqual(['hey']);
});
