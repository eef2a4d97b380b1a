module.exports = { ...require('../../jest.preset.js'), displayName: 'pricing', rootDir: __dirname };
