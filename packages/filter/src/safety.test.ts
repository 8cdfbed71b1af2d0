import { describe, expect, it } from 'vitest';
import { type Filter, matchesFilter, parseFilter } from './index';

function compile(text: string): Filter {
  const result = parseFilter(text);
  if (!result.ok) throw new Error(`${text} did not parse: ${result.message}`);
  return result.filter;
}

function matches(text: string, event: unknown): boolean {
  return matchesFilter(compile(text), event);
}

const plain = { event: { name: 'payment.succeeded', data: { status: 'succeeded', list: ['a'] } } };

describe('member access reads own data properties only', () => {
  it.each([
    'event.constructor',
    'event["constructor"]',
    'event["__proto__"]',
    'event.__proto__',
    'event.data.hasOwnProperty',
    'event.data.toString',
    'event.data.valueOf',
    'event.data.isPrototypeOf',
    'event.data.list.map',
    'event.name.length',
  ])('%s is missing, not inherited', (path) => {
    if (path.endsWith('.map') || path.endsWith('.length')) {
      // Names are read from objects only: on an array or a string they are type errors.
      expect(matches(`${path} == null`, plain)).toBe(false);
      expect(matches(`${path} != null`, plain)).toBe(false);
    } else {
      expect(matches(`${path} == null`, plain)).toBe(true);
      expect(matches(`${path}.name == null`, plain)).toBe(false);
    }
  });

  it('reads a real own __proto__ key, as JSON.parse makes it', () => {
    const event = JSON.parse('{"event": {"data": {"__proto__": {"x": 1}, "constructor": "c"}}}');
    expect(matches('event.data["__proto__"].x == 1', event)).toBe(true);
    expect(matches('event.data.constructor == "c"', event)).toBe(true);
  });

  it('ignores polluted prototypes', () => {
    const objectPrototype = Object.prototype as Record<string, unknown>;
    const arrayPrototype = Array.prototype as unknown as Record<number, unknown>;
    objectPrototype.polluted = 'yes';
    arrayPrototype[0] = 'yes';
    try {
      // biome-ignore lint/suspicious/noSparseArray: a hole is what reads through to Array.prototype.
      const event = { event: { data: { holes: [, 'b'] } } };
      expect(matches('event.data.polluted == null and event.polluted == null', event)).toBe(true);
      expect(matches('event.data.holes[0] == null and event.data.holes[1] == "b"', event)).toBe(true);
      expect(matches('"yes" in event.data.holes', event)).toBe(false);
    } finally {
      delete objectPrototype.polluted;
      delete arrayPrototype[0];
    }
  });

  it('runs no getters of the event', () => {
    let calls = 0;
    const data = {
      get secret() {
        calls++;
        return 1;
      },
    };
    const list = ['a'];
    Object.defineProperty(list, 1, {
      get() {
        calls++;
        return 'b';
      },
    });
    const event = { event: { data, list } };
    expect(matches('event.data.secret == 1', event)).toBe(false);
    expect(matches('not (event.data.secret == 1)', event)).toBe(false);
    expect(matches('event.list[1] == "b"', event)).toBe(false);
    expect(matches('"b" in event.list', event)).toBe(false);
    expect(matches('"a" in event.list', event)).toBe(true);
    expect(calls).toBe(0);
  });

  it('treats values JSON cannot hold as type errors, undefined as missing, null prototypes as objects', () => {
    const data: Record<string, unknown> = {
      nan: Number.NaN,
      infinite: Number.POSITIVE_INFINITY,
      big: 10n,
      fn: () => 1,
      date: new Date(0),
      map: new Map([['x', 1]]),
      instance: new (class Thing {
        x = 1;
      })(),
      nothing: undefined,
      bare: Object.assign(Object.create(null), { x: 1 }),
    };
    const event = { event: { data } };
    for (const name of ['nan', 'infinite', 'big', 'fn', 'date', 'map', 'instance']) {
      expect(matches(`event.data.${name} == null`, event)).toBe(false);
      expect(matches(`event.data.${name} != null`, event)).toBe(false);
    }
    expect(matches('event.data.instance.x == 1', event)).toBe(false);
    expect(matches('event.data.map.x == 1', event)).toBe(false);
    expect(matches('event.data.nothing == null', event)).toBe(true);
    expect(matches('event.data.bare.x == 1', event)).toBe(true);
  });

  it('answers false for throwing proxies and forged filters instead of throwing', () => {
    const hostile = new Proxy(
      {},
      {
        getOwnPropertyDescriptor() {
          throw new Error('boom');
        },
        getPrototypeOf() {
          throw new Error('boom');
        },
      },
    );
    expect(matches('event == null', { event: hostile })).toBe(false);
    expect(matches('event.x == null', { event: hostile })).toBe(false);
    expect(matches('event == null', hostile)).toBe(false);
    expect(matchesFilter(null as unknown as Filter, plain)).toBe(false);
    expect(matchesFilter({ text: 'event.(' } as unknown as Filter, plain)).toBe(false);
  });
});

