// What a migration removes, and what a Prisma schema reads: the expand/contract rule of
// tools/db/lint-migrations.mjs (a migration may not drop what the app's last release still maps).

/** table -> columns the Prisma schema maps (relation fields have no column and are left out). */
export function mappedColumns(schema) {
  const blocks = [...schema.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)];
  const models = new Set(blocks.map(([, name]) => name));
  const tables = new Map();
  for (const [, name, body] of blocks) {
    const table = /@@map\("([^"]+)"\)/.exec(body)?.[1] ?? name;
    const columns = new Set();
    for (const line of body.split('\n')) {
      const field = /^\s*(\w+)\s+(\w+)(\[\])?\??(.*)$/.exec(line);
      if (!field || models.has(field[2])) continue;
      columns.add(/@map\("([^"]+)"\)/.exec(field[4])?.[1] ?? field[1]);
    }
    tables.set(table, columns);
  }
  return tables;
}

/** The tables and columns a migration drops or renames away: [{ table, column? , verb }]. */
export function removals(sqlText) {
  const text = sqlText.replace(/--.*$/gm, '');
  const name = '"?([\\w]+)"?';
  const found = [];
  for (const [, table, actions] of text.matchAll(new RegExp(`ALTER\\s+TABLE\\s+(?:IF\\s+EXISTS\\s+)?(?:ONLY\\s+)?(?:"?\\w+"?\\.)?${name}\\s+([^;]*)`, 'gi'))) {
    for (const [, column] of actions.matchAll(new RegExp(`DROP\\s+(?:COLUMN\\s+)?(?:IF\\s+EXISTS\\s+)?(?!CONSTRAINT\\b|DEFAULT\\b|NOT\\b|IDENTITY\\b|EXPRESSION\\b)${name}`, 'gi'))) found.push({ table, column, verb: 'drops' });
    for (const [, column] of actions.matchAll(new RegExp(`RENAME\\s+(?:COLUMN\\s+)?(?!TO\\b|CONSTRAINT\\b)${name}\\s+TO`, 'gi'))) found.push({ table, column, verb: 'renames' });
    if (/RENAME\s+TO\s/i.test(actions)) found.push({ table, verb: 'renames' });
  }
  for (const [, list] of text.matchAll(/DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?([^;]+)/gi)) {
    for (const table of list.replace(/\b(CASCADE|RESTRICT)\b/gi, '').split(',')) found.push({ table: table.trim().replace(/^(?:"?\w+"?\.)?"?|"$/g, ''), verb: 'drops' });
  }
  return found;
}
