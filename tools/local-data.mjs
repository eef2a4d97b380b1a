// Where `npm start` keeps its state in its data directory (RECUR_DATA_DIR, default .data/): the
// embedded PostgreSQL cluster and the caught e-mails. The bench harness finds them here too.
import { join } from 'node:path';

export const postgresDataDir = (dataDir) => join(dataDir, 'postgres');
export const mailDir = (dataDir) => join(dataDir, 'mail');
