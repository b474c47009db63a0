import { useEffect, useState } from 'preact/hooks';
import { callInference, inferenceError, KeyPicker } from './keys.tsx';
import type { Scope } from './resource.tsx';
import { Table } from './table.tsx';

/**
 * The project's files and batches (contract §11): OpenAI's `GET /v1/files` and `GET /v1/batches`
 * of the inference listener, read with an API key of the project (files and batches belong to the
 * project of the key that made them). Read-only: uploading and creating batches is the clients'.
 */

type Row = Record<string, unknown>;

const rowsOf = (parsed: unknown): Row[] => {
  const data: unknown = parsed !== null && typeof parsed === 'object' ? Reflect.get(parsed, 'data') : undefined;
  return Array.isArray(data)
    ? data.flatMap((d: unknown) =>
        d !== null && typeof d === 'object' && !Array.isArray(d) ? [Object.fromEntries(Object.entries(d))] : [],
      )
    : [];
};

const cell = (v: unknown): string =>
  v === undefined || v === null
    ? ''
    : typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
      ? String(v)
      : JSON.stringify(v);
const when = (v: unknown): string => (typeof v === 'number' ? new Date(v * 1000).toISOString() : cell(v));
const counts = (v: unknown): string => {
  if (v === null || typeof v !== 'object') return '';
  const n = (k: string) => cell(Reflect.get(v, k));
  return `${n('completed')} done, ${n('failed')} failed of ${n('total')}`;
};

function Listing({
  title,
  path,
  columns,
  cells,
  keyValue,
}: {
  title: string;
  path: string;
  columns: string[];
  cells: (r: Row) => string[];
  keyValue: string;
}) {
  const [rows, setRows] = useState<Row[] | undefined>(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    if (!keyValue) return;
    setRows(undefined);
    void callInference(keyValue, 'GET', path).then(async (res) => {
      if (!res.ok) {
        setError(await inferenceError(res));
        return setRows([]);
      }
      setError('');
      setRows(rowsOf(await res.json()));
    });
  }, [keyValue, path]);
  const id = `h-${path.replace(/\W+/g, '-')}`;
  return (
    <section aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {!keyValue ? (
        <p class="empty">Choose or paste an API key of the project to list them.</p>
      ) : rows === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : rows.length === 0 ? (
        <p class="empty">None yet.</p>
      ) : (
        <Table label={title} columns={columns} rows={rows.map((r, i) => ({ key: cell(r.id) || String(i), cells: cells(r) }))} />
      )}
    </section>
  );
}

export function FilesPage({ scope }: { scope: Scope }) {
  const [key, setKey] = useState('');
  return (
    <section aria-labelledby="h-files">
      <h2 id="h-files">Files and batches</h2>
      <KeyPicker scope={scope} idPrefix="files" onKey={setKey} />
      <Listing
        title="Files"
        path="/v1/files"
        keyValue={key}
        columns={['ID', 'Filename', 'Purpose', 'Bytes', 'Created']}
        cells={(r) => [cell(r.id), cell(r.filename), cell(r.purpose), cell(r.bytes), when(r.created_at)]}
      />
      <Listing
        title="Batches"
        path="/v1/batches"
        keyValue={key}
        columns={['ID', 'Endpoint', 'Status', 'Requests', 'Input file', 'Output file', 'Created']}
        cells={(r) => [
          cell(r.id),
          cell(r.endpoint),
          cell(r.status),
          counts(r.request_counts),
          cell(r.input_file_id),
          cell(r.output_file_id),
          when(r.created_at),
        ]}
      />
    </section>
  );
}
