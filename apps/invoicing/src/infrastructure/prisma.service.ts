import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { endPool, servicePool } from '@recur/persistence';
import type { Pool } from 'pg';
import { PrismaClient } from '../generated/prisma/client';

/** The service's own database, through Prisma's driver adapter (no native engine). */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  /** Prisma's own connection pool, for the hot paths that skip the ORM: the billing clock's batches of renewal invoices, customers' balances read with every customer. */
  readonly pool: Pool;

  constructor(databaseUrl: string) {
    const pool = servicePool(databaseUrl);
    super({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
    this.pool = pool;
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
    await endPool(this.pool);
  }
}
