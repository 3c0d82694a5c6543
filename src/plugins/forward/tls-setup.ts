// forward's `tls [CERT KEY] [CA]` option, after CoreDNS's plugin/pkg/tls NewTLSConfigFromArgs:
// 0 arguments: the system's roots verify the upstream; 1: that CA file does; 2: a client
// certificate and key, system roots; 3: certificate, key and CA. The files are read here, at
// setup, so a Corefile reload reads them again and a bad one is an error at the tls line.
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import { excerpt } from '../../chain/corefile.js';
import type { OptionReader } from '../../chain/option-reader.js';
import type { ForwardTls } from './config.js';

function readPem(o: OptionReader, corefile: string, file: string, what: string): Buffer {
  // Relative to the Corefile, as the tls plugin reads its files; a Corefile given as text has none.
  const full = isAbsolute(file) || !existsSync(corefile) ? resolve(file) : resolve(dirname(corefile), file);
  try {
    return readFileSync(full);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return o.fail(`cannot read the ${what} file "${excerpt(file)}": ${code === 'ENOENT' ? 'no such file' : (code ?? (err as Error).message)}`);
  }
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** A CA file must hold at least one certificate (Go's AppendCertsFromPEM returning false is an error). */
function readCa(o: OptionReader, corefile: string, file: string): Buffer {
  const pem = readPem(o, corefile, file, 'CA');
  let found = 0;
  for (const m of pem.toString('latin1').matchAll(PEM_CERT)) {
    try {
      new X509Certificate(m[0]);
      found++;
    } catch {
      // Go skips a block that does not parse, and so does this count.
    }
  }
  if (found === 0) o.fail(`the CA file "${excerpt(file)}" holds no PEM certificate`);
  return pem;
}

/** Replaces the TLS settings as CoreDNS's `tls` line replaces its tls.Config; tls_servername is kept. */
export function tlsOption(o: OptionReader, servername: string | undefined): ForwardTls {
  const corefile = o.line.file;
  o.arity(0, 3, 'tls [CA | CERT KEY | CERT KEY CA]', 'tls /etc/ssl/upstream-ca.pem');
  const a = o.args;
  const t: ForwardTls = servername === undefined ? {} : { servername };
  if (a.length === 1) t.ca = readCa(o, corefile, a[0]!);
  if (a.length >= 2) {
    t.cert = readPem(o, corefile, a[0]!, 'certificate');
    t.key = readPem(o, corefile, a[1]!, 'key');
    try {
      // A key that does not match the certificate, or a file that is not PEM, is found now
      // rather than at the first handshake.
      createSecureContext({ cert: t.cert, key: t.key });
    } catch (err) {
      o.fail(`cannot use the certificate and key: ${(err as Error).message}`);
    }
  }
  if (a.length === 3) t.ca = readCa(o, corefile, a[2]!);
  return t;
}
