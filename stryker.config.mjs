// Mutation testing of the pure libraries, one library per run: `npm run test:mutation`
// (tools/mutation.mjs sets STRYKER_LIB and prints a score per library).
const lib = process.env.STRYKER_LIB ?? 'pricing';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  plugins: ['@stryker-mutator/jest-runner', './tools/mutation/ignore-error-messages.mjs'],
  ignorers: ['error-messages'],
  jest: { projectType: 'custom', configFile: `libs/${lib}/jest.config.js`, enableFindRelatedTests: false },
  mutate: [`libs/${lib}/src/**/*.ts`],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  reporters: ['clear-text', 'json'],
  jsonReporter: { fileName: `reports/mutation/${lib}.json` },
  clearTextReporter: { allowColor: false, logTests: false },
  // The sandbox needs the libraries, the Jest preset and the SWC settings, nothing else.
  ignorePatterns: ['/apps', '/tests', '/helm', '/deploy', '/tools', '/proto', '/reports', '/.nx', '/.data', 'dist', 'coverage'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  timeoutMS: 10000,
  thresholds: { high: 90, low: 80, break: null },
};
