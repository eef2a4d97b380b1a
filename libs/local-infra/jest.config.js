module.exports = { ...require('../../jest.preset.js'), displayName: 'local-infra', rootDir: __dirname };
