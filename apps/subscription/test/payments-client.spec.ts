// Nest's decorators only mark the class for the module; a test constructs it by hand.
jest.mock('@nestjs/common', () => ({ Injectable: () => () => undefined, Inject: () => () => undefined }));
import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { SubscriptionConfig } from '../src/subscription-config';
import { PaymentsClient, RETRIES_UNSUPPORTED } from '../src/billing-clock/payments.client';

/**
 * The billing clock's smart retries against a payments release that has no RetryInvoicePayment
 * (a rolling upgrade, payments not yet replaced): a real gRPC server that serves nothing answers
 * UNIMPLEMENTED, and the retry ends in dunning as before retries existed instead of waiting.
 */
describe('PaymentsClient against a payments release without smart retries', () => {
  let server: Server;
  let client: PaymentsClient;

  beforeAll(async () => {
    server = new Server();
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
    client = new PaymentsClient({ paymentsAddress: `127.0.0.1:${port}` } as SubscriptionConfig);
  });

  afterAll(async () => {
    client.onModuleDestroy();
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  });

  it('answers no_payment_method (retries_unsupported): the reminders start at once', async () => {
    await expect(client.retry({ accountId: 'acct_1', livemode: false }, 'in_1', 2, 'payment_retry:in_1:2')).resolves.toEqual({ outcome: 'no_payment_method', reason: RETRIES_UNSUPPORTED });
  });
});
