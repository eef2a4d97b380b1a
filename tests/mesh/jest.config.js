const preset = require('../../jest.preset.js');

module.exports = { ...preset, displayName: 'mesh', rootDir: __dirname, setupFilesAfterEnv: [...preset.setupFilesAfterEnv, '<rootDir>/test/jest-timeout.ts'] };
