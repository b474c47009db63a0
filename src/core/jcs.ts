import canonicalize from 'canonicalize';

/** RFC 8785 canonical JSON (the `canonicalize` library): audit leaves, signed payloads, service-account files. */
export const jcs = (value: unknown): string => {
  const out = canonicalize(value);
  if (out === undefined) throw new TypeError('value cannot be canonicalised');
  return out;
};
