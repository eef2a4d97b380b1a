const preset = require('../../jest.preset.js');

module.exports = {
  ...preset,
  displayName: 'subscription',
  rootDir: __dirname,
  // The generated Prisma client imports its TypeScript siblings as `./internal/class.js`.
  moduleNameMapper: { ...preset.moduleNameMapper, '^(\\.{1,2}/.*)\\.js$': '$1' },
};
