import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo, Server, Socket } from 'node:net';
import * as net from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { TestCertificate } from './certificates';

/** What a local webhook receiver saw of one request. */
export interface ReceivedRequest {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
  /** The SNI name the client sent (TLS receivers only). */
  servername: string | false | null | undefined;
}

export type ReceiverHandler = (request: ReceivedRequest, response: http.ServerResponse) => void;

/** A server on 127.0.0.1 that counts TCP connections, so tests can prove nothing connected. */
export interface Receiver {
  port: number;
  connections: number;
  requests: ReceivedRequest[];
  /** Resolves when every connection accepted so far has closed. */
  allClosed(): Promise<void>;
  close(): Promise<void>;
}

/** An HTTPS receiver with the given certificate (or plain HTTP without one) that reads each body, then calls `handler`. */
export function startReceiver(handler: ReceiverHandler, certificate?: TestCertificate): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const onRequest = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = {
        method: request.method,
        url: request.url,
        headers: request.headers,
        rawHeaders: request.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
        servername: certificate === undefined ? undefined : (request.socket as TLSSocket).servername,
      };
      requests.push(received);
      handler(received, response);
    });
  };
  const server = certificate === undefined ? http.createServer(onRequest) : https.createServer(certificate, onRequest);
  return listen(server, requests);
}

/** A TCP server that accepts connections and never says anything (no TLS handshake, no HTTP). */
export function startSilentServer(): Promise<Receiver> {
  return listen(net.createServer(), []);
}

/** A port on 127.0.0.1 that was free a moment ago and now refuses connections. */
export async function closedPort(): Promise<number> {
  const receiver = await startSilentServer();
  await receiver.close();
  return receiver.port;
}

async function listen(server: Server, requests: ReceivedRequest[]): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const closed: Promise<void>[] = [];
  let connections = 0;
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    closed.push(new Promise((resolve) => socket.on('close', () => resolve())));
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    get connections() {
      return connections;
    },
    requests,
    allClosed: async () => {
      await Promise.all(closed);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
