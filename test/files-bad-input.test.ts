import { afterAll, beforeAll, expect, test } from 'bun:test';
import { setLogSink } from '../src/core/log.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Issue 38 item 7a: client values that reach the store through `/v1/files` and `/v1/batches` — a
 * multipart filename, the file's content, ids in the path, query values, batch metadata — with a
 * NUL or another control character are a 400 `invalid_request_error` in OpenAI's shape naming the
 * field (it was a 500 with nothing logged: PostgreSQL text cannot hold NUL), and nothing is stored.
 */

let w: World;
beforeAll(async () => {
  w = await startWorld();
}, 60_000);
afterAll(() => stopWorld(w));

const auth = () => ({ authorization: `Bearer ${w.p.apiKey}` });

/** A multipart upload written byte by byte (a client's SDK may escape what a hostile client sends raw). */
const upload = (filename: string, content = '{"custom_id":"a"}\n'): Promise<Response> => {
  const boundary = 'b0undary';
  const body = [
    `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/jsonl\r\n\r\n${content}\r\n`,
    `--${boundary}--\r\n`,
  ].join('');
  return fetch(`${w.tg.url}/v1/files`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: Buffer.from(body),
  });
};

const refused = async (res: Response, param: string): Promise<string> => {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: { type: string; param: string | null; message: string } };
  expect(body.error.type).toBe('invalid_request_error');
  expect(body.error.param).toBe(param);
  return body.error.message;
};

const fileCount = async (): Promise<number> => {
  const res = await fetch(`${w.tg.url}/v1/files`, { headers: auth() });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: unknown[] }).data.length;
};

test('a filename with NUL or another control character: 400 naming the field, nothing stored; a plain one is stored', async () => {
  const lines: string[] = [];
  setLogSink((l) => void lines.push(l));
  try {
    for (const name of ['in\0put.jsonl', 'in\x01put.jsonl', 'in\x7fput.jsonl', 'in\u0085put.jsonl']) {
      expect(await refused(await upload(name), 'file')).toBe(
        "The filename of 'file' must not contain control characters or unpaired surrogates.",
      );
    }
    expect(await refused(await upload('ok.jsonl', '{"custom_id":"a"}\0\n'), 'file')).toBe(
      "'file' must be UTF-8 text without NUL characters (JSON Lines).",
    );
    expect(await fileCount()).toBe(0);
    const ok = await upload('input-ü.jsonl');
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { filename: string }).filename).toBe('input-ü.jsonl');
    expect(await fileCount()).toBe(1);
    // Nothing failed inside: no error was logged.
    expect(lines.filter((l) => l.includes('"level":"error"'))).toEqual([]);
  } finally {
    setLogSink(undefined);
  }
});

test('ids in the path, query values and batch fields with control characters or bad escapes: 400 naming each', async () => {
  expect(await refused(await fetch(`${w.tg.url}/v1/files/file-%00x`, { headers: auth() }), 'file_id')).toContain(
    "'file_id' must not contain",
  );
  expect(await refused(await fetch(`${w.tg.url}/v1/files/file-%E0%A4%A`, { headers: auth() }), 'file_id')).toContain(
    'not a valid percent-encoded value',
  );
  expect(await refused(await fetch(`${w.tg.url}/v1/files/file-%01/content`, { headers: auth() }), 'file_id')).toContain("'file_id'");
  expect(await refused(await fetch(`${w.tg.url}/v1/files/file-%00`, { method: 'DELETE', headers: auth() }), 'file_id')).toContain(
    "'file_id'",
  );
  expect(await refused(await fetch(`${w.tg.url}/v1/files?purpose=ba%00tch`, { headers: auth() }), 'purpose')).toContain("'purpose'");
  expect(await refused(await fetch(`${w.tg.url}/v1/files?after=f%00`, { headers: auth() }), 'after')).toContain("'after'");
  expect(await refused(await fetch(`${w.tg.url}/v1/batches/batch_%00`, { headers: auth() }), 'batch_id')).toContain("'batch_id'");
  expect(await refused(await fetch(`${w.tg.url}/v1/batches/batch_%00/cancel`, { method: 'POST', headers: auth() }), 'batch_id')).toContain(
    "'batch_id'",
  );
  const create = (body: unknown) =>
    fetch(`${w.tg.url}/v1/batches`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const file = (await (await upload('meta.jsonl')).json()) as { id: string };
  expect(
    await refused(
      await create({ input_file_id: `${file.id}\0`, endpoint: '/v1/chat/completions', completion_window: '24h' }),
      'input_file_id',
    ),
  ).toContain("'input_file_id'");
  expect(
    await refused(
      await create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { team: 'a\0b' } }),
      'metadata',
    ),
  ).toContain('NUL');
  expect(
    await refused(
      await create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { team: 'a\ud800' } }),
      'metadata',
    ),
  ).toContain('unpaired');
  const listed = (await (await fetch(`${w.tg.url}/v1/batches`, { headers: auth() })).json()) as { data: unknown[] };
  expect(listed.data).toEqual([]);
});
