import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { ApiError, type FieldError } from './api-error';

function flatten(errors: ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((error) => {
    // Array items as `tiers[1]`, fields of nested objects as `tiers[1].up_to`.
    const param = !prefix ? error.property : /^\d+$/.test(error.property) ? `${prefix}[${error.property}]` : `${prefix}.${error.property}`;
    const own = Object.entries(error.constraints ?? {}).slice(0, 1).map(([constraint, message]): FieldError => {
      if (constraint === 'whitelistValidation') return { param, code: 'parameter_unknown', message: `Received unknown parameter: ${param}` };
      // Optional fields are skipped when absent, so an absent value here is a required one.
      if (error.value === undefined) return { param, code: 'parameter_missing', message: `Missing required param: ${param}.` };
      return { param, code: 'parameter_invalid', message };
    });
    return [...own, ...flatten(error.children ?? [], param)];
  });
}

/**
 * class-validator on every body and query: unknown fields are rejected, not ignored,
 * and every invalid field is reported (the first one is also the error's `param`).
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    exceptionFactory: (errors) => {
      const fields = flatten(errors);
      const first = fields[0] ?? { param: undefined, code: 'parameter_invalid', message: 'Invalid request.' };
      return new ApiError(400, first.code, first.message, first.param, fields);
    },
  });
}
