import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CAPTCHA_OFF_TOKEN, resetCaptchaSecret, TEST_CAPTCHA_TOKEN, verifyCaptcha } from './captcha';

/** Google's verification call, stood in for by a local server that checks what it is sent. */
let server: Server;
let received: URLSearchParams[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const form = new URLSearchParams(body);
      received.push(form);
      if (form.get('response') === 'explode') {
        response.writeHead(502);
        response.end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify(
          form.get('secret') === 'server-secret' && form.get('response') === 'solved'
            ? { success: true, hostname: 'connect.example.org' }
            : { success: false, 'error-codes': ['invalid-input-response'] },
        ),
      );
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
});

afterAll(() => new Promise<void>((done) => server.close(() => done())));

afterEach(() => {
  process.env.SVC_CAPTCHA_VERIFIER = 'test';
  delete process.env.SVC_CAPTCHA_SECRET;
  delete process.env.SVC_CAPTCHA_VERIFY_URL;
  delete process.env.SVC_CAPTCHA_HOSTNAME;
  resetCaptchaSecret();
  received = [];
});

function useRecaptcha() {
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  delete process.env.SVC_CAPTCHA_VERIFIER;
  process.env.SVC_CAPTCHA_SECRET = 'server-secret';
  process.env.SVC_CAPTCHA_VERIFY_URL = `http://127.0.0.1:${address.port}/recaptcha/api/siteverify`;
}

describe('the captcha verifier', () => {
  it('in test mode accepts only the test token', async () => {
    expect(await verifyCaptcha(TEST_CAPTCHA_TOKEN)).toBe(true);
    expect(await verifyCaptcha('solved')).toBe(false);
    expect(await verifyCaptcha('')).toBe(false);
  });

  it('by default asks reCAPTCHA with the secret and the token, and follows its answer', async () => {
    useRecaptcha();
    expect(await verifyCaptcha('solved')).toBe(true);
    expect(await verifyCaptcha('forged')).toBe(false);
    expect(received.map((form) => [form.get('secret'), form.get('response')])).toEqual([
      ['server-secret', 'solved'],
      ['server-secret', 'forged'],
    ]);
  });

  it('refuses a token solved on another host', async () => {
    useRecaptcha();
    process.env.SVC_CAPTCHA_HOSTNAME = 'connect.example.org';
    expect(await verifyCaptcha('solved')).toBe(true);
    process.env.SVC_CAPTCHA_HOSTNAME = 'elsewhere.example.org';
    expect(await verifyCaptcha('solved')).toBe(false);
  });

  it('never accepts the test token outside test mode', async () => {
    useRecaptcha();
    expect(await verifyCaptcha(TEST_CAPTCHA_TOKEN)).toBe(false);
  });

  it('with the captcha off passes any token the request carries, and asks nobody', async () => {
    process.env.SVC_CAPTCHA_VERIFIER = 'off';
    expect(await verifyCaptcha(CAPTCHA_OFF_TOKEN)).toBe(true);
    expect(await verifyCaptcha('anything')).toBe(true);
    expect(await verifyCaptcha('')).toBe(false);
    expect(received).toEqual([]);
  });

  it('takes an unknown verifier setting for reCAPTCHA (fails closed, never open)', async () => {
    useRecaptcha();
    process.env.SVC_CAPTCHA_VERIFIER = 'of';
    expect(await verifyCaptcha('forged')).toBe(false);
    expect(received).toHaveLength(1);
  });

  it('fails closed when the verification service errs or no secret is configured', async () => {
    useRecaptcha();
    await expect(verifyCaptcha('explode')).rejects.toThrow(/502/);
    delete process.env.SVC_CAPTCHA_SECRET;
    resetCaptchaSecret();
    await expect(verifyCaptcha('solved')).rejects.toThrow(/No captcha secret/);
  });
});
