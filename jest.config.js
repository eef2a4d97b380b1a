// All test projects; `npm test` runs them with shared PostgreSQL and Kafka (tools/test.mjs).
module.exports = {
  projects: ['<rootDir>/libs/*/jest.config.js', '<rootDir>/apps/*/jest.config.js', '<rootDir>/tests/*/jest.config.js'],
};
