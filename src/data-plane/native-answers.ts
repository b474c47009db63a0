/**
 * How a same-format answer becomes the client's when the model is not in a `"model"` member:
 * Gemini names it in `modelVersion` (of the JSON answer and of every stream chunk), which is set
 * to the model the client asked for, as the translated path does.
 */
import type { NativeAnswer } from './responses-native.ts';

const MODEL_VERSION = /"modelVersion"\s*:\s*"(?:[^"\\]|\\.)*"/g;

export const GEMINI_ANSWER = (model: string): NativeAnswer => {
  const member = `"modelVersion":${JSON.stringify(model)}`;
  const splice = (text: string): string => (text.includes('"modelVersion"') ? text.replace(MODEL_VERSION, member) : text);
  return { json: splice, splicer: () => splice };
};
