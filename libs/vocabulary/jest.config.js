module.exports = { ...require('../../jest.preset.js'), displayName: 'vocabulary', rootDir: __dirname };
