/**
 * A self-contained API reference page (no CDN, no external assets): it fetches the OpenAPI
 * document generated from the operations' `t` schemas and renders every operation with its
 * request and response schemas, the required permission, and a small "try it" form.
 */
export const openApiPage = (title: string, specPath: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>
  :root { --fg:#1d2433; --muted:#5c6577; --line:#e3e6ec; --bg:#fafbfc; --accent:#3451b2; --code:#f1f3f7; }
  * { box-sizing: border-box; }
  body { margin:0; font: 14px/1.5 system-ui, -apple-system, Segoe UI, Roboto, sans-serif; color:var(--fg); background:var(--bg); }
  header { padding:14px 24px; border-bottom:1px solid var(--line); background:#fff; position:sticky; top:0; z-index:2; display:flex; gap:16px; align-items:center; flex-wrap:wrap; }
  header h1 { font-size:18px; margin:0; }
  header input { padding:6px 8px; border:1px solid var(--line); border-radius:6px; min-width:240px; }
  .layout { display:grid; grid-template-columns: 280px 1fr; }
  nav { border-right:1px solid var(--line); height: calc(100vh - 58px); overflow:auto; position:sticky; top:58px; padding:12px; background:#fff; }
  nav h3 { font-size:12px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); margin:14px 0 4px; }
  nav a { display:block; padding:2px 6px; color:var(--fg); text-decoration:none; border-radius:4px; font-size:13px; }
  nav a:hover { background:var(--code); }
  main { padding: 8px 28px 80px; max-width: 1100px; }
  section.op { background:#fff; border:1px solid var(--line); border-radius:8px; padding:16px 20px; margin:18px 0; }
  section.op h2 { margin:0 0 4px; font-size:17px; }
  .path { font-family: ui-monospace, Menlo, monospace; font-size:12.5px; color:var(--muted); }
  .post { background:#e6f4ea; color:#1e6b34; font-weight:600; padding:1px 6px; border-radius:4px; margin-right:6px; }
  .perm { display:inline-block; background:#eef1fb; color:var(--accent); border-radius:4px; padding:1px 6px; font-size:12px; }
  table { border-collapse: collapse; width:100%; margin:6px 0 10px; font-size:13px; }
  th, td { text-align:left; border-bottom:1px solid var(--line); padding:4px 8px; vertical-align:top; }
  th { color:var(--muted); font-weight:500; }
  code, .mono { font-family: ui-monospace, Menlo, monospace; font-size:12.5px; background:var(--code); padding:0 3px; border-radius:3px; }
  .req { color:#b42318; font-size:11px; margin-left:4px; }
  .c { color:var(--muted); font-size:12px; }
  details { margin-top:8px; }
  textarea { width:100%; min-height:110px; font-family: ui-monospace, Menlo, monospace; font-size:12.5px; border:1px solid var(--line); border-radius:6px; padding:8px; }
  button { background:var(--accent); color:#fff; border:0; border-radius:6px; padding:6px 14px; cursor:pointer; }
  pre { background:var(--code); padding:10px; border-radius:6px; overflow:auto; max-height:360px; font-size:12.5px; }
  .desc p { margin:4px 0; }
</style>
</head>
<body>
<header>
  <h1 id="title">${title}</h1>
  <span class="c" id="version"></span>
  <input id="filter" placeholder="Filter operations…">
  <input id="token" placeholder="Bearer token for 'Try it'" type="password">
</header>
<div class="layout"><nav id="nav"></nav><main id="main"><p class="c">Loading ${specPath}…</p></main></div>
<script>
(function () {
  var esc = function (s) { return String(s).replace(/[&<>"']/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]; }); };
  var md = function (s) { return esc(s).replace(/\\*\\*([^*]+)\\*\\*/g, '<b>$1</b>').replace(/\`([^\`]+)\`/g, '<code>$1</code>').split(/\\n\\n/).map(function (p) { return '<p>' + p + '</p>'; }).join(''); };
  var tokenBox = document.getElementById('token');
  tokenBox.value = localStorage.getItem('gw-token') || '';
  tokenBox.addEventListener('change', function () { localStorage.setItem('gw-token', tokenBox.value); });

  function typeOf(s) {
    if (!s) return 'any';
    if (s.anyOf) return s.anyOf.every(function (b) { return b.const !== undefined; }) ? 'enum' : s.anyOf.map(typeOf).join(' | ');
    if (s.const !== undefined) return JSON.stringify(s.const);
    if (s.enum) return 'enum';
    if (Array.isArray(s.type)) return s.type.join(' | ');
    if (s.type === 'array') return typeOf(s.items) + '[]';
    if (s.type === 'object' && s.patternProperties) return 'map<string, ' + typeOf(Object.values(s.patternProperties)[0]) + '>';
    return s.type || 'any';
  }
  function rules(s) {
    if (!s) return '';
    var out = [];
    if (s.anyOf) {
      if (s.anyOf.every(function (b) { return b.const !== undefined; })) out.push('one of ' + s.anyOf.map(function (b) { return '<code>' + esc(b.const) + '</code>'; }).join(', '));
      else s.anyOf.forEach(function (b) { var r = rules(b); if (r) out.push(r); });
    }
    if (s.enum) out.push('one of ' + s.enum.map(function (v) { return '<code>' + esc(v) + '</code>'; }).join(', '));
    if (s.minLength !== undefined || s.maxLength !== undefined) out.push('length [' + (s.minLength || 0) + ',' + (s.maxLength !== undefined ? s.maxLength : '∞') + ']');
    if (s.minimum !== undefined || s.maximum !== undefined) out.push('range ' + (s.minimum !== undefined ? s.minimum : '…') + '..' + (s.maximum !== undefined ? s.maximum : '…'));
    if (s.pattern) out.push('pattern <code>' + esc(s.pattern) + '</code>');
    if (s.format) out.push(esc(s.format));
    if (s.maxProperties !== undefined) out.push('max ' + s.maxProperties + ' entries');
    if (s.minItems !== undefined) out.push('min ' + s.minItems + ' items');
    if (s.maxItems !== undefined) out.push('max ' + s.maxItems + ' items');
    if (s.type === 'array' && s.items) { var ir = rules(s.items); if (ir) out.push('items: ' + ir); }
    if (s.patternProperties) { var vr = rules(Object.values(s.patternProperties)[0]); if (vr) out.push('values: ' + vr); }
    return out.join('; ');
  }
  function objectOf(s) {
    if (!s) return undefined;
    if (s.type === 'object' && s.properties) return s;
    if (s.type === 'array') return objectOf(s.items);
    if (s.anyOf) for (var i = 0; i < s.anyOf.length; i++) { var o = objectOf(s.anyOf[i]); if (o) return o; }
    return undefined;
  }
  function table(s, depth) {
    var obj = objectOf(s);
    if (!obj) return '<p class="c">' + esc(typeOf(s)) + '</p>';
    var req = obj.required || [];
    var rows = Object.keys(obj.properties).map(function (k) {
      var p = obj.properties[k];
      var nested = depth < 4 && objectOf(p) ? '<details><summary class="c">fields</summary>' + table(p, depth + 1) + '</details>' : '';
      return '<tr><td class="mono">' + esc(k) + (req.indexOf(k) >= 0 ? '<span class="req">required</span>' : '') + '</td><td>' + esc(typeOf(p)) + '</td><td>' + rules(p) +
        (p.description ? '<div class="c">' + esc(p.description) + '</div>' : '') + nested + '</td></tr>';
    }).join('');
    return '<table><tr><th>field</th><th>type</th><th>rules</th></tr>' + (rows || '<tr><td colspan="3" class="c">no fields</td></tr>') + '</table>' +
      (obj.additionalProperties === false ? '<div class="c">Unknown properties are rejected; snake_case names are accepted too.</div>' : '');
  }
  function example(s) {
    if (!s) return null;
    if (s.anyOf) { var nn = s.anyOf.filter(function (b) { return b.type !== 'null'; }); return example(nn[0]); }
    if (s.const !== undefined) return s.const;
    if (s.enum) return s.enum[0];
    if (s.type === 'object' && s.properties) { var o = {}; (s.required || []).forEach(function (k) { o[k] = example(s.properties[k]); }); return o; }
    if (s.type === 'object') return {};
    if (s.type === 'array') return [];
    if (s.type === 'integer' || s.type === 'number') return s.minimum !== undefined ? s.minimum : 0;
    if (s.type === 'boolean') return false;
    if (s.pattern && s.pattern.indexOf('[0-9a-f]{8}') >= 0) return '00000000-0000-0000-0000-000000000000';
    return 'example';
  }
  function render(spec) {
    document.getElementById('title').textContent = spec.info.title;
    document.getElementById('version').textContent = 'v' + spec.info.version + ' · OpenAPI ' + spec.openapi;
    var groups = {};
    Object.keys(spec.paths).forEach(function (path) {
      var op = spec.paths[path].post; if (!op) return;
      var tag = (op.tags && op.tags[0]) || 'Other';
      (groups[tag] = groups[tag] || []).push({ path: path, op: op });
    });
    var nav = '', main = '<div class="desc">' + md(spec.info.description || '') + '</div>';
    Object.keys(groups).forEach(function (tag) {
      nav += '<h3>' + esc(tag) + '</h3>';
      groups[tag].forEach(function (e) {
        var id = e.op.operationId || e.path;
        nav += '<a href="#' + esc(id) + '" data-name="' + esc(id.toLowerCase()) + '">' + esc(id) + '</a>';
        var body = e.op.requestBody && e.op.requestBody.content['application/json'].schema;
        var resp = e.op.responses && e.op.responses['200'] && e.op.responses['200'].content['application/json'].schema;
        main += '<section class="op" id="' + esc(id) + '" data-name="' + esc(id.toLowerCase()) + '"><h2>' + esc(id) + '</h2>' +
          '<div class="path"><span class="post">POST</span>' + esc(e.path) + ' <span class="perm">' + esc(e.op['x-permission'] || '') + '</span></div>' +
          '<p>' + esc(e.op.summary || '') + '</p><div class="desc">' + md(e.op.description || '') + '</div>' +
          '<h4>Request</h4>' + table(body, 0) + '<h4>Response</h4>' + table(resp, 0) +
          '<details><summary>Try it</summary><textarea>' + esc(JSON.stringify(example(body), null, 2)) + '</textarea><p><button data-path="' + esc(e.path) + '">Send</button></p><pre hidden></pre></details></section>';
      });
    });
    document.getElementById('nav').innerHTML = nav;
    document.getElementById('main').innerHTML = main;
  }
  document.addEventListener('click', function (ev) {
    var b = ev.target; if (!b || !b.dataset || !b.dataset.path) return;
    var box = b.closest('details'); var out = box.querySelector('pre'); out.hidden = false; out.textContent = '…';
    fetch(b.dataset.path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + tokenBox.value }, body: box.querySelector('textarea').value })
      .then(function (r) { return r.text().then(function (t) { var v = t; try { v = JSON.stringify(JSON.parse(t), null, 2); } catch (e) {} out.textContent = r.status + '\\n' + v; }); })
      .catch(function (e) { out.textContent = String(e); });
  });
  document.getElementById('filter').addEventListener('input', function (ev) {
    var q = ev.target.value.toLowerCase();
    document.querySelectorAll('[data-name]').forEach(function (el) { el.style.display = el.dataset.name.indexOf(q) >= 0 ? '' : 'none'; });
  });
  fetch(${JSON.stringify(specPath)}).then(function (r) { return r.json(); }).then(render).catch(function (e) {
    document.getElementById('main').innerHTML = '<p>Could not load the OpenAPI document: ' + esc(e) + '</p>';
  });
})();
</script>
</body>
</html>
`;
