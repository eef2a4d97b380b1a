// One notation of OpenAPI 3.1 the gateway changed, read the same on both sides of oasdiff.
//
// A nullable object used to be written `type: [object, 'null']`; openapi-generator's Python client
// made such an object a required model and failed when the answer carried null, so the gateway
// writes `anyOf: [{type: object, …}, {type: 'null'}]` (apps/gateway/src/openapi/openapi.ts). The
// two accept exactly the same JSON values: the wire did not change. oasdiff, though, compares
// notations and calls the rewrite breaking (`response-property-type-changed` from `object, null`
// to `any`, `response-property-any-of-added`, the object's required properties "removed"). So the
// released document is rewritten the same way before the diff: this rewrite and nothing else.
// Every other change, to these objects' fields included, is still compared.

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
