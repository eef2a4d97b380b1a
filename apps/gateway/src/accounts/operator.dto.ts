import { IsIn, IsInt, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';

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
