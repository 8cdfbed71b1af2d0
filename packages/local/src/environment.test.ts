import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JVM_OPTIONS, startDynamoDbLocal } from './dynamodb-local';
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

  it('starts DynamoDB Local with the quick JIT compiler only (options a user set come after, and win), and leaves ours alone', async () => {
    expect(JVM_OPTIONS).toContain('-XX:TieredStopAtLevel=1');
    const saved = process.env.JAVA_TOOL_OPTIONS;
    process.env.JAVA_TOOL_OPTIONS = '-Dsvc.test=1';
    const local = await startDynamoDbLocal({});
    try {
      expect(process.env.JAVA_TOOL_OPTIONS).toBe('-Dsvc.test=1');
      const java = readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .find((pid) => {
          try {
            const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
            const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
            return parent === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('DynamoDBLocal');
          } catch {
            return false;
          }
        });
      if (!java) throw new Error('DynamoDB Local is not a child of this process');
      const environment = readFileSync(`/proc/${java}/environ`, 'utf8').split('\0');
      expect(environment).toContain('JAVA_TOOL_OPTIONS=-XX:TieredStopAtLevel=1 -Dsvc.test=1');
    } finally {
      if (saved === undefined) delete process.env.JAVA_TOOL_OPTIONS;
      else process.env.JAVA_TOOL_OPTIONS = saved;
      await local.stop();
    }
  });
});
