import { describe, expect, it } from 'vitest';
import { startedWithCaCerts, takeMachineCaCerts } from './machineCaCerts.ts';

describe('takeMachineCaCerts', () => {
  it('removes NODE_EXTRA_CA_CERTS and gives the first value to every later caller (one call per project setup)', () => {
    const keeper = {};
    const env: NodeJS.ProcessEnv = { NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt', PATH: '/bin' };
    expect(takeMachineCaCerts(env, keeper)).toBe('/etc/ssl/certs/ca-certificates.crt');
    expect(env).toEqual({ PATH: '/bin' });
    // The second project's setup finds the variable gone: it still gets the machine's bundle.
    expect(takeMachineCaCerts(env, keeper)).toBe('/etc/ssl/certs/ca-certificates.crt');
    expect(takeMachineCaCerts({ NODE_EXTRA_CA_CERTS: '/other.pem' }, keeper)).toBe('/etc/ssl/certs/ca-certificates.crt');
  });

  it("is '' for a machine without a bundle, and stays ''", () => {
    const keeper = {};
    expect(takeMachineCaCerts({}, keeper)).toBe('');
    expect(takeMachineCaCerts({ NODE_EXTRA_CA_CERTS: '/later.pem' }, keeper)).toBe('');
  });
});

describe('startedWithCaCerts', () => {
  const environ =
    (...entries: string[]) =>
    () =>
      Buffer.from(`${entries.join('\0')}\0`);

  it('reads the value a process was started with from its /proc environ', () => {
    expect(startedWithCaCerts(1, environ('PATH=/bin', 'NODE_EXTRA_CA_CERTS=/a b/ca.pem', 'HOME=/root'))).toBe('/a b/ca.pem');
    expect(startedWithCaCerts(1, environ('PATH=/bin'))).toBe('');
  });

  it('is null when the environ cannot be read', () => {
    expect(
      startedWithCaCerts(1, () => {
        throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
      }),
    ).toBeNull();
  });
});
