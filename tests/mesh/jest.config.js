module.exports = { ...require('../../jest.preset.js'), displayName: 'mesh', rootDir: __dirname, testTimeout: 120_000 };
