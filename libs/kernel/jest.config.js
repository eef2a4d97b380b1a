module.exports = { ...require('../../jest.preset.js'), displayName: 'kernel', rootDir: __dirname };
