// `testTimeout` in a project's config is ignored when Jest runs several projects (as npm test
// does), so mesh tests, which start seven processes and wait on Kafka, set theirs here.
jest.setTimeout(120_000);
