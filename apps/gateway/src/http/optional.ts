import { IsOptional, ValidateIf } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

/**
 * An optional field: it may be absent, but `null` is not a value of it, so the field's own
 * rules refuse null (a string field wants a string), as its schema says. class-validator's
 * IsOptional would let null through as if absent.
 */
export const Optional = (): PropertyDecorator => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** An optional field where `null` means something (it removes a description, a limit), documented as nullable. */
export const Nullable = (type: 'string' | 'integer'): PropertyDecorator => {
  const optional = IsOptional();
  // The JSON Schema type may be a list (OpenAPI 3.1); the decorator's typing predates that.
  const schema = JSONSchema({ type: [type, 'null'] } as never) as PropertyDecorator;
  return (target, key) => {
    optional(target, key);
    schema(target, key);
  };
};
