module.exports = { ...require('../../jest.preset.js'), displayName: 'subscription', rootDir: __dirname };
