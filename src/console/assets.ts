import { bundleConsole } from './bundle.ts' with { type: 'macro' };

/** The console's script and styles, bundled when this module is transpiled (see bundle.ts). */
export const ASSETS: { js: string; css: string } = bundleConsole();
