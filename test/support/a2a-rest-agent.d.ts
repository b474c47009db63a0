import type { DefaultRequestHandler } from '@a2a-js/sdk/server';

export interface RestBinding {
  /** The binding's base URL (`…/rest`), as the agent's card lists it. */
  url: string;
  /** Each call the binding received: verb, path under `/rest`, and the headers the gateway sets. */
  calls: { method: string; path: string; authorization: string | null; traceparent: string | null; correlation: string | null }[];
  stop(): Promise<void>;
}

export declare const startRestBinding: (handlerOf: () => DefaultRequestHandler, bearer?: string) => Promise<RestBinding>;
