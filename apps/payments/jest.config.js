const preset = require('../../jest.preset.js');

module.exports = {
  ...preset,
  displayName: 'payments',
  rootDir: __dirname,
  // The wallet ledger tests run the service's classes in-process; they use @nestjs/common's decorators (ESM): SWC compiles it for Jest.
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|iterare|uid|@lukeed|load-esm)/)'],
  // The generated Prisma client imports its TypeScript siblings as `./internal/class.js`.
  moduleNameMapper: { ...preset.moduleNameMapper, '^(\\.{1,2}/.*)\\.js$': '$1' },
};
