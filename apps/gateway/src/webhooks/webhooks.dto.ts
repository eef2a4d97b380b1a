import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';

export class CreateWebhookEndpointDto {
  /** Where deliveries go; see the URL policy in the README. */
  @IsString()
  @MaxLength(2048)
  url!: string;

  /** Subscribed event types (GET /v1/webhooks/events lists them). */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(22)
  @IsString({ each: true })
  events!: string[];

  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string;
}

export class UpdateWebhookEndpointDto {
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  url?: string;

  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(22)
  @IsString({ each: true })
  events?: string[];

  @IsOptional()
  @IsIn(['enabled', 'disabled'])
  status?: 'enabled' | 'disabled';

  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string;
}
