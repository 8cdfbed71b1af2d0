import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A self-signed certificate and its key, both PEM. */
export interface TestCertificate {
  cert: string;
  key: string;
}

/**
 * Generates a throwaway self-signed P-256 certificate for `hostname` (CN and subjectAltName)
 * with the `openssl` command line, which the test environment has; Node's crypto can make keys
 * but not X.509 certificates. Valid for two days unless `days` says otherwise, so a test's
 * certificate never needs to be checked in.
 */
export function selfSignedCertificate(hostname: string, days = 2): TestCertificate {
  const directory = mkdtempSync(join(tmpdir(), 'outbound-cert-'));
  const keyPath = join(directory, 'key.pem');
  const certPath = join(directory, 'cert.pem');
  try {
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-nodes', '-days', String(days)],
        ...['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'],
        ...['-keyout', keyPath, '-out', certPath],
        ...['-subj', `/CN=${hostname}`, '-addext', `subjectAltName=${isIP(hostname) ? 'IP' : 'DNS'}:${hostname}`],
      ],
      { stdio: 'pipe' },
    );
    return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
  } catch (error) {
    throw new Error(`Generating a test certificate needs the openssl command: ${String(error)}`);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
