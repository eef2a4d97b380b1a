import { IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';

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
