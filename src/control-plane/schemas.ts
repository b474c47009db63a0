/** Moved to src/api/kit.ts (the API module); re-exported while services move their schemas there. */
export * from '../api/kit.ts';
