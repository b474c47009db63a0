/**
 * The BYOK Provider enumeration (byok.v1) and the provider ids (adapters) whose traffic a key of
 * each value serves. The seed's five: two general LLM vendors, a cloud-hosted variant of the first,
 * and two cloud-platform model services. Adding one is a versioned change.
 */
export const BYOK_PROVIDERS = {
  PROVIDER_OPENAI: 'openai',
  PROVIDER_ANTHROPIC: 'anthropic',
  PROVIDER_AZURE_OPENAI: 'azure-openai',
  PROVIDER_BEDROCK: 'bedrock',
  PROVIDER_VERTEX: 'vertex',
} as const;

export type ByokProvider = keyof typeof BYOK_PROVIDERS;

export const BYOK_PROVIDER_NAMES = Object.keys(BYOK_PROVIDERS) as ByokProvider[];

/** The provider id a BYOK provider value serves, or undefined for an unknown value. */
export const byokProviderId = (p: string): string | undefined =>
  Object.hasOwn(BYOK_PROVIDERS, p) ? BYOK_PROVIDERS[p as ByokProvider] : undefined;
