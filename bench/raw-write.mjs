// The floor of the hook benchmark: a runtime starts, connects to Redis over node:net, writes one
// command in RESP (XADD, what a queue add boils down to) by hand, reads the reply and exits. No
// Redis client library is loaded: that cost is the hook's to avoid, not part of the floor.
// `--ioredis` does the same through ioredis instead (a reference, reported for information: it
// shows what loading a client library costs). Prints its own breakdown as one JSON line:
// loadMs (loading node:net, or ioredis), connectWriteMs (connect + XADD + reply).
//   REDIS_SOCKET=/path/redis.sock node bench/raw-write.mjs [--ioredis]
const started = performance.now();
const socketPath = process.env.REDIS_SOCKET;
if (!socketPath) throw new Error('REDIS_SOCKET is not set');

if (process.argv.includes('--ioredis')) {
  const { Redis } = await import('ioredis');
  const loaded = performance.now();
  const redis = new Redis({ path: socketPath, maxRetriesPerRequest: 1 });
  await redis.xadd('bench:floor', 'MAXLEN', '~', '1000', '*', 'event', 'floor');
  const written = performance.now();
  redis.disconnect();
  report(loaded, written);
} else {
  const net = await import('node:net');
  const loaded = performance.now();
  const args = ['XADD', 'bench:floor', 'MAXLEN', '~', '1000', '*', 'event', 'floor'];
  const command = `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`;
  const reply = await new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let received = '';
    socket.once('error', reject);
    socket.once('connect', () => socket.write(command));
    socket.on('data', (chunk) => {
      received += chunk;
      // XADD answers with one bulk string (the entry id): `$<n>\r\n<id>\r\n`.
      if (/^\$\d+\r\n.*\r\n$/s.test(received) || received.startsWith('-')) {
        socket.destroy();
        resolve(received);
      }
    });
  });
  if (!String(reply).startsWith('$')) throw new Error(`XADD failed: ${reply}`);
  report(loaded, performance.now());
}

function report(loaded, written) {
  process.stdout.write(`${JSON.stringify({ loadMs: loaded - started, connectWriteMs: written - loaded })}\n`);
}
