import { IsIn, IsInt, IsOptional, IsString, Length, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { RATE_LIMIT_MAX_PER_SECOND } from '../config';

export class CreateAccountDto {
  @IsString()
  @Length(1, 256)
  name!: string;
}

export class CreateKeyDto {
  @IsIn(['sandbox', 'live'])
  app!: 'sandbox' | 'live';

  @IsIn(['test', 'live', 'publishable'])
  type!: 'test' | 'live' | 'publishable';

  @IsOptional()
  @IsIn(['full', 'read_only'])
  scope?: 'full' | 'read_only';

  @IsOptional()
  @IsString()
  @Length(1, 100)
  name?: string;
}

export class RollKeyDto {
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(604_800)
  expires_in_seconds?: number;
}

export class CreatePortalUserDto {
  @IsString()
  @Length(3, 320)
  email!: string;

  /** At least 12 characters; absent: a generated one, shown once in the answer. */
  @IsOptional()
  @IsString()
  @MaxLength(256)
  password?: string;
}

/** An app's own per-key limits, requests a second; null returns to the gateway's default, absent leaves it. */
export class SetRateLimitsDto {
  @IsIn(['sandbox', 'live'])
  app!: 'sandbox' | 'live';

  @ValidateIf((_, value) => value !== undefined && value !== null)
  @IsInt()
  @Min(1)
  @Max(RATE_LIMIT_MAX_PER_SECOND)
  read_per_second?: number | null;

  @ValidateIf((_, value) => value !== undefined && value !== null)
  @IsInt()
  @Min(1)
  @Max(RATE_LIMIT_MAX_PER_SECOND)
  write_per_second?: number | null;
}
