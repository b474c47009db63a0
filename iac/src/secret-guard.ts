import { DefaultTokenResolver, StringConcat, TerraformLocal, type TerraformStack, Token, Tokenization } from 'cdktf';

/**
 * The cdktf secret guard. cdktf writes every argument into `cdktf.out/stacks/<stack>/cdk.tf.json`:
 * a secret that is, or resolves to, a literal — given as is, through `Fn.sensitive("…")`, through a
 * `TerraformLocal` holding it, or in a string template — would be there in plaintext. A secret
 * argument (every sensitive or write-only one, the provider's `token` included) therefore accepts
 * only a reference: a variable (`secretVariable`, set with `TF_VAR_<name>` at deploy, the way to
 * take a secret from the environment), a data source's or another resource's attribute, a local
 * that is itself only references, or functions of those. Literals are refused when the construct is
 * built; tokens are resolved and checked when the stack is synthesized, so nothing is written.
 */

const HINT =
  "pass a reference instead: a sensitive TerraformVariable (secretVariable(scope, '<name>'), set TF_VAR_<name> at deploy), a data source's or another resource's attribute";

const RESOLVER = new DefaultTokenResolver(new StringConcat());
/** A value as it will be synthesized (what cdktf writes into cdk.tf.json). */
const resolve = (stack: TerraformStack, v: unknown): unknown =>
  Tokenization.resolve(v, { scope: stack, preparing: false, resolver: RESOLVER });

/** The literal parts of an expression masked, so an error never repeats the secret. */
const masked = (expr: string): string => expr.replace(/"(?:[^"\\]|\\.)*"/g, '"***"').replace(/<<-?\s*(\w+)[\s\S]*?\n\s*\1/g, '<<***');

/** A map's values or a plain value, as the strings to check (numbers and booleans hold no secret text). */
const leaves = (v: unknown): unknown[] =>
  v !== null && typeof v === 'object' ? Object.values(v).flatMap(leaves) : typeof v === 'string' ? [v] : [];

/** Every local of the stack by its name in `local.<name>`. */
const localsOf = (stack: TerraformStack): Map<string, TerraformLocal> =>
  new Map(
    stack.node
      .findAll()
      .filter((c): c is TerraformLocal => c instanceof TerraformLocal)
      .map((l) => [l.friendlyUniqueId, l]),
  );

/**
 * Why a resolved value is not made of references only, or undefined when it is. `seen` guards a
 * local that refers to itself (Terraform refuses the cycle anyway).
 */
const literalIn = (stack: TerraformStack, resolved: unknown, seen: Set<string>): string | undefined => {
  for (const leaf of leaves(resolved)) {
    if (typeof leaf !== 'string') continue;
    const inner = /^\$\{([\s\S]*)\}$/.exec(leaf)?.[1];
    // Never the value itself in the message: it is the secret.
    if (inner === undefined) return leaf.includes('${') ? 'a string template with literal text' : 'a literal';
    if (inner.includes('${')) return 'a string template with literal text';
    if (/["']|<</.test(inner)) return `an expression with a literal (\${${masked(inner)}})`;
    for (const [, name] of inner.matchAll(/\blocal\.([A-Za-z0-9_-]+)/g)) {
      if (!name || seen.has(name)) continue;
      const local = localsOf(stack).get(name);
      if (!local) continue;
      // `expression` reads as the reference itself; what the local holds is what it synthesizes.
      const held: unknown = local.toTerraform();
      const value = held && typeof held === 'object' && 'locals' in held ? (held.locals as Record<string, unknown>)[name] : undefined;
      const why = literalIn(stack, resolve(stack, value), new Set([...seen, name]));
      if (why) return `local.${name}, which is ${why}`;
    }
  }
  return undefined;
};

const refusal = (what: string, why: string): Error =>
  new Error(`${what} is ${why}: cdktf would write it in plaintext into cdktf.out; ${HINT}`);

/** At construction: a secret given as a literal (not a token) is refused at once. */
export const refuseLiteralSecrets = (type: string, args: Record<string, unknown>, secrets: readonly string[]): void => {
  for (const name of secrets) {
    // A token (a whole map given as a reference too) is checked when the stack is synthesized.
    if (Token.isUnresolved(args[name])) continue;
    for (const leaf of leaves(args[name]))
      if (typeof leaf === 'string' && !Token.isUnresolved(leaf)) throw refusal(`${type}.${name}`, 'a literal');
  }
};

/** At synthesis: every secret resolved in its stack must be references only. */
export const refuseResolvedSecrets = (
  stack: TerraformStack,
  type: string,
  args: Record<string, unknown>,
  secrets: readonly string[],
): void => {
  for (const name of secrets) {
    if (args[name] === undefined || args[name] === null) continue;
    const why = literalIn(stack, resolve(stack, args[name]), new Set());
    if (why) throw refusal(`${type}.${name}`, why);
  }
};
