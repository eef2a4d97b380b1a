import { Controller, Get } from '@nestjs/common';
import { buildOpenApiDocument } from './openapi';

/** Serves the OpenAPI document at `/openapi.json` (no key needed: the interface is public). */
@Controller()
export class OpenApiController {
  private document?: Record<string, unknown>;

  @Get('openapi.json')
  openapi(): Record<string, unknown> {
    this.document ??= buildOpenApiDocument();
    return this.document;
  }
}
