import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

/** The 400 an official SDK call ends with: its status and the param the gateway named (either SDK). */
export const refusal = async (call: () => Promise<unknown>): Promise<{ status: number; param: unknown; message: string }> => {
  try {
    await call();
  } catch (e) {
    if (e instanceof OpenAI.APIError) return { status: e.status ?? 0, param: e.param, message: e.message };
    if (e instanceof Anthropic.APIError) {
      const body = e.error as { error?: { param?: unknown; message?: string } } | undefined;
      return { status: e.status ?? 0, param: body?.error?.param, message: body?.error?.message ?? e.message };
    }
    throw e;
  }
  throw new Error('expected a refusal, got an answer');
};
