import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client.ts';
import type { OpOutput } from '../../api/index.ts';
import { messageOfError } from './fields.ts';
import { callInference, inferenceError, KeyPicker } from './keys.tsx';
import type { Scope } from './resource.tsx';

/**
 * The playground (contract §16): a chat with a model of the project, sent with a key of the user's
 * choice to the inference listener (through the console's relay), its answer shown as the stream
 * delivers it, then the request's record (SearchRequestRecords by the `X-Request-ID` it answered).
 */

type Rec = OpOutput<'SearchRequestRecords'>['records'][number];

/** The text deltas and an in-stream error of one SSE event's data (OpenAI chat chunks). */
const deltaOf = (data: string): { text: string; error?: string } => {
  const parsed: unknown = JSON.parse(data);
  if (parsed === null || typeof parsed !== 'object') return { text: '' };
  const error: unknown = Reflect.get(parsed, 'error');
  if (error !== null && typeof error === 'object') {
    const m: unknown = Reflect.get(error, 'message');
    return { text: '', error: typeof m === 'string' ? m : 'the stream ended with an error' };
  }
  const choices: unknown = Reflect.get(parsed, 'choices');
  if (!Array.isArray(choices)) return { text: '' };
  let text = '';
  for (const c of choices) {
    const delta: unknown = c !== null && typeof c === 'object' ? Reflect.get(c, 'delta') : undefined;
    const content: unknown = delta !== null && typeof delta === 'object' ? Reflect.get(delta, 'content') : undefined;
    if (typeof content === 'string') text += content;
  }
  return { text };
};

/** Reads an SSE body event by event, calling `onData` with each event's `data`. */
const readEvents = async (body: ReadableStream<Uint8Array>, onData: (data: string) => void): Promise<void> => {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    buffer += decoder.decode(value, { stream: !done });
    const events = buffer.split(/\r?\n\r?\n/);
    buffer = done ? '' : (events.pop() ?? '');
    for (const event of events) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (data && data !== '[DONE]') onData(data);
    }
    if (done) return;
  }
};

function RecordOf({ r }: { r: Rec }) {
  const rows: [string, string][] = [
    ['Request ID', r.requestId],
    ['Model', r.model],
    ['Target', `${r.connection}/${r.upstreamModel}`],
    ['HTTP status', r.errorCode ? `${r.httpStatus} ${r.errorCode}` : String(r.httpStatus)],
    ['Latency', `${r.latencyMs} ms`],
    ['Tokens', `${r.usage.promptTokens} in / ${r.usage.completionTokens} out`],
    ['Cost', `$${r.cost}`],
  ];
  return (
    <dl class="record">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function PlaygroundPage({ scope }: { scope: Scope }) {
  const [models, setModels] = useState<string[] | undefined>(undefined);
  const [model, setModel] = useState('');
  const [key, setKey] = useState('');
  const [prompt, setPrompt] = useState('');
  const [answer, setAnswer] = useState('');
  const [status, setStatus] = useState('');
  const [error, setError] = useState('');
  const [requestId, setRequestId] = useState('');
  const [record, setRecord] = useState<Rec | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const client = scope.session.client;
  useEffect(() => {
    void client.call('ListProjectModels', { customerId: scope.customerId, projectId: scope.projectId, pageSize: 1000 }).then(
      (page) => {
        const list = page.entries.map((e) => e.model.model);
        setModels(list);
        setModel(list[0] ?? '');
      },
      (e: unknown) => {
        if (!(e instanceof ApiError)) throw e;
        setModels([]);
        setError(messageOfError(e.message));
      },
    );
  }, [scope.customerId, scope.projectId]);

  /** The record, once the records writer has stored it (it writes in batches: asked again for up to 30 s). */
  const findRecord = async (id: string) => {
    setStatus('Answer complete. Waiting for its record…');
    for (let i = 0; i < 30; i++) {
      const found = await client.call('SearchRequestRecords', { customerId: scope.customerId, projectId: scope.projectId, requestId: id });
      const r = found.records[0];
      if (r) {
        setRecord(r);
        setStatus('Answer complete, with its record.');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    setStatus('Answer complete. Its record is not stored yet: search for it on the Records page.');
  };

  const send = async (e: Event) => {
    e.preventDefault();
    setAnswer('');
    setError('');
    setRecord(undefined);
    setRequestId('');
    if (!key) return setError('Choose or paste an API key first.');
    setBusy(true);
    setStatus('Sending…');
    try {
      const res = await callInference(key, 'POST', '/v1/chat/completions', {
        model,
        messages: [{ role: 'user', content: prompt }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const id = res.headers.get('x-request-id') ?? '';
      setRequestId(id);
      if (!res.ok || !res.body) {
        setError(await inferenceError(res));
        setStatus('');
      } else {
        setStatus('Streaming…');
        let failed = '';
        await readEvents(res.body, (data) => {
          const d = deltaOf(data);
          if (d.error) failed = d.error;
          if (d.text) setAnswer((a) => a + d.text);
        });
        if (failed) setError(failed);
      }
      if (id) await findRecord(id);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="h-playground">
      <h2 id="h-playground">Playground</h2>
      <p class="muted">
        A chat with a model of project {scope.projectId}, sent to the inference listener with the key below, as any client would: it is
        routed, limited, billed and recorded like every request.
      </p>
      <form id="form-playground" onSubmit={send}>
        <div class="field">
          <label for="playground-model">Model</label>
          <select id="playground-model" value={model} onChange={(e) => setModel(e.currentTarget.value)} required>
            {models === undefined ? <option value="">Loading…</option> : null}
            {models?.length === 0 ? <option value="">(no model assigned to the project)</option> : null}
            {(models ?? []).map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </div>
        <KeyPicker scope={scope} idPrefix="playground" onKey={setKey} />
        <div class="field">
          <label for="playground-prompt">Message</label>
          <textarea id="playground-prompt" rows={4} required value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
        </div>
        <button type="submit" disabled={busy || !model}>
          Send
        </button>
      </form>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <p role="status" class="muted">
        {status}
      </p>
      <h3 id="h-answer">Answer</h3>
      <div class="answer" id="playground-answer" role="log" aria-labelledby="h-answer" aria-busy={busy}>
        {answer}
      </div>
      {requestId ? (
        <p>
          Request ID <code>{requestId}</code>
        </p>
      ) : null}
      {record ? (
        <>
          <h3>Its record</h3>
          <RecordOf r={record} />
        </>
      ) : null}
    </section>
  );
}
