/**
 * The A2A agents as a data plane's snapshot carries them (contract §12): per project, the agents
 * assigned to it, each with its pinned card and upstream credential. Plain frozen data.
 */
export interface A2aAgentConfig {
  readonly agentId: string;
  /** The pinned card's name (`gen_ai.agent.name`). */
  readonly name: string;
  readonly cardUrl: string;
  /** The pinned card, as fetched; `cardSha256` is its hash. */
  readonly card: string;
  readonly cardSha256: string;
  /** The agent's JSON-RPC endpoint. */
  readonly rpcUrl: string;
  readonly authType: 'none' | 'bearer' | 'header';
  readonly authHeader: string | null;
  readonly authValue: string | null;
  readonly allowPrivate: boolean;
}

export const EMPTY_A2A: ReadonlyMap<string, A2aAgentConfig> = new Map();
