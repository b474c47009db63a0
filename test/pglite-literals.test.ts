import { afterAll, beforeAll, expect, test } from 'bun:test';
import { PGlite } from '@electric-sql/pglite';
import { dollarQuoted } from '../src/store/pglite.ts';
import { mulberry32 } from './support/fuzz-bodies.ts';

/**
 * dollarQuoted: any text as an SQL literal of the simple protocol (stored answers and the batched
 * configuration read on PGlite send values this way). PGlite must read back exactly the text.
 */

let pg: PGlite;
beforeAll(async () => {
  pg = await PGlite.create();
});
afterAll(async () => {
  await pg.close();
});

const roundTrip = async (text: string): Promise<unknown> =>
  ((await pg.exec(`select ${dollarQuoted(text)} as v`))[0]?.rows[0] as { v: unknown } | undefined)?.v;

test('tags, their pieces at either end, quotes and SQL come back as sent', async () => {
  const texts = [
    '',
    '$',
    '$$',
    'gw$',
    '$gw',
    '$gw$',
    'a$gw',
    'x$gw$y',
    '$gw$gw$',
    "it's",
    '"q"',
    "'; drop table t; --",
    '\\',
    '\\\\n',
    'é 👋 ✓',
    '\t\r\n',
    '$gwabc$ $gw1$',
    `a${'$gw'.repeat(50)}`,
  ];
  for (const t of texts) expect({ t, back: await roundTrip(t) }).toEqual({ t, back: t });
});

test('random texts over an alphabet of dollar signs, tag letters and quotes', async () => {
  const rnd = mulberry32(5);
  const alphabet = ['$', 'g', 'w', "'", '"', '\\', ';', ' ', 'x', '0'];
  for (let i = 0; i < 300; i++) {
    let t = '';
    for (let j = Math.floor(rnd() * 16); j > 0; j--) t += alphabet[Math.floor(rnd() * alphabet.length)];
    expect({ t, back: await roundTrip(t) }).toEqual({ t, back: t });
  }
});
