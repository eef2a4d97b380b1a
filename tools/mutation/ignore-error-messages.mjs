// A Stryker ignorer: the human-readable message of a thrown error is prose for people,
// not a contract (clients match the stable `code` and `param`, which stay mutated and
// tested). Mutating the message text (`"…"` → `""`) would only ask tests to copy
// every sentence. Only the message argument is ignored; codes, params and the
// conditions around the throw are still mutated.
import { declareValuePlugin, PluginKind } from '@stryker-mutator/api/plugin';

/** Error constructors and factories → the position of their message argument. */
const MESSAGE_ARGUMENT = new Map([
  ['invalidArgument', 1], // (param, message, code?)
  ['failedPrecondition', 1], // (code, message)
  ['DomainError', 2], // (kind, code, message, param?)
  ['WebhookVerificationError', 1], // (code, message)
  ['ConfigError', 0],
  ['Error', 0],
]);

function calleeName(callee) {
  if (callee.type === 'Identifier') return callee.name;
  if (callee.type === 'MemberExpression' && callee.property.type === 'Identifier') return callee.property.name;
  return undefined;
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, 'error-messages', {
    shouldIgnore(path) {
      const parent = path.parentPath;
      if (!parent || !(parent.isCallExpression() || parent.isNewExpression())) return undefined;
      const index = MESSAGE_ARGUMENT.get(calleeName(parent.node.callee));
      if (index === undefined || parent.node.arguments[index] !== path.node) return undefined;
      return 'error message text: prose for people; the error code and param are the contract';
    },
  }),
];
