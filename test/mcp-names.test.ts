import { expect, test } from 'bun:test';
import type { McpProfileConfig } from '../src/mcp/config.ts';
import { candidatesFor, listedName, toolAllowed } from '../src/mcp/names.ts';
import { newNonce, openSessionId, type SessionState, sessionIdOf } from '../src/mcp/session.ts';

const profile: McpProfileConfig = {
  id: 'p',
  projectUuid: 'u',
  profileId: 'x',
  servers: [
    { serverId: 'a', prefix: 'a', tools: ['echo', 'get_*'] },
    { serverId: 'ab', prefix: 'a__b' },
    { serverId: 'flat', prefix: '' },
  ],
};

test('names: prefixes, globs (listed = callable), the most specific prefix first', () => {
  const [a, , flat] = profile.servers;
  if (!a || !flat) throw new Error('profile');
  expect(listedName(a, 'echo')).toBe('a__echo');
  expect(listedName(flat, 'echo')).toBe('echo');
  expect(toolAllowed(a, 'echo')).toBe(true);
  expect(toolAllowed(a, 'get_weather')).toBe(true);
  expect(toolAllowed(a, 'echo2')).toBe(false);
  expect(toolAllowed(a, 'reset')).toBe(false);
  expect(toolAllowed(flat, 'anything')).toBe(true);
  expect(candidatesFor(profile, 'a__b__x').map((c) => `${c.entry.serverId}:${c.name}`)).toEqual(['ab:x', 'a:b__x', 'flat:a__b__x']);
  expect(candidatesFor(profile, 'plain').map((c) => c.entry.serverId)).toEqual(['flat']);
});

test('session ids: checked with the credential that made them, tampering refused', () => {
  const state: SessionState = {
    profile: 'p',
    caller: 'k1',
    protocolVersion: '2025-11-25',
    capabilities: { sampling: {} },
    clientInfo: { name: 'c', version: '1' },
    issued: 1,
    nonce: newNonce(),
  };
  const id = sessionIdOf('sk-one', state);
  expect(/^[\x21-\x7e]+$/.test(id)).toBe(true);
  expect(openSessionId('sk-one', id)).toEqual(state);
  expect(openSessionId('sk-two', id)).toBeUndefined();
  const [payload, mac] = id.split('.');
  const forged = Buffer.from(JSON.stringify({ ...state, profile: 'other' })).toString('base64url');
  expect(openSessionId('sk-one', `${forged}.${mac}`)).toBeUndefined();
  expect(openSessionId('sk-one', `${payload}.`)).toBeUndefined();
  expect(openSessionId('sk-one', 'garbage')).toBeUndefined();
});
