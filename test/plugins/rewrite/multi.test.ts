// Several rewrite lines in one server block form one rule list, as in CoreDNS.
import { describe, it, expect } from 'vitest';
import { ask } from '../../helpers/decode.js';
import path from 'node:path';
import { buildApp } from '../../../src/app.js';
import { repoRoot } from '../../helpers/server.js';

describe('rewrite: several lines in one block', () => {
  it('applies each rule and answers under the name the client asked', async () => {
    const app = await buildApp({ conf: path.join(repoRoot, 'test/fixtures/rewrite/multi.Corefile') });
    try {
      const db = await ask(app, 'db.example.com', 'A');
      expect(db.answers?.map((a) => a.name)).toEqual(['db.example.com']);
      const api = await ask(app, 'api.example.com', 'A');
      expect(api.answers?.map((a) => `${a.name} ${String(a.data)}`)).toEqual(['api.example.com 10.96.0.1']);
    } finally {
      await app.close();
    }
  });

  it('still refuses a plugin that takes one line when it is written twice', async () => {
    await expect(buildApp({ corefileText: 'cluster.local {\n  cache\n  cache\n  kubernetes {\n    manifests examples/manifests\n  }\n}\n' })).rejects.toThrow(
      /Corefile:3: plugin "cache" appears twice/,
    );
  });
});
