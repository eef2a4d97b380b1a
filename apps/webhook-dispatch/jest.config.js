module.exports = { ...require('../../jest.preset.js'), displayName: 'webhook-dispatch', rootDir: __dirname };
