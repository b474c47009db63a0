import type { TSchema } from '@sinclair/typebox';
import type { TerraformDecl, TfArg, TfBlock, TfComputed } from '../../src/api/resource.ts';
import { fieldSchema } from './api-schemas.ts';
import type { GatewayClient, Json, JsonObject } from './client.ts';
import { declCheck } from './plan-checks.ts';
import { type BlockDef, envelopeOf, findInList, orGone, type ResourceDef, str } from './resource.ts';
import { type Attr, computed, field, kindOf, toApi } from './schema.ts';
import { type CtyObject, isUnknown } from './wire.ts';

/**
 * A resource of the provider built from its declaration in the API module (src/api/resource.ts):
 * attributes from the create request's field schemas, CRUD through the declared operations — by
 * natural key (`key`), by UUID (`idField`), or, for neither, by the resource's hooks
 * (hooks.ts). The generic part of a secret's write-only form lives here too.
 */

export const ID = computed('id', 'id', 'string', 'server-generated UUID');

const isComputed = (a: TfArg | TfComputed): a is TfComputed => 'computed' in a;

const argAttr = (d: TerraformDecl, a: TfArg): Attr => {
  const base = field(d.create.name, a.api, {
    ...(a.tf ? { tf: a.tf } : {}),
    ...(a.update && d.update ? { update: d.update.name } : {}),
    ...(a.optionalComputed === false ? { optionalComputed: false } : {}),
    ...(a.sensitive ? { sensitive: true } : {}),
    ...(a.keep ? { keep: true } : {}),
    ...(a.read ? { read: a.read } : {}),
    ...(a.required !== undefined ? { required: a.required } : {}),
  });
  return {
    ...base,
    ...(a.forceNew !== undefined ? { forceNew: a.forceNew } : {}),
    ...(a.description ? { description: a.description } : {}),
  };
};

/** `<tf>_wo` (never in state) and `<tf>_wo_version` (bump it to send `<tf>_wo` again). */
const writeOnlyForm = (d: TerraformDecl, a: TfArg, attr: Attr): Attr[] => [
  {
    ...field(d.create.name, a.api, { tf: `${attr.tf}_wo`, optionalComputed: false, sensitive: true, keep: true, required: false }),
    writeOnly: true,
    forceNew: false,
    updatable: false,
    description: `write-only form of ${attr.tf} (Terraform >= 1.11): never stored in state; bump ${attr.tf}_wo_version to send a new one`,
  },
  {
    tf: `${attr.tf}_wo_version`,
    api: `${a.api}WoVersion`,
    kind: 'number',
    optional: true,
    keep: true,
    local: true,
    // Without an update operation a new secret means a new object.
    forceNew: !d.update,
    description: d.update
      ? `change it to send ${attr.tf}_wo again`
      : `change it to replace the ${d.type.replace('gateway_', '').replace(/_/g, ' ')} with one holding the current ${attr.tf}_wo`,
  },
];

const attrsOf = (d: TerraformDecl, args: (TfArg | TfComputed)[]): Attr[] =>
  args.flatMap((a) => {
    if (isComputed(a))
      return [
        computed(a.computed, a.api, 'string', a.description, {
          ...(a.sensitive ? { sensitive: true } : {}),
          ...(a.volatile ? { volatile: true } : {}),
        }),
      ];
    const attr = argAttr(d, a);
    if (!a.writeOnlyForm) return [attr];
    // A required secret becomes "this or its write-only form" (checked in writeOnlyHooks).
    const plain: Attr = attr.required ? { ...attr, required: false, optional: true, computed: false, eitherRequired: true } : attr;
    return [plain, ...writeOnlyForm(d, a, attr)];
  });

interface ItemsSchema {
  items: { properties: Record<string, TSchema> };
  minItems?: number;
  maxItems?: number;
}
const isItemsSchema = (s: TSchema | undefined): s is TSchema & ItemsSchema => {
  const items: unknown = s?.items;
  return typeof items === 'object' && items !== null && 'properties' in items;
};

const blockOf = (d: TerraformDecl, b: TfBlock): BlockDef => {
  const list = fieldSchema(d.create.name, b.api);
  if (!isItemsSchema(list)) throw new Error(`${d.create.name}.${b.api} is not a list of objects`);
  return {
    tf: b.tf,
    api: b.api,
    attrs: b.attrs.map((a): Attr => {
      const s = list.items.properties[a.api];
      const description: unknown = s?.description;
      return {
        tf: a.tf ?? a.api,
        api: a.api,
        kind: s ? kindOf(s) : 'string',
        description: typeof description === 'string' ? description : a.api,
        ...(s ? { schema: s } : {}),
        required: a.required === true,
        optional: a.required !== true,
        computed: a.computed === true,
        forceNew: false,
        updatable: true,
      };
    }),
    min: list.minItems ?? b.minItems ?? 0,
    max: list.maxItems ?? b.maxItems ?? 0,
    updatable: true,
    description: b.description,
  };
};

/** The CRUD a resource's hooks supply when the declaration has neither a key nor an id field. */
export type Hooks = Partial<Pick<ResourceDef, 'create' | 'read' | 'update' | 'delete' | 'amend' | 'check' | 'parseImport'>> & {
  /** Provider-side attributes no request field backs (e.g. a reference whose change replaces the object). */
  extraAttrs?: Attr[];
};

/** The name of a declared operation; a mapping that lacks one it needs fails when the provider loads. */
const opName = (d: TerraformDecl, which: 'get' | 'delete'): string => {
  const spec = d[which];
  if (!spec) throw new Error(`${d.type} declares no ${which} operation`);
  return spec.name;
};