describe('the filter object', () => {
  it('stores its text as given and serialises to it alone', () => {
    const text = '  event.name ==\n"payment.succeeded"  ';
    const filter = compile(text);
    expect(filter.text).toBe(text);
    expect(JSON.parse(JSON.stringify(filter))).toEqual({ text });
    expect(Object.isFrozen(filter)).toBe(true);
  });

  it('compiles a filter revived from its text rather than failing it', () => {
    const revived = JSON.parse(JSON.stringify(compile('event.data.status == "succeeded"'))) as Filter;
    expect(matchesFilter(revived, plain)).toBe(true);
    expect(matchesFilter(revived, { event: { data: { status: 'failed' } } })).toBe(false);
  });
});

/**
 * An endless event: every object has a million keys and every property is another such object;
 * `reads` counts every trap, i.e. every look at the event. Deep equality or key enumeration on it
 * would never finish; a filter must only follow its paths.
 */
const MILLION_KEYS = Array.from({ length: 1_000_000 }, (_, index) => `k${index}`);

function endlessEvent(): { root: unknown; reads: () => number } {
  let reads = 0;
  const handler: ProxyHandler<object> = {
    getOwnPropertyDescriptor() {
      reads++;
      return { value: node, writable: false, enumerable: true, configurable: true };
    },
    get() {
      reads++;
      return node;
    },
    getPrototypeOf() {
      reads++;
      return Object.prototype;
    },
    has() {
      reads++;
      return true;
    },
    ownKeys() {
      reads++;
      return MILLION_KEYS;
    },
  };
  const node: object = new Proxy({}, handler);
  return { root: node, reads: () => reads };
}

describe('evaluation cost follows the filter, not the event', () => {
  it('follows only the filter paths through an endless, cyclic event', () => {
    const filters = [
      'event.a.b.c.d == null',
      'event.a == event.b',
      'event.a != event.a.b',
      'event.a in [1, 2, 3]',
      'event.a.b in "text"',
      '"x" in event.a',
      'event.a < 1',
      'not event.a and event.b.c or event.d',
      'event.a["x"].b == 1 or event.c.d == 2',
      'event.a["x"].b != 1 and event.c.d == 2',
    ];
    for (const text of filters) {
      const { root, reads } = endlessEvent();
      expect(matches(text, root)).toBe(false);
      // A few traps per path step at most: nowhere near the million keys of any object.
      expect(reads()).toBeLessThan(5 * text.length);
    }
  });

  it('compares cyclic values without walking them', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const list: unknown[] = ['x'];
    list.push(list);
    const event = { event: { data: cyclic, list } };
    expect(matches('event.data.self.self.self.self.name == "loop"', event)).toBe(true);
    expect(matches('event.data.self == event.data', event)).toBe(false);
    expect(matches('event.data.self != event.data', event)).toBe(false);
    expect(matches('event.list[1][1][1][0] == "x"', event)).toBe(true);
    expect(matches('"x" in event.list and "y" not in event.list', event)).toBe(true);
    expect(matches('event.list == event.list[1]', event)).toBe(false);
  });

  it('reads one path of a deeply nested event', () => {
    let deep: unknown = { leaf: true };
    for (let level = 0; level < 100_000; level++) deep = { next: deep };
    expect(matches('event.next.next.next != null', { event: deep })).toBe(true);
    expect(matches('event.next == event.next', { event: deep })).toBe(false);
  });
});
