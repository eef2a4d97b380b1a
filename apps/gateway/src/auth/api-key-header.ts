/** The header every `/v1` request carries its key in (specification, Authentication). */
export const API_KEY_HEADER = 'x-api-key';
