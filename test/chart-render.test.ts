import { describe, expect, test } from 'bun:test';
import { parse as goRender } from '@evertdespiegeleer/go-template';
import { documents, Renderer, toYaml } from '../deploy/chart-render.ts';

/**
 * The chart's template renderer (deploy/chart-render.ts) against Go's own text/template, compiled to
 * WebAssembly (@evertdespiegeleer/go-template: text/template with its builtins, no Helm functions):
 * every template below uses only what both share and must render byte for byte the same. Then the
 * Helm functions the subset adds, against what Helm is documented to print.
 */

const ours = (tpl: string, data: unknown): string => new Renderer({ 't.yaml': tpl }).render(data)['t.yaml'] ?? '';

const DATA = {
  name: 'gw',
  n: 3,
  on: true,
  off: false,
  empty: '',
  list: ['a', 'b', 'c'],
  none: [],
  map: { zeta: 1, alpha: 'x', mid: true },
  nested: { a: { b: { c: 'deep' } } },
};

const SHARED: [string, string][] = [
  ['text and fields', 'name={{ .name }} deep={{ .nested.a.b.c }} n={{ .n }} on={{ .on }}'],
  ['trim markers', 'a  \n  {{- .name -}}  \n  b {{- " c " }} d'],
  ['comments', 'x{{/* gone */}}y {{- /* trimmed */ -}} z'],
  ['if / else if / else', '{{ if .off }}1{{ else if .empty }}2{{ else if .list }}3{{ else }}4{{ end }}{{ if .none }}5{{ else }}6{{ end }}'],
  ['range over a list with index', '{{ range $i, $v := .list }}[{{ $i }}={{ $v }}]{{ end }}'],
  ['range over a map in sorted key order', '{{ range $k, $v := .map }}{{ $k }}:{{ $v }};{{ end }}'],
  ['range with dot and else', '{{ range .list }}<{{ . }}>{{ end }}{{ range .none }}x{{ else }}empty{{ end }}'],
  ['with and else', '{{ with .nested.a }}{{ .b.c }}{{ end }}{{ with .empty }}no{{ else }}fallback{{ end }}'],
  ['variables and $', '{{ $x := .name }}{{ range .list }}{{ $x }}-{{ . }}-{{ $.n }} {{ end }}'],
  ['pipelines and parentheses', '{{ .name | printf "%s!" }} {{ printf "%s-%v" .name (len .list) }} {{ (index .list 1) }}'],
  [
    'comparison and logic',
    '{{ eq .name "gw" }} {{ ne .name "gw" }} {{ eq .name "x" "gw" }} {{ eq .on true }} {{ and .on .name }} {{ or .empty "dflt" }} {{ not .off }}',
  ],
  ['define and template', '{{ define "inner" }}<{{ .c }}>{{ end }}{{ template "inner" .nested.a.b }}'],
  ['printf verbs', '{{ printf "%s|%v|%v|%q|%%" .name .n .on .name }}'],
  ['whitespace-only lines around actions', 'items:\n{{- range .list }}\n  - {{ . }}\n{{- end }}\n'],
];

describe('the renderer agrees with Go text/template', () => {
  for (const [name, tpl] of SHARED) {
    test(name, async () => {
      expect(ours(tpl, DATA)).toBe(await goRender(tpl, DATA));
    });
  }

  test('numbers: Go refuses to compare a value (float64) with a literal (int) or print it with %d; the subset refuses both', async () => {
    await expect(goRender('{{ eq .n 3 }}', DATA)).rejects.toThrow(/incompatible types/);
    expect(() => ours('{{ eq .n 3 }}', DATA)).toThrow(/comparing numbers is not in the subset/);
    expect(await goRender('{{ printf "%d" .n }}', DATA)).toBe('%!d(float64=3)');
    expect(() => ours('{{ printf "%d" .n }}', DATA)).toThrow(/%d is not in the subset/);
  });

  test('missing keys: Helm renders them empty (missingkey=zero) and fails on a field of one (nil pointer); this Go build uses missingkey=error', async () => {
    expect(ours('[{{ .nope }}]', DATA)).toBe('[]');
    expect(() => ours('{{ .nope.deeper }}', DATA)).toThrow(/nil pointer evaluating interface \{\}\.deeper/);
    await expect(goRender('{{ .nope }}', DATA)).rejects.toThrow(/no entry for key/);
  });
});

describe('the Helm functions of the subset', () => {
  test('include, nindent, indent, quote, default, required', () => {
    const tpl =
      '{{- define "l" }}a: 1\nb: 2{{ end }}x:{{ include "l" . | nindent 2 }}\n{{ include "l" . | indent 4 }}\n{{ quote .name }} {{ default "d" .empty }} {{ default "d" .name }}';
    expect(ours(tpl, DATA)).toBe('x:\n  a: 1\n  b: 2\n    a: 1\n    b: 2\n"gw" d gw');
    expect(() => ours('{{ required "need it" .empty }}', DATA)).toThrow('need it');
  });

  test('toYaml sorts keys like sigs.k8s.io/yaml and trims the final newline; toJson is compact', () => {
    expect(toYaml({ b: 1, a: { d: [1, 'x: y'], c: '' } })).toBe('a:\n  c: ""\n  d:\n    - 1\n    - "x: y"\nb: 1');
    expect(toYaml({})).toBe('{}');
    expect(ours('{{ toJson .map }}', DATA)).toBe('{"alpha":"x","mid":true,"zeta":1}');
  });

  test('dict, list, hasKey, b64enc, sha256sum, urlParse, arithmetic and string helpers', () => {
    expect(ours('{{ $d := dict "a" 1 "b" (list 1 2) }}{{ hasKey $d "a" }} {{ hasKey $d "z" }} {{ len $d.b }}', DATA)).toBe('true false 2');
    expect(ours('{{ b64enc "postgres://u:p@h/db" }}', DATA)).toBe(Buffer.from('postgres://u:p@h/db').toString('base64'));
    expect(ours('{{ sha256sum "abc" }}', DATA)).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(ours('{{ (urlParse "https://gw.example:8443/v1").hostname }} {{ (urlParse "https://gw.example:8443/v1").host }}', DATA)).toBe(
      'gw.example gw.example:8443',
    );
    expect(
      ours(
        '{{ add "30" 15 }} {{ mul (int (trimSuffix "m" "2m")) 60 }} {{ div 1500 1000 }} {{ hasSuffix "ms" "250ms" }} {{ trimPrefix "https://" "https://x" }} {{ trunc 3 "abcdef" }}',
        DATA,
      ),
    ).toBe('45 120 1 true x abc');
  });

  test('outside the subset: an unknown function or a re-assignment is refused, never silently rendered', () => {
    expect(() => ours('{{ upper .name }}', DATA)).toThrow(/not defined/);
    expect(() => ours('{{ $x := 1 }}{{ $x = 2 }}', DATA)).toThrow(/not in the chart's template subset/);
  });

  test('documents splits a stream and drops empty documents', () => {
    expect(documents('a: 1\n---\n# only a comment\n---\nb: 2\n')).toEqual([{ a: 1 }, { b: 2 }]);
  });
});
