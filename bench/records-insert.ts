/**
 * Standalone: µs per row of the request-record insert on in-memory PGlite, per table/statement variant.
 *   bun bench/records-insert.ts [rounds=20] [variant-name-substring] [rows-per-batch=500]
 * Rows carry ~1.2 KB of bodies like a small chat request/answer. On the shared 2-core machine
 * (2026-11-23) every variant landed at 55–80 µs/row, the A/B differences inside the noise except
 * "no bodies" (~43): text vs jsonb bodies, json vs jsonb populate, fewer indexes, no ON CONFLICT,
 * UNLOGGED, COPY from a blob (~74) and batch size 50/500/2000 (77/64/57) all within ~10%.
 * Where a row's ~60 µs goes ("parse only" variants): handing the ~1.8 KB of text to PGlite ~15,
 * jsonb parse of it ~+16 (json ~+5), record building ~+2, heap/WAL/index insert the other ~30.
 */
import { PGlite } from '@electric-sql/pglite';

const cols = (body: string) => `request_id uuid primary key, client_request_id text, received_at timestamptz not null, customer_id text, project_id text,
  api_key_id text, endpoint text not null, model text, provider text, connection text, upstream_model text, http_status int not null,
  latency_ms int not null, ttfb_ms int, stream boolean not null default false, input_tokens int not null default 0, output_tokens int not null default 0,
  total_tokens int not null default 0, cached_input_tokens int not null default 0, cache_write_tokens int not null default 0,
  cost_nano_usd bigint not null default 0, attempts int not null default 0, error_code text, request_body ${body}, response_body ${body},
  sanitized text, guardrail_flags text`;
const IDX = ['create index ri1 on request_records(client_request_id)', 'create index ri2 on request_records(received_at)', 'create index ri3 on request_records(api_key_id, received_at)'];
const reqBody = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'x'.repeat(300) }, { role: 'user', content: 'y'.repeat(300) }], max_tokens: 100 });
const resBody = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'z'.repeat(350) }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } });
const row = () => `{"request_id":"${crypto.randomUUID()}","client_request_id":"c-${Math.random()}","received_at":"${new Date().toISOString()}","customer_id":"acme","project_id":"default","api_key_id":"k1","endpoint":"/v1/chat/completions","model":"gpt","provider":"openai","connection":"c","upstream_model":"gpt-4o-mini","http_status":200,"latency_ms":12,"ttfb_ms":10,"stream":false,"input_tokens":10,"output_tokens":20,"total_tokens":30,"cached_input_tokens":0,"cache_write_tokens":0,"cost_nano_usd":12345,"attempts":1,"sanitized":null,"request_body":${reqBody},"response_body":${resBody}}`;
const rowText = () => row().replace(`"request_body":${reqBody},"response_body":${resBody}`, `"request_body":${JSON.stringify(reqBody)},"response_body":${JSON.stringify(resBody)}`);

const only = process.argv[3];
const variants0: { name: string; body: string; idx: string[]; fn: string; text: boolean; unlogged?: boolean; plain?: boolean; parseOnly?: boolean; nobody?: boolean }[] = [
  { name: 'jsonb, 3 idx, jsonb_populate', body: 'jsonb', idx: IDX, fn: 'jsonb_populate_recordset(null::request_records, $1::text::jsonb)', text: false },
  { name: 'jsonb, 3 idx, json_populate', body: 'jsonb', idx: IDX, fn: 'json_populate_recordset(null::request_records, $1::text::json)', text: false },
  { name: 'text, 3 idx, jsonb_populate', body: 'text', idx: IDX, fn: 'jsonb_populate_recordset(null::request_records, $1::text::jsonb)', text: true },
  { name: 'text, 3 idx, json_populate', body: 'text', idx: IDX, fn: 'json_populate_recordset(null::request_records, $1::text::json)', text: true },
  { name: 'text, 0 idx, json_populate', body: 'text', idx: [], fn: 'json_populate_recordset(null::request_records, $1::text::json)', text: true },
  { name: 'text, idx2+3, json_populate', body: 'text', idx: IDX.slice(1), fn: 'json_populate_recordset(null::request_records, $1::text::json)', text: true },
  { name: 'text raw, 3 idx, json_populate', body: 'text', idx: IDX, fn: 'json_populate_recordset(null::request_records, $1::text::json)', text: false },
  { name: 'jsonb, 3 idx, jsonb, no on-conflict', body: 'jsonb', idx: IDX, fn: 'jsonb_populate_recordset(null::request_records, $1::text::jsonb)', text: false, plain: true },
  { name: 'parse only (select count(*) from jsonb_populate)', body: 'jsonb', idx: IDX, fn: 'jsonb_populate_recordset(null::request_records, $1::text::jsonb)', text: false, parseOnly: true },
  { name: 'parse only (jsonb_array_elements)', body: 'jsonb', idx: IDX, fn: 'jsonb_array_elements($1::text::jsonb)', text: false, parseOnly: true },
  { name: 'parse only (json_array_elements)', body: 'jsonb', idx: IDX, fn: 'json_array_elements($1::text::json)', text: false, parseOnly: true },
  { name: 'parse only (length of text)', body: 'jsonb', idx: IDX, fn: '(select length($1::text)) x', text: false, parseOnly: true },
  { name: 'UNLOGGED text, 3 idx, jsonb', body: 'text', idx: IDX, fn: 'jsonb_populate_recordset(null::request_records, $1::text::jsonb)', text: true, unlogged: true },
  { name: 'text, 3 idx, jsonb, no bodies', body: 'text', idx: IDX, fn: 'jsonb_populate_recordset(null::request_records, $1::text::jsonb)', text: true, nobody: true },
  { name: 'text, idx1+3, json_populate', body: 'text', idx: IDX.filter((_, i) => i !== 1), fn: 'json_populate_recordset(null::request_records, $1::text::json)', text: true },
];
const variants = only ? variants0.filter((v) => v.name.includes(only)) : variants0;
const BATCH = Number(process.argv[4] ?? 500);
const ROUNDS = Number(process.argv[2] ?? 20);
for (const v of variants) {
  const db = await PGlite.create();
  await db.exec(`create ${v.unlogged ? 'unlogged ' : ''}table request_records (${cols(v.body)})`);
  for (const i of v.idx) await db.exec(i);
  const sql = v.parseOnly ? `select count(*) from ${v.fn}` : `insert into request_records select * from ${v.fn}${v.plain ? '' : ' on conflict do nothing'}`;
  const mk = v.nobody ? () => row().replace(`"request_body":${reqBody},"response_body":${resBody}`, '"request_body":null,"response_body":null') : v.text ? rowText : row;
  const batches = Array.from({ length: ROUNDS + 3 }, () => `[${Array.from({ length: BATCH }, mk).join(',')}]`);
  for (let i = 0; i < 3; i++) await db.query(sql, [batches[i]]);
  const t0 = performance.now();
  for (let i = 3; i < batches.length; i++) await db.query(sql, [batches[i]]);
  const us = ((performance.now() - t0) * 1000) / (ROUNDS * BATCH);
  const n = await db.query<{ n: number }>('select count(*)::int n from request_records');
  console.log(`${v.name.padEnd(32)} ${us.toFixed(1)} µs/row  rows=${n.rows[0]?.n} rowchars=${mk().length}`);
  await db.close();
}
