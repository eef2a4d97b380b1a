import { Inject, Injectable } from '@nestjs/common';
import { CommandResults, type PgTransaction, PgTransactions } from '@recur/persistence';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from './prisma.service';

/** Runs each mutating RPC in one transaction with the record of its answer (safe to repeat by request id). */
@Injectable()
export class Commands extends CommandResults<Prisma.TransactionClient> {
  constructor(prisma: PrismaService) {
    super(prisma);
  }
}

/**
 * The same, on a plain `pg` transaction over Prisma's own pool, for the hot commands (creating a
 * customer): a seventh of the CPU of Prisma's interactive transaction, and the relay's NOTIFY after
 * the COMMIT instead of inside it (docs/performance.md).
 */
@Injectable()
export class PgCommands extends CommandResults<PgTransaction> {
  constructor(prisma: PrismaService, @Inject(SERVICE_RUNTIME) runtime: ServiceRuntime) {
    super(new PgTransactions(prisma.pool, (error) => runtime.logger.warn('wake-up after commit failed; listeners will poll', { error: error.message })));
  }
}
