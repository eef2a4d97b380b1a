module.exports = { ...require('../../jest.preset.js'), displayName: 'telemetry', rootDir: __dirname };
