import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { AccountsService, type AccountView, type ApiKeyView } from './accounts.service';
import { PortalUsersService, type PortalUserView } from '../pages/developer-portal/portal-users.service';
import { AppRateLimits, type RateLimitsView } from '../rate-limits/app-rate-limits.service';
import { CreateAccountDto, CreateKeyDto, CreatePortalUserDto, RollKeyDto, SetRateLimitsDto } from './operator.dto';
import { OperatorTokenGuard } from './operator-token.guard';

/**
 * The operator surface, outside `/v1`: accounts, their API keys and developer portal users,
 * for `recur-admin`. The developer portal calls the same AccountsService for its account.
 */
@Controller('operator')
@UseGuards(OperatorTokenGuard)
export class OperatorController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly users: PortalUsersService,
    private readonly rateLimits: AppRateLimits,
  ) {}

  @Post('accounts')
  createAccount(@Body() body: CreateAccountDto): Promise<AccountView> {
    return this.accounts.createAccount(body.name);
  }

  @Post('accounts/:accountId/keys')
  createKey(@Param('accountId') accountId: string, @Body() body: CreateKeyDto): Promise<ApiKeyView> {
    return this.accounts.createKey(accountId, body);
  }

  @Get('accounts/:accountId/keys')
  async listKeys(@Param('accountId') accountId: string): Promise<{ object: 'list'; data: ApiKeyView[] }> {
    return { object: 'list', data: await this.accounts.listKeys(accountId) };
  }

  /** Each app's per-key rate limits: in force, its own setting, the default. */
  @Get('accounts/:accountId/rate-limits')
  async listRateLimits(@Param('accountId') accountId: string): Promise<{ object: 'list'; data: RateLimitsView[] }> {
    return { object: 'list', data: await this.rateLimits.list(accountId) };
  }

  /** Sets an app's own per-key rate limits (null: back to the default); in force everywhere within KEY_CACHE_TTL_MS. */
  @Post('accounts/:accountId/rate-limits')
  @HttpCode(200)
  setRateLimits(@Param('accountId') accountId: string, @Body() body: SetRateLimitsDto): Promise<RateLimitsView> {
    return this.rateLimits.set(accountId, body);
  }

  /** A developer portal user of the account; the answer holds a generated password once. */
  @Post('accounts/:accountId/users')
  createUser(@Param('accountId') accountId: string, @Body() body: CreatePortalUserDto): Promise<PortalUserView> {
    return this.users.createUser(accountId, body.email, body.password);
  }

  @Post('keys/:keyId/roll')
  @HttpCode(201)
  rollKey(@Param('keyId') keyId: string, @Body() body: RollKeyDto): Promise<ApiKeyView> {
    return this.accounts.rollKey(keyId, body.expires_in_seconds ?? 0);
  }

  @Post('keys/:keyId/revoke')
  @HttpCode(200)
  revokeKey(@Param('keyId') keyId: string): Promise<ApiKeyView> {
    return this.accounts.revokeKey(keyId);
  }
}
