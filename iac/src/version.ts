/**
 * The provider's version, which is the gateway's (contract §6) and this package's (iac/package.json):
 * a constant, so the library reports it wherever it is installed. test/iac/package.test.ts fails
 * when it, iac/package.json's version and the gateway's package.json version differ.
 */
export const PROVIDER_VERSION = '0.1.0';
