import { describe, expect, it } from 'vitest';
import { BlockedTargetError } from './blocked-target-error';
import { resolveTarget } from './resolve-target';
import { fakeLookup } from './testing/fake-lookup';

const PRIVATE_ADDRESSES = [
  '127.0.0.1',
  '10.0.0.1',
  '172.16.5.4',
  '192.168.1.1',
  '169.254.169.254',
  '::1',
  '::ffff:127.0.0.1',
  'fd00:ec2::254',
];

/** Rejects with a BlockedTargetError carrying `reason` (and `address` when given). */
async function expectBlocked(
  promise: Promise<unknown>,
  reason: BlockedTargetError['reason'],
  address?: string,
): Promise<BlockedTargetError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(BlockedTargetError);
  const blocked = error as BlockedTargetError;
  expect(blocked.reason).toBe(reason);
  if (address !== undefined) expect(blocked.address).toBe(address);
  return blocked;
}

describe('resolveTarget, IP literals', () => {
  it.each([
    ['https://127.0.0.1/', '127.0.0.1'],
    ['https://10.1.2.3/hook', '10.1.2.3'],
    ['https://172.16.0.1/', '172.16.0.1'],
    ['https://172.31.255.255/', '172.31.255.255'],
    ['https://192.168.1.1:8443/', '192.168.1.1'],
    ['https://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['https://0.0.0.0/', '0.0.0.0'],
    ['https://[::1]/', '::1'],
    ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['https://[::FFFF:7F00:1]/', '::ffff:7f00:1'],
    ['https://[0:0:0:0:0:ffff:a00:1]/', '::ffff:a00:1'],
    ['https://[64:ff9b::169.254.169.254]/', '64:ff9b::a9fe:a9fe'],
    ['https://[fd00:ec2::254]/', 'fd00:ec2::254'],
    ['https://[fe80::1]/', 'fe80::1'],
    // odd IPv4 spellings, normalised by the URL parser to 127.0.0.1
    ['https://2130706433/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://017700000001/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://0x7f.0.0.1/', '127.0.0.1'],
    ['https://0177.0.0.01/', '127.0.0.1'],
    ['https://%31%32%37.0.0.1/', '127.0.0.1'],
    ['https://127.0.0.1./', '127.0.0.1'],
    ['https://0xa9fea9fe/', '169.254.169.254'],
  ])('%s is refused without a lookup', async (url, address) => {
    const dns = fakeLookup({});
    await expectBlocked(resolveTarget(url, { allowPrivate: false, lookup: dns.lookup }), 'address', address);
    expect(dns.calls).toEqual([]);
  });

  it('allows a private literal when private targets are allowed', async () => {
    const target = await resolveTarget('https://10.0.0.7:8443/x', {
      allowPrivate: true,
      lookup: fakeLookup({}).lookup,
    });
    expect(target).toMatchObject({ hostname: '10.0.0.7', address: '10.0.0.7', family: 4 });
  });

  it('resolves a public IPv6 literal to itself, without brackets', async () => {
    const dns = fakeLookup({});
    const target = await resolveTarget('https://[2606:4700:4700::1111]:8443/x', {
      allowPrivate: false,
      lookup: dns.lookup,
    });
    expect(target).toMatchObject({ hostname: '2606:4700:4700::1111', address: '2606:4700:4700::1111', family: 6 });
    expect(target.url.port).toBe('8443');
    expect(dns.calls).toEqual([]);
  });
});

describe('resolveTarget, names', () => {
  it.each(PRIVATE_ADDRESSES)('refuses a name that resolves to %s', async (address) => {
    const dns = fakeLookup({ 'hooks.example.com': [address] });
    const error = await expectBlocked(
      resolveTarget('https://hooks.example.com/in', { allowPrivate: false, lookup: dns.lookup }),
      'address',
      address,
    );
    expect(error.message).toContain('hooks.example.com');
    expect(dns.calls).toEqual(['hooks.example.com']);
  });

  it.each([
    [['93.184.215.14', '10.0.0.1']],
    [['10.0.0.1', '93.184.215.14']],
    [['2606:4700:4700::1111', '93.184.215.14', '::ffff:169.254.169.254']],
  ])('refuses a name whose addresses mix public and private (%j)', async (addresses) => {
    const dns = fakeLookup({ 'mixed.example.com': addresses });
    await expectBlocked(
      resolveTarget('https://mixed.example.com/', { allowPrivate: false, lookup: dns.lookup }),
      'address',
    );
  });

  it.each(PRIVATE_ADDRESSES)('allows a name resolving to %s when private targets are allowed', async (address) => {
    const dns = fakeLookup({ 'receiver.test': [address] });
    const target = await resolveTarget('https://receiver.test/', { allowPrivate: true, lookup: dns.lookup });
    expect(target.address).toBe(address);
  });

  it('pins the first address of a public name, with its family', async () => {
    const dns = fakeLookup({ 'hooks.example.com': ['2606:4700:4700::1111', '93.184.215.14'] });
    const target = await resolveTarget('https://hooks.example.com:8443/in?a=1', {
      allowPrivate: false,
      lookup: dns.lookup,
    });
    expect(target).toMatchObject({ hostname: 'hooks.example.com', address: '2606:4700:4700::1111', family: 6 });
    expect(target.url.href).toBe('https://hooks.example.com:8443/in?a=1');
    expect(dns.calls).toEqual(['hooks.example.com']);
  });

  it('looks up internationalised names in their ASCII form', async () => {
    const dns = fakeLookup({ 'xn--bcher-kva.example': ['93.184.215.14'] });
    const target = await resolveTarget('https://bücher.example/', { allowPrivate: false, lookup: dns.lookup });
    expect(target.hostname).toBe('xn--bcher-kva.example');
  });

  it('passes a DNS failure through as the resolver error, not as a block', async () => {
    const error = await resolveTarget('https://missing.example.com/', {
      allowPrivate: false,
      lookup: fakeLookup({}).lookup,
    }).catch((caught: unknown) => caught);
    expect(error).not.toBeInstanceOf(BlockedTargetError);
    expect(error).toMatchObject({ code: 'ENOTFOUND' });
  });

  it('rejects a name with no addresses or with an answer that is not an address', async () => {
    const dns = fakeLookup({ 'empty.example.com': [], 'odd.example.com': ['93.184.215.14', 'not-an-ip'] });
    await expect(
      resolveTarget('https://empty.example.com/', { allowPrivate: true, lookup: dns.lookup }),
    ).rejects.toThrow(/no addresses/);
    await expect(resolveTarget('https://odd.example.com/', { allowPrivate: true, lookup: dns.lookup })).rejects.toThrow(
      /invalid address/,
    );
  });

  it('rejects (does not throw synchronously) when the lookup itself throws', async () => {
    const promise = resolveTarget('https://throws.example.com/', {
      allowPrivate: false,
      lookup: () => {
        throw new Error('resolver exploded');
      },
    });
    await expect(promise).rejects.toThrow('resolver exploded');
  });
});

describe('resolveTarget, URL checks', () => {
  const dns = fakeLookup({ 'hooks.example.com': ['93.184.215.14'], 'local.test': ['127.0.0.1', '::1'] });

  it('refuses http:// to a public host', async () => {
    await expectBlocked(
      resolveTarget('http://hooks.example.com/', { allowPrivate: false, lookup: dns.lookup }),
      'scheme',
    );
    await expectBlocked(
      resolveTarget('http://hooks.example.com/', { allowPrivate: true, lookup: dns.lookup }),
      'scheme',
    );
  });

  it('allows http:// only to loopback, and only when private targets are allowed', async () => {
    const loopback = await resolveTarget('http://local.test:8080/', { allowPrivate: true, lookup: dns.lookup });
    expect(loopback.address).toBe('127.0.0.1');
    await expect(resolveTarget('http://127.0.0.1:8080/', { allowPrivate: true })).resolves.toMatchObject({
      address: '127.0.0.1',
    });
    await expect(resolveTarget('http://[::1]:8080/', { allowPrivate: true })).resolves.toMatchObject({ family: 6 });
    await expectBlocked(
      resolveTarget('http://local.test:8080/', { allowPrivate: false, lookup: dns.lookup }),
      'address',
    );
    await expectBlocked(resolveTarget('http://10.0.0.1/', { allowPrivate: true }), 'scheme');
    const mixed = fakeLookup({ 'mixed.test': ['127.0.0.1', '10.0.0.1'] });
    await expectBlocked(resolveTarget('http://mixed.test/', { allowPrivate: true, lookup: mixed.lookup }), 'scheme');
  });

  it.each([
    'ftp://hooks.example.com/',
    'file:///etc/passwd',
    'gopher://hooks.example.com/',
    'ws://hooks.example.com/',
    'wss://hooks.example.com/',
    'data:application/json,{}',
    'javascript:alert(1)',
  ])('refuses the scheme of %s', async (url) => {
    await expectBlocked(resolveTarget(url, { allowPrivate: true, lookup: dns.lookup }), 'scheme');
  });

  it.each([
    'https://user:pass@hooks.example.com/',
    'https://user@hooks.example.com/',
    'https://:secret@hooks.example.com/',
  ])('refuses credentials in %s', async (url) => {
    await expectBlocked(resolveTarget(url, { allowPrivate: true, lookup: dns.lookup }), 'credentials');
  });

  it('refuses port 0 and accepts 1 and 65535', async () => {
    await expectBlocked(
      resolveTarget('https://hooks.example.com:0/', { allowPrivate: false, lookup: dns.lookup }),
      'port',
    );
    await expectBlocked(
      resolveTarget('https://hooks.example.com:00/', { allowPrivate: false, lookup: dns.lookup }),
      'port',
    );
    for (const port of ['1', '65535']) {
      const target = await resolveTarget(`https://hooks.example.com:${port}/`, {
        allowPrivate: false,
        lookup: dns.lookup,
      });
      expect(target.url.port).toBe(port);
    }
  });

  it.each([
    '',
    'not a url',
    'hooks.example.com/in',
    '//hooks.example.com/in',
    'https://',
    'https://exa mple.com/',
    'https://hooks.example.com:65536/',
    'https://hooks.example.com:-1/',
    'https://[fe80::1%25eth0]/',
    'https://[::1/',
    'https://1.2.3.4.5/',
    'https://999.0.0.1/',
    'https://foo.123/',
  ])('refuses the malformed URL %j', async (url) => {
    await expectBlocked(resolveTarget(url, { allowPrivate: true, lookup: dns.lookup }), 'invalid-url');
  });
});
