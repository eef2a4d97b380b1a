import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { DomainError } from '@recur/kernel';
import type { Observable } from 'rxjs';

/**
 * Refuses a request that sets a field this release of the service does not know, before the
 * handler runs. A caller one release ahead (a new gateway beside an old service, mid-rollout)
 * sends fields the service's schema lacks; protobuf would drop them silently, and the service
 * would do something other than what was asked — a plan without its tax rates, page one instead
 * of the page after a cursor. Proto3 puts a field on the wire only when it is set, so an unknown
 * field always means "the caller asked for something". The answer is `unavailable` (the gateway's
 * `503 service_unavailable`): retrying once the rollout has reached this service succeeds
 * (docs/operations/upgrades.md#request-fields-an-older-service-does-not-know).
 */
@Injectable()
export class UnknownRequestFieldsInterceptor implements NestInterceptor {
  constructor(private readonly service: string) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const unknown = unknownFieldPath(context.switchToRpc().getData());
    if (unknown) {
      throw new DomainError(
        'unavailable',
        'service_unavailable',
        `This release of the ${this.service} service does not know ${unknown} (sent by a newer caller during an upgrade); retry once the upgrade has reached it.`,
      );
    }
    return next.handle();
  }
}

/** What protobuf-es keeps of the fields a decoded message's schema lacks (readUnknownFields, its default). */
interface DecodedMessage {
  $typeName: string;
  $unknown?: { no: number }[];
}

const isMessage = (value: unknown): value is DecodedMessage => typeof value === 'object' && value !== null && typeof (value as { $typeName?: unknown }).$typeName === 'string';

/** The first unknown field of `value` or of a message within it, as `field 9 of recur.x.v1.Line (at lines[0])`; undefined when none. */
export function unknownFieldPath(value: unknown, at = ''): string | undefined {
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = unknownFieldPath(value[index], `${at}[${index}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return undefined;
  if (isMessage(value) && value.$unknown && value.$unknown.length > 0) {
    const numbers = [...new Set(value.$unknown.map((field) => field.no))].join(', ');
    return `field ${numbers} of ${value.$typeName}${at ? ` (at ${at})` : ''}`;
  }
  for (const [key, child] of Object.entries(value)) {
    if (key === '$unknown' || key === '$typeName' || typeof child !== 'object' || child === null) continue;
    const found = unknownFieldPath(child, at ? `${at}.${key}` : key);
    if (found) return found;
  }
  return undefined;
}
