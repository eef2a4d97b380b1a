// Two notations of OpenAPI 3.1 the gateway changed, read the same on both sides of oasdiff.
//
// A nullable object used to be written `type: [object, 'null']`; openapi-generator's Python client
// made such an object a required model and failed when the answer carried null, so the gateway
// writes `anyOf: [{type: object, …}, {type: 'null'}]` (apps/gateway/src/openapi/openapi.ts). The
// two accept exactly the same JSON values: the wire did not change. oasdiff, though, compares
// notations and calls the rewrite breaking (`response-property-type-changed` from `object, null`
// to `any`, `response-property-any-of-added`, the object's required properties "removed"). So the
// released document is rewritten the same way before the diff.
//
// Two boolean fields were documented as one-value enums (`TestClock.livemode` always false,
// `DeletedWebhookEndpoint.deleted` always true). openapi-generator's Python client turns a boolean
// enum (or `const`) into a check against the *string* 'false' and rejects every answer; the
// gateway now says the value in the field's description. The server answers the same values.
// oasdiff calls dropping the enum `response-property-became-not-enum`, so the release's enum on
// exactly these two fields is dropped before the diff; a boolean enum anywhere else is compared.
//
// These rewrites and nothing else: every other change, to these schemas' fields included, is
// still compared.

/**
 * `{type: ['object', 'null'], …object}` → `{description?, anyOf: [{type: 'object', …object}, {type: 'null'}]}`,
 * anywhere in `value`; everything else unchanged.
 */
export function nullableObjectsAsAnyOf(value) {
  if (Array.isArray(value)) return value.map(nullableObjectsAsAnyOf);
  if (!value || typeof value !== 'object') return value;
  const rewritten = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, nullableObjectsAsAnyOf(item)]));
  const { type } = rewritten;
  if (!Array.isArray(type) || type.length !== 2 || !type.includes('object') || !type.includes('null')) return rewritten;
  const { description, type: _type, ...object } = rewritten;
  return { ...(description === undefined ? {} : { description }), anyOf: [{ type: 'object', ...object }, { type: 'null' }] };
}

/** The release's boolean one-value enums that the gateway now states in the description (`Schema.property`). */
export const BOOLEAN_ENUMS_STATED_IN_DESCRIPTION = ['TestClock.livemode', 'DeletedWebhookEndpoint.deleted'];

/** The released document as today's notation writes it: nullable objects as anyOf, the listed boolean enums dropped. */
export function inTodaysNotation(document) {
  const rewritten = nullableObjectsAsAnyOf(document);
  for (const field of BOOLEAN_ENUMS_STATED_IN_DESCRIPTION) {
    const [schema, property] = field.split('.');
    const value = rewritten.components?.schemas?.[schema]?.properties?.[property];
    if (value?.type === 'boolean' && Array.isArray(value.enum) && value.enum.length === 1) delete value.enum;
  }
  return rewritten;
}
