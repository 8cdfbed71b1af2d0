/** The progressive-enhancement script, run against a small fake of the DOM it touches. */
import { describe, expect, it } from 'vitest';
import { CONNECT_JS } from './assets';

type Listener = (event: FakeEvent) => void;
interface FakeEvent {
  defaultPrevented: boolean;
  persisted?: boolean;
  preventDefault(): void;
}

class FakeElement {
  readonly attributes = new Map<string, string>();
  readonly listeners = new Map<string, Listener[]>();
  readonly classes = new Set<string>();
  readonly classList = { add: (c: string) => this.classes.add(c), remove: (c: string) => this.classes.delete(c) };
  readonly inserted: FakeElement[] = [];
  readonly parentNode = { insertBefore: (node: FakeElement) => this.inserted.push(node) };
  readonly nextSibling = null;
  id = '';
  type = '';
  value = '';
  textContent = '';
  className = '';
  disabled = false;
  hidden = false;
  focused = false;
  validity = '';
  form: FakeElement | undefined;
  selectors: Record<string, FakeElement[]> = {};

  constructor(attributes: Record<string, string> = {}) {
    for (const [name, value] of Object.entries(attributes)) this.setAttribute(name, value);
    this.id = attributes.id ?? '';
    this.type = attributes.type ?? '';
  }
  getAttribute(name: string) {
    return this.attributes.get(name) ?? null;
  }
  setAttribute(name: string, value: string) {
    this.attributes.set(name, String(value));
  }
  hasAttribute(name: string) {
    return this.attributes.has(name);
  }
  removeAttribute(name: string) {
    this.attributes.delete(name);
  }
  querySelectorAll(selector: string) {
    return this.selectors[selector] ?? [];
  }
  addEventListener(type: string, listener: Listener) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  dispatch(type: string, extra: Partial<FakeEvent> = {}): FakeEvent {
    const event: FakeEvent = {
      defaultPrevented: false,
      preventDefault() {
        this.defaultPrevented = true;
      },
      ...extra,
    };
    for (const listener of this.listeners.get(type) ?? []) listener(event);
    return event;
  }
  setCustomValidity(message: string) {
    this.validity = message;
  }
  focus() {
    this.focused = true;
  }
  scrollIntoView() {}
}

function page() {
  const form = new FakeElement();
  const button = new FakeElement({ type: 'submit', 'data-busy-label': 'Please wait…' });
  button.textContent = 'Continue';
  form.selectors['button[type="submit"]'] = [button];
  const password = new FakeElement({
    id: 'password',
    type: 'password',
    'data-show-label': 'Show',
    'data-hide-label': 'Hide',
  });
  password.form = form;
  const confirm = new FakeElement({
    id: 'confirm',
    type: 'password',
    'data-match': 'password',
    'data-match-message': 'Differ',
    'aria-invalid': 'true',
    'aria-describedby': 'confirm-error confirm-live',
  });
  const live = new FakeElement({ id: 'confirm-live' });
  const serverError = new FakeElement({ id: 'confirm-error' });
  const iban = new FakeElement({ id: 'iban', 'data-iban': '' });
  const captcha = new FakeElement({ name: 'recaptcha_token' });
  const summary = new FakeElement({ id: 'error-summary' });
  const link = new FakeElement({ href: '#iban' });
  summary.selectors['a[href^="#"]'] = [link];
  const byId = new Map([password, confirm, live, serverError, iban, summary].map((e) => [e.id, e]));
  const selectors: Record<string, FakeElement[]> = {
    'input[name="recaptcha_token"]': [captcha],
    'input[data-show-label]': [password],
    'input[data-match]': [confirm],
    'input[data-iban]': [iban],
    form: [form],
  };
  const document = {
    getElementById: (id: string) => byId.get(id) ?? null,
    querySelector: () => null,
    querySelectorAll: (selector: string) =>
      selector === 'form[aria-busy="true"]'
        ? [form].filter((f) => f.hasAttribute('aria-busy'))
        : (selectors[selector] ?? []),
    createElement: () => new FakeElement(),
  };
  const window = new FakeElement() as FakeElement & Record<string, unknown>;
  window.setTimeout = (fn: () => void) => fn();
  new Function('window', 'document', CONNECT_JS)(window, document);
  return { window, form, button, password, confirm, live, serverError, iban, captcha, summary, link };
}

describe('connect.js', () => {
  it('focuses the error summary and moves focus to a field from its link', () => {
    const p = page();
    expect(p.summary.focused).toBe(true);
    expect(p.link.dispatch('click').defaultPrevented).toBe(true);
    expect(p.iban.focused).toBe(true);
  });

  it('adds a show/hide button to password fields and hides the password again on submit', () => {
    const p = page();
    const [toggle] = p.password.inserted;
    expect(toggle?.type).toBe('button');
    expect(toggle?.getAttribute('aria-controls')).toBe('password');
    expect(toggle?.textContent).toBe('Show');
    toggle?.dispatch('click');
    expect([p.password.type, toggle?.textContent]).toEqual(['text', 'Hide']);
    p.form.dispatch('submit');
    expect([p.password.type, toggle?.textContent]).toEqual(['password', 'Show']);
  });

  it('checks the confirmation live: quiet while typing a prefix, then invalid, then fixed', () => {
    const p = page();
    p.password.value = 'correct horse';
    p.confirm.value = 'corr';
    p.confirm.dispatch('input');
    expect(p.live.textContent).toBe('');
    expect(p.confirm.validity).toBe('Differ'); // still blocks the submission
    p.confirm.value = 'corx';
    p.confirm.dispatch('input');
    expect([p.confirm.getAttribute('aria-invalid'), p.live.textContent]).toEqual(['true', 'Differ']);
    p.confirm.value = 'correct horse';
    p.confirm.dispatch('input');
    expect([p.confirm.hasAttribute('aria-invalid'), p.live.textContent, p.confirm.validity]).toEqual([false, '', '']);
    expect(p.serverError.hidden).toBe(true);
    expect(p.confirm.getAttribute('aria-describedby')).toBe('confirm-live');
    p.confirm.value = 'corr';
    p.confirm.dispatch('change');
    expect(p.live.textContent).toBe('Differ');
  });

  it('groups the IBAN in fours on blur', () => {
    const p = page();
    p.iban.value = ' ch9300762011623852957 ';
    p.iban.dispatch('blur');
    expect(p.iban.value).toBe('CH93 0076 2011 6238 5295 7');
  });

  it('shows a busy state, ignores a second submit and recovers after back navigation', () => {
    const p = page();
    expect(p.form.dispatch('submit').defaultPrevented).toBe(false);
    expect([p.button.disabled, p.button.textContent, p.form.getAttribute('aria-busy')]).toEqual([
      true,
      'Please wait…',
      'true',
    ]);
    expect(p.form.dispatch('submit').defaultPrevented).toBe(true);
    p.window.dispatch('pageshow', { persisted: true });
    expect([p.button.disabled, p.button.textContent, p.form.hasAttribute('aria-busy')]).toEqual([
      false,
      'Continue',
      false,
    ]);
  });

  it('copies the reCAPTCHA response into recaptcha_token and clears it on expiry', () => {
    const p = page();
    (p.window.connectCaptchaSolved as (token: string) => void)('response-1');
    expect(p.captcha.value).toBe('response-1');
    (p.window.connectCaptchaExpired as () => void)();
    expect(p.captcha.value).toBe('');
  });
});
