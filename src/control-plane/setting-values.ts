/** The setting-value formats live in src/governance/ (framework-free, shared with the data plane). */
export * from '../governance/setting-values.ts';
