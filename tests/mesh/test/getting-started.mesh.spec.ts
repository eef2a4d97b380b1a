import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, REPO_ROOT } from '@recur/testing';
import { npmStart, type StartedStack } from './npm-start';

/**
 * docs/getting-started.md, followed as a reader follows it: `npm start` in a fresh data folder,
 * then every `sh` block of the guide, in order and as written, typed into one bash session (so
 * the shell variables one block sets are there for the next). Where the reader opens the sandbox
 * payer page and presses Approve, the test posts that form as the browser would. Only the
 * addresses change: the guide's 127.0.0.1:8080 and 4242 become free ports.
 */
const GUIDE = readFileSync(join(REPO_ROOT, 'docs', 'getting-started.md'), 'utf8');
const APPROVE_MARKER = '<!-- the reader opens $PAY_URL and presses Approve -->';
const GUIDE_URL = 'http://127.0.0.1:8080';
const GUIDE_RECEIVER_PORT = '4242';

/** The guide's `sh` blocks in order, each with whether the reader has approved the payment before it. */
function guideBlocks(): { code: string; afterApproval: boolean }[] {
  const approvalAt = GUIDE.indexOf(APPROVE_MARKER);
  expect(approvalAt).toBeGreaterThan(0);
  return [...GUIDE.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((match) => ({ code: match[1], afterApproval: match.index! > approvalAt }));
}

/** One bash session, as the reader's terminal: blocks typed in, their output read back. */
class Terminal {
  private output = '';
  private readonly shell: ChildProcessWithoutNullStreams;
  private blocks = 0;

  constructor() {
    this.shell = spawn('bash', ['--norc', '--noprofile'], { cwd: REPO_ROOT, env: { ...process.env }, stdio: 'pipe' });
    this.shell.stdout.on('data', (chunk) => (this.output += chunk));
    this.shell.stderr.on('data', (chunk) => (this.output += chunk));
  }

  everything(): string {
    return this.output;
  }

  /** Runs `code` and answers what it printed; fails on a non-zero status or after 60 s. */
  async run(code: string): Promise<string> {
    const marker = `@@block-${++this.blocks}-done`;
    const from = this.output.length;
    this.shell.stdin.write(`${code}\necho "${marker} $?"\n`);
    const deadline = Date.now() + 60_000;
    let done: RegExpExecArray | null;
    while (!(done = new RegExp(`${marker} (\\d+)`).exec(this.output.slice(from)))) {
      if (Date.now() > deadline) throw new Error(`this block of the guide did not finish in 60 s:\n${code}\nIt printed:\n${this.output.slice(from)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const printed = this.output.slice(from, from + done.index);
    if (done[1] !== '0') throw new Error(`this block of the guide ended with status ${done[1]}:\n${code}\nIt printed:\n${printed}`);
    return printed;
  }

  /** The value of a shell variable the blocks set. */
  async variable(name: string): Promise<string> {
    return (await this.run(`printf '%s\\n' "$${name}"`)).trim();
  }

  async waitFor(pattern: RegExp, what: string): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (!pattern.test(this.output)) {
      if (Date.now() > deadline) throw new Error(`${what} never appeared; the terminal shows:\n${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  close(): void {
    // The receiver the guide starts in the background goes with the session.
    this.shell.stdin.write('kill %1 2>/dev/null\nexit\n');
  }
}

/** What the browser does when the reader presses Approve on the sandbox payer page. */
async function approveOnPayerPage(payUrl: string, origin: string): Promise<void> {
  const page = await fetch(payUrl);
  expect(page.status).toBe(200);
  const cookie = page.headers.get('set-cookie')!.split(';')[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1];
  const approved = await fetch(payUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin },
    body: new URLSearchParams({ decision: 'approve', csrf }).toString(),
  });
  expect([approved.status, approved.headers.get('location')]).toEqual([303, expect.stringMatching(/^\/pay\/return\//)]);
}

/** The sandbox secret key the first start prints once. */
const sandboxSecretKey = (stack: StartedStack) => /sandbox secret\s+(recur_test_sk_\w+)/.exec(stack.stdout())![1];

/** Ctrl-C, and the exit code once everything stopped. */
async function stopNpmStart(stack: StartedStack): Promise<number | null> {
  stack.child.kill('SIGINT');
  return stack.exited;
}

const dataDir = mkdtempSync(join(tmpdir(), 'recur-getting-started-'));
// The embedded PostgreSQL runs as another OS user when the tests run as root.
chmodSync(dataDir, 0o755);
let started: StartedStack | undefined;
let terminal: Terminal | undefined;

afterAll(async () => {
  terminal?.close();
  if (started) await stopNpmStart(started);
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

it('takes a reader from npm start to an invoice paid in the sandbox and its invoice.paid webhook, every command as the guide writes it', async () => {
  const [start, ...blocks] = guideBlocks();
  expect(start.code).toBe('npm start\n');
  started = await npmStart(dataDir);
  const key = sandboxSecretKey(started);
  const receiverPort = String(await freePort());
  terminal = new Terminal();

  let approved = false;
  for (const block of blocks) {
    if (block.afterApproval && !approved) {
      await approveOnPayerPage(await terminal.variable('PAY_URL'), started.baseUrl);
      // The reader looks at the receiver's lines before going on.
      await terminal.waitFor(new RegExp(`webhook: invoice.paid ${await terminal.variable('INVOICE')}`), 'the invoice.paid webhook');
      approved = true;
    }
    const code = block.code.replace('recur_test_sk_…', key).replaceAll(GUIDE_URL, started.baseUrl).replaceAll(GUIDE_RECEIVER_PORT, receiverPort);
    expect(code).not.toContain('…');
    await terminal.run(code);
    // Every variable a block sets holds a value (no empty answer, no jq `null`).
    for (const [, name] of code.matchAll(/^(?:export )?([A-Z_]+)=/gm)) {
      expect({ [name]: await terminal.variable(name) }).toEqual({ [name]: expect.not.stringMatching(/^(null)?$/) });
    }
  }
  expect(approved).toBe(true);
  // The last block lists the deliveries; the invoice.paid one is recorded a moment after the receiver answered.
  for (let tries = 0; !/^invoice\.paid succeeded$/m.test(terminal.everything()) && tries < 20; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    await terminal.run(blocks.at(-1)!.code.replaceAll(GUIDE_URL, started.baseUrl));
  }

  // What the guide says the reader sees.
  expect(await terminal.variable('CUSTOMER')).toMatch(/^cus_/);
  expect(await terminal.variable('PLAN')).toMatch(/^plan_/);
  expect(await terminal.variable('SUBSCRIPTION')).toMatch(/^sub_/);
  expect(await terminal.variable('ONE_OFF')).toMatch(/^in_/);
  expect(await terminal.variable('PAY_URL')).toMatch(new RegExp(`^${started.baseUrl}/sandbox/pay/`));
  const invoice = await terminal.variable('INVOICE');
  const shown = terminal.everything();
  expect(shown).toContain(`webhook: customer.created ${await terminal.variable('CUSTOMER')}`);
  expect(shown).toContain(`webhook: invoice.created ${invoice}`);
  expect(shown).toMatch(/"number": "INV-000001",\s+"status": "paid",\s+"amount_paid": 9900,\s+"amount_due": 0/);
  expect(shown).toMatch(/^invoice\.paid succeeded$/m);
  expect(shown).not.toMatch(/jq: error|parse error|command not found/);
  // The invoice e-mails reached npm start's mail catcher.
  expect(readdirSync(join(dataDir, 'mail')).filter((name) => name.endsWith('.eml')).length).toBeGreaterThanOrEqual(1);
}, 300_000);
