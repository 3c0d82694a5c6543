import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  resolve: {
    // Tests import the library the way users do: `import { loadCluster } from 'clusterdns'`.
    alias: { clusterdns: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
  },
  test: {
    // The built-in default Corefile forwards to a resolv.conf: in tests, to a loopback address
    // where nothing listens, so no test ever sends a query off the machine.
    env: { CLUSTERDNS_UPSTREAM_RESOLV_CONF: fileURLToPath(new URL('./test/fixtures/no-upstream.resolv.conf', import.meta.url)) },
    testTimeout: 30000,
    hookTimeout: 60000,
  },
});
