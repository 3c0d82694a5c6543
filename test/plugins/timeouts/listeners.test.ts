// `timeouts` on real listeners on loopback: the idle and read deadlines it sets close TCP and
// tls:// connections on time, while a listener without it keeps CoreDNS's defaults (idle 10 s,
// read 3 s). Each wait is a bounded poll; the one fixed wait is the window in which the default
// listener must keep its connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import pino from 'pino';
import { buildApp, type App } from '../../../src/app.js';
import { repoRoot } from '../../helpers/server.js';
import { quietFor } from '../../helpers/wait.js';
import { buildQuery, frame, idOf, parseHeader, T, TcpConn } from '../../server/raw.js';
import { getPath, h2Connect, h2Request } from '../../server/doh-client.js';

const manifests = path.join(repoRoot, 'examples/manifests');
const kubernetesApi = 'kubernetes.default.svc.cluster.local';

async function serve(key: string, extra: string): Promise<{ app: App; port: number }> {
  const corefileText = `${key} {\n  bind 127.0.0.1\n  ${extra}\n  kubernetes cluster.local\n}\n`;
  const app = await buildApp({ corefileText, manifests: [manifests], logger: pino({ level: 'silent' }) });
  const [first] = await app.listen();
  return { app, port: first!.port };
}

/** A connection that got one answer: from here on it is idle. */
async function answered(port: number): Promise<TcpConn> {
  const c = await TcpConn.open({ port });
  const q = buildQuery({ name: kubernetesApi, type: T.A });
  await c.send(q);
  expect(parseHeader(await c.read()).id).toBe(idOf(q));
  return c;
}

describe.concurrent('timeouts on TCP and tls:// listeners', () => {
  const apps: App[] = [];
  let short: number;
  let shortRead: number;
  let shortDot: number;
  let plain: number;
  beforeAll(async () => {
    const started = await Promise.all([
      serve('.:0', 'timeouts {\n    idle 1s\n  }'),
      serve('.:0', 'timeouts {\n    read 1s\n  }'),
      // A tls:// block without a tls line serves the DoT framing without encryption: the same listener code.
      serve('tls://.:0', 'timeouts {\n    idle 1s\n  }'),
      serve('.:0', ''),
    ]);
    for (const s of started) apps.push(s.app);
    [short, shortRead, shortDot, plain] = started.map((s) => s.port) as [number, number, number, number];
  });
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
  });

  it('idle 1s closes an idle TCP and an idle tls:// connection after about 1 s; the default (10 s) keeps its own', async () => {
    const [c, dot, kept] = await Promise.all([answered(short), answered(shortDot), answered(plain)]);
    const idleSince = Date.now();
    try {
      const [closed, dotClosed] = await Promise.all([c.waitClosed(5000), dot.waitClosed(5000)]);
      expect(closed, 'idle 1s: TCP connection still open after 5 s').toBe(true);
      expect(dotClosed, 'idle 1s: tls:// connection still open after 5 s').toBe(true);
      // The deadline is the socket's inactivity timer: not before it, and well before the 10 s default.
      expect(c.closedAt - idleSince).toBeGreaterThanOrEqual(900);
      expect(dot.closedAt - idleSince).toBeGreaterThanOrEqual(900);
      await quietFor(1000, 'the default listener keeps an idle connection past the 1 s deadline of the others');
      expect(kept.closed, 'default idle timeout closed a connection within ~2 s').toBe(false);
      const q = buildQuery({ name: kubernetesApi, type: T.A });
      await kept.send(q);
      expect(parseHeader(await kept.read()).id).toBe(idOf(q));
    } finally {
      for (const x of [c, dot, kept]) x.destroy();
    }
  }, 15_000);

  it('read 1s closes a connection whose message stays incomplete after about 1 s, where the default waits 3 s', async () => {
    const q = frame(buildQuery({ name: kubernetesApi, type: T.A }));
    const [c, kept] = await Promise.all([TcpConn.open({ port: shortRead }), TcpConn.open({ port: plain })]);
    try {
      await Promise.all([c.write(q.subarray(0, 10)), kept.write(q.subarray(0, 10))]);
      const since = Date.now();
      expect(await c.waitClosed(2500), 'read 1s: connection with half a message still open after 2.5 s').toBe(true);
      expect(c.closedAt - since).toBeGreaterThanOrEqual(900);
      expect(kept.closed, 'default read timeout (3 s) closed the connection before the 1 s one').toBe(false);
      // The default listener's connection still completes its message and gets the answer.
      await kept.write(q.subarray(10));
      expect(parseHeader(await kept.read()).id).toBe(idOf(q.subarray(2)));
    } finally {
      c.destroy();
      kept.destroy();
    }
  }, 15_000);
});

it('idle 1s closes an idle DNS over HTTPS connection (HTTP/2, plain) after about 1 s', async () => {
  const { app, port } = await serve('https://.:0', 'timeouts {\n    idle 1s\n  }');
  try {
    const session = await h2Connect(port);
    try {
      const reply = await h2Request(session, { path: getPath(buildQuery({ name: kubernetesApi, type: T.A })) });
      expect(reply.status).toBe(200);
      const closed = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 5000);
        session.once('close', () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      expect(closed, 'idle 1s: DoH connection still open after 5 s').toBe(true);
    } finally {
      session.destroy();
    }
  } finally {
    await app.close();
  }
});
