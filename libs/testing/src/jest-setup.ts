// Registered for every test file by jest.preset.js: infrastructure a file started on its
// own (outside `npm test`), and any webhook receiver it left running, is stopped when the
// file ends, so Jest can exit.
import { stopOwnInfrastructure } from './infrastructure';
import { stopForgottenReceivers } from './webhook-receiver';

afterAll(() => Promise.all([stopOwnInfrastructure(), stopForgottenReceivers()]), 60_000);
