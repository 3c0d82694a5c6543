import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  resolve: {
    // Tests import the library the way users do: `import { loadCluster } from 'clusterdns'`.
    alias: { clusterdns: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
  },
  test: {
    testTimeout: 30000,
    hookTimeout: 60000,
  },
});
