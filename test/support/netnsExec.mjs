// Runs a command inside a fresh network namespace (started by `unshare --net`) that has only
// loopback: brings `lo` up, forwards 127.0.0.1:<port> to the model server's unix socket (the
// filesystem is shared with the parent namespace, the network is not), then runs the command and
// exits with its status. Usage: unshare --net -- node netnsExec.mjs <port> <socket> <cmd> [args…]
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';

const [port, socket, command, ...args] = process.argv.slice(2);
const lo = spawnSync('ip', ['link', 'set', 'lo', 'up'], { stdio: 'inherit' });
if (lo.status !== 0) {
  process.stderr.write('netnsExec: cannot bring lo up\n');
  process.exit(125);
}
const forwarder = net.createServer((client) => {
  const upstream = net.connect(socket);
  client.pipe(upstream).pipe(client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
});
forwarder.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(command, args, { stdio: 'inherit' });
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write(`netnsExec: ${error.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
});
