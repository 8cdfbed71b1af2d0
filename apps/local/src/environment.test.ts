import { describe, expect, it } from 'vitest';
import { readSettings } from './environment';

describe('local settings', () => {
  it('runs background work on timers unless SVC_BACKGROUND=settle asks for settle only', () => {
    expect(readSettings({}).background).toBe('timers');
    expect(readSettings({ SVC_BACKGROUND: 'timers' }).background).toBe('timers');
    expect(readSettings({ SVC_BACKGROUND: 'settle' }).background).toBe('settle');
    expect(() => readSettings({ SVC_BACKGROUND: 'never' })).toThrow(/SVC_BACKGROUND must be timers or settle/);
  });

  it('reads the port, the data directory and the table name', () => {
    expect(readSettings({ PORT: '0', SVC_DATA_DIR: ':memory:', SVC_TABLE_NAME: 't-1' })).toMatchObject({
      port: 0,
      inMemory: true,
      tableName: 't-1',
    });
    expect(() => readSettings({ PORT: '70000' })).toThrow(/PORT must be a port number/);
  });

  it('refuses to start with an Adyen HMAC key that is not hex (issue 45)', () => {
    expect(() => readSettings({ SVC_ADYEN_HMAC_KEY: 'not-a-hex-key-but-long-enough-for-32-chars' })).toThrow(
      /SVC_ADYEN_HMAC_KEY.*hexadecimal/,
    );
    expect(readSettings({ SVC_ADYEN_HMAC_KEY: 'ab'.repeat(32) }).port).toBe(3000);
  });
});
