import { Injectable } from '@nestjs/common';
import { CommandResults } from '@recur/persistence';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from './prisma.service';

/** Runs each mutating RPC in one transaction with the record of its answer (safe to repeat by request id). */
@Injectable()
export class Commands extends CommandResults<Prisma.TransactionClient> {
  constructor(prisma: PrismaService) {
    super(prisma);
  }
}