const keyedCrud = (d: TerraformDecl, keys: Attr[]): Pick<ResourceDef, 'read' | 'delete' | 'update'> => {
  const keyBody = (s: CtyObject): JsonObject => Object.fromEntries(keys.map((k) => [k.api, str(s[k.tf])]));
  const envelope = d.envelope ?? '';
  const list = d.list;
  const last = keys[keys.length - 1];
  // A list is read within the key's leading fields (customer, project); the last one picks the item.
  const scopeBody = (s: CtyObject): JsonObject => Object.fromEntries(keys.slice(0, -1).map((k) => [k.api, str(s[k.tf])]));
  const get = list ? '' : opName(d, 'get');
  const del = opName(d, 'delete');
  const update = d.update?.name;
  return {
    read: list
      ? (c, s) => findInList(c, list.op.name, scopeBody(s), list.field, (e) => !!last && e[last.api] === str(s[last.tf]))
      : (c, s) => orGone(c.callJson(get, keyBody(s)), envelope),
    ...(update ? { update: async (c: GatewayClient, body: JsonObject) => envelopeOf(await c.callJson(update, body), envelope) } : {}),
    delete: async (c, s) => {
      await c.callJson(del, keyBody(s));
    },
  };
};

const byIdCrud = (d: TerraformDecl, idField: string): Pick<ResourceDef, 'read' | 'delete' | 'update'> => {
  const envelope = d.envelope ?? '';
  const get = opName(d, 'get');
  const del = opName(d, 'delete');
  const update = d.update?.name;
  return {
    read: (c, s) => orGone(c.callJson(get, { [idField]: str(s.id) }), envelope),
    ...(update
      ? {
          update: async (c: GatewayClient, body: JsonObject, prior: CtyObject) => {
            const { id: _id, ...rest } = body;
            return envelopeOf(await c.callJson(update, { ...rest, [idField]: str(prior.id) }), envelope);
          },
        }
      : {}),
    delete: async (c, s) => {
      await c.callJson(del, { [idField]: str(s.id) });
    },
  };
};

/** Each secret's write-only form: sent on update when its version changes; not together with the secret. */
const writeOnlyHooks = (attrs: Attr[]): Pick<ResourceDef, 'amend' | 'check'> | undefined => {
  const forms = attrs
    .filter((a) => a.writeOnly)
    .map((wo) => {
      const secret = wo.tf.slice(0, -'_wo'.length);
      return { wo, secret, version: `${wo.tf}_version`, required: attrs.some((a) => a.tf === secret && a.eitherRequired) };
    });
  if (forms.length === 0) return undefined;
  return {
    amend: (body, prior, plan, config) => {
      // The write-only secret is sent on create (createBody), and on update when its version changes.
      for (const { wo, version } of forms) {
        const value = config[wo.tf];
        if (
          prior &&
          JSON.stringify(prior[version] ?? null) !== JSON.stringify(plan[version] ?? null) &&
          value != null &&
          !isUnknown(value)
        ) {
          const v = toApi(wo, value);
          if (v !== undefined) body[wo.api] = v as Json;
        }
      }
    },
    check: (config) =>
      forms.flatMap(({ wo, secret, required }): [string, string][] => {
        if (config[secret] != null && config[wo.tf] != null) return [[wo.tf, `set either ${secret} or ${wo.tf}, not both`]];
        if (required && config[secret] == null && config[wo.tf] == null)
          return [[secret, `${secret} is required: set ${secret}, or ${wo.tf} with ${wo.tf}_version`]];
        return [];
      }),
  };
};

type Check = NonNullable<ResourceDef['check']>;
type Amend = NonNullable<ResourceDef['amend']>;

/** Runs `first`; `then` only when it found nothing. */
const chain = (first: Check | undefined, then: Check | undefined): Check | undefined => {
  if (!first || !then) return first ?? then;
  return (config) => {
    const found = first(config);
    return found.length > 0 ? found : then(config);
  };
};

const both = (a: Amend | undefined, b: Amend | undefined): Amend | undefined => {
  if (!a || !b) return a ?? b;
  return (...args) => {
    a(...args);
    b(...args);
  };
};

export const fromDecl = (d: TerraformDecl, hooks: Hooks = {}): ResourceDef => {
  const keys = d.key ? attrsOf(d, d.key) : [];
  const args = [...attrsOf(d, d.args), ...(hooks.extraAttrs ?? [])];
  const attrs = [ID, ...keys, ...args];
  const envelope = d.envelope ?? '';
  const crud = d.key ? keyedCrud(d, keys) : d.idField ? byIdCrud(d, d.idField) : undefined;
  const create =
    hooks.create ?? (async (c: GatewayClient, body: JsonObject) => envelopeOf(await c.callJson(d.create.name, body), envelope));
  const read = hooks.read ?? crud?.read;
  const del = hooks.delete ?? crud?.delete;
  if (!read || !del) throw new Error(`${d.type}: neither a key nor an id field, and no read/delete hooks`);
  const update = hooks.update ?? crud?.update;
  const wo = writeOnlyHooks(attrs);
  const amend = both(wo?.amend, hooks.amend);
  const check = chain(chain(wo?.check, declCheck(d, [...keys, ...args])), hooks.check);
  const blocks = (d.blocks ?? []).map((b) => blockOf(d, b));
  return {
    type: d.type,
    description: d.description,
    attrs,
    ...(blocks.length > 0 ? { blocks } : {}),
    importKeys: d.importId ?? (d.key ? keys.map((k) => k.tf) : ['id']),
    ...(hooks.parseImport ? { parseImport: hooks.parseImport } : {}),
    create,
    read,
    ...(update ? { update } : {}),
    delete: del,
    ...(amend ? { amend } : {}),
    ...(check ? { check } : {}),
  };
};
