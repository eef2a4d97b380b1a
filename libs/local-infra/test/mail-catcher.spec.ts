import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTransport } from 'nodemailer';
import { startMailCatcher } from '../src/mail-catcher';

describe('mail catcher', () => {
  it('keeps every message, parsed and written as its own .eml file, even many at once; refuses while told to', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'recur-mail-'));
    const catcher = await startMailCatcher({ dir });
    const transport = createTransport({ url: catcher.url, pool: true, maxConnections: 5 });
    try {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          transport.sendMail({ from: 'a@example.com', to: `to${i}@example.com`, subject: `Message ${i}`, text: `Body ${i}`, attachments: [{ filename: 'x.pdf', content: Buffer.from('%PDF-1.3') }] }),
        ),
      );
      const caught = catcher.messages();
      expect(caught.map((mail) => mail.parsed.subject).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `Message ${i}`).sort());
      expect(caught.find((mail) => mail.parsed.subject === 'Message 3')).toMatchObject({ envelope: { from: 'a@example.com', to: ['to3@example.com'] } });
      expect(caught[0].parsed.attachments.map((attachment) => attachment.filename)).toEqual(['x.pdf']);
      const files = readdirSync(dir).filter((file) => file.endsWith('.eml'));
      expect(files).toHaveLength(20);
      expect(readFileSync(join(dir, files[0]), 'utf8')).toContain('Subject: Message');

      catcher.refuse(451);
      await expect(transport.sendMail({ from: 'a@example.com', to: 'late@example.com', subject: 'Later', text: 'x' })).rejects.toMatchObject({ responseCode: 451 });
      expect(catcher.refuse(null)).toBe(1);
      expect(catcher.messages()).toHaveLength(20);
    } finally {
      transport.close();
      await catcher.stop();
    }
  });
});
