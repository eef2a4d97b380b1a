// Shared Jest setup: TypeScript through SWC (same settings as the build), and workspace
// libraries resolved to their sources so tests never depend on a stale dist/.
const path = require('node:path');
const fs = require('node:fs');

const swcrc = JSON.parse(fs.readFileSync(path.join(__dirname, '.swcrc'), 'utf8'));
delete swcrc.$schema;

module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { ...swcrc, swcrc: false }] },
  // @recur/node is the package of libs/sdk; every other @recur/<x> is libs/<x>.
  moduleNameMapper: { '^@recur/node$': path.join(__dirname, 'libs/sdk/src/index.ts'), '^@recur/([a-z-]+)$': path.join(__dirname, 'libs/$1/src/index.ts') },
  moduleFileExtensions: ['ts', 'js', 'json'],
  setupFilesAfterEnv: [path.join(__dirname, 'libs/testing/src/jest-setup.ts')],
};
