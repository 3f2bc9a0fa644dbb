/**
 * The sim endpoint's worker thread (see `server.ts`): starts and closes endpoints on request from
 * the parent thread. Each endpoint listens on 127.0.0.1 (port 0 unless configured) and its port is
 * posted back; its counters are the parent's shared memory.
 */
import { parentPort } from 'node:worker_threads';
import { listenSimEndpoint, simCounters, type SimEndpoint, type SimWorkerReply, type SimWorkerRequest } from './server.ts';

const port = parentPort;
if (!port) throw new Error('src/runner/sim/worker.ts must run in a worker thread');

const endpoints = new Map<number, SimEndpoint>();
const reply = (m: SimWorkerReply) => port.postMessage(m);
const fail = (id: number, e: unknown) => {
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (err as { code?: unknown }).code;
  reply({ id, ok: false, error: { name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}) } });
};

port.on('message', (m: SimWorkerRequest) => {
  if (m.type === 'start') {
    listenSimEndpoint(m.config, simCounters(m.counters)).then(
      (ep) => {
        endpoints.set(m.id, ep);
        reply({ id: m.id, ok: true, port: ep.port });
      },
      (e) => fail(m.id, e),
    );
  } else if (m.type === 'close') {
    const ep = endpoints.get(m.id);
    endpoints.delete(m.id);
    (ep ? ep.close() : Promise.resolve()).then(
      () => reply({ id: m.id, ok: true }),
      (e) => fail(m.id, e),
    );
  }
});
