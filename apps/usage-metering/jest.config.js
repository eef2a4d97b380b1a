module.exports = { ...require('../../jest.preset.js'), displayName: 'usage-metering', rootDir: __dirname };
