// Registered for every test file by jest.preset.js: infrastructure a file started on its
// own (outside `npm test`) is stopped when the file ends, so Jest can exit.
import { stopOwnInfrastructure } from './infrastructure';

afterAll(() => stopOwnInfrastructure(), 60_000);
