// `tls CERT KEY [CA] { client_auth MODE }` -> the certificate of the block's tls:// listeners, as
// CoreDNS's plugin/tls/tls.go reads it. The files are read here, at setup, so a Corefile reload
// reads them again, and a missing or unusable file is an error at the tls line.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { createSecureContext, type TlsOptions } from 'node:tls';
import type { PluginDefinition } from '../../chain/registry.js';
import { excerpt, type Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { clientAuthModes, type ClientAuth, type TlsConfig } from './config.js';

function readPem(r: OptionReader, d: Directive, file: string, what: string): Buffer {
  const full = isAbsolute(file) || !existsSync(d.file) ? resolve(file) : resolve(dirname(d.file), file);
  try {
    return readFileSync(full);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return r.fail(`cannot read the ${what} file "${excerpt(file)}": ${code === 'ENOENT' ? 'no such file' : (code ?? (err as Error).message)}`);
  }
}

export function parseTls(d: Directive): TlsConfig {
  const r = OptionReader.of(d).arity(2, 3, 'tls CERT KEY [CA]', 'tls cert.pem key.pem ca.pem');
  const cert = readPem(r, d, r.args[0]!, 'certificate');
  const key = readPem(r, d, r.args[1]!, 'key');
  const ca = r.args[2] === undefined ? undefined : readPem(r, d, r.args[2], 'CA');
  let clientAuth: ClientAuth = 'nocert';
  r.block({
    client_auth: (o) => {
      o.arity(1, 1, `client_auth ${clientAuthModes.join('|')}`);
      clientAuth = o.choice(0, 'client_auth', clientAuthModes);
    },
  });
  const config: TlsConfig = ca === undefined ? { cert, key, clientAuth } : { cert, key, ca, clientAuth };
  try {
    // Catches a key that does not match the certificate, or a file that is not PEM, now rather
    // than at the first handshake.
    createSecureContext(serverOptions(config));
  } catch (err) {
    r.fail(`cannot use the certificate and key: ${(err as Error).message}`);
  }
  return config;
}

/** The node:tls server options of a TlsConfig: TLS 1.2 at least. The listener adds the ALPN of its transport. */
export function serverOptions(c: TlsConfig): TlsOptions {
  // Go's modes in node's terms: requestCert asks for a certificate, rejectUnauthorized both
  // requires one and verifies it. Node cannot require a certificate without verifying it, so
  // `require` verifies too, like require_and_verify.
  const requestCert = c.clientAuth !== 'nocert';
  const rejectUnauthorized = c.clientAuth === 'require' || c.clientAuth === 'require_and_verify';
  return {
    cert: c.cert,
    key: c.key,
    ...(c.ca ? { ca: c.ca } : {}),
    minVersion: 'TLSv1.2',
    requestCert,
    rejectUnauthorized,
  };
}

export const tlsPlugin: PluginDefinition = {
  name: 'tls',
  setup(d, ctx) {
    const config = parseTls(d);
    const id = createHash('sha256')
      .update(config.cert)
      .update('\0')
      .update(config.key)
      .update('\0')
      .update(config.ca ?? '')
      .update(`\0${config.clientAuth}`)
      .digest('hex');
    ctx.tls = { options: serverOptions(config), verifyIfGiven: config.clientAuth === 'verify_if_given', id };
    return undefined;
  },
};
