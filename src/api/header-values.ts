import { connectError } from '../core/errors.ts';

/**
 * Credentials the gateway sends upstream as HTTP header values (a connection's `apiKey` and
 * `options.headers`, an MCP server's `authValue`, a BYOK `secret`, a telemetry sink's bearer token
 * or API key) must be sendable as one: contract §17, "Secrets that cannot be sent". A value that
 * cannot be (a CR or LF, another control character, non-ASCII such as the `…` of a pasted
 * placeholder) was stored and then made every request fail. The management API and the Terraform
 * provider's plan-time checks refuse it with these same functions.
 */

/** Visible ASCII, inner spaces allowed: what every client library sends as a header value unchanged. */
const HEADER_VALUE = /^[!-~]([ -~]*[!-~])?$/;
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const HEADER_VALUE_RULE =
  'must be a valid HTTP header value: printable ASCII only (no CR, LF or other control character, no non-ASCII character such as …), not starting or ending with a space';

export const isHeaderValue = (v: string): boolean => HEADER_VALUE.test(v);
export const isHeaderName = (v: string): boolean => HEADER_NAME.test(v);

/** `invalid_argument` naming `field` unless `value` can be sent as a header value (the value itself is never quoted: it is a secret). */
export const checkHeaderValue = (field: string, value: string): void => {
  if (!isHeaderValue(value)) throw connectError('invalid_argument', `invalid field '${field}': ${HEADER_VALUE_RULE}`, field);
};

/** A map of header names to values (a connection's `options.headers`): every name a token, every value sendable. */
export const checkHeaderMap = (field: string, headers: unknown): void => {
  if (headers === undefined || headers === null) return;
  if (typeof headers !== 'object' || Array.isArray(headers))
    throw connectError('invalid_argument', `invalid field '${field}': must be an object of header names to string values`, field);
  for (const [name, value] of Object.entries(headers)) {
    if (!isHeaderName(name))
      throw connectError(
        'invalid_argument',
        `invalid field '${field}': '${name}' is not an HTTP header name (letters, digits and ! # $ % & ' * + . ^ _ \` | ~ -)`,
        field,
      );
    if (typeof value !== 'string')
      throw connectError('invalid_argument', `invalid field '${field}.${name}': must be a string`, `${field}.${name}`);
    checkHeaderValue(`${field}.${name}`, value);
  }
};
