import { PROMOTION_CODE_PATTERN, UNIX_SECONDS_MAX, UNIX_SECONDS_MIN } from '@recur/vocabulary';
import { IsBoolean, IsInt, IsNotEmpty, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { ListQueryDto } from '../http/list';
import { Nullable, Optional } from '../http/optional';

const REDEMPTIONS_MAX = 1_000_000_000;

export class CreatePromotionCodeDto {
  /** 3 to 50 letters, digits, - or _; unique per app, ignoring case. */
  @IsString({ message: 'code must be a string' })
  @Matches(PROMOTION_CODE_PATTERN, { message: 'code must be 3 to 50 letters, digits, - or _' })
  code!: string;

  /** The coupon's id (same app). */
  @IsString({ message: 'coupon must be a coupon id' })
  @IsNotEmpty({ message: 'coupon must be a coupon id' })
  @MaxLength(100)
  coupon!: string;

  /** Default true. */
  @Optional() @IsBoolean({ message: 'active must be a boolean' })
  active?: boolean;

  @Optional() @IsInt({ message: 'max_redemptions must be an integer' }) @Min(1, { message: 'max_redemptions must be at least 1' }) @Max(REDEMPTIONS_MAX)
  max_redemptions?: number;

  /** Unix seconds, in the future. */
  @Optional() @IsInt({ message: 'expires_at must be a unix time in seconds' }) @Min(UNIX_SECONDS_MIN, { message: 'expires_at must be a unix time in seconds' }) @Max(UNIX_SECONDS_MAX, { message: `expires_at must be at most ${UNIX_SECONDS_MAX}` })
  expires_at?: number;
}

export class UpdatePromotionCodeDto {
  @Optional() @IsBoolean({ message: 'active must be a boolean' })
  active?: boolean;

  /** null removes the cap. */
  @Nullable('integer') @IsInt({ message: 'max_redemptions must be an integer' }) @Min(1, { message: 'max_redemptions must be at least 1' }) @Max(REDEMPTIONS_MAX)
  max_redemptions?: number | null;

  /** null removes the expiry. */
  @Nullable('integer') @IsInt({ message: 'expires_at must be a unix time in seconds' }) @Min(UNIX_SECONDS_MIN, { message: 'expires_at must be a unix time in seconds' }) @Max(UNIX_SECONDS_MAX, { message: `expires_at must be at most ${UNIX_SECONDS_MAX}` })
  expires_at?: number | null;
}

export class ListPromotionCodesQueryDto extends ListQueryDto {
  /** Only the codes of this coupon. */
  @Optional() @IsString() @MaxLength(100)
  coupon?: string;

  /** Only the code with this text, ignoring case. */
  @Optional() @IsString() @MaxLength(50)
  code?: string;
}
