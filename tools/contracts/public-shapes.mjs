// The public JSON shapes webhook consumers and API clients read: every exported interface of
// libs/contracts/src/public (what `data.object` of an event and each /v1 answer carry) and the
// public event types (libs/vocabulary/src/event-types.ts). Read from the TypeScript source with the
// compiler's parser, so the same code reads today's tree and a release's files out of git.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from '../release/projects.mjs';

const ts = createRequire(join(ROOT, 'package.json'))('typescript');

export const SHAPES_DIR = 'libs/contracts/src/public';
export const EVENT_TYPES_FILE = 'libs/vocabulary/src/event-types.ts';

const normalize = (text) => text.replace(/\s+/g, ' ').trim();

/** files: [{ path, text }] of SHAPES_DIR plus EVENT_TYPES_FILE → { interfaces: { Name: { prop: { type, optional } } }, eventTypes: string[] } */
export function readShapes(files) {
  const interfaces = {};
  const eventTypes = [];
  for (const { path, text } of files) {
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
    for (const statement of source.statements) {
      const exported = statement.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
      if (ts.isInterfaceDeclaration(statement) && exported) {
        const properties = {};
        for (const member of statement.members) {
          if (!ts.isPropertySignature(member) || !member.type) continue;
          properties[member.name.getText(source)] = { type: normalize(member.type.getText(source)), optional: Boolean(member.questionToken) };
        }
        const heritage = statement.heritageClauses?.map((clause) => normalize(clause.getText(source)));
        interfaces[statement.name.text] = { properties, ...(heritage?.length ? { extends: heritage.join(' ') } : {}) };
      }
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          const name = declaration.name.getText(source);
          let value = declaration.initializer;
          while (value && (ts.isAsExpression(value) || ts.isSatisfiesExpression?.(value))) value = value.expression;
          if (name === 'SUBSCRIBABLE_EVENT_TYPES' && value && ts.isObjectLiteralExpression(value)) {
            for (const property of value.properties) eventTypes.push(property.name.getText(source).replace(/^['"]|['"]$/g, ''));
          }
          if (name === 'WEBHOOK_TEST_EVENT_TYPE' && value && ts.isStringLiteral(value)) eventTypes.push(value.text);
        }
      }
    }
  }
  return { interfaces, eventTypes };
}

/** `'a' | 'b'` to `'a' | 'b' | 'c'`: a new value of a closed set, which consumers must accept as they accept new fields. */
function addsStringLiterals(before, after) {
  const members = (type) => type.split('|').map((member) => member.trim());
  const added = members(after).filter((member) => !members(before).includes(member));
  return members(before).every((member) => members(after).includes(member)) && added.every((member) => /^'[^']*'$/.test(member));
}

/**
 * What a consumer written against `before` would trip over in `after`, one sentence each.
 * Additions (a new shape, a new field, a new event type, a new value of a string-literal union)
 * pass: consumers ignore what they do not know.
 */
export function breakingShapeChanges(before, after) {
  const problems = [];
  for (const type of before.eventTypes) {
    if (!after.eventTypes.includes(type)) problems.push(`event type ${type} was removed: endpoints subscribed to it would stop receiving it`);
  }
  for (const [name, shape] of Object.entries(before.interfaces)) {
    const now = after.interfaces[name];
    if (!now) {
      problems.push(`${name} was removed: events and answers of this shape are read by clients that cannot change at our pace`);
      continue;
    }
    if ((shape.extends ?? '') !== (now.extends ?? '')) problems.push(`${name} changed what it extends, from "${shape.extends ?? 'nothing'}" to "${now.extends ?? 'nothing'}"`);
    for (const [field, was] of Object.entries(shape.properties)) {
      const is = now.properties[field];
      if (!is) problems.push(`${name}.${field} was removed: consumers reading it would get undefined`);
      else if (is.type !== was.type && !addsStringLiterals(was.type, is.type)) problems.push(`${name}.${field} changed type from \`${was.type}\` to \`${is.type}\`: consumers parse the old type`);
      else if (is.optional && !was.optional) problems.push(`${name}.${field} became optional: consumers rely on it being present`);
    }
  }
  return problems;
}
