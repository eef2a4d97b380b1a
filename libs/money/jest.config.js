module.exports = { ...require('../../jest.preset.js'), displayName: 'money', rootDir: __dirname };
