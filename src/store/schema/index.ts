export * from './catalog.ts';
export * from './config.ts';
export * from './keys.ts';
export * from './records.ts';
export * from './routing.ts';
export * from './tenancy.ts';
