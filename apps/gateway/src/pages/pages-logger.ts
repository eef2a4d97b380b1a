/** The logger the gateway's pages write their warnings to (a JsonLogger named `gateway`). */
export const PAGES_LOGGER = Symbol('PAGES_LOGGER');
