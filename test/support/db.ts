import postgres from 'postgres';

/**
 * Which database the integration tests use: PGlite in memory by default, or a fresh PostgreSQL
 * database per test file when TEST_DATABASE_URL names a server (CI runs the suite both ways).
 */
export interface TestDatabase {
  /** DATABASE_URL for the gateway, or undefined for embedded PGlite. */
  url: string | undefined;
  label: string;
  drop(): Promise<void>;
}

export const testDatabase = async (): Promise<TestDatabase> => {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) return { url: undefined, label: 'pglite', drop: async () => {} };
  const name = `gw_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const u = new URL(base);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    label: 'postgres',
    drop: async () => {
      const a = postgres(base, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
};
