import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { AccountsService, type AccountView, type ApiKeyView } from './accounts.service';
import { CreateAccountDto, CreateKeyDto, RollKeyDto } from './operator.dto';
import { OperatorTokenGuard } from './operator-token.guard';

/**
 * The operator surface, outside `/v1`: accounts and their API keys. It is what the
 * developer portal's API Keys section will call, and what `recur-admin` calls today.
 */
@Controller('operator')
@UseGuards(OperatorTokenGuard)
export class OperatorController {
  constructor(private readonly accounts: AccountsService) {}

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
