import { Server, ServerCredentials } from '@grpc/grpc-js';
import { createServiceClient, fromGrpcError, invoicingV1 } from '@recur/contracts';
import { rejectionOf } from '@recur/testing';
import type { ServiceClients } from '../src/infrastructure/service-clients';
import { balancesOf } from '../src/customer-balances/customer-balances.routes';

/**
 * The customer's balance against an invoicing release without balances (a rolling upgrade,
 * invoicing not yet replaced): a real gRPC server that serves nothing answers UNIMPLEMENTED, and
 * customers read balance 0 instead of failing (docs/api/customer-balance.md#on-the-customer).
 */
describe('balancesOf against an invoicing release without customer balances', () => {
  let server: Server;
  let address: string;

  beforeAll(async () => {
    server = new Server();
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
    address = `127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  });

  it('reads every customer as having no balance', async () => {
    const invoicing = createServiceClient(invoicingV1.InvoicingService, address, {}, 5_000);
    try {
      const services = { invoicing } as unknown as ServiceClients;
      expect(await balancesOf(services, { accountId: 'acct_1', livemode: false } as never, ['cus_1', 'cus_2'])).toEqual([{ balance: 0, currency: null }, { balance: 0, currency: null }]);
    } finally {
      invoicing.close();
    }
  });

  it('still fails when invoicing cannot be reached at all (a balance is never made up)', async () => {
    const invoicing = createServiceClient(invoicingV1.InvoicingService, '127.0.0.1:9', {}, 2_000);
    try {
      const failure = await rejectionOf(balancesOf({ invoicing } as unknown as ServiceClients, { accountId: 'acct_1', livemode: false } as never, ['cus_1']));
      // A transport failure, which the gateway answers 503 service_unavailable (not balance 0).
      expect(fromGrpcError(failure)).toMatchObject({ kind: 'unavailable', code: 'service_unavailable' });
    } finally {
      invoicing.close();
    }
  });
});
