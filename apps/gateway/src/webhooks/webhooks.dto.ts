import { SUBSCRIBABLE_EVENT_TYPES } from '@recur/vocabulary';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsString, MaxLength } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { Optional } from '../http/optional';

/** The service checks each type and names the offending item (`events[1]`); the document lists them. */
/** An endpoint subscribes to each type at most once. */
const SUBSCRIBABLE_EVENT_COUNT = Object.keys(SUBSCRIBABLE_EVENT_TYPES).length;

const EventTypesSchema = () => JSONSchema({ items: { type: 'string', enum: Object.keys(SUBSCRIBABLE_EVENT_TYPES) } });

export class CreateWebhookEndpointDto {
  /** Where deliveries go; see docs/webhooks.md#url-policy. */
  @IsString()
  @MaxLength(2048)
  url!: string;

  /** Subscribed event types (GET /v1/webhooks/events lists them). */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SUBSCRIBABLE_EVENT_COUNT)
  @IsString({ each: true })
  @EventTypesSchema()
  events!: string[];

  @Optional()
  @IsString()
  @MaxLength(500)
  description?: string;
}

export class UpdateWebhookEndpointDto {
  @Optional()
  @IsString()
  @MaxLength(2048)
  url?: string;

  @Optional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SUBSCRIBABLE_EVENT_COUNT)
  @IsString({ each: true })
  @EventTypesSchema()
  events?: string[];

  @Optional()
  @IsIn(['enabled', 'disabled'])
  status?: 'enabled' | 'disabled';

  @Optional()
  @IsString()
  @MaxLength(500)
  description?: string;
}
